"""TF1 graph behaviour checked against real TensorFlow 2.21 (``tf.compat.v1``): assigns inside
cond and while_loop branches, placeholder_with_default of a graph tensor, Graph.finalize,
argmax/argmin op types, tf.gradients(unconnected_gradients=...) and a TensorArray carried by
an explicit while_loop. The expected values are TF's."""
import numpy as np
import pytest

import edugraph as eg
import edugraph.compat.v1 as tf


@pytest.fixture
def graph():
    with eg.Graph().as_default() as g:
        yield g


# -------------------------------------------------------------------- assigns in branches
def test_cond_runs_only_the_taken_branchs_assign(graph):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    up = tf.cond(p, lambda: v.assign_add(1.0), lambda: v.assign_add(10.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        first = sess.run(up, {p: True})
        second = sess.run(up, {p: False})
        assert (first, second, sess.run(v)) == (1.0, 11.0, 11.0)    # TF: 1.0 11.0 11.0
        assert sess.run([up, v], {p: True}) == [12.0, 12.0]


def test_cond_assign_of_a_value_from_outside_the_branch(graph):
    """The value ``x`` is a tensor of the outer graph: the assign still belongs to its branch
    (built outside, it would run whichever branch is taken)."""
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])
    x = tf.placeholder(tf.float32, [])
    up = tf.cond(p, lambda: v.assign(x), lambda: v.assign(x * 10.0))
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(up, {p: False, x: 2.0}) == 20.0
        assert sess.run(v) == 20.0
        assert sess.run(up, {p: True, x: 3.0}) == 3.0


def test_cond_reads_the_variable_after_its_assign(graph):
    v = tf.Variable(0.0)
    p = tf.placeholder(tf.bool, [])

    def add_five():
        with tf.control_dependencies([v.assign_add(5.0)]):
            return v.read_value() * 1.0
    r = tf.cond(p, add_five, lambda: v * 1.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(r, {p: True}) == 5.0
        assert sess.run(r, {p: False}) == 5.0                       # the assign did not run


def test_while_body_assign(graph):
    v = tf.Variable(1.0)
    r = tf.while_loop(lambda i: i < 3,
                      lambda i: i + tf.cast(v.assign(v * 2.0) > -1, tf.int32),
                      [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(r) == 3
        assert sess.run(v) == 8.0                                   # TF: 3, v = 8


def test_while_body_control_dependency_on_an_assign(graph):
    v = tf.Variable(1.0)

    def body(i):
        with tf.control_dependencies([v.assign(v * 2.0)]):
            return i + 1
    r = tf.while_loop(lambda i: i < 3, body, [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(r) == 3
        assert sess.run(v) == 8.0


def test_while_body_counter_runs_once_per_step_and_per_run(graph):
    w = tf.Variable(0)
    r = tf.while_loop(lambda i: i < 4, lambda i: i + w.assign_add(1) * 0 + 1,
                      [tf.constant(0)])
    with tf.Session() as sess:
        sess.run(w.initializer)
        assert (sess.run(r), sess.run(w)) == (4, 4)
        assert (sess.run(r), sess.run(w)) == (4, 8)


def test_eager_variable_assign_in_a_traced_cond_belongs_to_its_branch():
    v = eg.Variable(0.0)

    @eg.function
    def step(p, x):
        return eg.cond(p, lambda: v.assign_add(x), lambda: v.assign_add(x * 10.0))
    step(eg.constant(True), eg.constant(1.0))
    step(eg.constant(False), eg.constant(1.0))
    assert v.numpy() == 11.0


# --------------------------------------------------------------- placeholder_with_default
def test_placeholder_with_default_of_a_graph_tensor(graph):
    d = tf.placeholder_with_default(tf.constant([1.0, 2.0]) * 3.0, shape=[None])
    assert d.shape.as_list() == [None]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(d), [3.0, 6.0])
        np.testing.assert_array_equal(sess.run(d, {d: [7.0, 8.0, 9.0]}), [7.0, 8.0, 9.0])


def test_placeholder_with_default_of_a_tensor_that_does_not_fit(graph):
    with pytest.raises(ValueError, match=r"shape \(2,\).*shape \(3,\)"):
        tf.placeholder_with_default(tf.constant([1.0, 2.0]), shape=[3])


# ----------------------------------------------------------------------------- finalize
@pytest.mark.parametrize("make", [lambda: tf.constant(2.0),
                                  lambda: tf.placeholder(tf.float32),
                                  lambda: tf.Variable(1.0),
                                  lambda: tf.no_op()],
                         ids=["constant", "placeholder", "Variable", "no_op"])
def test_a_finalized_graph_refuses_every_new_node(graph, make):
    before = len(graph.get_operations())
    graph.finalize()
    with pytest.raises(RuntimeError, match="Graph is finalized and cannot be modified: "
                                           "cannot add .*before graph.finalize"):
        make()
    assert len(graph.get_operations()) == before


# ----------------------------------------------------------------------------- argmax / argmin
def test_argmax_and_argmin_op_types(graph):
    a = tf.constant([[1.0, 3.0], [4.0, 2.0]])
    hi, lo = tf.argmax(a, 1), tf.argmin(a, 1)
    assert (hi.op.type, lo.op.type) == ("ArgMax", "ArgMin")
    assert (hi.name, lo.name) == ("ArgMax:0", "ArgMin:0")
    assert "type_name" not in hi.op.attrs                           # (not an op argument)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run([hi, lo]), [[1, 0], [0, 1]])


# ------------------------------------------------------------------ unconnected gradients
def test_gradients_unconnected_none_and_zero(graph):
    x = tf.placeholder(tf.float32, [None, 2])
    y = tf.placeholder(tf.float64, [3])
    z = tf.reduce_sum(x * 2.0)
    assert tf.gradients(z, [x, y])[1] is None
    assert tf.gradients(z, [x, y], unconnected_gradients="none")[1] is None
    gx, gy = tf.gradients(z, [x, y], unconnected_gradients="zero")
    (gy_enum,) = tf.gradients(z, [y], unconnected_gradients=eg.UnconnectedGradients.ZERO)
    assert gy.dtype == np.float64 and gy.shape.as_list() == [3]
    with tf.Session() as sess:
        values = sess.run([gx, gy, gy_enum], {x: [[1.0, 2.0]], y: [1.0, 2.0, 3.0]})
    np.testing.assert_array_equal(values[0], [[2.0, 2.0]])
    np.testing.assert_array_equal(values[1], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(values[2], [0.0, 0.0, 0.0])


def test_gradients_refuses_an_unknown_unconnected_gradients(graph):
    x = tf.placeholder(tf.float32, [2])
    with pytest.raises(ValueError, match="unconnected_gradients: 'zeros'.*'zero'"):
        tf.gradients(tf.reduce_sum(x), [x], unconnected_gradients="zeros")


def test_tape_unconnected_zero_eagerly_and_traced():
    w, u = eg.Variable([1.0, 2.0]), eg.Variable(3.0)
    with eg.GradientTape() as tape:
        loss = eg.reduce_sum(w * w)
    assert tape.gradient(loss, [w, u], unconnected_gradients="zero")[1].numpy() == 0.0
    with eg.GradientTape() as tape:
        loss = eg.reduce_sum(w * w)
    with pytest.raises(ValueError, match="'zeros'"):
        tape.gradient(loss, [w, u], unconnected_gradients="zeros")

    @eg.function
    def grads():
        with eg.GradientTape() as tape:
            loss = eg.reduce_sum(w * w)
        return tape.gradient(loss, [w, u], unconnected_gradients="zero")
    gw, gu = grads()
    np.testing.assert_array_equal(gw.numpy(), [2.0, 4.0])
    assert gu.numpy() == 0.0


# ------------------------------------------------------------------- TensorArray loop var
@pytest.mark.parametrize("start", [0, "tensor"])
def test_tensor_array_carried_by_an_explicit_while_loop(graph, start):
    ta = tf.TensorArray(tf.float32, size=3)
    k0 = tf.constant(0) if start == "tensor" else 0
    k, ta = tf.while_loop(lambda k, t: k < 3,
                          lambda k, t: (k + 1, t.write(k, tf.cast(k, tf.float32))),
                          (k0, ta))
    assert isinstance(ta, tf.TensorArray)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(ta.stack()), [0.0, 1.0, 2.0])
        assert sess.run(k) == 3


def test_tensor_array_carried_by_while_loop_in_a_traced_function():
    @eg.function(autograph=False)
    def squares():
        _, ta = eg.while_loop(lambda k, t: k < 3,
                              lambda k, t: (k + 1, t.write(k, eg.cast(k * k, eg.float32))),
                              [eg.constant(0), eg.TensorArray(eg.float32, size=3)])
        return ta.stack()
    np.testing.assert_array_equal(squares().numpy(), [0.0, 1.0, 4.0])
