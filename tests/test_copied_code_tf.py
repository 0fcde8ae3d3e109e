"""Code students copy, TensorFlow side: guide cells and TF1 programs with ``tf.`` → ``eg.``.

Each test runs one cell of a TensorFlow guide ("Better performance with tf.function",
"Introduction to gradients and automatic differentiation", "Introduction to Tensors", the
eager basics) or one TF1 program as students wrote them, and checks what the guide prints
(or the exception class it catches). The code is written anew; the calls are the guides'.
Where a cell needs something edugraph leaves to others (``tf.Module``), a plain class stands in.
"""
import contextlib

import numpy as np
import pytest

import edugraph as eg

tf = eg


@contextlib.contextmanager
def assert_raises(error_class):
    """The guides' helper: the block must raise ``error_class``."""
    with pytest.raises(error_class) as caught:
        yield caught


# ----------------------------------------------------------------------------- tf.function
def test_a_function_is_differentiable_and_callable_from_another():
    @tf.function
    def add(a, b):
        return a + b

    @tf.function
    def dense_layer(x, w, b):
        return add(tf.matmul(x, w), b)

    np.testing.assert_array_equal(add(tf.ones([2, 2]), tf.ones([2, 2])).numpy(), 2)
    v = tf.Variable(1.0)
    with tf.GradientTape() as tape:
        result = add(v, 1.0)
    assert tape.gradient(result, v).numpy() == 1.0
    np.testing.assert_array_equal(dense_layer(tf.ones([3, 2]), tf.ones([2, 2]),
                                              tf.ones([2])).numpy(), 3)


def test_input_signature_mismatch_is_the_class_the_guide_catches():
    """Older guides catch TypeError, newer ones ValueError: the error is both."""
    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

    np.testing.assert_array_equal(next_collatz(tf.constant([1, 2], dtype=tf.int32)).numpy(),
                                  [4, 1])
    for error_class in (TypeError, ValueError):
        with assert_raises(error_class):
            next_collatz(tf.constant([[1, 2], [3, 4]], dtype=tf.int32))
        with assert_raises(error_class):
            next_collatz(tf.constant([1.0, 2.0]))


def test_python_side_effects_run_while_tracing_and_tf_print_on_every_call(capsys):
    @tf.function
    def f(x):
        print("Traced with", x)
        tf.print("Executed with", x)

    f(1)
    f(1)
    f(2)
    assert capsys.readouterr().out.splitlines() == [
        "Traced with 1", "Executed with 1", "Executed with 1", "Traced with 2",
        "Executed with 2"]


def test_a_python_iterator_is_read_once_while_tracing(capsys):
    """The guide's "buggy" case: a Python list's iterator is a Python object; TF too prints 1,
    1, 1."""
    @tf.function
    def buggy_consume_next(iterator):
        tf.print("Value:", next(iterator))

    iterator = iter([1, 2, 3])
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    assert capsys.readouterr().out.splitlines() == ["Value: 1"] * 3


def test_a_dataset_iterator_advances_on_every_call(capsys):
    @tf.function
    def good_consume_next(iterator):
        tf.print("Value:", next(iterator))

    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
    iterator = iter(ds)
    good_consume_next(iterator)
    good_consume_next(iterator)
    good_consume_next(iterator)
    assert capsys.readouterr().out.splitlines() == ["Value: 1", "Value: 2", "Value: 3"]
    assert good_consume_next.experimental_get_tracing_count() == 1
    with assert_raises(tf.errors.OutOfRangeError):
        good_consume_next(iterator)


def test_a_leaked_tensor_has_no_numpy_and_cannot_be_captured(capsys):
    x = None

    @tf.function
    def leaky_function(a):
        nonlocal x
        x = a + 1  # leaks a tensor of the trace
        return x

    correct_a = leaky_function(tf.constant(1))
    print(correct_a.numpy())
    try:
        x.numpy()
    except AttributeError as expected:
        print(expected)
    assert capsys.readouterr().out.splitlines()[0] == "2"

    @tf.function
    def captures_leaked_tensor(b):
        b += x
        return b

    with assert_raises(TypeError) as caught:
        captures_leaked_tensor(tf.constant(2))
    assert "leaked out of that trace" in str(caught.value)


def test_a_recursive_function_on_a_tensor_raises():
    @tf.function
    def recursive_fn(n):
        if n > 0:
            return recursive_fn(n - 1)
        else:
            return 1

    with assert_raises(Exception):
        recursive_fn(tf.constant(5))


def test_globals_are_read_while_tracing_and_variables_when_running():
    foo = 1

    @tf.function
    def buggy_add():
        return 1 + foo

    @tf.function
    def recommended_add(foo):
        return 1 + foo

    assert (int(buggy_add()), int(recommended_add(foo))) == (2, 2)
    foo = 100
    assert (int(buggy_add()), int(recommended_add(foo))) == (2, 101)    # "Did not change!"

    @tf.function
    def variable_add():
        return 1 + bar

    bar = tf.Variable(1)
    assert variable_add().numpy() == 2
    bar.assign(100)
    assert variable_add().numpy() == 101


def test_a_variable_made_on_every_call_is_refused_on_the_first_call():
    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v

    with assert_raises(ValueError) as caught:
        f(1.0)
    assert "create it outside the function, or on the first call only" in str(caught.value)


def test_a_variable_made_on_the_first_call_only_is_allowed():
    class Count:                        # (the guide's is a tf.Module)
        def __init__(self):
            self.count = None

        @tf.function
        def __call__(self):
            if self.count is None:
                self.count = tf.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    assert c().numpy() == 1
    assert c().numpy() == 2


def test_a_second_optimizer_makes_its_slots_on_a_later_trace_and_is_refused():
    opt1 = tf.keras.optimizers.Adam(learning_rate=1e-2)
    opt2 = tf.keras.optimizers.Adam(learning_rate=1e-3)

    @tf.function
    def train_step(w, x, y, optimizer):
        with tf.GradientTape() as tape:
            L = tf.reduce_sum(tf.square(w * x - y))
        gradients = tape.gradient(L, [w])
        optimizer.apply_gradients(zip(gradients, [w]))

    w = tf.Variable(2.)
    x = tf.constant([-1.])
    y = tf.constant([2.])
    train_step(w, x, y, opt1)
    with assert_raises(ValueError):
        train_step(w, x, y, opt2)


# ----------------------------------------------------------------------------- numpy and tensors
def test_numpy_functions_of_tensors_give_arrays_off_the_tape():
    """The autodiff guide's "calculations outside TensorFlow": the gradient is None."""
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with tf.GradientTape() as tape:
        x2 = x ** 2
        y = np.mean(x2, axis=0)
        y = tf.reduce_mean(y, axis=0)
    assert isinstance(np.mean(x2, axis=0), np.ndarray)
    np.testing.assert_allclose(y.numpy(), 7.5)
    assert tape.gradient(y, x) is None


def test_numpy_operations_convert_tensors_to_arrays():
    ndarray = np.ones([3, 3])
    tensor = tf.multiply(ndarray, 42)
    assert isinstance(tensor, eg.Tensor)
    added = np.add(tensor, 1)
    assert isinstance(added, np.ndarray)
    np.testing.assert_array_equal(added, 43)
    np.testing.assert_array_equal(tensor.numpy(), 42)
    for function in (np.sum, np.max, np.std, np.cumsum, np.transpose):
        np.testing.assert_array_equal(function(tensor), function(tensor.numpy()))


def test_tf_math_argmax_takes_axis_0_as_the_tensor_guide_prints():
    c = tf.constant([[4.0, 5.0], [10.0, 1.0]])
    assert tf.reduce_max(c).numpy() == 10.0
    np.testing.assert_array_equal(tf.math.argmax(c).numpy(), [1, 0])
    with assert_raises(ValueError) as caught:
        tf.argmax(c)                    # TF's axis 0 or PyTorch's flattened index?
    assert "eg.argmax(x, axis=0)" in str(caught.value) and "x.argmax()" in str(caught.value)


# ----------------------------------------------------------------------------- TF1 programs
def test_tf1_dropout_reads_a_positional_keep_prob():
    """The TF1 examples' convolutional net passes keep_prob (a placeholder fed 0.75) by
    position: 75 % of the units are kept while training, all when testing."""
    dropout = 0.75
    with tf.Graph().as_default():
        X = tf.placeholder(tf.float32, [None, 1000])
        keep_prob = tf.placeholder(tf.float32)
        fc1 = tf.nn.dropout(X, keep_prob)
        constant_rate = tf.nn.dropout(X, 0.9)
        with tf.Session() as sess:
            ones = np.ones((100, 1000), np.float32)
            kept = (sess.run(fc1, feed_dict={X: ones, keep_prob: dropout}) > 0).mean()
            assert abs(kept - 0.75) < 0.01
            np.testing.assert_array_equal(sess.run(fc1, {X: ones, keep_prob: 1.0}), ones)
            assert abs((sess.run(constant_rate, {X: ones}) > 0).mean() - 0.9) < 0.01


def test_tf2_dropout_reads_a_positional_rate_eagerly_and_in_a_function():
    x = tf.ones([100, 1000])
    assert abs((tf.nn.dropout(x, 0.9).numpy() > 0).mean() - 0.1) < 0.01
    assert abs((tf.function(lambda x: tf.nn.dropout(x, 0.9))(x).numpy() > 0).mean()
               - 0.1) < 0.01


def test_dropout_refuses_a_positional_argument_whose_version_cannot_be_told():
    """A traced function's body (TF2 code) called inside a TF1 graph is inlined there."""
    @tf.function
    def drop(x):
        return tf.nn.dropout(x, 0.9)

    with tf.Graph().as_default():
        X = tf.placeholder(tf.float32, [None, 10])
        with assert_raises(ValueError) as caught:
            drop(X)
        assert "rate=p" in str(caught.value) and "keep_prob=p" in str(caught.value)
        kept = tf.function(lambda x: tf.nn.dropout(x, keep_prob=0.9))(X)
        with tf.Session() as sess:
            ones = np.ones((1000, 10), np.float32)
            assert abs((sess.run(kept, {X: ones}) > 0).mean() - 0.9) < 0.02


def test_tf1_dataset_iterator_gives_the_next_batch_on_every_run():
    """TF1's input loop: run get_next() until OutOfRangeError ends the epoch."""
    dataset = tf.data.Dataset.from_tensor_slices(np.arange(10)).batch(4, drop_remainder=True)
    iterator = iter(dataset)
    with tf.Graph().as_default():
        next_element = iterator.get_next()
        batches = []
        with tf.Session() as sess:
            while True:
                try:
                    batches.append(sess.run(next_element))
                except tf.errors.OutOfRangeError:
                    break
    np.testing.assert_array_equal(batches, [[0, 1, 2, 3], [4, 5, 6, 7]])


def test_tf1_two_layer_net_as_in_the_pytorch_series(monkeypatch, capsys):
    """The series' TF1 version: a graph built once, run 500 times with fed data. Its losses
    are float32; they follow a float64 numpy run from the same numbers to float32 rounding."""
    rng = np.random.default_rng(0)
    monkeypatch.setattr(eg, "random_normal",
                        lambda shape: eg.tensor(rng.standard_normal(shape), dtype=eg.float32))
    with tf.Graph().as_default():
        N, D_in, H, D_out = 64, 1000, 100, 10
        x = tf.placeholder(tf.float32, shape=(None, D_in))
        y = tf.placeholder(tf.float32, shape=(None, D_out))
        w1 = tf.Variable(tf.random_normal((D_in, H)))
        w2 = tf.Variable(tf.random_normal((H, D_out)))
        h = tf.matmul(x, w1)
        h_relu = tf.maximum(h, tf.zeros(1))
        y_pred = tf.matmul(h_relu, w2)
        loss = tf.reduce_sum((y - y_pred) ** 2.0)
        grad_w1, grad_w2 = tf.gradients(loss, [w1, w2])
        learning_rate = 1e-6
        new_w1 = w1.assign(w1 - learning_rate * grad_w1)
        new_w2 = w2.assign(w2 - learning_rate * grad_w2)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            x_value = np.random.randn(N, D_in)
            y_value = np.random.randn(N, D_out)
            for _ in range(500):
                loss_value, _, _ = sess.run([loss, new_w1, new_w2],
                                            feed_dict={x: x_value, y: y_value})
                print(loss_value)
    losses = [float(v) for v in capsys.readouterr().out.split()]

    rng = np.random.default_rng(0)          # the same numbers, by hand in float64
    a, b = (rng.standard_normal(s).astype(np.float32).astype(np.float64)
            for s in ((D_in, H), (H, D_out)))
    xv, yv = (v.astype(np.float32).astype(np.float64) for v in (x_value, y_value))
    expected = []
    for _ in range(100):
        hv = xv @ a
        residual = np.maximum(hv, 0) @ b - yv
        expected.append((residual ** 2).sum())
        grad_b = np.maximum(hv, 0).T @ (2 * residual)
        grad_a = xv.T @ ((2 * residual) @ b.T * (hv > 0))
        a, b = a - learning_rate * grad_a, b - learning_rate * grad_b
    assert len(losses) == 500 and losses[-1] < losses[0] / 1000
    np.testing.assert_allclose(losses[:100], expected, rtol=1e-3)


# ----------------------------------------------------------------------------- PyTorch names
def test_pytorch_device_type_and_a_helpful_error_for_numpys_copy():
    x = eg.tensor([1.0, 2.0])
    assert x.device.type == "cpu"
    assert eg.device("cuda").type == "cuda"
    with assert_raises(AttributeError) as caught:
        x.copy()
    assert "use .clone(), as in PyTorch" in str(caught.value)
