"""TF 1.x's eager preview (``tf.contrib.eager``, TF 1.5 to 1.15), as lecture 6 shows it::

    import edugraph.contrib.eager as tfe
    tfe.enable_eager_execution()

    def f(x):
        return eg.square(x)

    grads = tfe.gradients_function(f)
    grads(3.0)                        # [tensor(6.)]: d f / d x at 3, one per argument

Its gradient functions turn a function into the function of its gradients. Each is a
``GradientTape`` in a wrapper, and the tape is what TF 2 kept (``tf.GradientTape``); its
``defun`` became ``tf.function`` (``eg.function``), and its ``Variable`` is ``tf.Variable``.
"""
import functools
import inspect

from .. import nest
from ..autodiff import GradientTape
from ..graph import enable_eager_execution, executing_eagerly  # noqa: F401
from ..graph import function as defun  # noqa: F401
from ..tensor import Tensor, tensor
from ..variable import Variable

__all__ = ["GradientTape", "Variable", "defun", "enable_eager_execution", "executing_eagerly",
           "gradients_function", "implicit_gradients", "implicit_value_and_gradients",
           "value_and_gradients_function"]


def gradients_function(f, params=None):
    """``f``'s gradients as a function: called with f's arguments, it returns the list of
    d f / d argument, for every argument or those ``params`` names (or numbers)."""
    value_and_gradients = value_and_gradients_function(f, params)

    @functools.wraps(f)
    def gradients(*args, **kwargs):
        return value_and_gradients(*args, **kwargs)[1]
    return gradients


def value_and_gradients_function(f, params=None):
    """Like ``gradients_function``, but the function returns ``(f(...), gradients)``."""
    chosen = _positions(f, params)

    @functools.wraps(f)
    def value_and_gradients(*args, **kwargs):
        args = [a if isinstance(a, Tensor) else tensor(a) for a in args]   # 3.0 → float32
        positions = range(len(args)) if chosen is None else chosen
        if any(i >= len(args) for i in positions):
            raise TypeError(f"{f.__name__} got {len(args)} arguments, but the gradients are "
                            f"asked for arguments {list(positions)} (params={params!r}).")
        with GradientTape() as tape:
            tape.watch([args[i] for i in positions])
            value = f(*args, **kwargs)
        return value, tape.gradient(value, [args[i] for i in positions])
    return value_and_gradients


def implicit_gradients(f):
    """A function returning ``[(gradient, variable), ...]`` of ``f``'s value for each
    trainable variable that ``f`` used: the pairs an optimizer's ``apply_gradients`` takes."""
    value_and_gradients = implicit_value_and_gradients(f)

    @functools.wraps(f)
    def gradients(*args, **kwargs):
        return value_and_gradients(*args, **kwargs)[1]
    return gradients


def implicit_value_and_gradients(f):
    """Like ``implicit_gradients``, but the function returns ``(f(...), pairs)``."""
    @functools.wraps(f)
    def value_and_gradients(*args, **kwargs):
        with GradientTape() as tape:
            value = f(*args, **kwargs)
        variables = _trainable_variables_behind(value)
        if not variables:
            raise ValueError(f"No trainable variables were accessed while {f.__name__} was "
                             "being computed, so there is nothing to differentiate by.")
        return value, list(zip(tape.gradient(value, variables), variables))
    return value_and_gradients


def _positions(f, params):
    """The argument numbers that ``params`` names (None: all of them)."""
    if params is None:
        return None
    names = list(inspect.signature(f).parameters)
    positions = []
    for p in params:
        if isinstance(p, str) and p not in names:
            raise ValueError(f"params: {f.__name__} has no parameter {p!r} ({names}).")
        positions.append(names.index(p) if isinstance(p, str) else p)
    return positions


def _trainable_variables_behind(value):
    """The trainable variables that ``value`` was computed from, in the order the
    computation first used them: a walk back along the recorded inputs."""
    found, seen = [], set()
    stack = list(reversed(nest.flatten(value)))
    while stack:
        t = stack.pop()
        if not isinstance(t, Tensor) or id(t) in seen:
            continue
        seen.add(id(t))
        if isinstance(t, Variable) and t.trainable:
            found.append(t)
        stack.extend(reversed(t._inputs or ()))
    return found
