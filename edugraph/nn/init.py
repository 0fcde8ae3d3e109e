r"""``torch.nn.init`` (``eg.nn.init``): fill a tensor in place with starting values, under
``no_grad`` (``nn.init.xavier_uniform_(layer.weight)``); each returns the tensor.

The fans are PyTorch's, for its weight layouts: a Linear weight (out, in) and a Conv2d weight
(out, in, kH, kW) have $\text{fan\_in} = \text{in} \cdot kH \cdot kW$ and
$\text{fan\_out} = \text{out} \cdot kH \cdot kW$. (Keras's initializers in
``eg.initializers`` read the same numbers from its layouts, (in, out) and (kH, kW, in, out).)
Values come from edugraph's generator (``x.normal_``, ``x.uniform_``): ``eg.manual_seed``
makes them reproducible.
"""
import math

from ..context import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "constant_", "zeros_", "ones_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def _fans(tensor, name):
    shape = tuple(tensor.shape)
    if len(shape) < 2:
        raise ValueError(f"nn.init.{name} needs the fans of a weight with at least 2 "
                         f"dimensions, (out, in, ...); got shape {shape}. (Biases are usually "
                         "filled with nn.init.zeros_ or uniform_.)")
    receptive_field = math.prod(shape[2:])
    return shape[1] * receptive_field, shape[0] * receptive_field


def calculate_gain(nonlinearity, param=None):
    """The factor that keeps the activations' variance steady through ``nonlinearity``: 1 for
    linear layers and sigmoid, 5/3 for tanh, √2 for ReLU, √(2 / (1 + slope²)) for leaky
    ReLU."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"nn.init.calculate_gain: unknown nonlinearity {nonlinearity!r}; known: "
                     "linear, conv2d, sigmoid, tanh, relu, leaky_relu, selu.")


def uniform_(tensor, a=0.0, b=1.0):
    with no_grad():
        return tensor.uniform_(a, b)


def normal_(tensor, mean=0.0, std=1.0):
    with no_grad():
        return tensor.normal_(mean, std)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def zeros_(tensor):
    return constant_(tensor, 0.0)


def ones_(tensor):
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor, gain=1.0):
    r"""Glorot: U(−a, a), $a = \text{gain}\sqrt{6 / (\text{fan\_in} + \text{fan\_out})}$."""
    fan_in, fan_out = _fans(tensor, "xavier_uniform_")
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor, gain=1.0):
    r"""Glorot: N(0, σ²), $σ = \text{gain}\sqrt{2 / (\text{fan\_in} + \text{fan\_out})}$."""
    fan_in, fan_out = _fans(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def _kaiming_std(tensor, a, mode, nonlinearity, name):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"nn.init.{name}: mode must be 'fan_in' or 'fan_out', got {mode!r}.")
    fan_in, fan_out = _fans(tensor, name)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    r"""He: U(−b, b) with $b = \sqrt{3}\,σ$, $σ = \text{gain} / \sqrt{\text{fan}}$ (a uniform
    distribution on ±b has standard deviation b/√3)."""
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_uniform_")
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    r"""He: N(0, σ²), $σ = \text{gain} / \sqrt{\text{fan}}$; for ReLU layers
    ``nonlinearity="relu"`` (gain √2)."""
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity, "kaiming_normal_"))
