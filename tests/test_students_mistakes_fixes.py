"""The fixes of issue 28 beyond its table of mistakes (test_students_mistakes.py): what still
works as before, and the parts of each fix that one row cannot show."""
import tracemalloc
import warnings

import numpy as np
import pytest

import edugraph as eg
from edugraph.debugging import NotFiniteError
from edugraph.errors import GradientError
from tests.interrupts import pressing_ctrl_c

keras = eg.keras


# ----------------------------------------------------------------------------- 1. backward twice
def test_each_forward_pass_is_a_new_graph_so_gradients_still_add_up():
    x = eg.tensor(2.0, requires_grad=True)
    for _ in range(2):
        (x * x).backward()                  # the lessons' accumulation: two passes, 4 + 4
    assert x.grad.item() == 8.0


def test_retain_graph_walks_the_same_graph_again_as_in_pytorch():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.item() == 8.0
    with pytest.raises(GradientError, match="a second time"):
        y.backward()                        # the second walk freed it


def test_a_node_that_saved_nothing_can_be_walked_again_and_create_graph_retains():
    x = eg.tensor(2.0, requires_grad=True)
    y = x + 1                               # add's gradient needs no values (PyTorch: the same)
    y.backward()
    y.backward()
    assert x.grad.item() == 2.0
    x.grad = None
    z = x * x * x
    z.backward(create_graph=True)           # retain_graph defaults to create_graph
    z.backward(create_graph=True)
    assert x.grad.item() == 24.0


def test_the_error_names_the_op_and_a_later_op_on_a_freed_graph_is_refused_too():
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    h = eg.exp(x)
    h.sum().backward()
    with pytest.raises(GradientError, match=r"the gradient of exp needs the values of its "
                                            r"output \(shape \(2,\)\)"):
        (h * 2).sum().backward()            # new nodes, then exp's freed one


def test_grad_and_tapes_keep_their_graph():
    """torch.autograd.grad would free it too; here it keeps the graph (gradcheck walks one
    graph once per output), and a TF tape has its own rule (persistent=True)."""
    x = eg.tensor(3.0, requires_grad=True)
    y = x * x
    assert eg.grad(y, x)[0].item() == eg.grad(y, x)[0].item() == 6.0
    with eg.GradientTape(persistent=True) as tape:
        w = eg.Variable(3.0)
        v = w * w
    assert tape.gradient(v, w).item() == tape.gradient(v, w).item() == 6.0


# ----------------------------------------------------------------------------- 2., 3. data
def test_bool_flags_of_numpy_and_object_arrays_of_numbers_are_fine():
    assert eg.tensor([1.0], requires_grad=np.bool_(True)).requires_grad
    assert not eg.Variable(1.0, trainable=False).requires_grad
    assert eg.tensor(np.array([1.0, 2.5], dtype=object)).dtype == eg.float32


def test_a_generator_yielding_none_gets_the_tensor_error():
    dataset = eg.data.Dataset.from_generator(lambda: iter([1.0, None]))
    with pytest.raises(TypeError, match="the entry is None"):
        list(dataset)


def test_a_map_error_keeps_its_type_and_names_the_element_in_a_sequential_map_too():
    images = np.zeros((3, 2, 2), np.float32)
    dataset = eg.data.Dataset.from_tensor_slices((images, np.array([1.0, 2.0, 3.0])))

    def broken(image, label):
        raise KeyError("size")
    with pytest.raises(KeyError) as info:
        list(dataset.map(broken))
    assert info.value.args == ("size",)
    assert info.value.__notes__ == [
        "Dataset.map: the function test_a_map_error_keeps_its_type_and_names_the_element_in_a_"
        "sequential_map_too.<locals>.broken raised this on element 0, (<float32 (2, 2)>, 1.0)."]


# ----------------------------------------------------------------------------- 4., 5. fit
def test_a_zero_learning_rate_is_allowed_by_both_apis():
    keras.optimizers.SGD(learning_rate=0.0)
    eg.optim.SGD([eg.Variable(1.0)], lr=0)
    with pytest.raises(ValueError, match="lr must be 0 or more, got -1"):
        eg.optim.SGD([eg.Variable(1.0)], lr=-1)


def _model(units=1, activation=None):
    model = keras.Sequential([keras.layers.Dense(units, activation=activation,
                                                 input_shape=(2,))])
    model.compile("sgd", "mse")
    return model


def test_a_proper_validation_split_still_keeps_the_last_examples_apart():
    x = np.arange(20, dtype=np.float32).reshape(10, 2) / 20
    y = x.sum(axis=1, keepdims=True)
    model = _model()
    history = model.fit(x, y, validation_split=0.2, shuffle=False, verbose=0)
    assert history.history["val_loss"][0] == pytest.approx(model.evaluate(x[8:], y[8:]),
                                                           rel=1e-5)
    with pytest.raises(ValueError, match="leaves none to validate on"):
        model.fit(x, y, validation_split=1e-20, verbose=0)     # (1 - 1e-20 == 1.0)


# ----------------------------------------------------------------------------- 6. from_logits
def test_logits_with_from_logits_do_not_warn_and_a_graph_softmax_does():
    logits = eg.tensor([[1.0, 2.0, 0.5]], requires_grad=True) * 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        keras.losses.sparse_categorical_crossentropy([1], logits, from_logits=True)
    with eg.Graph().as_default():
        probs = eg.nn.softmax(eg.placeholder(eg.float32, (None, 3)))
        with pytest.warns(UserWarning, match="categorical_crossentropy received "
                                             "from_logits=True.*made by a softmax"):
            keras.losses.categorical_crossentropy(eg.placeholder(eg.float32, (None, 3)),
                                                  probs, from_logits=True)


# ----------------------------------------------------------------------------- 9. NaN
def test_fit_stops_at_the_first_nan_batch_with_the_weights_before_it(capsys):
    x = np.linspace(0, 1, 40, dtype=np.float32).reshape(20, 2)
    y = x.sum(axis=1, keepdims=True)
    model, first_batch_only = _model(), _model()
    first_batch_only.set_weights(model.get_weights())
    first_batch_only.fit(x[:10], y[:10], batch_size=10, verbose=0)
    x[13, 1] = np.nan                           # in the second batch
    history = model.fit(x, y, batch_size=10, epochs=3, shuffle=False, verbose=0)
    assert len(history.history["loss"]) == 1 and np.isnan(history.history["loss"][0])
    assert "Epoch 1, batch 2: the loss is nan, so training stopped" in capsys.readouterr().out
    for ours, expected in zip(model.get_weights(), first_batch_only.get_weights()):
        np.testing.assert_array_equal(ours, expected)
    callback = keras.callbacks.TerminateOnNaN()     # given: fit adds no second one
    model.fit(x, y, batch_size=10, shuffle=False, verbose=0, callbacks=[callback])
    assert capsys.readouterr().out.count("the loss is nan") == 1


def test_train_step_skips_the_update_of_a_nan_batch():
    model = _model()
    before = [w.copy() for w in model.get_weights()]
    logs = model.train_step(eg.tensor([[np.nan, 1.0]]), eg.tensor([[1.0]]))
    assert np.isnan(logs["loss"])
    for old, new in zip(before, model.get_weights()):
        np.testing.assert_array_equal(old, new)


@pytest.fixture
def check_numerics():
    eg.debugging.enable_check_numerics()
    with np.errstate(divide="ignore", invalid="ignore"):    # (numpy's own warnings)
        yield
    eg.debugging.disable_check_numerics()


def test_check_numerics_names_the_forward_op_that_made_an_inf(check_numerics, device):
    x = eg.tensor([0.0, 1.0], device=device)
    with pytest.raises(NotFiniteError, match=r"^Numerics check: log made 1 -inf of 2 values\. "
                                             r"Its inputs were all finite, so this op made it"):
        eg.log(x)
    with pytest.raises(NotFiniteError, match=r"^Numerics check: matmul made 2 nan of 2 values\."
                                             r" Its input 0 already held NaN or inf: .*data"):
        eg.tensor([[np.nan, 1.0]], device=device) @ eg.tensor([[1.0] * 2] * 2, device=device)


def test_check_numerics_names_the_backward_that_made_an_inf(check_numerics):
    x = eg.tensor([0.0, 4.0], requires_grad=True)
    y = eg.sqrt(x).sum()                        # finite forward, infinite gradient at 0
    with pytest.raises(NotFiniteError, match=r"^Numerics check: the backward of sqrt \(the "
                                             r"gradient it sends to its inputs\) made 1 inf of "
                                             r"2 values, in its div op\."):
        y.backward()
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = eg.sqrt(x).sum()
    with pytest.raises(NotFiniteError, match="the backward of sqrt"):
        tape.gradient(y, x)


def test_check_numerics_names_graph_nodes_in_a_session_and_a_traced_function(check_numerics):
    with eg.Graph().as_default():
        p = eg.placeholder(eg.float32, (2,))
        grad = eg.gradients(eg.reduce_sum(eg.sqrt(p)), p)[0]
        with eg.Session() as sess:
            assert sess.run(grad, {p: [1.0, 4.0]}).tolist() == [0.5, 0.25]
            with pytest.raises(NotFiniteError, match=r"node 'gradients/Sqrt_grad/\w+' "
                                                     r"\(\w+\) made 1 inf of 2 values"):
                sess.run(grad, {p: [0.0, 4.0]})

    @eg.function
    def log(a):
        return eg.log(a)
    with pytest.raises(NotFiniteError, match=r"node 'Log' \(Log\) made 1 -inf"):
        log(eg.tensor([0.0, 1.0]))


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
def test_the_anomaly_switches_are_the_same_check_and_end_with_their_block():
    x = eg.tensor([0.0])
    with eg.autograd.detect_anomaly():
        assert eg.autograd.is_anomaly_enabled()
        with pytest.raises(NotFiniteError):
            eg.log(x)
    assert not eg.autograd.is_anomaly_enabled()
    assert np.isneginf(eg.log(x).numpy()).all()          # off again: no check
    with eg.autograd.set_detect_anomaly(True):
        with pytest.raises(NotFiniteError):
            eg.log(x)
    eg.autograd.set_detect_anomaly(True)
    eg.autograd.set_detect_anomaly(False)
    assert eg.ops.base.check_result is None


# ----------------------------------------------------------------------------- 10. while_loop
def _peak_bytes_of_a_loop(back_prop=True, gradient=False, steps=200):
    with eg.Graph().as_default():
        x0 = eg.placeholder(eg.float32, (1000,))
        _, x = eg.while_loop(lambda i, x: i < steps, lambda i, x: (i + 1, x * 1.001),
                             [eg.constant(0), x0], back_prop=back_prop)
        fetch = eg.gradients(eg.reduce_sum(x), x0)[0] if gradient else x
        with eg.Session() as sess:
            feed = {x0: np.ones(1000, np.float32)}
            sess.run(fetch, feed)                       # compiled before measuring
            tracemalloc.start()
            value = sess.run(fetch, feed)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
    np.testing.assert_allclose(value, np.float32(1.001) ** steps, rtol=1e-4)
    return peak


def test_a_while_loop_keeps_its_history_only_for_a_gradient():
    one_step = 4000                                     # 1000 float32 values
    assert _peak_bytes_of_a_loop(gradient=True) > 100 * one_step
    assert _peak_bytes_of_a_loop() < 10 * one_step
    assert _peak_bytes_of_a_loop(back_prop=False) < 10 * one_step


def test_back_prop_false_stops_the_gradient_in_a_graph_and_eagerly():
    with eg.Graph().as_default():
        x0 = eg.placeholder(eg.float32, ())
        x = eg.while_loop(lambda x: x < 10.0, lambda x: x * 2.0, [x0], back_prop=False)
        assert eg.gradients(x, x0) == [None]
    w = eg.tensor(3.0, requires_grad=True)
    x = eg.while_loop(lambda i, x: i < 2, lambda i, x: (i + 1, x * w), [0, w],
                      back_prop=False)[1]
    assert x.item() == 27.0 and not x.requires_grad


def test_maximum_iterations_caps_a_graph_loop_whose_cond_stays_true():
    with eg.Graph().as_default():
        i = eg.while_loop(lambda i: i >= 0, lambda i: i + 1, [eg.constant(0)],
                          maximum_iterations=7)
        with eg.Session() as sess:
            assert sess.run(i) == 7


@pytest.mark.timeout(120)     # (a Ctrl-C that never lands fails fast, not after CI's 900 s)
def test_an_interrupted_eager_loop_says_how_to_cap_it():
    with pytest.raises(KeyboardInterrupt) as info, pressing_ctrl_c():
        eg.while_loop(lambda i: i >= 0, lambda i: i + 1, [eg.tensor(0)], name="forever")
    assert "eg.while_loop 'forever' was interrupted after" in info.value.__notes__[0]
