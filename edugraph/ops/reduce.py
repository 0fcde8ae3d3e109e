"""Reductions over axes: sum, mean, variance and standard deviation, max/min (which *route*
the gradient), logsumexp, norms, argmax; and the running sum along an axis, cumsum."""
import collections
import math
import numbers

import numpy as np

from .base import Op, accepting_aliases, apply, broadcast_like, rank_known, reduction_axes
from .math import abs as absolute, cast, divide_no_nan, equal, exp, maximum, minimum, to_float
from .shape import expand_dims
from ..errors import ShapeError


class Reduction(Op):
    def __init__(self, axis=None, keepdims=False):
        self.axis = tuple(axis) if axis.__class__ is list else axis     # TF's axis=[1]
        self.keepdims = keepdims

    def explain_failure(self, shapes):
        return axis_failure(self.name, self.axis, shapes[0])

    def _spread(self, grad, x):
        """The output's gradient stretched back over the reduced axes of ``x``."""
        if not self.keepdims and self.axis is not None:
            for a in _reinsertion_order(self.name, self.axis, x.shape):
                grad = expand_dims(grad, a)
        return broadcast_like(grad, x)


def _reinsertion_order(op_name, axis, shape):
    """The reduced axes in an order in which ``expand_dims`` puts them back one at a time:
    ascending once normalised. A graph tensor of unknown rank cannot normalise them, but
    axes of one sign still land where they were: ascending ones from the front, negative
    ones from -1 down."""
    if rank_known(shape):
        return reduction_axes(axis, len(shape))
    axes = (axis,) if isinstance(axis, numbers.Integral) else tuple(axis)
    if all(a >= 0 for a in axes):
        return sorted(axes)
    if all(a < 0 for a in axes):
        return sorted(axes, reverse=True)
    raise ShapeError(f"{op_name} over axes {axis}: the gradient of a reduction over both "
                     "positive and negative axes needs the tensor's rank, and this one's is "
                     "unknown (a placeholder made without a shape). Give the placeholder a "
                     "shape, e.g. shape=(None, 3), or use axes of one sign.")


def total_dtype(dtype):
    """The dtype of a sum of ``dtype`` values: PyTorch's int64 for every bool and integer
    dtype (numpy would total uint8 pixels as uint64, and only uint64 itself stays so);
    None (the input's own) for floats."""
    return _INT64 if dtype.kind in "biu" and dtype != _UINT64 else None


_INT64, _UINT64 = np.dtype(np.int64), np.dtype(np.uint64)


class Sum(Reduction):
    name, gate = "sum", "copies"

    def forward(self, xp, x):
        return xp.asarray(x.sum(axis=self.axis, keepdims=self.keepdims,
                                dtype=total_dtype(x.dtype)))

    def backward(self, grad, out, x):
        return (self._spread(grad, x),)        # every summed element gets the same gradient


class Mean(Reduction):
    name = "mean"

    def forward(self, xp, x):
        if x.size and x.dtype.itemsize >= 4:
            # numpy's own mean (the sum over the count), without its ~5 µs of Python per call
            total = x.sum(axis=self.axis, keepdims=self.keepdims)
            return xp.asarray(total / (x.size // total.size))
        return xp.asarray(x.mean(axis=self.axis, keepdims=self.keepdims))   # float16: f32 sum

    def backward(self, grad, out, x):
        # divided before it is spread: the division runs on the (small) reduced shape
        return (self._spread(grad / reduced_count(x, self.axis), x),)


class Variance(Reduction):
    r"""$\frac{1}{n - c}\sum_i (x_i - \bar x)^2$ over the axes: $c = 0$ is the population
    variance (TF, numpy, batch norm), $c = 1$ the sample variance (PyTorch's default)."""

    name = "var"

    def __init__(self, axis=None, keepdims=False, correction=0):
        super().__init__(axis, keepdims)
        self.correction = correction

    def forward(self, xp, x):
        return xp.asarray(x.var(axis=self.axis, ddof=self.correction, keepdims=self.keepdims))

    def backward(self, grad, out, x):
        # each element pulls by its distance from the mean (the mean's own pull sums to 0)
        deviation = x - reduce_mean(x, self.axis, keepdims=True)
        return (self._spread(grad, x) * deviation * _two_over_dof(x, self.axis, self.correction),)


class Std(Variance):
    """The square root of ``Variance``. Where all values are equal, the spread has no slope
    (every deviation is 0) and the gradient is 0, as in PyTorch (TF's sqrt of the variance
    gives NaN there)."""

    name = "std"

    def forward(self, xp, x):
        return xp.asarray(x.std(axis=self.axis, ddof=self.correction, keepdims=self.keepdims))

    def backward(self, grad, out, x):
        return super().backward(divide_no_nan(grad, 2 * out), out, x)


def _two_over_dof(x, axis, correction):
    """2 / (n - c): a number, or a tensor when a graph knows n only at run time. With no
    degrees of freedom left the variance is NaN or infinite, and so is its gradient."""
    dof = reduced_count(x, axis) - correction
    if isinstance(dof, numbers.Number):
        return 2 / dof if dof > 0 else math.nan
    return 2 / dof


class Max(Reduction):
    """Largest value over axes. Backward routes the gradient to the winner (split over ties)."""

    name, gate, ufunc = "max", "routes", "max"

    def forward(self, xp, x):
        return xp.asarray(getattr(x, self.ufunc)(axis=self.axis, keepdims=self.keepdims))

    def backward(self, grad, out, x):
        winners = cast(equal(x, self._spread(out, x)), grad.dtype)
        count = reduce_sum(winners, self.axis, keepdims=True)
        return (self._spread(grad, x) * winners / count,)


class Min(Max):
    name, ufunc = "min", "min"


class LogSumExp(Reduction):
    r"""$\log\sum_i e^{x_i}$, computed as $m + \log\sum_i e^{x_i - m}$ so nothing overflows."""

    name = "logsumexp"

    def forward(self, xp, x):
        if x.size:
            m = x.max(axis=self.axis, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
        else:                           # (no max of nothing; the log of a sum of nothing: -inf)
            m = 0
        out = xp.log(xp.exp(x - m).sum(axis=self.axis, keepdims=True)) + m
        return out if self.keepdims else out.reshape(
            [n for i, n in enumerate(x.shape) if i not in reduction_axes(self.axis, x.ndim)])

    def backward(self, grad, out, x):
        # grad · softmax(x), shifted by the max: exp(x - out) loses digits when out is rounded
        # (float32 keeps 3 decimals at 1e4)
        e = exp(x - reduce_max(x, self.axis, keepdims=True))
        return (self._spread(grad, x) * e / reduce_sum(e, self.axis, keepdims=True),)


class EuclideanNorm(Reduction):
    r"""$\|x\|_2 = \sqrt{\sum_i x_i^2}$ over the axes (over all of a matrix's: the Frobenius
    norm)."""

    name = "norm"

    def forward(self, xp, x):
        return xp.sqrt(xp.asarray((x * x).sum(axis=self.axis, keepdims=self.keepdims)))

    def backward(self, grad, out, x):
        # d‖x‖/dx = x / ‖x‖. Where the norm is 0 (x = 0) there is no slope to speak of; the
        # gradient is 0 there, as in PyTorch, not 0 / 0 = NaN
        return (self._spread(divide_no_nan(grad, out), x) * x,)


class Cumsum(Op):
    r"""Running totals along ``axis``: $y_i = \sum_{j \le i} x_j$. ``exclusive`` leaves each
    element out of its own total ($j < i$), ``reverse`` adds up from the end ($j \ge i$)."""

    name = "cumsum"

    def __init__(self, axis=0, exclusive=False, reverse=False):
        self.axis, self.exclusive, self.reverse = axis, exclusive, reverse

    def forward(self, xp, x):
        shape = x.shape                 # (a 0-d tensor is its own total, as in PyTorch)
        x = x.reshape(1) if x.ndim == 0 else x
        if self.reverse:
            x = xp.flip(x, self.axis)
        out = xp.cumsum(x, axis=self.axis, dtype=total_dtype(x.dtype))
        if self.exclusive:              # every total moves one step on; the first is 0
            out = xp.roll(out, 1, axis=self.axis)
            out[(slice(None),) * (self.axis % x.ndim) + (slice(0, 1),)] = 0
        return (xp.flip(out, self.axis) if self.reverse else out).reshape(shape)

    def backward(self, grad, out, x):
        # x_j is part of every total from y_j on (forwards), so its gradient adds up their
        # gradients: a running total of the gradient in the other direction
        return (cumsum(grad, self.axis, self.exclusive, not self.reverse),)

    def explain_failure(self, shapes):
        return axis_failure(self.name, self.axis, shapes[0])


class ArgReduction(Op):
    differentiable = False

    def __init__(self, name, axis, keepdims=False):
        self.name, self.axis, self.keepdims = name, axis, keepdims

    @property
    def type_name(self):
        """TF's op type in the graph: ArgMax or ArgMin (one class here, two ops in TF)."""
        return {"argmax": "ArgMax", "argmin": "ArgMin"}[self.name]

    def forward(self, xp, x):
        return xp.asarray(getattr(xp, self.name)(x, axis=self.axis, keepdims=self.keepdims))

    def explain_failure(self, shapes):
        return axis_failure(self.name, self.axis, shapes[0])


class AnyAll(Reduction):
    differentiable = False

    def __init__(self, name, axis=None, keepdims=False):
        super().__init__(axis, keepdims)
        self.name = name

    def forward(self, xp, x):
        return xp.asarray(getattr(xp, self.name)(x, axis=self.axis, keepdims=self.keepdims))


class ReducedCount(Op):
    """How many elements a reduction over ``axis`` combined (known only at run time in graphs)."""

    name, differentiable = "reduced_count", False

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, x):
        axes = reduction_axes(self.axis, x.ndim)
        return xp.asarray(math.prod(x.shape[a] for a in axes), dtype=x.dtype)


def axis_failure(op_name, axis, shape):
    """The message for an axis a tensor does not have, named twice, or empty (the max of
    nothing is undefined)."""
    n = len(shape)
    axes = tuple(range(n)) if axis is None else \
        (axis,) if isinstance(axis, numbers.Integral) else tuple(axis or ())
    if axes and all(-n <= a < n for a in axes):
        normalised = [a % n for a in axes]
        if len(set(normalised)) < len(normalised):
            return f"{op_name} over axes {axis}: an axis is named twice; name each once."
        if any(shape[a] == 0 for a in normalised):
            where, along = ("", "") if axis is None else (f" over axis {axis}", " along it")
            return (f"{op_name}{where}: the tensor of shape {shape} has no elements{along}, "
                    f"and the {op_name} of nothing is undefined. Check why it is empty (a "
                    "mask or filter that kept nothing, a slice past the end).")
    return (f"{op_name} over axis {axis}: a tensor of shape {shape} has axes "
            f"{-n}..{n - 1}" + (" (none: it is 0-d)." if n == 0 else "."))


def reduced_count(x, axis):
    shape = x.shape
    if rank_known(shape):
        sizes = shape if axis is None else [shape[a] for a in reduction_axes(axis, len(shape))]
        if None not in sizes:
            return math.prod(sizes)
    return apply(ReducedCount(axis), x)


def reduce_sum(x, axis=None, keepdims=False, name=None):
    """Sum over ``axis`` (all axes if None). Backward copies the gradient to every element."""
    return apply(Sum(axis, keepdims), x, name=name)


def reduce_mean(x, axis=None, keepdims=False, name=None):
    return apply(Mean(axis, keepdims), to_float(x), name=name)


def reduce_variance(x, axis=None, keepdims=False, name=None):
    """The population variance over ``axis`` (``tf.math.reduce_variance``; divides by n)."""
    return apply(Variance(axis, keepdims), to_float(x), name=name)


def reduce_std(x, axis=None, keepdims=False, name=None):
    """The population standard deviation (``tf.math.reduce_std``): the batch-norm slide's
    "Std" row."""
    return apply(Std(axis, keepdims), to_float(x), name=name)


def var(x, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """PyTorch's ``torch.var`` / ``x.var``: the *sample* variance (divides by n − 1) unless
    ``unbiased=False`` or ``correction=0``."""
    return apply(Variance(dim, keepdim, _correction(unbiased, correction)), to_float(x))


def std(x, dim=None, unbiased=True, keepdim=False, *, correction=None):
    """PyTorch's ``torch.std`` / ``x.std``: the sample standard deviation unless
    ``unbiased=False`` or ``correction=0``."""
    return apply(Std(dim, keepdim, _correction(unbiased, correction)), to_float(x))


def _correction(unbiased, correction):
    return correction if correction is not None else int(bool(unbiased))


def moments(x, axes, shift=None, keepdims=False, name=None):
    """``tf.nn.moments``: the mean and the population variance over ``axes``, what batch norm
    normalises with. (``shift`` is accepted and unused, as in TF 2.)"""
    return (reduce_mean(x, axes, keepdims, name=name and f"{name}_mean"),
            reduce_variance(x, axes, keepdims, name=name and f"{name}_variance"))


def reduce_max(x, axis=None, keepdims=False, name=None):
    """Max over ``axis``. Backward: *max routes*: only the largest element gets the gradient."""
    return apply(Max(axis, keepdims), x, name=name)


def reduce_min(x, axis=None, keepdims=False, name=None):
    return apply(Min(axis, keepdims), x, name=name)


class MaxResult(collections.namedtuple("MaxResult", ["values", "indices"])):
    """PyTorch's ``(values, indices)`` of ``x.max(dim)``. Like PyTorch's, it is not a tensor:
    arithmetic with it is refused (numpy would read the pair as a stacked array, so that
    numpy's ``x - x.max(axis=1, keepdims=True)`` silently gained a dimension)."""

    __slots__ = ()

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"x.max(dim) / x.min(dim) give the pair (values, indices), as in PyTorch (also with "
            f"axis=), not a tensor of values of shape {tuple(self.values.shape)}: take "
            ".values, e.g. x - x.max(dim=1, keepdim=True).values, or use x.amax(dim) / "
            "x.amin(dim).")


def torch_max(x, dim=None, keepdim=False):
    """PyTorch's ``torch.max`` / ``x.max``: the largest element; along ``dim``, the pair
    ``(values, indices)`` (``_, predicted = eg.max(scores, 1)``); with a tensor as second
    argument, the elementwise ``maximum``. The values' gradient splits ties evenly (the rule
    of ``torch.amax`` and ``tf.reduce_max``; ``torch.max(x, dim)`` gives it all to the
    returned index)."""
    return _torch_extreme(x, dim, keepdim, reduce_max, argmax, maximum)


def torch_min(x, dim=None, keepdim=False):
    """PyTorch's ``torch.min`` / ``x.min``: see ``torch_max``."""
    return _torch_extreme(x, dim, keepdim, reduce_min, argmin, minimum)


def _torch_extreme(x, dim, keepdim, reduce, arg, elementwise):
    if dim is None:
        return reduce(x)
    if not isinstance(dim, numbers.Integral):       # torch.max(a, b): elementwise
        return elementwise(x, dim)
    indices = arg(x, dim)
    return MaxResult(reduce(x, dim, keepdim), expand_dims(indices, dim) if keepdim else indices)


def logsumexp(x, axis=None, keepdims=False, name=None):
    return apply(LogSumExp(axis, keepdims), to_float(x), name=name)


reduce_logsumexp = logsumexp


@accepting_aliases(p="ord", dim="axis", keepdim="keepdims")
def norm(x, ord="euclidean", axis=None, keepdims=False, name=None):
    r"""The length of x (``tf.norm``; ``torch.norm(x, p, dim, keepdim)``): the Euclidean norm
    $\sqrt{\sum_i x_i^2}$ by default (also ``ord=2``; over a matrix's values ``'fro'``), the
    sum of absolute values with ``ord=1``, the largest absolute value with ``ord=np.inf``.
    Over all values without ``axis``; along ``axis`` one norm per row (or column...).

    >>> eg.norm(eg.tensor([3.0, -4.0]))             # 5.0
    """
    axes = () if axis is None or np.ndim(axis) == 0 else tuple(axis)
    if len(axes) > 1 and ord not in ("euclidean", "fro", None):
        raise ValueError(
            f"norm(ord={ord!r}, axis={axis!r}): over two axes TF's tf.norm computes a matrix "
            "norm (for ord=1 the largest column sum of absolute values, for ord=2 the largest "
            "singular value), PyTorch's torch.norm a vector norm of all the values; edugraph "
            "does only the Frobenius norm there (ord='fro', the same in both). For PyTorch's, "
            "write x.norm(p, dim) or eg.reduce_sum(eg.abs(x), axis) for ord=1.")
    return vector_norm(x, ord, axis, keepdims, name=name)


_EUCLIDEAN = ("euclidean", "fro", 2, None)


def vector_norm(x, ord=2, axis=None, keepdims=False, name=None):
    """The norm of the values over ``axis`` taken as one vector, also over several axes
    (``torch.linalg.vector_norm``; PyTorch's ``x.norm(p, dim)``)."""
    x = to_float(x)
    if ord in _EUCLIDEAN:
        return apply(EuclideanNorm(axis, keepdims), x, name=name)
    if ord == 1:                        # (abs's gradient, the sign, is 0 at 0: as PyTorch's)
        return reduce_sum(absolute(x), axis, keepdims, name=name)
    if ord == math.inf:                 # (max routes the gradient, split over ties)
        return reduce_max(absolute(x), axis, keepdims, name=name)
    raise ValueError(
        f"norm: ord (PyTorch's p) {ord!r} is not supported; edugraph has 'euclidean' (= 'fro' "
        "= 2), 1 and np.inf. Another p-norm is eg.reduce_sum(eg.abs(x) ** p) ** (1 / p).")


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Running totals along ``axis`` (``tf.cumsum``, ``torch.cumsum(x, dim)``): ``[1, 2, 3]``
    gives ``[1, 3, 6]``; ``exclusive=True`` ``[0, 1, 3]``, ``reverse=True`` ``[6, 5, 3]``.
    Backward: the running total of the gradient the other way round."""
    if not isinstance(axis, numbers.Integral):
        raise TypeError(f"cumsum adds up along one axis, an integer; got axis={axis!r}. "
                        "Write e.g. eg.cumsum(x, axis=0) or x.cumsum(0) (PyTorch's dim).")
    return apply(Cumsum(int(axis), exclusive, reverse), x, name=name)


def argmax(x, axis=None, name=None, *, keepdims=False):
    """The index of the largest value along ``axis`` (of the flattened tensor without one:
    PyTorch's ``x.argmax()``)."""
    return apply(ArgReduction("argmax", axis, keepdims), x, name=name)


def argmin(x, axis=None, name=None, *, keepdims=False):
    return apply(ArgReduction("argmin", axis, keepdims), x, name=name)


def tf_argmax(input, axis=None, name=None, output_type="int64"):
    """TF's ``tf.math.argmax``: along ``axis``, which is 0 when not given (one index per
    column of a matrix), where PyTorch's ``x.argmax()`` flattens (one index)."""
    return _indices_as(argmax(input, 0 if axis is None else axis, name), output_type)


def tf_argmin(input, axis=None, name=None, output_type="int64"):
    return _indices_as(argmin(input, 0 if axis is None else axis, name), output_type)


def shared_argmax(input, axis=None, name=None, *, keepdims=False, output_type="int64"):
    """``eg.argmax``: TF's ``tf.argmax`` and PyTorch's ``torch.argmax`` under one name. With
    an axis (``dim``) they agree; without one TF takes axis 0 and PyTorch flattens, so then
    edugraph asks which (unless ``input`` has one dimension, where both give the same)."""
    _refuse_without_axis("argmax", input, axis)
    return _indices_as(argmax(input, axis, name, keepdims=keepdims), output_type)


def shared_argmin(input, axis=None, name=None, *, keepdims=False, output_type="int64"):
    _refuse_without_axis("argmin", input, axis)
    return _indices_as(argmin(input, axis, name, keepdims=keepdims), output_type)


def _refuse_without_axis(kind, x, axis):
    shape = x.shape if hasattr(x, "shape") else np.shape(x)
    if axis is None and not (rank_known(shape) and len(shape) <= 1):
        raise ValueError(
            f"eg.{kind}(x) without an axis is ambiguous for x of shape {shape}: TF's "
            f"tf.{kind} works along axis 0 (one index per column), PyTorch's torch.{kind} on "
            f"the flattened tensor (one index). Say which: eg.{kind}(x, axis=0) or "
            f"eg.math.{kind}(x) as in TF, x.{kind}() as in PyTorch.")


def _indices_as(indices, output_type):
    """TF's ``output_type``: the indices are int64 unless int32 is asked for."""
    return indices if np.dtype(output_type) == indices.dtype else cast(indices, output_type)


def reduce_any(x, axis=None, keepdims=False, name=None):
    return apply(AnyAll("any", axis, keepdims), x, name=name)


def reduce_all(x, axis=None, keepdims=False, name=None):
    return apply(AnyAll("all", axis, keepdims), x, name=name)
