"""Numerics checks: stop at the first op whose result holds a NaN or an infinity, and name it.

A NaN spreads: every value computed from it is NaN too, so a few ops later the loss, the
gradients and then every weight are NaN, and nothing says where it began. With a check on,
each op's result is looked at as it is computed, and the first one that is not finite raises
an error naming the op, whether it ran in the forward pass or in a backward pass, and whether
its inputs were already bad (then the NaN came in with the data) or the op made it (the log of
0, 0 / 0, an exp that overflowed).

    eg.debugging.enable_check_numerics()     # TF's name (disable_check_numerics() ends it)
    eg.autograd.set_detect_anomaly(True)     # PyTorch's (or: with eg.autograd.detect_anomaly():)

Both switch on the same check: eagerly, every op, those of ``backward()`` and
``GradientTape.gradient`` included; in a Session or a traced function, every node (gradient
nodes are named ``gradients/...``). PyTorch's anomaly mode checks only the backward pass (and
records where each forward op was called); TF's check, like this one, checks every op. It costs
a pass over every result, so it is off by default: switch it on to find where a NaN comes
from.
"""
import contextlib

import numpy as np

from . import devices
from .errors import InvalidArgumentError
from .ops import base as _base

__all__ = ["enable_check_numerics", "disable_check_numerics", "set_detect_anomaly",
           "detect_anomaly", "is_anomaly_enabled", "NotFiniteError"]

_switched_on = {"check_numerics": False, "anomaly": False}    # TF's switch, PyTorch's switch


def _switch(name, on):
    _switched_on[name] = bool(on)
    _base.check_result = check_op if any(_switched_on.values()) else None


def enable_check_numerics():
    """Check every op's result from now on (``tf.debugging.enable_check_numerics``)."""
    _switch("check_numerics", True)


def disable_check_numerics():
    _switch("check_numerics", False)


class set_detect_anomaly:
    """``eg.autograd.set_detect_anomaly(True)``: check from now on (``False``: stop), or, as a
    context manager, only inside the block (PyTorch's ``torch.autograd.set_detect_anomaly``)."""

    def __init__(self, mode):
        self.previous = _switched_on["anomaly"]
        _switch("anomaly", mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _switch("anomaly", self.previous)


@contextlib.contextmanager
def detect_anomaly():
    """``with eg.autograd.detect_anomaly():``: check inside the block (PyTorch)."""
    with set_detect_anomaly(True):
        yield


def is_anomaly_enabled():
    return _switched_on["anomaly"]


# ----------------------------------------------------------------------------- the checks
class NotFiniteError(InvalidArgumentError):
    """What a numerics check raises at the first result holding NaN or infinity (an
    InvalidArgumentError, as TF's check raises)."""

    def __init__(self, message, made="", where="", why=""):
        super().__init__(message)
        self.made, self.where, self.why = made, where, why


def check_op(op, device, inputs, value):
    """An eager op's result (``ops.base.apply`` calls this while a check is on)."""
    if value.dtype.kind == "f":
        _check(op.name, value, [t._value for t in inputs], device)


def check_node(node, input_values, value):
    """A graph node's result, in a Session or a traced function (``Plan.run``)."""
    if getattr(value, "dtype", None) is not None and value.dtype.kind == "f":
        device = node._device if not isinstance(node._device, devices.MissingDevice) else \
            devices.cpu                             # (soft placement ran it on the CPU)
        _check(f"node '{node.name}' ({node.type})", value, input_values, device)


def backward_checked(node, grad, out, inputs):
    """``node``'s backward, its ops checked: an op that fails the check is named as part of
    ``node``'s backward (its gradient rule), not as a forward op."""
    try:
        return node._op.backward(grad, out, *inputs)
    except NotFiniteError as error:
        raise NotFiniteError(f"Numerics check: the backward of {node._op.name} (the "
                             f"gradient it sends to its inputs) made {error.made}, in its "
                             f"{error.where} op.{error.why}") from None


def _check(where, value, input_values, device):
    xp = device.xp
    if device.get(xp.isfinite(value).all()):
        return
    made = _count(device.get(value))
    bad_input = next((i for i, v in enumerate(input_values)
                      if getattr(v, "dtype", None) is not None and v.dtype.kind == "f"
                      and not device.get(xp.isfinite(v).all())), None)
    if not input_values:
        why = (" It has no inputs: the value was given to it (a variable's value, a "
               "constant, a fill value).")
    elif bad_input is not None:
        why = (f" Its input {bad_input} already held NaN or inf: it came from outside the "
               "checked ops, that is from the data (check np.isfinite(x).all()) or from a "
               "tensor computed before the check was switched on.")
    else:
        why = (" Its inputs were all finite, so this op made it. Usual causes: the log of 0 "
               "or of a negative number (also sqrt, pow), a division by 0, an exp or a power "
               "past float32's largest number (3.4e38: exp of anything above 88), inf - inf; "
               "in a backward pass also a gradient rule such as 1/x at x = 0.")
    raise NotFiniteError(f"Numerics check: {where} made {made}.{why}", made, where, why)


def _count(array):
    """``1 nan and 2 inf of 6 values`` for a host array."""
    parts = [f"{n} {name}" for n, name in ((np.isnan(array).sum(), "nan"),
                                             (np.isposinf(array).sum(), "inf"),
                                             (np.isneginf(array).sum(), "-inf")) if n]
    return f"{' and '.join(parts)} of {array.size} value{'s' * (array.size != 1)}"
