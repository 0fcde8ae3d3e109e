"""Lesson 3's exercises: the reference answers pass, nudged answers fail, and the mistakes that
need more than their example (tests/test_exercises.py feeds every example) are seen; a
student's graph left open, or eager execution turned off, does not break a check."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import context
from edugraph.exercises.checking import find
from tests.exercise_lines import line_of


# ----------------------------------------------------------- the answers, written by hand
def any_batch_graph(loss_scale=1.0):
    """3.1 as a student might write it, with other ops than the module's (relu, square)."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(None, 64))
        y = eg.placeholder(eg.float32, shape=(None, 10))
        w = eg.placeholder(eg.float32, shape=(64, 10))
        per_row = eg.reduce_sum(eg.square(eg.nn.relu(x @ w) - y), axis=1)
        loss = eg.reduce_mean(per_row)
        grad_x = eg.gradients(loss, [x])[0]
    return {"x_any": x, "y_any": y, "w_any": w, "loss_any": loss * loss_scale,
            "grad_x_any": grad_x}


def train_fixed(x_data, y_data, w_init, lr, num_steps):
    """3.2, fetching the assign's own output (the new w) rather than a group of it."""
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, shape=(None, x_data.shape[1]))
        y = eg.placeholder(eg.float32, shape=(None, y_data.shape[1]))
        w = eg.Variable(w_init)
        y_pred = eg.nn.relu(eg.matmul(x, w))
        loss = eg.reduce_mean(eg.reduce_sum(eg.square(y_pred - y), axis=1))
        (grad_w,) = eg.gradients(loss, [w])
        new_w = w.assign(w - lr * grad_w)
        init = eg.global_variables_initializer()
    sess = eg.Session(graph=graph)
    sess.run(init)
    losses = [sess.run([loss, new_w], {x: x_data, y: y_data})[0] for _ in range(num_steps)]
    w_final = sess.run(w)
    sess.close()
    return np.array(losses), w_final


def classify_digits(x_data, y_data, x_new):
    """3.4 with a hidden layer and momentum, predicting with argmax in the graph."""
    eg.random.set_seed(1)
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(None, 64))
        y = eg.placeholder(eg.float32, shape=(None, 10))
        hidden = eg.layers.dense(x, 32, activation=eg.nn.relu)
        logits = eg.layers.dense(hidden, 10)
        loss = eg.losses.softmax_cross_entropy(y, logits)
        step = eg.train.MomentumOptimizer(0.2, momentum=0.9).minimize(loss)
        digits = eg.argmax(logits, axis=1)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for _ in range(50):
                sess.run(step, feed_dict={x: x_data, y: y_data})
            return sess.run(digits, feed_dict={x: x_new})


_trained = {}


def classified_once(x_data, y_data, x_new):
    """classify_digits's answer, trained once for the tests that only change its form."""
    if "digits" not in _trained:
        _trained["digits"] = classify_digits(x_data, y_data, x_new)
    return _trained["digits"].copy()


SOLUTIONS = {
    "3.1": any_batch_graph,
    "3.2": lambda: {"train_fixed": train_fixed},
    "3.3": lambda: {"n_variables": 2 + 2, "n_update_ops": 4 * 4 + 1},
    "3.4": lambda: {"classify_digits": classify_digits},
    # v = 2: inc then scale (2 + 3)·10, scale then inc 2·10 + 3, both read 2: the last write
    "3.5": lambda: {"tf1_possible": [50.0, 23.0, 20.0, 5.0], "v_edugraph": 20.0,
                    "v_ordered": 50.0},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]()).startswith(f"✓ {exercise_id}: ")


# ----------------------------------------------------------------------- nudged answers
def test_3_1_a_nudged_loss_fails():
    assert line_of("3.1", any_batch_graph(loss_scale=1.001)).startswith("✗ 3.1: not right yet")


def test_3_2_a_nudged_learning_rate_fails():
    def nudged(x_data, y_data, w_init, lr, num_steps):
        return train_fixed(x_data, y_data, w_init, lr * 1.01, num_steps)

    assert line_of("3.2", {"train_fixed": nudged}).startswith("✗ 3.2: not right yet")


@pytest.mark.parametrize("name", ["n_variables", "n_update_ops"])
def test_3_3_a_nudged_count_fails(name):
    answer = SOLUTIONS["3.3"]()
    assert line_of("3.3", {**answer, name: answer[name] + 1}).startswith("✗ 3.3: ")


def test_3_4_a_model_one_digit_short_of_perfect_on_some_images_fails():
    """The mark is the accuracy: a classifier that gets a fifth of the images wrong fails."""
    def fifth_wrong(x_data, y_data, x_new):
        digits = classified_once(x_data, y_data, x_new)
        digits[::5] = (digits[::5] + 1) % 10
        return digits

    assert line_of("3.4", {"classify_digits": fifth_wrong}).startswith(
        "✗ 3.4: your model learns, but stays under 90%")


# ------------------------------------------------------------- 3.1: graph tensors as answers
def test_3_1_the_list_that_eg_gradients_returns_is_explained():
    answer = any_batch_graph()
    with answer["loss_any"].graph.as_default():
        listed = eg.gradients(answer["loss_any"], [answer["x_any"]])
    assert line_of("3.1", {**answer, "grad_x_any": listed}) == (
        "✗ 3.1: grad_x_any is a list of tensors: eg.gradients returns a list, one gradient "
        "per tensor you ask for; take its [0].")


def test_3_1_a_value_or_an_eager_tensor_instead_of_the_graph_tensor_is_explained():
    answer = any_batch_graph()
    assert line_of("3.1", {**answer, "loss_any": np.float32(1.5)}) == (
        "✗ 3.1: loss_any should be the graph tensor itself, not a value: the check runs your "
        "graph with batches of its own.")
    assert line_of("3.1", {**answer, "x_any": eg.ones((5, 64))}) == (
        "✗ 3.1: x_any is an eager tensor, computed at once: build it in the graph, inside "
        "`with eg.Graph().as_default():`.")


def test_3_1_a_variable_or_a_wrong_shape_where_a_placeholder_is_asked_for():
    answer = any_batch_graph()
    with answer["loss_any"].graph.as_default():
        w_variable = eg.Variable(np.zeros((64, 10), np.float32))
        images = eg.placeholder(eg.float32, shape=(None, 8, 8))
        doubled = answer["x_any"] * 2.0
    assert line_of("3.1", {**answer, "w_any": w_variable}) == (
        "✗ 3.1: w_any is a Variable, which keeps its own value; here the check feeds it, so "
        "make it a placeholder.")
    assert line_of("3.1", {**answer, "x_any": images}) == (
        "✗ 3.1: x_any should have the shape (?, 64); it has (?, 8, 8).")
    assert line_of("3.1", {**answer, "x_any": doubled}).startswith(
        "✗ 3.1: x_any should be a placeholder, eg.placeholder(eg.float32, shape=(None, 64)); "
        "it is Mul")


def test_3_1_tensors_of_two_graphs_and_a_placeholder_left_unfed_are_explained():
    first, second = any_batch_graph(), any_batch_graph()
    assert line_of("3.1", {**first, "loss_any": second["loss_any"]}) == (
        "✗ 3.1: x_any, y_any, w_any, loss_any and grad_x_any are not all in one graph: build "
        "them in one `with eg.Graph().as_default():` block (and run that whole cell again).")
    answer = any_batch_graph()
    with answer["loss_any"].graph.as_default():
        bias = eg.placeholder(eg.float32, shape=(), name="bias")
        loss = answer["loss_any"] + bias
    line = line_of("3.1", {**answer, "loss_any": loss})
    assert line.startswith("✗ 3.1: your graph did not run with x_any, y_any and w_any fed: "
                           "You must feed a value for placeholder tensor 'bias'"), line


def test_3_1_only_one_fixed_batch_size_is_enough_for_the_hint():
    answer = any_batch_graph()
    with answer["loss_any"].graph.as_default():
        y_fixed = eg.placeholder(eg.float32, shape=(500, 10))
    assert line_of("3.1", {**answer, "y_any": y_fixed}) == (
        f"✗ 3.1: {find('3.1').mistakes[0].hint}")


def test_3_1_works_on_a_graph_built_with_eager_execution_turned_off():
    """TF1 code often starts with disable_eager_execution() and builds in the default graph."""
    eg.disable_eager_execution()
    try:
        x = eg.placeholder(eg.float32, shape=(None, 64))
        y = eg.placeholder(eg.float32, shape=(None, 10))
        w = eg.placeholder(eg.float32, shape=(64, 10))
        loss = eg.reduce_mean(eg.reduce_sum((eg.maximum(x @ w, 0.0) - y) ** 2, axis=1))
        answer = {"x_any": x, "y_any": y, "w_any": w, "loss_any": loss,
                  "grad_x_any": eg.gradients(loss, [x])[0]}
        assert line_of("3.1", answer).startswith("✓ 3.1: ")
        assert line_of("3.2", {"train_fixed": train_fixed}).startswith("✓ 3.2: ")
    finally:
        eg.enable_eager_execution()
        eg.reset_default_graph()


# --------------------------------------------------------------- 3.2: the training function
def test_3_2_what_train_fixed_returns_is_checked_before_its_numbers():
    def only_losses(*args):
        return train_fixed(*args)[0]

    def pairs(*args):
        losses, w_final = train_fixed(*args)
        return [[loss, None] for loss in losses], w_final

    def wrong_count(*args):
        losses, w_final = train_fixed(*args)
        return losses[1:], w_final

    assert line_of("3.2", {"train_fixed": only_losses}) == (
        "✗ 3.2: train_fixed should return two things, `return losses, w_final`; it returned "
        "a numpy array of shape (6,).")
    assert line_of("3.2", {"train_fixed": pairs}) == (
        "✗ 3.2: losses holds the whole result of each sess.run([loss, update]), one value "
        "per fetch: keep only the loss.")
    assert line_of("3.2", {"train_fixed": wrong_count}) == (
        "✗ 3.2: losses should be 6 numbers, one per step (num_steps = 6); it has the "
        "shape (5,).")


def test_3_2_the_variable_itself_instead_of_its_value_is_explained():
    def symbolic(x_data, y_data, w_init, lr, num_steps):
        losses, _ = train_fixed(x_data, y_data, w_init, lr, num_steps)
        with eg.Graph().as_default():
            return losses, eg.Variable(w_init, name="w")

    line = line_of("3.2", {"train_fixed": symbolic})
    assert line.startswith("✗ 3.2: w_final is a symbolic tensor of a graph (w:0): it has no "
                           "value until a Session runs it"), line


def test_3_2_a_missing_initializer_or_a_closed_session_names_the_students_line():
    def no_initializer(x_data, y_data, w_init, lr, num_steps):
        with eg.Graph().as_default():
            w = eg.Variable(w_init, name="w")
            with eg.Session() as sess:
                return [0.0] * num_steps, sess.run(w)

    def reads_after_closing(x_data, y_data, w_init, lr, num_steps):
        with eg.Graph().as_default():
            w = eg.Variable(w_init, name="w")
            with eg.Session() as sess:
                sess.run(eg.global_variables_initializer())
            return [0.0] * num_steps, sess.run(w)

    line = line_of("3.2", {"train_fixed": no_initializer})
    assert line.startswith("✗ 3.2: running your answer raised FailedPreconditionError: "
                           "Attempting to use uninitialized value w"), line
    assert "Run its initializer first" in line and "(in no_initializer, line " in line
    assert line.endswith(": return [0.0] * num_steps, sess.run(w))"), line
    line = line_of("3.2", {"train_fixed": reads_after_closing})
    assert line.startswith("✗ 3.2: running your answer raised RuntimeError: Attempted to use "
                           "a closed Session. (in reads_after_closing, line "), line


def test_3_2_a_function_that_leaves_a_graph_open_changes_nothing_after_the_check():
    def leaves_graph_open(*args):
        eg.Graph().as_default().__enter__()          # never exited
        eg.disable_eager_execution()
        return train_fixed(*args)

    before = context.state.graph
    assert line_of("3.2", {"train_fixed": leaves_graph_open}).startswith("✓ 3.2: ")
    assert context.state.graph is before and eg.executing_eagerly()
    assert eg.tensor([1.0, 2.0]).numpy().tolist() == [1.0, 2.0]


def test_a_check_works_while_the_notebook_has_a_graph_open():
    """An answer cell that entered a graph and never left it: the checks build their own."""
    graph = eg.Graph()
    with graph.as_default():
        assert line_of("3.2", {"train_fixed": train_fixed}).startswith("✓ 3.2: ")
        assert line_of("3.3", SOLUTIONS["3.3"]()).startswith("✓ 3.3: ")
        assert context.state.graph is graph
    assert graph.get_operations() == []


# --------------------------------------------------------------- 3.4: the digit classifier
def test_3_4_scores_instead_of_digits_and_a_symbolic_answer_are_explained():
    def max_scores(x_data, y_data, x_new):
        return classified_once(x_data, y_data, x_new).astype(np.float64) + 0.5

    def symbolic(x_data, y_data, x_new):
        with eg.Graph().as_default():
            return eg.argmax(eg.placeholder(eg.float32, shape=(None, 10)), axis=1)

    assert line_of("3.4", {"classify_digits": max_scores}) == (
        "✗ 3.4: classify_digits should return digits, whole numbers 0 to 9: for each image "
        "the index of its largest score (argmax), not the score itself.")
    assert "is a symbolic tensor of a graph" in line_of("3.4", {"classify_digits": symbolic})


def test_3_4_digits_as_floats_or_a_list_pass():
    def as_list(x_data, y_data, x_new):     # (trained afresh: the check watches it train)
        return [float(d) for d in classify_digits(x_data, y_data, x_new)]

    assert line_of("3.4", {"classify_digits": as_list}).startswith("✓ 3.4: ")


def test_3_4_section_5s_settings_are_told_they_learn_too_slowly():
    def section_5(x_data, y_data, x_new):
        eg.random.set_seed(0)
        with eg.Graph().as_default():
            x = eg.placeholder(eg.float32, shape=(None, 64))
            y = eg.placeholder(eg.float32, shape=(None, 10))
            y_pred = eg.layers.dense(x, 10, activation=eg.nn.relu)
            loss = eg.losses.mean_squared_error(y_pred, y)
            update = eg.train.GradientDescentOptimizer(1e-2).minimize(loss)
            with eg.Session() as sess:
                sess.run(eg.global_variables_initializer())
                for _ in range(20):
                    sess.run([loss, update], feed_dict={x: x_data, y: y_data})
                return sess.run(y_pred, feed_dict={x: x_new}).argmax(axis=1)

    assert line_of("3.4", {"classify_digits": section_5}) == (
        f"✗ 3.4: {find('3.4').mistakes[3].hint}")


# ------------------------------------------------------------- 3.5: two updates of one variable
def test_3_5_a_missing_or_extra_outcome_and_a_nudged_value_fail():
    right = SOLUTIONS["3.5"]()
    assert line_of("3.5", {**right, "tf1_possible": {50, 20, 5}}).startswith(
        "✗ 3.5: tf1_possible misses an order in which one update runs whole")   # scale, inc
    assert line_of("3.5", {**right, "tf1_possible": {50, 23, 20}}).startswith(
        "✗ 3.5: tf1_possible misses a case where both updates read v")
    assert line_of("3.5", {**right, "tf1_possible": {50, 23, 20, 5, 25}}).startswith(
        "✗ 3.5: tf1_possible: some of your values cannot come out")
    line = line_of("3.5", {**right, "v_ordered": 51.0})
    assert line.startswith("✗ 3.5: not right yet") and "v_ordered is not" in line, line


def test_3_5_the_values_edugraph_gives_are_what_the_lesson_says():
    """Section 7's rule, run: reads see the value at the start, writes in creation order."""
    def run(ordered, first_created):
        with eg.Graph().as_default():
            v = eg.Variable(2.0)
            updates = {}
            for name in (first_created, ({"inc", "scale"} - {first_created}).pop()):
                new = v + 3 if name == "inc" else v * 10
                if ordered and name != first_created:
                    with eg.control_dependencies([updates[first_created]]):
                        new = v + 3 if name == "inc" else v * 10
                        updates[name] = v.assign(new)
                else:
                    updates[name] = v.assign(new)
            with eg.Session() as sess:
                sess.run(eg.global_variables_initializer())
                sess.run([updates["scale"], updates["inc"]])      # fetch order: no matter
                return float(sess.run(v))

    assert (run(False, "inc"), run(True, "inc")) == (20.0, 50.0)
    assert (run(False, "scale"), run(True, "scale")) == (5.0, 23.0)


def test_3_5_one_number_for_the_set_is_explained():
    assert line_of("3.5", {**SOLUTIONS["3.5"](), "tf1_possible": 50.0}) == (
        "✗ 3.5: tf1_possible should be a set of numbers, such as {1.0, 2.0}, with every value "
        "v can end with; it is one number (50.0).")


def test_3_5_the_set_may_be_a_numpy_array():
    right = SOLUTIONS["3.5"]()
    answer = {**right, "tf1_possible": np.array(sorted(right["tf1_possible"]), dtype=float)}
    assert line_of("3.5", answer).startswith("✓ 3.5: ")


def test_3_1_rows_summed_and_classes_averaged_is_told_the_axes():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(None, 64))
        y = eg.placeholder(eg.float32, shape=(None, 10))
        w = eg.placeholder(eg.float32, shape=(64, 10))
        loss = eg.reduce_mean(eg.reduce_sum(eg.square(eg.nn.relu(x @ w) - y), axis=0))
        grad_x = eg.gradients(loss, [x])[0]
    answer = {"x_any": x, "y_any": y, "w_any": w, "loss_any": loss, "grad_x_any": grad_x}
    assert line_of("3.1", answer).startswith("✗ 3.1: your loss sums over the rows (axis=0)")


def test_3_4_a_column_of_digits_or_an_argmax_over_the_images_is_explained():
    def column(x_data, y_data, x_new):
        return classified_once(x_data, y_data, x_new).reshape(-1, 1)

    def one_number(x_data, y_data, x_new):
        return np.int64(classified_once(x_data, y_data, x_new).argmax())

    assert line_of("3.4", {"classify_digits": column}).startswith(
        "✗ 3.4: return a flat array of digits, shape (len(x_new),), not a column")
    assert line_of("3.4", {"classify_digits": one_number}).startswith(
        "✗ 3.4: take the argmax along axis=1")


def test_3_4_swapped_loss_arguments_find_no_gradient_as_in_tf1():
    """TF1's softmax_cross_entropy stops the labels' gradient: with (logits, labels) swapped,
    no gradient reaches the model, minimize refuses, and the check says which order."""
    def classify_digits(x_data, y_data, x_new):
        with eg.Graph().as_default():
            x = eg.placeholder(eg.float32, shape=(None, x_data.shape[1]))
            y = eg.placeholder(eg.float32, shape=(None, y_data.shape[1]))
            logits = eg.layers.dense(x, y_data.shape[1])
            loss = eg.losses.softmax_cross_entropy(logits, y)
            eg.train.GradientDescentOptimizer(1.0).minimize(loss)
        return np.zeros(len(x_new), dtype=int)

    line = line_of("3.4", {"classify_digits": classify_digits})
    assert line.startswith("✗ 3.4: minimize found no gradient"), line
    assert "eg.losses.softmax_cross_entropy(y, logits)" in line


def test_3_4_an_answer_that_replays_or_trains_nothing_is_told_so():
    """Digits predicted before the check called (replayed), the test labels as stored, and a
    numpy nearest-neighbour search: right digits, or the labels, without a model trained in a
    graph by this call."""
    from edugraph.exercises.lesson03 import _nearest_neighbour
    not_trained = "✗ 3.4: classify_digits gets the digits right, but no Session run changed"
    classified_once(*_lesson_digits())      # (trained once, outside the check)
    assert line_of("3.4", {"classify_digits": classified_once}).startswith(not_trained)
    assert line_of("3.4", {"classify_digits": _nearest_neighbour}).startswith(not_trained)
    stored = line_of("3.4", {"classify_digits": lambda *a: eg.datasets.load_digits()[1][1]})
    assert stored.startswith("✗ 3.4: classify_digits returned the test set's own labels")


def _lesson_digits():
    from edugraph.exercises.lesson03 import _digits
    return _digits()[:3]


def test_3_5_two_wrong_names_each_get_their_hint():
    from tests.exercise_lines import hint_of
    ordered, edugraph = hint_of("3.5", "v_ordered:"), hint_of("3.5", "v_edugraph: in edugraph")
    both = {**SOLUTIONS["3.5"](), "v_edugraph": 50.0, "v_ordered": 20.0}
    assert line_of("3.5", both) == ordered + " Also, " + edugraph.removeprefix("✗ 3.5: ")
    three = {**both, "tf1_possible": [50.0, 23.0]}
    line = line_of("3.5", three)
    assert line.count("Also, ") == 2 and "tf1_possible misses" in line, line
