"""``eg.print``: TF's ``tf.print``, which prints when the computation *runs*.

Eagerly that is at once. In a graph it is a node: a Session prints when the node is fetched (or
a fetched node depends on it through ``control_dependencies``); a traced function prints on
every call, because its side effects always run, whereas Python's ``print`` runs only while
the function is traced.
"""
import sys

from ..context import state
from ..tensor import Tensor
from .base import Op


class Print(Op):
    """Prints its inputs (between the fixed strings given) each time it runs."""

    name, type_name = "print", "PrintV2"
    differentiable = False
    stateful = True             # never folded away or merged with another print
    side_effect = True          # a traced function runs it on every call

    def __init__(self, parts, sep, end):
        self.parts, self.sep, self.end = parts, sep, end   # parts: strings, None for a tensor

    def forward(self, xp, *values):
        values = iter(values)
        shown = [str(next(values)) if part is None else part for part in self.parts]
        print(*shown, sep=self.sep, end=self.end, file=sys.stdout)
        return xp.zeros((), dtype=bool)

    def static_shape(self, *inputs):
        return (), bool                 # (a flag: building the graph must not print)

    def session_step(self, session, node):
        host = node._device.get
        return lambda *values: self.forward(node._device.xp, *(host(v) for v in values))


def print_(*inputs, sep=" ", end="\n", name=None):
    """``eg.print("loss:", loss)``: tensors print as their values, other things as ``str``."""
    if state.graph is None:
        print(*(t.numpy() if isinstance(t, Tensor) else t for t in inputs), sep=sep, end=end)
        return None
    parts = [None if isinstance(t, Tensor) else str(t) for t in inputs]
    tensors = [t for t in inputs if isinstance(t, Tensor)]
    return state.graph.create_op(Print(parts, sep, end), tensors, name=name).op
