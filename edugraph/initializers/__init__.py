r"""Initializers: the starting values of weights (``eg.initializers.he_normal()``...).

Why it matters: if each layer multiplies the variance of its input by $n\,\mathrm{Var}(w)$,
activations explode or vanish with depth. Variance scaling picks
$\mathrm{Var}(w) = \text{scale} / n$ with $n$ = fan-in, fan-out or their mean:

* Glorot/Xavier: scale 1, mean of fans (tanh, sigmoid, linear layers),
* He: scale 2, fan-in (ReLU halves the variance, so double it back),
* LeCun: scale 1, fan-in (SELU).

An initializer is called with a shape and returns a tensor:
``eg.initializers.glorot_uniform()((784, 10))``. Values come from edugraph's random generator,
so ``eg.random.set_seed(s)`` makes every model reproducible; ``seed=`` gives one its own stream.
Keras string names work everywhere a layer takes an initializer: ``"he_normal"``, ``"zeros"``.
"""
import math

import numpy as np

from ..ops import random as _random
from ..tensor import as_dtype, float32, tensor

__all__ = ["Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "VarianceScaling", "GlorotUniform", "GlorotNormal", "HeNormal",
           "HeUniform", "LecunNormal", "LecunUniform", "zeros", "ones", "constant",
           "random_normal", "random_uniform", "truncated_normal", "variance_scaling",
           "glorot_uniform", "glorot_normal", "xavier_uniform", "xavier_normal", "he_normal",
           "he_uniform", "lecun_normal", "lecun_uniform", "variance_scaling_initializer",
           "Orthogonal", "orthogonal", "compute_fans", "get"]


class Initializer:
    """Base class: ``init(shape, dtype)`` → a tensor of that shape on the current device."""

    def __init__(self, seed=None):
        self.seed = seed

    def __call__(self, shape, dtype=float32):
        shape = (shape,) if isinstance(shape, int) else tuple(int(n) for n in shape)
        return tensor(self.sample(shape), dtype=as_dtype(dtype))

    def sample(self, shape):
        """The values as a host (numpy) array."""
        raise NotImplementedError

    def rng(self):
        if self.seed is None:
            return _random._generator(np)       # the stream eg.random.set_seed restarts
        return np.random.default_rng(self.seed)

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if v is not None)
        return f"{type(self).__name__}({args})"


class Zeros(Initializer):
    def sample(self, shape):
        return np.zeros(shape)


class Ones(Initializer):
    def sample(self, shape):
        return np.ones(shape)


class Constant(Initializer):
    def __init__(self, value=0.0):
        super().__init__()
        self.value = value

    def sample(self, shape):
        return np.broadcast_to(np.asarray(self.value, dtype=float), shape)


class RandomNormal(Initializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def sample(self, shape):
        return self.rng().normal(self.mean, self.stddev, shape)


class RandomUniform(Initializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def sample(self, shape):
        return self.rng().uniform(self.minval, self.maxval, shape)


class TruncatedNormal(RandomNormal):
    """Normal values, redrawn where they fall more than two standard deviations from the mean."""

    def sample(self, shape):
        return self.mean + self.stddev * _random.truncated_standard_normal(np, self.rng(), shape)


def compute_fans(shape):
    """(fan_in, fan_out): a dense kernel (in, out) → (in, out); a conv kernel (KH, KW, in, out)
    → (KH·KW·in, KH·KW·out), since each output sums over a whole window of inputs."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    receptive_field = math.prod(shape[:-2])
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class VarianceScaling(Initializer):
    r"""Values with variance $\text{scale} / n$, $n$ from ``mode`` ("fan_in", "fan_out",
    "fan_avg"); ``distribution`` "truncated_normal", "untruncated_normal" or "uniform"."""

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None):
        if scale <= 0:
            raise ValueError(f"VarianceScaling: scale must be positive, got {scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"VarianceScaling: mode must be 'fan_in', 'fan_out' or 'fan_avg', "
                             f"got {mode!r}.")
        distribution = "untruncated_normal" if distribution == "normal" else distribution
        if distribution not in ("truncated_normal", "untruncated_normal", "uniform"):
            raise ValueError("VarianceScaling: distribution must be 'truncated_normal', "
                             f"'untruncated_normal' or 'uniform', got {distribution!r}.")
        super().__init__(seed)
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def sample(self, shape):
        fan_in, fan_out = compute_fans(shape)
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2}[self.mode]
        variance = self.scale / max(1.0, n)
        if self.distribution == "uniform":
            limit = math.sqrt(3 * variance)            # Var(U(−a, a)) = a²/3
            return self.rng().uniform(-limit, limit, shape)
        if self.distribution == "untruncated_normal":
            return self.rng().normal(0.0, math.sqrt(variance), shape)
        # Cutting at ±2σ shrinks the spread; .87962566 is the std of a N(0, 1) cut at ±2.
        stddev = math.sqrt(variance) / .87962566103423978
        return stddev * _random.truncated_standard_normal(np, self.rng(), shape)


class GlorotUniform(VarianceScaling):
    """Xavier uniform: U(−a, a) with a = √(6 / (fan_in + fan_out)). Keras's default kernel."""

    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "uniform", seed)


class GlorotNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_avg", "truncated_normal", seed)


class HeNormal(VarianceScaling):
    """He (Kaiming) normal: std √(2 / fan_in), truncated at 2σ. The choice before ReLU."""

    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "truncated_normal", seed)


class HeUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(2.0, "fan_in", "uniform", seed)


class LecunNormal(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "truncated_normal", seed)


class LecunUniform(VarianceScaling):
    def __init__(self, seed=None):
        super().__init__(1.0, "fan_in", "uniform", seed)


class Orthogonal(Initializer):
    """A random orthogonal matrix (rows or columns orthonormal), times ``gain``: Keras's default
    for recurrent weights, which keeps a state's length as it is multiplied step after step."""

    def __init__(self, gain=1.0, seed=None):
        super().__init__(seed)
        self.gain = gain

    def sample(self, shape):
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        a = self.rng().standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q *= np.sign(np.diag(r))            # a uniformly random orthogonal matrix
        q = q if rows >= cols else q.T
        return self.gain * q.reshape(shape)


# Keras's lower-case spellings are the classes themselves: eg.initializers.he_normal().
zeros, ones, constant = Zeros, Ones, Constant
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling = variance_scaling_initializer = VarianceScaling     # TF1: tf.variance_...
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
xavier_uniform, xavier_normal = GlorotUniform, GlorotNormal
he_normal, he_uniform = HeNormal, HeUniform
lecun_normal, lecun_uniform = LecunNormal, LecunUniform
orthogonal = Orthogonal

_BY_NAME = {name: cls for name, cls in globals().items()
            if isinstance(cls, type) and issubclass(cls, Initializer) and cls is not Initializer}
_BY_NAME.update(uniform=RandomUniform, normal=RandomNormal)      # Keras's short names


def get(identifier):
    """An initializer from a Keras name ("he_normal", "GlorotUniform"), an instance or None."""
    if identifier is None or isinstance(identifier, Initializer):
        return identifier
    if isinstance(identifier, str):
        key = identifier if identifier in _BY_NAME else identifier.lower()
        if key in _BY_NAME:
            return _BY_NAME[key]()
        raise ValueError(f"Unknown initializer {identifier!r}. Known names: "
                         f"{', '.join(sorted(n for n in _BY_NAME if n.islower()))}.")
    if callable(identifier):
        return identifier                       # any f(shape, dtype) → values
    raise TypeError(f"An initializer must be a name, an Initializer or a callable, "
                    f"not {type(identifier).__name__}.")
