"""``iter(dataset)``: an iterator that also works inside a traced function, as TF's does.

Eagerly ``next(iterator)`` returns the next element. While a graph is built (an ``eg.function``
tracing, or a TF1 graph) there is no element to return yet: ``next(iterator)`` adds an
``IteratorGetNext`` node instead, which takes the next element each time the graph runs. So a
traced training step that calls ``next(iterator)`` gets new data on every call (1, 2, 3), not
the element that was current while it traced (1, 1, 1); in a TF1 graph, every
``sess.run(next_element)`` gives the next one, as TF1's ``iterator.get_next()`` does.

TF1's own iterators are made inside the graph: ``dataset.make_one_shot_iterator()`` (its
``get_next()`` is always such a node) and ``dataset.make_initializable_iterator()``, which
starts at the first element again each time ``sess.run(iterator.initializer)`` runs (the
epoch loop of TF1 programs).
"""
import numpy as np

from .. import devices
from ..context import state
from ..errors import FailedPreconditionError, InvalidArgumentError, OutOfRangeError
from ..graph.control_flow import TupleGet, TupleTensor
from ..graph.shapes import TensorShape
from ..nest import flatten, map_structure
from ..ops.base import Op
from ..tensor import Tensor

__all__ = ["Iterator"]


class Iterator:
    """The elements of a dataset one at a time, as tensors on the device that was current
    when the iterator was made. An iterator made while a graph is built (``for x in ds:``
    inside a traced function) is read at once instead: each element becomes a constant;
    TF1's iterators (``graph_nodes``) give nodes in the graph they were made in."""

    def __init__(self, make_elements, device, graph_nodes=False, initializable=False):
        self._make_elements = make_elements     # () → a Python iterator of elements on the host
        self._elements = None if initializable else make_elements()
        self._device = device
        self._early = None          # an element taken before its turn, to learn its shapes
        self._graph_nodes = graph_nodes
        self._read_at_once = state.graph is not None and not graph_nodes
        self.initializer = None
        if initializable:           # (TF1's MakeIterator op; only TF1 graphs make these)
            self.initializer = state.graph.create_op(MakeIterator(self), ()).op

    def __iter__(self):
        return self

    def __next__(self):
        if state.graph is not None and not self._read_at_once:
            return self._next_node(state.graph)
        element = self.take()
        if self._device.kind == "cpu":
            return element
        return map_structure(lambda t: t.to(self._device), element)

    get_next = __next__             # TF's spelling: iterator.get_next()

    def take(self):
        """The next element as the pipeline made it (tensors on the host)."""
        if self._early is not None:
            element, self._early = self._early, None
            return element
        if self._elements is None:
            raise FailedPreconditionError(
                "GetNext() failed because the iterator has not been initialized. Ensure that "
                "you have run the initializer operation for this iterator before getting the "
                "next element: sess.run(iterator.initializer).")
        return next(self._elements)

    def restart(self):
        """From the first element again (what running ``initializer`` does)."""
        self._elements, self._early = self._make_elements(), None

    def _next_node(self, graph):
        """The next element as graph tensors: one node takes the element (a tuple of its
        parts) when the graph runs, and a ``TupleGet`` node per part hands each on, with the
        shapes and dtypes of the element that comes next now (before an initializable
        iterator has started: of the dataset's first)."""
        try:
            if self._elements is None:
                element = next(self._make_elements())
            else:
                if self._early is None:
                    self._early = next(self._elements)
                element = self._early
        except StopIteration:
            raise OutOfRangeError("next(iterator): the iterator has no elements left, so "
                                  "there is nothing to take when the graph runs.") from None
        specs = [(p.shape, p.dtype) for p in flatten(element)]
        if self._graph_nodes:       # TF1 programs read batches, and the last may be smaller
            specs = [((None,) + shape[1:] if shape else shape, dtype) for shape, dtype in specs]
        taken = graph.add_operation(IteratorGetNext(self, specs), (), (), np.dtype(object),
                                    "IteratorGetNext")
        outputs = [taken] + [graph.add_operation(TupleGet(i, len(specs)), [taken], shape,
                                                 dtype, "IteratorGetNext")
                             for i, (shape, dtype) in enumerate(specs)]
        for t in outputs:                       # (the pipeline's arrays are on the host)
            t.requires_grad = False
            t.op._device, t.op.device = devices.cpu, "/device:CPU:0"
        values = iter(outputs[1:])
        return map_structure(lambda _: next(values), element)


class IteratorGetNext(Op):
    """Takes the next element of an iterator each time it runs (TF's ``IteratorGetNext``):
    its value is the tuple of the element's parts, which ``TupleGet`` nodes hand out."""

    name, type_name, differentiable = "iterator_get_next", "IteratorGetNext", False
    stateful = True                 # never folded away or merged with another one
    side_effect = True              # a traced function runs it on every call
    output_class = TupleTensor

    def __init__(self, iterator, specs):
        self._iterator, self.specs = iterator, specs

    def session_step(self, session, node):
        return self.take_parts

    def take_parts(self):
        try:
            element = self._iterator.take()
        except StopIteration:
            raise OutOfRangeError("End of sequence: the iterator has no elements left (TF's "
                                  "OutOfRangeError; catch it to end the epoch).", self) from None
        parts = [p.numpy() if isinstance(p, Tensor) else np.asarray(p) for p in flatten(element)]
        got = [(p.shape, p.dtype) for p in parts]
        if not all(dtype == want_dtype and TensorShape(want).is_compatible_with(shape)
                   for (shape, dtype), (want, want_dtype) in zip(got, self.specs)):
            raise InvalidArgumentError(
                f"next(iterator): this element's parts have shapes and dtypes {_shown(got)}, "
                f"but the graph was built for {_shown(self.specs)} (the element that was next "
                "while it was built). A smaller last batch does this: use "
                "batch(..., drop_remainder=True), or pass each element to the traced function "
                "as an argument (for x, y in ds: step(x, y)), which traces once more for a new "
                "shape.", self)
        return tuple(parts)


class MakeIterator(Op):
    """Starts an iterator again at its dataset's first element each time it runs (TF1's
    ``MakeIterator``, an initializable iterator's ``initializer``)."""

    name, type_name, differentiable = "make_iterator", "MakeIterator", False
    stateful = True
    side_effect = True

    def __init__(self, iterator):
        self._iterator = iterator

    def session_step(self, session, node):
        return self.restart

    def restart(self):
        self._iterator.restart()
        return np.zeros((), dtype=bool)

    def static_shape(self):
        return (), bool                 # (building the graph must not start the iterator)


def _shown(specs):
    return ", ".join(f"{tuple('?' if n is None else n for n in shape)} {np.dtype(dtype).name}"
                     for shape, dtype in specs)
