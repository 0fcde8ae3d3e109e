"""Ops that make new tensors: constants filled with a value, and random numbers.

Randomness is reproducible: ``eg.random.set_seed(s)`` (``tf.random.set_seed``,
``torch.manual_seed``) restarts every device's generator; an op-level ``seed`` gives that op a
stream of its own, as in TensorFlow. Eagerly, as in TF2, that stream goes on from call to call
(``eg.random.uniform((2,), seed=1)`` gives new numbers each time, the same sequence after each
``set_seed``). In a graph each node has its own: a TF1 Session starts it afresh
(``graph/session.py``), so two sessions draw the same initial weights, and a traced function's
goes on from call to call.
"""
import numbers

import numpy as np

from .base import Op, TakesShape, apply, as_tensor, shape_operand
from .math import cast
from .. import devices as _devices
from ..tensor import (Tensor, _infer_dtype, _sizes, as_dtype, float32, int32, int64, tensor,
                      tf_dtype)

_global_seed = None
_generators = {}        # the streams eager ops draw from; set_seed restarts them all


def set_seed(seed):
    """Make every random op reproducible from here on."""
    global _global_seed
    _global_seed = seed
    _generators.clear()


manual_seed = set_seed


def global_seed():
    return _global_seed


def _generator(xp, kind=None, seed=None):
    """The generator an eager op draws from on ``xp``'s device: the device's one stream for an
    op without a seed; for a seeded op, the stream of its kind and seed. Eagerly each call makes
    a new op, so the stream lives here and goes on from call to call, as the kernel TF2 keeps
    for an op kind and its seeds counts its calls."""
    key = (id(xp), kind, seed)
    if key not in _generators:
        _generators[key] = xp.random.default_rng(_global_seed if seed is None else
                                                 _seeds(seed))
    return _generators[key]


def _seeds(seed):
    """An op seed with the global seed (TF: "both seeds determine the sequence")."""
    return [seed, _global_seed or 0]


class Fill(TakesShape):
    """``shape`` filled with one value: a number the op keeps (``value``), or else its first
    input, a 0-d tensor (one a graph computes too); a shape tensor comes last (TakesShape).
    The value's gradient is the sum of the output's (TF's Fill)."""

    name = "fill"

    def __init__(self, shape, value, dtype):
        self.shape, self.value, self.dtype = shape, value, dtype

    def forward(self, xp, *inputs):
        value, shape = (self.value, inputs) if self.value is not None else \
            (inputs[0], inputs[1:])
        return xp.full(self.sizes(shape), value, dtype=self.dtype)

    def backward(self, grad, out, *inputs):
        # the value's gradient is grad (the engine sums it to the value's shape: sum_to_shape);
        # a shape input has none
        value = (grad,) if self.value is None else ()
        return value + (None,) * (len(inputs) - len(value))


class FillLike(Op):
    """``value`` in x's shape (also one a graph knows only when it runs) and on x's device;
    x's dtype unless one is given."""

    name, differentiable = "fill_like", False

    def __init__(self, value, dtype=None):
        self.value, self.dtype = value, dtype

    def forward(self, xp, x):
        return xp.full(x.shape, self.value, dtype=self.dtype or x.dtype)


class RandomOp(TakesShape):
    """An op that draws random numbers (``rng`` picks the stream, see the module docstring)
    in ``shape`` (in a graph it may be a tensor, the op's input: TakesShape)."""

    differentiable = False
    _node = False           # a graph node, which keeps a stream of its own (``as_node``)

    def __init__(self, shape, dtype, seed):
        self.shape, self.dtype, self.seed = shape, dtype, seed
        self._own = None

    def as_node(self, restart=False):
        """Draw from a stream of this op's own from now on (a graph node runs the same op
        again and again); ``restart``: from the start of its sequence."""
        self._node = True
        if restart:
            self._own = None
        return self

    def rng(self, xp):
        if self.seed is None:
            return _generator(xp)
        if not self._node:
            return _generator(xp, self.name, self.seed)
        if self._own is None:
            self._own = xp.random.default_rng(_seeds(self.seed))
        return self._own


class RandomNormal(RandomOp):
    name = "random_normal"

    def __init__(self, shape, mean, stddev, dtype, seed):
        super().__init__(shape, dtype, seed)
        self.mean, self.stddev = mean, stddev

    def forward(self, xp, *shape):
        return (self.rng(xp).standard_normal(self.sizes(shape)) * self.stddev + self.mean
                ).astype(self.dtype)


class TruncatedNormal(RandomNormal):
    """Normal values, redrawn where they fall more than two standard deviations from the
    mean (TF1's usual weight initialiser: no weight starts far out)."""

    name = "truncated_normal"

    def forward(self, xp, *shape):
        return (truncated_standard_normal(xp, self.rng(xp), self.sizes(shape)) * self.stddev
                + self.mean).astype(self.dtype)


def truncated_standard_normal(xp, rng, shape):
    values = rng.standard_normal(shape)
    outside = xp.abs(values) > 2
    while outside.any():
        values[outside] = rng.standard_normal(int(outside.sum()))
        outside = xp.abs(values) > 2
    return values


class RandomInteger(RandomOp):
    """Whole numbers drawn uniformly from ``low`` to ``high - 1``."""

    name = "random_integers"

    def __init__(self, shape, low, high, dtype, seed):
        super().__init__(shape, dtype, seed)
        self.low, self.high = low, high

    def forward(self, xp, *shape):
        return self.rng(xp).integers(self.low, self.high, self.sizes(shape)).astype(self.dtype)


class RandomUniform(RandomOp):
    name = "random_uniform"

    def __init__(self, shape, minval, maxval, dtype, seed):
        super().__init__(shape, dtype, seed)
        self.minval, self.maxval = minval, maxval

    def forward(self, xp, *shape):
        return (self.rng(xp).random(self.sizes(shape)) * (self.maxval - self.minval)
                + self.minval).astype(self.dtype)


def _shape(shape, op_name):
    """(sizes, shape input) of a creation op (``base.shape_operand``): in a graph the shape
    may be a tensor, ``eg.random.normal(eg.shape(mu))``."""
    sizes, shape_input = shape_operand(shape, op_name, int)
    if sizes is None:
        raise TypeError(f"{op_name}: the shape must be whole numbers, a tuple such as (2, 3) "
                        f"(or, in a graph, an integer tensor such as eg.shape(x)); got "
                        f"{shape!r}.")
    return sizes, shape_input


def fill(shape, value, dtype=None, name=None):
    """``tf.fill(shape, value)``: ``value`` everywhere in ``shape``. The value is a number or a
    0-d tensor, also one computed in a traced function; the dtype is the value's (TF's for a
    Python number: int32 for a whole one, float32 otherwise) unless ``dtype`` is given. In a
    graph the shape may be a tensor: ``eg.fill(eg.shape(x), 1.0)``."""
    return _fill("fill", shape, value, dtype, name)


def _fill(op_name, shape, value, dtype, name):
    """fill, zeros and ones (``op_name`` says which, in a message about the shape)."""
    sizes, shape_input = _shape(shape, op_name)
    if not isinstance(value, Tensor):
        dtype = as_dtype(dtype) if dtype is not None else tf_dtype(np.asarray(value))
        return apply(Fill(sizes, value, dtype), *shape_input, name=name)
    if getattr(value.shape, "rank_known", True) and len(value.shape) != 0:
        raise ValueError(f"fill: the value must be a single number (a 0-d tensor), got a "
                         f"tensor of shape {tuple(value.shape)}; to repeat a tensor use "
                         "eg.broadcast_to.")
    if dtype is not None and as_dtype(dtype) != value.dtype:
        value = cast(value, dtype)
    return apply(Fill(sizes, None, value.dtype), value, *shape_input, name=name)


def zeros(shape, *sizes, dtype=float32, name=None, device=None, requires_grad=False):
    """``eg.zeros((2, 3))`` or ``eg.zeros([2, 3], eg.float64)`` (TF), ``eg.zeros(2, 3)``
    (PyTorch, also with its ``device=`` and ``requires_grad=``)."""
    shape, dtype, name = _torch_sizes(shape, sizes, dtype, name)
    return _made_on(device, requires_grad, lambda: _fill("zeros", shape, 0, dtype, name))


def ones(shape, *sizes, dtype=float32, name=None, device=None, requires_grad=False):
    shape, dtype, name = _torch_sizes(shape, sizes, dtype, name)
    return _made_on(device, requires_grad, lambda: _fill("ones", shape, 1, dtype, name))


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
    sizes, shape_input = _shape(shape, "random_normal")
    return apply(RandomNormal(sizes, mean, stddev, as_dtype(dtype), seed), *shape_input,
                 name=name)


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """``tf.truncated_normal``: ``random_normal`` without values beyond two stddevs."""
    sizes, shape_input = _shape(shape, "truncated_normal")
    return apply(TruncatedNormal(sizes, mean, stddev, as_dtype(dtype), seed), *shape_input,
                 name=name)


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=float32, seed=None, name=None):
    sizes, shape_input = _shape(shape, "random_uniform")
    return apply(RandomUniform(sizes, minval, maxval, as_dtype(dtype), seed), *shape_input,
                 name=name)


normal, uniform = random_normal, random_uniform      # TF2's tf.random.normal / uniform


# ----------------------------------------------------------------- PyTorch's creation functions
def randn(*sizes, size=None, dtype=float32, requires_grad=False, device=None):
    """PyTorch's ``torch.randn(2, 3)``, also ``randn((2, 3))``, ``randn(size=(2, 3))`` and
    ``randn(())`` (a 0-d tensor): standard normal values."""
    shape = _sizes(sizes) if size is None else size
    return _made_on(device, requires_grad, lambda: random_normal(shape, dtype=dtype))


def rand(*sizes, size=None, dtype=float32, requires_grad=False, device=None):
    """PyTorch's ``torch.rand(2, 3)`` (and as randn): values drawn uniformly from [0, 1)."""
    shape = _sizes(sizes) if size is None else size
    return _made_on(device, requires_grad, lambda: random_uniform(shape, dtype=dtype))


def torch_normal(mean=0.0, std=1.0, size=None, *, dtype=float32, requires_grad=False,
                 device=None):
    """PyTorch's ``torch.normal(mean, std, size)``: values from the normal distribution with
    that mean and standard deviation (``eg.random.normal(shape, mean, stddev)`` is TF's)."""
    if size is None or not all(isinstance(v, numbers.Real) for v in (mean, std)):
        raise TypeError(
            f"eg.normal(mean, std, size) takes two numbers and a shape, as "
            f"torch.normal(0, 0.01, size=(2, 1)); got mean={mean!r}, std={std!r}, size={size!r}. "
            "For a mean or std per element write mean + std * eg.randn_like(mean).")
    return _made_on(device, requires_grad,
                    lambda: random_normal(size, mean, std, dtype=dtype))


def randint(low, high=None, size=None, *, dtype=int64, requires_grad=False, device=None):
    """PyTorch's ``torch.randint(low, high, size)`` (or ``randint(high, size)``): whole
    numbers drawn uniformly from ``low`` to ``high - 1``."""
    if size is None:                    # randint(high, size)
        low, high, size = 0, low, high
    elif high is None:                  # randint(high, size=size)
        low, high = 0, low
    if size is None or high is None or high <= low:
        raise ValueError(f"randint(low, high, size) draws from low to high - 1, so it needs "
                         f"high > low and a size, e.g. eg.randint(0, 10, (3,)); got low={low}, "
                         f"high={high}, size={size}.")
    sizes, shape_input = _shape(size, "randint")
    return _made_on(device, requires_grad, lambda: apply(
        RandomInteger(sizes, low, high, as_dtype(dtype), None), *shape_input))


def randn_like(x, dtype=None, requires_grad=False, device=None):
    """PyTorch's ``torch.randn_like(x)``: standard normal values in x's shape, on x's device."""
    return _made_like("randn_like", x, dtype, requires_grad, device, random_normal)


def rand_like(x, dtype=None, requires_grad=False, device=None):
    """PyTorch's ``torch.rand_like(x)``: values from [0, 1) in x's shape, on x's device."""
    return _made_like("rand_like", x, dtype, requires_grad, device, random_uniform)


def _made_like(fn, x, dtype, requires_grad, device, draw):
    dtype = as_dtype(dtype) if dtype is not None else x.dtype
    if dtype.kind != "f":
        raise TypeError(f"{fn} draws floating-point values, but the result would be {dtype} "
                        "(x's dtype unless one is given): pass dtype=eg.float32, or use "
                        "eg.randint for whole numbers.")
    return _made_on(device or x.device, requires_grad, lambda: draw(x.shape, dtype=dtype))


def full(size, fill_value, *, dtype=None, requires_grad=False, device=None):
    """PyTorch's ``torch.full((2, 3), 0.5)``: the dtype follows the value when none is given
    (float32 for a float, int64 for an int, bool for a bool), as in PyTorch."""
    dtype = dtype if dtype is not None else _infer_dtype(fill_value)
    return _made_on(device, requires_grad, lambda: fill(size, fill_value, dtype))


def full_like(x, fill_value, dtype=None, name=None):
    """``fill_value`` in x's shape and dtype, on x's device (``torch.full_like``)."""
    return apply(FillLike(fill_value, dtype and as_dtype(dtype)), as_tensor(x), name=name)


def eye(n, m=None, *, dtype=float32, name=None, device=None, requires_grad=False,
        num_columns=None):
    """The ``n`` x ``m`` identity matrix (square without m): ones on the diagonal
    (``torch.eye(n, m)``, ``tf.eye(num_rows, num_columns)``). A constant, as arange is."""
    m = num_columns if m is None else m
    for size in (n, m):
        if size is not None and not (isinstance(size, numbers.Integral) and size >= 0):
            raise ValueError(f"eye({n}, {m}): the numbers of rows and columns must be whole "
                             "numbers, 0 or more.")
    return _made_on(device, requires_grad,
                    lambda: tensor(np.eye(n, m), dtype=dtype, name=name))

def range_(start, limit=None, delta=1, dtype=None, name=None):
    """TF's ``tf.range(5)`` → [0 1 2 3 4]: a constant, int32 for whole numbers as in TF,
    else float32."""
    return _arange(start, limit, delta, dtype, int32, name)


def arange(start=0, end=None, step=1, *, dtype=None, requires_grad=False, device=None):
    """PyTorch's ``torch.arange(5)``, ``arange(1, 4)``, ``arange(0, 1, 0.25)`` (also with
    ``start=``, ``end=``, ``step=``): int64 for whole numbers as in PyTorch, else float32."""
    return _made_on(device, requires_grad, lambda: _arange(start, end, step, dtype, int64))


def _arange(start, stop, step, dtype, whole_dtype, name=None):
    if stop is None:                    # arange(5): from 0 to 5
        start, stop = 0, start
    if step == 0:
        raise ValueError(f"arange({start}, {stop}, step=0): the step must not be 0 (the numbers "
                         "would never reach the end).")
    values = np.arange(start, stop, step)
    if dtype is None:
        dtype = whole_dtype if values.dtype.kind in "iu" else float32
    return tensor(values.astype(as_dtype(dtype)), name=name)


def linspace(start, stop, num, dtype=float32, name=None, *, device=None, requires_grad=False):
    """``num`` evenly spaced numbers from ``start`` to ``stop``, both included (``tf.linspace``;
    PyTorch's ``torch.linspace(start, end, steps, device=..., dtype=...)``): x values to plot
    a function over."""
    return _made_on(device, requires_grad,
                    lambda: tensor(np.linspace(start, stop, num), dtype=dtype, name=name))
