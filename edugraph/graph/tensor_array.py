"""``eg.TensorArray``: a list of tensors written one at a time, then stacked (TF's).

A graph loop's variables keep their shapes from step to step, so a loop cannot append to a
tensor; it writes each step's result into a TensorArray and stacks them after the loop::

    states = eg.TensorArray(eg.float32, size=n)
    for i in eg.range(n):                    # a graph loop (AutoGraph)
        states = states.write(i, step(i))
    result = states.stack()                  # (n, ...)

Eagerly it is a Python list of tensors: ``write`` changes it and returns it (as TF's eager
one), and ``stack`` is ``eg.stack``, recorded for gradients like any op.

In a graph it is a single value that ops pass along, as TF2's ``TensorList``: a node's output
whose value, when the graph runs, is a Python tuple of arrays (None for a slot not yet
written). ``write`` builds a new node and returns a new TensorArray (assign it: ``ta =
ta.write(i, x)``), so a loop can carry it as one of its variables. The ops have gradients
(a read sends its gradient to its slot, a write takes its slot's), except through a loop or
a cond that carries the list, where edugraph refuses (TF differentiates those too).
"""
import numpy as np

from .. import context
from ..errors import InvalidArgumentError
from ..ops.base import Op
from ..tensor import Tensor, as_dtype, int32, tensor
from .control_flow import TupleTensor
from .core import SymbolicTensor, constant
from .function import _graph_tensor
from .shapes import UNKNOWN, TensorShape

__all__ = ["TensorArray"]


class TensorArray:
    """``eg.TensorArray(dtype, size=0, dynamic_size=False, element_shape=None)``. TF's other
    arguments (``clear_after_read``, ``infer_shape``...) are accepted and change nothing."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self.dtype = as_dtype(dtype)
        self.dynamic_size = bool(dynamic_size)
        self.element_shape = UNKNOWN if element_shape is None else TensorShape(element_shape)
        graph = context.state.graph
        self._handle = None
        if handle is not None:                  # (a TensorArray made from a loop's value)
            self._handle = handle
        elif graph is not None or isinstance(size, SymbolicTensor):
            size = 0 if size is None else size
            self._handle = _list_op(ListReserve(), [_as_graph(size, int32)], self.dtype)
        else:
            n = 0 if size is None else int(size)
            self._items = [None] * n

    @property
    def handle(self):
        """The graph value holding the list (None eagerly)."""
        return self._handle

    def _like(self, handle, element_shape=None):
        return TensorArray(self.dtype, dynamic_size=self.dynamic_size, handle=handle,
                           element_shape=self.element_shape if element_shape is None
                           else element_shape)

    # --------------------------------------------------------------- writing
    def write(self, index, value, name=None):
        """Slot ``index`` = ``value``. Eagerly: changes this array and returns it; in a
        graph: returns a new TensorArray, so write ``ta = ta.write(i, x)``."""
        value = self._checked(value)
        if self._handle is None:
            i = _eager_index(index)
            if i >= len(self._items):
                if not self.dynamic_size:
                    raise IndexError(_out_of_range(i, len(self._items)))
                self._items += [None] * (i + 1 - len(self._items))
            self._items[i] = value
            self.element_shape = TensorShape(value.shape)
            return self
        handle = _list_op(ListSetItem(self.dynamic_size), [self._handle, _as_graph(index, None),
                                                           value], self.dtype)
        return self._like(handle, TensorShape(value.shape))

    def unstack(self, value, name=None):
        """Slot i = ``value[i]``, for each row of ``value``."""
        value = self._checked(value)
        if self._handle is None:
            self._items = [value[i] for i in range(value.shape[0])]
            self.element_shape = TensorShape(value.shape[1:])
            return self
        return self._like(_list_op(ListFromTensor(), [value], self.dtype),
                          TensorShape(value.shape[1:]) if value.shape.rank_known else None)

    def _checked(self, value):
        if self._handle is not None:
            value = _as_graph(value, self.dtype)
        elif not isinstance(value, Tensor):
            value = tensor(value, dtype=self.dtype)
        if value.dtype != self.dtype:
            raise TypeError(f"TensorArray of {self.dtype}: cannot write a {value.dtype} tensor; "
                            f"cast it first, e.g. eg.cast(x, eg.{self.dtype}).")
        return value

    # --------------------------------------------------------------- reading
    def read(self, index, name=None):
        """The tensor in slot ``index``."""
        if self._handle is None:
            i = _eager_index(index)
            if i >= len(self._items):
                raise IndexError(_out_of_range(i, len(self._items)))
            if self._items[i] is None:
                raise ValueError(_unwritten(i))
            return self._items[i]
        return _value_op(ListGetItem(), [self._handle, _as_graph(index, None)],
                         self.element_shape, self.dtype)

    def stack(self, name=None):
        """All slots stacked along a new first axis: shape (size, *element_shape)."""
        if self._handle is None:
            missing = [i for i, t in enumerate(self._items) if t is None]
            if missing:
                raise ValueError(_unwritten(missing[0]))
            if not self._items:
                return tensor(np.zeros((0,) + _known(self.element_shape), self.dtype))
            from ..ops.shape import stack
            return stack(self._items)
        shape = TensorShape((None,) + tuple(self.element_shape)) \
            if self.element_shape.rank_known else UNKNOWN
        op = ListStack(None if not self.element_shape.is_fully_defined()
                       else tuple(self.element_shape))
        return _value_op(op, [self._handle], shape, self.dtype)

    def size(self, name=None):
        """The number of slots, an int32 tensor."""
        if self._handle is None:
            return tensor(len(self._items), dtype=int32)
        return _value_op(ListLength(), [self._handle], (), np.dtype(int32))

    def close(self, name=None):
        """(TF's; nothing to release here.)"""

    def __repr__(self):
        where = f"graph value {self._handle.name}" if self._handle is not None else \
            f"{len(self._items)} slots"
        return f"<eg.TensorArray {self.dtype}, {where}>"


# ----------------------------------------------------------------------------- in control flow
def carried(value):
    """``value`` as a graph cond or loop node carries it: the node's inputs and outputs are
    tensors, so a TensorArray travels as its list tensor (``handle``); others as they are."""
    if isinstance(value, TensorArray):
        if value.handle is None:
            raise TypeError("An eager eg.TensorArray cannot be carried by a graph loop or "
                            "cond: make it inside the traced function (or the graph).")
        return value.handle
    return value


def uncarried(template, value, leaf=lambda template, value: value):
    """The inverse of ``carried`` over a structure: where ``template`` holds a TensorArray (the
    value given to the node, or what the body returned: it knows the element shape), the
    list tensor in ``value`` becomes a TensorArray again. ``leaf(template, value)`` gives the
    other leaves (AutoGraph keeps its Undefined names there)."""
    if isinstance(template, TensorArray):
        return template._like(value)
    if isinstance(template, (list, tuple, dict)) and not isinstance(value, SymbolicTensor):
        if isinstance(template, dict):
            return {k: uncarried(template[k], value[k], leaf) for k in template}
        parts = [uncarried(t, v, leaf) for t, v in zip(template, value)]
        return type(template)(*parts) if hasattr(template, "_fields") else \
            type(template)(parts)
    return leaf(template, value)


def _known(shape):
    if not shape.is_fully_defined():
        raise ValueError("Stacking an empty TensorArray needs its element_shape: "
                         "eg.TensorArray(dtype, size=0, element_shape=(...)).")
    return tuple(shape)


def _eager_index(index):
    return int(index.item()) if isinstance(index, Tensor) else int(index)


def _out_of_range(i, n):
    return (f"TensorArray index {i} is out of range for its size {n}; make it with "
            "dynamic_size=True to let it grow.")


def _unwritten(i):
    return (f"Could not read from TensorArray index {i} because it has not yet been written "
            "to (as in TF). Write every slot before reading or stacking.")


def _as_graph(value, dtype):
    """``value`` as a tensor of the graph being built (a number: a constant)."""
    graph = context.state.graph
    if isinstance(value, Tensor):
        return value if graph is None else _graph_tensor(graph, value)
    return constant(value, dtype=dtype)


def _graph_of(inputs):
    graph = context.state.graph
    if graph is None:
        graph = next(t.graph for t in inputs if isinstance(t, SymbolicTensor))
    return graph


def _list_op(op, inputs, dtype):
    """A node whose value is the list (a tuple of arrays)."""
    out = _graph_of(inputs).add_operation(op, inputs, (), np.dtype(object), op.type_name)
    out.requires_grad = dtype.kind == "f"
    return out


def _value_op(op, inputs, shape, dtype):
    graph = _graph_of(inputs)
    out = graph.add_operation(op, inputs, shape, dtype, op.type_name)
    out.requires_grad = dtype.kind == "f" and op.differentiable
    return out


# ----------------------------------------------------------------------------- graph ops
class _ListOp(Op):
    """An op on the list value. Marked stateful so that constant folding leaves it alone (a
    folded constant must be an array); it runs as any op does. Its output is a tuple, so
    gradients meeting there add up slot by slot (``TupleTensor``)."""

    stateful, output_class = True, TupleTensor

    def session_step(self, session, node):
        xp = node._device.xp
        return lambda *values: self.forward(xp, *values)


class ListReserve(_ListOp):
    name, type_name, differentiable = "tensor_list_reserve", "TensorListReserve", False

    def forward(self, xp, size):
        return (None,) * int(size)


class ListFromTensor(_ListOp):
    """The rows of a tensor as the slots (``unstack``)."""

    name, type_name = "tensor_list_from_tensor", "TensorListFromTensor"

    def forward(self, xp, value):
        return tuple(value[i] for i in range(value.shape[0]))

    def backward(self, grad, out, value):
        return _value_op(StackGrad(), [grad, value], value.shape, value.dtype),


class ListSetItem(_ListOp):
    """A copy of the list with slot ``index`` = ``value`` (``write``)."""

    name, type_name = "tensor_list_set_item", "TensorListSetItem"

    def __init__(self, dynamic_size):
        self.dynamic_size = dynamic_size

    def forward(self, xp, items, index, value):
        i = int(index)
        if i >= len(items):
            if not self.dynamic_size:
                raise InvalidArgumentError(_out_of_range(i, len(items)))
            items = items + (None,) * (i + 1 - len(items))
        return items[:i] + (xp.array(value, copy=True),) + items[i + 1:]

    def backward(self, grad, out, items, index, value):
        """The list's gradient without this slot's; the value gets that slot's."""
        cleared = _list_op(ClearItem(), [grad, index], value.dtype)
        return cleared, None, _value_op(ItemOrZeros(), [grad, index, value], value.shape,
                                        value.dtype)


class ListGetItem(Op):
    """Slot ``index`` of the list (``read``)."""

    name, type_name = "tensor_list_get_item", "TensorListGetItem"

    def forward(self, xp, items, index):
        i = int(index)
        if i >= len(items):
            raise InvalidArgumentError(_out_of_range(i, len(items)))
        if items[i] is None:
            raise InvalidArgumentError(_unwritten(i))
        return items[i]

    def backward(self, grad, out, items, index):
        return _list_op(OneSlot(), [items, index, grad], grad.dtype), None


class ListStack(Op):
    """All slots stacked (``stack``)."""

    name, type_name = "tensor_list_stack", "TensorListStack"

    def __init__(self, element_shape):
        self.element_shape = element_shape

    def forward(self, xp, items):
        missing = [i for i, v in enumerate(items) if v is None]
        if missing:
            raise InvalidArgumentError(_unwritten(missing[0]))
        if not items:
            if self.element_shape is None:
                raise InvalidArgumentError("Stacking an empty TensorArray needs its "
                                           "element_shape.")
            return xp.zeros((0,) + self.element_shape)
        return xp.stack(items)

    def backward(self, grad, out, items):
        return _list_op(ListFromTensor(), [grad], grad.dtype),


class ListLength(Op):
    name, type_name, differentiable = "tensor_list_length", "TensorListLength", False

    def forward(self, xp, items):
        return np.asarray(len(items), dtype=np.int32)


# gradient helpers: a slot no read sent a gradient to is None, and counts as zero
class ClearItem(_ListOp):
    name, type_name, differentiable = "tensor_list_clear_item", "TensorListSetItem", False

    def forward(self, xp, items, index):
        i = int(index)
        return items[:i] + (None,) + items[i + 1:] if i < len(items) else items


class ItemOrZeros(Op):
    name, type_name, differentiable = "tensor_list_item_or_zeros", "TensorListGetItem", False

    def forward(self, xp, items, index, like):
        i = int(index)
        return items[i] if i < len(items) and items[i] is not None else xp.zeros_like(like)


class OneSlot(_ListOp):
    """A list as long as ``items`` holding ``value`` at ``index`` and nothing elsewhere."""

    name, type_name, differentiable = "tensor_list_one_slot", "TensorListSetItem", False

    def forward(self, xp, items, index, value):
        i = int(index)
        return (None,) * i + (value,) + (None,) * (len(items) - i - 1)


class StackGrad(Op):
    name, type_name, differentiable = "tensor_list_stack_grad", "TensorListStack", False

    def forward(self, xp, items, like):
        return xp.stack([v if v is not None else xp.zeros_like(like[i])
                         for i, v in enumerate(items)]) if items else xp.zeros_like(like)
