"""The lecture slides' TF1 programs, with ``tf.`` replaced by ``eg.``: they run and agree with
numpy and with eager mode — including the pitfall of the assign that never runs."""
import numpy as np
import pytest

import edugraph as eg
import edugraph.context  # noqa: F401  (eg.context.building: leave the graph)

N, D, H = 64, 1000, 100


@pytest.fixture(autouse=True)
def graph():
    with eg.Graph().as_default() as g:
        yield g


def two_layer_data():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((N, D)).astype(np.float32),
            rng.standard_normal((N, D)).astype(np.float32))


def numpy_loss(x, y, w1, w2):
    return np.mean(np.sum((np.maximum(x @ w1, 0) @ w2 - y) ** 2, axis=1))


def test_quadratic_minimised_by_gradient_descent_prints_the_slides_numbers():
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


def test_quadratic_with_placeholder_and_session_close():
    a = eg.constant(10, eg.float32, name="a")
    b = eg.constant(-5, eg.float32, name="b")
    c = eg.constant(4, eg.float32, name="c")
    x = eg.placeholder(eg.float32, name="x")
    y = a * x * x + b * x + c
    sess = eg.Session()
    result = sess.run(y, {x: 5.0})
    sess.close()
    assert result == 10 * 25 - 25 + 4


def build_two_layer():
    x = eg.placeholder(eg.float32, shape=(N, D), name="x")
    y = eg.placeholder(eg.float32, shape=(N, D), name="y")
    w1 = eg.Variable(eg.random_normal((D, H)), name="w1")
    w2 = eg.Variable(eg.random_normal((H, D)), name="w2")
    h = eg.maximum(eg.matmul(x, w1), 0)
    y_pred = eg.matmul(h, w2)
    diff = y_pred - y
    loss = eg.reduce_mean(eg.reduce_sum(diff ** 2, axis=1))
    return x, y, w1, w2, loss


def test_assign_that_is_not_fetched_never_runs_and_group_fixes_it():
    x, y, w1, w2, loss = build_two_layer()
    grad_w1, grad_w2 = eg.gradients(loss, [w1, w2])
    learning_rate = 1e-5
    new_w1 = w1.assign(w1 - learning_rate * grad_w1, name="update_w1")
    new_w2 = w2.assign(w2 - learning_rate * grad_w2, name="update_w2")
    updates = eg.group(new_w1, new_w2)
    x_val, y_val = two_layer_data()
    values = {x: x_val, y: y_val}
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        stuck = [sess.run([loss], feed_dict=values)[0] for _ in range(3)]
        assert stuck[0] == stuck[1] == stuck[2]          # "loss does not go down"
        w1_val, w2_val = sess.run([w1, w2])
        np.testing.assert_allclose(stuck[0], numpy_loss(x_val, y_val, w1_val, w2_val),
                                   rtol=1e-4)
        losses = [sess.run([loss, updates], feed_dict=values)[0] for _ in range(5)]
    assert all(later < earlier for earlier, later in zip(losses, losses[1:]))


def test_two_layer_step_equals_numpy_and_eager():
    x, y, w1, w2, loss = build_two_layer()
    updates = eg.train.GradientDescentOptimizer(1e-5).minimize(loss)
    x_val, y_val = two_layer_data()
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
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
    # eager mode, same numbers
    with eg.context.building(None):
        ew1, ew2 = eg.Variable(w1_0), eg.Variable(w2_0)
        eloss = eg.reduce_mean(eg.reduce_sum(
            (eg.matmul(eg.maximum(eg.matmul(eg.tensor(x_val), ew1), 0), ew2) -
             eg.tensor(y_val)) ** 2, axis=1))
        eloss.backward()
    np.testing.assert_allclose(loss_val, eloss.item(), rtol=1e-5)
    np.testing.assert_allclose(w1_1, w1_0 - 1e-5 * ew1.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_variables_assign_and_initializer_slide():
    w = eg.Variable(10)
    with eg.Session() as sess:
        sess.run(w.initializer)
        w.assign(100)
        assert sess.run(w) == 10
        assign_op = w.assign(100)
        sess.run(assign_op)
        assert sess.run(w) == 100


def test_dense_layer_mse_loss_and_optimizer_slide():
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
