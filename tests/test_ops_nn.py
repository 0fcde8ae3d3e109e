"""Activations, the softmax family and dropout: values, gradients, stability, randomness."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import edugraph as eg
from tests.gradcheck import gradcheck
from tests.strategies import arrays, checks, shapes


def on(device, a, **kw):
    return eg.tensor(a, device=device, **kw)


def np_softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


ACTIVATIONS = {   # name: (edugraph function, numpy reference, kinks to keep away from)
    "relu": (eg.nn.relu, lambda x: np.maximum(x, 0), (0,)),
    "leaky_relu": (eg.nn.leaky_relu, lambda x: np.where(x > 0, x, 0.2 * x), (0,)),
    "sigmoid": (eg.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x)), ()),
    "tanh": (eg.nn.tanh, np.tanh, ()),
    "softplus": (eg.nn.softplus, lambda x: np.log1p(np.exp(x)), ()),
    "elu": (eg.nn.elu, lambda x: np.where(x > 0, x, np.exp(x) - 1), (0,)),
    "elu_alpha": (lambda x: eg.nn.elu(x, alpha=0.5),
                  lambda x: np.where(x > 0, x, 0.5 * np.expm1(x)), (0,)),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
@checks
@given(data=st.data(), shape=shapes())
def test_activations(device, name, data, shape):
    fn, ref, kinks = ACTIVATIONS[name]
    x = data.draw(arrays(shape, -4, 4, avoid=kinks))
    np.testing.assert_allclose(fn(on(device, x)).numpy(), ref(x), rtol=1e-12)
    gradcheck(fn, x, device=device, name=name)


def test_activation_spellings(device):
    x = on(device, [-1.0, 2.0])
    for fn in (eg.relu, eg.sigmoid, eg.tanh, eg.leaky_relu, eg.nn.leaky_relu):
        assert fn(x).shape == (2,)
    np.testing.assert_array_equal(x.relu().numpy(), [0, 2])
    np.testing.assert_allclose(eg.nn.leaky_relu(x, alpha=0.01).numpy(), [-0.01, 2])
    np.testing.assert_allclose(x.sigmoid().numpy(), eg.sigmoid(x).numpy())
    np.testing.assert_allclose(x.tanh().numpy(), np.tanh([-1.0, 2.0]), rtol=1e-6)


def test_softplus_and_elu_stay_finite_and_exact_far_out(device):
    """softplus(x) = log(1 + eˣ) would overflow at x = 800 and lose x = −40's e⁻⁴⁰ if
    written as it reads; elu saturates at −α."""
    x = on(device, [-800.0, -40.0, 40.0, 800.0], dtype=eg.float64)
    np.testing.assert_allclose(eg.nn.softplus(x).numpy(), [0.0, np.exp(-40.0), 40.0, 800.0],
                               rtol=1e-15)
    np.testing.assert_array_equal(eg.nn.elu(x, alpha=2.0).numpy()[:2], [-2.0, -2.0])
    assert eg.keras.layers.Dense(2, activation="softplus").activation is eg.nn.softplus


def test_integer_inputs_give_float32(device):
    """Activations that leave the integers compute in float32, as in PyTorch (numpy would
    give float64); relu keeps an integer tensor integer."""
    ints = on(device, [-2, 3])
    for fn in (eg.nn.sigmoid, eg.nn.tanh, eg.nn.softmax, eg.nn.leaky_relu,
               lambda t: eg.nn.dropout(t, 0.5, seed=0)):
        assert fn(ints).dtype == eg.float32
    np.testing.assert_allclose(eg.nn.leaky_relu(ints).numpy(), [-0.4, 3], rtol=1e-6)
    assert eg.nn.relu(ints).dtype == eg.int64


def test_relu_gradient_at_zero_is_zero(device):
    """As in TF and PyTorch: relu'(0) = 0."""
    x = on(device, [-1.0, 0.0, 2.0], requires_grad=True)
    eg.nn.relu(x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 0, 1])


def test_relu_backward_is_one_relu_grad_node_as_in_tf():
    """TF's gradient graph shows one ReluGrad per relu; its own gradient is the same mask."""
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float64, shape=(3,))
        (g,) = eg.gradients(eg.reduce_sum(eg.nn.relu(x) * 2.0), [x])
        (gg,) = eg.gradients(eg.reduce_sum(g * x), [x])
    types = [op.type for op in graph.get_operations()]
    assert types.count("ReluGrad") >= 2 and "Greater" not in types and "Cast" not in types
    with eg.Session(graph=graph) as sess:
        grad, second = sess.run([g, gg], {x: [-1.0, 0.0, 3.0]})
    np.testing.assert_array_equal(grad, [0, 0, 2])     # d(2·relu(x))/dx
    np.testing.assert_array_equal(second, [0, 0, 2])    # d(g·x)/dx = g: relu_grad is linear in g


def test_relu_second_derivatives_match_finite_differences(device):
    """Through relu_grad's own backward: d/dw of (dloss/dx · v) in a relu net."""
    rng = np.random.default_rng(0)
    x0, v = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))

    def first_derivative_along_v(w):
        x = on(device, x0, requires_grad=True)
        (g,) = eg.grad(eg.reduce_sum(eg.nn.relu(x @ w) ** 2), [x], create_graph=True)
        return eg.reduce_sum(g * on(device, v))
    gradcheck(first_derivative_along_v, rng.standard_normal((3, 5)), device=device,
              name="relu second derivative")


def test_sigmoid_and_tanh_saturate_without_overflow(device):
    x = on(device, [-1e4, -50.0, 0.0, 50.0, 1e4], requires_grad=True)
    with np.errstate(over="raise"):
        s = eg.nn.sigmoid(x)
    np.testing.assert_allclose(s.numpy(), [0, 1 / (1 + np.exp(50.0)), 0.5, 1, 1], atol=1e-30)
    s.sum().backward()
    assert np.isfinite(x.grad.numpy()).all() and x.grad.numpy()[0] == 0
    np.testing.assert_array_equal(eg.nn.tanh(x).numpy(), [-1, -1, 0, 1, 1])


@pytest.mark.parametrize("op, ref", [(eg.nn.softmax, np_softmax),
                                     (eg.nn.log_softmax,
                                      lambda x, axis: np.log(np_softmax(x, axis)))])
@checks
@given(data=st.data(), shape=shapes(min_dims=1))
def test_softmax_family(device, op, ref, data, shape):
    x = data.draw(arrays(shape, -3, 3))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    got = op(on(device, x), axis)
    np.testing.assert_allclose(got.numpy(), ref(x, axis), rtol=1e-10, atol=1e-12)
    gradcheck(lambda t: op(t, axis), x, device=device, name=f"{op.__name__} axis={axis}")


def test_softmax_rows_sum_to_one_and_methods(device):
    x = on(device, np.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(x.softmax(dim=0).numpy().sum(0), [1, 1, 1], rtol=1e-6)
    np.testing.assert_allclose(x.log_softmax().numpy(), eg.nn.log_softmax(x).numpy())


@pytest.mark.parametrize("dtype", [eg.float32, eg.float64])
def test_softmax_family_is_stable_for_huge_inputs(device, dtype):
    x = on(device, [[1e4, 1e4 - 1.0, -1e4], [-1e4, -1e4, -1e4]], dtype=dtype,
           requires_grad=True)
    e = np.exp(-1.0)
    p = eg.nn.softmax(x)
    np.testing.assert_allclose(p.numpy(), [[1 / (1 + e), e / (1 + e), 0], [1 / 3] * 3],
                               rtol=1e-6)
    logp = eg.nn.log_softmax(x)
    np.testing.assert_allclose(logp.numpy()[0, :2], [-np.log1p(e), -1 - np.log1p(e)],
                               rtol=1e-6)
    assert logp.numpy()[0, 2] < -1e4 and np.isfinite(logp.numpy()).all()
    (logp[:, 0].sum() + (p * p).sum()).backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_dropout_is_seeded_and_reproducible(device):
    """A seeded op draws anew at each eager call, and the sequence restarts with set_seed
    (TF2: the op's kernel counts its calls; tf.random.set_seed resets the counters). It
    repeated its first mask at every call, so a seeded Dropout layer dropped the same units at
    every training step."""
    x = on(device, np.ones((50, 40)))
    a = eg.nn.dropout(x, rate=0.3, seed=7).numpy()
    b = eg.nn.dropout(x, rate=0.3, seed=7).numpy()
    assert not np.array_equal(a, b)
    eg.random.set_seed(0)
    np.testing.assert_array_equal(eg.nn.dropout(x, rate=0.3, seed=7).numpy(), a)
    np.testing.assert_array_equal(eg.nn.dropout(x, rate=0.3, seed=7).numpy(), b)
    eg.random.set_seed(3)
    c = eg.nn.dropout(x, rate=0.3).numpy()
    eg.random.set_seed(3)
    np.testing.assert_array_equal(eg.nn.dropout(x, rate=0.3).numpy(), c)
    assert not np.array_equal(c, eg.nn.dropout(x, rate=0.3).numpy())   # the stream moves on


def test_seeded_ops_go_on_eagerly_and_each_node_keeps_its_own_in_a_traced_function():
    """tf.random.set_seed's documented rules: eagerly, the calls of an op with the same seeds
    continue one sequence (A1, then A2), restarted by set_seed; in a tf.function each op is a
    node with a sequence of its own ((A1, A1), then (A2, A2)). Eager calls repeated A1."""
    first, second = (eg.random.uniform((3,), seed=1).numpy() for _ in range(2))
    assert not np.array_equal(first, second)
    eg.random.set_seed(0)
    np.testing.assert_array_equal(eg.random.uniform((3,), seed=1).numpy(), first)

    @eg.function
    def two_draws():
        return eg.random.uniform((3,), seed=1), eg.random.uniform((3,), seed=1)
    calls = [[t.numpy() for t in two_draws()] for _ in range(2)]
    np.testing.assert_array_equal(calls[0], [first, first])
    np.testing.assert_array_equal(calls[1], [second, second])


def test_dropout_scales_the_kept_values(device):
    """Inverted dropout: kept values are divided by 1 - rate, so the mean is unchanged."""
    x = on(device, np.full((200, 100), 2.0, dtype=np.float32), requires_grad=True)
    y = eg.nn.dropout(x, rate=0.25, seed=1)
    values = y.numpy()
    assert set(np.unique(values)) == {0.0, np.float32(2.0 / 0.75)}
    assert abs((values == 0).mean() - 0.25) < 0.02
    assert abs(values.mean() - 2.0) < 0.05
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy() != 0, values != 0)   # grad through the mask
    np.testing.assert_allclose(x.grad.numpy()[values != 0], 1 / 0.75, rtol=1e-6)


def test_dropout_is_identity_at_inference(device):
    x = on(device, [1.0, 2.0, 3.0], requires_grad=True)
    assert eg.nn.dropout(x, rate=0.9, training=False) is x
    assert eg.nn.dropout(x, rate=0.0) is x
    with pytest.raises(ValueError, match="rate"):
        eg.nn.dropout(x, rate=1.0)


def test_dropout_in_a_graph_with_unknown_batch_size():
    """The mask is an op on x, so it takes x's shape at run time (batch size None here)."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, [None, 4])
        y = eg.nn.dropout(x, rate=0.5, seed=1)
        with eg.Session() as sess:
            for batch in (2, 300):
                out = sess.run(y, {x: np.ones((batch, 4))})
                assert out.shape == (batch, 4) and set(np.unique(out)) <= {0.0, 2.0}
    assert abs((out == 0).mean() - 0.5) < 0.1


def test_dropout_draws_the_same_mask_in_graphs_and_eagerly():
    """A seeded dropout op's first run matches eager dropout with that seed: building the
    graph uses up no random draws."""
    data = np.ones((3, 4), dtype=np.float32)
    eager = eg.nn.dropout(eg.tensor(data), rate=0.5, seed=5).numpy()
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, [None, 4])
        y = eg.nn.dropout(x, rate=0.5, seed=5)
        with eg.Session() as sess:
            np.testing.assert_array_equal(sess.run(y, {x: data}), eager)


def test_dropout_keep_prob_fed_through_a_placeholder_as_in_tf1():
    """TF1's "Deep MNIST" pattern: ``tf.nn.dropout(h, keep_prob=keep_prob)`` with keep_prob a
    placeholder fed 0.5 to train and 1.0 to test (a tensor rate was refused with a message
    about Python ``if``)."""
    data = np.ones((40, 50), dtype=np.float32)
    with eg.Graph().as_default():
        h = eg.placeholder(eg.float32, [None, 50])
        keep_prob = eg.placeholder(eg.float32)
        dropped = eg.nn.dropout(h, keep_prob=keep_prob, seed=2)
        (grad,) = eg.gradients(eg.reduce_sum(dropped), h)
        with eg.Session() as sess:
            train, train_grad = sess.run([dropped, grad], {h: data, keep_prob: 0.5})
            test = sess.run(dropped, {h: data, keep_prob: 1.0})
            with pytest.raises(eg.errors.InvalidArgumentError, match=r"dropout: the rate must "
                               r"be a number in \[0, 1\) \(a keep_prob in \(0, 1\]\)"):
                sess.run(dropped, {h: data, keep_prob: 0.0})
    assert set(np.unique(train)) == {0.0, 2.0} and abs((train == 0).mean() - 0.5) < 0.05
    np.testing.assert_array_equal(train_grad, train)        # d(sum)/dh is the mask itself
    np.testing.assert_array_equal(test, data)
    x = eg.tensor(np.ones((100, 100)))                      # eagerly too (float64 data)
    assert abs((eg.nn.dropout(x, keep_prob=0.8, seed=1).numpy() == 0).mean() - 0.2) < 0.02
    assert abs((eg.nn.dropout(x, eg.tensor(0.3), seed=1).numpy() == 0).mean() - 0.3) < 0.02
    assert eg.nn.dropout(x, eg.tensor(0.3), training=False) is x
    with pytest.raises(ValueError, match=r"rate must be in \[0, 1\), got 1 \(keep_prob 0\)"):
        eg.nn.dropout(x, keep_prob=0)


def dropped_fraction(y, feed=None):
    """The fraction of zeros in ``y`` (run in a Session when it is a graph's)."""
    if y.graph is not None:
        with eg.Session() as sess:
            y = sess.run(y, feed)
    return (np.asarray(y) == 0).mean()


def test_tf_nn_dropouts_positional_argument_is_keep_prob_in_tf1_code_and_rate_in_tf2():
    """tf.nn.dropout(h, 0.9) keeps 90 % in TF1 and 10 % in TF2: never the wrong one."""
    ones = np.ones((200, 100), np.float32)
    assert abs(dropped_fraction(eg.nn.dropout(eg.tensor(ones), 0.9)) - 0.9) < 0.02
    traced = eg.function(lambda h: eg.nn.dropout(h, 0.9))
    assert abs(dropped_fraction(traced(ones)) - 0.9) < 0.02
    with eg.Graph().as_default():
        h = eg.placeholder(eg.float32, (None, 100))
        assert abs(dropped_fraction(eg.nn.dropout(h, 0.9), {h: ones}) - 0.1) < 0.02
        assert abs(dropped_fraction(eg.nn.dropout(h, rate=0.9), {h: ones}) - 0.9) < 0.02
        branch = eg.cond(eg.constant(True), lambda: eg.nn.dropout(h, 0.9), lambda: h)
        assert abs(dropped_fraction(branch, {h: ones}) - 0.1) < 0.02    # TF1 code's branch
        with pytest.raises(ValueError, match=r"inlined into a TF1 graph.*eg\.nn\.dropout\(x, "
                           r"rate=p\) or eg\.nn\.dropout\(x, keep_prob=p\)"):
            traced(h)
        # torch.dropout and F.dropout take the rate (p) by position in any graph
        assert abs(dropped_fraction(eg.dropout(h, 0.9), {h: ones}) - 0.9) < 0.02
        assert abs(dropped_fraction(eg.nn.functional.dropout(h, 0.9), {h: ones}) - 0.9) < 0.02
    eg.disable_eager_execution()
    try:
        h = eg.placeholder(eg.float32, (None, 100))
        assert abs(dropped_fraction(eg.nn.dropout(h, 0.9), {h: ones}) - 0.1) < 0.02
    finally:
        eg.enable_eager_execution()
    with pytest.raises(TypeError, match="second argument twice"):
        eg.nn.dropout(eg.tensor(ones), 0.5, rate=0.5)
    with pytest.raises(ValueError, match="not both"):
        eg.nn.dropout(eg.tensor(ones), rate=0.5, keep_prob=0.5)
    with pytest.raises(NotImplementedError, match="noise_shape"):
        eg.nn.dropout(eg.tensor(ones), 0.5, [200, 1])


def test_windows_that_do_not_fit_and_images_without_channels_are_named(device):
    images = on(device, np.ones((1, 8, 8, 1)))
    with pytest.raises(eg.errors.ShapeError, match=r"^conv2d: a 9x9 window does not fit an "
                       r"input of height and width 8x8 .* with padding 'valid'"):
        eg.nn.conv2d(images, on(device, np.ones((9, 9, 1, 2))))     # (was a reshape error)
    with pytest.raises(eg.errors.ShapeError, match=r"^max_pool2d: a 9x9 window"):
        eg.nn.max_pool2d(images, 9)
    assert eg.nn.max_pool2d(images, 9, padding="same").shape == (1, 1, 1, 1)
    for layer in (eg.layers.Conv2D(2, 3), eg.layers.MaxPooling2D(2)):
        with pytest.raises(eg.errors.ShapeError, match=r"expects a 4-D NHWC input .* got "
                           r"shape \(None, 8, 8\)\. Add a channel axis"):
            layer(on(device, np.ones((4, 8, 8))))                   # (was a failed unpacking)


def test_gather_refuses_negative_ids_as_tf_does(device):
    """numpy's take counts -1 from the end; TF's gather and an embedding lookup refuse it."""
    table = on(device, np.arange(20.0).reshape(10, 2))
    for lookup in (lambda ids: eg.gather(table, ids),
                   lambda ids: eg.layers.Embedding(10, 2)(np.array(ids))):     # (on cpu:0)
        with pytest.raises(eg.errors.ShapeError, match=r"indices must be integers in \[0, 10\)"):
            lookup([1, -1])
        with pytest.raises(eg.errors.ShapeError, match=r"in \[0, 10\)"):
            lookup([10])
