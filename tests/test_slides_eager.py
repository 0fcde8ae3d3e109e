"""The lecture slides' PyTorch, TF2 and Keras snippets, with ``torch.`` / ``tf.`` replaced by
``eg.`` (and ``from torch.autograd`` by ``from edugraph.autograd``): they run as written and
give the numbers the slides promise."""
import numpy as np
import pytest

import edugraph as eg


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


def test_keras_cnn_from_the_slides_compiles_and_fits():
    model = eg.keras.Sequential([
        eg.keras.layers.Conv2D(32, 3, activation='relu', input_shape=(28, 28, 1)),
        eg.keras.layers.MaxPooling2D(),
        eg.keras.layers.Flatten(),
        eg.keras.layers.Dense(10, activation='softmax')
    ])
    model.compile(loss='sparse_categorical_crossentropy',
                  optimizer=eg.keras.optimizers.Adam(),
                  metrics=['accuracy'])
    rng = np.random.default_rng(0)
    images = rng.random((64, 28, 28, 1)).astype(np.float32)
    labels = rng.integers(0, 10, 64)
    train_dataset = eg.data.Dataset.from_tensor_slices((images, labels)).batch(32)
    history = model.fit(train_dataset, epochs=2, verbose=0)
    assert len(history.history["loss"]) == 2 and np.isfinite(history.history["loss"]).all()
    assert model.count_params() == 32 * 9 + 32 + 13 * 13 * 32 * 10 + 10
    adam = model.optimizer
    assert (adam.learning_rate, adam.epsilon) == (0.001, 1e-7)        # Keras's defaults


def test_embedding_parameters_slide(capsys):
    from edugraph.keras.layers import Embedding

    vocab_size, embed_dim, = 1000, 64
    model = eg.keras.Sequential()
    model.add(Embedding(vocab_size, embed_dim))
    model.summary()
    out = capsys.readouterr().out
    assert "(None, None, 64)" in out and "Total params: 64,000" in out


def test_keras_optimizer_names_keep_keras_defaults():
    sgd = eg.keras.optimizers.SGD(momentum=0.9, nesterov=True)
    assert isinstance(sgd, eg.train.MomentumOptimizer) and sgd.use_nesterov
    assert isinstance(eg.keras.optimizers.get("sgd"), eg.train.GradientDescentOptimizer)
    rms = eg.keras.optimizers.RMSprop()
    assert (rms.learning_rate, rms.decay, rms.epsilon) == (0.001, 0.9, 1e-7)


def test_tf2_device_placement_slide():
    n = 10
    with eg.device("CPU:0"):
        x = eg.random_uniform([n, n])
        assert x.device.endswith("CPU:0")
    assert eg.test.is_gpu_available() == any(d.kind == "gpu" for d in eg.list_devices())


def test_tf_print_runs_on_every_call_python_print_only_while_tracing(capsys):
    @eg.function
    def f(x):
        print("tracing")
        eg.print("x =", x)
        return x + 1

    f(eg.tensor([1, 2]))
    f(eg.tensor([3, 4]))
    printed = capsys.readouterr()                   # eg.print: standard error, as tf.print
    assert printed.out.splitlines() == ["tracing"]
    assert printed.err.splitlines() == ["x = [1 2]", "x = [3 4]"]
    eg.print("eager:", eg.range(3))
    assert capsys.readouterr().err == "eager: [0 1 2]\n"
    x = eg.random.uniform([10])                    # tf.random.uniform
    assert x.shape == (10,) and 0 <= x.numpy().min() and x.numpy().max() < 1


def test_tf_print_in_a_session_prints_when_fetched(capsys):
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(2,), name="x")
        shown = eg.print("sum:", eg.reduce_sum(x))
        with eg.control_dependencies([shown]):
            doubled = eg.identity(x * 2)
        assert capsys.readouterr().err == ""          # building prints nothing
        with eg.Session() as sess:
            np.testing.assert_allclose(sess.run(doubled, {x: [1.0, 2.0]}), [2.0, 4.0])
            sess.run(x * 3, {x: [1.0, 1.0]})           # does not need the print
    assert capsys.readouterr().err == "sum: 3\n"       # (as TF shows the float 3.0)


def test_tf_print_shows_values_as_tf_does(capsys, tmp_path):
    """TF's formats: a float with 6 digits where they read back as the number, else 9 (17 for
    float64); the first and last `summarize` entries of each dimension; booleans 1 and 0;
    a list or dict with the tensors in it shown; numpy arrays as their repr."""
    import sys
    eg.print(eg.constant([0.1, 2.0, 1e6]), eg.constant(np.pi), eg.constant(1 / 3, eg.float64),
             output_stream=sys.stdout)
    eg.print(eg.range(10), eg.range(10, dtype=eg.int32), summarize=2, output_stream=sys.stdout)
    eg.print(eg.constant(np.arange(8.0).reshape(2, 2, 2)), eg.constant([True, False]),
             [1, eg.constant(2), "s"], np.array([1.5, 2.0]), output_stream=sys.stdout)
    eg.print(eg.range(10), summarize=-1, sep=",", end="!\n", output_stream=sys.stdout)
    assert capsys.readouterr().out == (
        "[0.1 2 1e+06] 3.14159274 0.33333333333333331\n"
        "[0 1 ... 8 9] [0 1 ... 8 9]\n"
        "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]] [1 0] [1, 2, 's'] array([1.5, 2. ])\n"
        "[0 1 2 3 4 5 6 7 8 9]!\n")
    log = tmp_path / "log.txt"
    eg.print("loss", eg.constant(0.5), output_stream=f"file://{log}")
    assert log.read_text() == "loss 0.5\n"
    with pytest.raises(ValueError, match="unsupported output_stream 42"):
        eg.print(1, output_stream=42)


def test_star_import_keeps_pythons_builtins_and_standard_modules():
    namespace = {}
    exec("import math, random\nfrom edugraph import *", namespace)
    assert "print" not in namespace and "range" not in namespace and "sum" not in namespace
    assert namespace["math"].__name__ == "math" and namespace["random"].__name__ == "random"
    assert namespace["Session"] is eg.Session and namespace["keras"] is eg.keras


def test_lstm_cell_made_faster_with_function():
    """The slide: the same LSTMCell step eagerly and as a traced function (the graph runs the
    same maths; the slide's point is the time, which bench/ measures, not this test)."""
    lstm_cell = eg.keras.layers.LSTMCell(10)

    @eg.function
    def fn(input, state):
        return lstm_cell(input, state)

    input = eg.zeros([10, 10]); state = [eg.zeros([10, 10])] * 2  # noqa: E702
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


def test_batch_norm_and_layer_norm_statistics_of_the_slide():
    """Batch norm's mean and std per feature (down the columns), layer norm's per example
    (along the rows), in each framework's spelling; the slide's "Std" divides by n."""
    x = eg.tensor(SLIDE_FEATURES)
    mean, variance = eg.nn.moments(x, axes=[0])
    np.testing.assert_allclose(mean.numpy(), [3.0, 1.0, 2.0, 2.0])
    np.testing.assert_allclose(eg.sqrt(variance).numpy(), [0.8165, 0.0, 1.4142, 1.6330],
                               atol=5e-5)
    np.testing.assert_allclose(eg.math.reduce_std(x, axis=0).numpy(), eg.sqrt(variance).numpy())
    np.testing.assert_allclose(x.mean(1).numpy(), [2.0, 2.25, 1.75])
    np.testing.assert_allclose(x.std(1, unbiased=False).numpy(), [0.7071, 1.7854, 1.2990],
                               atol=5e-5)
    np.testing.assert_allclose(x.std(1).numpy() ** 2, x.var(1).numpy(), rtol=1e-6)  # n - 1
    np.testing.assert_allclose(x.var(1).numpy() * 3 / 4, eg.math.reduce_variance(x, 1).numpy(),
                               rtol=1e-6)


def test_tf_nn_batch_normalization_by_hand_is_the_training_layer():
    """The slide's normalisation written out: moments, then batch_normalization; a
    BatchNormalization layer in training mode computes the same, gradients included."""
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
