"""Activation functions by Keras name: ``Dense(64, activation="relu")``."""
from ..ops.activation import elu, leaky_relu, log_softmax, relu, sigmoid, softmax, softplus, tanh


def linear(x):
    """The identity: a layer without a non-linearity."""
    return x


def swish(x):
    r"""$x \, \sigma(x)$ (also called SiLU)."""
    return x * sigmoid(x)


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
