"""``eg.Module``: TF2's ``tf.Module``, the base class of the TensorFlow guides' models.

A Module is a Python object that holds variables; nothing registers them. ``variables``
*finds* them when asked, by walking the object's attributes (in the order of their names,
through lists, tuples and dicts), its own first, then each sub-module's: ::

    class Dense(eg.Module):
        def __init__(self, n_in, n_out, name=None):
            super().__init__(name=name)
            self.w = eg.Variable(eg.random.normal([n_in, n_out]), name="w")
            self.b = eg.Variable(eg.zeros([n_out]), name="b")

        def __call__(self, x):
            return eg.nn.relu(x @ self.w + self.b)

So a model is any nesting of Modules, and ``model.trainable_variables`` is what a
GradientTape and an optimizer need. (Keras's layers and PyTorch's modules are the other
family, ``eg.nn.Module``, which register their weights as they are assigned; one held by an
``eg.Module`` counts as a sub-module, with its own weights.)

``with self.name_scope:`` prefixes the names of the variables made inside with the module's
name (``dense/w``), and of the ops while a graph is built; ``@eg.Module.with_name_scope`` does
it for a whole method.
"""
import contextlib
import functools
import re

from . import context
from .nn.module import Module as _Layer
from .variable import Variable, name_prefixes

__all__ = ["Module"]


class Module:
    """``eg.Module(name=None)``: ``name`` defaults to the class name in snake_case."""

    def __init__(self, name=None):
        name = name or _snake_case(type(self).__name__)
        if not name.isidentifier():
            raise ValueError(f"{name!r} is not a valid module name: it must be a Python "
                             "identifier (letters, digits and _, not starting with a digit).")
        self._name = name
        self._scope_name = (name_prefixes[-1] if name_prefixes else "") + name + "/"

    @property
    def name(self):
        return getattr(self, "_name", None) or _snake_case(type(self).__name__)

    @property
    def name_scope(self):
        """A context manager: variables made inside are named ``<module name>/...`` (and, in
        a graph being built, ops too)."""
        return _scope(getattr(self, "_scope_name", self.name + "/"))

    @property
    def variables(self):
        """Every variable of this module and its sub-modules, each once."""
        return tuple(_walk(self, lambda v: isinstance(v, Variable), set()))

    @property
    def trainable_variables(self):
        """The variables made with ``trainable=True`` (what an optimizer updates)."""
        return tuple(_walk(self, lambda v: isinstance(v, Variable) and v.trainable, set()))

    @property
    def non_trainable_variables(self):
        return tuple(_walk(self, lambda v: isinstance(v, Variable) and not v.trainable, set()))

    @property
    def submodules(self):
        """The modules among the attributes, and theirs, each once (not this one)."""
        return tuple(_walk(self, _is_module, set()))

    @classmethod
    def with_name_scope(cls, method):
        """A decorator: the method runs inside its module's ``name_scope``."""
        @functools.wraps(method)
        def in_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return in_scope

    def __repr__(self):
        return f"<{type(self).__name__} '{self.name}'>"


def _snake_case(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


def _is_module(value):
    return isinstance(value, (Module, _Layer))


@contextlib.contextmanager
def _scope(prefix):
    graph = context.state.graph
    name_prefixes.append(prefix)
    try:
        with graph.name_scope(prefix) if graph is not None else contextlib.nullcontext():
            yield prefix
    finally:
        name_prefixes.pop()


def _leaves(value):
    """The objects in an attribute: through lists, tuples and dicts (keys in sorted order, as
    ``tf.nest`` flattens them)."""
    if isinstance(value, dict):
        return [leaf for key in sorted(value, key=str) for leaf in _leaves(value[key])]
    if isinstance(value, (list, tuple)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _walk(module, predicate, seen):
    """What ``predicate`` picks among ``module``'s attributes, then in its sub-modules (TF's
    order: a module's own attributes sorted by name, then each sub-module in turn)."""
    found, children = [], []
    seen.add(id(module))
    for key in sorted(vars(module)):
        for leaf in _leaves(vars(module)[key]):
            if id(leaf) in seen:
                continue
            seen.add(id(leaf))
            if predicate(leaf):
                found.append(leaf)
            if _is_module(leaf):
                children.append(leaf)
    for child in children:
        if isinstance(child, Module):
            found += _walk(child, predicate, seen)
        else:                       # a Keras layer or PyTorch module: its own weights
            for v in child.variables:
                if id(v) not in seen and predicate(v):
                    seen.add(id(v))
                    found.append(v)
    return found
