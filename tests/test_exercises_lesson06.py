"""Lesson 6's exercises: the reference answers pass, a nudged answer fails, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import functools
import re
import warnings

import numpy as np
import pytest

import edugraph as eg
from edugraph import layers
from edugraph.exercises.checking import find
from edugraph.exercises.lesson06 import _CE_BATCHES as CROSS_ENTROPY_BATCHES
from tests.exercise_lines import line_of


@functools.cache
def digits():
    (x_train, y_train), (x_test, y_test) = eg.datasets.load_digits(test_size=0.2, seed=0)
    return x_train[:-200], y_train[:-200], x_test, y_test


def mlp(output_activation="softmax", input_shape=(8, 8), hidden=64):
    eg.random.set_seed(0)
    flatten = [layers.Flatten(input_shape=input_shape)] if len(input_shape) > 1 else []
    first = {} if flatten else {"input_shape": input_shape}
    return eg.Sequential([*flatten, layers.Dense(hidden, activation="relu", **first),
                          layers.Dense(10, activation=output_activation)])


@functools.cache
def logits_mlp_past_the_bar():
    """Another right answer than the lesson's: logits out, and a loss that knows it; flat
    64-pixel inputs."""
    x_fit, y_fit, x_test, y_test = digits()
    net = mlp(output_activation=None, input_shape=(64,))
    net.compile(optimizer=eg.train.AdamOptimizer(0.01),
                loss=eg.losses.SparseCategoricalCrossentropy(from_logits=True),
                metrics=["accuracy"])
    net.fit(x_fit.reshape(-1, 64), y_fit, epochs=10, verbose=0)
    return net, net.evaluate(x_test.reshape(-1, 64), y_test)[1]


# ------------------------------------------------------------------------------ 6.1
def test_6_1_a_trained_model_and_its_test_accuracy_pass_and_a_nudged_accuracy_fails():
    net, accuracy = logits_mlp_past_the_bar()
    assert line_of("6.1", {"digits_net": net, "digits_test_acc": accuracy}).startswith(
        "✓ 6.1: digits_net (4,810 parameters) classifies 9")
    assert line_of("6.1", {"digits_net": net, "digits_test_acc": np.float32(accuracy)}
                   ).startswith("✓ 6.1")
    assert line_of("6.1", {"digits_net": net, "digits_test_acc": accuracy + 0.01}
                   ).startswith("✗ 6.1: not right yet")


def test_6_1_the_accuracy_on_the_training_images_is_recognised_from_evaluate_too():
    net, _ = logits_mlp_past_the_bar()
    x_fit, y_fit, _, _ = digits()
    on_fit = net.evaluate(x_fit.reshape(-1, 64), y_fit)[1]
    assert line_of("6.1", {"digits_net": net, "digits_test_acc": on_fit}).startswith(
        "✗ 6.1: digits_test_acc was measured on the training images")


def test_6_1_the_list_that_evaluate_returns_is_explained():
    net, _ = logits_mlp_past_the_bar()
    _, _, x_test, y_test = digits()
    assert line_of("6.1", {"digits_net": net,
                           "digits_test_acc": net.evaluate(x_test.reshape(-1, 64), y_test)}
                   ) == ("✗ 6.1: digits_test_acc is a list of two numbers: evaluate returns "
                         "[loss, accuracy] when compiled with metrics=[\"accuracy\"]; keep the "
                         "accuracy: test_loss, digits_test_acc = digits_net.evaluate(x_test, "
                         "y_test).")


def test_6_1_a_made_up_number_gets_the_form_not_a_wrong_diagnosis():
    net, _ = logits_mlp_past_the_bar()
    for made_up in (0.9612, 0.9733, 0.5):      # (not a count of the validation images)
        assert line_of("6.1", {"digits_net": net, "digits_test_acc": made_up}).startswith(
            "✗ 6.1: not right yet. digits_net is a trained model")


def test_6_1_a_cnn_on_nhwc_images_is_measured_too():
    eg.random.set_seed(0)
    cnn = eg.Sequential([layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
                         layers.Flatten(), layers.Dense(10, activation="softmax")])
    assert line_of("6.1", {"digits_net": cnn, "digits_test_acc": 0.1}).startswith(
        "✗ 6.1: digits_net does about as well as guessing")


def test_6_1_models_of_the_wrong_shape_or_a_class_get_one_line():
    eg.random.set_seed(0)
    three_classes = eg.Sequential([layers.Flatten(input_shape=(8, 8)), layers.Dense(3)])
    assert line_of("6.1", {"digits_net": three_classes, "digits_test_acc": 0.1}) == (
        "✗ 6.1: digits_net should give 10 numbers per image, one per digit; it gives a numpy "
        "array of shape (359, 3) for 359 images.")
    other_inputs = eg.Sequential([layers.Dense(10, input_shape=(10,))])
    assert line_of("6.1", {"digits_net": other_inputs, "digits_test_acc": 0.1}).startswith(
        "✗ 6.1: digits_net does not take the 8×8 test images")
    assert line_of("6.1", {"digits_net": eg.Sequential, "digits_test_acc": 0.1}) == (
        "✗ 6.1: digits_net is the class Sequential itself; make a model with it, e.g. "
        "eg.Sequential([...]).")


def test_6_1_softmax_outputs_with_from_logits_are_named_before_the_accuracy():
    net = mlp()
    net.compile(optimizer="adam", loss=eg.losses.SparseCategoricalCrossentropy(
        from_logits=True))
    assert "from_logits=True" in line_of("6.1", {"digits_net": net, "digits_test_acc": 0.1})


# ------------------------------------------------------------------------------ 6.2
BY_HAND_6_2 = {"conv1_params": 16 * 9 + 16, "conv2_params": 8 * 9 * 16 + 8, "flat_size": 32,
               "dense1_params": 32 * 20 + 20, "dense2_params": 20 * 10 + 10}


def test_6_2_counts_by_hand_pass_and_each_nudged_count_fails():
    assert line_of("6.2", BY_HAND_6_2).startswith("✓ 6.2: 160, 1160, 660 and 210 parameters")
    for name, value in BY_HAND_6_2.items():
        assert line_of("6.2", {**BY_HAND_6_2, name: value + 1}).startswith("✗ 6.2: "), name


def test_6_2_mistakes_in_other_forms():
    pooling_ignored = {**BY_HAND_6_2, "flat_size": 6 * 6 * 8, "dense1_params": 289 * 20}
    assert line_of("6.2", pooling_ignored).startswith("✗ 6.2: flat_size: Flatten's length")
    one_bias_missing = {**BY_HAND_6_2, "dense2_params": 200}
    assert line_of("6.2", one_bias_missing).startswith("✗ 6.2: the biases are missing")
    assert line_of("6.2", {**BY_HAND_6_2, "conv2_params": 72}).startswith(
        "✗ 6.2: conv2_params: a 3×3 filter")
    generic = line_of("6.2", {**BY_HAND_6_2, "dense1_params": 661})
    assert generic.endswith("(conv1_params, conv2_params, flat_size and dense2_params are "
                            "right; dense1_params is not.)")
    assert line_of("6.2", {**BY_HAND_6_2, "flat_size": 32.5}) == \
        "✗ 6.2: flat_size is 32.5; a whole number (a count) is asked for."


# ------------------------------------------------------------------------------ 6.3
def pair_net(encoder):
    left, right = eg.Input((8, 8)), eg.Input((8, 8))
    merged = layers.Add()([encoder(left), encoder(right)])
    return eg.Model([left, right], layers.Dense(1, activation="sigmoid")(merged))


def test_6_3_a_shared_encoder_passes_also_as_a_sequential_and_a_changed_one_fails():
    flatten, dense = layers.Flatten(), layers.Dense(16, activation="relu")
    assert line_of("6.3", {"pair_net": pair_net(lambda image: dense(flatten(image)))}) == (
        "✓ 6.3: pair_net has two inputs, one relu encoder for both (1,057 parameters), and "
        "gives the same answer when the images are swapped: a + b = b + a.")
    encoder = eg.Sequential([layers.Flatten(input_shape=(8, 8)),
                             layers.Dense(16, activation="relu")])
    assert line_of("6.3", {"pair_net": pair_net(encoder)}).startswith("✓ 6.3")
    wider = layers.Dense(17, activation="relu")
    assert line_of("6.3", {"pair_net": pair_net(lambda image: wider(flatten(image)))}
                   ).startswith("✗ 6.3: not right yet")


def test_6_3_a_model_with_one_input_is_told_to_take_two():
    assert line_of("6.3", {"pair_net": mlp()}) == (
        "✗ 6.3: pair_net should take two images: eg.Model([img_a, img_b], ...) with two "
        "eg.Input((8, 8)), as in section 8.")


# ------------------------------------------------------------------------------ 6.4
def batch_norm(x, gamma, beta, eps):
    axes = tuple(range(x.ndim - 1))
    return gamma * (x - x.mean(axes)) / np.sqrt(x.var(axes) + eps) + beta


def test_6_4_numpy_passes_eager_float32_tensors_pass_and_a_nudged_result_fails():
    assert line_of("6.4", {"batch_norm_by_hand": batch_norm}).startswith("✓ 6.4")

    def with_eager_tensors(x, gamma, beta, eps):
        x, axes = eg.tensor(x, dtype=eg.float32), list(range(x.ndim - 1))
        mean = eg.reduce_mean(x, axis=axes, keepdims=True)
        variance = eg.reduce_mean(eg.square(x - mean), axis=axes, keepdims=True)
        gamma, beta = eg.tensor(gamma, dtype=eg.float32), eg.tensor(beta, dtype=eg.float32)
        return gamma * (x - mean) / eg.sqrt(variance + eps) + beta

    assert line_of("6.4", {"batch_norm_by_hand": with_eager_tensors}).startswith("✓ 6.4")

    def with_edugraphs_own(x, gamma, beta, eps):
        x = eg.tensor(x, dtype=eg.float32)
        mean, variance = eg.nn.moments(x, axes=list(range(x.ndim - 1)))
        return eg.nn.batch_normalization(x, mean, variance, eg.tensor(beta, dtype=eg.float32),
                                         eg.tensor(gamma, dtype=eg.float32), eps)

    assert line_of("6.4", {"batch_norm_by_hand": with_edugraphs_own}) == (
        "✗ 6.4: batch_norm_by_hand calls eg.nn.moments: the exercise asks for the mean and "
        "the variance by hand, with numpy (x.mean(axis=...), x.var(axis=...)).")
    assert eg.nn.moments.__module__ == "edugraph.ops.reduce"      # given back afterwards
    assert line_of("6.4", {"batch_norm_by_hand": lambda *a: batch_norm(*a) * 1.001}
                   ).startswith("✗ 6.4: not right yet")


def test_6_4_an_error_in_the_students_function_names_its_line():
    def batch_norm_by_hand(x, gamma, beta, eps):
        mean = x.mean(axis=1)           # per example, and without keepdims
        return gamma * (x - mean) / np.sqrt(x.var(axis=1) + eps) + beta

    line = line_of("6.4", {"batch_norm_by_hand": batch_norm_by_hand})
    assert line.startswith("✗ 6.4: running your answer raised ValueError: operands could not "
                           "be broadcast together")
    assert re.search(r"\(in batch_norm_by_hand, line \d+: return gamma \* \(x - mean\) / "
                     r"np\.sqrt\(x\.var\(axis=1\) \+ eps\) \+ beta\)$", line), line


def test_6_4_returning_the_statistics_too_is_explained():
    line = line_of("6.4", {"batch_norm_by_hand": lambda x, g, b, e: (batch_norm(x, g, b, e),
                                                                     x.mean(0), x.var(0))})
    assert line.startswith("✗ 6.4: batch_norm_by_hand(x, gamma, beta, eps) on the slide's "
                           "batch should return one array of x's shape (3, 4), the normalised "
                           "batch; it returned a tuple of 3 items.")


def test_6_4_a_function_that_changes_x_in_place_does_not_spoil_the_check():
    def in_place(x, gamma, beta, eps):
        axes = tuple(range(x.ndim - 1))
        x -= x.mean(axes)
        x /= np.sqrt(x.var(axes) + eps)
        return gamma * x + beta

    assert line_of("6.4", {"batch_norm_by_hand": in_place}).startswith("✓ 6.4")
    assert line_of("6.4", {"batch_norm_by_hand": in_place}).startswith("✓ 6.4")


# ------------------------------------------------------------------------------ 6.5
def cross_entropy(logits, labels):
    """Written another way than the lesson's: one-hot rows and np.logaddexp."""
    n, classes = logits.shape
    y = np.eye(classes)[labels]
    log_p = logits - np.logaddexp.reduce(logits, axis=1)[:, None]
    return -(y * log_p).sum() / n, (np.exp(log_p) - y) / n


def test_6_5_numpy_passes_and_a_nudged_loss_or_gradient_fails():
    assert line_of("6.5", {"cross_entropy_by_hand": cross_entropy}) == (
        "✓ 6.5: cross_entropy_by_hand matches F.cross_entropy and its backward pass on 3 "
        "batches, logits of ±1000 among them (to 1e-6): the loss is the mean of -log p of "
        "each label, and its gradient (p - y) / N.")
    for nudge in (lambda loss, grad: (loss * 1.0001, grad),
                  lambda loss, grad: (loss, grad * 1.0001)):
        assert line_of("6.5", {"cross_entropy_by_hand": lambda z, y: nudge(*cross_entropy(z, y))}
                       ).startswith("✗ 6.5: not right yet")


def test_6_5_the_reference_is_pytorchs_cross_entropy():
    torch = pytest.importorskip("torch")
    references = find("6.5").right_answer()
    for what, logits, labels in CROSS_ENTROPY_BATCHES:
        reference = references[what]
        z = torch.tensor(logits, requires_grad=True)
        loss = torch.nn.functional.cross_entropy(z, torch.tensor(labels))
        loss.backward()
        assert np.isclose(reference["loss"], loss.item(), rtol=1e-12)
        np.testing.assert_allclose(reference["grad"], z.grad.numpy(), rtol=1e-9, atol=1e-15)


def test_6_5_eager_tensors_lists_and_a_function_that_changes_its_input_pass():
    def with_edugraph(logits, labels):
        z = eg.tensor(logits, requires_grad=True)
        loss = eg.nn.functional.cross_entropy(z, eg.tensor(labels))
        loss.backward()
        return loss, z.grad

    def in_place(logits, labels):
        logits -= logits.max(axis=1, keepdims=True)
        return cross_entropy(logits, labels)

    def as_lists(logits, labels):
        loss, grad = cross_entropy(logits, labels)
        return [float(loss), grad.tolist()]

    for answer in (with_edugraph, in_place, in_place, as_lists):
        assert line_of("6.5", {"cross_entropy_by_hand": answer}).startswith("✓ 6.5")


def test_6_5_a_missing_keepdims_names_the_line_and_says_what_broadcasts():
    def cross_entropy_by_hand(logits, labels):
        shifted = logits - logits.max(axis=1)
        return shifted, shifted

    line = line_of("6.5", {"cross_entropy_by_hand": cross_entropy_by_hand})
    assert line.startswith("✗ 6.5: running your answer raised ValueError: operands could not "
                           "be broadcast together with shapes (4,3) (4,)")
    assert re.search(r"\(in cross_entropy_by_hand, line \d+: shifted = logits - "
                     r"logits\.max\(axis=1\)\)\. One number per example", line), line
    assert line.endswith("a row's max or sum needs keepdims=True (shape (4, 1)), and labels "
                         "are class ids, not one-hot rows: pick p[np.arange(4), labels], or "
                         "make one-hot rows with np.eye(3)[labels].")


def test_6_5_the_pair_in_the_wrong_order_or_per_example_losses_are_told_apart():
    swapped = line_of("6.5", {"cross_entropy_by_hand": lambda z, y: cross_entropy(z, y)[::-1]})
    assert swapped == ("✗ 6.5: cross_entropy_by_hand(logits, labels) on positive logits should "
                       "return the loss first, one number; it is an array of shape (4, 3). "
                       "Return loss, grad in that order.")

    def per_example(logits, labels):
        loss, grad = cross_entropy(logits, labels)
        return np.full(len(labels), loss), grad

    assert "returned one loss per example (shape (4,))" in line_of(
        "6.5", {"cross_entropy_by_hand": per_example})
    assert "should return a pair, loss, grad; it returned a float" in line_of(
        "6.5", {"cross_entropy_by_hand": lambda z, y: cross_entropy(z, y)[0]})


def test_6_5_the_mean_loss_with_a_summed_gradient_and_the_sum_get_different_hints():
    def gradient_of_the_sum(logits, labels):
        loss, grad = cross_entropy(logits, labels)
        return loss, grad * len(labels)

    def summed(logits, labels):
        loss, grad = cross_entropy(logits, labels)
        return loss * len(labels), grad * len(labels)

    assert "divide p - y by the batch size" in line_of(
        "6.5", {"cross_entropy_by_hand": gradient_of_the_sum})
    assert "are sums over the batch" in line_of("6.5", {"cross_entropy_by_hand": summed})


def test_6_5_an_overflow_is_diagnosed_without_a_numpy_warning():
    def naive(logits, labels):
        p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
        y = np.eye(logits.shape[1])[labels]
        return -np.log(p[np.arange(len(labels)), labels]).mean(), (p - y) / len(labels)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        line = line_of("6.5", {"cross_entropy_by_hand": naive})
    assert line.startswith("✗ 6.5: right, until the logits are large: e^1000 overflows")


@pytest.mark.parametrize("exercise_id", ["6.1", "6.2", "6.3", "6.4", "6.5"])
def test_the_pass_line_is_one_deterministic_line(exercise_id):
    answers = {"6.1": lambda: dict(zip(("digits_net", "digits_test_acc"),
                                       logits_mlp_past_the_bar())),
               "6.2": lambda: BY_HAND_6_2,
               "6.3": lambda: {"pair_net": pair_net(eg.Sequential([
                   layers.Flatten(input_shape=(8, 8)), layers.Dense(16, activation="relu")]))},
               "6.4": lambda: {"batch_norm_by_hand": batch_norm},
               "6.5": lambda: {"cross_entropy_by_hand": cross_entropy}}
    first, again = line_of(exercise_id, answers[exercise_id]()), \
        line_of(exercise_id, answers[exercise_id]())
    assert first == again and "\n" not in first and first.startswith(f"✓ {exercise_id}: ")


def test_6_3_images_added_before_the_encoder_fail_though_symmetric():
    left, right = eg.Input((8, 8)), eg.Input((8, 8))
    flatten, encoder = layers.Flatten(), layers.Dense(16, activation="relu")
    summed_images = layers.Add()([flatten(left), flatten(right)])
    pair_net = eg.Model([left, right],
                        layers.Dense(1, activation="sigmoid")(encoder(summed_images)))
    assert line_of("6.3", {"pair_net": pair_net}).startswith(
        "✗ 6.3: pair_net gives the same answer for any two images with the same sum a + b")


def test_6_5_scipys_logsumexp_passes_and_keras_clipping_gets_the_cap_hint():
    from scipy.special import logsumexp

    def with_logsumexp(logits, labels):
        n = len(labels)
        log_p = logits - logsumexp(logits, axis=1, keepdims=True)
        grad = np.exp(log_p) - np.eye(logits.shape[1])[labels]
        return -log_p[np.arange(n), labels].mean(), grad / n

    def clipped_like_keras(logits, labels):
        n = len(labels)
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        p = shifted / shifted.sum(axis=1, keepdims=True)
        loss = -np.log(np.clip(p[np.arange(n), labels], 1e-7, 1 - 1e-7)).mean()
        return loss, (p - np.eye(logits.shape[1])[labels]) / n

    assert line_of("6.5", {"cross_entropy_by_hand": with_logsumexp}).startswith("✓ 6.5")
    assert line_of("6.5", {"cross_entropy_by_hand": clipped_like_keras}).startswith(
        "✗ 6.5: right, except for logits of ±1000: adding a small number to p (or clipping")


def test_6_3_no_sigmoid_is_found_even_where_the_outputs_happen_to_lie_in_0_1():
    eg.random.set_seed(0)
    img_a, img_b = eg.Input((8, 8)), eg.Input((8, 8))
    flat, shared = layers.Flatten(), layers.Dense(16, activation="relu")
    merged = layers.Add()([shared(flat(img_a)), shared(flat(img_b))])
    out = layers.Dense(1)(merged)
    pair_net = eg.Model([img_a, img_b], out)
    # a small output layer around 0.5: on the test images its outputs lie inside [0, 1]
    kernel, bias = out.layer.get_weights()
    out.layer.set_weights([kernel * 0.01, bias * 0 + 0.5])
    images = digits()[2][:32]                  # the test images, as the check reads them
    outputs = pair_net.predict([images[:16], images[16:]])
    assert 0 <= outputs.min() and outputs.max() <= 1
    assert line_of("6.3", {"pair_net": pair_net}).startswith(
        "✗ 6.3: pair_net's output is not a probability")


@pytest.mark.parametrize("activation", ["tanh", "sigmoid", "elu"])
def test_6_3_an_encoder_with_another_activation_than_relu_is_told_so(activation):
    from edugraph.exercises.lesson06 import _pair_net
    assert line_of("6.3", {"pair_net": _pair_net(encoder_activation=activation)}).startswith(
        "✗ 6.3: pair_net's encoder has another activation than the relu")


def test_6_3_a_relu_as_a_layer_of_its_own_passes():
    flatten, dense, relu = layers.Flatten(), layers.Dense(16), layers.ReLU()
    assert line_of("6.3", {"pair_net": pair_net(lambda image: relu(dense(flatten(image))))}
                   ).startswith("✓ 6.3")


def test_6_1_a_model_fit_on_the_test_images_alone_or_added_to_x_fit_is_told_so():
    from edugraph.exercises.lesson06 import (_trained_on_the_test_images,
                                             _trained_with_the_test_images)
    for leaked in (_trained_on_the_test_images, _trained_with_the_test_images):
        assert line_of("6.1", leaked()).startswith(
            "✗ 6.1: digits_net is far surer of the test images than of the validation")
