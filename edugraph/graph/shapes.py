"""Static shapes: what a symbolic tensor's shape is known to be before anything runs.

A dimension is a number or ``None`` (unknown until fed, printed ``?`` as in TF1); a placeholder
made with ``shape=None`` has unknown rank. Shape rules for the common ops are written out here,
so building a graph over 3000×4000 tensors does no 3000×4000 work; any other op is run once on
tiny stand-in arrays to see what comes out.
"""
import numbers
import operator

import numpy as np

from ..errors import ShapeError
from ..ops import activation, base, conv, linalg, math, random, reduce, sequence
from ..ops import shape as shape_ops
from ..ops.base import rank_known
from ..tensor import Tensor


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

    rank = ndims                                # (TF2's name)

    @property
    def dims(self):
        """The sizes as a list (None for an unknown size), or None if the rank is unknown."""
        return list(self) if self.rank_known else None

    def num_elements(self):
        """How many values a tensor of this shape holds; None unless every size is known."""
        return int(np.prod(self, dtype=np.int64)) if self.is_fully_defined() else None

    def as_list(self):
        if not self.rank_known:
            raise ValueError("as_list() is not defined on an unknown TensorShape (a placeholder "
                             "made with shape=None): give it a shape, e.g. shape=(None, 3), "
                             "or test shape.rank is None first.")
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


def _broadcast_to(op, x, *shape):
    """The target shape, if x can reach it (an unknown size may turn out to fit; a target
    given as a tensor may have unknown sizes, see ``shape_input``)."""
    target = TensorShape(op.shape)
    if x.shape.rank_known and target.rank_known and (
            len(x.shape) > len(target) or
            not target.is_compatible_with(broadcast([x.shape, target], op.name))):
        raise ShapeError(op.explain_failure([tuple(x.shape)]))
    return target, x.dtype


def _reshape(op, x, *shape):
    """TF's rule: the target's -1 is inferred when the input's size is known, else unknown
    (also when another size of the target is: a shape tensor's, see ``shape_input``)."""
    if not rank_known(op.shape):
        return UNKNOWN, x.dtype
    target = list(op.shape)
    if not x.shape.rank_known or None in x.shape or None in target:
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


# ----------------------------------------------------------------- a shape given as a tensor
def shape_input(shape, op_name):
    """A shape argument holding graph tensors (``eg.shape(x)``, ``[eg.shape(x)[0], 3]``) as
    ``(known, tensor)``: the shape as one integer vector, which becomes the op's last input
    (``base.TakesShape``), and what is known of its value before the graph runs, a tuple of
    ints and None (or UNKNOWN, if even its length is not), which gives the op's static shape.
    As TF, it reads each size that is a Python int or a constant, and a size taken from
    ``eg.shape(t)`` is t's static size: reshape(x, [eg.shape(x)[0], 3, 1]) is (?, 3, 1)."""
    if isinstance(shape, Tensor):
        _check_shape_tensor(shape, op_name, shape, 1)
        if shape.shape == ():                           # one size, as eagerly: a 1-D shape
            return (_known_size(shape),), shape_ops.stack([shape])
        return _known_sizes(shape), shape
    parts = [_shape_part(n, op_name, shape) for n in shape]
    return tuple(_known_size(p) for p in parts), shape_ops.stack(parts)


def _check_shape_tensor(t, op_name, shape, rank):
    """A shape tensor (rank 1; or 0, one size) or one size in a list (rank 0): integers."""
    what = f"the shape {t.name}" if t is shape else \
        f"the size {t.name} in the shape {_shape_text(shape)}"
    if t.dtype.kind not in "iu":
        raise TypeError(f"{op_name}: {what} is a {t.dtype} tensor, but sizes are whole "
                        "numbers: cast it first, e.g. eg.cast(n, eg.int32).")
    if t.shape.rank_known and len(t.shape) > rank:
        raise ShapeError(
            f"{op_name}: {what} has shape {t.shape}, but a shape is a vector of sizes (rank 1) "
            "and each size in a list one number (rank 0): pass eg.shape(x), or a list such "
            "as [eg.shape(x)[0], 3]; to join shape vectors use eg.concat([...], axis=0).")


def _shape_text(shape):
    return "[" + ", ".join(p.name if isinstance(p, Tensor) else repr(p) for p in shape) + "]"


def _shape_part(n, op_name, shape):
    """One size of a shape list: a scalar graph tensor stays; numbers (and eager tensors)
    become ints."""
    if isinstance(n, Tensor) and n.graph is not None:
        _check_shape_tensor(n, op_name, shape, 0)
        return n
    try:
        return operator.index(n)
    except TypeError:
        raise TypeError(f"{op_name}: the shape {_shape_text(shape)} has {n!r} in it, but "
                        "sizes are whole numbers (or 0-d integer tensors such as "
                        "eg.shape(x)[0]).") from None


def _known_size(n):
    """The value of one size before the graph runs: an int, a constant's value, or the
    static size that ``eg.shape(t)[i]`` reads; else None."""
    if not isinstance(n, Tensor):
        return n
    op = n.op.eg_op
    if n.op.type == "Const":
        return int(op.value)
    if isinstance(op, _SIZE_ARITHMETIC):               # eg.shape(x)[1] * eg.shape(x)[2]
        values = [_known_size(i) for i in n.op.inputs]
        return None if None in values else int(op.forward(np, *map(np.asarray, values)))
    source = _shape_source(n)
    if source is not None and isinstance(op.index, numbers.Integral):
        dims = source.shape
        if dims.rank_known and -len(dims) <= op.index < len(dims):
            return dims[op.index]
    return None


_SIZE_ARITHMETIC = (math.Add, math.Subtract, math.Multiply, math.FloorDiv)


def _known_sizes(t):
    """What is known of the value of the 1-D shape tensor ``t`` (TF's
    ``constant_value_as_shape``): the sizes of a constant, ``eg.shape(x)``'s static shape (or
    a slice of it), a stack's sizes one by one; else None per size, or UNKNOWN."""
    op = t.op.eg_op
    if t.op.type == "Const":
        return tuple(int(n) for n in op.value)
    if isinstance(op, sequence.Shape) and t.op.inputs[0].shape.rank_known:
        return tuple(t.op.inputs[0].shape)
    source = _shape_source(t)
    if source is not None and isinstance(op.index, slice) and source.shape.rank_known:
        return tuple(source.shape)[op.index]
    if isinstance(op, shape_ops.Stack) and op.axis == 0:
        return tuple(_known_size(n) for n in t.op.inputs)
    if not t.shape.rank_known or t.shape[0] is None:
        return UNKNOWN
    return (None,) * t.shape[0]


def _shape_source(t):
    """x, when ``t`` is ``eg.shape(x)[index]`` (a size or a slice of x's shape)."""
    if t.op.type != "StridedSlice" or not isinstance(t.op.eg_op.index, (slice, numbers.Integral)):
        return None
    shape = t.op.inputs[0]
    return shape.op.inputs[0] if isinstance(shape.op.eg_op, sequence.Shape) else None


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
