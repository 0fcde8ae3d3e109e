"""Ops that move values around without changing them: reshape, transpose, indexing, joining.

Their backward passes move the gradient back to where each value came from.
"""
import collections
import math
import numbers

import numpy as np

from .base import (Op, ShapedLike, TakesShape, accepting_aliases, apply, apply_shaped_like,
                   as_tensor, as_tensors, broadcast_array, shape_operand, sum_to_shape)
from .random import zeros_like
from ..errors import ShapeError
from ..tensor import Tensor, _index_text, as_dtype, is_array, tensor


class Reshape(TakesShape):
    """x's values in another shape (in a graph the shape may be a tensor: TakesShape)."""

    name = "reshape"

    def __init__(self, shape):
        self.shape = shape

    def forward(self, xp, x, *shape):
        return x.reshape(self.sizes(shape))

    def backward(self, grad, out, x, *shape):
        return (reshape_like(grad, x),) + (None,) * len(shape)     # (the shape: none)

    def explain_failure(self, shapes):
        size = "an unknown number of" if None in shapes[0] else int(np.prod(shapes[0]))
        into = self.shape
        if len(shapes) > 1:                             # a shape tensor's sizes (TakesShape)
            from ..graph.shapes import TensorShape
            into = f"the sizes of the shape tensor, {TensorShape(self.shape)} before the run"
        return (f"reshape: cannot reshape a tensor of shape {shapes[0]} ({size} elements) "
                f"into {into}; the number of elements must stay the same (one dimension "
                "may be -1, and it is inferred).")


class ReshapeLike(Op):
    name = "reshape"

    def forward(self, xp, x, like):
        return x.reshape(like.shape)

    def backward(self, grad, out, x, like):
        return reshape_like(grad, x), None


class Flatten(Op):
    """A reshape that merges dimensions ``start_dim``..``end_dim``, with the sizes read when
    it runs: in a graph they may all be unknown (a batch of images of any size)."""

    name = "flatten"

    def __init__(self, start_dim, end_dim):
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, xp, x):
        return x.reshape(flattened_shape(x.shape, self.start_dim, self.end_dim, self.name))

    def backward(self, grad, out, x):
        return (reshape_like(grad, x),)


class Transpose(Op):
    name = "transpose"

    def __init__(self, perm):
        self.perm = None if perm is None else tuple(perm)

    def forward(self, xp, x):
        return xp.transpose(x, self.perm)

    def backward(self, grad, out, x):
        # (axes counted from the end, permute(-1, 0, 1), are put first in the range 0..n-1)
        inverse = None if self.perm is None else \
            tuple(np.argsort([a % len(self.perm) for a in self.perm]))
        return (transpose(grad, inverse),)

    def explain_failure(self, shapes):
        n = len(shapes[0])
        return (f"transpose(perm={self.perm}): a tensor of shape {shapes[0]} has {n} axes, "
                f"so perm must name each of 0..{n - 1} exactly once (e.g. "
                f"{tuple(reversed(range(n)))} reverses their order).")


class BroadcastTo(TakesShape):
    name, gate = "broadcast_to", "copies"

    def __init__(self, shape):
        self.shape = shape

    def forward(self, xp, x, *shape):
        return broadcast_array(xp, x, self.sizes(shape))

    def backward(self, grad, out, x, *shape):
        return (sum_to_shape(grad, x),) + (None,) * len(shape)

    def explain_failure(self, shapes):
        return (f"broadcast_to: a tensor of shape {shapes[0]} cannot be broadcast to "
                f"{self.shape}: compared from the right, each size must equal the target's "
                "or be 1.")


class ExpandDims(Op):
    name = "expand_dims"

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, x):
        # a reshape: xp.expand_dims costs ~3 µs of Python, and the backward of every reduction
        # over an axis calls this once per reduced axis
        ndim = x.ndim + 1
        if not -ndim <= self.axis < ndim:
            raise IndexError(f"axis {self.axis} is out of range for the result's {ndim} axes")
        axis = self.axis % ndim
        return x.reshape(x.shape[:axis] + (1,) + x.shape[axis:])

    def backward(self, grad, out, x):
        return (reshape_like(grad, x),)

    def explain_failure(self, shapes):
        n = len(shapes[0]) + 1
        return (f"expand_dims(axis={self.axis}): the result of expanding a tensor of shape "
                f"{shapes[0]} has {n} axes, so axis must be in {-n}..{n - 1}.")


class Squeeze(Op):
    name = "squeeze"

    def __init__(self, axis):
        self.axis = tuple(axis) if axis.__class__ is list else axis     # TF's axis=[1]

    def forward(self, xp, x):
        return xp.squeeze(x, self.axis)

    def backward(self, grad, out, x):
        return (reshape_like(grad, x),)

    def explain_failure(self, shapes):
        shape, n = shapes[0], len(shapes[0])
        for axis in () if self.axis is None else np.atleast_1d(self.axis):
            if not -n <= axis < n:
                return (f"squeeze(axis={self.axis}): a tensor of shape {shape} has axes "
                        f"{-n}..{n - 1}.")
            if shape[axis] not in (1, None):
                return (f"squeeze(axis={self.axis}): axis {axis} of a tensor of shape {shape} "
                        f"has size {shape[axis]}, and squeeze removes only axes of size 1. "
                        "Use reshape (or a reduction) to drop it.")
        return super().explain_failure(shapes)


class Concat(Op):
    name = "concat"
    promotes_from = 0               # an int tensor joins a float one in the float's dtype

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, *xs):
        return xp.concatenate(xs, axis=self.axis)

    def backward(self, grad, out, *xs):
        return tuple(apply(ConcatPiece(self.axis, i), grad, *xs) for i in range(len(xs)))

    def explain_failure(self, shapes):
        ranks = {len(s) for s in shapes}
        if len(ranks) > 1:
            return (f"concat: the tensors must have the same number of dimensions, got shapes "
                    f"{shapes}. Reshape (or eg.expand_dims) one of them first.")
        n = ranks.pop()
        if not -n <= self.axis < n:
            return (f"concat along axis {self.axis}: tensors of shapes {shapes} have axes "
                    f"{-n}..{n - 1}. To join along a new axis, use eg.stack.")
        return (f"concat along axis {self.axis}: shapes {shapes} must agree on every other "
                "dimension.")


class ConcatPiece(Op):
    """Input ``index``'s share of a concat's gradient: the slice of ``grad`` where that input
    went. The inputs' sizes are read when it runs, so a graph need not know them before."""

    name, gate = "concat_grad", "routes"

    def __init__(self, axis, index):
        self.axis, self.index = axis, index

    def forward(self, xp, grad, *xs):
        start = sum(x.shape[self.axis] for x in xs[:self.index])
        end = start + xs[self.index].shape[self.axis]
        return grad[(slice(None),) * (self.axis % grad.ndim) + (slice(start, end),)]

    def backward(self, grad, out, g, *xs):
        # the piece goes back where it was cut from; the other inputs' places get zeros
        pieces = [grad if i == self.index else zeros_like(x, dtype=grad.dtype)
                  for i, x in enumerate(xs)]
        return (concat(pieces, self.axis),) + (None,) * len(xs)


class Stack(Op):
    name = "stack"
    promotes_from = 0

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, *xs):
        return xp.stack(xs, axis=self.axis)

    def backward(self, grad, out, *xs):
        # each input's slice of the gradient: grad[:, i] for axis 1, grad[..., i, :] for axis -2
        # (no need to know the rank, which a graph may not)
        def piece(i):
            if self.axis >= 0:
                return (slice(None),) * self.axis + (i,)
            return (Ellipsis, i) + (slice(None),) * (-self.axis - 1)
        return tuple(grad[piece(i)] for i in range(len(xs)))

    def explain_failure(self, shapes):
        n = len(shapes[0]) + 1          # (the result's rank: stack adds an axis)
        if len(set(shapes)) == 1 and not -n <= self.axis < n:
            return (f"stack along axis {self.axis}: stacking tensors of shape {shapes[0]} "
                    f"gives {n} axes, so axis must be in {-n}..{n - 1}.")
        return f"stack: all tensors must have the same shape, got {shapes}."


class GetItem(Op):
    """``x[index]``: basic slicing and integer-array indexing."""

    name, gate = "getitem", "routes"

    def __init__(self, index):
        self.index = index

    def forward(self, xp, x):
        return x[self.index]

    def backward(self, grad, out, x):
        return (apply_shaped_like(ScatterAdd(self.index), x, grad),)

    def explain_failure(self, shapes):
        where = f"x[{_index_text(self.index)}]"
        if shapes[0] == ():
            return (f"{where}: a 0-D tensor (a scalar, such as a loss) has no index; use "
                    ".item() for its number (loss.item()), or the tensor itself.")
        floats = _floats_in(self.index)
        if floats is not None:
            return f"{where}: {floats}"
        return (f"indexing a tensor of shape {shapes[0]} with {self.index!r} failed: indices "
                "must be integers (or booleans) within each dimension's size.")

    def explain_type_failure(self, inputs, error):
        """numpy's TypeError here is about the index (a float slice bound), not x's dtype."""
        return self.explain_failure([t.shape for t in inputs])


class ScatterAdd(ShapedLike):
    """Zeros shaped like ``like`` with ``grad`` added at ``index`` (repeated indices add up)."""

    name = "scatter_add"

    def __init__(self, index):
        self.index = index

    def forward(self, xp, grad, *like):
        result = xp.zeros(like[0].shape if like else self.shape, dtype=grad.dtype)
        if _is_basic(self.index):
            result[self.index] = grad           # slices never repeat an element: plain copy
        else:
            xp.add.at(result, self.index, grad)
        return result

    def backward(self, grad, out, g, *like):
        return (grad[self.index],) + (None,) * len(like)


class IndexPut(Op):
    """``x[index] = value`` as a node (PyTorch's ``index_put``): a copy of x with ``value``
    (broadcast) written at ``index``. Backward: x's gradient is the upstream one except at
    ``index`` (those values were replaced: zeros there), and ``value``'s is the upstream
    gradient at ``index``."""

    name, gate = "index_put", "routes"

    def __init__(self, index):
        self.index = index

    def forward(self, xp, x, value):
        out = xp.asarray(x).copy()
        out[self.index] = value
        return out

    def backward(self, grad, out, x, value):
        grad_x = apply(IndexPut(self.index), grad, 0.0) if x.requires_grad else None
        grad_value = None
        if value.requires_grad:
            grad_value = apply(GetItem(self.index), grad)
            missing = len(value.shape) - len(grad_value.shape)
            if missing > 0:         # x[0] = v with v of shape (1, n) for a part of shape (n,)
                grad_value = reshape(grad_value, (1,) * missing + tuple(grad_value.shape))
        return grad_x, grad_value

    def explain_failure(self, shapes):
        return (f"index_put: values of shape {shapes[1]} cannot be written at {self.index!r} "
                f"into a tensor of shape {shapes[0]}: the indices must lie within each "
                "dimension's size, and the values must broadcast to the part they pick.")


class Gather(Op):
    """``params`` rows (along ``axis``) picked by integer ``indices``: an embedding lookup."""

    name, gate = "gather", "routes"

    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, xp, params, indices):
        if indices.size and indices.min() < 0:  # (numpy's take would count from the end)
            raise IndexError("negative index")
        return xp.take(params, indices, axis=self.axis)

    def backward(self, grad, out, params, indices):
        return apply_shaped_like(GatherGrad(self.axis), params, grad, indices), None

    def explain_failure(self, shapes):
        size = shapes[0][self.axis] if isinstance(self.axis, numbers.Integral) and \
            len(shapes[0]) > self.axis >= -len(shapes[0]) else None
        within = f"in [0, {size})" if size is not None else "within the axis"
        return (f"gather along axis {self.axis} from params of shape {shapes[0]} with indices "
                f"of shape {shapes[1]} failed: indices must be integers {within}, as in TF "
                "(no negative ones counting from the end).")


class GatherGrad(ShapedLike):
    name = "scatter_add"

    def __init__(self, axis=0):
        self.axis = axis

    def forward(self, xp, grad, indices, *like):
        result = xp.zeros(like[0].shape if like else self.shape, dtype=grad.dtype)
        axis = self.axis % result.ndim  # (axis=-1: the indices' axes start at the last one)
        moved = xp.moveaxis(result, axis, 0)        # a view: adding into it fills ``result``
        g = xp.moveaxis(grad, list(range(axis, axis + indices.ndim)), list(range(indices.ndim)))
        xp.add.at(moved, indices, g)
        return result

    def backward(self, grad, out, g, indices, *like):
        return (gather(grad, indices, self.axis), None) + (None,) * len(like)


class Identity(Op):
    name, returns_an_input = "identity", True

    def forward(self, xp, x):
        return x

    def backward(self, grad, out, x):
        return (grad,)


class Clone(Op):
    """PyTorch's ``x.clone()``: the same values in a new array (later in-place changes to x
    leave it alone); the gradient passes through."""

    name = "clone"

    def forward(self, xp, x):
        return x.copy()

    def backward(self, grad, out, x):
        return (grad,)


class StopGradient(Op):
    """The same values, with no gradient behind them (``tf.stop_gradient``, ``x.detach()``)."""

    name, differentiable, returns_an_input = "stop_gradient", False, True

    def forward(self, xp, x):
        return x


class OneHot(Op):
    name, differentiable = "one_hot", False

    def __init__(self, depth, dtype):
        self.depth, self.dtype = depth, dtype

    def forward(self, xp, indices):
        return (indices[..., None] == xp.arange(self.depth)).astype(self.dtype)


class CopyTo(Op):
    """An explicit copy between devices; the gradient is copied back."""

    name = "copy"

    def __init__(self, source, target):
        self.source, self.target = source, target
        self.output_device = target

    def forward(self, xp, x):
        return self.target.put(self.source.get(x))

    def backward(self, grad, out, x):
        return (copy_to(grad, self.source),)


# ----------------------------------------------------------------- order: flip, roll, triangles
class Flip(Op):
    """x with its values in reverse order along ``dims`` (``torch.flip``, ``tf.reverse``).
    Backward flips the gradient back: each value's gradient returns to where it came from."""

    name = "flip"

    def __init__(self, dims):
        self.dims = dims

    def forward(self, xp, x):
        return xp.flip(x, self.dims)

    def backward(self, grad, out, x):
        return (apply(Flip(self.dims), grad),)


class Roll(Op):
    """x shifted by ``shifts`` places along ``dims``, the values pushed off one end coming
    back at the other (``torch.roll``, ``tf.roll``); no dims: over the flattened values.
    Backward rolls the gradient back by the opposite shifts."""

    name = "roll"

    def __init__(self, shifts, dims):
        self.shifts, self.dims = shifts, dims

    def forward(self, xp, x):
        return xp.roll(x, self.shifts, self.dims)

    def backward(self, grad, out, x):
        back = -self.shifts if isinstance(self.shifts, int) else tuple(-s for s in self.shifts)
        return (apply(Roll(back, self.dims), grad),)


class Tril(Op):
    """The lower triangle of the last two dimensions, on and below ``diagonal`` (above the
    main one for diagonal > 0), zeros elsewhere (``torch.tril``). Backward routes: the
    gradient passes where values were kept, the zeroed places get 0."""

    name, gate = "tril", "routes"

    def __init__(self, diagonal=0):
        self.diagonal = diagonal

    def forward(self, xp, x):
        return xp.tril(x, self.diagonal)

    def backward(self, grad, out, x):
        return (apply(type(self)(self.diagonal), grad),)


class Triu(Tril):
    """The upper triangle, on and above ``diagonal`` (``torch.triu``)."""

    name = "triu"

    def forward(self, xp, x):
        return xp.triu(x, self.diagonal)


class Diagonal(Op):
    """The elements ``x[..., i, i + offset, ...]`` of dimensions ``dim1`` and ``dim2``, as a
    last dimension (``torch.diagonal``). Backward routes each gradient back onto the diagonal
    (``DiagEmbed``), zeros elsewhere."""

    name, gate = "diagonal", "routes"

    def __init__(self, offset=0, dim1=0, dim2=1):
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2

    def forward(self, xp, x):
        return xp.diagonal(x, self.offset, self.dim1, self.dim2).copy()   # (numpy's is
                                                                            # read-only)
    def backward(self, grad, out, x):
        return (apply_shaped_like(DiagEmbed(self.offset, self.dim1, self.dim2), x, grad),)

    def explain_failure(self, shapes):
        return (f"diagonal(offset={self.offset}, dim1={self.dim1}, dim2={self.dim2}): a tensor "
                f"of shape {shapes[0]} needs two different dimensions dim1 and dim2 within "
                f"{-len(shapes[0])}..{len(shapes[0]) - 1} (a matrix: 0 and 1).")


class DiagEmbed(ShapedLike):
    """Zeros of a shape with the last dimension of ``x`` written along a diagonal of
    ``dim1`` and ``dim2``: the adjoint of Diagonal, and ``torch.diag`` of a vector."""

    name = "diag_embed"

    def __init__(self, offset=0, dim1=0, dim2=1, shape=None):
        super().__init__(shape)
        self.offset, self.dim1, self.dim2 = offset, dim1, dim2

    def forward(self, xp, x, *like):
        result = xp.zeros(like[0].shape if like else self.shape, dtype=x.dtype)
        places = xp.arange(x.shape[-1])
        rows, columns = places + max(-self.offset, 0), places + max(self.offset, 0)
        xp.moveaxis(result, (self.dim1, self.dim2), (-2, -1))[..., rows, columns] = x
        return result

    def backward(self, grad, out, x, *like):
        return (apply(Diagonal(self.offset, self.dim1, self.dim2), grad),) + (None,) * len(like)


# ----------------------------------------------------------------- PyTorch's picks along a dim
class TakeAlongDim(Op):
    """``torch.gather(x, dim, index)``: for each place of ``index``, the element of x at that
    place with its ``dim`` coordinate replaced by the index there (dim 1 of a matrix:
    ``out[i][j] = x[i][index[i][j]]``, one pick per row). Backward routes: each picked
    element gets its gradient back, added up where one was picked twice (``ScatterAlongDim``
    adding into zeros)."""

    name, gate = "take_along_dim", "routes"

    def __init__(self, dim):
        self.dim = dim

    def forward(self, xp, x, index):
        return x[_along_dim(xp, index, self.dim)]

    def backward(self, grad, out, x, index):
        return scatter_add(zeros_like(x, dtype=grad.dtype), self.dim, index, grad), None

    def explain_failure(self, shapes):
        return _along_dim_failure("gather", self.dim, shapes[0], shapes[1])


class ScatterAlongDim(Op):
    """``torch.scatter(x, dim, index, src)``: a copy of x with ``src``'s elements written where
    ``index`` points along ``dim`` (dim 1 of a matrix: ``out[i][index[i][j]] = src[i][j]``);
    ``src`` has index's shape or is one number. Backward routes: x's gradient is 0 where its
    values were overwritten, src's is the gradient at the places it was written to."""

    name, gate = "scatter", "routes"

    def __init__(self, dim):
        self.dim = dim

    def forward(self, xp, x, index, src):
        out = x.copy()
        self._write(xp, out, _along_dim(xp, index, self.dim), src)
        return out

    def _write(self, xp, out, places, src):
        out[places] = src

    def backward(self, grad, out, x, index, src):
        return (scatter(grad, self.dim, index, 0.0) if x.requires_grad else None, None,
                gather_along_dim(grad, self.dim, index) if src.requires_grad else None)

    def explain_failure(self, shapes):
        return _along_dim_failure(self.name, self.dim, shapes[0], shapes[1],
                                  f" and src of shape {shapes[2]}")


class ScatterAddAlongDim(ScatterAlongDim):
    """``torch.scatter_add``: ``src``'s elements added where ``index`` points (repeated places
    add up). Backward: x's gradient passes unchanged, src's is the gradient where it went."""

    name, gate = "scatter_add", "routes"

    def _write(self, xp, out, places, src):
        xp.add.at(out, places, src)

    def backward(self, grad, out, x, index, src):
        return grad, None, gather_along_dim(grad, self.dim, index) if src.requires_grad else None


def _along_dim(xp, index, dim):
    """The index arrays that pick, for each place of ``index``, that place with its ``dim``
    coordinate replaced by index's value (the other coordinates count up: broadcast aranges)."""
    if index.size and index.min() < 0:
        raise IndexError("negative index")
    ndim = index.ndim
    return tuple(index if d == dim else
                 xp.arange(n).reshape((1,) * d + (n,) + (1,) * (ndim - d - 1))
                 for d, n in enumerate(index.shape))


def _along_dim_failure(what, dim, shape, index_shape, more=""):
    return (f"{what} along dim {dim} of a tensor of shape {shape} with an index of shape "
            f"{index_shape}{more}: the index must have as many dimensions as the tensor, be no "
            f"larger in the other dimensions, and hold integers in [0, {shape[dim]}) "
            "(no negative ones counting from the end).")


class ArgSort(Op):
    """The indices that sort x along ``dim`` (ascending, or ``descending``), ties kept in
    their order (a stable sort). No gradient: the indices are integers; ``sort`` and
    ``topk`` pick the values with them (``TakeAlongDim``), and the gradient goes back
    through that pick."""

    name, differentiable = "argsort", False

    def __init__(self, dim=-1, descending=False):
        self.dim, self.descending = dim, descending

    def forward(self, xp, x):
        if self.descending:
            x = -(x.astype(xp.int64) if x.dtype.kind in "ub" else x)
        return xp.argsort(x, axis=self.dim, kind="stable")

    def explain_failure(self, shapes):
        from .reduce import axis_failure        # (reduce.py imports this file)
        return axis_failure(self.name, self.dim, shapes[0])


SortResult = collections.namedtuple("SortResult", ["values", "indices"])


def _check_integer(op_name, indices):
    dtype = getattr(indices, "dtype", None)
    if dtype is not None and dtype.kind not in "iu":
        raise TypeError(f"{op_name}: indices must be integers, got {dtype}. "
                        "Cast them first, e.g. eg.cast(indices, eg.int64).")


def _floats_in(index):
    """What to do about the first float in ``index`` (a number, a slice bound, or float
    indices), or None if it has none."""
    for part in index if isinstance(index, tuple) else (index,):
        for number in (part.start, part.stop, part.step) if isinstance(part, slice) else (part,):
            if isinstance(number, (float, np.floating)):
                example = "x[:int(len(x) * 0.8)]" if isinstance(part, slice) else "x[int(i)]"
                return (f"{float(number)!r} is a float; indices and slice bounds must be "
                        f"integers: int(...) or //, e.g. {example}.")
            if getattr(getattr(number, "dtype", None), "kind", None) == "f":
                return (f"the indices are {number.dtype} values; they must be integers (or "
                        "booleans): idx.long().")
    return None


def _is_basic(index):
    parts = index if isinstance(index, tuple) else (index,)
    return all(p is None or p is Ellipsis or isinstance(p, (int, slice, np.integer))
               for p in parts)


def device_index(index, device):
    """Index parts as arrays on ``device``: tensors give their arrays (copied over from another
    device: PyTorch takes CPU indices for a GPU tensor too), lists are copied over."""
    if isinstance(index, tuple):
        return tuple(device_index(i, device) for i in index)
    if isinstance(index, Tensor):
        if index.graph is not None:
            raise ShapeError("Indexing with a symbolic tensor is not supported; use "
                             "eg.gather(params, indices) in graphs.")
        return index._value if index.device is device else device.put(index.numpy())
    if isinstance(index, (list, np.ndarray)):
        return device.put(np.asarray(index))
    return index


# ----------------------------------------------------------------------------- functions
def reshape(x, shape, name=None):
    """x in ``shape``; one size may be -1 (inferred). In a graph the shape may be a tensor,
    ``eg.reshape(x, [eg.shape(x)[0], 3, 1])``, read when the graph runs."""
    sizes, shape_input = shape_operand(shape, "reshape")
    if sizes is None or any(n is not None and n < -1 for n in sizes) or sizes.count(-1) > 1:
        raise ShapeError(f"reshape into {shape}: sizes must be whole numbers, 0 or more, "
                         "except one that may be -1 (inferred from the others).")
    return apply(Reshape(sizes), x, *shape_input, name=name)


def flatten(x, start_dim=0, end_dim=-1, name=None):
    """Dimensions ``start_dim`` to ``end_dim`` merged into one (``torch.flatten``):
    ``flatten(x, 1)`` makes each example of a batch one vector."""
    x = as_tensor(x)
    flattened_shape(x.shape, start_dim, end_dim, "flatten")       # (checks the dimensions)
    return apply(Flatten(start_dim, end_dim), x, name=name)


def flattened_shape(shape, start_dim, end_dim, where):
    """``shape`` with dimensions ``start_dim``..``end_dim`` merged (None where unknown)."""
    ndim = max(len(shape), 1)                       # (a scalar flattens to shape (1,))
    start, end = (d + ndim if isinstance(d, int) and d < 0 else d for d in (start_dim, end_dim))
    if not all(isinstance(d, int) and 0 <= d < ndim for d in (start, end)) or start > end:
        raise ShapeError(f"{where}(start_dim={start_dim}, end_dim={end_dim}): a tensor of shape "
                         f"{tuple(shape)} has dimensions {-ndim}..{ndim - 1}, and start_dim "
                         "must not come after end_dim.")
    merged = shape[start:end + 1] or (1,)
    size = None if None in merged else math.prod(merged)
    return tuple(shape[:start]) + (size,) + tuple(shape[end + 1:])


def reshape_like(x, like, name=None):
    if x.shape == like.shape and None not in like.shape:
        return x
    if None not in like.shape:
        return apply(Reshape(tuple(like.shape)), x, name=name)
    return apply(ReshapeLike(), x, like, name=name)


def transpose(x, perm=None, name=None):
    """Permute dimensions (TF's ``tf.transpose(x, perm)``; reverses them when perm is None).
    ``eg.transpose(x, 0, 1)`` swaps two of them, as ``torch.transpose(x, dim0, dim1)``."""
    if isinstance(perm, numbers.Integral):
        if not isinstance(name, numbers.Integral):
            raise TypeError(f"transpose(x, {perm!r}, ...): TF's perm lists every axis "
                            "(transpose(x, [1, 0])); PyTorch's transpose(x, dim0, dim1) names "
                            "the two axes to swap.")
        return x.transpose(perm, name)
    return apply(Transpose(perm), x, name=name)


def permute(x, dims, name=None):
    return transpose(x, dims, name=name)


def broadcast_to(x, shape, name=None):
    sizes, shape_input = shape_operand(shape, "broadcast_to")
    if sizes is None or any(n is not None and n < 0 for n in sizes):
        raise ShapeError(f"broadcast_to {shape!r}: the target shape must be whole numbers, "
                         "0 or more (a tuple such as (4, 2, 3), or one size).")
    return apply(BroadcastTo(sizes), x, *shape_input, name=name)


def expand_dims(x, axis, name=None):
    return apply(ExpandDims(axis), x, name=name)


unsqueeze = expand_dims


def squeeze(x, axis=None, name=None):
    return apply(Squeeze(axis), x, name=name)


def concat(values, axis=0, name=None):
    """Join tensors along an existing axis (``tf.concat`` / ``torch.cat``): a list of them."""
    _check_joinable("concat", values, axis)
    if isinstance(values, Tensor):      # one tensor: nothing to join (TF)
        values = [values]
    return apply(Concat(axis), *values, name=name)


cat = concat


def stack(values, axis=0, name=None):
    """Join tensors of one shape along a new axis (``tf.stack`` / ``torch.stack``)."""
    _check_joinable("stack", values, axis)
    return apply(Stack(axis), *values, name=name)


def _check_joinable(what, values, axis):
    """``concat(a, b)`` for ``concat([a, b])`` (b then lands in ``axis``), or nothing to join."""
    if not isinstance(axis, numbers.Integral) or isinstance(axis, bool):
        raise TypeError(f"{what}: axis must be an int, got {type(axis).__name__}. The tensors "
                        f"go in one list: eg.{what}([a, b], axis=0).")
    if not isinstance(values, Tensor) and len(values) == 0:
        raise ValueError(f"{what} needs at least one tensor, got an empty list.")


def getitem(x, index, name=None):
    """``x[index]``; backward adds the gradient back at the picked places (scatter-add). In a
    graph a scalar integer tensor picks a row when the graph runs (``x[i]`` in a loop). An
    index that mixes ints with index arrays is read as PyTorch reads it (``torch_steps``)."""
    if isinstance(index, Tensor) and index.graph is not None and index.shape == () and \
            index.dtype.kind in "iu":
        return gather(x, index, name=name)
    index = device_index(index, x.device)
    steps = torch_steps(index)
    if steps is not None:
        ints, rest = steps
        return apply(GetItem(rest), apply(GetItem(ints), x), name=name)
    return apply(GetItem(index), x, name=name)


def torch_steps(index):
    """PyTorch's reading of an index where ints and index arrays are separated by a slice,
    as ``x[1, :, 3:11:2, d, 0:2]``, as two steps: the ints first (``x[1, ...]``), then the
    rest (``[:, 3:11:2, d, 0:2]``). numpy counts an int among the index arrays, and index
    arrays that are not side by side put their dimensions first: shape (2, 4, 4, 2) where
    PyTorch, for which an int is plain indexing, keeps d's dimension in place: (4, 4, 2, 2).
    None for every other index, which numpy and PyTorch read alike."""
    if index.__class__ is not tuple or len(index) < 3:     # (needs an int, a slice, an array)
        return None
    kinds = [_index_kind(part) for part in index]
    advanced = [i for i, kind in enumerate(kinds) if kind in ("int", "array")]
    if "int" not in kinds or "array" not in kinds or \
            advanced[-1] - advanced[0] == len(advanced) - 1:      # side by side: numpy agrees
        return None
    ints, rest = [], []
    for part, kind in zip(index, kinds):
        if kind == "int":
            ints.append(part)
            continue
        if part is not None:                # (each other part keeps its dimensions at first)
            ints.extend([part] if part is Ellipsis else [slice(None)] * _dims_taken(part))
        rest.append(part)
    return tuple(ints), tuple(rest)


def _index_kind(part):
    if isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)):
        return "int"
    return "array" if is_array(part) and part.ndim > 0 else "other"


def _dims_taken(part):
    """How many of x's dimensions an index part stands for: a boolean mask all of its own."""
    return part.ndim if is_array(part) and part.dtype.kind == "b" else 1


def index_put(x, index, value, name=None):
    """``x`` with ``value`` written at ``index``, as a new tensor: the recorded form of
    ``x[index] = value`` (``Tensor.__setitem__``). ``value`` takes x's dtype, as in PyTorch."""
    from .math import cast
    value = value if isinstance(value, Tensor) else as_tensors((value, x))[0]
    if value.dtype != x.dtype:
        value = cast(value, x.dtype)
    return apply(IndexPut(device_index(index, x.device)), x, value, name=name)


def gather(params, indices=None, axis=0, name=None, *, dim=None, index=None):
    """``tf.gather``: rows of ``params`` at ``indices``; backward scatter-adds into those rows.
    PyTorch's ``torch.gather(input, dim, index)`` (an int, then a tensor of indices; or
    ``dim=``, ``index=``) picks one element per place of ``index``: ``gather_along_dim``."""
    if dim is not None or index is not None or (
            isinstance(indices, numbers.Integral) and isinstance(axis, (Tensor, np.ndarray))):
        return gather_along_dim(params, indices if dim is None else dim,
                                axis if index is None else index, name=name)
    params = as_tensor(params)
    if not isinstance(indices, Tensor):     # [0, 2]: integers of their own, not params' floats
        indices = tensor(indices, device=params.device)
    _check_integer("gather", indices)
    return apply(Gather(axis), params, indices, name=name)


def one_hot(indices, depth, dtype="float32", name=None):
    _check_integer("one_hot", indices)
    if depth < 0:
        raise ValueError(f"one_hot: depth must be 0 or more (the number of classes), got {depth}.")
    return apply(OneHot(depth, as_dtype(dtype)), indices, name=name)


def copy_to(x, device, name=None):
    if x.device is device:
        return x
    return apply(CopyTo(x.device, device), x, name=name)


def identity(x, name=None):
    return apply(Identity(), x, name=name)


def clone(x, name=None):
    return apply(Clone(), x, name=name)


def stop_gradient(x, name=None):
    """``x``'s values as a constant for backprop (``tf.stop_gradient``; PyTorch's ``detach``
    eagerly shares the array the same way)."""
    return apply(StopGradient(), x, name=name)


# ----------------------------------------------------------------- order and picks: functions
def _dims(dims, x, what):
    """``dims`` (one or several) as non-negative ints, each a different dimension of x."""
    dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
    n = len(x.shape)
    if not all(isinstance(d, numbers.Integral) and -n <= d < n for d in dims) or \
            len({d % n for d in dims}) < len(dims):
        raise ShapeError(f"{what}: dims {dims} must name different dimensions of a tensor of "
                         f"shape {tuple(x.shape)}, each in {-n}..{n - 1}.")
    return tuple(int(d) % n for d in dims)


def flip(x, dims, name=None):
    """x with its values in reverse order along each of ``dims`` (``torch.flip(x, dims)``)."""
    x = as_tensor(x)
    return apply(Flip(_dims(dims, x, "flip")), x, name=name)


def reverse(tensor, axis, name=None):
    """``tf.reverse(tensor, axis)``: ``flip``."""
    return flip(tensor, axis, name=name)


@accepting_aliases(shift="shifts", axis="dims")         # (tf.roll(input, shift, axis))
def roll(x, shifts, dims=None, name=None):
    """x shifted by ``shifts`` places along ``dims``, what falls off one end coming back at
    the other (``torch.roll``, ``tf.roll``); without dims, over the flattened values (the
    shape is kept). Several shifts go with as many dims: ``roll(x, (1, -2), (0, 1))``."""
    x = as_tensor(x)
    several = not isinstance(shifts, numbers.Integral)
    shifts = tuple(int(s) for s in shifts) if several else int(shifts)
    if dims is not None:
        dims = (dims,) if isinstance(dims, numbers.Integral) else tuple(dims)
        _dims(sorted(set(dims)), x, "roll")             # (a dim may be rolled twice)
        dims = tuple(int(d) for d in dims)
    if (dims is None and several) or (dims is not None and
                                      (len(shifts) if several else 1) != len(dims)):
        raise ValueError(f"roll: shifts {shifts} and dims {dims} must come in pairs: one "
                         "shift per dimension (without dims, one shift of the flattened "
                         "values).")
    if not several and dims is not None:
        dims = dims[0]
    return apply(Roll(shifts, dims), x, name=name)


def _matrices(x, what):
    x = as_tensor(x)
    if len(x.shape) < 2:
        raise ShapeError(f"{what} works on matrices (the last two dimensions), but the input "
                         f"has shape {tuple(x.shape)}. For a vector on a diagonal use "
                         "eg.diag(v).")
    return x


def tril(x, diagonal=0, name=None):
    """The lower triangle of x's last two dimensions, on and below ``diagonal`` (0: the main
    diagonal, 1 one above it), zeros above: ``eg.tril(eg.ones(n, n))`` is a causal mask."""
    return apply(Tril(int(diagonal)), _matrices(x, "tril"), name=name)


def triu(x, diagonal=0, name=None):
    """The upper triangle of x's last two dimensions, on and above ``diagonal``."""
    return apply(Triu(int(diagonal)), _matrices(x, "triu"), name=name)


def diagonal(x, offset=0, dim1=0, dim2=1, name=None):
    """The diagonal of dimensions ``dim1`` and ``dim2`` (``offset`` above it, or below for a
    negative one), as the last dimension (``torch.diagonal``)."""
    x = as_tensor(x)
    dim1, dim2 = _dims((dim1, dim2), x, "diagonal")
    return apply(Diagonal(int(offset), dim1, dim2), x, name=name)


def diag(x, diagonal=0, name=None):
    """``torch.diag``: a vector's values on the diagonal of a square matrix of zeros (the
    ``diagonal``-th one); a matrix's diagonal as a vector."""
    x = as_tensor(x)
    if len(x.shape) == 1 and x.shape[0] is not None:
        size = x.shape[0] + abs(int(diagonal))
        return apply(DiagEmbed(int(diagonal), 0, 1, (size, size)), x, name=name)
    if len(x.shape) != 2:
        raise ShapeError(f"diag takes a vector (to put on a diagonal) or a matrix (whose "
                         f"diagonal to take), got shape {tuple(x.shape)}; for more dimensions "
                         "use eg.diagonal(x, offset, dim1, dim2).")
    return apply(Diagonal(int(diagonal), 0, 1), x, name=name)


def _whole_numbers(sizes, what):
    sizes = (sizes,) if isinstance(sizes, numbers.Integral) else tuple(sizes)
    if not all(isinstance(n, numbers.Integral) and n >= 0 for n in sizes):
        raise ValueError(f"{what}: the numbers of copies must be whole numbers, 0 or more, "
                         f"got {sizes}.")
    return tuple(int(n) for n in sizes)


def tile(x, multiples, name=None):
    """x repeated ``multiples[i]`` times along each dimension i (``tf.tile``, ``torch.tile``;
    PyTorch's ``x.repeat(2, 3)``): ``[a, b]`` tiled 2 times is ``[a, b, a, b]``. Fewer
    multiples than dimensions repeat the last ones; more add dimensions in front. It is a
    broadcast between two reshapes, so its backward is broadcast_to's: the copies' gradients
    add up."""
    x = as_tensor(x)
    reps = _whole_numbers(multiples, "tile")
    shape = tuple(x.shape)
    n = max(len(reps), len(shape))
    reps, shape = (1,) * (n - len(reps)) + reps, (1,) * (n - len(shape)) + shape
    if None in shape:
        raise ShapeError(f"tile: the input's shape {shape} must be known (a placeholder: give "
                         "it its sizes).")
    spread = reshape(x, tuple(v for size in shape for v in (1, size)))
    copies = broadcast_to(spread, tuple(v for pair in zip(reps, shape) for v in pair))
    return reshape(copies, tuple(r * size for r, size in zip(reps, shape)), name=name)


@accepting_aliases(axis="dim")                         # (tf.repeat(input, repeats, axis))
def repeat_interleave(x, repeats, dim=None, name=None, *, output_size=None):
    """Each element repeated ``repeats`` times in place along ``dim`` (``torch.repeat_interleave``,
    TF's ``tf.repeat``): ``[a, b]`` twice is ``[a, a, b, b]``; ``repeats`` may give each
    element its own count. Without dim, over the flattened values. It is a gather of the
    indices ``[0, 0, 1, 1]``, so its backward is gather's: the copies' gradients add up."""
    x = as_tensor(x)
    if dim is None:
        x, dim = reshape(x, (-1,)), 0
    (dim,) = _dims(dim, x, "repeat_interleave")
    size = x.shape[dim]
    counts = np.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)
    if counts.ndim == 0:
        counts = np.full(size, counts)
    if counts.dtype.kind not in "iu" or counts.shape != (size,) or (counts < 0).any():
        raise ValueError(f"repeat_interleave: repeats must be one whole number, 0 or more, or "
                         f"one for each of the {size} elements along dim {dim}; got "
                         f"{repeats!r}.")
    index = np.repeat(np.arange(size), counts)
    if output_size is not None and output_size != len(index):
        raise ValueError(f"repeat_interleave: output_size={output_size}, but the repeats "
                         f"make {len(index)}.")
    return gather(x, tensor(index, device=x.device), axis=dim, name=name)


def argsort(x, dim=-1, descending=False, name=None, *, stable=False, axis=None,
            direction=None):
    """The indices that sort x along ``dim`` (``torch.argsort``; TF's ``tf.argsort(values,
    axis, direction="DESCENDING")``). Ties keep their order: the sort is always stable."""
    x = as_tensor(x)
    dim = dim if axis is None else axis
    if direction is not None:
        if direction not in ("ASCENDING", "DESCENDING"):
            raise ValueError(f"argsort: direction must be 'ASCENDING' or 'DESCENDING', got "
                             f"{direction!r}.")
        descending = direction == "DESCENDING"
    return apply(ArgSort(int(dim), bool(descending)), x, name=name)


def sort(x, dim=-1, descending=False, name=None, *, stable=False):
    """``torch.sort``: ``(values, indices)``, x's values sorted along ``dim`` and where each
    came from. The values are x picked at those indices (``gather_along_dim``), so their
    gradient goes back to the places they came from."""
    indices = argsort(x, dim, descending)
    return SortResult(gather_along_dim(x, dim, indices, name=name), indices)


def topk(x, k, dim=-1, largest=True, sorted=True, name=None):
    """``torch.topk``: ``(values, indices)`` of the ``k`` largest values along ``dim`` (the
    smallest with ``largest=False``), largest first; ``tf.math.top_k(x, k)`` along the last
    dimension. Backward routes each value's gradient to the place it came from."""
    x = as_tensor(x)
    (dim,) = _dims(dim, x, "topk")
    size = x.shape[dim]
    if not isinstance(k, numbers.Integral) or not 0 <= k <= (size if size is not None else k):
        raise ValueError(f"topk: k must be a whole number from 0 to the size of dim {dim}, "
                         f"{size} (shape {tuple(x.shape)}), got {k!r}.")
    indices = argsort(x, dim, largest)[(slice(None),) * dim + (slice(0, int(k)),)]
    return SortResult(gather_along_dim(x, dim, indices, name=name), indices)


def _index_along(x, dim, index, what):
    """(x, dim as a non-negative int, index as an integer tensor of x's rank), checked."""
    x = as_tensor(x)
    if not isinstance(index, Tensor):
        index = tensor(index, device=x.device)
    _check_integer(what, index)
    if len(index.shape) != len(x.shape):
        raise ShapeError(f"{what}: the index (shape {tuple(index.shape)}) must have as many "
                         f"dimensions as the input (shape {tuple(x.shape)}): one index per "
                         "element picked, e.g. index.unsqueeze(1) for one per row.")
    (dim,) = _dims(dim, x, what)
    return x, dim, index


def gather_along_dim(x, dim, index, name=None):
    """PyTorch's ``torch.gather(x, dim, index)`` / ``x.gather(dim, index)``: the elements of x
    that ``index`` points at along ``dim``, shaped like ``index``; ``q.gather(1,
    actions.unsqueeze(1))`` picks one entry per row. (``eg.gather(params, indices, axis)`` is
    TF's, which picks whole rows; it hands PyTorch's argument order on to this.)"""
    x, dim, index = _index_along(x, dim, index, "gather")
    return apply(TakeAlongDim(dim), x, index, name=name)


def _source(x, index, src, what):
    """``src`` as a tensor of x's dtype: one number, or index's shape (a larger src's first
    elements are used, as in PyTorch: cut by a slice, whose backward pads with zeros)."""
    from .math import cast
    if not isinstance(src, Tensor):
        return as_tensors((src, x))[0] if np.ndim(src) == 0 else cast(tensor(src), x.dtype)
    src = cast(src, x.dtype)
    if src.shape and tuple(src.shape) != tuple(index.shape):
        if len(src.shape) != len(index.shape) or \
                any(s < i for s, i in zip(src.shape, index.shape)):
            raise ShapeError(f"{what}: src of shape {tuple(src.shape)} must be at least as "
                             f"large as the index, of shape {tuple(index.shape)}, in every "
                             "dimension (or one number).")
        src = src[tuple(slice(0, n) for n in index.shape)]
    return src


def scatter(x, dim, index, src=None, name=None, *, value=None, reduce=None):
    """PyTorch's ``torch.scatter(x, dim, index, src)`` / ``x.scatter(dim, index, src)``: a copy
    of x with src's elements written where ``index`` points along ``dim`` (``value=`` writes
    one number); ``reduce="add"`` adds them instead (``scatter_add``)."""
    if (src is None) == (value is None):
        raise TypeError("scatter: give the values to write once, as src (a tensor) or value "
                        "(one number).")
    if reduce not in (None, "add"):
        raise NotImplementedError(f"scatter: reduce={reduce!r} is left out; reduce='add' "
                                  "(scatter_add) is there.")
    x, dim, index = _index_along(x, dim, index, "scatter")
    src = _source(x, index, value if src is None else src, "scatter")
    op = ScatterAlongDim(dim) if reduce is None else ScatterAddAlongDim(dim)
    return apply(op, x, index, src, name=name)


def scatter_add(x, dim, index, src, name=None):
    """PyTorch's ``torch.scatter_add``: x with src's elements added where ``index`` points
    along ``dim``; places pointed at twice get both."""
    return scatter(x, dim, index, src, name=name, reduce="add")


def masked_fill(x, mask, value, name=None):
    """PyTorch's ``x.masked_fill(mask, value)``: ``value`` where the boolean ``mask`` holds,
    x elsewhere. It is ``eg.where(mask, value, x)``."""
    from .math import where
    return where(mask, value, x, name=name)


def masked_select(x, mask, name=None):
    """PyTorch's ``torch.masked_select``: the elements of x where ``mask`` holds, as a vector
    (x and the mask broadcast to one shape first). It is ``x[mask]``."""
    x = as_tensor(x)
    mask = mask.numpy() if isinstance(mask, Tensor) else np.asarray(mask)
    if mask.dtype.kind != "b":
        raise TypeError(f"masked_select: the mask must be boolean, not {mask.dtype}; compare "
                        "first, e.g. x > 0.")
    shape = np.broadcast_shapes(tuple(x.shape), mask.shape)
    if tuple(x.shape) != shape:
        x = broadcast_to(x, shape)
    return getitem(x, np.broadcast_to(mask, shape), name=name)
