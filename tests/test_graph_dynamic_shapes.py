"""A shape given as a graph tensor, as in TF: ``tf.reshape(x, [tf.shape(x)[0], 3, 1])``,
``tf.zeros([tf.shape(x)[0], 2])``, ``eg.random.normal(eg.shape(mu))`` (a VAE's noise).

In a TF1 graph and in a traced function the shape is an int32 tensor read when the graph runs
(a list mixing ints and sizes is packed, like ``tf.stack``); the static shape is what TF
infers before the run. Eagerly a shape tensor is just numbers, as before."""
import os

import numpy as np
import pytest

import edugraph as eg
import edugraph.compat.v1 as tf
from edugraph.errors import ShapeError

X = np.arange(6, dtype=np.float32).reshape(2, 3)

# name: (the op built on x of static shape (?, 3) by a TF1 module `tf` (edugraph's or real
# TF's), the static shape TF 2.21 prints for it, its value for x)
CASES = {
    "reshape(x, shape(x))": (
        lambda tf, x: tf.reshape(x, tf.shape(x)), "(?, 3)", lambda x: x),
    "reshape(x, [shape(x)[0], 3, 1])": (
        lambda tf, x: tf.reshape(x, [tf.shape(x)[0], 3, 1]), "(?, 3, 1)",
        lambda x: x.reshape(-1, 3, 1)),
    "reshape(x, [-1, shape(x)[1]])": (
        lambda tf, x: tf.reshape(x, [-1, tf.shape(x)[1]]), "(?, 3)", lambda x: x),
    "reshape(x, [shape(x)[0], -1, 1])": (
        lambda tf, x: tf.reshape(x, [tf.shape(x)[0], -1, 1]), "(?, ?, 1)",
        lambda x: x.reshape(len(x), -1, 1)),
    "reshape(x, [-1, shape(x)[0] * shape(x)[1]])": (
        lambda tf, x: tf.reshape(x, [-1, tf.shape(x)[0] * tf.shape(x)[1]]), "(?, ?)",
        lambda x: x.reshape(1, -1)),
    "zeros([shape(x)[0], 2])": (
        lambda tf, x: tf.zeros([tf.shape(x)[0], 2]), "(?, 2)",
        lambda x: np.zeros((len(x), 2), np.float32)),
    "ones([shape(x)[0], 2])": (
        lambda tf, x: tf.ones([tf.shape(x)[0], 2]), "(?, 2)",
        lambda x: np.ones((len(x), 2), np.float32)),
    "zeros(shape(x)[1:])": (
        lambda tf, x: tf.zeros(tf.shape(x)[1:]), "(3,)", lambda x: np.zeros(3, np.float32)),
    "zeros(stack([shape(x)[0], 4]))": (
        lambda tf, x: tf.zeros(tf.stack([tf.shape(x)[0], 4])), "(?, 4)",
        lambda x: np.zeros((len(x), 4), np.float32)),
    "fill(shape(x), 1.0)": (
        lambda tf, x: tf.fill(tf.shape(x), 1.0), "(?, 3)", lambda x: np.ones_like(x)),
    "fill(shape(x), reduce_sum(x))": (
        lambda tf, x: tf.fill(tf.shape(x), tf.reduce_sum(x)), "(?, 3)",
        lambda x: np.full_like(x, x.sum())),
    "broadcast_to([1, 2, 3], shape(x))": (
        lambda tf, x: tf.broadcast_to(tf.constant([1., 2., 3.]), tf.shape(x)), "(?, 3)",
        lambda x: np.broadcast_to(np.float32([1, 2, 3]), x.shape)),
}

# name: the random op of x's shape, drawn with an op seed
RANDOM = {
    "random_normal": lambda tf, x: tf.random_normal(tf.shape(x), seed=1),
    "random.normal": lambda tf, x: tf.random.normal(tf.shape(x), seed=1),
    "random.uniform": lambda tf, x: tf.random.uniform(tf.shape(x), seed=1),
    "random_uniform": lambda tf, x: tf.random_uniform(tf.shape(x), seed=1),
    "truncated_normal": lambda tf, x: tf.truncated_normal(tf.shape(x), seed=1),
    "random.truncated_normal": lambda tf, x: tf.random.truncated_normal(
        [tf.shape(x)[0], 3], seed=1),
}


def _tf1_graph(build):
    """``build(x)`` in a new edugraph graph, x a placeholder of shape (?, 3); (x, result)."""
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, (None, 3), name="x")
        return graph, x, build(x)


# ----------------------------------------------------------------------------- TF1 graphs
@pytest.mark.parametrize("name", CASES)
def test_a_shape_tensor_works_in_a_tf1_graph_with_tf_static_shape(name):
    build, static, expected = CASES[name]
    graph, x, out = _tf1_graph(lambda x: build(tf, x))
    assert str(out.shape) == static
    with tf.Session(graph=graph) as sess:
        for rows in (X, np.arange(12, dtype=np.float32).reshape(4, 3)):
            got = sess.run(out, {x: rows})
            assert got.dtype == np.float32
            np.testing.assert_array_equal(got, expected(rows))


def test_the_shape_becomes_the_ops_last_input_only_when_it_holds_a_graph_tensor():
    graph, x, out = _tf1_graph(lambda x: tf.reshape(x, [tf.shape(x)[0], 3, 1]))
    assert out.op.type == "Reshape" and len(out.op.inputs) == 2
    assert out.op.inputs[1].op.type == "Pack"       # the list, packed like tf.stack
    assert out.op.inputs[1].dtype == np.int32
    with graph.as_default():
        assert len(tf.reshape(x, [-1, 3, 1]).op.inputs) == 1     # whole numbers: an attribute
        assert len(tf.zeros([2, 3]).op.inputs) == 0
        assert len(tf.reshape(x, np.array([-1, 3])).op.inputs) == 1


@pytest.mark.parametrize("build", [
    lambda x: tf.reshape(x, [tf.shape(x)[0], 3, 1]),
    lambda x: tf.reshape(x, tf.shape(x)),
    lambda x: tf.reshape(x, [-1, tf.shape(x)[1]]) * tf.constant([1., 2., 3.]),
], ids=["list", "shape(x)", "-1"])
def test_gradients_flow_through_a_reshape_to_a_shape_tensor(build):
    graph, x, out = _tf1_graph(build)
    with graph.as_default():
        (grad,) = tf.gradients(tf.reduce_sum(out * 2.0), x)
    assert str(grad.shape) == "(?, 3)"
    with tf.Session(graph=graph) as sess:
        got = sess.run(grad, {x: X})
    scale = np.float32([1, 2, 3]) if out.op.type != "Reshape" else 1.0
    np.testing.assert_array_equal(got, np.broadcast_to(2.0 * scale, X.shape))


def test_the_value_of_fill_gets_its_gradient_with_a_shape_tensor():
    graph, x, out = _tf1_graph(lambda x: tf.fill(tf.shape(x), tf.reduce_sum(x)))
    with graph.as_default():
        (grad,) = tf.gradients(tf.reduce_sum(out), x)
    with tf.Session(graph=graph) as sess:
        np.testing.assert_array_equal(sess.run(grad, {x: X}), np.full(X.shape, 6.0))


@pytest.mark.parametrize("name", RANDOM)
def test_random_ops_take_a_shape_tensor_in_a_tf1_graph(name):
    graph, x, out = _tf1_graph(lambda x: RANDOM[name](tf, x))
    assert str(out.shape) == "(?, 3)" and out.dtype == np.float32
    with tf.Session(graph=graph) as sess:
        first = sess.run(out, {x: X})
        assert first.shape == (2, 3)
        assert sess.run(out, {x: np.zeros((5, 3))}).shape == (5, 3)
    with tf.Session(graph=graph) as sess:          # a new session draws the same numbers
        np.testing.assert_array_equal(sess.run(out, {x: X}), first)


def test_a_shape_of_unknown_length_gives_an_unknown_rank():
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float32, (None, 3))
        shape = tf.placeholder(tf.int32, None)
        pair = tf.placeholder(tf.int32, (2,))
        zeros, reshaped, by_pair = tf.zeros(shape), tf.reshape(x, shape), tf.reshape(x, pair)
        noise = tf.random.normal(shape)
    assert str(zeros.shape) == str(reshaped.shape) == str(noise.shape) == "<unknown>"
    assert str(by_pair.shape) == "(?, ?)"
    with tf.Session(graph=graph) as sess:
        got = sess.run([zeros, reshaped, by_pair, noise], {x: X, shape: [3, 2], pair: [1, 6]})
    np.testing.assert_array_equal(got[0], np.zeros((3, 2)))
    np.testing.assert_array_equal(got[1], X.reshape(3, 2))
    np.testing.assert_array_equal(got[2], X.reshape(1, 6))
    assert got[3].shape == (3, 2)


@pytest.mark.parametrize("build, error, message", [
    (lambda x: tf.reshape(x, tf.cast(tf.shape(x), tf.float32)), TypeError,
     r"reshape: the shape Cast:0 is a float32 tensor.*eg\.cast"),
    (lambda x: tf.random_normal(tf.cast(tf.shape(x), tf.float32)), TypeError,
     r"random_normal: the shape Cast:0 is a float32 tensor.*eg\.cast"),
    (lambda x: tf.reshape(x, tf.reshape(tf.shape(x), (1, 2))), ShapeError,
     r"reshape: the shape Reshape:0 has shape \(1, 2\).*rank 1.*eg\.shape\(x\)"),
    (lambda x: tf.zeros([tf.shape(x), 2]), ShapeError,
     r"zeros: the size Shape:0 in the shape \[Shape:0, 2\] has shape \(2,\).*eg\.concat"),
    (lambda x: tf.ones([tf.shape(x)[0], 2.5]), TypeError,
     r"ones: the shape \[StridedSlice:0, 2\.5\] has 2\.5 in it.*whole numbers"),
    (lambda x: tf.fill([tf.cast(tf.shape(x)[0], tf.float32), 2], 1.0), TypeError,
     r"fill: the size Cast:0 in the shape \[Cast:0, 2\] is a float32 tensor.*eg\.cast"),
], ids=["float reshape", "float random", "rank 2", "vector in a list", "float in a list",
        "float size"])
def test_a_wrong_shape_tensor_is_refused_naming_the_op_the_shape_and_the_fix(build, error,
                                                                              message):
    with pytest.raises(error, match=message):
        _tf1_graph(build)


def test_a_shape_tensor_that_does_not_fit_fails_when_the_graph_runs_saying_so():
    graph, x, out = _tf1_graph(lambda x: tf.reshape(x, [tf.shape(x)[0], 4]))
    with tf.Session(graph=graph) as sess:
        with pytest.raises(eg.errors.InvalidArgumentError,
                           match=r"shape \(2, 3\) \(6 elements\) into the sizes of the shape "
                                 r"tensor, \(\?, 4\) before the run"):
            sess.run(out, {x: X})


# ----------------------------------------------------------------------------- eg.function
@pytest.mark.parametrize("name", CASES)
def test_a_shape_tensor_works_in_a_traced_function(name):
    build, static, expected = CASES[name]
    any_batch = eg.function(lambda x: build(eg, x),
                            input_signature=[eg.TensorSpec((None, 3), eg.float32)])
    assert str(any_batch.get_concrete_function().outputs[0].shape) == static
    for rows in (X, np.arange(12, dtype=np.float32).reshape(4, 3)):
        np.testing.assert_array_equal(any_batch(rows).numpy(), expected(rows))
    exact = eg.function(lambda x: build(eg, x))     # traced for (2, 3): all sizes known
    got = exact(eg.constant(X))
    static = exact.get_concrete_function(eg.constant(X)).outputs[0].shape
    assert static.is_fully_defined() and static == got.shape
    np.testing.assert_array_equal(got.numpy(), expected(X))


def test_the_vae_noise_line_works_in_a_traced_function():
    @eg.function
    def sample(mu, log_var):
        eps = eg.random.normal(eg.shape(mu))
        return mu + eg.exp(0.5 * log_var) * eps

    mu = eg.constant(np.zeros((4, 2), np.float32))
    z = sample(mu, mu)
    assert z.shape == (4, 2) and z.dtype == eg.float32
    assert sample.get_concrete_function(mu, mu).outputs[0].shape == (4, 2)


@pytest.mark.parametrize("name", RANDOM)
def test_random_ops_take_a_shape_tensor_in_a_traced_function_and_repeat_when_seeded(name):
    def make():
        return eg.function(lambda x: RANDOM[name](eg, x),
                           input_signature=[eg.TensorSpec((None, 3), eg.float32)])
    eg.random.set_seed(5)
    draw = make()
    assert str(draw.get_concrete_function().outputs[0].shape) == "(?, 3)"
    first = draw(X).numpy()
    assert first.shape == (2, 3) and first.dtype == np.float32
    assert draw(np.zeros((5, 3), np.float32)).shape == (5, 3)
    eg.random.set_seed(5)
    np.testing.assert_array_equal(make()(X).numpy(), first)


def test_gradients_flow_through_a_reshape_to_a_shape_tensor_in_a_traced_function():
    @eg.function(input_signature=[eg.TensorSpec((None, 3), eg.float32)])
    def grad_of(x):
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = eg.reshape(x, [eg.shape(x)[0], 3, 1]) * eg.constant([[1.], [2.], [3.]])
            loss = eg.reduce_sum(y)
        return tape.gradient(loss, x)

    assert str(grad_of.get_concrete_function().outputs[0].shape) == "(?, 3)"
    np.testing.assert_array_equal(grad_of(X).numpy(), np.broadcast_to([1., 2., 3.], X.shape))


# ----------------------------------------------------------------------------- eagerly
def test_eagerly_a_shape_tensor_is_just_numbers_as_before():
    x = eg.tensor(X, requires_grad=True)
    y = eg.reshape(x, [eg.shape(x)[1], eg.shape(x)[0]])
    assert y._op.shape == (3, 2) and len(y._inputs) == 1     # an attribute, not an input
    np.testing.assert_array_equal(y.numpy(), X.reshape(3, 2))
    np.testing.assert_array_equal(eg.reshape(x, eg.shape(x)).numpy(), X)
    np.testing.assert_array_equal(eg.zeros([eg.shape(x)[0], 2]).numpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(eg.fill(eg.shape(x), 1.0).numpy(), np.ones((2, 3)))
    assert eg.random.normal(eg.shape(x)).shape == (2, 3)
    assert eg.random.uniform(eg.shape(x)[1:]).shape == (3,)
    assert eg.randn(2, 3).shape == (2, 3) and eg.zeros(2, 3).shape == (2, 3)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 3)))


@pytest.mark.parametrize("shape", [(2.5, 3), "23", (2, -2), (-1, -1)])
def test_eagerly_a_wrong_shape_still_gets_reshapes_message(shape):
    with pytest.raises(ShapeError, match="sizes must be whole numbers"):
        eg.reshape(eg.ones((2, 3)), shape)


def test_eagerly_a_wrong_shape_for_a_random_op_names_the_op():
    with pytest.raises(TypeError, match=r"random_normal: the shape must be whole numbers"):
        eg.random.normal("2x3")


# ----------------------------------------------------------------------------- real TF
@pytest.fixture(scope="module")
def tf1():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow").compat.v1


def _theirs(tf1, build, feed_rows):
    """``build(tf1, x)`` in a tf.Graph() (eager stays on): (its static shape as a list, its
    value for ``feed_rows``)."""
    graph = tf1.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf1.float32, (None, 3))
        out = build(tf1, x)
        with tf1.Session(graph=graph) as sess:
            return out.shape.as_list(), sess.run(out, {x: feed_rows})


@pytest.mark.parametrize("name", CASES)
def test_static_shapes_and_values_match_tensorflow(tf1, name):
    build, static, _ = CASES[name]
    their_static, theirs = _theirs(tf1, build, X)
    graph, x, out = _tf1_graph(lambda x: build(tf, x))
    assert out.shape.as_list() == their_static and str(out.shape) == static
    with tf.Session(graph=graph) as sess:
        ours = sess.run(out, {x: X})
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", RANDOM)
def test_random_ops_static_shapes_match_tensorflow(tf1, name):
    their_static, theirs = _theirs(tf1, RANDOM[name], X)
    graph, x, out = _tf1_graph(lambda x: RANDOM[name](tf, x))
    assert out.shape.as_list() == their_static
    with tf.Session(graph=graph) as sess:
        ours = sess.run(out, {x: X})
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype


def test_reshape_gradients_match_tensorflow(tf1):
    def build(tf, x):
        y = tf.reshape(x, [tf.shape(x)[0], 3, 1]) * tf.constant([[1.], [2.], [3.]])
        return tf.gradients(tf.reduce_sum(y * y), x)[0]
    their_static, theirs = _theirs(tf1, build, X)
    graph, x, out = _tf1_graph(lambda x: build(tf, x))
    assert out.shape.as_list() == their_static
    with tf.Session(graph=graph) as sess:
        np.testing.assert_allclose(sess.run(out, {x: X}), theirs, rtol=1e-6)


def test_the_reshape_method_takes_a_list_with_graph_sizes():
    """x.reshape([eg.shape(x)[0], 3, 1]), the method spelling of eg.reshape (and PyTorch's
    view), reads the same list; eagerly its spellings are unchanged."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (None, 3))
        y = x.reshape([eg.shape(x)[0], 3, 1])
        assert y.shape == (None, 3, 1)
        with eg.Session() as sess:
            assert sess.run(y, {x: np.ones((2, 3))}).shape == (2, 3, 1)
    t = eg.tensor(np.arange(6.0))
    assert t.reshape(2, 3).shape == t.reshape((2, 3)).shape == t.reshape([2, 3]).shape == (2, 3)
    assert t.view(6).shape == (6,) and t.reshape(np.array([3, 2])).shape == (3, 2)
