"""The lecture slides' TF1 programs, with ``tf.`` replaced by ``eg.``: they run and agree with
numpy and with eager mode — including the pitfall of the assign that never runs.

Each test that takes the ``fw`` fixture (tests/tf_frameworks.py) runs twice: with edugraph, and
with real TensorFlow where it is installed, as TF 2 runs a TF1 program (``tf`` is
``tensorflow.compat.v1``), so that what it expects is what TF does. What only edugraph does is
checked under ``if fw.is_eg:``. The tests that take no ``fw`` are edugraph's alone; their
docstrings say why.
"""
import numpy as np
import pytest

import edugraph as eg
import edugraph.context  # noqa: F401  (eg.context.building: leave the graph)
from tests.tf_frameworks import FRAMEWORKS, framework

N, D, H = 64, 1000, 100


@pytest.fixture(params=FRAMEWORKS, scope="module")
def fw(request):
    """edugraph ("eg"), then TensorFlow ("tf"): the names the slides' code uses."""
    return framework(request.param)


@pytest.fixture(autouse=True)
def graph(request):
    """Each test builds in a graph of its own: its framework's, edugraph's where it takes no
    ``fw``."""
    tf = request.getfixturevalue("fw").tf1_program if "fw" in request.fixturenames else eg
    with tf.Graph().as_default() as g:
        yield g


def leave_the_graph(fw):
    """Eager mode inside the test's graph: edugraph's eg.context.building(None); TF's
    context.eager_mode() (what TF's own tests use: a graph's scope cannot be left otherwise)."""
    if fw.is_eg:
        return eg.context.building(None)
    from tensorflow.python.eager import context
    return context.eager_mode()


def two_layer_data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((N, D)).astype(np.float32),
            rng.standard_normal((N, D)).astype(np.float32))


def numpy_loss(x, y, w1, w2):
    return np.mean(np.sum((np.maximum(x @ w1, 0) @ w2 - y) ** 2, axis=1))


def test_quadratic_minimised_by_gradient_descent_prints_the_slides_numbers():
    """edugraph's alone: it reads x after the update it is fetched with, as TF1's reference
    variables gave the slide's numbers (racily). TF 2.21 runs ``tf.compat.v1.Variable`` as a
    resource variable, read before the update: [(0.0, 4.0), (0.1, 3.6), (0.16, 3.456),
    (0.196, 3.40416)]."""
    a = eg.constant(10, eg.float32, name="a")
    b = eg.constant(-5, eg.float32, name="b")
    c = eg.constant(4, eg.float32, name="c")
    x = eg.Variable(0.0, name="x")
    y = a * x * x + b * x + c
    optimizer = eg.train.GradientDescentOptimizer(0.02)
    update = optimizer.minimize(y)
    sess = eg.Session()
    sess.run(eg.global_variables_initializer())
    printed = []
    for i in range(4):
        val_y, val_x, _ = sess.run([y, x, update])
        printed.append((round(float(val_x), 5), round(float(val_y), 5)))
    sess.close()
    assert printed == [(0.1, 4.0), (0.16, 3.6), (0.196, 3.456), (0.2176, 3.40416)]


def test_quadratic_with_placeholder_and_session_close(fw):
    tf = fw.tf1_program
    a = tf.constant(10, tf.float32, name="a")
    b = tf.constant(-5, tf.float32, name="b")
    c = tf.constant(4, tf.float32, name="c")
    x = tf.placeholder(tf.float32, name="x")
    y = a * x * x + b * x + c
    sess = tf.Session()
    result = sess.run(y, {x: 5.0})
    sess.close()
    assert result == 10 * 25 - 25 + 4


def build_two_layer(tf):
    x = tf.placeholder(tf.float32, shape=(N, D), name="x")
    y = tf.placeholder(tf.float32, shape=(N, D), name="y")
    w1 = tf.Variable(tf.random_normal((D, H)), name="w1")
    w2 = tf.Variable(tf.random_normal((H, D)), name="w2")
    h = tf.maximum(tf.matmul(x, w1), 0)
    y_pred = tf.matmul(h, w2)
    diff = y_pred - y
    loss = tf.reduce_mean(tf.reduce_sum(diff ** 2, axis=1))
    return x, y, w1, w2, loss


def test_assign_that_is_not_fetched_never_runs_and_group_fixes_it(fw):
    tf = fw.tf1_program
    x, y, w1, w2, loss = build_two_layer(tf)
    grad_w1, grad_w2 = tf.gradients(loss, [w1, w2])
    learning_rate = 1e-5
    new_w1 = w1.assign(w1 - learning_rate * grad_w1, name="update_w1")
    new_w2 = w2.assign(w2 - learning_rate * grad_w2, name="update_w2")
    updates = tf.group(new_w1, new_w2)
    x_val, y_val = two_layer_data()
    values = {x: x_val, y: y_val}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        stuck = [sess.run([loss], feed_dict=values)[0] for _ in range(3)]
        assert stuck[0] == stuck[1] == stuck[2]          # "loss does not go down"
        w1_val, w2_val = sess.run([w1, w2])
        np.testing.assert_allclose(stuck[0], numpy_loss(x_val, y_val, w1_val, w2_val),
                                   rtol=1e-4)
        losses = [sess.run([loss, updates], feed_dict=values)[0] for _ in range(5)]
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))


def test_two_layer_step_equals_numpy_and_eager(fw):
    tf = fw.tf1_program
    x, y, w1, w2, loss = build_two_layer(tf)
    updates = tf.train.GradientDescentOptimizer(1e-5).minimize(loss)
    x_val, y_val = two_layer_data()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        w1_0, w2_0 = sess.run([w1, w2])
        loss_val, _ = sess.run([loss, updates], feed_dict={x: x_val, y: y_val})
        w1_1, w2_1 = sess.run([w1, w2])
    # numpy, derived by hand as on the slides
    h = np.maximum(x_val @ w1_0, 0)
    diff = h @ w2_0 - y_val
    grad_y_pred = 2.0 * diff / N
    grad_w2 = h.T @ grad_y_pred
    grad_h = grad_y_pred @ w2_0.T
    grad_h[h <= 0] = 0
    grad_w1 = x_val.T @ grad_h
    np.testing.assert_allclose(loss_val, numpy_loss(x_val, y_val, w1_0, w2_0), rtol=1e-4)
    np.testing.assert_allclose(w1_1, w1_0 - 1e-5 * grad_w1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(w2_1, w2_0 - 1e-5 * grad_w2, rtol=1e-4, atol=1e-5)
    # eager mode, same numbers: TF2's GradientTape
    tf = fw.tf
    with leave_the_graph(fw):
        tw1, tw2 = tf.Variable(w1_0), tf.Variable(w2_0)
        with tf.GradientTape() as tape:
            tloss = tf.reduce_mean(tf.reduce_sum(
                (tf.matmul(tf.maximum(tf.matmul(tf.constant(x_val), tw1), 0), tw2) -
                 tf.constant(y_val)) ** 2, axis=1))
        tgrad_w1 = tape.gradient(tloss, tw1)
        np.testing.assert_allclose(loss_val, tloss.numpy(), rtol=1e-5)
        np.testing.assert_allclose(w1_1, w1_0 - 1e-5 * tgrad_w1.numpy(), rtol=1e-4, atol=1e-5)
    if not fw.is_eg:
        return
    # and PyTorch's spelling (edugraph's alone)
    with eg.context.building(None):
        ew1, ew2 = eg.Variable(w1_0), eg.Variable(w2_0)
        eloss = eg.reduce_mean(eg.reduce_sum(
            (eg.matmul(eg.maximum(eg.matmul(eg.tensor(x_val), ew1), 0), ew2) -
             eg.tensor(y_val)) ** 2, axis=1))
        eloss.backward()
    np.testing.assert_allclose(loss_val, eloss.item(), rtol=1e-5)
    np.testing.assert_allclose(w1_1, w1_0 - 1e-5 * ew1.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_variables_assign_and_initializer_slide(fw):
    tf = fw.tf1_program
    w = tf.Variable(10)
    with tf.Session() as sess:
        sess.run(w.initializer)
        w.assign(100)
        assert sess.run(w) == 10
        assign_op = w.assign(100)
        sess.run(assign_op)
        assert sess.run(w) == 100


def test_dense_layer_mse_loss_and_optimizer_slide():
    """edugraph's alone: TF 2.21 with Keras 3 has no tf.compat.v1.layers.dense
    (AttributeError: `dense` is not available with Keras 3)."""
    n, d, n_classes = 32, 20, 10
    x = eg.placeholder(eg.float32, shape=(n, d))
    y = eg.placeholder(eg.float32, shape=(n, n_classes))
    y_pred = eg.layers.dense(inputs=x, units=n_classes, activation=eg.nn.relu)
    loss = eg.losses.mean_squared_error(y_pred, y)
    optimizer = eg.train.GradientDescentOptimizer(1e-2)
    updates = optimizer.minimize(loss)
    rng = np.random.default_rng(0)
    values = {x: rng.standard_normal((n, d)), y: rng.standard_normal((n, n_classes))}
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        kernel, bias = sess.run(eg.trainable_variables())
        first = sess.run([loss, updates], feed_dict=values)[0]
        expected = np.mean((np.maximum(values[x] @ kernel + bias, 0) - values[y]) ** 2)
        np.testing.assert_allclose(first, expected, rtol=1e-5)
        later = [sess.run([loss, updates], feed_dict=values)[0] for _ in range(20)]
    assert later[-1] < first
