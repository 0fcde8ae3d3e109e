"""Variables: tensors that hold a model's state and are updated in place.

In eager mode a Variable is a leaf tensor that requires grad (PyTorch's ``nn.Parameter``) and is
watched by every GradientTape automatically. Inside a graph, ``eg.Variable(...)`` builds a graph
variable instead, whose value lives in each Session (see ``edugraph.graph``). While an
``@eg.function`` traces, a Variable is still made eagerly (it lives outside the traced graph),
and ``assign`` builds an assign node that runs with each call (``edugraph/graph/function.py``).
"""
import itertools
import numbers

import numpy as np

from .context import note_in_place_change, state
from .tensor import Tensor, check_flag, tensor, tf_dtype

_graph_variable_class = None        # set by edugraph.graph: what Variable(...) makes in a graph
_unnamed = itertools.count()
name_prefixes = []                  # the eg.Module name scopes entered (module.py), innermost last


class Variable(Tensor):
    """``eg.Variable(initial_value, name=..., trainable=True)``, as in TF1 and TF2."""

    __slots__ = ("trainable",)

    def __new__(cls, *args, **kwargs):
        if cls is Variable and state.graph is not None and _graph_variable_class is not None \
                and not hasattr(state.graph, "lift_variable"):
            return object.__new__(_graph_variable_class)   # Python then runs its __init__
        return object.__new__(cls)

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        check_flag(trainable, "trainable", "eg.Variable()")
        if hasattr(state.graph, "lift_variable"):   # made while a function traces: lives outside
            t = state.graph.lift_variable(initial_value, dtype)
        else:
            value = initial_value() if callable(initial_value) else initial_value
            t = tensor(value, dtype=dtype)
            if dtype is None and t.dtype.kind == "i" and not hasattr(value, "dtype"):
                t = tensor(value, dtype=tf_dtype(t._value))     # TF's int32 for Python ints
        name = name or f"Variable_{next(_unnamed)}"
        super().__init__(t._value, t.device, name=name_prefixes[-1] + name if name_prefixes
                         else name)
        self.trainable = trainable
        self.requires_grad = trainable and t.is_floating_point()

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """Overwrite the value in place (shape and dtype stay). TF's other arguments are
        accepted, so the same line runs in a graph, where ``name`` names the assign node."""
        if _in_graph(value):
            return _graph_assign(self, value, "assign")
        self._value[...] = self._array(value, "assign")
        note_in_place_change(self)
        return self

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        if _in_graph(delta):
            return _graph_assign(self, delta, "add")
        self._value += self._array(delta, "add")
        note_in_place_change(self)
        return self

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        if _in_graph(delta):
            return _graph_assign(self, delta, "sub")
        self._value -= self._array(delta, "sub")
        note_in_place_change(self)
        return self

    def _array(self, value, mode):
        """``value`` as an array to write into this variable by ``mode`` ("assign", "add",
        "sub"): on its device, of its dtype and, as in TF, of its shape."""
        number = value if isinstance(value, numbers.Number) else None
        if isinstance(value, Tensor):
            if value.device is not self.device:
                raise ValueError(f"Cannot assign a value on {value.device.name} to variable "
                                 f"'{self.name}' on {self.device.name}; copy it with .to().")
            if value.dtype != self.dtype:
                raise TypeError(f"Cannot assign a {value.dtype} tensor to variable "
                                f"'{self.name}' of dtype {self.dtype}; cast it first, e.g. "
                                f"eg.cast(value, eg.{self.dtype}).")
            value = value._value
        else:
            value = np.asarray(value)
            if not np.can_cast(value.dtype, self.dtype, "same_kind"):   # 0.5 into an int
                raise TypeError(f"Cannot assign {value.dtype} values to variable '{self.name}' "
                                f"of dtype {self.dtype}: they would be truncated. Round or "
                                "cast them first if that is what you want.")
            value = self.device.put(value.astype(self.dtype, copy=False))
        if tuple(value.shape) != self.shape:
            raise ValueError(shape_mismatch(self.name, self.shape, tuple(value.shape), mode,
                                            number))
        return value

    def value(self):
        """The current value, as a tensor that later assigns leave as it is (TF's
        ``read_value``)."""
        if hasattr(state.graph, "lift_variable"):   # in a traced function: read when it runs
            return state.graph._as_graph_tensor(self, None, None)
        return Tensor(self._value.copy(), self.device)

    read_value = value

    def load(self, value, session=None):
        """TF1's ``w.load(value, sess)``; eagerly there is no session: ``assign(value)``."""
        self.assign(value)

    def numpy(self):
        """A copy of the value, as TF's ``v.numpy()``: the variable changes in place, and
        ``history.append(w.numpy())`` must keep each step's values. (A plain tensor's
        ``numpy()`` shares its memory, as in PyTorch.)"""
        value = self.device.get(self._value)
        return value.copy() if value is self._value else value

    def __repr__(self):
        return f"<eg.Variable '{self.name}' shape={self.shape} dtype={self.dtype}, " \
               f"numpy={self.numpy()!r}>"


def shape_mismatch(name, shape, value_shape, mode, number=None):
    """Why a value of ``value_shape`` cannot be written into the variable ``name`` of ``shape``
    by ``mode`` ("assign", "add", "sub"; ``number``: the value, when it is one): as in TF, the
    shapes must be equal, with no broadcasting, not even of a single number."""
    verb = {"assign": "assign", "add": "add", "sub": "subtract"}[mode]
    sign = "+" if mode == "add" else "-"
    message = (f"Cannot {verb} a value of shape {value_shape} {'from' if mode == 'sub' else 'to'}"
               f" variable '{name}' of shape {shape}: the shapes must match.")
    c = "c" if number is None else repr(np.asarray(number).item())
    if tuple(value_shape) == () and mode == "assign":
        return f"{message} To fill it with one number: w.assign(eg.fill(w.shape, {c})), or " \
               f"w.assign(eg.ones_like(w) * {c})."
    if tuple(value_shape) == ():
        return f"{message} To {verb} one number everywhere: w.assign_{mode}(eg.fill(w.shape, " \
               f"{c})), or w.assign(w {sign} {c})."
    if mode != "assign":
        return f"{message} To broadcast it, assign the result: w.assign(w {sign} delta)."
    return message


def _in_graph(value):
    """Is an assign of ``value`` part of a traced function being built (not done at once)?"""
    graph = state.graph
    return getattr(value, "graph", None) is not None or \
        (graph is not None and hasattr(graph, "lift_variable"))


def _graph_assign(variable, value, mode):
    """An assign node in the function being traced (it runs with every call)."""
    from .graph.function import graph_assign
    return graph_assign(variable, value, mode)
