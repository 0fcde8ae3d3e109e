"""Students' TF1, TF2 and Keras mistakes: no silent wrong answer (numbers as TF's and Keras's,
computed here by hand with numpy), and errors that name the layer, op or variable, the shapes
and the fix."""
import warnings

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import FailedPreconditionError, InvalidArgumentError, ShapeError
from edugraph.graph.session import building_state_kept
from tests.gradcheck import gradcheck

keras = eg.keras


@pytest.fixture
def graph():
    with eg.Graph().as_default() as g:
        yield g


@pytest.fixture
def tf1_state():
    """For tests that switch eager execution off: put the mode and default graph back."""
    with building_state_kept():
        eg.reset_default_graph()
        yield


def dense_model(inputs=4, units=3, activation=None):
    return keras.Sequential([keras.Input((inputs,)),
                             keras.layers.Dense(units, activation=activation)])


# ----------------------------------------------------------------------------- silent results
def test_compat_v1_cross_entropies_refuse_positional_arguments(tf1_state):
    """TF 0.x tutorials call them with (logits, labels); TF 1.x refused any positional
    argument (its `_sentinel`), where reading them as (labels, logits) computes another number
    without a word, as TF 2's tf.compat.v1 does: edugraph keeps TF 1.x's refusal."""
    import edugraph.compat.v1 as tf
    tf.disable_v2_behavior()
    logits = np.array([[2.0, 1.0, 0.1]], np.float32)
    labels = np.array([[1.0, 0.0, 0.0]], np.float32)
    for name, args in (("softmax_cross_entropy_with_logits", (logits, labels)),
                       ("sparse_softmax_cross_entropy_with_logits", (logits, [0])),
                       ("sigmoid_cross_entropy_with_logits", (logits, labels))):
        with pytest.raises(ValueError, match=rf"Only call `{name}` with named arguments "
                                             r"\(labels=\.\.\., logits=\.\.\., \.\.\.\).*"
                                             rf"tf\.nn\.{name}\(labels=y, logits=logits\)"):
            getattr(tf.nn, name)(*args)
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    with tf.Session() as sess:
        expected = -(labels * (logits - np.log(np.exp(logits).sum(-1, keepdims=True)))).sum(-1)
        np.testing.assert_allclose(sess.run(loss), expected, rtol=1e-6)
    assert tf.nn.relu is eg.nn.relu and "dropout" in dir(tf.nn)


def test_tf2_nn_cross_entropy_still_takes_labels_and_logits_by_position():
    logits = np.array([[2.0, 1.0, 0.1]], np.float32)
    value = eg.nn.sparse_softmax_cross_entropy_with_logits([0], logits).numpy()
    np.testing.assert_allclose(value, np.log(np.exp(logits).sum()) - 2.0, rtol=1e-6)


def keras_categorical(y, p):
    """Keras's categorical_crossentropy on probabilities: divide by the sum, clip, log."""
    q = np.clip(p / p.sum(-1, keepdims=True), 1e-7, 1 - 1e-7)
    return -(y * np.log(q)).sum(-1)


def keras_sparse(ids, p):
    """Keras's sparse_categorical_crossentropy on probabilities: the sparse softmax
    cross-entropy of the clipped probabilities' logs."""
    z = np.log(np.clip(p, 1e-7, 1 - 1e-7))
    return np.log(np.exp(z).sum(-1)) - z[np.arange(len(ids)), ids]


def test_keras_crossentropies_renormalise_probabilities_as_keras_does():
    p = np.array([[.2, .2, .2], [.9, .9, .1]], np.float32)
    ids = np.array([0, 2])
    sparse = keras.losses.sparse_categorical_crossentropy(ids, p).numpy()
    one_hot = keras.losses.categorical_crossentropy(np.eye(3)[ids], p).numpy()
    np.testing.assert_allclose(sparse, [np.log(3), -np.log(.1 / 1.9)], rtol=1e-6)
    np.testing.assert_allclose(sparse, keras_sparse(ids, p.astype(float)), rtol=1e-6)
    np.testing.assert_allclose(one_hot, keras_categorical(np.eye(3)[ids], p.astype(float)),
                               rtol=1e-6)
    for loss in ("sparse_categorical_crossentropy", "categorical_crossentropy"):
        labels = ids if loss.startswith("sparse") else np.eye(3)[ids]
        np.testing.assert_allclose(keras.losses.get(loss)(labels, p).numpy(),
                                   np.mean([np.log(3), -np.log(.1 / 1.9)]), rtol=1e-6)


def test_keras_crossentropy_gradients_include_the_renormalisation():
    rng = np.random.default_rng(0)
    p = rng.uniform(0.05, 0.9, size=(4, 3))          # rows that do not sum to 1
    ids = rng.integers(0, 3, 4)
    y = np.eye(3)[ids]
    for fn in (lambda q: keras.losses.categorical_crossentropy(y, q),
               lambda q: keras.losses.sparse_categorical_crossentropy(ids, q)):
        gradcheck(fn, p.copy())                     # against central differences (float64)
        q = eg.tensor(p, requires_grad=True)
        (grad,) = eg.grad([fn(q).sum()], [q])
        # by hand: L = -log(p_y / S), so dL/dp_k = -[k = y] / p_y + 1 / S
        np.testing.assert_allclose(grad.numpy(), -y / p + 1 / p.sum(-1, keepdims=True),
                                   rtol=1e-10)


def test_keras_probability_losses_still_warn_about_logits():
    with pytest.warns(UserWarning, match="outside \\[0, 1\\]: are they logits"):
        keras.losses.sparse_categorical_crossentropy([0], np.array([[2.0, -1.0, 0.5]]))


def test_keras_mean_squared_error_is_per_example_and_tf1s_the_mean():
    y_true = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    y_pred = np.array([[1.5, 2.0], [2.0, 6.0], [5.0, 5.0]])
    squared, absolute = (y_true - y_pred) ** 2, np.abs(y_true - y_pred)
    for fn in (keras.losses.mean_squared_error, keras.losses.mse, keras.losses.MSE):
        out = fn(y_true, y_pred)
        assert out.shape == (3,)
        np.testing.assert_allclose(out.numpy(), squared.mean(-1))
    for fn in (keras.losses.mean_absolute_error, keras.losses.mae, keras.losses.MAE):
        np.testing.assert_allclose(fn(y_true, y_pred).numpy(), absolute.mean(-1))
    tf1 = eg.losses.mean_squared_error(y_true, y_pred)          # tf.losses: one number
    assert tf1.shape == () and np.isclose(tf1.item(), squared.mean())
    assert keras.losses.SparseCategoricalCrossentropy is eg.losses.SparseCategoricalCrossentropy
    from edugraph.keras.losses import categorical_crossentropy, mse
    assert categorical_crossentropy is eg.losses.categorical_crossentropy
    assert mse is keras.losses.mean_squared_error


def test_graph_assign_refuses_a_fed_value_of_another_shape(graph):
    v = eg.Variable(np.ones((3, 2), np.float32), name="v")
    p = eg.placeholder(eg.float32)
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        with pytest.raises(InvalidArgumentError,
                           match=r"Cannot assign a value of shape \(1, 3\) to variable 'v' of "
                                 r"shape \(3, 2\): the shapes must match\.\n.*\[\[node Assign\]\]"):
            sess.run(eg.assign(v, p), {p: np.ones((1, 3))})
        with pytest.raises(InvalidArgumentError,
                           match=r"Cannot add a value of shape \(2,\) to variable 'v'.*"
                                 r"assign the result: w\.assign\(w \+ delta\)"):
            sess.run(eg.assign_add(v, p), {p: np.ones(2)})
        with pytest.raises(InvalidArgumentError, match=r"subtract a value of shape \(2,\) from"):
            sess.run(eg.assign_sub(v, p), {p: np.ones(2)})
        np.testing.assert_array_equal(sess.run(v), np.ones((3, 2)))
        sess.run(eg.assign_add(v, p), {p: np.full((3, 2), 2.0)})
        np.testing.assert_array_equal(sess.run(v), np.full((3, 2), 3.0))


def test_graph_update_rewritten_in_place_still_broadcasts(graph):
    """The passes write w.assign(w - d) as w.assign_sub(d); its d may broadcast."""
    w = eg.Variable(np.ones((3, 2), np.float32), name="w")
    step = w.assign(w - 0.5)
    with eg.Session() as sess:
        sess.run(w.initializer)
        sess.run(step)
        np.testing.assert_array_equal(sess.run(w), np.full((3, 2), 0.5))


def test_eager_assign_of_a_number_to_a_tensor_variable_is_refused_with_the_fix():
    w = eg.Variable(np.ones((3, 2), np.float32), name="w")
    with pytest.raises(ValueError, match=r"Cannot assign a value of shape \(\) to variable 'w' "
                                         r"of shape \(3, 2\).*w\.assign\(eg\.fill\(w\.shape, "
                                         r"5\.0\)\), or w\.assign\(eg\.ones_like\(w\) \* 5\.0\)"):
        w.assign(5.0)
    with pytest.raises(ValueError, match=r"w\.assign_add\(eg\.fill\(w\.shape, 1\)\), or "
                                         r"w\.assign\(w \+ 1\)"):
        w.assign_add(1)
    np.testing.assert_array_equal(w.numpy(), np.ones((3, 2)))
    w.assign(eg.fill(w.shape, 5.0))                 # the fixes the message gives work
    w.assign_add(eg.fill(w.shape, 1.0))
    np.testing.assert_array_equal(w.numpy(), np.full((3, 2), 6.0))
    scalar = eg.Variable(1.0)
    scalar.assign(5.0)
    assert scalar.numpy() == 5.0


def test_graph_assign_add_of_a_number_is_refused_when_built(graph):
    v = eg.Variable(np.ones((3, 2), np.float32), name="v")
    with pytest.raises(ValueError, match=r"Cannot add a value of shape \(\) to variable 'v' of "
                                         r"shape \(3, 2\).*eg\.fill\(w\.shape, 1\.0\)"):
        eg.assign_add(v, 1.0)


def test_one_example_without_its_batch_axis_is_refused():
    model = dense_model()
    model.compile("sgd", "mse")
    for call in (lambda: model.predict(np.ones(4)), lambda: model.evaluate(np.ones(4)),
                 lambda: model.fit(np.ones(4), np.ones(3), verbose=0)):
        with pytest.raises(ShapeError, match=r"x has shape \(4,\), one example without the "
                                             r"batch axis.*\(N, 4\)\. Use x\[None\] \(or "
                                             r"x\.reshape\(1, -1\)\)"):
            call()
    with pytest.raises(ShapeError, match=r"Dense 'dense\w*' got a 1-D input of shape \(4,\); "
                                         r"it takes a batch of examples \(N, 4\)\. One example"
                                         r"\? Use x\[None\]"):
        model(np.ones(4, np.float32))
    with pytest.raises(ShapeError, match=r"got a 1-D input of shape \(4,\)"):
        keras.layers.Dense(3)(np.ones(4, np.float32))           # not built yet
    big = dense_model(50)
    with pytest.raises(ShapeError, match=r"predict: x has shape \(50,\)"):
        big.predict(np.ones(50))
    assert model.predict(np.ones(4)[None]).shape == (1, 3)


def test_keras_optimizers_warn_about_variables_without_gradients():
    a, b = eg.Variable(1.0, name="a"), eg.Variable(2.0, name="b")
    with eg.GradientTape() as tape:
        loss = a * 3
    grads = tape.gradient(loss, [a, b])
    with pytest.warns(UserWarning, match=r"Gradients do not exist for variables \['b'\] when "
                                         "minimizing the loss"):
        keras.optimizers.SGD(0.1).apply_gradients(zip(grads, [a, b]))
    assert a.numpy() == pytest.approx(0.7) and b.numpy() == 2.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # TF1's optimizers skip it silently
        eg.train.GradientDescentOptimizer(0.1).apply_gradients(zip(grads, [a, b]))


# ----------------------------------------------------------------------------- messages
def test_feeding_an_op_name_says_to_feed_its_tensor(graph):
    x = eg.placeholder(eg.float32, (None, 2), name="x")
    with eg.Session() as sess:
        with pytest.raises(TypeError, match=r"'x' names the op 'x', not a tensor; feed its "
                                            r"tensor 'x:0' or the placeholder object itself"):
            sess.run(x * 2, feed_dict={"x": np.ones((1, 2))})
        np.testing.assert_array_equal(sess.run(x * 2, {"x:0": np.ones((1, 2))}), [[2, 2]])


def test_labels_of_one_number_are_refused():
    model = dense_model()
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"y \(the labels\) has shape \(\), a single number, "
                                         r"but there must be one label per example: shape "
                                         r"\(5,\) for the 5 examples of x"):
        model.fit(np.ones((5, 4)), np.array(1), verbose=0)


def test_binary_crossentropy_on_two_softmax_outputs_says_what_fits():
    model = dense_model(units=2, activation="softmax")
    model.compile("sgd", "binary_crossentropy")
    with pytest.raises(ShapeError, match=r"Dense\(1, activation='sigmoid'\); or, for 2 softmax "
                                         r"outputs and class ids, use loss='sparse_categorical_"
                                         r"crossentropy'"):
        model.fit(np.ones((4, 4)), np.array([0, 1, 0, 1]), verbose=0)


def test_input_shape_given_as_a_number():
    with pytest.raises(TypeError, match=r"Dense: input_shape=4 is a number, not a shape.*"
                                        r"input_shape=\(4,\)"):
        keras.layers.Dense(3, input_shape=(4))


def test_swapped_loss_arguments_are_named():
    logits = np.random.default_rng(0).normal(size=(2, 3)).astype(np.float32)
    with pytest.raises(ShapeError, match=r"the labels have shape \(2, 3\) and the predictions "
                                         r"\(2,\): the arguments look swapped.*loss\(y_true, "
                                         r"y_pred\)"):
        keras.losses.SparseCategoricalCrossentropy(from_logits=True)(logits, np.array([0, 2]))


def test_dense_on_images_without_flatten():
    model = keras.Sequential([keras.Input((5, 4)), keras.layers.Dense(3)])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    with pytest.raises(ShapeError, match=r"labels of shape \(8,\) hold one class id per example, "
                                         r"but the predictions of shape \(8, 5, 3\) have extra "
                                         r"axes.*add Flatten\(\) before it"):
        model.fit(np.ones((8, 5, 4)), np.zeros(8, int), verbose=0)


def test_sequential_given_a_layer_class():
    with pytest.raises(TypeError, match=r"Sequential got the class Dense, not a layer: make one, "
                                        r"Dense\(units\)"):
        keras.Sequential([keras.Input((2,)), keras.layers.Dense])


@pytest.mark.parametrize("name", ["SGD", "Adam", "RMSprop", "Adagrad", "Adadelta", "Ftrl"])
def test_keras_optimizers_refuse_lr(name):
    with pytest.raises(ValueError, match=rf"{name}\(lr=\.\.\.\): `lr` is the old name.*write "
                                         r"learning_rate=0\.01"):
        getattr(keras.optimizers, name)(lr=0.01)
    assert getattr(keras.optimizers, name)(learning_rate=0.01).learning_rate == 0.01


def test_session_given_the_graph_by_position():
    g = eg.Graph()
    with g.as_default():
        x = eg.constant(1.0) * 2
    with pytest.raises(TypeError, match=r"the first argument of Session is target.*"
                                        r"eg\.Session\(graph=g\)"):
        eg.Session(g)
    with eg.Session(graph=g) as sess:
        assert sess.run(x) == 2.0


def test_keras_layers_cast_float64_data_to_their_dtype():
    rng = np.random.default_rng(0)
    x = rng.random((3, 2))                                      # numpy's float64
    model = dense_model(inputs=2, units=1)
    out = model(x)
    assert out.dtype == eg.float32
    kernel, bias = model.get_weights()
    np.testing.assert_allclose(out.numpy(), x.astype(np.float32) @ kernel + bias, rtol=1e-6)
    layer = keras.layers.Dense(1)
    assert layer(x).dtype == eg.float32
    assert keras.layers.Dense(1)(eg.tensor(x)).dtype == eg.float32
    assert keras.layers.Dense(1, dtype="float64")(x.astype(np.float32)).dtype == eg.float64
    with pytest.raises(TypeError, match="different float dtypes"):
        eg.nn.Linear(2, 1)(eg.tensor(x))                        # PyTorch's modules never cast


def test_initial_value_reading_another_variable_reads_its_initialized_value(graph):
    """As TF1 rebuilds it: V = Variable(W * 2) reads W's initial value while W has none, so
    one initializer run of both (or V's alone) works, and V is twice the W drawn then."""
    w = eg.Variable(eg.random_normal([2]), name="W")
    v = eg.Variable(w * 2, name="V")
    u = eg.Variable(w.initialized_value() + 1, name="U")        # TF1's explicit spelling
    assert v.initial_value.name == "V/Mul:0"
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        drawn, doubled, plus_one = sess.run([w, v, u])
        np.testing.assert_allclose(doubled, 2 * drawn)
        np.testing.assert_allclose(plus_one, drawn + 1)
        sess.run(w.assign_add([1.0, 1.0]))                      # v has its own storage
        np.testing.assert_allclose(sess.run(v), 2 * drawn)
    with eg.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(v).shape == (2,)
        with pytest.raises(FailedPreconditionError, match="uninitialized value W"):
            sess.run(w)


def test_initial_value_edugraph_cannot_rebuild_names_the_fix(graph):
    """A loop (one stateful node) is not rebuilt: the read fails, and the message names
    initialized_value() and the order of the initializers."""
    w = eg.Variable(eg.ones([2]), name="W")
    doubled = eg.while_loop(lambda i, x: i < 1, lambda i, x: (i + 1, x * 2), [0, w])[1]
    v = eg.Variable(doubled, name="V")
    with eg.Session() as sess:
        with pytest.raises(FailedPreconditionError,
                           match=r"uninitialized value W\n.*V's initial value reads the variable "
                                 r"W.*W\.initialized_value\(\).*sess\.run\(W\.initializer\), "
                                 r"then sess\.run\(V\.initializer\)"):
            sess.run(eg.global_variables_initializer())
        sess.run(w.initializer)
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v), [2.0, 2.0])


def test_variables_initializer_takes_a_list_of_variables(graph):
    w = eg.Variable(eg.ones([2]), name="W")
    with pytest.raises(TypeError, match=r"takes a list of Variables, e\.g\. "
                                        r"eg\.variables_initializer\(\[W\]\), but got the tensor "
                                        r"'Mul:0' \(computed, not a Variable\)"):
        eg.variables_initializer([w * 2])
    with pytest.raises(TypeError, match=r"eg\.variables_initializer\(\[W\]\), not the Variable "
                                        r"'W' alone"):
        eg.variables_initializer(w)


def test_labels_as_a_list_of_class_names():
    model = dense_model(inputs=3, units=2)
    model.compile("sgd", "sparse_categorical_crossentropy")
    with pytest.raises(TypeError, match=r"y \(the labels\) hold text \(dtype <U3, e\.g\. 'cat'\)"
                                        r".*np\.unique\(y, return_inverse=True\)"):
        model.fit(np.random.rand(4, 3), ["cat", "dog", "cat", "dog"], verbose=0)


def test_rows_of_unequal_lengths():
    model = dense_model(inputs=3, units=2)
    model.compile("sgd", "sparse_categorical_crossentropy")
    with pytest.raises(ValueError, match=r"x \(the inputs\): the rows of this nested list differ "
                                         r"in length \(2 and 3 values\)"):
        model.fit([[1, 2, 3], [4, 5]], [1, 0], verbose=0)


def test_evaluate_without_labels_says_evaluate():
    model = dense_model()
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"the labels y are missing.*model\.evaluate\(x, y\)"):
        model.evaluate(np.ones((2, 4)))


def test_a_variable_updated_with_minus_equals_after_a_tape_gets_tfs_spelling():
    """TF 2.21 refuses it too (RuntimeError: "`variable -= value` with `tf.Variable`s is not
    supported. Use `variable.assign_sub(value)`"); here the refusal (a GradientError, which is
    a RuntimeError) also says why and gives TF's spelling for a Variable."""
    w = eg.Variable(eg.ones([2]), name="w")
    with eg.GradientTape() as tape:
        loss = eg.reduce_sum(w * w)
    g = tape.gradient(loss, w)
    with pytest.raises(eg.errors.GradientError, match=r"^x -= \.\.\. would change a tensor of "
                       r"shape \(2,\) .*eg\.no_grad\(\).* For an eg\.Variable in TF's style, the "
                       r"update is w\.assign_sub\(lr \* g\)\.$"):
        w -= 0.1 * g
    with pytest.raises(eg.errors.GradientError, match=r"w\.assign_add\(lr \* g\)"):
        w += 0.1 * g
    with pytest.raises(eg.errors.GradientError, match=r"outside eg\.no_grad\(\)\. For an update "
                       r"step .*\(y = x - d\)\.$"):          # (a plain tensor: PyTorch's words only)
        t = eg.ones(2, requires_grad=True)
        t -= 0.1 * g
    w.assign_sub(0.1 * g)                                   # the fix suggested
    np.testing.assert_allclose(w.numpy(), [0.8, 0.8])
