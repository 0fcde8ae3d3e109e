"""Code students copy, TensorFlow side: guide cells and TF1 programs with ``tf.`` → ``eg.``.

Each test runs one cell of a TensorFlow guide ("Better performance with tf.function",
"Introduction to gradients and automatic differentiation", "Introduction to Tensors", the
eager basics) or one TF1 program as students wrote them, and checks what the guide prints
(or the exception class it catches). The code is written anew; the calls are the guides'.
The TF2 section follows "Introduction to modules, layers, and models", "Basic training loops",
the tf.function guide's AutoGraph, retracing and TensorArray cells, tf.py_function's and
tf.init_scope's reference pages, and Keras 3's "Writing a training loop from scratch", with
their data swapped for generated arrays.

Each test written in TF's API runs twice (the ``fw`` fixture, tests/tf_frameworks.py): with
edugraph, and with real TensorFlow where it is installed, so that what it expects is what TF
does; ``tf`` and ``tf1`` are bound at its start. What only edugraph does (its own messages, its
refusals where TF computes on) is checked under ``if fw.is_eg:``. The tests that take no ``fw``
are edugraph's alone; their docstrings say why.
"""
import contextlib

import numpy as np
import pytest

import edugraph as eg
from tests.tf_frameworks import FRAMEWORKS, framework, run_cell


@pytest.fixture(params=FRAMEWORKS, scope="module")
def fw(request):
    """edugraph ("eg"), then TensorFlow ("tf"): the names the copied code uses."""
    return framework(request.param)


@contextlib.contextmanager
def assert_raises(error_class):
    """The guides' helper: the block must raise ``error_class``."""
    with pytest.raises(error_class) as caught:
        yield caught


# ----------------------------------------------------------------------------- tf.function
def test_a_function_is_differentiable_and_callable_from_another(fw):
    tf = fw.tf

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


def test_input_signature_mismatch_is_the_class_the_guide_catches(fw):
    """The guide catches ValueError (what TF once raised); TF 2.21 raises TypeError: edugraph's
    error is both."""
    tf = fw.tf

    @tf.function(input_signature=(tf.TensorSpec(shape=[None], dtype=tf.int32),))
    def next_collatz(x):
        return tf.where(x % 2 == 0, x // 2, 3 * x + 1)

    np.testing.assert_array_equal(next_collatz(tf.constant([1, 2], dtype=tf.int32)).numpy(),
                                  [4, 1])
    # TF 2.21's is a TypeError only; edugraph's is also the ValueError the guide catches
    for error_class in (TypeError, ValueError) if fw.is_eg else (TypeError,):
        with assert_raises(error_class):
            next_collatz(tf.constant([[1, 2], [3, 4]], dtype=tf.int32))
        with assert_raises(error_class):
            next_collatz(tf.constant([1.0, 2.0]))


def test_python_side_effects_run_while_tracing_and_tf_print_on_every_call(fw, capfd):
    tf = fw.tf

    @tf.function
    def f(x):
        print("Traced with", x)
        tf.print("Executed with", x)

    f(1)
    f(1)
    f(2)
    printed = capfd.readouterr()    # tf.print writes to standard error (TF's at the C level)
    assert printed.out.splitlines() == ["Traced with 1", "Traced with 2"]
    assert printed.err.splitlines() == ["Executed with 1", "Executed with 1", "Executed with 2"]


def test_a_python_iterator_is_read_once_while_tracing(fw, capfd):
    """The guide's "buggy" case: a Python list's iterator is a Python object; TF too prints 1,
    1, 1."""
    tf = fw.tf

    @tf.function
    def buggy_consume_next(iterator):
        tf.print("Value:", next(iterator))

    iterator = iter([1, 2, 3])
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    assert capfd.readouterr().err.splitlines() == ["Value: 1"] * 3


def test_a_dataset_iterator_advances_on_every_call(fw, capfd):
    tf = fw.tf

    @tf.function
    def good_consume_next(iterator):
        tf.print("Value:", next(iterator))

    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3])
    iterator = iter(ds)
    good_consume_next(iterator)
    good_consume_next(iterator)
    good_consume_next(iterator)
    assert capfd.readouterr().err.splitlines() == ["Value: 1", "Value: 2", "Value: 3"]
    assert good_consume_next.experimental_get_tracing_count() == 1
    with assert_raises(tf.errors.OutOfRangeError):
        good_consume_next(iterator)


def test_a_leaked_tensor_has_no_numpy_and_cannot_be_captured(fw, capsys):
    tf = fw.tf
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
    if fw.is_eg:    # TF: "<tf.Tensor 'add:0' ...> is out of scope and cannot be used here."
        assert "leaked out of that trace" in str(caught.value)


def test_a_recursive_function_on_a_tensor_raises(fw):
    tf = fw.tf

    @tf.function
    def recursive_fn(n):
        if n > 0:
            return recursive_fn(n - 1)
        else:
            return 1

    with assert_raises(Exception):
        recursive_fn(tf.constant(5))


FACTORIAL_CELL = """
@tf.function
def factorial(n):
    if n <= 1:
        return tf.constant(1)
    return n * factorial(n - 1)
"""


def test_a_module_level_function_calls_itself(fw):
    """A notebook cell defines its functions at module level, so the call to itself reads a
    global (AutoGraph's conversion once made it a closure's cell, and failed: KeyError). The
    cell runs as a notebook runs it, in a namespace of its own."""
    factorial = run_cell(FACTORIAL_CELL, tf=fw.tf)["factorial"]
    assert factorial(5).numpy() == 120


def test_globals_are_read_while_tracing_and_variables_when_running(fw):
    tf = fw.tf
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


def test_a_variable_made_on_every_call_is_refused_on_the_first_call(fw):
    tf = fw.tf

    @tf.function
    def f(x):
        v = tf.Variable(1.0)
        return v

    with assert_raises(ValueError) as caught:
        f(1.0)
    if fw.is_eg:    # TF: "tf.function only supports singleton tf.Variables created on the
        # first call. Make sure the tf.Variable is only created once or created outside ..."
        assert "create it outside the function, or on the first call only" in str(caught.value)


def test_a_variable_made_on_the_first_call_only_is_allowed(fw):
    tf = fw.tf

    class Count(tf.Module):
        def __init__(self):
            super().__init__()
            self.count = None

        @tf.function
        def __call__(self):
            if self.count is None:
                self.count = tf.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    assert c().numpy() == 1
    assert c().numpy() == 2


def test_a_second_optimizer_makes_its_slots_on_a_later_trace_and_is_refused(fw):
    tf = fw.tf
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
def test_numpy_functions_of_tensors_give_arrays_off_the_tape(fw):
    """The autodiff guide's "calculations outside TensorFlow": the gradient is None."""
    tf = fw.tf
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with tf.GradientTape() as tape:
        x2 = x ** 2
        y = np.mean(x2, axis=0)
        y = tf.reduce_mean(y, axis=0)
    assert isinstance(np.mean(x2, axis=0), np.ndarray)
    np.testing.assert_allclose(y.numpy(), 7.5)
    assert tape.gradient(y, x) is None


def test_numpy_operations_convert_tensors_to_arrays(fw):
    tf = fw.tf
    ndarray = np.ones([3, 3])
    tensor = tf.multiply(ndarray, 42)
    assert isinstance(tensor, tf.Tensor)
    added = np.add(tensor, 1)
    assert isinstance(added, np.ndarray)
    np.testing.assert_array_equal(added, 43)
    np.testing.assert_array_equal(tensor.numpy(), 42)
    for function in (np.sum, np.max, np.std, np.cumsum, np.transpose):
        np.testing.assert_array_equal(function(tensor), function(tensor.numpy()))


def test_tf_math_argmax_takes_axis_0_as_the_tensor_guide_prints(fw):
    tf, tf1 = fw.tf, fw.tf1
    c = tf.constant([[4.0, 5.0], [10.0, 1.0]])
    assert tf.reduce_max(c).numpy() == 10.0
    np.testing.assert_array_equal(tf.math.argmax(c).numpy(), [1, 0])
    if fw.is_eg:    # edugraph's refusal; TF computes axis 0's [1, 0]
        with assert_raises(ValueError) as caught:
            tf.argmax(c)                # TF's axis 0 or PyTorch's flattened index?
        assert "eg.argmax(x, axis=0)" in str(caught.value) and "x.argmax()" in str(caught.value)
    else:
        np.testing.assert_array_equal(tf.argmax(c).numpy(), [1, 0])
    np.testing.assert_array_equal(tf1.argmax(c).numpy(), [1, 0])      # TF1 code: TF's
    np.testing.assert_array_equal(tf1.argmin(c, dimension=1).numpy(), [0, 1])


# ----------------------------------------------------------------------------- TF1 programs
def test_tf1_dropout_reads_a_positional_keep_prob(fw):
    """The TF1 examples' convolutional net passes keep_prob (a placeholder fed 0.75) by
    position: 75 % of the units are kept while training, all when testing."""
    tf = fw.tf1_program     # a TF1 program's tf: TF 2 runs it as tensorflow.compat.v1
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


def test_tf2_dropout_reads_a_positional_rate_eagerly_and_in_a_function(fw):
    tf = fw.tf
    x = tf.ones([100, 1000])
    assert abs((tf.nn.dropout(x, 0.9).numpy() > 0).mean() - 0.1) < 0.01
    assert abs((tf.function(lambda x: tf.nn.dropout(x, 0.9))(x).numpy() > 0).mean()
               - 0.1) < 0.01


def test_dropout_refuses_a_positional_argument_whose_version_cannot_be_told():
    """A traced function's body (TF2 code) called inside a TF1 graph is inlined there.
    edugraph's alone: its tf.nn.dropout serves TF1 and TF2 code, and refuses what TF's two
    namespaces settle (compat.v1's reads keep_prob, TF2's rate and refuses keep_prob=)."""
    tf = eg

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


def test_tf1_dataset_iterator_gives_the_next_batch_on_every_run(fw):
    """TF1's input loop: run get_next() until OutOfRangeError ends the epoch; the iterator is
    made in the graph, as TF1 programs make it (TF refuses an eager one there)."""
    tf = fw.tf1_program     # a TF1 program's tf: TF 2 runs it as tensorflow.compat.v1
    tf1 = fw.tf1
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(10)).batch(
            4, drop_remainder=True)
        next_element = tf1.data.make_one_shot_iterator(dataset).get_next()
        batches = []
        with tf.Session() as sess:
            while True:
                try:
                    batches.append(sess.run(next_element))
                except tf.errors.OutOfRangeError:
                    break
    np.testing.assert_array_equal(batches, [[0, 1, 2, 3], [4, 5, 6, 7]])


def test_tf1_initializable_iterator_starts_each_epoch_again(fw):
    """The epoch loop of TF1 programs: sess.run(iterator.initializer) at each epoch's start;
    get_next() before it is TF's FailedPreconditionError."""
    tf = fw.tf1_program     # a TF1 program's tf: TF 2 runs it as tensorflow.compat.v1
    with tf.Graph().as_default():
        dataset = tf.data.Dataset.from_tensor_slices(np.arange(6.0, dtype=np.float32))
        iterator = dataset.batch(4).make_initializable_iterator()
        total = tf.reduce_sum(iterator.get_next())
        sums = []
        with tf.Session() as sess:
            with assert_raises(tf.errors.FailedPreconditionError) as caught:
                sess.run(total)
            if fw.is_eg:    # TF: "GetNext() failed because the iterator has not been
                # initialized. Ensure that you have run the initializer operation ..."
                assert "sess.run(iterator.initializer)" in str(caught.value)
            for _ in range(2):
                sess.run(iterator.initializer)
                while True:
                    try:
                        sums.append(sess.run(total))
                    except tf.errors.OutOfRangeError:
                        break
    assert sums == [6.0, 9.0, 6.0, 9.0]
    with assert_raises(RuntimeError):                  # eagerly: iterate instead
        dataset.make_initializable_iterator()


def test_compat_v1_dropout_reads_keep_prob_also_eagerly(fw):
    """tf.compat.v1.nn.dropout's second argument is keep_prob wherever it runs: the
    namespace settles what tf.nn.dropout's position leaves open."""
    tf, tf1 = fw.tf, fw.tf1
    kept = (tf1.nn.dropout(tf.ones([100, 1000]), 0.9).numpy() > 0).mean()
    assert abs(kept - 0.9) < 0.01
    traced = tf.function(lambda x: tf1.nn.dropout(x, 0.9))(tf.ones([100, 1000]))
    assert abs((traced.numpy() > 0).mean() - 0.9) < 0.01
    with assert_raises(ValueError):
        tf1.nn.dropout(tf.ones([3]))


def test_tf1_two_layer_net_as_in_the_pytorch_series(fw, monkeypatch, capsys):
    """The series' TF1 version: a graph built once, run 500 times with fed data. Its losses
    are float32; they follow a float64 numpy run from the same numbers to float32 rounding."""
    tf = fw.tf1_program     # a TF1 program's tf: TF 2 runs it as tensorflow.compat.v1
    rng = np.random.default_rng(0)     # each framework's random_normal gives the same numbers
    monkeypatch.setattr(tf, "random_normal",
                        lambda shape: tf.constant(rng.standard_normal(shape), dtype=tf.float32))
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


# ----------------------------------------------------------------------------- TF2 pieces
def test_modules_guide_simple_module_and_its_variables():
    """edugraph's alone for now: TF names the variables "train_me:0" and "do_not_train_me:0"
    (as the guide prints them); edugraph "train_me" and "do_not_train_me". The rest agrees
    with TF 2.21."""
    tf = eg

    class SimpleModule(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.a_variable = tf.Variable(5.0, name="train_me")
            self.non_trainable_variable = tf.Variable(5.0, trainable=False,
                                                      name="do_not_train_me")

        def __call__(self, x):
            return self.a_variable * x + self.non_trainable_variable

    simple_module = SimpleModule(name="simple")
    assert simple_module(tf.constant(5.0)).numpy() == 30.0
    assert [v.name for v in simple_module.trainable_variables] == ["train_me"]
    assert [v.name for v in simple_module.variables] == ["train_me", "do_not_train_me"]


def dense_class(tf):
    """The modules guide's Dense, a module of ``tf`` (the guide defines it at module level)."""
    class Dense(tf.Module):
        def __init__(self, in_features, out_features, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
            self.b = tf.Variable(tf.zeros([out_features]), name="b")

        def __call__(self, x):
            y = tf.matmul(x, self.w) + self.b
            return tf.nn.relu(y)

    return Dense


def test_modules_guide_sequential_module_submodules_and_a_traced_call():
    """edugraph's alone for now: TF's variable names are ["b:0", "w:0", "b:0", "w:0"]. The
    rest agrees with TF 2.21."""
    tf = eg
    Dense = dense_class(tf)

    class SequentialModule(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            self.dense_1 = Dense(in_features=3, out_features=3)
            self.dense_2 = Dense(in_features=3, out_features=2)

        @tf.function
        def __call__(self, x):
            x = self.dense_1(x)
            return self.dense_2(x)

    my_model = SequentialModule(name="the_model")
    x = np.array([[2.0, 2.0, 2.0]], np.float32)
    w1, b1, w2, b2 = (v.numpy() for v in (my_model.dense_1.w, my_model.dense_1.b,
                                          my_model.dense_2.w, my_model.dense_2.b))
    expected = np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0)
    np.testing.assert_allclose(my_model(tf.constant(x)).numpy(), expected, rtol=1e-6)
    assert my_model.submodules == (my_model.dense_1, my_model.dense_2)
    assert [v.name for v in my_model.variables] == ["b", "w", "b", "w"]
    assert my_model.name == "the_model" and Dense(1, 1).name == "dense"


def test_modules_guide_name_scopes_prefix_the_variables():
    """edugraph's alone for now: TF's variable names are ["outer/b:0", "outer/scale:0",
    "outer/w:0"]. The rest agrees with TF 2.21."""
    tf = eg
    Dense = dense_class(tf)

    class MyModule(tf.Module):
        def __init__(self, name=None):
            super().__init__(name=name)
            with self.name_scope:
                self.dense = Dense(2, 2)
                self.scale = tf.Variable(1.0, name="scale")

    module = MyModule(name="outer")
    assert sorted(v.name for v in module.variables) == ["outer/b", "outer/scale", "outer/w"]


def test_modules_guide_flexible_dense_builds_on_its_first_call(fw):
    """A Python `if` on a Python flag in a traced method: it stays Python (AutoGraph leaves
    it), so the variables are made on the first call only."""
    tf = fw.tf

    class FlexibleDenseModule(tf.Module):
        def __init__(self, out_features, name=None):
            super().__init__(name=name)
            self.is_built = False
            self.out_features = out_features

        @tf.function
        def __call__(self, x):
            if not self.is_built:
                self.w = tf.Variable(tf.ones([x.shape[-1], self.out_features]), name="w")
                self.b = tf.Variable(tf.zeros([self.out_features]), name="b")
                self.is_built = True
            return tf.matmul(x, self.w) + self.b

    layer = FlexibleDenseModule(out_features=2)
    np.testing.assert_array_equal(layer(tf.constant([[2.0, 2.0, 2.0]])).numpy(), [[6.0, 6.0]])
    assert [tuple(v.shape) for v in layer.trainable_variables] == [(2,), (3, 2)]


def test_basic_training_loop_guide_with_a_module_matches_numpy(fw):
    tf = fw.tf
    TRUE_W, TRUE_B, NUM_EXAMPLES = 3.0, 2.0, 201
    x = tf.linspace(-2, 2, NUM_EXAMPLES)
    x = tf.cast(x, tf.float32)
    noise = tf.constant(np.random.default_rng(0).standard_normal(NUM_EXAMPLES), tf.float32)
    y = x * TRUE_W + TRUE_B + noise

    class MyModel(tf.Module):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = tf.Variable(5.0)
            self.b = tf.Variable(0.0)

        def __call__(self, x):
            return self.w * x + self.b

    model = MyModel()
    assert model(3.0).numpy() == 15.0

    def loss(target_y, predicted_y):
        return tf.reduce_mean(tf.square(target_y - predicted_y))

    def train(model, x, y, learning_rate):
        with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        model.w.assign_sub(learning_rate * dw)
        model.b.assign_sub(learning_rate * db)

    for epoch in range(10):
        train(model, x, y, learning_rate=0.1)

    xs, ys, w, b = x.numpy().astype(np.float64), y.numpy().astype(np.float64), 5.0, 0.0
    for epoch in range(10):
        residual = w * xs + b - ys
        w, b = w - 0.1 * 2 * np.mean(residual * xs), b - 0.1 * 2 * np.mean(residual)
    np.testing.assert_allclose([model.w.numpy(), model.b.numpy()], [w, b], rtol=1e-5)


def test_keras3_custom_training_loop_with_optimizer_apply(fw):
    tf = fw.tf

    def make_model():
        fw.set_seed(0)          # both models start from the same weights (of this framework)
        return tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"),
                                    tf.keras.layers.Dense(3)])

    rng = np.random.default_rng(1)
    x_batch = tf.constant(rng.standard_normal((16, 4)), tf.float32)
    y_batch = tf.constant(rng.integers(0, 3, 16))
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    trained = []
    for spelling in ("apply", "apply_gradients"):
        model = make_model()
        optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
        for step in range(3):
            with tf.GradientTape() as tape:
                logits = model(x_batch, training=True)
                loss_value = loss_fn(y_batch, logits)
            grads = tape.gradient(loss_value, model.trainable_weights)
            if spelling == "apply":
                optimizer.apply(grads, model.trainable_weights)
            else:
                optimizer.apply_gradients(zip(grads, model.trainable_weights))
        trained.append([w.numpy() for w in model.trainable_weights])
    for a, b in zip(*trained):
        np.testing.assert_array_equal(a, b)
    if fw.is_eg:        # edugraph's check: Keras 3 updates the first variable, no word
        with assert_raises(ValueError) as caught:
            optimizer.apply(grads[:1], model.trainable_weights)
        assert "1 gradients for 4 variables" in str(caught.value)


def test_compile_with_run_eagerly_trains_as_without(fw):
    tf = fw.tf
    histories = []
    x = np.random.default_rng(2).standard_normal((32, 3)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0], [0.5]], np.float32)
    for run_eagerly in (True, False):
        fw.set_seed(0)          # the same initial weights (of this framework) for both
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile(optimizer="sgd", loss="mse", run_eagerly=run_eagerly)
        histories.append(model.fit(x, y, epochs=3, batch_size=8, verbose=0,
                                   shuffle=False).history["loss"])
    assert histories[0] == histories[1] and histories[0][-1] < histories[0][0]


def test_function_guide_concrete_function_of_a_tensor_spec(fw, capsys):
    tf = fw.tf

    @tf.function
    def double(a):
        print("Tracing with", a)
        return a + a

    double_ints = double.get_concrete_function(tf.TensorSpec(shape=[None], dtype=tf.int32))
    np.testing.assert_array_equal(double_ints(tf.constant([1, 2, 3])).numpy(), [2, 4, 6])
    np.testing.assert_array_equal(double(tf.constant([1, 2, 3, 4])).numpy(), [2, 4, 6, 8])
    assert double.experimental_get_tracing_count() == 1     # the (None,) trace serves both
    assert capsys.readouterr().out.count("Tracing with") == 1
    spec = tf.TensorSpec(shape=(None, 3), dtype=tf.float32, name="x")
    # dtypes print as edugraph's "eg.float32" where TF's print "tf.float32"
    assert repr(spec) == f"TensorSpec(shape=(None, 3), dtype={fw.name}.float32, name='x')"


def test_function_guide_pretty_printed_concrete_signatures(fw):
    tf = fw.tf

    @tf.function
    def double(a):
        return a + a

    double(tf.constant(1))
    double(tf.constant([1.5, 2.0]))
    # edugraph's dtypes print as "eg.int32", TF's as "tf.int32"
    assert double.pretty_printed_concrete_signatures() == (
        "Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(), dtype=eg.int32, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(), dtype=eg.int32, name=None)\n"
        "Captures:\n"
        "  None\n\n"
        "Input Parameters:\n"
        "  a (POSITIONAL_OR_KEYWORD): TensorSpec(shape=(2,), dtype=eg.float32, name=None)\n"
        "Output Type:\n"
        "  TensorSpec(shape=(2,), dtype=eg.float32, name=None)\n"
        "Captures:\n"
        "  None").replace("dtype=eg.", f"dtype={fw.name}.")


def test_function_guide_reduce_retracing_traces_once_more_for_any_length(fw, capsys):
    tf = fw.tf

    @tf.function(reduce_retracing=True)
    def g(x):
        print("Tracing with", tuple(x.shape))
        return x

    for n in (3, 5, 7, 9):
        np.testing.assert_array_equal(g(tf.constant(list(range(1, n + 1)))).numpy(),
                                      np.arange(1, n + 1))
    assert capsys.readouterr().out.splitlines() == ["Tracing with (3,)",
                                                    "Tracing with (None,)"]
    assert g.experimental_get_tracing_count() == 2


def test_function_guide_autograph_fizzbuzz(fw, capfd):
    tf = fw.tf

    @tf.function
    def fizzbuzz(n):
        for i in tf.range(1, n + 1):
            if i % 15 == 0:
                tf.print("FizzBuzz")
            elif i % 3 == 0:
                tf.print("Fizz")
            elif i % 5 == 0:
                tf.print("Buzz")
            else:
                tf.print(i)

    fizzbuzz(tf.constant(15))
    expected = ["FizzBuzz" if i % 15 == 0 else "Fizz" if i % 3 == 0 else
                "Buzz" if i % 5 == 0 else str(i) for i in range(1, 16)]
    assert capfd.readouterr().err.splitlines() == expected


def test_function_guide_while_loop_on_a_tensor_and_to_code():
    """edugraph's alone for now: TF's to_code refuses a tf.function (ConversionError: pass
    f.python_function, as the guide does), and its code of the loop reads
    "ag__.while_stmt(loop_test, loop_body, get_state, set_state, ('x',), {})". The loop's
    result agrees with TF 2.21."""
    tf = eg

    @tf.function
    def f(x):
        while tf.reduce_sum(x) > 1:
            x = tf.tanh(x)
        return x

    x = np.random.default_rng(3).uniform(size=10).astype(np.float32)
    expected = x
    while expected.sum() > 1:
        expected = np.tanh(expected)
    np.testing.assert_allclose(f(tf.constant(x)).numpy(), expected, rtol=1e-5)
    assert "ag__.while_stmt(loop_test, loop_body, (x,), ('x',))" in tf.autograph.to_code(f)


def test_function_guide_dynamic_rnn_with_a_tensor_array(fw):
    tf = fw.tf
    batch_size, seq_len, feature_size = 2, 3, 4

    def rnn_step(inp, state):
        return inp + state

    @tf.function
    def dynamic_rnn(rnn_step, input_data, initial_state):
        # [batch, time, features] -> [time, batch, features]
        input_data = tf.transpose(input_data, [1, 0, 2])
        max_seq_len = input_data.shape[0]

        states = tf.TensorArray(tf.float32, size=max_seq_len)
        state = initial_state
        for i in tf.range(max_seq_len):
            state = rnn_step(input_data[i], state)
            states = states.write(i, state)
        return tf.transpose(states.stack(), [1, 0, 2])

    data = np.random.default_rng(4).uniform(size=(batch_size, seq_len, feature_size))
    result = dynamic_rnn(rnn_step, tf.constant(data, tf.float32),
                         tf.zeros([batch_size, feature_size]))
    np.testing.assert_allclose(result.numpy(), np.cumsum(data, axis=1), rtol=1e-6)


def test_tensor_array_eagerly_as_its_reference_page(fw):
    tf = fw.tf
    ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
    ta = ta.write(0, 10)
    ta = ta.write(1, 20)
    ta = ta.write(2, 30)
    assert ta.read(1).numpy() == 20.0
    np.testing.assert_array_equal(ta.stack().numpy(), [10.0, 20.0, 30.0])


def test_py_function_reference_page_log_huber_and_its_gradient(fw):
    tf = fw.tf

    def log_huber(x, m):
        if tf.abs(x) <= m:
            return x ** 2
        else:
            return m ** 2 * (1 - 2 * tf.math.log(m) + tf.math.log(x ** 2))

    x = tf.constant(1.0)
    m = tf.constant(2.0)
    with tf.GradientTape() as t:
        t.watch([x, m])
        y = tf.py_function(func=log_huber, inp=[x, m], Tout=tf.float32)
    dy_dx = t.gradient(y, x)
    assert dy_dx.numpy() == 2.0

    @tf.function
    def traced(x, m):
        return tf.py_function(func=log_huber, inp=[x, m], Tout=tf.float32)

    assert traced(tf.constant(1.0), m).numpy() == 1.0
    far = 4.0 * (1 - 2 * np.log(2.0) + np.log(9.0))        # |x| = 3 > m: the log branch
    assert traced(tf.constant(3.0), m).numpy() == pytest.approx(far, rel=1e-6)
    assert "EagerPyFunc" in [op.type for op in traced.get_concrete_function(
        x, m).graph.get_operations()]


def test_init_scope_runs_its_block_eagerly_while_tracing(fw):
    tf = fw.tf
    seen = []

    @tf.function
    def f(x):
        with tf.init_scope():
            seen.append(tf.executing_eagerly())
        seen.append(tf.executing_eagerly())
        return x

    f(tf.constant(1.0))
    assert seen == [True, False]


def test_convert_to_tensor_and_range_with_tensor_limits(fw):
    tf = fw.tf
    assert tf.convert_to_tensor([1, 2, 3]).dtype == tf.int32
    assert tf.convert_to_tensor(np.array([1.0])).dtype == tf.float64
    assert tf.convert_to_tensor(1, dtype_hint=tf.float32).dtype == tf.float32
    t = tf.constant([1.0])
    assert tf.convert_to_tensor(t) is t
    with assert_raises(ValueError):
        tf.convert_to_tensor(t, dtype=tf.int32)
    np.testing.assert_array_equal(tf.range(tf.constant(5)).numpy(), [0, 1, 2, 3, 4])

    @tf.function
    def evens(n):
        return tf.range(0, n, 2)

    np.testing.assert_array_equal(evens(tf.constant(7)).numpy(), [0, 2, 4, 6])
    np.testing.assert_array_equal(evens(tf.constant(3)).numpy(), [0, 2])
    assert evens.experimental_get_tracing_count() == 1


# ----------------------------------------------------------------------------- PyTorch names
def test_pytorch_device_type_and_a_helpful_error_for_numpys_copy():
    """edugraph's alone: PyTorch's names, and edugraph's hint for NumPy's."""
    x = eg.tensor([1.0, 2.0])
    assert x.device.type == "cpu"
    assert eg.device("cuda").type == "cuda"
    with assert_raises(AttributeError) as caught:
        x.copy()
    assert "use .clone(), as in PyTorch" in str(caught.value)
