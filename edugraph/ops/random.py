"""Ops that make new tensors: constants filled with a value, and random numbers.

Randomness is reproducible: ``eg.random.set_seed(s)`` (``tf.random.set_seed``,
``torch.manual_seed``) restarts every device's generator; an op-level ``seed`` gives that op a
stream of its own, as in TensorFlow. In a TF1 graph each new Session starts a seeded op's
stream afresh (``graph/session.py``), so two sessions draw the same initial weights.
"""
import numbers

import numpy as np

from .base import Op, apply, as_tensor
from .. import devices as _devices
from ..tensor import as_dtype, float32, int32, tensor

_global_seed = None
_generators = {}


def set_seed(seed):
    """Make every random op reproducible from here on."""
    global _global_seed
    _global_seed = seed
    _generators.clear()


manual_seed = set_seed


def global_seed():
    return _global_seed


def _generator(xp):
    key = id(xp)
    if key not in _generators:
        _generators[key] = xp.random.default_rng(_global_seed)
    return _generators[key]


class Fill(Op):
    name, differentiable = "fill", False

    def __init__(self, shape, value, dtype):
        self.shape, self.value, self.dtype = tuple(shape), value, dtype

    def forward(self, xp):
        return xp.full(self.shape, self.value, dtype=self.dtype)


class FillLike(Op):
    """``value`` in x's shape (also one a graph knows only when it runs) and on x's device;
    x's dtype unless one is given."""

    name, differentiable = "fill_like", False

    def __init__(self, value, dtype=None):
        self.value, self.dtype = value, dtype

    def forward(self, xp, x):
        return xp.full(x.shape, self.value, dtype=self.dtype or x.dtype)


class RandomOp(Op):
    differentiable = False

    def __init__(self, shape, dtype, seed):
        self.shape, self.dtype, self.seed = tuple(shape), dtype, seed
        self._own = None

    def rng(self, xp):
        if self.seed is None:
            return _generator(xp)
        if self._own is None:
            self._own = xp.random.default_rng([self.seed, _global_seed or 0])
        return self._own


class RandomNormal(RandomOp):
    name = "random_normal"

    def __init__(self, shape, mean, stddev, dtype, seed):
        super().__init__(shape, dtype, seed)
        self.mean, self.stddev = mean, stddev

    def forward(self, xp):
        return (self.rng(xp).standard_normal(self.shape) * self.stddev + self.mean
                ).astype(self.dtype)


class TruncatedNormal(RandomNormal):
    """Normal values, redrawn where they fall more than two standard deviations from the
    mean (TF1's usual weight initialiser: no weight starts far out)."""

    name = "truncated_normal"

    def forward(self, xp):
        return (truncated_standard_normal(xp, self.rng(xp), self.shape) * self.stddev
                + self.mean).astype(self.dtype)


def truncated_standard_normal(xp, rng, shape):
    values = rng.standard_normal(shape)
    outside = xp.abs(values) > 2
    while outside.any():
        values[outside] = rng.standard_normal(int(outside.sum()))
        outside = xp.abs(values) > 2
    return values


class RandomUniform(RandomOp):
    name = "random_uniform"

    def __init__(self, shape, minval, maxval, dtype, seed):
        super().__init__(shape, dtype, seed)
        self.minval, self.maxval = minval, maxval

    def forward(self, xp):
        return (self.rng(xp).random(self.shape) * (self.maxval - self.minval) + self.minval
                ).astype(self.dtype)


def _shape(shape):
    return (shape,) if np.ndim(shape) == 0 else tuple(int(n) for n in shape)


def fill(shape, value, dtype=float32, name=None):
    return apply(Fill(_shape(shape), value, as_dtype(dtype)), name=name)


def zeros(shape, *sizes, dtype=float32, name=None, device=None, requires_grad=False):
    """``eg.zeros((2, 3))`` or ``eg.zeros([2, 3], eg.float64)`` (TF), ``eg.zeros(2, 3)``
    (PyTorch, also with its ``device=`` and ``requires_grad=``)."""
    shape, dtype, name = _torch_sizes(shape, sizes, dtype, name)
    return _made_on(device, requires_grad, lambda: fill(shape, 0, dtype, name=name))


def ones(shape, *sizes, dtype=float32, name=None, device=None, requires_grad=False):
    shape, dtype, name = _torch_sizes(shape, sizes, dtype, name)
    return _made_on(device, requires_grad, lambda: fill(shape, 1, dtype, name=name))


def _made_on(device, requires_grad, make):
    """``make()`` on ``device`` (PyTorch's argument; else where a device scope says), as a
    leaf that requires grad if asked."""
    if device is None:
        made = make()
    else:
        with _devices.device(device):
            made = make()
    return made.requires_grad_(requires_grad) if requires_grad else made


def _torch_sizes(shape, more, dtype, name):
    """(shape, dtype, name) from PyTorch's sizes (2, 3) or TF's shape, [dtype, [name]]."""
    if more and all(isinstance(n, numbers.Integral) for n in (shape, *more)):
        return (shape, *more), dtype, name
    return shape, *(tuple(more) + (dtype, name)[len(more):])


def zeros_like(x, dtype=None, name=None):
    """Zeros of x's shape and dtype, on x's device (as in TF and PyTorch)."""
    return apply(FillLike(0, dtype and as_dtype(dtype)), as_tensor(x), name=name)


def ones_like(x, dtype=None, name=None):
    return apply(FillLike(1, dtype and as_dtype(dtype)), as_tensor(x), name=name)


def random_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    return apply(RandomNormal(_shape(shape), mean, stddev, as_dtype(dtype), seed), name=name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """``tf.truncated_normal``: ``random_normal`` without values beyond two stddevs."""
    return apply(TruncatedNormal(_shape(shape), mean, stddev, as_dtype(dtype), seed), name=name)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=float32, seed=None, name=None):
    return apply(RandomUniform(_shape(shape), minval, maxval, as_dtype(dtype), seed), name=name)


def randn(*shape, dtype=float32, requires_grad=False, device=None):
    """PyTorch's ``torch.randn(2, 3)``."""
    shape = shape[0] if len(shape) == 1 and np.ndim(shape[0]) else shape
    return _made_on(device, requires_grad, lambda: random_normal(shape, dtype=dtype))


def rand(*shape, dtype=float32, requires_grad=False, device=None):
    shape = shape[0] if len(shape) == 1 and np.ndim(shape[0]) else shape
    return _made_on(device, requires_grad, lambda: random_uniform(shape, dtype=dtype))


normal, uniform = random_normal, random_uniform      # TF2's tf.random.normal / uniform


def range_(start, limit=None, delta=1, dtype=None, name=None):
    """TF's ``tf.range(5)`` → [0 1 2 3 4] (PyTorch: ``torch.arange``): a constant, int32 for
    whole numbers as in TF, else float32."""
    if limit is None:
        start, limit = 0, start
    values = np.arange(start, limit, delta)
    if dtype is None:
        dtype = int32 if values.dtype.kind in "iu" else float32
    return tensor(values.astype(as_dtype(dtype)), name=name)


def linspace(start, stop, num, dtype=float32, name=None):
    """``num`` evenly spaced numbers from ``start`` to ``stop``, both included (``tf.linspace``;
    PyTorch's ``torch.linspace(start, end, steps)``): x values to plot a function over."""
    return tensor(np.linspace(start, stop, num), dtype=dtype, name=name)
