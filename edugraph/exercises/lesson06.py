"""Lesson 6's exercises: train a digits classifier past a stated test accuracy and report it
honestly; count a CNN's parameters layer by layer; a functional model with a shared layer that
cannot tell left from right; batch normalisation by hand; softmax cross-entropy and its gradient
p - y by hand."""
import contextlib
import functools
import warnings
from types import SimpleNamespace

import numpy as np

import edugraph as eg
from edugraph import layers
from edugraph.tensor import Tensor

from .answers import WrongForm, close, describe, function, number, whole_number
from .checking import Exercise, Mistake, what_went_wrong


def keras_model(value, name):
    """A Keras-style model: an ``eg.Sequential`` or an ``eg.Model``."""
    if isinstance(value, type):
        raise WrongForm(f"{name} is the class {value.__name__} itself; make a model with it, "
                        "e.g. eg.Sequential([...]).")
    if isinstance(value, eg.models.callbacks.History):
        raise WrongForm(f"{name} is the History that fit returned; set it to the model itself "
                        "(fit trains the model in place).")
    if not isinstance(value, eg.Model):
        raise WrongForm(f"{name} should be a model (an eg.Sequential or an eg.Model); it is "
                        f"{describe(value)}.")
    return value


@functools.cache
def _digits():
    """The lesson's split of the 8×8 digits (section 1), recomputed."""
    (x_train, y_train), (x_test, y_test) = eg.datasets.load_digits(test_size=0.2, seed=0)
    return SimpleNamespace(x_fit=x_train[:-200], y_fit=y_train[:-200], x_val=x_train[-200:],
                           y_val=y_train[-200:], x_train=x_train, x_test=x_test, y_test=y_test)


# ----------------------------------- 6.1: a small digits classifier past 95% on the test images
REQUIRED_ACCURACY = 0.95
MAX_PARAMS = 5000       # below the lesson's MLP (9,610) and CNN (21,386): a model of one's own

# the shapes a digits model of the lesson takes: the MLP's 8×8, flat 64 pixels, the CNN's NHWC
_IMAGE_SHAPES = ((8, 8), (64,), (8, 8, 1))


def _outputs_on(net, images, name):
    """net's outputs for the images, in the first of the lesson's input shapes it takes."""
    for shape in _IMAGE_SHAPES:
        try:
            outputs = net.predict(images.reshape((len(images),) + shape))
        except Exception:           # not built for this shape: try the next one
            continue
        if not isinstance(outputs, np.ndarray) or outputs.shape != (len(images), 10):
            raise WrongForm(f"{name} should give 10 numbers per image, one per digit; it gives "
                            f"{describe(outputs)} for {len(images)} images.")
        return outputs
    raise WrongForm(f"{name} does not take the 8×8 test images: start it with "
                    "Flatten(input_shape=(8, 8)) as in section 2 (or input_shape=(8, 8, 1) "
                    "for a CNN).")


def _expects_probabilities(loss):
    """Whether the loss given to compile reads the outputs as probabilities."""
    if isinstance(loss, str):
        return loss.endswith("crossentropy")
    return getattr(loss, "from_logits", True) is False


def _count_of(fraction, size):
    """Whether fraction is a whole number of `size` examples: an accuracy measured on them."""
    return abs(fraction * size - round(fraction * size)) < 1e-4


def _test_loss(net):
    """The loss that evaluate gives on the test images (a number a student may report by
    mistake), or None where it cannot run: a model not compiled, or not for these labels."""
    data = _digits()
    for shape in _IMAGE_SHAPES:
        for labels in (data.y_test, np.eye(10)[data.y_test]):     # class ids, or one-hot
            try:
                with warnings.catch_warnings():     # fit has warned the student already
                    warnings.simplefilter("ignore")
                    result = net.evaluate(data.x_test.reshape((len(data.x_test),) + shape),
                                          labels)
            except Exception:       # another input shape, other labels, not compiled...
                continue
            return float(np.ravel(result)[0])
    return None


def _accuracy(net, images, labels):
    return float(np.mean(_outputs_on(net, images, "digits_net").argmax(axis=1) == labels))


def _accuracy_number(value, name):
    """One number; the [loss, accuracy] list that evaluate returns gets its own advice."""
    if isinstance(value, (list, tuple)) and len(value) == 2:
        raise WrongForm(f"{name} is a list of two numbers: evaluate returns [loss, accuracy] "
                        f"when compiled with metrics=[\"accuracy\"]; keep the accuracy: "
                        f"test_loss, {name} = digits_net.evaluate(x_test, y_test).")
    return number(value, name)


def _mean_loss(outputs, labels, probabilities):
    """The mean cross-entropy of outputs (probabilities, or logits) for the labels."""
    if not probabilities:
        shifted = outputs - outputs.max(axis=1, keepdims=True)
        outputs = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    right = outputs[np.arange(len(labels)), labels]
    return float(np.mean(-np.log(np.clip(right, 1e-12, 1.0))))


def _test_images_seen(losses):
    """Whether the model is about as sure of the test images as of the images it was fit
    on, and far surer than of the validation images, which it never learnt from: a model
    fit without x_test scores its test and validation images alike (their losses agree to
    some 30 %, as 360 and 200 images allow); one fit on x_test, alone or with x_fit, does
    not. (Fit on every image, the validation ones too, it cannot tell: then only a test
    accuracy near-perfect and above the fit accuracy gives it away.)"""
    test, fit, val = losses["test"], losses["fit"], losses["val"]
    return test < 0.6 * val and test < np.sqrt(fit * val)


def _run_digits(answer):
    net, reported = answer["digits_net"], answer["digits_test_acc"]
    data = _digits()
    outputs = _outputs_on(net, data.x_test, "digits_net")
    accuracy = float(np.mean(outputs.argmax(axis=1) == data.y_test))
    # the numbers a student might report instead: on the images fit learnt from, or looked at
    fit_accuracy = _accuracy(net, data.x_fit, data.y_fit)
    val_accuracy = _accuracy(net, data.x_val, data.y_val)
    probabilities = bool(outputs.min() >= 0 and
                         np.allclose(outputs.sum(axis=1), 1, atol=1e-4))
    losses = {"test": _mean_loss(outputs, data.y_test, probabilities),
              **{part: _mean_loss(_outputs_on(net, images, "digits_net"), labels,
                                  probabilities)
                 for part, images, labels in (("fit", data.x_fit, data.y_fit),
                                              ("val", data.x_val, data.y_val))}}
    from_logits = bool(getattr(net.loss, "from_logits", False))
    expects_probabilities = _expects_probabilities(net.loss)
    return {
        "above the bar": accuracy >= REQUIRED_ACCURACY,
        "within the budget": net.count_params() <= MAX_PARAMS,
        "reports its test accuracy": abs(reported - accuracy) < 1e-6,
        # a model fit on x_fit does better on x_fit than on x_test; near-perfect on x_test
        # and clearly worse on x_fit means it learnt the test images
        "test images unseen": not (_test_images_seen(losses) or
                                   accuracy >= 0.995 and accuracy > fit_accuracy),
        # a softmax twice, or logits read as probabilities: both train badly
        "loss fits the outputs": not (probabilities and from_logits) and
        not (expects_probabilities and not probabilities),
        # what the hints and the pass line look at
        "accuracy": accuracy, "reported": reported, "probabilities": probabilities,
        "from logits": from_logits, "expects probabilities": expects_probabilities,
        "fit accuracy": fit_accuracy, "val accuracy": val_accuracy,
        "parameters": net.count_params(), "test loss": _test_loss(net),
    }


def _digits_passed(shown):
    return (f"digits_net ({shown['parameters']:,} parameters) classifies "
            f"{shown['accuracy']:.1%} of the {len(_digits().y_test)} test images right "
            f"({REQUIRED_ACCURACY:.0%} asked), and digits_test_acc reports that accuracy; "
            "it is no surer of the test images than of the validation images, as a model "
            "that never learnt from them.")


def _mlp(output_activation="softmax", hidden=64):
    """The MLP of section 2, with 64 hidden units to fit the budget (for the examples)."""
    eg.random.set_seed(0)
    return eg.Sequential([layers.Flatten(input_shape=(8, 8)),
                          layers.Dense(hidden, activation="relu"),
                          layers.Dense(10, activation=output_activation)])


def _compiled(net, loss="sparse_categorical_crossentropy", learning_rate=0.01):
    net.compile(optimizer=eg.train.AdamOptimizer(learning_rate), loss=loss,
                metrics=["accuracy"])
    return net


@functools.cache
def _trained_mlp():
    """A model past the bar, and the History of its training (for the examples)."""
    data = _digits()
    net = _compiled(_mlp())
    history = net.fit(data.x_fit, data.y_fit, epochs=10, verbose=0,
                      validation_data=(data.x_val, data.y_val))
    return net, history.history


def _test_accuracy(net):
    data = _digits()
    return float(np.mean(net.predict(data.x_test).argmax(axis=1) == data.y_test))


def _barely_trained():
    """One epoch: it has learnt something, but not enough."""
    data = _digits()
    net = _compiled(_mlp(), learning_rate=0.001)
    net.fit(data.x_fit, data.y_fit, epochs=1, verbose=0)
    return {"digits_net": net, "digits_test_acc": _test_accuracy(net)}


def _trained_on_the_test_images():
    data = _digits()
    net = _compiled(_mlp())
    net.fit(data.x_test, data.y_test, epochs=40, verbose=0)
    return {"digits_net": net, "digits_test_acc": _test_accuracy(net)}


def _trained_with_the_test_images():
    data = _digits()
    net = _compiled(_mlp())
    net.fit(np.concatenate([data.x_fit, data.x_test]),
            np.concatenate([data.y_fit, data.y_test]), epochs=20, verbose=0)
    return {"digits_net": net, "digits_test_acc": _test_accuracy(net)}


def _reports(number_of):
    """A model past the bar that reports number_of(model, its history) as its accuracy."""
    def answer():
        net, history = _trained_mlp()
        return {"digits_net": net, "digits_test_acc": number_of(net, history)}
    return answer


def _measured_on(got, size, accuracy=None):
    """Whether the reported number is a count of `size` images (rarely true of a number made
    up), close to `accuracy`, the model's own on them now (fit's history lags behind by up to
    an epoch)."""
    return (not got["reports its test accuracy"] and _count_of(got["reported"], size) and
            (accuracy is None or abs(got["reported"] - accuracy) < 0.05))


ex6_1 = Exercise(
    "6.1",
    reads={"digits_net": keras_model, "digits_test_acc": _accuracy_number},
    run=_run_digits,
    passed=_digits_passed,
    reference=lambda: {"above the bar": True, "within the budget": True,
                       "reports its test accuracy": True, "loss fits the outputs": True,
                       "test images unseen": True},
    expected=f"digits_net is a trained model of at most {MAX_PARAMS:,} parameters that "
             f"classifies at least {REQUIRED_ACCURACY:.0%} of the test images right, and "
             "digits_test_acc is its accuracy on x_test, a fraction between 0 and 1 as "
             "evaluate returns it (checked to 1e-6).",
    mistakes=(
        Mistake("digits_net ends with a softmax, so its outputs are already probabilities, "
                "but the loss was told from_logits=True and applies a softmax again: use the "
                "loss \"sparse_categorical_crossentropy\" as it is (or drop the softmax).",
                when=lambda got, ref: got["probabilities"] and got["from logits"],
                example=lambda: {"digits_net": _compiled(
                    _mlp(), loss=eg.losses.SparseCategoricalCrossentropy(from_logits=True)),
                    "digits_test_acc": 0.1}),
        Mistake("digits_net's outputs are not probabilities (its last layer has no softmax), "
                "but the loss reads them as probabilities: end the model with "
                "activation=\"softmax\", or compile with "
                "eg.losses.SparseCategoricalCrossentropy(from_logits=True).",
                when=lambda got, ref: not got["probabilities"] and got["expects probabilities"],
                example=lambda: {"digits_net": _compiled(_mlp(output_activation=None)),
                                 "digits_test_acc": 0.1}),
        Mistake("digits_net is far surer of the test images than of the validation "
                "images, which it never learnt from: was it fit on x_test (alone, or added "
                "to x_fit)? The test images measure how well the model does on images it "
                "never learnt from; fit it on x_fit and y_fit only.",
                when=lambda got, ref: not got["test images unseen"],
                example=_trained_with_the_test_images),
        Mistake(f"digits_net has more than {MAX_PARAMS:,} parameters (Total params in its "
                "summary()): the lesson's net and cnn are too large. Build a smaller model, "
                "such as the MLP of section 2 with fewer hidden units.",
                when=lambda got, ref: not got["within the budget"],
                example=lambda: {"digits_net": _mlp(hidden=128), "digits_test_acc": 0.1}),
        Mistake("digits_net does about as well as guessing: it has not been trained. Compile "
                "it, then fit it on x_fit and y_fit; if fit stopped with an error, its message "
                "says what to change (class ids as labels go with "
                "\"sparse_categorical_crossentropy\", one-hot labels with "
                "\"categorical_crossentropy\").",
                when=lambda got, ref: got["accuracy"] < 0.5,
                example=lambda: {"digits_net": _mlp(), "digits_test_acc": 0.1}),
        Mistake(f"digits_net has learnt, but it classifies fewer than {REQUIRED_ACCURACY:.0%} "
                "of the test images right: train it longer (more epochs; EarlyStopping of "
                "section 4 finds how many), or with a larger learning rate such as "
                "eg.keras.optimizers.Adam(0.01).",
                when=lambda got, ref: not got["above the bar"],
                example=_barely_trained),
        Mistake("digits_test_acc was measured on the training images (in fit's history, or "
                "with evaluate on x_fit): the model learnt those, so the number flatters it. "
                "Report its accuracy on x_test, images it has never seen (section 5).",
                when=lambda got, ref: any(_measured_on(got, len(images), got["fit accuracy"])
                                          for images in (_digits().x_fit, _digits().x_train)),
                example=_reports(lambda net, history: history["accuracy"][-1])),
        Mistake("digits_test_acc is the accuracy on the validation images: fit looked at them "
                "after every epoch (and early stopping chooses by them). The number to report "
                "is the accuracy on x_test (section 5).",
                when=lambda got, ref: abs(got["reported"] - got["val accuracy"]) < 1e-6,
                example=_reports(lambda net, history: history["val_accuracy"][-1])),
        Mistake("digits_test_acc looks like a percentage: give the fraction between 0 and 1, "
                "as evaluate returns it.",
                when=lambda got, ref: abs(got["reported"] - 100 * got["accuracy"]) < 1e-4,
                example=_reports(lambda net, history: 100 * _test_accuracy(net))),
        Mistake("digits_test_acc is an accuracy on the test images, but not digits_net's as "
                "it is now: was it measured on another model, or before its last training?",
                when=lambda got, ref: _measured_on(got, len(_digits().x_test)),
                example=lambda: {"digits_net": _trained_mlp()[0],
                                 "digits_test_acc": _barely_trained()["digits_test_acc"]}),
        Mistake("digits_test_acc is the test loss, not the accuracy: evaluate returns the "
                "loss alone, or [loss, accuracy] when the model is compiled with "
                "metrics=[\"accuracy\"]. Report the accuracy.",
                when=lambda got, ref: (got["test loss"] is not None and
                                       abs(got["reported"] - got["test loss"]) < 1e-6),
                example=lambda: {"digits_net": _trained_mlp()[0],
                                 "digits_test_acc": _test_loss(_trained_mlp()[0])}),
    ),
)


# ----------------------------------------------------- 6.2: a CNN's parameters, layer by layer
def _stack():
    """The stack that 6.2's prompt shows."""
    return eg.Sequential([
        layers.Conv2D(16, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
        layers.MaxPooling2D(),
        layers.Conv2D(8, 3, activation="relu"),
        layers.Flatten(),
        layers.Dense(20, activation="relu"),
        layers.Dense(10, activation="softmax"),
    ])


_WEIGHTED = ("conv1_params", "conv2_params", "dense1_params", "dense2_params")


@functools.cache
def _stack_layers():
    """conv1, conv2, flatten, dense1 and dense2 of the stack, built."""
    conv1, _, conv2, flatten, dense1, dense2 = _stack().layers
    return SimpleNamespace(conv1=conv1, conv2=conv2, flatten=flatten, dense1=dense1,
                           dense2=dense2)


def _stack_counts():
    """What summary() says: each weighted layer's parameters, and Flatten's length."""
    s = _stack_layers()
    return {"conv1_params": s.conv1.count_params(), "conv2_params": s.conv2.count_params(),
            "flat_size": s.flatten.output_shape[-1], "dense1_params": s.dense1.count_params(),
            "dense2_params": s.dense2.count_params()}


def _weights_only():
    """The counts without the biases."""
    s = _stack_layers()
    return dict(zip(_WEIGHTED, (s.conv1.kernel.size, s.conv2.kernel.size, s.dense1.kernel.size,
                                s.dense2.kernel.size)))


def _one_channel_filters():
    """conv2's count if its 3×3 filters saw one channel only (with and without biases)."""
    height, width, _, filters = _stack_layers().conv2.kernel.shape
    return (filters * (height * width + 1), filters * height * width)


def _three_channel_filters():
    """conv1's count if its filters saw three colour channels (with and without biases)."""
    height, width, _, filters = _stack_layers().conv1.kernel.shape
    return (filters * (height * width * 3 + 1), filters * height * width * 3)


def _biases_per_input_channel():
    """conv2's count with one bias per input channel instead of one per filter."""
    return _stack_layers().conv2.kernel.size + _stack_layers().conv2.kernel.shape[2]


def _dense2_fed_by_flatten(got):
    """dense2's count if it took Flatten's output (the reference's or the student's)."""
    units = _stack_layers().dense2.kernel.shape[1]
    return got["dense2_params"] in {(flat + 1) * units
                                    for flat in (_stack_counts()["flat_size"], got["flat_size"])}


def _with_counts(**changed):
    return lambda: {**_stack_counts(), **changed}


ex6_2 = Exercise(
    "6.2",
    reads={name: whole_number for name in ("conv1_params", "conv2_params", "flat_size",
                                           "dense1_params", "dense2_params")},
    reference=_stack_counts,
    passed=lambda shown: (
        f"{shown['conv1_params']}, {shown['conv2_params']}, {shown['dense1_params']} and "
        f"{shown['dense2_params']} parameters, and {shown['flat_size']} numbers out of "
        "Flatten: each filter or unit has a weight per input it sees, plus a bias."),
    expected="Each name is one whole number: a layer's parameters as summary() counts them, "
             "and flat_size the length of Flatten's output.",
    mistakes=(
        Mistake("the biases are missing: each filter of a Conv2D and each unit of a Dense "
                "has one bias besides its weights.",
                when=lambda got, ref: any(got[n] == w for n, w in _weights_only().items()),
                example=lambda: {**_stack_counts(), **_weights_only()}),
        Mistake("conv1_params: the digits are grey, with one channel (input_shape=(8, 8, 1)), "
                "so a 3×3 filter of the first Conv2D has 3·3·1 weights, not 3·3·3.",
                when=lambda got, ref: got["conv1_params"] in _three_channel_filters(),
                example=_with_counts(conv1_params=_three_channel_filters()[0])),
        Mistake("conv2_params: a Conv2D has one bias per filter (the second has 8), not one "
                "per input channel.",
                when=lambda got, ref: got["conv2_params"] == _biases_per_input_channel(),
                example=_with_counts(conv2_params=_biases_per_input_channel())),
        Mistake("conv2_params: a 3×3 filter of the second Conv2D covers all the channels "
                "that the first one outputs (16 of them), not one: 3·3·16 weights and a "
                "bias per filter.",
                when=lambda got, ref: got["conv2_params"] in _one_channel_filters(),
                example=_with_counts(conv2_params=_one_channel_filters()[0])),
        Mistake("flat_size: Flatten's length is the shape the layer before it outputs, "
                "multiplied out. padding=\"same\" keeps 8×8, the pooling halves it, and a 3×3 "
                "convolution without padding trims a pixel on each side.",
                when=lambda got, ref: got["flat_size"] != ref["flat_size"],
                example=_with_counts(flat_size=4 * 4 * 8, dense1_params=(4 * 4 * 8 + 1) * 20)),
        Mistake("dense2_params: the last Dense layer's inputs are the outputs of the Dense "
                "layer just before it, not Flatten's: each layer sees only the one before it.",
                when=lambda got, ref: _dense2_fed_by_flatten(got),
                example=lambda: {**_stack_counts(), "dense2_params":
                                 (_stack_counts()["flat_size"] + 1) * 10}),
    ),
)


# ------------------------------------------------ 6.3: a shared encoder, and Add: a symmetric net
_PAIR_CHECKED = ("inputs", "output shape", "parameters", "symmetric", "uses both images",
                 "probabilities", "more than the sum")


def _pair_net(encoders=1, combine=layers.Add, flatten=True, twice_the_left=False,
              output_activation="sigmoid", encoder_activation="relu"):
    """6.3's model as the prompt asks for it, or with one of the known mistakes."""
    img_a, img_b = eg.Input((8, 8)), eg.Input((8, 8))
    dense = [layers.Dense(16, activation=encoder_activation) for _ in range(encoders)]
    flat = layers.Flatten() if flatten else (lambda image: image)
    code_a = dense[0](flat(img_a))
    code_b = dense[-1](flat(img_a if twice_the_left else img_b))
    merged = combine()([code_a, code_b])
    same = layers.Dense(1, activation=output_activation)(merged)
    return eg.Model([img_a, img_b], same)


def _pair_outputs(net, left, right):
    outputs = net.predict([left, right])
    if not isinstance(outputs, np.ndarray):
        raise WrongForm(f"pair_net should have one output; it gives {describe(outputs)}.")
    return outputs


def _measure_pair(net):
    """What 6.3 checks: the wiring, the parameters, and swapping or changing the images."""
    inputs = getattr(net, "inputs", None)
    if not isinstance(inputs, (list, tuple)) or len(inputs) != 2:
        raise WrongForm("pair_net should take two images: eg.Model([img_a, img_b], ...) with "
                        "two eg.Input((8, 8)), as in section 8.")
    shapes = [tuple(getattr(i, "shape", ())) for i in inputs]
    if shapes != [(None, 8, 8)] * 2:
        raise WrongForm(f"pair_net's inputs should be two 8×8 images, eg.Input((8, 8)); their "
                        f"shapes are {shapes[0]} and {shapes[1]}.")
    images = _digits().x_test
    left, right, other = images[:16], images[16:32], images[32:48]
    both = _pair_outputs(net, left, right)
    halfway = (left + right) / 2        # the same sum a + b as (left, right)
    return {
        "inputs": len(inputs),
        "output shape": tuple(net.output_shape),
        "parameters": net.count_params(),
        "symmetric": bool(np.allclose(both, _pair_outputs(net, right, left), atol=1e-6)),
        "uses both images": not np.allclose(both, _pair_outputs(net, left, other)) and
        not np.allclose(both, _pair_outputs(net, other, right)),
        # (also on images 1000 times brighter: a small untrained net without its sigmoid can
        # stay inside [0, 1] on real images by chance)
        "probabilities": all(bool(o.min() >= 0 and o.max() <= 1) for o in (
            both, _pair_outputs(net, 1000 * left, 1000 * right))),
        # relu(W·a) + relu(W·b) is not a function of a + b alone; an encoder without its
        # relu, or images added before the encoder, are
        "more than the sum": not np.allclose(both, _pair_outputs(net, halfway, halfway)),
    }


def _encoder_activation(net):
    """The name of the activation after the encoder: the Dense layer that reads an image's
    64 pixels, or the Activation layer after it where that Dense has none."""
    from edugraph.layers import activations
    names = [activations.name_of(m.activation) for m in net.modules()
             if isinstance(m, layers.Dense) and m.kernel.shape[0] == 64]
    names += [activations.name_of(m.activation) for m in net.modules()
              if isinstance(m, layers.Activation)]
    return next((name for name in names if name != "linear"), "linear")


def _run_pair(answer):
    net = answer["pair_net"]
    got = _measure_pair(net)
    # what the hints look at: how many Dense layers read an image's 64 pixels, and the merge
    got["encoders"] = sum(isinstance(m, layers.Dense) and m.kernel.shape[0] == 64
                          for m in net.modules())
    got["concatenates"] = any(isinstance(m, layers.Concatenate) for m in net.modules())
    got["relu encoder"] = _encoder_activation(net) == "relu"
    return got


ex6_3 = Exercise(
    "6.3",
    reads={"pair_net": keras_model},
    run=_run_pair,
    reference=lambda: {**_measure_pair(_pair_net()), "relu encoder": True},
    passed="pair_net has two inputs, one relu encoder for both ({parameters:,} parameters), "
           "and gives the same answer when the images are swapped: a + b = b + a.",
    expected="pair_net is an eg.Model with two (8, 8) inputs, one Flatten and Dense(16, "
             "relu) encoder applied to both, layers.Add() to merge them and Dense(1, sigmoid): "
             "its output has shape (None, 1).",
    mistakes=(
        Mistake("pair_net gives more than one number per pair: a Dense layer on an 8×8 image "
                "works on its last axis only. Flatten each image before the encoder.",
                when=lambda got, ref: len(got["output shape"]) > 2,
                example=lambda: {"pair_net": _pair_net(flatten=False)}),
        Mistake("the two images go through two different Dense layers, so they are encoded "
                "differently (and the parameters count twice): create the encoder once and "
                "call that same layer on both images.",
                when=lambda got, ref: got["encoders"] > 1,
                example=lambda: {"pair_net": _pair_net(encoders=2)}),
        Mistake("Concatenate keeps the two codes apart, [a, b] is not [b, a], and the Dense "
                "after it weighs the two halves differently: merge them with layers.Add(), "
                "since a + b = b + a.",
                when=lambda got, ref: got["concatenates"],
                example=lambda: {"pair_net": _pair_net(combine=layers.Concatenate)}),
        Mistake("pair_net's answer does not change when one of the images does: one of them "
                "never reaches the output. Pass each Input through the encoder (img_a and "
                "img_b, not one of them twice).",
                when=lambda got, ref: not got["uses both images"],
                example=lambda: {"pair_net": _pair_net(twice_the_left=True)}),
        Mistake("pair_net gives the same answer for any two images with the same sum a + b: "
                "the encoder has no relu (then W·a + W·b = W·(a + b)), or the images are added "
                "before it. Encode each image with Dense(16, activation=\"relu\"), then add "
                "the two codes.",
                when=lambda got, ref: not got["more than the sum"],
                example=lambda: {"pair_net": _pair_net(encoder_activation=None)}),
        Mistake("pair_net's output is not a probability: give the last Dense(1) "
                "activation=\"sigmoid\", as for any yes/no answer.",
                when=lambda got, ref: not got["probabilities"],
                example=lambda: {"pair_net": _pair_net(output_activation=None)}),
        Mistake("pair_net's encoder has another activation than the relu the prompt asks "
                "for (tanh, sigmoid, elu...): encode each image with Dense(16, "
                "activation=\"relu\").",
                when=lambda got, ref: not got["relu encoder"],
                example=lambda: {"pair_net": _pair_net(encoder_activation="tanh")}),
    ),
)


# --------------------------------------------------------------- 6.4: batch norm by hand
_rng = np.random.default_rng(6)
# (what, x, gamma, beta, eps): the slide's batch with its constant feature; a batch of 5
# with a large ε, so that where ε goes shows; NHWC images, where a feature is a channel
_BATCHES = (
    ("the slide's batch", np.array([[2.0, 1, 3, 2], [4, 1, 0, 4], [3, 1, 3, 0]]),
     np.array([2.0, 1, 0.5, -1]), np.array([0.0, 0.5, -1, 0.25]), 1e-3),
    ("a batch of 5", _rng.normal(2.0, 3.0, size=(5, 3)), np.array([1.5, -0.5, 2]),
     np.array([0.1, 0.2, -0.3]), 0.5),
    ("images", _rng.uniform(0.0, 1.0, size=(4, 3, 3, 2)), np.array([0.5, 2]),
     np.array([1.0, -1]), 1e-3),
)


def _batch_norm_reference():
    """eg.nn.moments over every axis but the last, then eg.nn.batch_normalization."""
    results = {}
    for what, *arrays, eps in _BATCHES:
        x, gamma, beta = (eg.tensor(a, dtype=eg.float64) for a in arrays)
        mean, variance = eg.nn.moments(x, axes=list(range(x.ndim - 1)))
        results[what] = eg.nn.batch_normalization(x, mean, variance, offset=beta, scale=gamma,
                                                  variance_epsilon=eps).numpy()
    return results


def _returned_array(value, call, shape):
    """What the student's function returned, as a float64 array of x's shape. Unlike the
    array reader it keeps nan: 0/0 in a constant feature is one of the known mistakes."""
    if isinstance(value, Tensor):
        if value.graph is not None:
            raise WrongForm(f"{call} returned a symbolic tensor of a graph: compute with numpy "
                            "(or eager tensors), which have values.")
        value = value.numpy()
    try:
        returned = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        returned = None
    if value is None:
        raise WrongForm(f"{call} returned None: is its `return` missing?")
    if returned is None or returned.shape != shape:
        raise WrongForm(f"{call} should return one array of x's shape {shape}, the normalised "
                        f"batch; it returned {describe(value)}.")
    return returned


def _normalised_by(batch_norm):
    """What a batch_norm(x, gamma, beta, eps) function returns on each of the batches."""
    results = {}
    with _refused(eg.nn, "moments"), _refused(eg.nn, "batch_normalization"):
        for what, x, gamma, beta, eps in _BATCHES:
            call = f"batch_norm_by_hand(x, gamma, beta, eps) on {what}"
            results[what] = _returned_array(batch_norm(x.copy(), gamma.copy(), beta.copy(),
                                                       eps), call, x.shape)
    return results


@contextlib.contextmanager
def _refused(module, name):
    """While the student's function runs, ``module.name`` says that the exercise asks for
    the computation by hand (the check itself uses it, before and after)."""
    def by_hand(*args, **kwargs):
        raise WrongForm(f"batch_norm_by_hand calls eg.nn.{name}: the exercise asks for the "
                        "mean and the variance by hand, with numpy (x.mean(axis=...), "
                        "x.var(axis=...)).")
    kept = getattr(module, name)
    setattr(module, name, by_hand)
    try:
        yield
    finally:
        setattr(module, name, kept)


def _batch_norm_with(axes=lambda x: tuple(range(x.ndim - 1)), ddof=0,
                     scale=lambda variance, eps: np.sqrt(variance + eps),
                     affine=lambda x_hat, gamma, beta: gamma * x_hat + beta, centred=True):
    """batch norm written the right way, or with one of the known mistakes."""
    def batch_norm(x, gamma, beta, eps):
        mean = x.mean(axis=axes(x), keepdims=True)
        variance = x.var(axis=axes(x), ddof=ddof, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):    # 0/0 if ε is left out
            return affine((x - mean if centred else x) / scale(variance, eps), gamma, beta)
    return batch_norm


_per_example = _batch_norm_with(axes=lambda x: tuple(range(1, x.ndim)))
_per_pixel = _batch_norm_with(axes=lambda x: (0,))
_unbiased = _batch_norm_with(ddof=1)
_eps_outside = _batch_norm_with(scale=lambda variance, eps: np.sqrt(variance) + eps)
_eps_forgotten = _batch_norm_with(scale=lambda variance, eps: np.sqrt(variance))
_by_the_variance = _batch_norm_with(scale=lambda variance, eps: variance + eps)
_not_centred = _batch_norm_with(centred=False)
_no_scale_or_shift = _batch_norm_with(affine=lambda x_hat, gamma, beta: x_hat)
_shift_then_scale = _batch_norm_with(affine=lambda x_hat, gamma, beta: (x_hat + beta) * gamma)
_gamma_beta_swapped = _batch_norm_with(affine=lambda x_hat, gamma, beta: beta * x_hat + gamma)


def _same_on(what, batch_norm):
    """Whether the answer agrees with batch_norm on one of the batches (where the others
    would give nan or would not tell the mistake apart)."""
    return lambda got, ref: np.allclose(got[what], _normalised_by(batch_norm)[what],
                                        rtol=1e-5, atol=1e-6)


ex6_4 = Exercise(
    "6.4",
    reads={"batch_norm_by_hand": function},
    run=lambda answer: _normalised_by(answer["batch_norm_by_hand"]),
    reference=_batch_norm_reference,
    passed="batch_norm_by_hand matches eg.nn.moments and eg.nn.batch_normalization on the "
           "slide's batch, on a batch with a large ε and on NHWC images (to 1e-5).",
    expected="batch_norm_by_hand(x, gamma, beta, eps) returns an array of x's shape: "
             "gamma · (x - mean) / sqrt(variance + eps) + beta, with each feature's mean and "
             "variance over every axis but the last (checked to 1e-5).",
    rtol=1e-5, atol=1e-6,
    mistakes=(
        Mistake("you normalised each example over its own features: that is layer norm. "
                "Batch norm takes each feature's statistics over the batch (axis 0, a "
                "column of the slide).",
                gives=lambda: _normalised_by(_per_example),
                example={"batch_norm_by_hand": _per_example}),
        Mistake("right for a batch of vectors, but for images a feature is a channel: take "
                "the statistics over the batch, the height and the width (every axis but the "
                "last), as BatchNormalization after a Conv2D does.",
                gives=lambda: _normalised_by(_per_pixel),
                example={"batch_norm_by_hand": _per_pixel}),
        Mistake("the variance divides by n - 1 (ddof=1, PyTorch's x.std(0)); batch norm "
                "uses the batch's own variance, which divides by n (np.var's default, as "
                "eg.nn.moments).",
                gives=lambda: _normalised_by(_unbiased),
                example={"batch_norm_by_hand": _unbiased}),
        Mistake("ε goes inside the square root, sqrt(variance + eps), not after it: it is "
                "added to the variance.",
                gives=lambda: _normalised_by(_eps_outside),
                example={"batch_norm_by_hand": _eps_outside}),
        Mistake("ε is missing: divide by sqrt(variance + eps). Without it a feature that is "
                "the same in every example (the slide's F2) divides 0 by 0.",
                when=_same_on("a batch of 5", _eps_forgotten),
                example={"batch_norm_by_hand": _eps_forgotten}),
        Mistake("you divided by the variance: divide by the standard deviation, "
                "sqrt(variance + eps), so that each feature ends with variance 1.",
                gives=lambda: _normalised_by(_by_the_variance),
                example={"batch_norm_by_hand": _by_the_variance}),
        Mistake("the mean is not subtracted: x̂ = (x - mean) / sqrt(variance + eps), so that "
                "each feature ends with mean 0 (before beta shifts it).",
                gives=lambda: _normalised_by(_not_centred),
                example={"batch_norm_by_hand": _not_centred}),
        Mistake("the result is normalised but not scaled and shifted: multiply by gamma and "
                "add beta, the layer's learned scale and shift.",
                gives=lambda: _normalised_by(_no_scale_or_shift),
                example={"batch_norm_by_hand": _no_scale_or_shift}),
        Mistake("scale first, then shift: gamma · x̂ + beta, not (x̂ + beta) · gamma.",
                gives=lambda: _normalised_by(_shift_then_scale),
                example={"batch_norm_by_hand": _shift_then_scale}),
        Mistake("gamma and beta trade places: gamma scales (it multiplies x̂), beta shifts "
                "(it is added): gamma · x̂ + beta.",
                gives=lambda: _normalised_by(_gamma_beta_swapped),
                example={"batch_norm_by_hand": _gamma_beta_swapped}),
    ),
)



# -------------------------------------------- 6.5: softmax cross-entropy and its gradient by hand
# (what, logits, labels). Positive logits first, so that the log of a logit is a number there
# and that mistake shows; then both signs and more classes; then logits of ±1000, where e^z
# overflows unless each row's largest logit is subtracted first, and where a probability
# underflows to 0 (its log is -inf) unless the log-probabilities come from log-sum-exp; its
# last row lies far below the batch's largest logit, so that subtracting that one instead of
# the row's own underflows the whole row. Every batch has at least as many examples as
# classes, so that labels used as row indices still run.
_CE_BATCHES = (
    ("positive logits", np.array([[2.0, 1.0, 0.5], [0.3, 2.5, 1.2], [1.0, 1.0, 3.0],
                                  [0.2, 0.4, 0.1]]), np.array([0, 2, 2, 1])),
    ("logits of both signs", np.array([[1.5, -0.5, 0.0, 2.0], [-1.0, 0.5, 3.0, -2.0],
                                       [0.3, -0.3, 0.8, 0.1], [2.2, 1.1, -0.4, 0.0],
                                       [-0.7, -1.2, 0.6, 1.9]]), np.array([3, 0, 1, 3, 2])),
    ("logits of ±1000", np.array([[1000.0, 0.0, -1000.0], [-1000.0, 1000.0, 0.0],
                                  [0.0, -1000.0, 1000.0], [-1000.0, -999.0, -1001.0]]),
     np.array([2, 1, 0, 0])),
)
_ALL_BATCHES = tuple(what for what, *_ in _CE_BATCHES)
_POSITIVE_LOGITS, _LARGE_LOGITS = _ALL_BATCHES[0], _ALL_BATCHES[-1]
_SAFE_BATCHES = _ALL_BATCHES[:-1]          # no overflow or underflow in these


def _cross_entropy_reference():
    """The mean cross-entropy with PyTorch's F.cross_entropy, its gradient by backward()."""
    results = {}
    for what, logits, labels in _CE_BATCHES:
        z = eg.tensor(logits, requires_grad=True)
        loss = eg.nn.functional.cross_entropy(z, eg.tensor(labels))
        loss.backward()
        results[what] = {"loss": loss.item(), "grad": z.grad.numpy()}
    return results


def _loss_and_gradient(returned, call, logits_shape):
    """(loss, grad) as a float and a float64 array of the logits' shape. Unlike the number and
    array readers this keeps nan and inf: an overflow is one of the known mistakes."""
    if returned is None:
        raise WrongForm(f"{call} returned None: end the function with `return loss, grad`.")
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        raise WrongForm(f"{call} should return a pair, loss, grad; it returned "
                        f"{describe(returned)}.")
    loss, grad = (v.numpy() if isinstance(v, Tensor) and v.graph is None else v
                  for v in returned)
    try:
        loss, grad = np.asarray(loss, dtype=np.float64), np.asarray(grad, dtype=np.float64)
    except (TypeError, ValueError):
        raise WrongForm(f"{call} should return two arrays of numbers, loss and grad; it "
                        f"returned {describe(loss)} and {describe(grad)}.") from None
    if loss.size == logits_shape[0] and loss.size > 1:
        raise WrongForm(f"{call} returned one loss per example (shape {loss.shape}): the loss "
                        "is one number, the mean over the batch.")
    if loss.size != 1:
        raise WrongForm(f"{call} should return the loss first, one number; it is an array of "
                        f"shape {loss.shape}. Return loss, grad in that order.")
    if grad.shape != logits_shape:
        raise WrongForm(f"{call} should return a gradient of the logits' shape {logits_shape}, "
                        f"one number per logit; it has shape {grad.shape}.")
    return float(loss.reshape(())), grad


def _cross_entropy_of(fn):
    """What fn(logits, labels) returns on each batch."""
    results = {}
    for what, logits, labels in _CE_BATCHES:
        call = f"cross_entropy_by_hand(logits, labels) on {what}"
        try:
            with np.errstate(all="ignore"):     # an overflow is judged below, not printed
                returned = fn(logits.copy(), labels.copy())
        except ValueError as error:
            if "broadcast" not in str(error):
                raise
            batch, classes = logits.shape
            raise WrongForm(
                f"{what_went_wrong(error)}. One number per example, "
                f"shape ({batch},), does not broadcast against the logits, shape ({batch}, "
                f"{classes}): a row's max or sum needs keepdims=True (shape ({batch}, 1)), and "
                f"labels are class ids, not one-hot rows: pick p[np.arange({batch}), labels], "
                f"or make one-hot rows with np.eye({classes})[labels].") from None
        results[what] = dict(zip(("loss", "grad"),
                                 _loss_and_gradient(returned, call, logits.shape)))
    return results


# the right answer in numpy, and the known mistakes, each a function (logits, labels) -> pair
def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _log_softmax(z):
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _picked(rows, labels):
    """Each example's entry at its label."""
    return rows[np.arange(len(labels)), labels]


def _one_hot(labels, num_classes):
    return np.eye(num_classes)[labels]


def _cross_entropy_with(log_probs=_log_softmax, probs=_softmax, sign=1.0, loss_reduce=np.mean,
                        per_example_gradient=True):
    """The loss -log p of each label, reduced over the batch, and its gradient (p - y) / N, or
    one of the known mistakes: other (log-)probabilities, y - p, a sum, a gradient not / N."""
    def cross_entropy(logits, labels):
        n, classes = logits.shape
        loss = loss_reduce(-_picked(log_probs(logits), labels))
        grad = sign * (probs(logits) - _one_hot(labels, classes))
        return loss, grad / n if per_example_gradient and loss_reduce is np.mean else grad
    return cross_entropy


_softmax_twice = _cross_entropy_with(log_probs=lambda z: _log_softmax(_softmax(z)),
                                     probs=lambda z: _softmax(_softmax(z)))
_y_minus_p = _cross_entropy_with(sign=-1.0)
_gradient_of_the_sum = _cross_entropy_with(per_example_gradient=False)
_summed = _cross_entropy_with(loss_reduce=np.sum)
_log_of_logits = _cross_entropy_with(log_probs=np.log)
_logits_as_log_probabilities = _cross_entropy_with(log_probs=lambda z: z)
_no_max_subtracted = _cross_entropy_with(
    log_probs=lambda z: np.log(np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)),
    probs=lambda z: np.exp(z) / np.exp(z).sum(axis=1, keepdims=True))
_log_of_softmax = _cross_entropy_with(log_probs=lambda z: np.log(_softmax(z)))
_log_capped = _cross_entropy_with(log_probs=lambda z: np.log(_softmax(z) + 1e-12))


def _softmax_by_the_batch_max(z):
    """The softmax with the batch's largest logit subtracted from every row."""
    e = np.exp(z - z.max())
    return e / e.sum(axis=1, keepdims=True)


_batch_max_subtracted = _cross_entropy_with(
    log_probs=lambda z: np.log(_softmax_by_the_batch_max(z)), probs=_softmax_by_the_batch_max)


def _label_not_subtracted(logits, labels):
    """The right loss, with the gradient p / N: the one-hot label left out."""
    loss, _ = _cross_entropy_with()(logits, labels)
    return loss, _softmax(logits) / len(labels)


def _rows_by_label(logits, labels):
    """labels used as row indices, p[labels], where each example's own row is meant."""
    n, _ = logits.shape
    p = _softmax(logits)
    grad = p.copy()
    grad[labels] -= 1
    return np.mean(-np.log(p[labels])), grad / n


def _same_loss_on(batches, wrong):
    """Whether the answer's loss is wrong's on these batches (where it is a number)."""
    def matches(got, ref):
        made = _cross_entropy_of(wrong)
        return all(np.isclose(got[b]["loss"], made[b]["loss"], rtol=1e-6) for b in batches)
    return matches


def _right_on_safe_batches(got, ref):
    return all(close(got[b], ref[b], 1e-6, 1e-9) for b in _SAFE_BATCHES)


def _large_logits(got):
    return got[_LARGE_LOGITS]


def _only_the_low_row_fails(got, ref):
    """Right but for the last row of the large logits, far below the batch's largest one."""
    large, right = _large_logits(got)["grad"], _large_logits(ref)["grad"]
    return (_right_on_safe_batches(got, ref) and np.allclose(large[:-1], right[:-1])
            and not np.isfinite(large[-1]).all())


def _loss_capped(got, ref):
    """Right on the ordinary logits; for ±1000 a finite loss far below the true one."""
    loss = _large_logits(got)["loss"]
    return (_right_on_safe_batches(got, ref) and np.isfinite(loss)
            and loss < 0.5 * _large_logits(ref)["loss"])


ex6_5 = Exercise(
    "6.5",
    reads={"cross_entropy_by_hand": function},
    run=lambda answer: _cross_entropy_of(answer["cross_entropy_by_hand"]),
    reference=_cross_entropy_reference,
    passed="cross_entropy_by_hand matches F.cross_entropy and its backward pass on 3 batches, "
           "logits of ±1000 among them (to 1e-6): the loss is the mean of -log p of each "
           "label, and its gradient (p - y) / N.",
    expected="cross_entropy_by_hand(logits, labels) returns loss, grad: the mean over the "
             "batch of -log softmax(logits)[label], one number, and its gradient with respect "
             "to the logits, an array of their shape (checked to 1e-6).",
    mistakes=(
        Mistake("the softmax is applied twice: your probabilities went through a second "
                "softmax, which squeezes them towards 1/classes. The cross-entropy takes the "
                "softmax of the logits once.",
                gives=lambda: _cross_entropy_of(_softmax_twice),
                example={"cross_entropy_by_hand": _softmax_twice}),
        Mistake("the loss took the log of the logits, as if they were probabilities; the "
                "logits are any real numbers (the log of a negative one is nan). Take the "
                "softmax first: log p = z - log Σ e^z.",
                when=_same_loss_on((_POSITIVE_LOGITS,), _log_of_logits),
                example={"cross_entropy_by_hand": _log_of_logits}),
        Mistake("the loss is -z of the label, as if the logits were log-probabilities: "
                "subtract each row's log Σ e^z from its logits first (log p = z - log Σ e^z).",
                when=_same_loss_on(_ALL_BATCHES, _logits_as_log_probabilities),
                example={"cross_entropy_by_hand": _logits_as_log_probabilities}),
        Mistake("the gradient has the wrong sign: dL/dz = p - y (the probabilities minus "
                "the one-hot label), so raising the right class's logit lowers the loss.",
                gives=lambda: _cross_entropy_of(_y_minus_p),
                example={"cross_entropy_by_hand": _y_minus_p}),
        Mistake("the loss is the mean over the batch, but the gradient is that of the sum: "
                "each example's share of a mean is 1/N, so divide p - y by the batch size.",
                gives=lambda: _cross_entropy_of(_gradient_of_the_sum),
                example={"cross_entropy_by_hand": _gradient_of_the_sum}),
        Mistake("the loss and its gradient are sums over the batch: Keras's losses and "
                "PyTorch's F.cross_entropy take the mean, so divide both by the batch size.",
                gives=lambda: _cross_entropy_of(_summed),
                example={"cross_entropy_by_hand": _summed}),
        Mistake("labels were used as row indices (p[labels], grad[labels] -= 1), which picks "
                "whole rows: example i's probability of its class is p[i, labels[i]], so "
                "index with p[np.arange(N), labels].",
                gives=lambda: _cross_entropy_of(_rows_by_label),
                example={"cross_entropy_by_hand": _rows_by_label}),
        Mistake("the gradient is p / N: subtract the one-hot label from the probabilities, "
                "dL/dz = (p - y) / N.",
                gives=lambda: _cross_entropy_of(_label_not_subtracted),
                example={"cross_entropy_by_hand": _label_not_subtracted}),
        Mistake("subtract each row's own largest logit (max(axis=1, keepdims=True)), not the "
                "batch's: a row far below the batch's largest logit (the check's last row, "
                "about -1000) gets e^z = 0 in every entry, and dividing by (or taking the log "
                "of) their sum, 0, gives nan or inf.",
                when=_only_the_low_row_fails,
                example={"cross_entropy_by_hand": _batch_max_subtracted}),
        Mistake("right, until the logits are large: e^1000 overflows to inf, and inf / inf "
                "is nan. Subtract each row's largest logit first (softmax does not change "
                "when the same number is added to a row): then the largest e^z is e^0 = 1.",
                when=lambda got, ref: _right_on_safe_batches(got, ref) and not np.isfinite(
                    _large_logits(got)["grad"]).all(),
                example={"cross_entropy_by_hand": _no_max_subtracted}),
        Mistake("the softmax is safe and the gradient right, but the loss is inf for logits "
                "of ±1000: a probability of e^-2000 is 0 in floating point, and log 0 = -inf. "
                "Compute the log-probabilities directly: log p = z - m - log Σ e^(z - m), "
                "with m the row's largest logit.",
                when=lambda got, ref: _right_on_safe_batches(got, ref) and np.isinf(
                    _large_logits(got)["loss"]),
                example={"cross_entropy_by_hand": _log_of_softmax}),
        Mistake("right, except for logits of ±1000: adding a small number to p (or clipping "
                "it, as Keras does) keeps log 0 away, but caps -log p at about -log of that "
                "number, where the true -log p reaches 2000. Compute the log-probabilities "
                "directly: log p = z - m - log Σ e^(z - m), with m the row's largest logit.",
                when=_loss_capped,
                example={"cross_entropy_by_hand": _log_capped}),
    ),
)

EXERCISES = [ex6_1, ex6_2, ex6_3, ex6_4, ex6_5]
