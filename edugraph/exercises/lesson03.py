"""Lesson 3's exercises: one graph for any batch size (and the input's gradient); the TF1
program whose loss does not go down; what ``minimize`` adds to a graph; digits past 90 %; what
two updates of one variable give, in TF1, in edugraph and in order.

Answers here are graph tensors and functions that build graphs. The checks run them in Sessions
of their own, and keep the kernel's graph state as it was: a student's function that leaves a
graph open (or turns eager execution off) must not change where the notebook's next cells build.
"""
import contextlib
import functools
import itertools

import numpy as np

import edugraph as eg
from edugraph.graph.core import SymbolicTensor
from edugraph.graph.session import building_state_kept
from edugraph.graph.shapes import TensorShape
from edugraph.graph.variables import GraphVariable

from .answers import WrongForm, array, describe, function, number, whole_number
from .checking import Exercise, Mistake

PIXELS, CLASSES = 64, 10        # a digit image flattened, and the ten digits


def _section3_loss(x, y, w):
    """Section 3's loss: squared errors of ReLU(x·w) summed over the classes, mean over rows."""
    y_pred = eg.maximum(eg.matmul(x, w), 0.0)
    return eg.reduce_mean(eg.reduce_sum((y_pred - y) ** 2, axis=1))


def _one_hot(rng, rows, classes):
    return np.eye(classes, dtype=np.float32)[rng.integers(0, classes, rows)]


# ------------------------------------------------- 3.1: one graph for any batch size, dloss/dx
BATCH_SIZES = (1, 7, 30)        # all fed to one graph: no fixed batch size takes them all
ANY_BATCH_NAMES = ("x_any", "y_any", "w_any", "loss_any", "grad_x_any")


def _batches():
    """(x, y, w) for each batch size: pixel-like inputs, one-hot labels, weights with both
    signs (so that ReLU passes some scores and stops others)."""
    rng = np.random.default_rng(3)
    return [(rng.uniform(0, 1, (n, PIXELS)).astype(np.float32), _one_hot(rng, n, CLASSES),
             (0.3 * rng.standard_normal((PIXELS, CLASSES))).astype(np.float32))
            for n in BATCH_SIZES]


_BATCHES = _batches()


def _graph_tensor(value, name):
    """A reader: a symbolic tensor of a graph, which the check can run."""
    if isinstance(value, (list, tuple)) and any(isinstance(v, SymbolicTensor) for v in value):
        raise WrongForm(f"{name} is a {type(value).__name__} of tensors: eg.gradients "
                        "returns a list, one gradient per tensor you ask for; take its [0].")
    if isinstance(value, eg.Tensor) and not isinstance(value, SymbolicTensor):
        raise WrongForm(f"{name} is an eager tensor, computed at once: build it in the graph, "
                        "inside `with eg.Graph().as_default():`.")
    if isinstance(value, (np.ndarray, np.generic, int, float)) and not isinstance(value, bool):
        raise WrongForm(f"{name} should be the graph tensor itself, not a value: the check "
                        "runs your graph with batches of its own.")
    if not isinstance(value, SymbolicTensor):
        raise WrongForm(f"{name} should be a tensor of your graph, built inside `with "
                        f"eg.Graph().as_default():`; it is {describe(value)}.")
    return value


def _placeholder(*sizes):
    """A reader: a placeholder whose shape fits ``sizes`` (None: the batch size, which the
    run checks, so that a fixed one earns its hint)."""
    wanted = TensorShape(sizes)
    as_written = "(" + ", ".join(str(size) for size in sizes) + ")"     # (None, 64)

    def read(value, name):
        tensor = _graph_tensor(value, name)
        if isinstance(tensor, GraphVariable):
            raise WrongForm(f"{name} is a Variable, which keeps its own value; here the check "
                            "feeds it, so make it a placeholder.")
        if tensor.op.type != "Placeholder":
            raise WrongForm(f"{name} should be a placeholder, eg.placeholder(eg.float32, "
                            f"shape={as_written}); it is {tensor.name}, made by a "
                            f"{tensor.op.type} node.")
        shape = tensor.shape
        if shape.rank_known and not (len(shape) == len(wanted) and all(
                w is None or s is None or s == w for s, w in zip(shape, wanted))):
            raise WrongForm(f"{name} should have the shape {wanted}; it has {shape}.")
        if tensor.dtype != eg.float32:          # (the images and weights are float32)
            raise WrongForm(f"{name} is a {tensor.dtype.name} placeholder; make it float32, "
                            f"eg.placeholder(eg.float32, shape={as_written}), as the "
                            "exercise asks (the data fed to it is float32).")
        return tensor
    read.__doc__ = f"A float32 placeholder of shape {wanted}."
    return read


def _run_any_batch(answer):
    """The loss and the input gradient that the student's graph computes for each batch."""
    x, y, w, loss, grad_x = (answer[name] for name in ANY_BATCH_NAMES)
    if len({id(t.graph) for t in (x, y, w, loss, grad_x)}) > 1:
        raise WrongForm("x_any, y_any, w_any, loss_any and grad_x_any are not all in one "
                        "graph: build them in one `with eg.Graph().as_default():` block (and "
                        "run that whole cell again).")
    if any(t.shape.rank_known and t.shape[0] is not None for t in (x, y)):
        return {"fixed batch size": True}       # feeding would fail: nothing more to run
    losses, gradients = [], []
    with eg.Session(graph=loss.graph) as sess:
        for x_value, y_value, w_value in _BATCHES:
            try:
                loss_value, grad_value = sess.run(
                    [loss, grad_x], feed_dict={x: x_value, y: y_value, w: w_value})
            except (eg.errors.OpError, ValueError) as error:
                raise WrongForm("your graph did not run with x_any, y_any and w_any fed: "
                                + " ".join(str(error).split())) from None
            losses.append(loss_value)
            gradients.append(grad_value)
    return {"losses": tuple(losses), "input gradients": tuple(gradients)}


def _built(loss_fn=_section3_loss, batch_size=None, gradient_for="x"):
    """The five names as a student builds them, with this loss, this batch size and the
    gradient asked for this input (the reference, and the mistakes' examples)."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(batch_size, PIXELS), name="x")
        y = eg.placeholder(eg.float32, shape=(batch_size, CLASSES), name="y")
        w = eg.placeholder(eg.float32, shape=(PIXELS, CLASSES), name="w")
        loss = loss_fn(x, y, w)
        grad = eg.gradients(loss, [x if gradient_for == "x" else w])[0]
    return dict(zip(ANY_BATCH_NAMES, (x, y, w, loss, grad)))


def _rows_summed(x, y, w):
    return eg.reduce_sum((eg.maximum(eg.matmul(x, w), 0.0) - y) ** 2)


def _all_averaged(x, y, w):
    return eg.reduce_mean((eg.maximum(eg.matmul(x, w), 0.0) - y) ** 2)


def _rows_summed_classes_averaged(x, y, w):
    return eg.reduce_mean(eg.reduce_sum((eg.maximum(eg.matmul(x, w), 0.0) - y) ** 2, axis=0))


def _without_relu(x, y, w):
    return eg.reduce_mean(eg.reduce_sum((eg.matmul(x, w) - y) ** 2, axis=1))


def _one_per_row(x, y, w):
    return eg.reduce_sum((eg.maximum(eg.matmul(x, w), 0.0) - y) ** 2, axis=1)


ex3_1 = Exercise(
    "3.1",
    reads={"x_any": _placeholder(None, PIXELS), "y_any": _placeholder(None, CLASSES),
           "w_any": _placeholder(PIXELS, CLASSES), "loss_any": _graph_tensor,
           "grad_x_any": _graph_tensor},
    run=_run_any_batch,
    reference=lambda: _run_any_batch(_built()),
    passed="one graph ran batches of " + ", ".join(map(str, BATCH_SIZES[:-1]))
           + f" and {BATCH_SIZES[-1]} rows: loss_any and grad_x_any (one row of {PIXELS} per "
           "image, like x_any) match section 3's loss and its gradient (to 1e-4).",
    expected=f"x_any (?, {PIXELS}), y_any (?, {CLASSES}) and w_any ({PIXELS}, {CLASSES}) are "
             "float32 placeholders of one graph; loss_any is one number per batch, section "
             "3's loss; grad_x_any = eg.gradients(loss_any, [x_any])[0] (checked to 1e-4).",
    rtol=1e-4, atol=1e-6,
    mistakes=(
        Mistake("a placeholder whose first size is a number takes batches of exactly that "
                "many rows: write None for the batch size, shape=(None, ...), in x_any and "
                "y_any.",
                when=lambda got, reference: got["fixed batch size"],
                example=lambda: _built(batch_size=500)),
        Mistake("loss_any gives one value per row: average the rows into one number "
                "(eg.reduce_mean), as section 3's loss does.",
                when=lambda got, reference: any(np.ndim(v) > 0 for v in got["losses"]),
                example=lambda: _built(_one_per_row)),
        Mistake("your loss adds the rows up, so it grows with the batch size: average the "
                "per-row errors (eg.reduce_mean), so that batches of any size compare.",
                gives=lambda: _run_any_batch(_built(_rows_summed)),
                example=lambda: _built(_rows_summed)),
        Mistake("your loss also averages over the classes (the mean of all n × 10 numbers): "
                "sum each row's squared errors over the classes (axis=1), then average the "
                "rows.",
                gives=lambda: _run_any_batch(_built(_all_averaged)),
                example=lambda: _built(_all_averaged)),
        Mistake("your loss sums over the rows (axis=0) and averages over the classes: "
                "it is the other way round. Sum each row's squared errors over the classes "
                "(axis=1), then average the rows.",
                gives=lambda: _run_any_batch(_built(_rows_summed_classes_averaged)),
                example=lambda: _built(_rows_summed_classes_averaged)),
        Mistake("section 3's prediction is ReLU(x·w), eg.maximum(eg.matmul(x, w), 0.0): "
                "your loss leaves the ReLU out.",
                gives=lambda: _run_any_batch(_built(_without_relu)),
                example=lambda: _built(_without_relu)),
        Mistake("grad_x_any has the weights' shape: it is the gradient for w_any. Ask "
                "eg.gradients for the input, x_any: its gradient has one row per image.",
                when=lambda got, reference: all(
                    np.shape(g) == (PIXELS, CLASSES) for g in got["input gradients"]),
                example=lambda: _built(gradient_for="w")),
    ),
)


# --------------------------------------------------------- 3.2: make the loss go down
def _problem(seed, rows, features, classes, lr, num_steps):
    """A small seeded training problem: train_fixed's arguments."""
    rng = np.random.default_rng(seed)
    return {"x_data": rng.uniform(0, 1, (rows, features)).astype(np.float32),
            "y_data": _one_hot(rng, rows, classes),
            "w_init": (0.5 * rng.standard_normal((features, classes))).astype(np.float32),
            "lr": lr, "num_steps": num_steps}


# two problems of other shapes than the digits', so that sizes must come from the data
PROBLEMS = (_problem(0, 12, 5, 3, 0.1, 6), _problem(5, 9, 4, 2, 0.2, 5))


def _training_graph(x_data, y_data, w_init, lr):
    """Section 3's model, loss and update, in the current graph."""
    x = eg.placeholder(eg.float32, shape=(None, x_data.shape[1]))
    y = eg.placeholder(eg.float32, shape=(None, y_data.shape[1]))
    w = eg.Variable(w_init, name="w")
    loss = _section3_loss(x, y, w)
    update = eg.group(w.assign(w - lr * eg.gradients(loss, [w])[0]))
    return x, y, w, loss, update


def _descent(problem, lr, num_steps):
    """The loss and w before each of num_steps steps of gradient descent, and after the last:
    num_steps + 1 of each, run by edugraph."""
    with eg.Graph().as_default():
        x, y, w, loss, update = _training_graph(problem["x_data"], problem["y_data"],
                                                problem["w_init"], lr)
        feed = {x: problem["x_data"], y: problem["y_data"]}
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            losses, weights = [], []
            for step in range(num_steps + 1):
                loss_value, w_value = sess.run([loss, w], feed_dict=feed)
                losses.append(float(loss_value))
                weights.append(w_value)
                sess.run(update, feed_dict=feed)
    return losses, weights


def _trained(pick):
    """An answer for each problem from its descent: ``pick(losses, weights, steps)`` gives
    (losses, w_final) from the path of 2·steps steps (enough for the mistakes that go faster)."""
    per_problem = [pick(*_descent(p, p["lr"], 2 * p["num_steps"]), p["num_steps"])
                   for p in PROBLEMS]
    return {"losses": tuple(np.array(losses) for losses, _ in per_problem),
            "w_final": tuple(w for _, w in per_problem)}


def _ascent():
    """What stepping with the gradient (w + lr·grad) gives."""
    per_problem = [_descent(p, -p["lr"], p["num_steps"]) for p in PROBLEMS]
    return {"losses": tuple(np.array(losses[:-1]) for losses, _ in per_problem),
            "w_final": tuple(weights[-1] for _, weights in per_problem)}


def _losses_and_w(result, problem):
    """train_fixed's result for one problem as (losses, w_final) arrays, or what to change."""
    steps, w_shape = problem["num_steps"], problem["w_init"].shape
    if not (isinstance(result, (tuple, list)) and len(result) == 2):
        raise WrongForm("train_fixed should return two things, `return losses, w_final`; it "
                        f"returned {describe(result)}.")
    losses, w_final = result
    if isinstance(losses, (list, tuple)) and any(isinstance(v, (list, tuple)) for v in losses):
        raise WrongForm("losses holds the whole result of each sess.run([loss, update]), "
                        "one value per fetch: keep only the loss.")
    losses, w_final = array(losses, "losses"), array(w_final, "w_final")
    if losses.shape != (steps,):
        raise WrongForm(f"losses should be {steps} numbers, one per step (num_steps = "
                        f"{steps}); it has the shape {losses.shape}.")
    if w_final.shape != w_shape:
        raise WrongForm(f"w_final should have w_init's shape {w_shape}; it has "
                        f"{w_final.shape}.")
    return losses, w_final


def _run_training(answer):
    """train_fixed on each problem (on copies: a function may change its arguments)."""
    per_problem = []
    for problem in PROBLEMS:
        with building_state_kept():
            result = answer["train_fixed"](
                problem["x_data"].copy(), problem["y_data"].copy(), problem["w_init"].copy(),
                problem["lr"], problem["num_steps"])
        per_problem.append(_losses_and_w(result, problem))
    return {"losses": tuple(losses for losses, _ in per_problem),
            "w_final": tuple(w for _, w in per_problem)}


def _program_with(bug):
    """train_fixed as a student with this bug writes it (the mistakes' examples)."""
    def train_fixed(x_data, y_data, w_init, lr, num_steps):
        with eg.Graph().as_default():
            x, y, w, loss, update = _training_graph(x_data, y_data, w_init,
                                                    -lr if bug == "ascent" else lr)
            feed = {x: x_data, y: y_data}
            with eg.Session() as sess:
                sess.run(eg.global_variables_initializer())
                losses = []
                for step in range(num_steps):
                    if bug == "initializer each step":
                        sess.run(eg.global_variables_initializer())
                    if bug == "update not fetched":
                        loss_value = sess.run(loss, feed_dict=feed)
                    elif bug == "loss after the step":
                        sess.run(update, feed_dict=feed)
                        loss_value = sess.run(loss, feed_dict=feed)
                    else:
                        loss_value, _ = sess.run([loss, update], feed_dict=feed)
                    if bug == "two steps":
                        sess.run(update, feed_dict=feed)
                    losses.append(float(loss_value))
                return losses, sess.run(w)
    return {"train_fixed": train_fixed}


def _passed_3_2(got):
    paths = " and ".join(f"{losses[0]:.3f} → {losses[-1]:.3f}" for losses in got["losses"])
    return (f"the loss goes down on both problems ({paths}) and w_final matches gradient "
            "descent by edugraph (to 1e-4): the update runs because it is fetched, and w "
            "starts from w_init once.")


ex3_2 = Exercise(
    "3.2",
    reads={"train_fixed": function},
    run=_run_training,
    reference=lambda: _trained(lambda losses, weights, steps: (np.array(losses[:steps]),
                                                               weights[steps])),
    passed=_passed_3_2,
    expected="train_fixed(x_data, y_data, w_init, lr, num_steps) returns (losses, w_final): "
             "num_steps floats, the loss before each step of w ← w − lr·dloss/dw, and w "
             "after the last step, an array of w_init's shape (checked to 1e-4).",
    rtol=1e-4, atol=1e-6,
    mistakes=(
        Mistake("the loss stays flat and w never changes: a session runs only what the "
                "fetches need, and nothing you fetch needs the assign. Fetch the update "
                "together with the loss: sess.run([loss, update], ...).",
                gives=lambda: _trained(lambda losses, weights, steps: (
                    np.full(steps, losses[0]), weights[0])),
                example=_program_with("update not fetched")),
        Mistake("the loss stays flat although the update runs: w moves one step, then goes "
                "back. Running the initializer writes w_init into w again: run it once, "
                "before the loop.",
                gives=lambda: _trained(lambda losses, weights, steps: (
                    np.full(steps, losses[0]), weights[1])),
                example=_program_with("initializer each step")),
        Mistake("your loss goes up: a gradient step goes against the gradient, "
                "w − lr · dloss/dw.",
                gives=_ascent, example=_program_with("ascent")),
        Mistake("your losses are the ones after each step: fetch the loss in the same run "
                "as the update, sess.run([loss, update]), which computes the loss before it "
                "writes w.",
                gives=lambda: _trained(lambda losses, weights, steps: (
                    np.array(losses[1:steps + 1]), weights[steps])),
                example=_program_with("loss after the step")),
        Mistake("w moves two steps per iteration: the update runs twice in each. Fetch it "
                "once per step, together with the loss.",
                gives=lambda: _trained(lambda losses, weights, steps: (
                    np.array(losses[:2 * steps:2]), weights[2 * steps])),
                example=_program_with("two steps")),
    ),
)


# --------------------------------------------------------------- 3.3: what minimize adds
def _minimize_counts(hidden_units=(32,)):
    """The trainable variables of a dense network 64 → hidden → 10 and the ops that
    GradientDescentOptimizer.minimize adds under its scope, GradientDescent/."""
    with eg.Graph().as_default() as graph:
        x = eg.placeholder(eg.float32, shape=(None, PIXELS))
        y = eg.placeholder(eg.float32, shape=(None, CLASSES))
        h = x
        for units in hidden_units:
            h = eg.layers.dense(h, units, activation=eg.nn.relu)
        loss = eg.losses.mean_squared_error(eg.layers.dense(h, CLASSES), y)
        eg.train.GradientDescentOptimizer(1e-2).minimize(loss)
        variables = eg.trainable_variables()
    update_ops = [op for op in graph.get_operations() if op.name.startswith("GradientDescent/")]
    return {"n_variables": len(variables), "n_update_ops": len(update_ops),
            "layers": sum(v.name.endswith("kernel:0") for v in variables)}


def _counted(**changes):
    right = _minimize_counts()
    return {"n_variables": right["n_variables"], "n_update_ops": right["n_update_ops"],
            **changes}


def _assigns_only(got, reference):
    return got["n_update_ops"] in (reference["n_variables"], reference["n_variables"] + 1)


ex3_3 = Exercise(
    "3.3",
    reads={"n_variables": whole_number, "n_update_ops": whole_number},
    reference=lambda: {k: v for k, v in _minimize_counts().items() if k != "layers"},
    passed="{n_variables} variables, {n_update_ops} update ops: each variable's step is "
           "built from ops (learning rate, Mul, Sub, Assign), and one more groups them all. "
           "TF fuses each variable's step into one op, update_<var>/ApplyGradientDescent: "
           "fewer, larger nodes.",
    expected="n_variables and n_update_ops are whole numbers: the trainable variables of "
             "the two-layer network and the ops that minimize puts under GradientDescent/.",
    mistakes=(
        Mistake("those are section 5's counts, for one dense layer; this network has two.",
                gives=lambda: {"n_update_ops": _minimize_counts(())["n_update_ops"]},
                example=lambda: {k: v for k, v in _minimize_counts(()).items()
                                 if k != "layers"}),
        Mistake("each dense layer makes two variables: its kernel (the weights) and its bias.",
                gives=lambda: {"n_variables": _minimize_counts()["layers"]},
                example=lambda: _counted(n_variables=_minimize_counts()["layers"])),
        Mistake("minimize also adds one op that groups all the assigns "
                "(GradientDescent/update): the op it returns, the one you fetch.",
                gives=lambda: {"n_update_ops": _minimize_counts()["n_update_ops"] - 1},
                example=lambda: _counted(n_update_ops=_minimize_counts()["n_update_ops"] - 1)),
        Mistake("an update is more than its Assign: the new value w − lr·grad is computed by "
                "ops of the graph too, before Assign writes it (section 5 lists them).",
                when=_assigns_only,
                example=lambda: _counted(n_update_ops=_minimize_counts()["n_variables"])),
        Mistake("look at section 5's list again: each variable's update starts with a Const, "
                "its own copy of the learning rate.",
                gives=lambda: {"n_update_ops": 3 * _minimize_counts()["n_variables"] + 1},
                example=lambda: _counted(n_update_ops=3 * _minimize_counts()["n_variables"]
                                         + 1)),
    ),
)


# --------------------------------------------------------------- 3.4: digits past 90 %
REQUIRED_ACCURACY = 0.9
CHANCE = 1 / CLASSES
TRAIN_IMAGES = 500              # the lesson trains on the first 500 images of the split


@functools.lru_cache(maxsize=1)
def _digits():
    """The lesson's 500 training images (flat, one-hot labels) and the held-out test split,
    in an order of its own (so that an answer that ignores x_new does not match its labels),
    with the stored order of the labels."""
    (x_images, labels), (test_images, test_labels) = eg.datasets.load_digits()
    x_train = x_images[:TRAIN_IMAGES].reshape(TRAIN_IMAGES, -1)
    y_train = np.eye(CLASSES, dtype=np.float32)[labels[:TRAIN_IMAGES]]
    order = np.random.default_rng(34).permutation(len(test_images))
    return (x_train, y_train, test_images.reshape(len(test_images), -1)[order],
            test_labels[order], test_labels)


@contextlib.contextmanager
def _updates_watched():
    """Count the Session.run calls that change a variable's value (training steps in a
    graph), while the student's function runs."""
    from edugraph.graph.session import Session
    counted, run = [0], Session.run

    def watched(session, *args, **kwargs):
        before = {k: np.array(v, copy=True) for k, v in session._variables.items()}
        values = run(session, *args, **kwargs)
        counted[0] += any(k in before and not np.array_equal(before[k], np.asarray(v))
                          for k, v in session._variables.items())
        return values
    Session.run = watched
    try:
        yield counted
    finally:
        Session.run = run


def _run_classifier(answer):
    """classify_digits trained on the lesson's images, judged on the test images."""
    x_train, y_train, x_test, test_labels, stored_labels = _digits()
    with building_state_kept(), _updates_watched() as updates:
        try:
            predicted = answer["classify_digits"](x_train.copy(), y_train.copy(),
                                                  x_test.copy())
        except ValueError as e:
            if "No gradients provided" not in str(e):
                raise
            raise WrongForm("minimize found no gradient: the loss does not depend on the "
                            "model's variables. Labels first, then logits: "
                            "eg.losses.softmax_cross_entropy(y, logits) (TF1 stops the "
                            "gradient of its first argument, the labels).") from None
    predicted = array(predicted, "classify_digits(x_data, y_data, x_new)")
    if predicted.shape != test_labels.shape:
        return {"shape": predicted.shape}
    if not np.isin(predicted, np.arange(CLASSES)).all():
        raise WrongForm(f"classify_digits should return digits, whole numbers 0 to "
                        f"{CLASSES - 1}: for each image the index of its largest score "
                        "(argmax), not the score itself.")
    accuracy = float(np.mean(predicted == test_labels))
    return {"shape": predicted.shape, "right": int(np.sum(predicted == test_labels)),
            "accuracy": accuracy, "past the mark": accuracy >= REQUIRED_ACCURACY,
            "trained in a graph": updates[0] > 0,
            "stored labels": float(np.mean(predicted == stored_labels)) > 0.5}


_PREDICTIONS = {"digits": lambda scores: scores.argmax(axis=1),
                "scores": lambda scores: scores,
                "a column": lambda scores: scores.argmax(axis=1).reshape(-1, 1),
                "argmax over the images": lambda scores: scores.argmax(axis=0)}


def _classifier(num_steps=200, lr=1.0, fetch_update=True, returns="digits", images="new"):
    """classify_digits as a student writes it, with these choices (the solution's, or the
    mistakes' examples)."""
    def classify_digits(x_data, y_data, x_new):
        eg.random.set_seed(0)
        with eg.Graph().as_default():
            x = eg.placeholder(eg.float32, shape=(None, x_data.shape[1]))
            y = eg.placeholder(eg.float32, shape=(None, y_data.shape[1]))
            logits = eg.layers.dense(x, y_data.shape[1])
            loss = eg.losses.softmax_cross_entropy(y, logits)
            update = eg.train.GradientDescentOptimizer(lr).minimize(loss)
            with eg.Session() as sess:
                sess.run(eg.global_variables_initializer())
                for step in range(num_steps):
                    sess.run([loss, update] if fetch_update else loss,
                             feed_dict={x: x_data, y: y_data})
                scores = sess.run(logits, feed_dict={x: x_new if images == "new" else x_data})
        return _PREDICTIONS[returns](scores)
    return {"classify_digits": classify_digits}


def _test_shape():
    return _digits()[3].shape


def _nearest_neighbour(x_data, y_data, x_new):
    """A classifier with no graph and nothing trained: each image's closest training image."""
    distances = ((x_new[:, None, :] - x_data[None, :, :]) ** 2).sum(axis=2)
    return y_data.argmax(axis=1)[distances.argmin(axis=1)]


def _stored_labels(x_data, y_data, x_new):
    return eg.datasets.load_digits()[1][1]


def _accuracy_between(low, high):
    return lambda got, reference: low <= got["accuracy"] < high


ex3_4 = Exercise(
    "3.4",
    reads={"classify_digits": function},
    run=_run_classifier,
    reference=lambda: {"shape": _test_shape(), "past the mark": True,
                       "trained in a graph": True, "stored labels": False},
    passed=lambda got: (f"{got['right']} of {got['shape'][0]} held-out digits right "
                        f"({got['accuracy']:.1%}; {REQUIRED_ACCURACY:.0%} needed), from a model "
                        "trained in a graph: Session runs updated its variables."),
    expected=f"classify_digits(x_data, y_data, x_new) returns one digit per image of x_new, "
             f"an integer array of shape (len(x_new),), and gets at least "
             f"{REQUIRED_ACCURACY:.0%} of the test images right.",
    mistakes=(
        Mistake("classify_digits returned the test set's own labels, as load_digits stores "
                "them, not digits predicted from the images of x_new (the check gives them "
                "in another order): predict each image of x_new with the model you trained.",
                when=lambda got, reference: got["stored labels"],
                example={"classify_digits": _stored_labels}),
        Mistake("return one digit per image, the index of its largest score "
                "(scores.argmax(axis=1)), not the scores.",
                when=lambda got, reference: got["shape"] == (reference["shape"][0], CLASSES),
                example=_classifier(returns="scores")),
        Mistake("you returned a digit for each training image: predict the images of x_new.",
                when=lambda got, reference: got["shape"] == (TRAIN_IMAGES,),
                example=_classifier(images="train")),
        Mistake("your model does about as well as guessing: it did not learn. Check that "
                "the op minimize returns is fetched at every step; if it is, the steps are "
                "too small or too few (section 5's settings are).",
                when=_accuracy_between(0.0, 2 * CHANCE),
                example=_classifier(fetch_update=False)),
        Mistake(f"your model learns, but stays under {REQUIRED_ACCURACY:.0%}: train longer, "
                "with a larger learning rate, or with the loss made for classes, "
                "eg.losses.softmax_cross_entropy(y, logits): the labels first, then the "
                "logits.",
                when=_accuracy_between(2 * CHANCE, REQUIRED_ACCURACY),
                example=_classifier(num_steps=10, lr=0.5)),
        Mistake("return a flat array of digits, shape (len(x_new),), not a column: "
                "argmax(axis=1) without keepdims, or .ravel() it.",
                when=lambda got, reference: got["shape"] == (reference["shape"][0], 1),
                example=_classifier(returns="a column")),
        Mistake("take the argmax along axis=1, over each image's 10 scores: along axis 0 (or "
                "with no axis) it picks images, not digits.",
                when=lambda got, reference: got["shape"] in ((CLASSES,), ()),
                example=_classifier(returns="argmax over the images")),
        Mistake("classify_digits gets the digits right, but no Session run changed a "
                "variable: nothing was trained in a graph (a nearest-neighbour search in "
                "numpy, say, is another method). Build the model with placeholders and "
                "eg.layers.dense, and sess.run the op that minimize returns at every step.",
                when=lambda got, reference: not got["trained in a graph"],
                example={"classify_digits": _nearest_neighbour}),
    ),
)

# ------------------------------------------------------- 3.5: two updates of one variable
# v starts at 2; one sess.run([inc, scale]) of inc = v.assign(v + 3) and scale = v.assign(v * 10)
V_START = 2.0
_UPDATES = (("inc", lambda v: v + 3), ("scale", lambda v: v * 10))      # in creation order


def _tf1_outcomes():
    """Every value v can end with when TF1 runs the two updates in any order, interleaved:
    each update reads v, then writes its function of what it read. All orders of the four
    steps that keep each update's read before its write."""
    outcomes = set()
    steps = [(name, part) for name, _ in _UPDATES for part in ("read", "write")]
    for order in itertools.permutations(steps):
        if any(order.index((name, "read")) > order.index((name, "write"))
               for name, _ in _UPDATES):
            continue
        v, read = V_START, {}
        for name, part in order:
            if part == "read":
                read[name] = v
            else:
                v = dict(_UPDATES)[name](read[name])
        outcomes.add(v)
    return frozenset(outcomes)


def _run_in_edugraph(ordered):
    """v after one run of [inc, scale] in edugraph; ``ordered``: scale created inside
    eg.control_dependencies([inc])."""
    with eg.Graph().as_default():
        v = eg.Variable(V_START, name="v")
        inc = v.assign(v + 3)
        with eg.control_dependencies([inc] if ordered else None):
            scale = v.assign(v * 10)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            sess.run([inc, scale])
            return float(sess.run(v))


def _outcomes(value, name):
    """A reader: a set (or list, tuple, 1-D array) of numbers, as a frozenset of floats."""
    if isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
        raise WrongForm(f"{name} should be a set of numbers, such as {{1.0, 2.0}}, with every "
                        f"value v can end with; it is one number ({value!r}).")
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (set, frozenset, list, tuple)) or not value:
        raise WrongForm(f"{name} should be a set of numbers, such as {{1.0, 2.0}}; it is "
                        f"{describe(value)}.")
    return frozenset(number(v, f"a value in {name}") for v in value)


def _two_updates_reference():
    return {"tf1_possible": _tf1_outcomes(), "v_edugraph": _run_in_edugraph(ordered=False),
            "v_ordered": _run_in_edugraph(ordered=True)}


def _two_updates_answer(**changes):
    return lambda: {**_two_updates_reference(), **changes}


def _sequential_only():
    """The outcomes of the two updates run one after the other, in either order."""
    (_, first), (_, second) = _UPDATES
    return frozenset({second(first(V_START)), first(second(V_START))})


def _both_read_first():
    """The outcomes when both updates read v before either writes: the last writer wins."""
    return frozenset(update(V_START) for _, update in _UPDATES)


def _listed(values):
    return "{" + ", ".join(f"{v:g}" for v in sorted(values)) + "}"


ex3_5 = Exercise(
    "3.5",
    reads={"tf1_possible": _outcomes, "v_edugraph": number, "v_ordered": number},
    reference=_two_updates_reference,
    passed=lambda got: (f"TF1 may end with any of {_listed(got['tf1_possible'])}, edugraph "
                        f"gives {got['v_edugraph']:g}, and with the control dependency "
                        f"{got['v_ordered']:g}: only control_dependencies makes the order part "
                        "of the program."),
    expected="tf1_possible is a set of numbers (every value v can end with in TF1), v_edugraph "
             "and v_ordered are numbers (v after the run in edugraph, without and with the "
             "control dependency).",
    hints_per_name=True,
    mistakes=(
        Mistake("v_ordered: ops created inside eg.control_dependencies([inc]) run after inc, "
                "and that includes scale's read of v. So scale reads the v that inc wrote.",
                when=lambda got, ref: got["v_ordered"] != ref["v_ordered"] and
                got["v_ordered"] in ref["tf1_possible"],
                example=_two_updates_answer(v_ordered=_run_in_edugraph(False))),
        Mistake("v_edugraph: in edugraph a read that waits for no write sees v as it was when "
                "the run began, so both updates read 2; then the writes happen in the order "
                "the ops were created.",
                when=lambda got, ref: (got["v_edugraph"] != ref["v_edugraph"]
                                       and got["v_edugraph"] in _sequential_only()),
                example=_two_updates_answer(v_edugraph=max(_sequential_only()))),
        Mistake("v_edugraph: both updates read v = 2 at the start of the run, and the writes "
                "happen in the order the ops were created: inc first, then scale, whose value "
                "stays.",
                when=lambda got, ref: (got["v_edugraph"] != ref["v_edugraph"]
                                       and got["v_edugraph"] in _both_read_first()),
                example=_two_updates_answer(v_edugraph=_UPDATES[0][1](V_START))),
        Mistake("tf1_possible: TF1 does not run ops in the order you wrote, created or "
                "fetched them. Without a control dependency it may run them in any order, "
                "and even interleave them: list every value that can come out.",
                when=lambda got, ref: len(got["tf1_possible"]) == 1,
                example=_two_updates_answer(tf1_possible={_run_in_edugraph(True)})),
        Mistake("tf1_possible misses a case where both updates read v before either writes "
                "it: then either one may write last, with a value computed from the old v.",
                when=lambda got, ref: (got["tf1_possible"] >= _sequential_only()
                                       and not got["tf1_possible"] >= _both_read_first()),
                example=_two_updates_answer(tf1_possible=set(_sequential_only()))),
        Mistake("tf1_possible misses an order in which one update runs whole before the "
                "other: TF1 may run scale first and inc after it, or inc first and scale "
                "after it.",
                when=lambda got, ref: (got["tf1_possible"] < ref["tf1_possible"]
                                       and not got["tf1_possible"] >= _sequential_only()),
                example=_two_updates_answer(
                    tf1_possible=_tf1_outcomes() - {min(_sequential_only())})),
        Mistake("tf1_possible: some of your values cannot come out. v ends with what the last "
                "write wrote, and each update writes its function (v + 3 or v · 10) of the v "
                "it read: 2, or what the other update wrote.",
                when=lambda got, ref: not got["tf1_possible"] <= ref["tf1_possible"],
                example=_two_updates_answer(tf1_possible={V_START, *_tf1_outcomes()})),
    ),
)

EXERCISES = [ex3_1, ex3_2, ex3_3, ex3_4, ex3_5]
