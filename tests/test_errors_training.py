"""Training mistakes students make get a clear error (or a warning) that names the op, layer or
argument, what was passed and what to do next. Some of these Keras computes on without a word
(validation_split=1.5, batch_size=0, a layer listed twice): there edugraph refuses on purpose."""
import warnings

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import FailedPreconditionError, InvalidArgumentError, ShapeError

keras = eg.keras


@pytest.fixture
def graph():
    with eg.Graph().as_default() as g:
        yield g


def small_model():
    model = keras.Sequential([keras.layers.Dense(8, activation="relu", input_shape=(4,)),
                              keras.layers.Dense(3)])
    model.compile(optimizer="sgd", loss="mse")
    return model


# ----------------------------------------------------------------------------- losses
def test_graph_labels_out_of_range_fail_when_run_naming_the_node(graph):
    labels = eg.placeholder(eg.int64, (None,))
    logits = eg.placeholder(eg.float32, (None, 3))
    loss = eg.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with eg.Session() as sess:
        np.testing.assert_allclose(sess.run(loss, {labels: [0, 2], logits: np.zeros((2, 3))}),
                                   [np.log(3)] * 2, rtol=1e-6)
        with pytest.raises(InvalidArgumentError) as info:
            sess.run(loss, {labels: [0, 5], logits: np.zeros((2, 3))})
    message = str(info.value)
    assert r"labels must be class ids in [0, 3)" in message and "[0, 5]" in message
    assert "[[node sparse_softmax_cross_entropy_with_logits/CheckClassIds]]" in message
    assert info.value.op.name == "sparse_softmax_cross_entropy_with_logits/CheckClassIds"


def test_graph_labels_that_are_constants_are_checked_too(graph):
    """Constant labels: the check is not folded away (it would raise while building)."""
    loss = eg.losses.sparse_softmax_cross_entropy([0, -1], eg.zeros((2, 3)))
    with eg.Session() as sess, pytest.raises(InvalidArgumentError, match=r"\[-1, 0\]"):
        sess.run(loss)


def test_float_labels_with_a_fraction_are_refused_not_truncated():
    logits, probs = eg.zeros((3, 4)), eg.softmax(eg.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"^sparse_softmax_cross_entropy: labels must be class "
                                         r"ids, whole numbers.*float32.*\(3,\) include 0\.2"):
        eg.nn.sparse_softmax_cross_entropy_with_logits(labels=eg.tensor([0.2, 1.7, 3.]),
                                                       logits=logits)
    with pytest.raises(ValueError, match=r"^sparse_categorical_crossentropy: .*include 1\.5.*"
                                         r"categorical_crossentropy"):
        keras.losses.SparseCategoricalCrossentropy()(eg.tensor([0., 1.5, 2.]), probs)
    with pytest.raises(ValueError, match="include nan"):
        keras.losses.sparse_categorical_crossentropy([0., np.nan, 2.], probs)


def test_whole_float_labels_are_class_ids_as_in_keras():
    probs = eg.softmax(eg.tensor([[2., 1., 0.], [0., 3., 1.]]))
    as_floats = keras.losses.SparseCategoricalCrossentropy()(eg.tensor([0., 1.]), probs)
    as_ints = keras.losses.SparseCategoricalCrossentropy()(eg.tensor([0, 1]), probs)
    assert as_floats.item() == as_ints.item()


def test_graph_float_labels_are_checked_when_run(graph):
    labels = eg.placeholder(eg.float32, (None,))
    logits = eg.placeholder(eg.float32, (None, 3))
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)(labels, logits)
    with eg.Session() as sess:
        assert sess.run(loss, {labels: [0., 2.], logits: np.zeros((2, 3))}) == \
            pytest.approx(np.log(3))
        with pytest.raises(InvalidArgumentError, match=r"include 1\.5.*\n.*CheckClassIds"):
            sess.run(loss, {labels: [0., 1.5], logits: np.zeros((2, 3))})


@pytest.mark.parametrize("loss, y_true, activation", [
    (keras.losses.BinaryCrossentropy(), [[0.], [1.]], "sigmoid"),
    (keras.losses.binary_crossentropy, [[0.], [1.]], "sigmoid"),
    (keras.losses.SparseCategoricalCrossentropy(), [0, 1], "softmax"),
    (keras.losses.CategoricalCrossentropy(), [[1., 0.], [0., 1.]], "softmax"),
])
def test_logits_without_from_logits_warn_and_give_keras_numbers(loss, y_true, activation):
    logits = [[-7.2, 9.1], [1.0, 0.5]] if activation == "softmax" else [[-7.2], [9.1]]
    with pytest.warns(UserWarning, match=r"predictions range over \[-7\.2, 9\.1\], outside "
                                         rf"\[0, 1\]: are they logits\? Pass from_logits=True.*"
                                         rf"{activation}\."):
        value = loss(y_true, eg.tensor(logits))
    assert np.isfinite(value.numpy()).all()         # still computed, as Keras does


def test_probabilities_and_from_logits_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.losses.BinaryCrossentropy()([[0.], [1.]], eg.tensor([[0.], [1.]]))
        keras.losses.BinaryCrossentropy(from_logits=True)([[0.], [1.]], eg.tensor([[-7.], [9.]]))
        keras.losses.SparseCategoricalCrossentropy()([1], eg.softmax(eg.tensor([[3., 1.]])))


# ----------------------------------------------------------------------------- optimizers
@pytest.mark.parametrize("make", [lambda: keras.optimizers.SGD(0.1),
                                  lambda: eg.train.AdamOptimizer(0.1)])
def test_apply_gradients_refuses_what_is_not_gradient_variable_pairs(make):
    w, v = eg.Variable([1., 2.]), eg.Variable([3., 4.])
    g = eg.ones(2)
    opt = make()
    with pytest.raises(TypeError, match=r"^apply_gradients: pair 0's variable is a tensor that "
                                        r"does not require grad \(shape \(2,\)\); pass "
                                        r"zip\(grads, variables\), gradient first\."):
        opt.apply_gradients([(w, g)])
    with pytest.raises(TypeError, match="pair 0's variable is a tensor"):
        opt.apply_gradients(([g, g], [w, v]))
    with pytest.raises(TypeError, match=r"item 0 is the Variable .*\(shape \(2,\)\), not a "
                                        r"\(gradient, variable\) pair"):
        opt.apply_gradients([w, g])
    with pytest.raises(TypeError, match=r"global_step is a list.*zip\(grads, variables\)"):
        opt.apply_gradients([g, g], [w, v])
    with pytest.raises(ShapeError, match=r"gradient has shape \(1,\) but its variable .* has "
                                         r"shape \(2,\)"):
        opt.apply_gradients([(eg.ones(1), w)])
    np.testing.assert_array_equal(w.numpy(), [1., 2.])     # nothing was updated
    np.testing.assert_array_equal(v.numpy(), [3., 4.])
    opt.apply_gradients(zip([g], [w]))                       # a zip (an iterator) is fine
    assert (w.numpy() < [1., 2.]).all()


def test_minimize_needs_a_tensor_loss_and_variables(graph):
    """As TF1: var_list may be one Variable (TF flattens it into a list); any other tensor
    is refused (list(x) would iterate over its rows)."""
    W = eg.Variable(np.ones((2, 2), np.float32), name="W")
    loss = eg.reduce_sum(W * W)
    opt = eg.train.GradientDescentOptimizer(0.1)
    step = opt.minimize(loss, var_list=W)
    with eg.Session() as sess:
        sess.run(W.initializer)
        sess.run(step)
        np.testing.assert_allclose(sess.run(W), 0.8)
    with pytest.raises(TypeError, match=r"var_list must be a list of variables \(\[W\]\), not "
                                        r"the tensor 'mul:0'|var_list must be a list"):
        opt.minimize(loss, var_list=W * 1.0)
    with pytest.raises(TypeError, match="loss must be a tensor.*not a float 3.0"):
        opt.minimize(3.0)


# ----------------------------------------------------------------------------- compile / fit
def test_compile_with_a_class_instead_of_an_instance():
    """As Keras 3: a loss or metric class is made into one (with its defaults); an optimizer
    class is refused (Keras: "Could not interpret optimizer identifier"), with the fix."""
    model = small_model()
    with pytest.raises(TypeError, match=r"you passed the class Adam itself.*write Adam\(\)"):
        model.compile(optimizer=keras.optimizers.Adam, loss="mse")
    model.compile(optimizer="adam", loss=keras.losses.MeanSquaredError,
                  metrics=[keras.metrics.MeanAbsoluteError])
    history = model.fit(np.ones((8, 4)), np.zeros((8, 3)), epochs=1, verbose=0)
    assert set(history.history) == {"loss", "mean_absolute_error"}


def test_fit_reads_a_list_of_lists_of_numbers_as_one_array():
    model = small_model()
    history = model.fit([[1., 2., 3., 4.]] * 10, [[0., 0., 0.]] * 10, epochs=1, verbose=0,
                        validation_split=0.2)
    assert set(history.history) == {"loss", "val_loss"}
    assert model.predict([[1., 2., 3., 4.]] * 2).shape == (2, 3)


def test_fit_without_labels_or_with_batch_size_zero():
    model, x, y = small_model(), np.ones((10, 4), np.float32), np.ones((10, 3), np.float32)
    with pytest.raises(ValueError, match="the labels y are missing.*model.fit\\(x, y\\)"):
        model.fit(x, epochs=1, verbose=0)
    with pytest.raises(ValueError, match="batch_size must be a whole number.*got 0"):
        model.fit(x, y, batch_size=0, epochs=1, verbose=0)


# ----------------------------------------------------------------------------- TF1 sessions
def test_initializer_made_before_a_variable_says_so(graph):
    W = eg.Variable([1., 2.], name="W")
    init = eg.global_variables_initializer()
    b = eg.Variable([3.], name="b")
    total = eg.reduce_sum(W) + b
    with eg.Session() as sess:
        with pytest.raises(FailedPreconditionError) as before_init:
            sess.run(total)
        assert "was made before" not in str(before_init.value)     # the plain advice fits
        sess.run(init)
        with pytest.raises(FailedPreconditionError,
                           match=r"(?s)uninitialized value b.*The initializer you ran \('init'\) "
                                 r"was made before this variable existed.*after all variables"):
            sess.run(total)
        sess.run(eg.global_variables_initializer())
        assert sess.run(total) == pytest.approx([6.])


def test_fetching_a_none_gradient_says_which_and_why(graph):
    w, unused = eg.Variable([1., 2.]), eg.Variable([3.])
    grads = eg.gradients(eg.reduce_sum(w * w), [w, unused])
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        with pytest.raises(TypeError, match=r"Fetch argument None \(the fetches' element \[1\]\)"
                                            r".*eg.gradients gives None for a variable the "
                                            r"loss does not depend on"):
            sess.run(grads)
        with pytest.raises(TypeError, match=r"element \['grads'\]\[1\]"):
            sess.run({"grads": grads})


def test_placeholder_with_the_shape_where_the_dtype_goes(graph):
    with pytest.raises(TypeError, match=r"placeholder\(dtype, shape\): the first argument is "
                                        r"the dtype.*eg.placeholder\(eg.float32, "
                                        r"shape=\(None, 3\)\)"):
        eg.placeholder((None, 3))
    assert eg.placeholder(eg.float32, 3).shape == (3,)          # TF1: TensorShape(3) is (3,)


def test_session_fetches_and_feeds_that_are_not_in_the_graph(graph):
    x = eg.placeholder(eg.float32, (None,), name="x")
    doubled = x * 2
    with eg.Session() as sess:
        with pytest.raises(TypeError, match=r"Cannot interpret feed_dict key as Tensor: The "
                                            r"name 'y:0' refers to a Tensor which does not"):
            sess.run(doubled, {"y:0": [1.]})
        with pytest.raises(ValueError, match=r"Fetch argument 'nope:0' cannot be interpreted "
                                             r"as a Tensor. \(The name 'nope:0' refers"):
            sess.run("nope:0", {x: [1.]})


def test_running_an_eager_tensor_in_a_session():
    with pytest.raises(TypeError, match=r"is an eager tensor, not a graph tensor.*t\.numpy\(\)"):
        eg.Session(graph=eg.Graph()).run(eg.ones(2))


def test_a_keras_layer_listed_twice_in_sequential_is_refused():
    """Keras 3 shares a layer listed twice (one set of weights); a student who writes it means
    two layers, so edugraph refuses. PyTorch's Sequential shares a repeated module (tying)."""
    dense = keras.layers.Dense(3)
    with pytest.raises(ValueError, match="Layer 'dense.*' is already in this Sequential model"):
        keras.Sequential([keras.Input((3,)), dense, dense])
    linear = eg.nn.Linear(3, 3)
    tied = eg.nn.Sequential(linear, linear)
    assert len(list(tied.parameters())) == 2
