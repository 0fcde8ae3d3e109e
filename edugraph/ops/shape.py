"""Ops that move values around without changing them: reshape, transpose, indexing, joining.

Their backward passes move the gradient back to where each value came from.
"""
import math
import numbers

import numpy as np

from .base import (Op, ShapedLike, TakesShape, apply, apply_shaped_like, as_tensor,
                   as_tensors, broadcast_array, shape_operand, sum_to_shape)
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


def gather(params, indices, axis=0, name=None):
    """``tf.gather``: rows of ``params`` at ``indices``; backward scatter-adds into those rows."""
    params = as_tensor(params)
    if not isinstance(indices, Tensor):     # [0, 2]: integers of their own, not params' floats
        if isinstance(axis, Tensor):        # (torch.gather's order: input, dim, index)
            raise TypeError(_torch_gather_message(params, indices, axis))
        indices = tensor(indices, device=params.device)
    _check_integer("gather", indices)
    return apply(Gather(axis), params, indices, name=name)


def _torch_gather_message(params, dim, index):
    n = params.shape[0] if params.shape else "n"
    return (f"gather(x, {dim!r}, <indices of shape {tuple(index.shape)}>): eg.gather is "
            "tf.gather(params, indices, axis), with an int axis; it picks whole rows (or "
            "slices along axis). torch.gather(input, dim, index)'s pick of one entry per row "
            f"is indexing here: x[eg.arange({n}), index.view(-1)] (then .unsqueeze(1) for "
            f"shape ({n}, 1)).")


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
