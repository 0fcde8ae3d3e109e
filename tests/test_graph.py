"""Graph building: names, shapes, scopes, the inspector's read API, gradients as nodes."""
import numpy as np
import pytest

import edugraph as eg


@pytest.fixture
def graph():
    with eg.Graph().as_default() as g:
        yield g


def test_symbolic_tensors_print_like_tf(graph):
    x = eg.placeholder(eg.float32, shape=(3, 4))
    a = x + x
    b = x + 1
    assert repr(a) == 'Tensor("Add:0", shape=(3, 4), dtype=float32)'
    assert b.name == "Add_1:0"
    assert graph.get_tensor_by_name("Add_1:0") is b
    assert graph.get_operation_by_name("Add") is a.op


def test_name_scopes_and_op_types(graph):
    x = eg.placeholder(eg.float32, shape=(2, 3), name="x")
    with eg.name_scope("layer1"):
        w = eg.Variable(np.ones((3, 2), np.float32), name="w")
        h = eg.relu(eg.matmul(x, w))
    assert h.op.name == "layer1/Relu" and h.op.inputs[0].op.type == "MatMul"
    assert w.op.name == "layer1/w" and w.op.type == "VariableV2"
    assert [op.type for op in graph.get_operations()][:2] == ["Placeholder", "VariableV2"]
    assert x.consumers() == [h.op.inputs[0].op]


def test_gradients_of_one_x_is_a_list_as_in_tf1(graph):
    """``tf.gradients(loss, w)[0]`` is the gradient (not its first row): a list also for one x,
    and placeholders made without a shape take values of any shape (TF1's unknown rank)."""
    w = eg.placeholder(eg.float32, name="w")
    loss = eg.reduce_sum(w * w)
    grads = eg.gradients(loss, w)
    assert isinstance(grads, list) and len(grads) == 1
    with eg.Session() as sess:
        for value in (3.0, [1.0, -2.0], [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]):
            np.testing.assert_allclose(sess.run(grads[0], {w: value}), 2 * np.array(value))


def test_inspector_contract(graph):
    x = eg.placeholder(eg.float32, shape=(3,), name="x")
    y = eg.reduce_max(x * 2, axis=0)
    (g,) = eg.gradients(y, [x])
    op = y.op
    assert op.type == "Max" and op.attrs == {"axis": 0, "keepdims": False}
    assert op.eg_op.gate == "routes"
    assert op.outputs == [y] and op.inputs[0].op.type == "Mul"
    assert g.op.name.startswith("gradients/")
    with eg.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: [1.0, 3.0, 2.0]}), [0.0, 2.0, 0.0])


def test_shapes_are_inferred_without_computing(graph):
    x = eg.placeholder(eg.float32, shape=(3000, 4000))
    y = eg.reduce_sum(x * x + 1, axis=1, keepdims=True)
    assert y.shape == (3000, 1)
    with pytest.raises(eg.errors.ShapeError, match="MatMul"):
        eg.matmul(x, eg.placeholder(eg.float32, shape=(3, 2)))


def test_gradients_sum_over_ys_and_none_for_unconnected(graph):
    x = eg.placeholder(eg.float32, shape=(2,))
    z = eg.placeholder(eg.float32, shape=(2,))
    g_x, g_z = eg.gradients([x * x, 3 * x], [x, z])
    assert g_z is None
    with eg.Session() as sess:
        np.testing.assert_allclose(sess.run(g_x, {x: [1.0, 2.0]}), [5.0, 7.0])


def test_gradients_with_respect_to_constants_as_in_tf(graph):
    # The worked example written with tf.constant: TF differentiates a constant asked for
    # as an x (edugraph returned None, and the Session then refused the fetch).
    x, w, b = eg.constant(2.0), eg.constant(3.0), eg.constant(-4.0)
    f = (w * x + b) ** 2
    grads = eg.gradients(f, [x, w, b])
    (twice,) = eg.gradients(f, [x], grad_ys=[eg.constant(2.0)])
    with eg.Session() as sess:
        assert sess.run(grads) == [12.0, 8.0, 4.0]
        assert sess.run(twice) == 24.0
    assert not x.requires_grad          # a constant is differentiated only when asked for
    assert eg.gradients(f, [eg.constant(1.0)]) == [None]    # unconnected: still None


def test_stop_gradient_and_detach_are_graph_nodes(graph):
    x = eg.placeholder(eg.float32, shape=(None, 2))
    held = eg.stop_gradient(x * x, name="held")
    detached = x.detach()               # (it made an eager tensor with no value)
    assert held.op.type == "StopGradient" and detached.op.type == "StopGradient"
    assert held.shape.as_list() == [None, 2] and detached.graph is graph
    (g,) = eg.gradients(eg.reduce_sum(held * x + detached * x), [x])
    with eg.Session() as sess:
        value, grad = sess.run([held, g], {x: [[1.0, 2.0], [3.0, 4.0]]})
    np.testing.assert_allclose(value, [[1, 4], [9, 16]])
    np.testing.assert_allclose(grad, [[2, 6], [12, 20]])     # x² + x: only the last factors


def test_gradients_of_gradients(graph):
    x = eg.placeholder(eg.float64, shape=())
    y = x ** 3
    (dy,) = eg.gradients(y, [x])
    (d2y,) = eg.gradients(dy, [x])
    with eg.Session() as sess:
        assert sess.run([dy, d2y], {x: 2.0}) == [12.0, 12.0]


def test_gradients_match_finite_differences(graph):
    rng = np.random.default_rng(1)
    x0, w0 = rng.standard_normal((4, 3)), rng.standard_normal((3, 2))
    x = eg.placeholder(eg.float64, shape=(4, 3))
    w = eg.placeholder(eg.float64, shape=(3, 2))
    loss = eg.reduce_mean(eg.tanh(eg.matmul(x, w)) ** 2 + eg.sigmoid(w[0]))
    (g,) = eg.gradients(loss, [w])
    with eg.Session() as sess:
        analytic = sess.run(g, {x: x0, w: w0})
        numeric = np.zeros_like(w0)
        for i in np.ndindex(*w0.shape):
            step = np.zeros_like(w0)
            step[i] = 1e-6
            numeric[i] = (sess.run(loss, {x: x0, w: w0 + step}) -
                          sess.run(loss, {x: x0, w: w0 - step})) / 2e-6
    np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-8)


def test_group_and_control_dependencies(graph):
    v = eg.Variable(0.0, name="v")
    add = v.assign_add(1.0)
    with eg.control_dependencies([add]):
        after = eg.identity(v) * 1
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        sess.run(after)
        sess.run(eg.group(add, v.assign_add(2.0)))
        assert sess.run(v) == 4.0


def test_finalize_and_graph_mismatch(graph):
    x = eg.constant(1.0)
    with eg.Graph().as_default():
        other = eg.constant(2.0)
    with pytest.raises(ValueError, match="same graph"):
        x + other
    graph.finalize()
    with pytest.raises(RuntimeError, match="finalized"):
        x + 1


def test_symbolic_tensor_refuses_python_truth_and_values(graph):
    x = eg.placeholder(eg.float32, shape=(2,))
    with pytest.raises(TypeError, match="bool"):
        bool(x)
    with pytest.raises(NotImplementedError, match="symbolic"):
        x.numpy()


def test_disable_eager_execution_uses_the_default_graph():
    eg.disable_eager_execution()
    try:
        eg.reset_default_graph()
        assert not eg.executing_eagerly()
        x = eg.placeholder(eg.float32, shape=(), name="x")
        assert x.graph is eg.get_default_graph()
        with eg.Session() as sess:
            assert sess.run(x * 2, {x: 3.0}) == 6.0
    finally:
        eg.enable_eager_execution()
    assert eg.executing_eagerly()
    with pytest.raises(RuntimeError, match="eager execution"):
        eg.placeholder(eg.float32)
