"""``eg.gradients(ys, xs)``: backprop *builds more graph* (TF1's ``tf.gradients``).

The same reverse walk as eager ``backward()``, but on symbolic tensors: every op's ``backward``
is written with framework ops, so calling it here adds gradient nodes (under ``gradients/``)
that a Session can fetch and the inspector can show. Gradients of gradients come for free.
"""
from .. import context
from ..autodiff import fill_unconnected
from ..ops.base import (Op, backward_result, rank_known, sum_to_shape, sums_to,
                        wrong_gradient_shape)
from .core import Operation, SymbolicTensor, upstream_ops


class OnesLike(Op):
    """Ones of ``x``'s run-time shape: the seed dy/dy = 1 (shape may be unknown until fed)."""

    name, differentiable = "ones_like", False

    def forward(self, xp, x):
        return xp.ones_like(x)

    def static_shape(self, x):
        return x.shape, x.dtype


def gradients(ys, xs, grad_ys=None, name="gradients", stop_gradients=None,
              unconnected_gradients="none"):
    """d(sum of ys)/d(x) for each x in xs, as new graph tensors; None where ys ignore x
    (zeros of x's shape with ``unconnected_gradients="zero"``). A list, also for a single x:
    ``gradients(loss, w)[0]``, as in TF1."""
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
    grad_ys = list(grad_ys) if isinstance(grad_ys, (list, tuple)) else [grad_ys] * len(ys)
    for t in ys + xs:
        if not isinstance(t, SymbolicTensor):
            raise TypeError(f"eg.gradients needs graph tensors; got {type(t).__name__}. In "
                            "eager mode use eg.GradientTape or loss.backward().")
    # Constants never record (a graph's constants need no gradient nodes), but one asked for
    # as an x is differentiated, as in TF: it records while this walk runs.
    constants = [x for x in xs if not x.requires_grad and x.dtype.kind == "f"]
    for x in constants:
        x.requires_grad = True
    try:
        result = _walk(ys, xs, grad_ys, name, {t for t in stop_gradients or ()},
                       unconnected_gradients)
    finally:
        for x in constants:
            x.requires_grad = False
    return result


def _walk(ys, xs, grad_ys, name, stops, unconnected_gradients):
    graph = ys[0].graph
    between = _ops_between(ys, xs, stops)
    with graph.name_scope(name):
        grads = {}
        for y, g in zip(ys, grad_ys):
            seed = graph.create_op(OnesLike(), (y,), name="grad_ys") if g is None else g
            _accumulate(grads, y, seed)
        wanted, found = set(xs), {}
        for op in sorted(between, key=lambda o: o._id, reverse=True):
            out = op.outputs[0]
            grad = grads.pop(out, None)
            if grad is None:
                continue
            if out in wanted:
                found[out] = grad
            if not op.inputs or not op.eg_op.differentiable or out in stops:
                continue
            with graph.name_scope(op.name + "_grad"):
                input_grads = backward_result(
                    op.eg_op, op.eg_op.backward(grad, out, *op.inputs), op.inputs)
                for inp, g in zip(op.inputs, input_grads):
                    if g is not None and inp.requires_grad and inp.op in between:
                        _accumulate(grads, inp, _to_shape(op.eg_op, g, inp, op.inputs))
        with context.building(graph):           # (zeros for unconnected xs: in this graph)
            return fill_unconnected([found.get(x) for x in xs], xs, unconnected_gradients)


def _to_shape(op, grad, inp, inputs):
    """``grad`` summed to ``inp``'s shape. A gradient whose shape is neither inp's nor a
    broadcast of it is an error naming ``op`` here, where both shapes are known, rather than
    in the Session that runs the sum."""
    known = rank_known(grad.shape) and rank_known(inp.shape) and \
        None not in grad.shape and None not in inp.shape
    if known and not sums_to(tuple(grad.shape), tuple(inp.shape)):
        raise wrong_gradient_shape(op, grad, inp, inputs)
    return sum_to_shape(grad, inp)


def _accumulate(grads, tensor, grad):
    """Where branches meet, gradients add up."""
    grads[tensor] = grads[tensor] + grad if tensor in grads else grad


def _ops_between(ys, xs, stops):
    """Ops on some path from an x to a y: only they need gradient nodes."""
    reaches_y = upstream_ops([y.op for y in ys], stops)
    from_x = set()
    stack = [x.op for x in xs if x.op in reaches_y]
    consumers = {}
    for op in reaches_y:
        for t in op.inputs:
            consumers.setdefault(t.op, []).append(op)
    while stack:
        op = stack.pop()
        if op in from_x:
            continue
        from_x.add(op)
        stack.extend(consumers.get(op, ()))
    return from_x


