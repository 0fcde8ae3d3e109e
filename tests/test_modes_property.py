"""One random graph, four ways to run it: eagerly (backward), in a Session (eg.gradients), in
a Session whose placeholders know no sizes, and in a traced function (GradientTape inside).
Hypothesis draws the graphs: inputs of broadcasting shapes, a chain of ops over any earlier
nodes (branches, reuse, broadcasting, reductions, comparisons, shape ops and eg.cond), and a
scalar loss. All four must give the same value and the same gradients."""
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

import edugraph as eg
from strategies import arrays, broadcastable_shapes

UNARY = {
    "tanh": eg.tanh,
    "sigmoid": eg.sigmoid,
    "square": eg.square,
    "negative": eg.negative,
    "exp_tanh": lambda a: eg.exp(eg.tanh(a)),                  # bounded exp
    "row_sum": lambda a: eg.reduce_sum(a, axis=-1, keepdims=True) if len(a.shape) else a,
    "mean_all": lambda a: eg.reduce_mean(a),
    "row_max": lambda a: eg.reduce_max(a, axis=-1, keepdims=True) if len(a.shape) else a,
    "min_all": lambda a: eg.reduce_min(a),
    "abs": eg.abs,
    "sin": eg.sin,
    "cos": eg.cos,
    "softplus": eg.nn.softplus,
    "elu": eg.nn.elu,
    "clip": lambda a: eg.clip(a, -0.5, 0.5),
    "softmax": lambda a: eg.softmax(a) if len(a.shape) else a,
    "log_softmax": lambda a: eg.log_softmax(a) if len(a.shape) else a,
    "logsumexp": lambda a: eg.logsumexp(a, axis=-1) if len(a.shape) else a,
    "cumsum": lambda a: eg.cumsum(a, axis=-1) if len(a.shape) else a,
    "cumsum_reverse_exclusive": lambda a: eg.cumsum(a, 0, exclusive=True, reverse=True)
    if len(a.shape) else a,
    "norm": lambda a: eg.norm(1.0 + a * a),                    # (away from 0, its kink)
    "row_norm": lambda a: eg.norm(a + 2.0, axis=-1, keepdims=True) if len(a.shape) else a,
    # shape ops: a later binary step between shapes that do not broadcast uses b's mean
    "transpose": eg.transpose,
    "flatten": lambda a: eg.reshape(a, (-1,)),
    "flatten_from_1": lambda a: eg.flatten(a, 1) if len(a.shape) > 1 else a,
    "reverse": lambda a: a[..., ::-1] if len(a.shape) else a,
    "concat": lambda a: eg.concat([a, a * 2.0], axis=-1) if len(a.shape) else a,
    "stack": lambda a: eg.reduce_sum(eg.stack([a, a * a]), axis=0),
    "gather": lambda a: eg.gather(a, [0, 0], axis=-1) if len(a.shape) else a,
    "expand_dims": lambda a: eg.expand_dims(a, 0),
}
BINARY = {
    "add": eg.add,
    "sub": eg.subtract,
    "mul": eg.multiply,
    "safe_div": lambda a, b: a / (1.0 + b * b),
    "pow": lambda a, b: (1.0 + a * a) ** eg.tanh(b),
    "maximum": eg.maximum,
    "minimum": eg.minimum,
    "where": lambda a, b: eg.where(a < b, a, b * 2.0),
    # ops that differ only in their comparison: graph passes must keep them apart
    "compared": lambda a, b: eg.where(a > b, a * b, a - b) + eg.where(a <= b, b, a * 0.5),
    "masked": lambda a, b: a * eg.cast((a >= b) & ~(a > 1.0), a.dtype),
    "cond": lambda a, b: eg.cond(eg.reduce_sum(a) > eg.reduce_sum(b),
                                 lambda: a * b + a, lambda: a - eg.tanh(b) * a),
}


@st.composite
def random_graphs(draw):
    shapes = draw(broadcastable_shapes(num_shapes=draw(st.integers(2, 3)), max_dims=2,
                                       max_side=3))
    values = [draw(arrays(s, -1.5, 1.5)) for s in shapes]
    steps = draw(st.lists(st.tuples(st.sampled_from(sorted(UNARY) + sorted(BINARY)),
                                    st.integers(0, 100), st.integers(0, 100)),
                          min_size=1, max_size=8))
    return values, steps


def build(inputs, steps, fits=None):
    """The graph as a function of its inputs: each step applies an op to earlier nodes; the
    loss adds up the last node and a weighted sum of all (so every node matters).

    ``fits``, if given: a list of whether each binary step's operands broadcast. Empty, it is
    filled in; filled, it is read (a graph whose placeholders know no sizes cannot tell)."""
    nodes = list(inputs)
    replay = iter(fits) if fits else None
    for name, i, j in steps:
        a, b = nodes[i % len(nodes)], nodes[j % len(nodes)]
        if name in BINARY:
            fit = next(replay) if replay else _broadcast(a.shape, b.shape)
            if fits is not None and replay is None:
                fits.append(fit)
            if not fit:
                b = eg.reduce_mean(b)
        nodes.append(UNARY[name](a) if name in UNARY else BINARY[name](a, b))
    loss = eg.reduce_sum(nodes[-1])
    for k, node in enumerate(nodes[len(inputs):]):
        loss = loss + eg.reduce_sum(node) * (0.1 * (k + 1))
    return loss


def _broadcast(*shapes):
    try:
        np.broadcast_shapes(*(tuple(s) for s in shapes))
        return True
    except ValueError:
        return False


def eager(values, steps, fits=None):
    tensors = [eg.tensor(v, requires_grad=True) for v in values]
    loss = build(tensors, steps, fits)
    loss.backward()
    return float(loss), [t.grad.numpy() if t.grad is not None else np.zeros_like(v)
                         for t, v in zip(tensors, values)]


def in_session(values, steps, fits=None, sizes_known=True):
    with eg.Graph().as_default():
        xs = [eg.placeholder(eg.float64, v.shape if sizes_known else (None,) * v.ndim,
                             name=f"x{i}") for i, v in enumerate(values)]
        loss = build(xs, steps, fits)
        grads = eg.gradients(loss, xs)
        fetch = [g for g in grads if g is not None]
        with eg.Session() as sess:
            value, found = sess.run([loss, fetch], dict(zip(xs, values)))
    found = iter(found)
    return float(value), [np.zeros_like(v) if g is None else next(found)
                          for g, v in zip(grads, values)]


def in_session_sizes_unknown(values, steps, fits):
    """Placeholders of shape (?, ?...): gradients must get their shapes when the graph runs."""
    return in_session(values, steps, fits, sizes_known=False)


def traced(values, steps, fits=None):
    @eg.function
    def step(xs):
        with eg.GradientTape() as tape:
            tape.watch(xs)
            loss = build(xs, steps, fits)
        return loss, tape.gradient(loss, xs)

    loss, grads = step(list(values))
    return float(loss), [np.zeros_like(v) if g is None else g.numpy()
                         for g, v in zip(grads, values)]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(random_graphs())
def test_eager_session_and_traced_function_agree(graph):
    values, steps = graph
    fits = []
    expected_value, expected_grads = eager(values, steps, fits)
    for mode in (in_session, in_session_sizes_unknown, traced):
        value, grads = mode(values, steps, fits)
        np.testing.assert_allclose(value, expected_value, rtol=1e-9, atol=1e-9,
                                   err_msg=f"{mode.__name__}: loss of {steps}")
        for k, (g, e) in enumerate(zip(grads, expected_grads)):
            assert np.shape(g) == np.shape(e), f"{mode.__name__}: gradient {k} shape"
            np.testing.assert_allclose(g, e, rtol=1e-8, atol=1e-9,
                                       err_msg=f"{mode.__name__}: d loss / d input {k} "
                                               f"of {steps}")
