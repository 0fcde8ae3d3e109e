"""Numbers about sizes, computed when the graph runs: ``eg.range`` and ``eg.shape`` (TF's).

Eagerly ``eg.range(5)`` is just the numbers. In a graph (a TF1 graph or a traced function) it
is a ``Range`` node whose start, limit and step are its inputs, so the limit may be a tensor
whose value comes when the graph runs (``eg.range(n)`` for an argument ``n``), and
``for i in eg.range(n):`` can become a graph loop that counts without making the list
(AutoGraph reads the node's inputs). ``eg.shape(x)`` is x's shape as an int32 tensor, known
only when the graph runs where the static shape has ``None`` in it.
"""
import numpy as np

from .. import context
from ..tensor import Tensor, as_dtype, float32, int32
from .base import Op, apply
from .random import range_ as _eager_range


class Range(Op):
    """``start, start + delta, ...`` up to ``limit`` (excluded)."""

    name, differentiable, type_name = "range", False, "Range"

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, xp, start, limit, delta):
        if delta == 0:
            raise ValueError("eg.range: the step (delta) must not be 0.")
        return xp.arange(start, limit, delta).astype(self.dtype)

    def static_shape(self, start, limit, delta):
        from ..graph.shapes import TensorShape
        values = [_constant_value(t) for t in (start, limit, delta)]
        if any(v is None for v in values) or values[2] == 0:
            return TensorShape([None]), self.dtype
        return TensorShape([len(np.arange(*values))]), self.dtype


class Shape(Op):
    """The input's shape, as a vector of ints."""

    name, differentiable, type_name = "shape", False, "Shape"

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, xp, x):
        return xp.asarray(x.shape, dtype=self.dtype)

    def static_shape(self, x):
        from ..graph.shapes import TensorShape
        return TensorShape([len(x.shape) if x.shape.rank_known else None]), self.dtype


def _constant_value(t):
    op = getattr(t, "op", None)
    return op.eg_op.value.item() if op is not None and op.type == "Const" else None


def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """TF's ``tf.range(5)`` → [0 1 2 3 4]: int32 for whole numbers as in TF, else float32.
    ``start``, ``limit`` and ``delta`` may be tensors; in a graph the result is a ``Range``
    node (see the module docstring)."""
    if limit is None:
        start, limit = 0, start
    values = (start, limit, delta)
    in_graph = context.state.graph is not None or any(
        isinstance(v, Tensor) and v.graph is not None for v in values)
    if not in_graph:
        start, limit, delta = (v.item() if isinstance(v, Tensor) else v for v in values)
        return _eager_range(start, limit, delta, dtype, name)
    if dtype is None:
        floating = any(np.asarray(v).dtype.kind == "f" if not isinstance(v, Tensor)
                       else v.dtype.kind == "f" for v in values)
        dtype = float32 if floating else int32
    dtype = as_dtype(dtype)
    from .math import cast
    inputs = [cast(v, dtype) if isinstance(v, Tensor) and v.dtype != dtype
              else v if isinstance(v, Tensor) else np.asarray(v, dtype) for v in values]
    return apply(Range(dtype), *inputs, name=name)


def shape(input, out_type=int32, name=None):  # noqa: A002  (TF's argument name)
    """``tf.shape(x)``: x's shape as a tensor (int32), e.g. ``eg.shape(x)[0]`` for the batch
    size of a placeholder of shape (None, 3) when the graph runs."""
    return apply(Shape(as_dtype(out_type)), input, name=name)
