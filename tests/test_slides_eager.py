"""The lecture slides' PyTorch, TF2 and Keras snippets, with ``torch.`` / ``tf.`` replaced by
``eg.`` (and ``from torch.autograd`` by ``from edugraph.autograd``): they run as written and
give the numbers the slides promise.

Each test of a TF2 or Keras slide runs twice (the ``fw`` fixture, tests/tf_frameworks.py): with
edugraph, and with real TensorFlow where it is installed, so that what it expects is what TF
does; ``tf`` is bound at its start. What only edugraph does (its own messages, its TF1 and
PyTorch names beside TF2's) is checked under ``if fw.is_eg:``. The tests that take no ``fw``
are edugraph's alone: the PyTorch slides (autograd's Variable, ``.data``, ``.backward()``), TF
1.x's eager preview (``tf.contrib`` is gone from TF 2), and those whose docstrings say why.
"""
import sys

import numpy as np
import pytest

import edugraph as eg
from tests.tf_frameworks import FRAMEWORKS, framework


@pytest.fixture(params=FRAMEWORKS, scope="module")
def fw(request):
    """edugraph ("eg"), then TensorFlow ("tf"): the names the slides' code uses."""
    return framework(request.param)


def test_pytorch_computational_graph_with_autograd_variable(capsys):
    from edugraph.autograd import Variable

    N, D = 3, 4
    x = Variable(eg.randn(N, D), requires_grad=True)
    y = Variable(eg.randn(N, D), requires_grad=True)
    z = Variable(eg.randn(N, D), requires_grad=True)
    a = x * y
    b = a + z
    c = eg.sum(b)
    c.backward()
    print(x.grad.data)
    print(y.grad.data)
    print(z.grad.data)
    np.testing.assert_allclose(x.grad.data.numpy(), y.numpy())     # mul switches
    np.testing.assert_allclose(y.grad.data.numpy(), x.numpy())
    np.testing.assert_allclose(z.grad.data.numpy(), np.ones((N, D)))
    assert capsys.readouterr().out.count("tensor(") == 3
    assert not x.grad.data.requires_grad


def test_old_pytorch_update_through_data():
    w = eg.tensor([1.0, -2.0], requires_grad=True)
    loss = eg.sum(w * w)
    loss.backward()
    w.data -= 0.25 * w.grad.data                   # w ← w − η ∇ (outside the graph)
    np.testing.assert_allclose(w.numpy(), [0.5, -1.0])
    assert w.requires_grad and w._op is None       # still a leaf


def test_keras_cnn_from_the_slides_compiles_and_fits(fw):
    tf = fw.tf
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
        tf.keras.layers.MaxPooling2D(),
        tf.keras.layers.Flatten(),
        tf.keras.layers.Dense(10, activation='softmax')
    ])
    model.compile(loss='sparse_categorical_crossentropy',
                  optimizer=tf.keras.optimizers.Adam(),
                  metrics=['accuracy'])
    rng = np.random.default_rng(0)
    images = rng.random((64, 28, 28, 1)).astype(np.float32)
    labels = rng.integers(0, 10, 64)
    train_dataset = tf.data.Dataset.from_tensor_slices((images, labels)).batch(32)
    history = model.fit(train_dataset, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()
    assert model.count_params() == 32 * 9 + 32 + 13 * 13 * 32 * 10 + 10
    adam = model.optimizer
    assert (adam.learning_rate, adam.epsilon) == (0.001, 1e-7)        # Keras's defaults


def test_embedding_parameters_slide(capsys):
    """edugraph's alone: it shows the slide's Keras 2 summary (Keras 2's Embedding took
    input_shape=(None,) when given none, so the model was built). Keras 3.15's Sequential stays
    unbuilt: its summary shows the output shape "?", "0 (unbuilt)" and "Total params: 0"."""
    from edugraph.keras.layers import Embedding

    vocab_size, embed_dim, = 1000, 64
    model = eg.keras.Sequential()
    model.add(Embedding(vocab_size, embed_dim))
    model.summary()
    out = capsys.readouterr().out
    assert "(None, None, 64)" in out and "Total params: 64,000" in out


def test_keras_optimizer_names_keep_keras_defaults(fw):
    tf = fw.tf
    sgd = tf.keras.optimizers.SGD(momentum=0.9, nesterov=True)
    assert sgd.momentum == 0.9
    rms = tf.keras.optimizers.RMSprop()
    assert (rms.learning_rate, rms.epsilon) == (0.001, 1e-7)
    if fw.is_eg:    # edugraph's Keras names make its TF1 optimizers; Keras 3's are classes
        # of their own, SGD's flag is sgd.nesterov, RMSprop's 0.9 is rms.rho
        assert isinstance(sgd, eg.train.MomentumOptimizer) and sgd.use_nesterov
        assert isinstance(eg.keras.optimizers.get("sgd"), eg.train.GradientDescentOptimizer)
        assert (rms.learning_rate, rms.decay, rms.epsilon) == (0.001, 0.9, 1e-7)
    else:
        assert sgd.nesterov and rms.rho == 0.9
        assert isinstance(tf.keras.optimizers.get("sgd"), tf.keras.optimizers.SGD)


def test_tf2_device_placement_slide(fw):
    tf = fw.tf
    n = 10
    with tf.device("CPU:0"):
        # the slide's TF1 name: TF 2 has it as tf.compat.v1.random_uniform only
        x = (tf.random_uniform if fw.is_eg else fw.tf1.random_uniform)([n, n])
        assert x.device.endswith("CPU:0")
    if fw.is_eg:    # edugraph's device list; TF's is tf.config.list_physical_devices()
        assert eg.test.is_gpu_available() == any(d.kind == "gpu" for d in eg.list_devices())
    else:
        assert tf.test.is_gpu_available() == bool(tf.config.list_physical_devices("GPU"))


def test_tf_print_runs_on_every_call_python_print_only_while_tracing(fw, capfd):
    tf = fw.tf

    @tf.function
    def f(x):
        print("tracing")
        tf.print("x =", x)
        return x + 1

    f(tf.constant([1, 2]))
    f(tf.constant([3, 4]))
    printed = capfd.readouterr()    # tf.print: standard error (TF's at the C level)
    assert printed.out.splitlines() == ["tracing"]
    assert printed.err.splitlines() == ["x = [1 2]", "x = [3 4]"]
    if fw.is_eg:                    # PyTorch's name for a constant: edugraph's too
        f(eg.tensor([5, 6]))
        assert capfd.readouterr().err == "x = [5 6]\n"
    tf.print("eager:", tf.range(3))
    assert capfd.readouterr().err == "eager: [0 1 2]\n"
    x = tf.random.uniform([10])
    assert x.shape == (10,) and 0 <= x.numpy().min() and x.numpy().max() < 1


def test_tf_print_in_a_session_prints_when_fetched(fw, capfd):
    tf = fw.tf1_program     # a TF1 program's tf: TF 2 runs it as tensorflow.compat.v1
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, shape=(2,), name="x")
        shown = tf.print("sum:", tf.reduce_sum(x))
        with tf.control_dependencies([shown]):
            doubled = tf.identity(x * 2)
        assert capfd.readouterr().err == ""           # building prints nothing
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(doubled, {x: [1.0, 2.0]}), [2.0, 4.0])
            sess.run(x * 3, {x: [1.0, 1.0]})           # does not need the print
    assert capfd.readouterr().err == "sum: 3\n"        # (as TF shows the float 3.0)


def test_tf_print_shows_values_as_tf_does(fw, capfd, tmp_path):
    """TF's formats: a float with 6 digits where they read back as the number, else 9 (17 for
    float64); the first and last `summarize` entries of each dimension; booleans 1 and 0;
    a list or dict with the tensors in it shown; numpy arrays as their repr."""
    tf = fw.tf
    tf.print(tf.constant([0.1, 2.0, 1e6]), tf.constant(np.pi), tf.constant(1 / 3, tf.float64),
             output_stream=sys.stdout)
    tf.print(tf.range(10), tf.range(10, dtype=tf.int32), summarize=2, output_stream=sys.stdout)
    tf.print(tf.constant(np.arange(8.0).reshape(2, 2, 2)), tf.constant([True, False]),
             [1, tf.constant(2), "s"], np.array([1.5, 2.0]), output_stream=sys.stdout)
    tf.print(tf.range(10), summarize=-1, sep=",", end="!\n", output_stream=sys.stdout)
    assert capfd.readouterr().out == (    # (TF's sys.stdout: written at the C level)
        "[0.1 2 1e+06] 3.14159274 0.33333333333333331\n"
        "[0 1 ... 8 9] [0 1 ... 8 9]\n"
        "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]] [1 0] [1, 2, 's'] array([1.5, 2. ])\n"
        "[0 1 2 3 4 5 6 7 8 9]!\n")
    log = tmp_path / "log.txt"
    tf.print("loss", tf.constant(0.5), output_stream=f"file://{log}")
    assert log.read_text() == "loss 0.5\n"
    with pytest.raises(ValueError) as caught:
        tf.print(1, output_stream=42)
    if fw.is_eg:    # TF: "Unsupported output stream, logging level, or file.42. ..."
        assert "unsupported output_stream 42" in str(caught.value)


def test_star_import_keeps_pythons_builtins_and_standard_modules():
    """edugraph's alone: ``from tensorflow import *`` binds TF's print and range over Python's
    and replaces the math and random modules by tf.math and tf.random (and TF 2 has no
    Session); edugraph's star import leaves Python's names alone."""
    namespace = {}
    exec("import math, random\nfrom edugraph import *", namespace)
    assert "print" not in namespace and "range" not in namespace and "sum" not in namespace
    assert namespace["math"].__name__ == "math" and namespace["random"].__name__ == "random"
    assert namespace["Session"] is eg.Session and namespace["keras"] is eg.keras


def test_lstm_cell_made_faster_with_function(fw):
    """The slide: the same LSTMCell step eagerly and as a traced function (the graph runs the
    same maths; the slide's point is the time, which bench/ measures, not this test)."""
    tf = fw.tf
    lstm_cell = tf.keras.layers.LSTMCell(10)

    @tf.function
    def fn(input, state):
        return lstm_cell(input, state)

    input = tf.zeros([10, 10]); state = [tf.zeros([10, 10])] * 2  # noqa: E702
    lstm_cell(input, state); fn(input, state)                         # noqa: E702  warm up
    eager_h, (_, eager_c) = lstm_cell(input + 1.0, state)
    traced_h, (_, traced_c) = fn(input + 1.0, state)
    np.testing.assert_allclose(traced_h.numpy(), eager_h.numpy(), rtol=1e-6)
    np.testing.assert_allclose(traced_c.numpy(), eager_c.numpy(), rtol=1e-6)
    assert fn.experimental_get_tracing_count() == 1


def test_tf1_eager_preview_defun():
    """TF 1.x's eager preview: @tf.contrib.eager.defun, the ancestor of @tf.function."""
    eg.enable_eager_execution()

    @eg.contrib.eager.defun
    def square_sum(x, y):
        return eg.square(x + y)

    result = square_sum(2., 3.)
    assert result.numpy() == 25.0
    assert square_sum.get_concrete_function(2., 3.) is not None


def test_tf1_eager_preview_gradients_function_and_variables_on_a_tape(capsys):
    """The slides' ``tfe.gradients_function`` and ``tfe.Variable``, with TF 1.5's import."""
    import edugraph.contrib.eager as tfe
    tfe.enable_eager_execution()

    def f(x):
        return eg.square(x)

    grads = tfe.gradients_function(f)
    assert [g.item() for g in grads(3.0)] == [6.0]          # grads(3.0) # 6.0
    c = tfe.Variable([[2.0]])
    d = tfe.Variable([[3.0]])
    with eg.GradientTape() as tape:
        loss = c * d
    grad = tape.gradient(loss, d)
    print(grad)  # 2.0
    assert capsys.readouterr().out == "tensor([[2.]])\n"


SLIDE_FEATURES = [[2.0, 1, 3, 2],       # the batch-norm slide: 3 examples (rows), 4 features
                  [4.0, 1, 0, 4],
                  [3.0, 1, 3, 0]]


def test_batch_norm_and_layer_norm_statistics_of_the_slide(fw):
    """Batch norm's mean and std per feature (down the columns), layer norm's per example
    (along the rows), in each framework's spelling; the slide's "Std" divides by n. The
    PyTorch spelling is edugraph's alone."""
    tf = fw.tf
    x = tf.constant(SLIDE_FEATURES)
    mean, variance = tf.nn.moments(x, axes=[0])
    np.testing.assert_allclose(mean.numpy(), [3.0, 1.0, 2.0, 2.0])
    np.testing.assert_allclose(tf.sqrt(variance).numpy(), [0.8165, 0.0, 1.4142, 1.6330],
                               atol=5e-5)
    np.testing.assert_allclose(tf.math.reduce_std(x, axis=0).numpy(), tf.sqrt(variance).numpy())
    np.testing.assert_allclose(tf.reduce_mean(x, 1).numpy(), [2.0, 2.25, 1.75])
    if not fw.is_eg:
        return
    x = eg.tensor(SLIDE_FEATURES)                   # PyTorch's spelling
    np.testing.assert_allclose(eg.sqrt(eg.nn.moments(x, axes=[0])[1]).numpy(),
                               [0.8165, 0.0, 1.4142, 1.6330], atol=5e-5)
    np.testing.assert_allclose(x.mean(1).numpy(), [2.0, 2.25, 1.75])
    np.testing.assert_allclose(x.std(1, unbiased=False).numpy(), [0.7071, 1.7854, 1.2990],
                               atol=5e-5)
    np.testing.assert_allclose(x.std(1).numpy() ** 2, x.var(1).numpy(), rtol=1e-6)  # n - 1
    np.testing.assert_allclose(x.var(1).numpy() * 3 / 4, eg.math.reduce_variance(x, 1).numpy(),
                               rtol=1e-6)


def test_tf_nn_batch_normalization_by_hand_is_the_training_layer():
    """The slide's normalisation written out: moments, then batch_normalization; a
    BatchNormalization layer in training mode computes the same, gradients included.
    edugraph's alone: its gradients are PyTorch's ``.backward()``, its layer built by
    edugraph's build_for."""
    rng = np.random.default_rng(3)
    x = eg.tensor(SLIDE_FEATURES, dtype=eg.float64, requires_grad=True)
    gamma, beta = rng.normal(size=4), rng.normal(size=4)
    mean, variance = eg.nn.moments(x, axes=[0])
    by_hand = eg.nn.batch_normalization(x, mean, variance, offset=beta, scale=gamma,
                                        variance_epsilon=1e-3)
    (by_hand * [1.0, 2.0, 3.0, 4.0]).sum().backward()
    grad_by_hand, x.grad = x.grad.numpy(), None
    layer = eg.layers.BatchNormalization(dtype="float64")
    layer.build_for((None, 4))
    layer.gamma.assign(gamma), layer.beta.assign(beta)
    by_layer = layer(x, training=True)
    (by_layer * [1.0, 2.0, 3.0, 4.0]).sum().backward()
    np.testing.assert_allclose(by_hand.numpy(), by_layer.numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad_by_hand, x.grad.numpy(), rtol=1e-9, atol=1e-12)
    # the constant feature (column 1) becomes beta: its spread is 0, epsilon keeps it finite
    np.testing.assert_allclose(by_hand.numpy()[:, 1], beta[1])
