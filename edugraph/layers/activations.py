"""Activation functions by Keras name: ``Dense(64, activation="relu")``."""
from ..ops import activation as _ops
from ..ops.activation import elu, leaky_relu, log_softmax, relu, softplus, tanh


def sigmoid(x):
    """``eg.sigmoid``, which keeps its input on its output, as Keras's does: the cross-entropy
    of its output computes from it (``eg.losses.keras_logits``)."""
    return _keeping_logits(_ops.sigmoid(x), "sigmoid", x)


def softmax(x, axis=-1):
    """``eg.softmax``, which keeps its input on its output over the last axis, as Keras's does
    (see ``sigmoid``)."""
    out = _ops.softmax(x, axis)
    return _keeping_logits(out, "softmax", x) if axis == -1 else out


def _keeping_logits(out, activation, logits):
    out._keras_logits = activation, logits
    return out


def linear(x):
    """The identity: a layer without a non-linearity."""
    return x


def swish(x):
    r"""$x \, \sigma(x)$ (also called SiLU)."""
    return x * _ops.sigmoid(x)


ACTIVATIONS = {"linear": linear, "relu": relu, "sigmoid": sigmoid, "tanh": tanh,
               "softmax": softmax, "log_softmax": log_softmax, "leaky_relu": leaky_relu,
               "swish": swish, "silu": swish, "softplus": softplus, "elu": elu}


def get(identifier):
    """A function from a name ("relu"), a function (``eg.nn.relu``) or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        if identifier not in ACTIVATIONS:
            raise ValueError(f"Unknown activation {identifier!r}. Known: "
                             f"{', '.join(sorted(ACTIVATIONS))}, or pass a function.")
        return ACTIVATIONS[identifier]
    if callable(identifier):
        return identifier
    raise TypeError(f"activation must be a name or a function, not {type(identifier).__name__}.")


def name_of(activation):
    return getattr(activation, "__name__", type(activation).__name__)
