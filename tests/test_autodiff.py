"""The engine: reverse topological order, branches summing, accumulation, retain_grad, detach,
no_grad, requires_grad_, eg.grad with create_graph, and very deep graphs."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import edugraph as eg
from edugraph.ops.base import Op, apply
from tests.gradcheck import gradcheck
from tests.strategies import arrays, broadcastable_shapes, checks


def on(device, a, **kw):
    return eg.tensor(a, device=device, **kw)


class Spy(Op):
    """Identity that logs when its backward runs (to observe the engine's order)."""

    name = "spy"

    def __init__(self, label, log):
        self.label, self._log = label, log

    def forward(self, xp, x):
        return x

    def backward(self, grad, out, x):
        self._log.append(self.label)
        return (grad,)


def test_backward_visits_nodes_in_reverse_topological_order(device):
    """A diamond: d is reached from b and c; d's backward must wait until both have run."""
    log = []
    x = on(device, 2.0, requires_grad=True)
    d = apply(Spy("d", log), x)
    b = apply(Spy("b", log), d * 3)
    c = apply(Spy("c", log), d * d)
    out = apply(Spy("out", log), b + c)
    out.backward()
    assert log[0] == "out" and log[-1] == "d" and sorted(log[1:3]) == ["b", "c"]
    assert x.grad.item() == 3 + 2 * 2        # d(3x + x²)/dx at 2


def test_branches_sum(device):
    x = on(device, 3.0, requires_grad=True)
    y = x * x + x               # x used three times
    y.backward()
    assert x.grad.item() == 2 * 3 + 1


def test_grad_accumulates_across_backward_calls(device):
    x = on(device, [1.0, 2.0], requires_grad=True)
    (x * 3).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3 + 2, 3 + 4])
    x.zero_grad()
    assert x.grad is None


def test_only_leaves_keep_grad_unless_retained(device):
    x = on(device, [1.0, 2.0], requires_grad=True)
    h = x * 2
    kept = (x * 3).retain_grad()
    ((h + kept) ** 3).sum().backward(retain_graph=True)     # (kept's node is walked again)
    with pytest.warns(UserWarning, match=r"not a leaf .* \.retain_grad\(\)"):
        assert h.grad is None               # (PyTorch warns here too)
    assert not h.is_leaf and x.is_leaf
    np.testing.assert_allclose(kept.grad.numpy(), 3 * (5 * np.array([1.0, 2.0])) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), 5 * 3 * (5 * np.array([1.0, 2.0])) ** 2)
    (kept * 2).sum().backward()                 # a retained grad accumulates, as in PyTorch
    np.testing.assert_allclose(kept.grad.numpy(), 3 * (5 * np.array([1.0, 2.0])) ** 2 + 2)


def test_in_place_update_keeps_the_leaf(device):
    """PyTorch's manual SGD step: ``w -= lr * w.grad`` under no_grad changes w's own array,
    so w stays the leaf that requires grad; ``w.grad.zero_()`` clears its gradient."""
    w = on(device, [1.0, -2.0], requires_grad=True)
    alias = w.detach()                          # shares w's array, as in PyTorch
    (w * w).sum().backward()
    with eg.no_grad():
        w -= 0.25 * w.grad
        w.grad.zero_()
    np.testing.assert_array_equal(w.numpy(), [0.5, -1.0])
    np.testing.assert_array_equal(alias.numpy(), [0.5, -1.0])
    assert w.requires_grad and w.is_leaf and w.grad.numpy().tolist() == [0.0, 0.0]
    (w * w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [1.0, -2.0])
    t = on(device, [1.0, 2.0])
    assert t.add_(1.0).sub_(2.0).mul_(4.0).div_(8.0) is t
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.5])
    t = on(device, [np.nan, np.inf]).zero_()
    np.testing.assert_array_equal(t.numpy(), [0.0, 0.0])
    total = on(device, [1.0, 2.0]).sum()        # a 0-d result can be updated too
    total += 1.0
    assert total.item() == 4.0


def test_in_place_update_refusals(device):
    w = on(device, [1.0, 2.0], requires_grad=True)
    with pytest.raises(eg.errors.GradientError, match=r"^x -= \.\.\. would change a tensor of "
                       r"shape \(2,\) in place while gradients are being recorded.*no_grad"):
        w -= 1.0
    x = on(device, [1.0, 2.0])
    with pytest.raises(eg.errors.ShapeError, match=r"^x \+= \.\.\. on a tensor of shape \(2,\) "
                       r"and dtype float32 gives shape \(2, 2\)"):
        x += on(device, np.ones((2, 2), np.float32))
    counts = on(device, [1, 2])
    with pytest.raises(eg.errors.ShapeError, match="dtype int64 gives shape \\(2,\\) and dtype "
                       "float32: an in-place result must keep both"):
        counts += 0.5
    np.testing.assert_array_equal(x.numpy(), [1.0, 2.0])        # nothing was written
    y = (w * x).sum()
    x += 1.0                                    # x's old values were needed for w's gradient
    with pytest.raises(eg.errors.GradientError, match=r"x -= \.\.\..*after mul used them"):
        y.backward()
    with eg.Graph().as_default():               # a symbolic tensor cannot change: a new node
        p = eg.placeholder(eg.float32, shape=(2,))
        q = p
        p += 1.0
        assert p is not q and p.op.type == "Add"
    outside = on(device, [1.0, 2.0])

    @eg.function
    def traced(step):
        total = outside
        total += step                           # while tracing, too: a new node
        return total

    np.testing.assert_array_equal(traced(on(device, [1.0, 1.0])).numpy(), [2.0, 3.0])
    np.testing.assert_array_equal(outside.numpy(), [1.0, 2.0])


def test_detach_stops_the_gradient(device):
    x = on(device, 3.0, requires_grad=True)
    y = x * x.detach()          # the second factor is a constant
    assert not x.detach().requires_grad and x.detach().grad_fn is None
    y.backward()
    assert x.grad.item() == 3.0
    assert y.detach().numpy() == 9.0
    held = eg.stop_gradient(x * x)          # TF's name for the same thing
    assert not held.requires_grad and held.item() == 9.0


def test_detach_and_stop_gradient_in_a_traced_function():
    @eg.function
    def slope(a):
        with eg.GradientTape() as tape:
            tape.watch(a)
            y = eg.stop_gradient(a * a) * a + a.detach() * a
        return tape.gradient(y, a)
    # d/da (c1·a + c2·a) with c1 = a², c2 = a held constant: a² + a
    np.testing.assert_allclose(slope(eg.tensor([3.0, -1.0])).numpy(), [12.0, 0.0])


def test_no_grad_as_context_and_decorator(device):
    x = on(device, 2.0, requires_grad=True)
    with eg.no_grad():
        assert not eg.is_grad_enabled()
        y = x * x
        with eg.enable_grad():
            z = x * x
    assert eg.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None and z.requires_grad

    @eg.no_grad()
    def step(t):
        return t * 2

    assert not step(x).requires_grad and eg.is_grad_enabled()
    with eg.set_grad_enabled(False):
        assert not (x + 1).requires_grad


def test_requires_grad_(device):
    x = on(device, [1.0, 2.0])
    assert not (x * 2).requires_grad
    assert x.requires_grad_() is x and (x * 2).requires_grad
    x.requires_grad_(False)
    assert not (x * 2).requires_grad
    with pytest.raises(TypeError, match="int64"):
        on(device, [1, 2]).requires_grad_()
    with pytest.raises(TypeError, match="floating-point"):
        eg.tensor([1, 2], requires_grad=True)


def test_backward_with_an_explicit_gradient(device):
    x = on(device, [1.0, 2.0, 3.0], requires_grad=True)
    (x * x).backward(on(device, [1.0, 0.0, 10.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [2, 0, 60])
    x.grad = None
    (x * 2).backward([1.0, 1.0, 1.0])              # plain data is accepted too
    np.testing.assert_array_equal(x.grad.numpy(), [2, 2, 2])


def test_grad_returns_without_accumulating(device):
    x = on(device, [1.0, 2.0], requires_grad=True)
    y = on(device, [5.0, 7.0], requires_grad=True)
    gx, gy = eg.grad((x * y).sum(), [x, y])
    np.testing.assert_array_equal(gx.numpy(), [5, 7])
    np.testing.assert_array_equal(gy.numpy(), [1, 2])
    assert x.grad is None and y.grad is None
    unused = on(device, 1.0, requires_grad=True)
    with pytest.raises(eg.errors.GradientError, match="allow_unused"):
        eg.grad((x * 2).sum(), [x, unused])
    assert eg.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None


def test_create_graph_gives_second_derivatives(device):
    x = on(device, [1.0, 2.0, -3.0], requires_grad=True)
    y = (x ** 3).sum()
    (dy,) = eg.grad(y, [x], create_graph=True)
    np.testing.assert_allclose(dy.numpy(), 3 * x.numpy() ** 2)
    assert dy.requires_grad
    (d2y,) = eg.grad(dy.sum(), [x])
    np.testing.assert_allclose(d2y.numpy(), 6 * x.numpy())
    # without create_graph the gradient is a plain value
    assert not eg.grad((x ** 3).sum(), x)[0].requires_grad
    # a tuple also for one input, as in PyTorch: grad(y, x)[0] is the gradient, not its row 0
    (g,) = eg.grad((x ** 3).sum(), x)
    np.testing.assert_allclose(g.numpy(), 3 * x.numpy() ** 2)


def test_backward_create_graph_then_differentiate_the_gradient(device):
    x = on(device, 0.5, requires_grad=True)
    eg.sigmoid(x).backward(create_graph=True)
    first = x.grad
    s = 1 / (1 + np.exp(-0.5))
    np.testing.assert_allclose(first.item(), s * (1 - s), rtol=1e-6)
    (second,) = eg.grad(first, [x])
    np.testing.assert_allclose(second.item(), s * (1 - s) * (1 - 2 * s), rtol=1e-5)


def test_second_derivatives_through_broadcasting_and_reductions(device):
    """d²/dx² of sum(softmax(x·w)²) against finite differences of the analytic gradient."""
    rng = np.random.default_rng(0)
    x0, w = rng.normal(size=3), on(device, rng.normal(size=(2, 1)), dtype=eg.float64)

    def gradient(x_value):
        x = on(device, x_value, requires_grad=True)
        (g,) = eg.grad((eg.softmax(w * x, axis=1) ** 2).sum(), [x], create_graph=True)
        return x, g

    x, g = gradient(x0)
    hessian = np.stack([eg.grad(g[i], [x])[0].numpy() for i in range(3)])
    eps = 1e-6
    numeric = np.stack([(gradient(x0 + eps * e)[1].numpy() - gradient(x0 - eps * e)[1].numpy())
                        / (2 * eps) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(hessian, numeric, rtol=1e-5, atol=1e-8)


def test_a_deep_chain_backprops_without_recursion_errors(device):
    x = on(device, 1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.0001 ** 10_000, rtol=1e-3)


def test_a_deep_chain_of_different_ops(device):
    x = on(device, [0.5, -0.25], dtype=eg.float64, requires_grad=True)
    y = x
    for _ in range(2_500):           # 10 000 ops: each step is tanh, mul, add, reshape
        y = (eg.tanh(y) * 0.01 + y).reshape((2,))
    y.sum().backward()
    value, slope = np.array([0.5, -0.25]), np.ones(2)      # the chain rule, step by step
    for _ in range(2_500):
        slope *= 0.01 * (1 - np.tanh(value) ** 2) + 1
        value = np.tanh(value) * 0.01 + value
    np.testing.assert_allclose(y.numpy(), value, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-10)


def test_int_and_bool_results_do_not_record(device):
    x = on(device, [1.5, 2.5], requires_grad=True)
    assert not eg.argmax(x).requires_grad
    assert not (x > 2).requires_grad
    assert not eg.cast(x, eg.int32).requires_grad


def test_repr_shows_value_device_and_grad_fn(device):
    x = on(device, [1.0, 2.0], requires_grad=True)
    assert repr(x).startswith("tensor([1., 2.]") and "requires_grad=True" in repr(x)
    y = x * 2
    assert "grad_fn=<MultiplyBackward>" in repr(y)
    assert (f"device='{device}'" in repr(y)) == (device != "cpu:0")
    assert "dtype=int64" in repr(on(device, [1, 2]))
    assert "dtype=float64" in repr(on(device, 1.0, dtype=eg.float64))


def test_formatting_a_scalar_prints_its_value(device):
    """``print(f"loss: {loss}")`` and ``f"{loss:.4f}"``, as TF's and PyTorch's tutorials
    write them, print the number (float32's shortest digits, as TF); other tensors print
    as str() and refuse a format spec, as in PyTorch."""
    loss = on(device, 1.2564011)
    assert f"{loss}" == "1.2564011" and f"{loss:.2f}" == "1.26" and f"{loss * 100:>8.1f}" == \
        "   125.6"
    assert f"{on(device, 3)}" == "3"
    vector = on(device, [1.0, 2.0])
    assert f"{vector}" == str(vector)
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{vector:.2f}"


def test_size_is_numpys_count_and_pytorchs_method():
    """numpy's ``x.size`` and PyTorch's ``x.size()`` / ``labels.size(0)`` (the CIFAR tutorial's
    ``total += labels.size(0)``) on the same attribute, compared with both."""
    torch = pytest.importorskip("torch")
    values = np.zeros((3, 2))
    ours, theirs = eg.tensor(values), torch.tensor(values)
    assert ours.size == values.size == 6 and ours.numel() == theirs.numel()
    assert ours.size() == tuple(theirs.size()) == (3, 2)
    assert [ours.size(d) for d in (0, 1, -1, -2)] == [theirs.size(d) for d in (0, 1, -1, -2)]
    total = 0
    total += ours.size(0)
    assert total == 3 and type(ours.size + 1) is int
    with pytest.raises(IndexError, match=r"size\(2\): a tensor of shape \(3, 2\) has "
                       r"dimensions -2\.\.1"):
        ours.size(2)


STEPS = [   # binary steps for generated graphs; tanh keeps values bounded
    lambda a, b: eg.tanh(a + b),
    lambda a, b: eg.tanh(a - b * 2),
    lambda a, b: eg.tanh(a * b),
    lambda a, b: a / (b * b + 1),
    lambda a, b: eg.sigmoid(a) * b,
    lambda a, b: eg.reduce_mean(a, axis=-1, keepdims=True) * eg.exp(b * 0.5),
    lambda a, b: eg.softmax(a + b, axis=-1),
]


@checks
@given(data=st.data(), input_shapes=broadcastable_shapes(num_shapes=3, min_dims=1),
       program=st.lists(st.tuples(st.integers(0, len(STEPS) - 1), st.integers(0, 20),
                                  st.integers(0, 20)), min_size=1, max_size=6))
def test_generated_graphs_match_finite_differences(device, data, input_shapes, program):
    """Random graphs over three broadcasting inputs: values are reused (branches sum) and
    every broadcast is undone by the engine; the whole graph's gradient must be right."""
    inputs = [data.draw(arrays(shape)) for shape in input_shapes]

    def graph(*tensors):
        values = list(tensors)
        for step, i, j in program:
            values.append(STEPS[step](values[i % len(values)], values[j % len(values)]))
        return values[-1]

    gradcheck(graph, *inputs, device=device, name=f"graph {program}")


SMOOTH = {   # name: (function, input values) for second-derivative checks
    "exp": (eg.exp, [0.3, -1.2]),
    "log": (eg.log, [0.5, 2.0]),
    "sqrt": (eg.sqrt, [0.5, 2.0]),
    "divide": (lambda x: 1 / x, [0.5, -2.0]),
    "pow": (lambda x: x ** 2.5, [0.5, 2.0]),
    "sigmoid": (eg.sigmoid, [0.3, -1.2]),
    "tanh": (eg.tanh, [0.3, -1.2]),
    "softmax": (lambda x: eg.softmax(x) * [1.0, 3.0], [0.3, -1.2]),
    "log_softmax": (lambda x: eg.log_softmax(x) * [1.0, 3.0], [0.3, -1.2]),
    "logsumexp": (eg.logsumexp, [0.3, -1.2]),
    "matmul": (lambda x: eg.matmul(eg.reshape(x, (1, 2)), eg.reshape(x, (2, 1))), [0.3, -1.2]),
    "mean_of_square": (lambda x: eg.reduce_mean(x * x * x), [0.3, -1.2]),
    "maximum": (lambda x: eg.maximum(x * x, 0.5), [0.3, -1.2]),
}


@pytest.mark.parametrize("name", SMOOTH)
def test_gradients_are_differentiable(device, name):
    """The backward of every op is written in framework ops, so the gradient itself has a
    gradient: gradcheck the function x ↦ d(sum f(x))/dx."""
    fn, values = SMOOTH[name]

    def first_derivative(x):
        return eg.grad(eg.reduce_sum(fn(x)), x, create_graph=True)[0]

    gradcheck(first_derivative, np.array(values), device=device, name=f"d/dx {name}")


R = np.random.default_rng(7)


def _signed(*shape):                # values away from 0 and from each other: no kinks nearby
    return R.uniform(0.5, 1.5, shape) * R.choice([-1, 1], shape)


INDEX = np.array([2, 0, 2, 1])
SECOND_ORDER = {   # name: (function of several inputs, their values)
    # each input's first gradient goes through the gradient ops (sum_to_shape, broadcast_to,
    # scatter-add, gather's gradient, col2im...), so these check those ops' own backward
    "broadcast add": (lambda x, b: (x + b) ** 3, [_signed(2, 3), _signed(3)]),
    "broadcast mul": (lambda x, b: (x * b) ** 2 * x, [_signed(2, 3), _signed(2, 1)]),
    "broadcast div": (lambda x, b: x / b, [_signed(2, 3), np.abs(_signed(1, 3))]),
    "sum over axis": (lambda x: eg.reduce_sum(x ** 3, axis=1) ** 2, [_signed(2, 3)]),
    "mean keepdims": (lambda x: x * eg.reduce_mean(x, axis=0, keepdims=True), [_signed(2, 3)]),
    "variance": (lambda x: x * eg.math.reduce_variance(x, axis=1, keepdims=True),
                 [_signed(2, 3)]),
    "std": (lambda x: eg.std(x ** 2, 0) * eg.math.reduce_std(x), [_signed(3, 2)]),
    "max over axis": (lambda x: eg.reduce_max(x ** 3, axis=1) ** 2, [_signed(2, 3)]),
    "integer indexing": (lambda x: x[INDEX] ** 3, [_signed(3, 2)]),
    "slicing": (lambda x: x[1:, ::2] ** 3, [_signed(3, 4)]),
    "gather": (lambda x: eg.gather(x, INDEX, axis=1) ** 3, [_signed(2, 3)]),
    "reshape": (lambda x: eg.reshape(x ** 2, (3, 2)) * eg.reshape(x, (3, 2)), [_signed(2, 3)]),
    "concat": (lambda x, y: eg.concat([x ** 2, x * y], 0) ** 2, [_signed(2, 3), _signed(1, 3)]),
    "stack": (lambda x, y: eg.stack([x ** 2, x * y]) ** 2, [_signed(2, 3), _signed(2, 3)]),
    "broadcast_to": (lambda x: eg.broadcast_to(x, (2, 3)) ** 3, [_signed(3)]),
    "maximum": (lambda x, y: eg.maximum(x ** 3, y * x), [_signed(2, 3), _signed(3)]),
    "where": (lambda x, y: eg.where(x > 0, x ** 3, y * x), [_signed(2, 3), _signed(3)]),
    "clip with tensor bounds": (lambda x, low: eg.clip(x ** 3, low, 1.0) * x,   # 1.3 > 1:
                                [_signed(2, 3), np.array([-0.8, 1.3, 0.6])]),   # crossed
    "pow of two tensors": (lambda x, y: x ** y, [np.abs(_signed(2, 3)), _signed(3)]),
    "batched matmul": (lambda a, b: eg.matmul(a, b) ** 2, [_signed(2, 2, 3), _signed(3, 2)]),
    "conv2d": (lambda x, w: eg.nn.conv2d(x, w, padding="same") ** 2,
               [_signed(1, 4, 4, 2), _signed(3, 3, 2, 2)]),
    "max_pool2d": (lambda x: eg.nn.max_pool2d(x ** 3, 2) ** 2, [_signed(1, 4, 4, 1)]),
    "softmax cross-entropy": (lambda logits, labels: eg.nn.softmax_cross_entropy_with_logits(
        labels=labels, logits=logits * logits), [_signed(2, 3), np.abs(_signed(2, 3))]),
}


@pytest.mark.parametrize("name", SECOND_ORDER)
def test_gradients_of_several_inputs_are_differentiable(device, name):
    """x ↦ (d/dx, d/dy...) of a weighted sum of f(x, y...) is itself gradchecked: second
    derivatives through broadcasting, indexing, gathers, convolutions and crossed bounds."""
    fn, values = SECOND_ORDER[name]

    def first_derivatives(*tensors):
        out = fn(*tensors)
        weights = eg.tensor(np.linspace(0.5, 1.5, out.size).reshape(out.shape),
                            device=out.device)
        grads = eg.grad(eg.reduce_sum(out * weights), list(tensors), create_graph=True)
        return eg.concat([eg.reshape(g, (-1,)) for g in grads], 0)

    gradcheck(first_derivatives, *values, device=device, name=f"d/d(inputs) {name}",
              atol=1e-5, rtol=1e-4)


# ----------------------------------------------------------------- values changed in place
def test_backward_refuses_a_variable_changed_after_an_op_that_needs_it(device):
    """PyTorch's "modified by an inplace operation": the old values are gone, so an error
    that names the op and the variable, not a gradient from the new values."""
    with eg.device(device):
        w = eg.Variable([1.0, 2.0], name="w")
    loss = eg.reduce_sum(w * w)
    w.assign(on(device, [3.0, 4.0]))
    with pytest.raises(eg.errors.GradientError,
                       match=r"^The gradient of mul needs the values of its variable 'w' "
                             r"\(shape \(2,\)\), but they were changed in place"):
        loss.backward()
    loss = eg.reduce_sum(w * w)                 # a fresh forward pass is fine
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [6.0, 8.0])


def test_a_change_the_gradient_does_not_need_is_allowed(device):
    """d(w·x)/dw reads only x: a step that assigns w inside the tape keeps working, as in TF."""
    x = on(device, [1.0, 2.0])
    with eg.device(device):
        w = eg.Variable([0.5, -1.0], name="w")
    with eg.GradientTape() as tape:
        loss = eg.reduce_sum(w * x)
        w.assign_sub(on(device, [0.1, 0.1]))
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), [1.0, 2.0])


def test_taking_gradients_one_at_a_time_between_assigns_is_refused():
    """The classic slip: update w2, then ask for w1's gradient (which needs the old w2)."""
    x = eg.tensor(np.ones((3, 2)))
    w1, w2 = eg.Variable(np.ones((2, 2)), name="w1"), eg.Variable(np.ones((2, 1)), name="w2")
    with eg.GradientTape(persistent=True) as tape:
        loss = eg.reduce_sum(x @ w1 @ w2)
    w2.assign_sub(0.1 * tape.gradient(loss, w2))
    with pytest.raises(eg.errors.GradientError, match="matmul needs the values of its "
                                                      "variable 'w2'"):
        tape.gradient(loss, w1)
    with eg.GradientTape() as tape:              # the right way: all gradients, then assigns
        loss = eg.reduce_sum(x @ w1 @ w2)
    g1, g2 = tape.gradient(loss, [w1, w2])
    w1.assign_sub(0.1 * g1)
    w2.assign_sub(0.1 * g2)
    np.testing.assert_allclose(g1.numpy(), np.full((2, 2), 3 * 0.4))


def test_data_assignment_and_traced_assigns_count_as_changes():
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    loss = eg.reduce_sum(x * x)
    x.data = [5.0, 5.0]
    with pytest.raises(eg.errors.GradientError, match=r"mul needs the values of an input \(shape"):
        loss.backward()
    w = eg.Variable([1.0, 2.0], name="w")
    loss = eg.reduce_sum(w * w)
    eg.function(lambda: w.assign_add([1.0, 1.0]))()      # writes w's storage when it runs
    with pytest.raises(eg.errors.GradientError, match="variable 'w'"):
        loss.backward()


VIEWS = {"transpose": lambda w: eg.transpose(w), "reshape": lambda w: eg.reshape(w, (3, 2)),
         "slice": lambda w: w[:, 1:], "detach": lambda w: w.detach()}


@pytest.mark.parametrize("view", VIEWS)
def test_a_view_of_a_changed_variable_changed_with_it(device, view):
    """A transpose, reshape, slice or detach shares the variable's array, so an assign
    changes its values too: a backward that reads them is refused, naming the variable."""
    with eg.device(device):
        w = eg.Variable(np.arange(6.0).reshape(2, 3), name="w", dtype=eg.float64)
    v = VIEWS[view](w)
    x = on(device, np.ones(v.shape), requires_grad=True)
    loss = eg.reduce_sum(v * x)
    w.assign_add(on(device, np.ones((2, 3))))
    with pytest.raises(eg.errors.GradientError,
                       match=rf"^The gradient of mul needs the values of an input \(shape "
                             rf"\({v.shape[0]}, {v.shape[1]}\)\) that is a view of variable 'w'"):
        loss.backward()
    x.requires_grad_(False)                     # w's gradient reads only x: still right
    loss = eg.reduce_sum(VIEWS[view](w) * x)
    w.assign_add(on(device, np.ones((2, 3))))
    if view == "detach":
        assert not loss.requires_grad           # (cut off from w: nothing to differentiate)
        return
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [[0, 1, 1], [0, 1, 1]] if view == "slice"
                                  else np.ones((2, 3)))


FILTERS = np.linspace(-1.0, 1.0, 4).reshape(2, 2, 1, 1)
SHAPE_ONLY = {      # programs whose gradient for w reads w's shape, never its values
    "sum": lambda w: eg.reduce_sum(w),
    "mean over an axis": lambda w: eg.reduce_sum(eg.reduce_mean(w, axis=0) * [1.0, 2.0, 3.0]),
    "sum of a slice": lambda w: eg.reduce_sum(w[1:, ::2]),
    "integer indexing": lambda w: eg.reduce_sum(w[[0, 1, 1]] * [[1.0], [2.0], [3.0]]),
    "gather": lambda w: eg.reduce_sum(eg.gather(w, eg.tensor([1, 1], device=w.device), axis=1)),
    "broadcast_to": lambda w: eg.reduce_sum(eg.broadcast_to(w, (4, 2, 3)) * 0.5),
    "reshape and transpose": lambda w: eg.reduce_sum(eg.transpose(eg.reshape(w, (3, 2)))),
    "conv2d's input": lambda w: eg.reduce_sum(eg.nn.conv2d(
        eg.reshape(w, (1, 2, 3, 1)), eg.tensor(FILTERS, device=w.device), padding="same")),
}


@pytest.mark.parametrize("program", SHAPE_ONLY)
def test_a_change_only_shapes_depend_on_is_allowed(device, program):
    """Reductions, indexing, gather, broadcasting and a conv's input gradient need only w's
    shape, so changing w before backward leaves its gradient right (as in TF and PyTorch)."""
    with eg.device(device):
        w, untouched = (eg.Variable(np.arange(6.0).reshape(2, 3), name="w", dtype=eg.float64)
                        for _ in range(2))
    SHAPE_ONLY[program](untouched).backward()
    loss = SHAPE_ONLY[program](w)
    w.assign_add(on(device, np.full((2, 3), 10.0)))
    loss.backward()
    np.testing.assert_array_equal(w.grad.numpy(), untouched.grad.numpy())
    assert np.any(w.grad.numpy() != 0)


def test_data_assignment_leaves_views_of_the_old_array_alone(device):
    """``w.data = ...`` gives w a new array: a reshape taken before still holds the values the
    forward pass used, so backward through it is right (no refusal)."""
    w = on(device, np.arange(6.0).reshape(2, 3), requires_grad=True)
    x = on(device, np.ones((3, 2)), requires_grad=True)
    loss = eg.reduce_sum(eg.reshape(w, (3, 2)) * x)
    w.data = np.zeros((2, 3))
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(w.grad.numpy(), np.ones((2, 3)))


def test_a_variables_numpy_and_read_value_keep_the_values_they_had(device):
    """TF's v.numpy() and v.read_value() are snapshots; they shared the variable's storage,
    so history.append(w.numpy()) in a training loop kept only the last step."""
    w = eg.Variable(on(device, [1.0, 2.0]))
    history, read = [w.numpy()], w.read_value()
    w.assign_sub(on(device, [1.0, 1.0]))
    history.append(w.numpy())
    np.testing.assert_array_equal(history, [[1, 2], [0, 1]])
    np.testing.assert_array_equal(read.numpy(), [1, 2])
    x = on(device, [1.0, 1.0], requires_grad=True)
    loss = eg.reduce_sum(w.read_value() * x)
    w.assign([5.0, 5.0])
    loss.backward()                     # reads the snapshot: no refusal, the old values
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1])
    plain = on(device, [1.0, 2.0])
    if device == "cpu:0":               # a plain tensor's numpy() shares, as in PyTorch
        assert np.shares_memory(plain.numpy(), plain._value)


def test_assign_refuses_values_it_would_truncate_or_cast(device):
    counts = eg.Variable(on(device, [1, 2]))
    with pytest.raises(TypeError, match="float64 values to variable .* int64: they would be "
                                        "truncated"):
        counts.assign_add([0.5, 0.5])           # (silently added 0)
    weights = eg.Variable(on(device, [1.0, 2.0]))
    with pytest.raises(TypeError, match=r"a float64 tensor to variable .* float32; cast it "
                                        r"first, e.g. eg.cast\(value, eg.float32\)"):
        weights.assign(on(device, [1.0, 2.0], dtype=eg.float64))
    weights.assign([3, 4])                      # ints into floats, as in TF
    counts.assign_add(on(device, [1, 1]))
    np.testing.assert_array_equal(weights.numpy(), [3, 4])
    np.testing.assert_array_equal(counts.numpy(), [2, 3])


def test_assign_takes_tf_arguments_and_function_spelling_eagerly(device):
    """The slides' ``w1.assign(w1 - lr * grad1, name='update_w1')`` and TF1's ``tf.assign``
    run eagerly too (the name names a graph node; eagerly there is none)."""
    w = eg.Variable(on(device, [1.0, 2.0]))
    assert w.assign(w - 0.5, name="update_w") is w
    eg.assign_add(w, on(device, [1.0, 1.0]), name="step")
    eg.assign_sub(w, on(device, [0.25, 0.25]))      # (a number: refused, as in TF)
    eg.assign(w, eg.reduce_sum(w) * on(device, [1.0, 0.5]))
    np.testing.assert_allclose(w.numpy(), [3.5, 1.75])


IN_PLACE_PROGRAMS = {   # name: (edugraph, torch), each f(w, x) with w changed after it runs
    "w * w": (lambda w, x: w * w, lambda w, x: w * w),
    "w * x": (lambda w, x: w * x, lambda w, x: w * x),
    "sum(w) * x": (lambda w, x: eg.reduce_sum(w) * x, lambda w, x: w.sum() * x),
    "w[0] * x": (lambda w, x: w[0] * x, lambda w, x: w[0] * x),
    "w.T[0] * x": (lambda w, x: eg.transpose(w)[0] * x[:2], lambda w, x: w.T[0] * x[:2]),
    "w[[1, 0]] * x": (lambda w, x: w[[1, 0]] * x, lambda w, x: w[[1, 0]] * x),
    "exp(w)": (lambda w, x: eg.exp(w), lambda w, x: w.exp()),
    "w.detach() * x": (lambda w, x: w.detach() * x, lambda w, x: w.detach() * x),
}


@pytest.mark.parametrize("program", IN_PLACE_PROGRAMS)
def test_refuses_exactly_what_pytorch_refuses_after_an_in_place_change(program):
    """The same programs, the same change: edugraph refuses where PyTorch raises "modified by
    an inplace operation" and otherwise gives PyTorch's gradients."""
    torch = pytest.importorskip("torch")
    ours, theirs = IN_PLACE_PROGRAMS[program]
    start, x_value = np.arange(6.0).reshape(2, 3) - 2.0, np.array([0.5, -1.0, 2.0])
    w, x = eg.Variable(start, name="w", dtype=eg.float64), eg.tensor(x_value, requires_grad=True)
    tw = torch.tensor(start, requires_grad=True)
    tx = torch.tensor(x_value, requires_grad=True)
    loss, torch_loss = eg.reduce_sum(ours(w, x)), theirs(tw, tx).sum()
    w.assign_add(np.ones((2, 3)))
    with torch.no_grad():
        tw.add_(1.0)
    try:
        torch_loss.backward()
    except RuntimeError as e:
        assert "modified by an inplace operation" in str(e)
        with pytest.raises(eg.errors.GradientError, match="changed in place"):
            loss.backward()
        return
    loss.backward()
    for ours_, theirs_ in ((w, tw), (x, tx)):
        expected = theirs_.grad
        assert (ours_.grad is None) == (expected is None)
        if expected is not None:
            np.testing.assert_allclose(ours_.grad.numpy(), expected.numpy())


def test_pytorch_keywords_of_backward_and_grad():
    """backward(gradient=..., retain_graph=..., inputs=...) and autograd.grad's argument order
    (outputs, inputs, grad_outputs, retain_graph, create_graph) as in PyTorch."""
    torch = pytest.importorskip("torch")
    x0, w0 = np.array([1.0, 2.0]), np.array([3.0, -4.0])
    ours = [eg.tensor(a, requires_grad=True) for a in (x0, w0)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x0, w0)]
    for (x, w), lib in ((ours, eg), (theirs, torch)):
        y = x * w
        seed = lib.tensor([1.0, 0.5], dtype=lib.float64)
        y.backward(gradient=seed, retain_graph=True)
        (y * y).sum().backward(inputs=[x])          # w.grad stays as it was
    for mine, ref in zip(ours, theirs):
        np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy())
    x, w = ours
    (g,) = eg.grad((x * w).sum(), [x], None, True, True)     # retain_graph, create_graph
    assert g.requires_grad
    np.testing.assert_allclose(g.numpy(), w0)
