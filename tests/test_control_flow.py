"""eg.cond and eg.while_loop: values and gradients in eager mode, in a Session and in a traced
function (checked against central differences in float64), what runs, and the error messages."""
import numpy as np
import pytest

import edugraph as eg

X = np.array([0.7, -1.2, 0.4])            # sum(X) < 0
W = 1.3


def piecewise(x, w):
    """A different formula on each side of sum(x) = 0."""
    return eg.cond(eg.reduce_sum(x) > 0,
                   lambda: eg.reduce_sum(eg.tanh(x * w) * w),
                   lambda: eg.reduce_sum(eg.exp(x) * w * w))


def power_loop(x, w, n):
    """x * w**n by repeated multiplication, n a tensor: the loop runs n times."""
    _, y = eg.while_loop(lambda i, y: i < n, lambda i, y: (i + 1, y * w), [0, x])
    return eg.reduce_sum(y)


def numeric_grads(fn, x, w, eps=1e-6):
    gx = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d[i] = eps
        gx[i] = (fn(x + d, w) - fn(x - d, w)) / (2 * eps)
    gw = (fn(x, w + eps) - fn(x, w - eps)) / (2 * eps)
    return gx, gw


def eager_run(f, x, w, *extra):
    xt = eg.tensor(x, requires_grad=True)
    wt = eg.tensor(w, dtype=eg.float64, requires_grad=True)
    y = f(xt, wt, *[eg.tensor(e, dtype=eg.int32) for e in extra])
    y.backward()
    if wt.grad is None:                     # the loop ran 0 times: w was never used
        return float(y), xt.grad.numpy(), 0.0
    return float(y), xt.grad.numpy(), float(wt.grad)


def session_run(f, x, w, *extra):
    with eg.Graph().as_default():
        xp = eg.placeholder(eg.float64, x.shape, name="x")
        wp = eg.placeholder(eg.float64, (), name="w")
        ep = [eg.placeholder(eg.int32, (), name="n") for _ in extra]
        y = f(xp, wp, *ep)
        gx, gw = eg.gradients(y, [xp, wp])
        with eg.Session() as sess:
            feed = {xp: x, wp: w, **dict(zip(ep, extra))}
            value, gxv, gwv = sess.run([y, gx, gw], feed)
    return float(value), gxv, float(gwv)


def traced_run(f, x, w, *extra):
    @eg.function
    def step(x, w, *extra):
        with eg.GradientTape() as tape:
            tape.watch([x, w])
            y = f(x, w, *extra)
        return y, tape.gradient(y, [x, w])
    y, (gx, gw) = step(x, np.float64(w), *[np.int32(e) for e in extra])
    return float(y), gx.numpy(), float(gw)


MODES = {"eager": eager_run, "session": session_run, "traced": traced_run}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sign", [1, -1])
def test_cond_values_and_gradients(mode, sign):
    x = X * sign                            # sum > 0 takes the true branch, < 0 the false one

    def plain(xv, wv):
        return np.sum(np.tanh(xv * wv) * wv) if xv.sum() > 0 else np.sum(np.exp(xv) * wv * wv)
    y, gx, gw = MODES[mode](piecewise, x, W)
    nx, nw = numeric_grads(plain, x, W)
    assert y == pytest.approx(plain(x, W), rel=1e-12)
    np.testing.assert_allclose(gx, nx, rtol=1e-6, atol=1e-8)
    assert gw == pytest.approx(nw, rel=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n", [0, 1, 4])
def test_while_loop_values_and_gradients(mode, n):
    def plain(xv, wv):
        return np.sum(xv * wv ** n)
    y, gx, gw = MODES[mode](power_loop, X, W, n)
    nx, nw = numeric_grads(plain, X, W)
    assert y == pytest.approx(plain(X, W), rel=1e-12)
    np.testing.assert_allclose(gx, nx, rtol=1e-6, atol=1e-8)
    assert gw == pytest.approx(nw, rel=1e-6, abs=1e-9)


def test_one_session_graph_decides_at_run_time():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float64, (3,))
        n = eg.placeholder(eg.int32, ())
        y = power_loop(x, 2.0, n)
        z = piecewise(x, 2.0)
        with eg.Session() as sess:
            assert [sess.run(y, {x: X, n: k}) for k in (0, 1, 3)] == pytest.approx(
                [X.sum(), 2 * X.sum(), 8 * X.sum()])
            assert sess.run(z, {x: -X}) == pytest.approx(np.sum(np.tanh(-2 * X) * 2))
            assert sess.run(z, {x: X}) == pytest.approx(np.sum(np.exp(X) * 4))
        types = [op.type for op in eg.get_default_graph().get_operations()]
    assert "If" in types and "While" in types


def test_cond_runs_only_the_chosen_branch():
    hits = eg.Variable(np.zeros(2))

    @eg.function
    def count(flag):
        return eg.cond(flag, lambda: hits.assign_add([1.0, 0.0]),
                       lambda: hits.assign_add([0.0, 1.0]))

    for flag in (True, True, False, True):
        count(np.bool_(flag))
    np.testing.assert_allclose(hits.numpy(), [3, 1])
    assert count.experimental_get_tracing_count() == 1


def test_while_loop_body_with_an_assign_and_a_cond_inside():
    total = eg.Variable(0.0)

    @eg.function
    def collatz_steps(start):
        def body(i, x):
            total.assign_add(1.0)
            even = eg.equal(eg.floormod(x, 2), 0)
            return i + 1, eg.cond(even, lambda: eg.floordiv(x, 2), lambda: 3 * x + 1)
        steps, _ = eg.while_loop(lambda i, x: x > 1, body, [eg.constant(0), start])
        return steps

    assert int(collatz_steps(np.int32(6))) == 8           # 6 3 10 5 16 8 4 2 1
    assert int(collatz_steps(np.int32(1))) == 0
    assert float(total.numpy()) == 8.0


def test_maximum_iterations_and_single_loop_variable():
    x = eg.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, [eg.tensor(1.0)],
                      maximum_iterations=3)
    assert float(x) == 8.0

    @eg.function
    def f(start):
        return eg.while_loop(lambda v: v < 100.0, lambda v: v * 2.0, start,
                             maximum_iterations=3)
    assert float(f(np.float32(1.0))) == 8.0
    assert float(f(np.float32(30.0))) == 120.0


def test_second_derivative_through_cond():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float64, ())
        y = eg.cond(x > 0, lambda: x ** 3, lambda: -x)
        (dy,) = eg.gradients(y, [x])
        (d2y,) = eg.gradients(dy, [x])
        with eg.Session() as sess:
            assert sess.run([dy, d2y], {x: 2.0}) == pytest.approx([12.0, 12.0])
            assert sess.run([dy, d2y], {x: -2.0}) == pytest.approx([-1.0, 0.0])


def test_cond_with_a_python_bool_just_calls_the_branch():
    assert eg.cond(True, lambda: 1, lambda: 2) == 1
    assert float(eg.cond(eg.tensor(False), lambda: eg.tensor(1.0), lambda: eg.tensor(2.0))) \
        == 2.0


# ----------------------------------------------------------------------------- errors
def _graph_error(fn):
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (3,))
        return fn(x)


def test_branches_with_different_structures_are_named():
    with pytest.raises(ValueError, match=r"same structure.*true_fn returned.*false_fn "
                                         r"returned"):
        _graph_error(lambda x: eg.cond(eg.reduce_sum(x) > 0, lambda: (x, x), lambda: x))


def test_branches_with_different_shapes_or_dtypes_are_named():
    with pytest.raises(ValueError, match=r"shape \(3,\) in true_fn.*\(1,\) in false_fn"):
        _graph_error(lambda x: eg.cond(eg.reduce_sum(x) > 0, lambda: x,
                                       lambda: eg.reduce_sum(x, keepdims=True)))
    with pytest.raises(TypeError, match="float32 in true_fn.*int32 in false_fn.*eg.cast"):
        _graph_error(lambda x: eg.cond(eg.reduce_sum(x) > 0, lambda: x,
                                       lambda: eg.cast(x, eg.int32)))


def test_predicate_must_be_a_scalar_bool():
    with pytest.raises(TypeError, match="scalar boolean.*shape \\(3,\\)"):
        _graph_error(lambda x: eg.cond(x > 0, lambda: x, lambda: -x))
    with pytest.raises(TypeError, match="scalar boolean.*float32"):
        _graph_error(lambda x: eg.cond(eg.reduce_sum(x), lambda: x, lambda: -x))
    with pytest.raises(TypeError, match="scalar boolean"):
        eg.cond(eg.tensor([1.0, 2.0]) > 0, lambda: 1, lambda: 2)


def test_while_body_must_keep_shapes():
    with pytest.raises(ValueError, match=r"loop variable 0 enters the loop as float32 "
                                         r"\(3,\).*returns float32 \(6,\)"):
        _graph_error(lambda x: eg.while_loop(lambda v: eg.reduce_sum(v) < 10,
                                             lambda v: eg.concat([v, v], 0), [x]))


def test_variables_cannot_be_created_in_branches():
    @eg.function
    def f(x):
        return eg.cond(x > 0, lambda: x * eg.Variable(1.0), lambda: x)

    with pytest.raises(ValueError, match="outside the branch"):
        f(np.float32(1.0))
