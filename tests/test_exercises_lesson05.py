"""Lesson 5's exercises: the reference answers pass, nudged answers fail, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import json
from pathlib import Path

import numpy as np
import pytest

import edugraph as eg
from edugraph.exercises.checking import find
from edugraph.exercises.lesson05 import SHIFT_CALLS
from tests.exercise_lines import line_of

LESSON = Path(__file__).resolve().parent.parent / "lessons" / "05_eager_execution.ipynb"


# ------------------------------------------------------------------ answers written by hand
def quadratic_step(params, x, y, lr):
    for p in params:                    # reset first, then one step, PyTorch's way
        p.grad = None
    a, b, c = params
    loss = eg.reduce_mean(eg.square(a * x * x + b * x + c - y))
    loss.backward()
    with eg.no_grad():
        for p in params:
            p -= lr * p.grad
    return loss


def two_loss_gradients(w, x, y):
    with eg.GradientTape(persistent=True) as tape:
        error = w * x - y
        mse = eg.reduce_mean(error * error)
        mae = eg.reduce_mean(eg.abs(error))
    return [tape.gradient(mse, w).item(), tape.gradient(mae, w).item()]


def second_derivative(fn, t):
    t = eg.tensor(t)
    with eg.GradientTape() as outer:
        outer.watch(t)
        with eg.GradientTape() as inner:
            inner.watch(t)
            y = fn(t)
        dy_dt = inner.gradient(y, t)
    return outer.gradient(dy_dt, t)


@eg.function(autograph=False)
def relu_or_square(v):
    return eg.cond(eg.reduce_mean(v) > 0.0, lambda: eg.square(v),
                   lambda: eg.maximum(v, 0.0))


@eg.function
def count_halvings(x):
    halvings = eg.constant(0)
    while eg.reduce_max(x) > 1.0:
        halvings += 1
        x = 0.5 * x
    return halvings


SOLUTIONS = {
    "5.1": {"quadratic_step": quadratic_step},
    "5.2": {"two_loss_gradients": two_loss_gradients},
    "5.3": {"second_derivative": second_derivative},
    "5.4": {"predicted_traces": [1, 1, 2, 3, 4, 4, 5, 5]},
    "5.5": {"relu_or_square": relu_or_square},
    "5.6": {"count_halvings": count_halvings},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


def scaled(fn, factor):
    """The answer of fn, a little off."""
    def nudged(*args):
        result = fn(*args)
        if isinstance(result, (list, tuple)):
            return type(result)(r * factor for r in result)
        return result * factor
    return nudged


@pytest.mark.parametrize("exercise_id, name", [("5.2", "two_loss_gradients"),
                                               ("5.3", "second_derivative"),
                                               ("5.5", "relu_or_square")])
def test_a_nudged_answer_fails(exercise_id, name):
    answer = SOLUTIONS[exercise_id][name]
    if isinstance(answer, eg.Function):         # nudged inside the trace
        nudged = {name: eg.function(scaled(answer.python_function, 1.001),
                                    autograph=answer.autograph)}
    else:
        nudged = {name: scaled(answer, 1.001)}
    assert line_of(exercise_id, nudged).startswith(f"✗ {exercise_id}: not right yet")


# ---------------------------------------------------------------------------------- 5.1
def test_5_1_a_nudged_learning_rate_fails():
    def step(params, x, y, lr):
        return quadratic_step(params, x, y, lr * 1.01)
    assert line_of("5.1", {"quadratic_step": step}).startswith(
        "✗ 5.1: a, b and c are off from the first step on")


def test_5_1_the_pass_line_reports_the_fit():
    assert line_of("5.1", SOLUTIONS["5.1"]).endswith("fit a, b, c = 1.00, -3.00, 2.00.")


def test_5_1_the_step_gets_pytorch_parameters_and_tensorflows_assign_sub_works_too():
    seen = []

    def step(params, x, y, lr):
        seen.extend(type(p) for p in params)
        a, b, c = params
        loss = ((a * x ** 2 + b * x + c - y) ** 2).mean()
        loss.backward()
        for p in params:
            p.assign_sub(lr * p.grad)       # tf.Variable's spelling: nn.Parameter is one
            p.grad = None
        return loss.item()

    assert line_of("5.1", {"quadratic_step": step}).startswith("✓ 5.1: ")
    assert set(seen) == {eg.nn.Parameter}


def test_5_1_gradients_zeroed_before_the_update_are_seen_as_never_moving():
    def zeroed_first(params, x, y, lr):
        a, b, c = params
        loss = ((a * x ** 2 + b * x + c - y) ** 2).mean()
        loss.backward()
        with eg.no_grad():
            for p in params:
                p.grad.zero_()
                p -= lr * p.grad
        return loss.item()

    assert "the parameters never moved" in line_of("5.1", {"quadratic_step": zeroed_first})


def test_5_1_an_update_outside_no_grad_names_the_students_line():
    def step(params, x, y, lr):
        a, b, c = params
        loss = ((a * x ** 2 + b * x + c - y) ** 2).mean()
        loss.backward()
        for p in params:
            p -= lr * p.grad
        return loss

    line = line_of("5.1", {"quadratic_step": step})
    assert line.startswith("✗ 5.1: running your answer raised GradientError: x -= ... would "
                           "change a tensor of shape () in place")
    assert "under `with eg.no_grad():`" in line
    assert "(in step, line " in line and line.endswith(": p -= lr * p.grad)")


def test_5_1_rebinding_the_name_and_returning_none_are_explained():
    def rebinds(params, x, y, lr):
        a, b, c = params
        loss = ((a * x ** 2 + b * x + c - y) ** 2).mean()
        loss.backward()
        a = a - lr * a.grad
        b = b - lr * b.grad
        c = c - lr * c.grad
        return loss.item()

    assert "the parameters never moved" in line_of("5.1", {"quadratic_step": rebinds})

    def no_return(params, x, y, lr):
        quadratic_step(params, x, y, lr)

    assert line_of("5.1", {"quadratic_step": no_return}) == (
        "✗ 5.1: quadratic_step(params, x, y, lr) returned None: end the function with "
        "`return ...`.")


# ---------------------------------------------------------------------------------- 5.2
def test_5_2_a_tape_that_is_not_persistent_is_explained():
    def once(w, x, y):
        with eg.GradientTape() as tape:
            y_hat = w * x
            mse = eg.reduce_mean(eg.square(y_hat - y))
            mae = eg.reduce_mean(eg.abs(y_hat - y))
        return tape.gradient(mse, w), tape.gradient(mae, w)

    assert line_of("5.2", {"two_loss_gradients": once}) == (
        "✗ 5.2: a tape answers one gradient() call and then frees its recording: make it "
        "eg.GradientTape(persistent=True) to ask it twice.")


def test_5_2_a_forward_pass_before_the_tape_gives_the_none_hint():
    def too_early(w, x, y):
        y_hat = w * x
        with eg.GradientTape(persistent=True) as tape:
            mse = eg.reduce_mean(eg.square(y_hat - y))
            mae = eg.reduce_mean(eg.abs(y_hat - y))
        return tape.gradient(mse, w), tape.gradient(mae, w)

    assert line_of("5.2", {"two_loss_gradients": too_early}).startswith(
        "✗ 5.2: a gradient is None: the tape only sees what runs inside its `with` block")


def test_5_2_one_gradient_of_both_losses_is_not_a_pair():
    def summed(w, x, y):
        with eg.GradientTape() as tape:
            y_hat = w * x
            losses = [eg.reduce_mean(eg.square(y_hat - y)), eg.reduce_mean(eg.abs(y_hat - y))]
        return tape.gradient(losses, w)

    assert line_of("5.2", {"two_loss_gradients": summed}) == (
        "✗ 5.2: two_loss_gradients(w, x, y) at w = 0.5 should return a pair (dmse_dw, "
        "dmae_dw); it returned one number. (tape.gradient([mse, mae], w) gives one gradient, "
        "that of mse + mae: ask the persistent tape once per loss.)")


def test_5_2_two_numbers_in_one_array_are_a_pair_too():
    def as_array(w, x, y):
        return np.array(two_loss_gradients(w, x, y))

    def stacked(w, x, y):
        with eg.GradientTape(persistent=True) as tape:
            error = w * x - y
            mse, mae = eg.reduce_mean(eg.square(error)), eg.reduce_mean(eg.abs(error))
        return eg.stack([tape.gradient(mse, w), tape.gradient(mae, w)])

    for answer in (as_array, stacked):
        assert line_of("5.2", {"two_loss_gradients": answer}).startswith("✓ 5.2: ")


# ---------------------------------------------------------------------------------- 5.3
NONE_HINT = "✗ 5.3: a gradient came back None: a tape gives None for what it did not see used."


def test_5_3_asking_the_inner_tape_twice_is_explained():
    def inner_twice(fn, t):
        t = eg.Variable(t)
        with eg.GradientTape() as outer:   # noqa: F841 (never asked: the mistake)
            with eg.GradientTape() as inner:
                y = fn(t)
            dy_dt = inner.gradient(y, t)
        return inner.gradient(dy_dt, t)

    assert line_of("5.3", {"second_derivative": inner_twice}).startswith(
        "✗ 5.3: you asked one tape twice: the inner tape gives dy/dt, then the OUTER tape")


@pytest.mark.parametrize("mistake", ["sequential", "outside", "unwatched"])
def test_5_3_gradients_that_were_not_recorded_get_the_none_hint(mistake):
    def answer(fn, t):
        t = eg.Variable(t) if mistake != "unwatched" else eg.tensor(t)
        if mistake == "sequential":                 # one tape after the other
            with eg.GradientTape() as inner:
                y = fn(t)
            with eg.GradientTape() as outer:
                dy_dt = inner.gradient(y, t)
        else:
            with eg.GradientTape() as outer:
                with eg.GradientTape() as inner:
                    y = fn(t)
            dy_dt = inner.gradient(y, t)            # outside the outer tape, or None
        return outer.gradient(dy_dt, t)

    line = line_of("5.3", {"second_derivative": answer})
    # returned as it came (None), or used (None.item()): both get the tape's hint
    assert line.startswith(NONE_HINT) or NONE_HINT[len("✗ 5.3: "):] in line, line

    def used(fn, t):
        value = answer(fn, t)
        return value.item()             # AttributeError on None

    assert line_of("5.3", {"second_derivative": used}).startswith(NONE_HINT)


def test_5_3_no_return_line_is_said_first():
    def no_return(fn, t):
        t = eg.Variable(t)
        with eg.GradientTape() as outer:
            with eg.GradientTape() as inner:
                y = fn(t)
            dy_dt = inner.gradient(y, t)
        outer.gradient(dy_dt, t)

    assert line_of("5.3", {"second_derivative": no_return}).startswith(
        "✗ 5.3: second_derivative(fn, 0.0) returned None. If it has no `return` line, end it "
        "with one;")


def test_5_3_eg_grad_without_create_graph_is_explained():
    def no_graph(fn, t):
        t = eg.tensor(t, requires_grad=True)
        (dy_dt,) = eg.grad([fn(t)], [t])
        (d2y_dt2,) = eg.grad([dy_dt], [t])
        return d2y_dt2

    assert line_of("5.3", {"second_derivative": no_graph}).startswith(
        "✗ 5.3: the first derivative was not recorded, so it cannot be differentiated: "
        "with eg.grad pass create_graph=True")


def test_5_3_both_derivatives_returned_is_one_number_too_many():
    def both(fn, t):
        t = eg.Variable(t)
        with eg.GradientTape() as outer:
            with eg.GradientTape() as inner:
                y = fn(t)
            dy_dt = inner.gradient(y, t)
        return dy_dt, outer.gradient(dy_dt, t)

    assert line_of("5.3", {"second_derivative": both}) == (
        "✗ 5.3: what second_derivative(fn, 0.0) returns should be one number, not a tuple "
        "of 2 items.")


# ---------------------------------------------------------------------------------- 5.4
def test_5_4_the_prompt_shows_the_calls_the_check_runs():
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    prompt = next("".join(c["source"]) for c in cells
                  if "".join(c["source"]).startswith("**5.4"))
    assert "\n".join(SHIFT_CALLS) in prompt


def test_5_4_each_mistake_predicts_its_own_counts():
    exercise = find("5.4")
    predictions = [tuple(m.example_answer()["predicted_traces"]) for m in exercise.mistakes]
    right = tuple(exercise.right_answer()["predicted_traces"])
    assert len(set(predictions)) == len(predictions) and right not in predictions


@pytest.mark.parametrize("call", range(len(SHIFT_CALLS)))
def test_5_4_any_count_off_by_one_fails(call):
    for change in (-1, 1):
        counts = list(SOLUTIONS["5.4"]["predicted_traces"])
        counts[call] += change
        assert line_of("5.4", {"predicted_traces": counts}).startswith("✗ 5.4: ")


def test_5_4_no_trace_where_k_becomes_a_tensor_is_explained_in_any_prediction():
    for counts in ([1, 1, 2, 3, 3, 3, 4, 4], [1, 1, 2, 3, 3, 4, 5, 5], [1, 1, 2, 2, 2, 3, 4, 4]):
        assert line_of("5.4", {"predicted_traces": counts}).startswith(
            "✗ 5.4: call 5 passes k as a tensor"), counts


def test_5_4_a_tuple_or_an_array_is_read_and_other_forms_are_explained():
    counts = SOLUTIONS["5.4"]["predicted_traces"]
    for form in (tuple(counts), np.array(counts), eg.tensor(counts)):
        assert line_of("5.4", {"predicted_traces": form}).startswith("✓ 5.4: ")
    assert line_of("5.4", {"predicted_traces": counts[:-1]}) == (
        "✗ 5.4: predicted_traces should hold 8 counts, one per call; it has shape (7,).")
    assert line_of("5.4", {"predicted_traces": 5}) == (
        "✗ 5.4: predicted_traces should be a list of 8 whole numbers, one count per call, "
        "e.g. [1, 1, 2, ...]; it is a int.")
    assert "whole numbers" in line_of("5.4", {"predicted_traces": [1, 1, 1.5, 2, 3, 3, 4, 4]})


# ---------------------------------------------------------------------------------- 5.5
def test_5_5_a_python_if_is_explained_without_autograph_and_with_it():
    def with_if(v):
        if eg.reduce_mean(v) > 0:
            return v * v
        return eg.nn.relu(v)

    assert line_of("5.5", {"relu_or_square": eg.function(with_if, autograph=False)}).startswith(
        "✗ 5.5: a Python `if` cannot test a tensor while eg.function traces with "
        "autograph=False")
    # AutoGraph makes the same cond, but 5.5 asks for it by hand
    assert line_of("5.5", {"relu_or_square": eg.function(with_if)}).startswith(
        "✗ 5.5: right values, but AutoGraph wrote the cond for you")


def test_5_5_wrong_values_untraced_or_with_autograph_are_not_called_right_values():
    def swapped(v):
        return eg.cond(eg.reduce_mean(v) > 0, lambda: eg.nn.relu(v), lambda: v * v)

    for answer in (swapped, eg.function(swapped)):
        assert line_of("5.5", {"relu_or_square": answer}).startswith(
            "✗ 5.5: the branches are swapped")


def test_5_5_branches_that_are_not_functions_get_edugraphs_message_and_the_line():
    @eg.function
    def values(v):
        return eg.cond(eg.reduce_mean(v) > 0, v * v, eg.nn.relu(v))

    line = line_of("5.5", {"relu_or_square": values})
    assert line.startswith("✗ 5.5: running your answer raised TypeError: eg.cond(pred, "
                           "true_fn, false_fn): true_fn and false_fn must be functions")
    assert line.endswith("return eg.cond(eg.reduce_mean(v) > 0, v * v, eg.nn.relu(v)))")


def test_5_5_a_result_made_in_numpy_has_no_gradient():
    def in_numpy(v):
        values = v.numpy()
        return values * values if values.mean() > 0 else np.maximum(values, 0)

    assert line_of("5.5", {"relu_or_square": in_numpy}).startswith(
        "✗ 5.5: no gradient flows back from relu_or_square(eg.tensor([-0.5, 1.5, 2.0, -1.0]))")


def test_5_5_a_plain_function_with_a_python_if_is_right_but_not_traced():
    def eager(v):
        return v * v if eg.reduce_mean(v) > 0 else eg.nn.relu(v)

    assert line_of("5.5", {"relu_or_square": eager}).startswith(
        "✗ 5.5: right values, but relu_or_square is not traced")


# ---------------------------------------------------------------------------------- 5.6
def test_5_6_a_nudged_threshold_fails():
    @eg.function
    def nudged(x):
        n = 0
        while eg.reduce_max(x) > 1.5:
            x = x / 2
            n += 1
        return n

    assert line_of("5.6", {"count_halvings": nudged}).startswith("✗ 5.6: not right yet")


def test_5_6_reading_a_value_while_tracing_is_explained():
    @eg.function
    def with_numpy(x):
        n = 0
        while eg.reduce_max(x).numpy() > 1:
            x = x / 2
            n += 1
        return n

    assert line_of("5.6", {"count_halvings": with_numpy}).startswith(
        "✗ 5.6: while eg.function traces, a tensor has no value, so .numpy()")


def test_5_6_autograph_switched_off_is_explained():
    def count(x):
        n = 0
        while eg.reduce_max(x) > 1:
            x = x / 2
            n += 1
        return n

    assert line_of("5.6", {"count_halvings": eg.function(count, autograph=False)}).startswith(
        "✗ 5.6: a Python `while` on a tensor needs AutoGraph")


def test_5_6_a_hand_written_while_loop_passes_too():
    @eg.function
    def by_hand(x):
        return eg.while_loop(lambda n, x: eg.reduce_max(x) > 1,
                             lambda n, x: (n + 1, x / 2), [eg.constant(0), x])[0]

    assert line_of("5.6", {"count_halvings": by_hand}).startswith("✓ 5.6: ")


def test_5_6_a_count_as_a_python_int_or_float_tensor_is_read_as_a_number():
    @eg.function
    def as_float(x):
        n = eg.constant(0.0)
        while eg.reduce_max(x) > 1:
            x = x / 2
            n += 1.0
        return n

    assert line_of("5.6", {"count_halvings": as_float}).startswith("✓ 5.6: ")


def test_5_5_and_5_6_equivalent_tests_pass():
    """The sum of v is > 0 exactly when its mean is; the largest element is > 1 exactly when
    any element is."""
    @eg.function(autograph=False)
    def by_the_sum(v):
        return eg.cond(eg.reduce_sum(v) > 0, lambda: eg.square(v), lambda: eg.maximum(v, 0.0))

    @eg.function
    def any_above_one(x):
        n = 0
        while eg.reduce_any(x > 1):
            x = x / 2
            n += 1
        return n

    assert line_of("5.5", {"relu_or_square": by_the_sum}).startswith("✓ 5.5")
    assert line_of("5.6", {"count_halvings": any_above_one}).startswith("✓ 5.6")
