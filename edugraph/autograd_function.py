"""``eg.autograd.Function``: PyTorch's way to write your own node (``torch.autograd.Function``).

A subclass gives the node's two halves as static methods, the lecture's node pattern in
PyTorch's words:

    class MyReLU(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)            # what backward will need
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):         # upstream gradient → the input's gradient
            x, = ctx.saved_tensors
            grad_x = grad_output.clone()
            grad_x[x < 0] = 0
            return grad_x

    y = MyReLU.apply(x)                          # a node on the tape: y.grad_fn is MyReLUBackward

``apply`` runs ``forward`` with recording off (its inside is one node, not many) and records
one node whose backward is yours; ``eg.gradcheck(MyReLU.apply, (x,))`` checks it against
central differences. edugraph's own ops are the same idea with arrays (``ops/base.py``).
Eager only: in a graph, write an op (``Op`` with ``forward`` and ``backward``) instead.
"""
import inspect

from .context import next_sequence, no_grad, state
from .errors import GradientError
from .ops.base import Op, sums_to
from .tensor import Tensor

__all__ = ["Function", "FunctionCtx"]


class FunctionCtx:
    """The ``ctx`` a Function's ``forward`` and ``backward`` share: the tensors ``forward``
    keeps (``ctx.save_for_backward(x)``, then ``x, = ctx.saved_tensors``), any other value as
    an attribute (``ctx.alpha = alpha``), and ``needs_input_grad``, one bool per input."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self._saved = ()
        self._non_differentiable = ()
        self._as_recorded = {}      # id(tensor) → what backward reads for it (see _FunctionNode)

    def save_for_backward(self, *tensors):
        self._saved = tensors

    @property
    def saved_tensors(self):
        return tuple(self._as_recorded.get(id(t), t) for t in self._saved)

    def mark_non_differentiable(self, *outputs):
        """Outputs that get no gradient (indices, masks)."""
        self._non_differentiable = outputs


class Function:
    """Subclass it with static ``forward(ctx, *inputs)`` and ``backward(ctx, *grad_outputs)``
    (one gradient per output in, one per input out: None for an input that needs none), then
    call ``YourFunction.apply(*inputs)``. PyTorch's newer form works too: ``forward(*inputs)``
    without ctx, and ``setup_context(ctx, inputs, output)`` to fill ctx."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # (each Function has its node class, named as the node prints: grad_fn=<MyReLUBackward>)
        cls._node_class = type(cls.__name__, (_FunctionNode,), {"name": cls.__name__,
                                                                 "function": cls})

    @staticmethod
    def forward(ctx, *inputs):
        raise NotImplementedError("A Function needs a static forward(ctx, *inputs) that "
                                  "computes the outputs.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("A Function needs a static backward(ctx, *grad_outputs) that "
                                  "returns one gradient per input of forward, to be used "
                                  "with backward() or a GradientTape.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError

    def __call__(self, *inputs):
        name = type(self).__name__
        raise RuntimeError(f"{name}()(x) is the old (before PyTorch 1.5) way to call a Function, "
                           f"which PyTorch refuses too: write {name}.apply(x), with forward and "
                           "backward as @staticmethods taking ctx first.")

    @classmethod
    def apply(cls, *inputs, **kwargs):
        """Run ``forward`` on ``inputs`` and record one node whose backward is ``backward``
        (when gradients are recorded and an input requires one)."""
        if state.graph is not None:
            raise RuntimeError(f"{cls.__name__}.apply: an eg.autograd.Function runs eagerly, as "
                               "in PyTorch; this is a graph being built. Write an op instead "
                               "(an Op subclass with forward and backward, run with apply).")
        takes_ctx = cls.setup_context is Function.setup_context
        if kwargs:                      # (as PyTorch: a keyword for a parameter is an input)
            bound = inspect.signature(cls.forward).bind(*[None] * takes_ctx, *inputs, **kwargs)
            inputs, kwargs = bound.args[takes_ctx:], bound.kwargs
        ctx = FunctionCtx(tuple(isinstance(x, Tensor) and x.requires_grad for x in inputs))
        with no_grad():                 # (forward's ops are not recorded: the node is)
            if takes_ctx:
                result = cls.forward(ctx, *inputs, **kwargs)
            else:
                result = cls.forward(*inputs, **kwargs)
                cls.setup_context(ctx, inputs, result)
        results = result if isinstance(result, tuple) else (result,)
        for k, r in enumerate(results):
            if not isinstance(r, Tensor):
                raise TypeError(f"{cls.__name__}.forward must return tensors; output {k} is "
                                f"a {type(r).__name__}.")
        record = state.grad_enabled and any(ctx.needs_input_grad)
        tensor_inputs = tuple(x for x in inputs if isinstance(x, Tensor))
        outputs = []
        for index, r in enumerate(results):
            out = Tensor(r._value, r.device)    # (a new tensor, even if forward returned an input)
            if record and r.dtype.kind == "f" and \
                    not any(r is n for n in ctx._non_differentiable):
                out.requires_grad = True
                out._op = cls._node_class(ctx, inputs, results, index)
                out._inputs, out._seq = tensor_inputs, next_sequence()
            outputs.append(out)
        return tuple(outputs) if isinstance(result, tuple) else outputs[0]


class _FunctionNode(Op):
    """Output ``index`` of one ``Function.apply`` call on the tape: its backward calls the
    Function's ``backward`` with this output's gradient (zeros for the other outputs: a
    backward is linear in them, so the nodes' results add up to one call's)."""

    function = Function

    def __init__(self, ctx, inputs, results, index):
        self._ctx, self._arguments, self._results, self._index = ctx, inputs, results, index

    def backward(self, grad, out, *tensor_inputs):
        # The engine hands in the inputs and output as recorded: a saved tensor changed in
        # place since forward reads as a stand-in that refuses (PyTorch: "modified by an
        # inplace operation"); ctx.saved_tensors gives those stand-ins.
        given = [x for x in self._arguments if isinstance(x, Tensor)]
        ctx = self._ctx
        ctx._as_recorded = {id(x): t for x, t in zip(given, tensor_inputs)}
        ctx._as_recorded[id(self._results[self._index])] = out
        grad_outputs = [grad if k == self._index else
                        _zeros_like(r) if r.dtype.kind == "f" else None
                        for k, r in enumerate(self._results)]
        grads = self.function.backward(ctx, *grad_outputs)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if len(grads) != len(self._arguments):
            raise GradientError(
                f"{self.name}.backward returned {len(grads)} gradient(s), but forward took "
                f"{len(self._arguments)} input(s): return one per input, None for an input that "
                "needs none (as PyTorch requires).")
        return [self._checked(k, x, g) for k, (x, g) in enumerate(zip(self._arguments, grads))
                if isinstance(x, Tensor)]

    def _checked(self, k, x, g):
        """Gradient ``g`` of input ``k`` (``x``), as PyTorch checks it: a tensor on x's device
        whose shape is x's, or one broadcasting made from it (the engine sums it back)."""
        if g is None:
            return None
        if not isinstance(g, Tensor):
            raise GradientError(f"{self.name}.backward returned a {type(g).__name__} as the "
                                f"gradient of input {k}; return a tensor (or None).")
        if g.device is not x.device:
            raise GradientError(f"{self.name}.backward returned the gradient of input {k} on "
                                f"{g.device.name}, but input {k} is on {x.device.name}.")
        if not sums_to(g.shape, x.shape):
            raise GradientError(
                f"{self.name}.backward returned a gradient of shape {tuple(g.shape)} for input "
                f"{k} of shape {tuple(x.shape)}: a gradient has its input's shape.")
        return g if g.dtype == x.dtype else g.to(x.dtype)   # (PyTorch casts it too)


def _zeros_like(t):
    return Tensor(t.device.xp.zeros_like(t._value), t.device)
