"""Static shapes: what a symbolic tensor's shape is known to be before anything runs.

A dimension is a number or ``None`` (unknown until fed, printed ``?`` as in TF1); a placeholder
made with ``shape=None`` has unknown rank. Shape rules for the common ops are written out here,
so building a graph over 3000×4000 tensors does no 3000×4000 work; any other op is run once on
tiny stand-in arrays to see what comes out.
"""
import numbers

import numpy as np

from ..errors import ShapeError
from ..ops import activation, base, conv, linalg, math, random, reduce, shape as shape_ops


class TensorShape(tuple):
    """A tuple of dimensions (ints or None) that prints like TF1: ``(?, 3)``. One number is a
    1-D shape, as in TF1 (``placeholder(eg.float32, 3)`` has shape ``(3,)``)."""

    rank_known = True

    def __new__(cls, dims):
        if dims is None or dims is UNKNOWN:     # (not a tuple of no dimensions: a scalar)
            return UNKNOWN
        if isinstance(dims, numbers.Integral):
            dims = (dims,)
        return super().__new__(cls, [None if d is None or d == -1 else int(d) for d in dims])

    @property
    def ndims(self):
        return len(self) if self.rank_known else None

    def as_list(self):
        return list(self)

    def is_fully_defined(self):
        return self.rank_known and None not in tuple(self)

    def is_compatible_with(self, dims):
        """Could an array of shape ``dims`` be a value of this tensor?"""
        if not self.rank_known:
            return True
        return len(dims) == len(self) and all(d is None or d == n for d, n in zip(self, dims))

    def __str__(self):
        if not self.rank_known:
            return "<unknown>"
        parts = ["?" if d is None else str(d) for d in self]
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    __repr__ = __str__


class _UnknownRank(TensorShape):
    rank_known = False

    def __new__(cls):
        return tuple.__new__(cls, ())

    def __contains__(self, item):
        return item is None             # every dimension is unknown

    def __len__(self):
        raise ShapeError("This tensor's rank is unknown (a placeholder made with shape=None); "
                         "give the placeholder a shape, e.g. shape=(None, 3).")

    def __eq__(self, other):
        return False

    __hash__ = tuple.__hash__


UNKNOWN = _UnknownRank()


def broadcast(shapes, op_name):
    """The broadcast of static shapes; an unknown size meeting a known one takes the known."""
    if any(not s.rank_known for s in shapes):
        return UNKNOWN
    ndim = max(len(s) for s in shapes)
    out = []
    for axis in range(-ndim, 0):
        sizes = [s[axis] for s in shapes if len(s) >= -axis]
        known = {n for n in sizes if n is not None and n != 1}
        if len(known) > 1:
            raise ShapeError(base.broadcast_rule_failure(op_name, [tuple(s) for s in shapes]))
        if known:
            out.append(known.pop())
        elif None in sizes:
            out.append(None)
        else:
            out.append(1)
    return TensorShape(out)


def _elementwise(op, *xs):
    dtype = np.result_type(*[x.dtype for x in xs[-2:]])
    if isinstance(op, math.Compare):
        dtype = np.dtype(bool)
    return broadcast([x.shape for x in xs], op.name), dtype


def _same(op, x, *rest):
    return x.shape, x.dtype


def _clip(op, x, *bounds):
    """x's shape: tensor bounds must broadcast to it without changing it."""
    shapes = [x.shape] + [b.shape for b in bounds]
    if all(s.rank_known for s in shapes):
        fits = all(len(b) <= len(x.shape) and all(
            n in (1, None) or m in (n, None) for n, m in zip(b[::-1], x.shape[::-1]))
            for b in shapes[1:])
        if not fits:
            raise ShapeError(op.explain_failure([tuple(s) for s in shapes]))
    return x.shape, x.dtype


def _matmul(op, a, b):
    if not (a.shape.rank_known and b.shape.rank_known):
        return UNKNOWN, a.dtype
    sa, sb = op.read_shapes(tuple(a.shape), tuple(b.shape))
    scalar = len(sa) < 2 or len(sb) < 2             # (matmul made vectors 2-D: a number)
    if scalar or (sa[-1] is not None and sb[-2] is not None and sa[-1] != sb[-2]):
        raise ShapeError(op.explain_failure([tuple(a.shape), tuple(b.shape)]))
    batch = broadcast([TensorShape(sa[:-2]), TensorShape(sb[:-2])], op.name)
    return TensorShape(tuple(batch) + (sa[-2], sb[-1])), a.dtype


def _reduction(op, x):
    dtype = x.dtype if x.dtype.kind == "f" or not isinstance(op, reduce.Mean) else np.float64
    if isinstance(op, reduce.Sum):
        dtype = reduce.total_dtype(x.dtype) or dtype
    if not x.shape.rank_known:
        return UNKNOWN, dtype
    n = len(x.shape)
    named = () if op.axis is None else \
        (op.axis,) if isinstance(op.axis, numbers.Integral) else tuple(op.axis)
    if any(not -n <= a < n for a in named) or len({a % n for a in named}) < len(named):
        raise ShapeError(op.explain_failure([tuple(x.shape)]))  # (reduction_axes would wrap)
    axes = base.reduction_axes(op.axis, n)
    dims = [1 if i in axes else d for i, d in enumerate(x.shape)] if op.keepdims else \
        [d for i, d in enumerate(x.shape) if i not in axes]
    return TensorShape(dims), dtype


def _broadcast_to(op, x):
    """The target shape, if x can reach it (an unknown size may turn out to fit)."""
    target = TensorShape(op.shape)
    if x.shape.rank_known and (len(x.shape) > len(target) or
                               broadcast([x.shape, target], op.name) != target):
        raise ShapeError(op.explain_failure([tuple(x.shape)]))
    return target, x.dtype


def _reshape(op, x):
    """TF's rule: the target's -1 is inferred when the input's size is known, else unknown."""
    target = list(op.shape)
    if not x.shape.rank_known or None in x.shape:
        return TensorShape(target), x.dtype             # -1 becomes ? (TensorShape maps it)
    size, known = int(np.prod(x.shape)), int(np.prod([d for d in target if d != -1]))
    if (size % known if -1 in target else size != known) if known else size:
        raise ShapeError(op.explain_failure([tuple(x.shape)]))
    return TensorShape([size // known if d == -1 else d for d in target]), x.dtype


def _shaped_like(op, x, *rest):
    """A ShapedLike op (or ReshapeLike): its ``shape`` when known, else its last input's, the
    tensor it is shaped like. (Not by trial: stand-ins for a slice's gradient and the sliced
    tensor, both (?, ?), would be made of one size and fail.)"""
    shape = getattr(op, "shape", None)
    return (rest[-1].shape if shape is None else TensorShape(shape)), x.dtype


def _made(op, *inputs):
    return TensorShape(op.shape), op.dtype


_RULES = {}
for _cls in (math.Add, math.AddN, math.Subtract, math.Multiply, math.Divide, math.Pow,
             math.Maximum, math.Minimum, math.Where, math.Compare, math.FloorDiv, math.FloorMod):
    _RULES[_cls] = _elementwise
for _cls in (math.Negative, math.Square, math.Sqrt, math.Exp, math.Log, math.Abs, math.Sign,
             activation.Relu, activation.LeakyRelu, activation.Sigmoid,
             activation.Tanh, activation.Softmax, activation.LogSoftmax, shape_ops.Identity,
             shape_ops.StopGradient):
    _RULES[_cls] = _same
for _cls in (reduce.Sum, reduce.Mean, reduce.Variance, reduce.Std, reduce.Max, reduce.Min,
             reduce.EuclideanNorm):
    _RULES[_cls] = _reduction
for _cls in (base.SumToShapeOf, base.BroadcastLike, shape_ops.ReshapeLike, shape_ops.ScatterAdd,
             shape_ops.GatherGrad, conv.Col2Im):
    _RULES[_cls] = _shaped_like
for _cls in (random.Fill, random.RandomNormal, random.TruncatedNormal, random.RandomUniform,
             random.RandomInteger):
    _RULES[_cls] = _made
_RULES[linalg.MatMul] = _matmul
_RULES[math.Clip] = _clip
_RULES[shape_ops.Reshape] = _reshape
_RULES[shape_ops.BroadcastTo] = _broadcast_to
_RULES[shape_ops.ConcatPiece] = lambda op, grad, *xs: (xs[op.index].shape, grad.dtype)
_RULES[math.Cast] = lambda op, x: (x.shape, op.dtype)
_RULES[random.FillLike] = lambda op, x: (x.shape, op.dtype or x.dtype)
_RULES[math.LogicalNot] = lambda op, x: (x.shape, np.dtype(bool))
_RULES[reduce.Cumsum] = lambda op, x: (x.shape, reduce.total_dtype(x.dtype) or x.dtype)


def infer(op, inputs):
    """(static shape, dtype) of ``op``'s output on symbolic ``inputs``."""
    rule = _RULES.get(type(op))
    if rule is not None:
        return rule(op, *inputs)
    if hasattr(op, "static_shape"):            # graph-only ops (placeholder, const...) know theirs
        return op.static_shape(*inputs)
    return _by_trial(op, inputs)


def _by_trial(op, inputs):
    """Run ``op`` on small stand-ins: unknown sizes become 2, then 3; what changes is unknown."""
    if any(not x.shape.rank_known for x in inputs):
        return UNKNOWN, _dtype_by_trial(op, inputs)
    results = []
    for fill in (2, 3) if any(None in x.shape for x in inputs) else (2,):
        arrays = [_stand_in(x, fill) for x in inputs]
        try:
            with np.errstate(all="ignore"):
                value = op.forward(np, *arrays)
        except (ValueError, IndexError, TypeError) as e:
            raise ShapeError(op.explain_failure([tuple(x.shape) for x in inputs])) from e
        results.append(np.asarray(base.forward_result(op, value)))
    first = results[0]
    dims = [d if all(r.shape[i] == d for r in results) else None
            for i, d in enumerate(first.shape)]
    return TensorShape(dims), first.dtype


def _dtype_by_trial(op, inputs):
    """The output's dtype when an input's rank is unknown (argmax gives integers, one_hot its
    dtype): the op run on stand-ins of that input with a few ranks (its axes may need more
    than one), else the first input's dtype."""
    for rank in (1, 2, 3, 4):
        try:
            with np.errstate(all="ignore"):
                value = op.forward(np, *[_stand_in(x, 2, rank) for x in inputs])
        except (ValueError, IndexError, TypeError):
            continue
        return np.asarray(base.forward_result(op, value)).dtype
    return inputs[0].dtype


def _stand_in(x, fill, rank=None):
    """An array that could be ``x``'s value: its unknown sizes ``fill``, an unknown rank
    ``rank``."""
    dims = x.shape if x.shape.rank_known else (None,) * rank
    shape = tuple(fill if d is None else d for d in dims)
    # ones (not zeros): no division by zero; integer inputs are indices, so 0 is always valid
    return np.zeros(shape, x.dtype) if x.dtype.kind in "iub" else np.ones(shape, x.dtype)
