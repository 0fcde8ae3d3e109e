"""What a Session's plan does to go fast, and that none of it changes a result.

Each test runs the same graph optimised and as written (``Session(optimize=False)``).
"""
import numpy as np
import pytest

import edugraph as eg


@pytest.fixture
def graph():
    with eg.Graph().as_default() as g:
        yield g


def _plan(sess):
    (plan,) = [p for p in sess._plans.values() if len(p.steps) > 2]
    return plan


def _two_layer_step(optimizer):
    rng = np.random.default_rng(0)
    x = eg.placeholder(eg.float32, shape=(8, 5))
    y = eg.placeholder(eg.float32, shape=(8, 3))
    w1 = eg.Variable(rng.standard_normal((5, 4)).astype(np.float32))
    w2 = eg.Variable(rng.standard_normal((4, 3)).astype(np.float32))
    loss = eg.reduce_mean(eg.reduce_sum(
        (eg.matmul(eg.maximum(eg.matmul(x, w1), 0), w2) - y) ** 2, axis=1))
    train = optimizer.minimize(loss)
    feeds = {x: rng.standard_normal((8, 5)).astype(np.float32),
             y: rng.standard_normal((8, 3)).astype(np.float32)}
    return loss, train, [w1, w2], feeds


@pytest.mark.parametrize("optimizer", [eg.train.GradientDescentOptimizer(0.01),
                                       eg.train.MomentumOptimizer(0.01, 0.9),
                                       eg.train.AdamOptimizer(0.01)])
def test_training_steps_give_the_same_weights_optimised_or_not(graph, optimizer):
    loss, train, weights, feeds = _two_layer_step(optimizer)
    results = []
    for optimize in (True, False):
        with eg.Session(optimize=optimize) as sess:
            sess.run(eg.global_variables_initializer())
            losses = [sess.run([loss, train], feeds)[0] for _ in range(5)]
            results.append((losses, sess.run(weights)))
    (losses, weights), (plain_losses, plain_weights) = results
    np.testing.assert_allclose(losses, plain_losses, rtol=1e-5)
    for w, plain in zip(weights, plain_weights):
        np.testing.assert_allclose(w, plain, rtol=1e-5, atol=1e-6)


def test_weight_updates_become_assign_sub(graph):
    loss, train, _, feeds = _two_layer_step(eg.train.GradientDescentOptimizer(0.01))
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        sess.run(train, feeds)
        types = [op.type for op in _plan(sess).graph.get_operations()]
    assert types.count("AssignSub") == 2 and "Assign" not in types


def test_an_update_whose_difference_is_fetched_too_is_left_alone(graph):
    v = eg.Variable(np.float32(5.0))
    new = v - 1.0
    step = v.assign(new)
    with eg.Session() as sess:
        sess.run(v.initializer)
        assert sess.run([new, step]) == [4.0, 4.0]
        assert "AssignSub" not in [op.type for op in _plan(sess).graph.get_operations()]


def test_an_update_is_left_alone_when_another_assign_writes_the_variable(graph):
    v = eg.Variable(np.float32(5.0))
    new = v - 1.0                       # computed from the value before doubling
    double = v.assign(v * 2)
    step = v.assign(new)
    with eg.Session() as sess:
        sess.run(v.initializer)
        sess.run([double, step])
        assert sess.run(v) == 4.0


def test_a_uniform_constant_gradient_becomes_one_number(graph):
    x = eg.placeholder(eg.float32, shape=(4, 3))
    (grad,) = eg.gradients(eg.reduce_mean(x * x), [x])
    value = np.arange(12, dtype=np.float32).reshape(4, 3)
    with eg.Session() as sess:
        np.testing.assert_allclose(sess.run(grad, {x: value}), 2 * value / 12, rtol=1e-6)
        plan = next(iter(sess._plans.values()))
    used = [v for v in plan.initial if v is not None]      # the constants the plan reads
    assert used and all(v.size == 1 for v in used)


def test_values_are_dropped_after_their_last_use_but_fetches_are_kept(graph):
    x = eg.placeholder(eg.float32, shape=(3,))
    a = x * 2
    b = eg.exp(a)
    c = eg.reduce_sum(b)
    with eg.Session(optimize=False) as sess:
        a_val, c_val = sess.run([a, c], {x: np.ones(3, np.float32)})
        plan = next(iter(sess._plans.values()))
    np.testing.assert_allclose(a_val, [2, 2, 2])
    np.testing.assert_allclose(c_val, 3 * np.exp(2), rtol=1e-6)
    dropped = [i for *_, drop in plan.steps for i in drop]
    kept = set(plan.fetch_slots)
    assert dropped and not kept & set(dropped)
    assert len(dropped) == len(set(dropped))           # each value dropped once


COMPARES = [eg.less, eg.less_equal, eg.greater, eg.greater_equal, eg.equal, eg.not_equal,
            lambda a, b: eg.logical_and(a < b, a <= b), lambda a, b: eg.logical_or(a < b, a <= b)]
XS, YS = np.array([1, 2, 3], np.float32), np.array([2, 2, 2], np.float32)
EXPECTED = [XS < YS, XS <= YS, XS > YS, XS >= YS, XS == YS, XS != YS, XS < YS, XS <= YS]


def test_different_comparisons_of_the_same_inputs_stay_apart(graph):
    """Common-subexpression elimination merges only the *same* op: x < y and x > y show no
    attributes, yet must not become one node."""
    x, y = eg.placeholder(eg.float32, shape=(3,)), eg.placeholder(eg.float32, shape=(3,))
    with eg.Session() as sess:
        got = sess.run([compare(x, y) for compare in COMPARES], {x: XS, y: YS})
    for i, (g, e) in enumerate(zip(got, EXPECTED)):
        np.testing.assert_array_equal(g, e, err_msg=f"comparison {i}")


def test_different_comparisons_stay_apart_in_a_traced_function():
    @eg.function
    def all_comparisons(a, b):
        return [compare(a, b) for compare in COMPARES]

    for i, (g, e) in enumerate(zip(all_comparisons(eg.tensor(XS), eg.tensor(YS)), EXPECTED)):
        np.testing.assert_array_equal(g.numpy(), e, err_msg=f"traced comparison {i}")


def test_filled_tensors_optimised_or_not(graph):
    """Ops that make filled tensors (zeros, fill, zeros_like of a batch known only when fed)
    give arrays of their shape and dtype either way (as written, eg.zeros once gave 0)."""
    x = eg.placeholder(eg.float32, shape=(None, 2))
    fetches = [eg.zeros((2, 3)), eg.fill((2,), 7.0, eg.float64), eg.ones((1,), eg.int32),
               eg.zeros_like(x), eg.ones_like(x, dtype=eg.float64)]
    assert fetches[3].shape.as_list() == [None, 2] and fetches[4].dtype == eg.float64
    expected = [np.zeros((2, 3), np.float32), np.full(2, 7.0), np.ones(1, np.int32),
                np.zeros((3, 2), np.float32), np.ones((3, 2))]
    for optimize in (False, True):
        with eg.Session(optimize=optimize) as sess:
            got = sess.run(fetches, {x: np.ones((3, 2), np.float32)})
        for g, e in zip(got, expected):
            assert g.dtype == e.dtype and g.shape == e.shape, (optimize, g, e)
            np.testing.assert_array_equal(g, e)


@pytest.mark.parametrize("make, expected", [(lambda x: x * 1.0, 1.0), (lambda x: x + 0.0, 1.0),
                                            (eg.identity, 1.0), (lambda x: x * 2.0, 2.0)],
                         ids=["times_one", "plus_zero", "identity", "times_two"])
def test_a_fetch_folded_into_a_variable_read_keeps_its_value(graph, make, expected):
    """Folding makes x * 1.0 the read of x; fetched, it still shows the value it was computed
    with (as TF does), not x after the run's update, which only a fetched variable shows."""
    x = eg.Variable(1.0)
    y = make(x)
    update = x.assign(x + 10)
    for optimize in (True, False):
        with eg.Session(optimize=optimize) as sess:
            sess.run(x.initializer)
            assert sess.run([y, update]) == [expected, 11.0]
            assert sess.run(x) == 11.0
