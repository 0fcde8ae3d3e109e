"""Ways back to Python from a traced function: ``eg.py_function`` and ``eg.init_scope`` (TF2's).

A traced function runs its Python code once, while tracing; after that only the graph runs.
Two escape hatches let Python run at other times:

* ``eg.py_function(func, inp, Tout)`` is a *node* that calls ``func`` eagerly, on the input
  values, every time the graph runs: Python code (``int()`` of a value, a library that knows
  nothing of graphs) inside a graph. Its gradient calls ``func`` again under a GradientTape.
  The price: the graph cannot look inside it, and it holds Python's lock while it runs.
* ``with eg.init_scope():`` runs its block *now*, eagerly, while the function traces, as if
  outside it: for state made or changed once (TF lifts a layer's variables out this way).
"""
import contextlib

import numpy as np

from .. import context
from ..errors import GradientError
from ..ops.base import Op
from ..tensor import Tensor, as_dtype
from .control_flow import TupleTensor, _get
from .core import SymbolicTensor
from .function import FuncGraph, _graph_tensor
from .shapes import UNKNOWN

__all__ = ["py_function", "init_scope"]


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803  (TF's names)
    """``func(*inp)`` run eagerly, also when a graph runs (``tf.py_function``). ``Tout``: the
    dtype of the result, or a list of dtypes for a list of results. Also a decorator:
    ``@eg.py_function(Tout=eg.float32)``."""
    if func is None:
        return lambda f: _Decorated(f, Tout, name)
    inp = list(inp or [])
    dtypes = [as_dtype(t) for t in Tout] if isinstance(Tout, (list, tuple)) else \
        None if Tout is None else as_dtype(Tout)
    graph = context.state.graph
    if graph is None and not any(isinstance(t, SymbolicTensor) for t in inp):
        return _results(func(*inp), dtypes)
    graph = graph or next(t.graph for t in inp if isinstance(t, SymbolicTensor))
    inputs = [_graph_tensor(graph, t) for t in inp]
    op = PyFunction(func, dtypes)
    if not isinstance(dtypes, list):
        out = graph.add_operation(op, inputs, UNKNOWN, dtypes or np.float32, name or "EagerPyFunc")
        out.requires_grad = dtypes is not None and dtypes.kind == "f"
        return None if dtypes is None else out
    node = graph.add_operation(op, inputs, (), np.dtype(object), name or "EagerPyFunc")
    node.requires_grad = False
    return [_get(node, i, len(dtypes), UNKNOWN, d, "EagerPyFunc_output")
            for i, d in enumerate(dtypes)]


class _Decorated:
    """``@eg.py_function(Tout=...)``: calling the function makes the call a py_function."""

    def __init__(self, func, tout, name):
        self.func, self.tout, self.name = func, tout, name

    def __call__(self, *args):
        return py_function(self.func, args, self.tout, self.name)


def _results(value, dtypes):
    """What ``func`` returned, as tensors of the promised dtypes."""
    from ..ops.math import cast
    from ..tensor import tensor

    def one(v, dtype):
        t = v if isinstance(v, Tensor) else tensor(np.asarray(v), dtype=dtype)
        return cast(t, dtype) if t.dtype != dtype else t
    if dtypes is None:
        return None
    if isinstance(dtypes, list):
        return [one(v, d) for v, d in zip(value, dtypes)]
    return one(value, dtypes)


def _eager_call(func, values, device, dtypes):
    with context.building(None):
        return _results(func(*[Tensor(v, device) for v in values]), dtypes)


class PyFunction(Op):
    """Call a Python function on the input values when the graph runs. Stateful: it runs on
    every call, and constant folding and common-subexpression elimination leave it alone."""

    name, type_name, stateful, side_effect = "py_function", "EagerPyFunc", True, True

    def __init__(self, func, dtypes):
        self.func, self.dtypes = func, dtypes
        self.output_class = TupleTensor if isinstance(dtypes, list) else SymbolicTensor

    def session_step(self, session, node):
        device = node._device

        def run(*values):
            result = _eager_call(self.func, values, device, self.dtypes)
            if isinstance(self.dtypes, list):
                return tuple(r._value for r in result)
            return None if result is None else result._value
        return run

    def backward(self, grad, out, *inputs):
        if isinstance(self.dtypes, list):
            raise GradientError("The gradient of an eg.py_function with several results is "
                                "left out in edugraph; give it one result (Tout=a dtype).")
        node = out.graph.add_operation(PyFunctionGrad(self), [*inputs, grad], (),
                                       np.dtype(object), "EagerPyFuncGrad")
        return [_get(node, i, len(inputs), x.shape, x.dtype, "EagerPyFuncGrad_output")
                if x.dtype.kind == "f" else None for i, x in enumerate(inputs)]


class PyFunctionGrad(Op):
    """The inputs' gradients of a py_function: its function run again under a tape."""

    name, type_name, stateful, differentiable = "py_function_grad", "EagerPyFuncGrad", True, \
        False
    output_class = TupleTensor

    def __init__(self, forward_op):
        self.forward_op = forward_op

    def session_step(self, session, node):
        device = node._device

        def run(*values):
            from ..autodiff import GradientTape
            *xs, upstream = values
            with context.building(None), GradientTape() as tape:
                tensors = [Tensor(v, device) for v in xs]
                for t in tensors:
                    if t.dtype.kind == "f":
                        tape.watch(t)
                result = _results(self.forward_op.func(*tensors), self.forward_op.dtypes)
            grads = tape.gradient(result, tensors, output_gradients=Tensor(upstream, device))
            return tuple(np.zeros_like(x) if g is None else g._value
                         for x, g in zip(xs, grads))
        return run


@contextlib.contextmanager
def init_scope():
    """Run the block as if outside every traced function: eagerly (or in the TF1 graph the
    outermost code builds), with no tape recording it."""
    graph = context.state.graph
    while isinstance(graph, FuncGraph):
        graph = graph.outer_graph
    tapes, context.state.tapes = context.state.tapes, []
    try:
        with context.building(graph):
            yield
    finally:
        context.state.tapes = tapes
