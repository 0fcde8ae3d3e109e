"""Against real TensorFlow and Keras 3 (where installed, as PyTorch is elsewhere): where edugraph
uses their names, the same numbers. Each case is one that differed before it was fixed (an
audit against TF 2.21 / Keras 3.15), next to its neighbours that already agreed."""
import os

import numpy as np
import pytest

import edugraph as eg
from edugraph.graph.session import building_state_kept
from tests import test_slides_tf1_as_written as slides

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")
tf1 = tf.compat.v1

GRADS = [np.array([1.0, -2.0, 0.5], np.float32), np.array([0.3, 0.0, -1.5], np.float32),
         np.array([-1.0, 2.5, 0.2], np.float32), np.array([0.1, -0.4, 3.0], np.float32),
         np.array([2.0, 1.0, -0.7], np.float32)]
RATES = [0.1, 0.1, 0.01, 0.01, 0.002]     # as a LearningRateScheduler would set them

OPTIMIZERS = {   # name: (Keras optimizer, edugraph's); each with Keras's defaults otherwise
    "sgd": lambda o: o.SGD(0.1),
    "momentum": lambda o: o.SGD(0.1, momentum=0.9),
    "nesterov": lambda o: o.SGD(0.1, momentum=0.9, nesterov=True),
    "adam": lambda o: o.Adam(0.1),
    "rmsprop": lambda o: o.RMSprop(0.1, momentum=0.5),
    "rmsprop_centered": lambda o: o.RMSprop(0.1, momentum=0.5, centered=True),
    "adagrad": lambda o: o.Adagrad(0.1),
    "adagrad_large_epsilon": lambda o: o.Adagrad(0.1, initial_accumulator_value=0.0,
                                                 epsilon=0.1),
    "adadelta": lambda o: o.Adadelta(1.0),
    "clipvalue": lambda o: o.SGD(0.1, momentum=0.9, clipvalue=0.5),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_keras_optimizers_follow_keras_also_when_the_rate_changes(name):
    """Keras 3's SGD holds the step, rate included, in its momentum (so a rate that falls
    does not rescale the steps already taken) and Adagrad adds epsilon inside the root; both
    differed. apply_gradients on fixed gradients, the rate changed between steps."""
    theirs = tf.Variable(np.zeros(3, np.float32))
    ours = eg.Variable(np.zeros(3, np.float32))
    keras_optimizer = OPTIMIZERS[name](keras.optimizers)
    our_optimizer = OPTIMIZERS[name](eg.keras.optimizers)
    for rate, grad in zip(RATES, GRADS):
        keras_optimizer.learning_rate = rate
        our_optimizer.learning_rate = rate
        keras_optimizer.apply_gradients([(tf.constant(grad), theirs)])
        our_optimizer.apply_gradients([(eg.constant(grad), ours)])
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=2e-5, atol=1e-7)


def test_keras_refuses_two_clippings_as_keras_does():
    for make in (keras.optimizers.SGD, eg.keras.optimizers.SGD):
        with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and "
                                             "`global_clipnorm` can be set"):
            make(0.1, clipnorm=1.0, clipvalue=0.5)


@pytest.mark.parametrize("activation, loss, labels", [
    ("sigmoid", "binary_crossentropy", [[0.0], [1.0], [1.0], [0.0]]),
    ("softmax", "categorical_crossentropy", [[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
    ("softmax", "sparse_categorical_crossentropy", [[1], [0], [0], [1]])])
def test_keras_cross_entropy_of_a_saturated_activation(activation, loss, labels):
    """Keras computes the cross-entropy of its sigmoid's or softmax's output from the logits
    the activation kept; edugraph clipped the probabilities (loss ~16, gradient 0)."""
    columns = 1 if activation == "sigmoid" else 2
    z = (np.array([[20.0], [-20.0], [0.3], [40.0]]) * [[1.0, -1.0][:columns]]).astype(np.float32)
    labels = np.array(labels, np.float32 if loss != "sparse_categorical_crossentropy" else
                      np.int32)
    theirs = tf.Variable(z)
    with tf.GradientTape() as tape:
        their_loss = tf.reduce_sum(getattr(keras.losses, loss)(
            labels, keras.layers.Activation(activation)(theirs)))
    their_grad = tape.gradient(their_loss, theirs)
    ours = eg.Variable(z)
    with eg.GradientTape() as tape:
        our_loss = eg.reduce_sum(getattr(eg.keras.losses, loss)(
            labels, eg.keras.layers.Activation(activation)(ours)))
    np.testing.assert_allclose(our_loss.numpy(), their_loss.numpy(), rtol=1e-5)
    np.testing.assert_allclose(tape.gradient(our_loss, ours).numpy(), their_grad.numpy(),
                               rtol=1e-4, atol=1e-6)


def test_fit_with_unscaled_inputs_and_a_sigmoid_output_as_keras():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (8, 6)).astype(np.float32)
    y = (rng.random(8) > 0.5).astype(np.float32)
    theirs = keras.Sequential([keras.Input((6,)), keras.layers.Dense(1, activation="sigmoid")])
    ours = eg.keras.Sequential([eg.keras.layers.Dense(1, activation="sigmoid",
                                                      input_shape=(6,))])
    ours.set_weights([w.numpy() for w in theirs.weights])
    histories = []
    for model, k in ((theirs, keras), (ours, eg.keras)):
        model.compile(optimizer=k.optimizers.SGD(0.01), loss="binary_crossentropy")
        histories.append(model.fit(x, y, batch_size=4, epochs=3, shuffle=False,
                                   verbose=0).history["loss"])
    np.testing.assert_allclose(histories[1], histories[0], rtol=1e-4, atol=1e-4)


def test_softmax_cross_entropy_gradient_into_one_hot_labels():
    labels = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    logits = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 1.0]])
    theirs = tf.Variable(labels)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.softmax_cross_entropy_with_logits(labels=theirs,
                                                                     logits=logits))
    ours = eg.Variable(labels)
    with eg.GradientTape() as our_tape:
        our_loss = eg.reduce_sum(eg.nn.softmax_cross_entropy_with_logits(labels=ours,
                                                                          logits=logits))
    np.testing.assert_allclose(our_tape.gradient(our_loss, ours).numpy(),
                               tape.gradient(loss, theirs).numpy(), rtol=1e-12)


def test_default_dtypes_of_python_numbers():
    for value in (0, [1, 2], 1.5, 2**40, [1, 2**40]):
        assert eg.constant(value).dtype == tf.constant(value).dtype.as_numpy_dtype
        assert eg.Variable(value).dtype == tf.Variable(value).dtype.as_numpy_dtype
    assert eg.constant(2**40).numpy() == tf.constant(2**40).numpy()
    for data in ([1.0, 2.0], [[1, 2], [3, 4]], np.arange(3.0)):
        ours = next(iter(eg.data.Dataset.from_tensor_slices(data)))
        theirs = next(iter(tf.data.Dataset.from_tensor_slices(data)))
        assert ours.dtype == theirs.dtype.as_numpy_dtype


def test_tf1_div_and_assigns_in_cond_branches():
    """tf.div floors whole numbers; an assign in a tf.cond branch runs only when its branch
    is taken (it crashed Session.run)."""
    values = []
    for tf_, graph in ((tf1, tf1.Graph), (eg.compat.v1, eg.Graph)):
        with graph().as_default():
            v = tf_.Variable(0.0)
            first = tf_.Variable(True, trainable=False)
            step = tf_.cond(first, lambda: v.assign_add(1.0), lambda: v.assign_add(10.0))
            with tf_.control_dependencies([step]):
                flip = first.assign(tf_.logical_not(first))
            with tf_.Session() as sess:
                sess.run(tf_.global_variables_initializer())
                assert sess.run(tf_.div(-7, 2)) == -4 and sess.run(tf_.div(-7.0, 2.0)) == -3.5
                after = []
                for _ in range(3):
                    sess.run(flip)
                    after.append(float(sess.run(v)))
                values.append(after)
    assert values[1] == values[0] == [1.0, 11.0, 12.0]


def test_tf1_gradients_of_unconnected_inputs_as_zeros():
    for module, graph in ((tf1, tf1.Graph), (eg.compat.v1, eg.Graph)):
        with graph().as_default():
            x, y = module.placeholder(module.float32, (2,)), module.Variable([1.0, 2.0])
            grads = module.gradients(module.reduce_sum(x * x), [x, y],
                                     unconnected_gradients="zero")
            with module.Session() as sess:
                sess.run(module.global_variables_initializer())
                gx, gy = sess.run(grads, {x: [3.0, -1.0]})
        np.testing.assert_array_equal(gx, [6.0, -2.0])
        np.testing.assert_array_equal(gy, [0.0, 0.0])


def test_numpy_reads_a_scalar_loss_as_from_tf():
    ours = [eg.reduce_mean(eg.square(eg.constant([1.0, 2.0]))) * 0.5 for _ in range(3)]
    theirs = [tf.reduce_mean(tf.square(tf.constant([1.0, 2.0]))) * 0.5 for _ in range(3)]
    assert np.mean(ours) == np.mean(theirs) == 1.25


# --------------------------------------------- the lecture's TF1 slides, run by TF and edugraph
def run_slide(slide, framework, **names):
    """A slide's TF1 program as written, run by real TF (``tensorflow.compat.v1`` in a graph of
    its own) or by edugraph (TF's migration idiom, as tests/test_slides_tf1_as_written.py runs
    it), after the same ``np.random.seed(0)``."""
    np.random.seed(0)
    if framework == "tensorflow":
        code = slide.replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf")
        namespace = {"np": np, "tf": tf1, **names}
        with tf1.Graph().as_default():
            exec(compile(code, "<slide>", "exec"), namespace)    # noqa: S102  (our own text)
        return namespace
    with building_state_kept():
        eg.reset_default_graph()
        return slides.run_tf1(slide, **names)


@pytest.mark.parametrize("slide", [slides.SIMPLE_GRAPH, slides.BASIC_GRAPH],
                         ids=["shapes", "no-shapes"])
def test_the_slides_graph_gives_tfs_values_and_gradients(slide):
    theirs, ours = (run_slide(slide, framework) for framework in ("tensorflow", "edugraph"))
    for name in ("c_val", "grad_x_val", "grad_y_val", "grad_z_val"):
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-6, err_msg=name)


def test_the_slides_training_with_fed_weights_follows_tfs_losses(capsys):
    x_train, y_train = slides.digits_one_hot()
    curves = []
    for framework in ("tensorflow", "edugraph"):
        pl = slides.plot_recorder()
        run_slide(slides.FEEDING_THE_WEIGHTS, framework, x_train=x_train, y_train=y_train, pl=pl)
        curves.append(np.array(pl.plotted[0], dtype=np.float64))
    np.testing.assert_allclose(curves[1], curves[0], rtol=1e-4)
    printed = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in printed[20:]] == [line.split()[:2]
                                                             for line in printed[:20]]


LABELS = np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 1.0]], np.float32)
PROBABILITIES = np.array([[0.2, 0.8], [0.6, 0.4], [0.9, 0.1]], np.float32)
WEIGHTS = np.array([1.0, 2.0, 0.5], np.float32)


@pytest.mark.parametrize("loss", ["CategoricalCrossentropy", "BinaryCrossentropy",
                                  "MeanSquaredError", "MeanAbsoluteError"])
@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "mean", "mean_with_sample_weight",
                                       "sum", "none", None])
@pytest.mark.parametrize("weights", ["unweighted", "(N,)", "(N, 1)", "one number"])
def test_keras_loss_objects_weights_reductions_and_smoothing(loss, reduction, weights):
    """Keras's sample_weight, reduction and label_smoothing (edugraph refused them)."""
    sample_weight = {"unweighted": None, "(N,)": WEIGHTS, "(N, 1)": WEIGHTS[:, None],
                     "one number": 2.0}[weights]
    for smoothing in ((0.0, 0.2) if "Crossentropy" in loss else (0.0,)):
        options = {"reduction": reduction, **({"label_smoothing": smoothing} if smoothing
                                              else {})}
        theirs = getattr(keras.losses, loss)(**options)(LABELS, PROBABILITIES,
                                                        sample_weight=sample_weight)
        ours = getattr(eg.keras.losses, loss)(**options)(LABELS, PROBABILITIES,
                                                         sample_weight=sample_weight)
        assert ours.shape == tuple(theirs.shape)
        np.testing.assert_allclose(ours.numpy(), np.asarray(theirs), rtol=1e-5)


PRINTED = [np.array([0.1, 2.0, 1e-5, 123456789.0], np.float32), np.float32(np.pi),
           np.float64(1 / 3), np.arange(100).reshape(10, 10), np.arange(24.0).reshape(2, 3, 4),
           np.array([True, False]), np.array([0.1, 2.0], np.float16), np.float32(1e6),
           np.array([np.nan, np.inf, -0.5], np.float32), np.arange(7, dtype=np.int32)]


@pytest.mark.parametrize("summarize", [3, 1, -1])
def test_print_shows_tensors_as_tf_print(capfd, summarize):
    """eg.print as tf.print (where edugraph printed numpy's str: [2. 4.] for TF's [2 4])."""
    import sys
    for framework in (tf, eg):
        for value in PRINTED:
            framework.print("v", framework.constant(value), summarize=summarize,
                            output_stream=sys.stdout)
        framework.print([1, framework.constant(2.5)], {"k": framework.constant([1, 2])},
                        output_stream=sys.stdout)
    printed = capfd.readouterr().out.splitlines()
    assert printed[len(printed) // 2:] == printed[:len(printed) // 2]


def test_keras_cross_entropy_reads_a_keras_softmax_logits_not_tf_nn_softmax():
    """keras.activations.softmax keeps its logits (loss 400 from logits 200 apart); the eager
    tf.nn.softmax's probabilities are clipped (16.118), in Keras 3 as here."""
    logits = np.array([[200.0, 0.0, -200.0]], np.float32)
    for framework, keras_module in ((tf, keras), (eg, eg.keras)):
        z, label = framework.constant(logits), framework.constant([2])
        from_activation = keras_module.losses.sparse_categorical_crossentropy(
            label, keras_module.activations.softmax(z))
        clipped = keras_module.losses.sparse_categorical_crossentropy(label,
                                                                      framework.nn.softmax(z))
        np.testing.assert_allclose(np.asarray(from_activation), [400.0], rtol=1e-6)
        np.testing.assert_allclose(np.asarray(clipped), [16.118095], rtol=1e-6)
