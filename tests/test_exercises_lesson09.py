"""Lesson 9's exercises: the reference answers pass, a nudged answer fails, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import math

import numpy as np
import pytest

import edugraph as eg
from edugraph.exercises.checking import find
from tests.exercise_lines import line_of


def bptt_by_hand():
    """h_t = tanh(0.5·x_t + 1.5·h_{t-1}) on x = 1, -1, 2; L = h_3², step by step."""
    h1 = math.tanh(0.5 * 1.0)
    h2 = math.tanh(0.5 * -1.0 + 1.5 * h1)
    h3 = math.tanh(0.5 * 2.0 + 1.5 * h2)
    delta3 = 2 * h3 * (1 - h3 ** 2)
    delta2 = delta3 * 1.5 * (1 - h2 ** 2)
    delta1 = delta2 * 1.5 * (1 - h1 ** 2)
    return {"dL_dw": delta3 * 2.0 + delta2 * -1.0 + delta1 * 1.0,
            "dL_du": delta3 * h2 + delta2 * h1 + delta1 * 0.0}


def numeric_grad_entry(loss_fn, weights, i, j, eps=1e-4):
    up, down = weights.copy(), weights.copy()
    up[i, j] += eps
    down[i, j] -= eps
    return (loss_fn(up) - loss_fn(down)) / (2 * eps)


def clip_gradients(grads, max_norm):
    norm = np.linalg.norm(np.concatenate([g.ravel() for g in grads]))
    return [g * max_norm / norm for g in grads] if norm > max_norm else list(grads)


def lesson_arrays():
    """x_seq, W, U (section 1) and x_40 (section 4): the lesson's draws after
    np.random.seed(0), in its order (x_long of section 2 in between)."""
    rng = np.random.RandomState(0)
    x_seq = rng.randn(1, 4, 2).astype(np.float32)
    W = 0.5 * rng.randn(2, 3).astype(np.float32)
    U = 0.5 * rng.randn(3, 3).astype(np.float32)
    rng.randn(1, 40, 4)
    return x_seq, W, U, rng.randn(1, 40, 2).astype(np.float32)


def looped_gradient(steps=10):
    """Section 4's looped graph with W a Variable: eg.gradients of the final state's sum."""
    _, W, U, x_40 = lesson_arrays()
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, shape=(1, None, 2))
        n = eg.placeholder(eg.int32, shape=())
        W_var, U_c = eg.Variable(W), eg.constant(U)

        def body(t, h):
            x_t = eg.gather(x, t, axis=1)
            return t + 1, eg.tanh(eg.matmul(x_t, W_var) + eg.matmul(h, U_c))

        _, h = eg.while_loop(lambda t, h: t < n, body, [eg.constant(0), eg.zeros((1, 3))])
        dW, = eg.gradients(eg.reduce_sum(h), [W_var])
        init = eg.global_variables_initializer()
    with eg.Session(graph=graph) as sess:
        sess.run(init)
        return sess.run(dW, {x: x_40[:, :steps], n: steps})


def clipped_step(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    loss = ((net(x) - y) ** 2).mean()
    loss.backward()
    norm = eg.nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    optimizer.step()
    return norm.item()


SOLUTIONS = {
    "9.1": bptt_by_hand(),
    "9.2": {"numeric_grad_entry": numeric_grad_entry},
    "9.3": {"n_params_simple_rnn": 8 * (5 + 8 + 1), "n_params_lstm": 4 * 8 * (5 + 8 + 1),
            "n_params_gru": 3 * 8 * (5 + 8 + 2), "n_params_torch_lstm": 4 * 8 * (5 + 8 + 2)},
    "9.4": {"clip_gradients": clip_gradients},
    "9.5": {"dW_looped": looped_gradient()},
    "9.6": {"clipped_step": clipped_step},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


@pytest.mark.parametrize("exercise_id, nudge", [("9.1", 0.01), ("9.3", 1)])
def test_a_nudged_number_fails(exercise_id, nudge):
    for name, value in SOLUTIONS[exercise_id].items():
        nudged = {**SOLUTIONS[exercise_id], name: value + nudge}
        assert line_of(exercise_id, nudged).startswith(f"✗ {exercise_id}: not right yet"), name


def test_9_1_a_mistake_in_one_name_is_named_when_the_other_is_wrong_too():
    right = SOLUTIONS["9.1"]
    h2 = math.tanh(-0.5 + 1.5 * math.tanh(0.5))
    h3 = math.tanh(1.0 + 1.5 * h2)
    last_step_only_du = 2 * h3 * (1 - h3 ** 2) * h2
    line = line_of("9.1", {"dL_dw": right["dL_dw"] + 0.3, "dL_du": last_step_only_du})
    assert line.startswith("✗ 9.1: that is step 3's share only.")


def test_9_1_rounded_working_fails_and_says_how_precise():
    rounded = {name: round(value, 2) for name, value in SOLUTIONS["9.1"].items()}
    assert "checked to 1e-4: compute them in Python, without rounding" in \
        line_of("9.1", rounded)


def test_9_2_a_nudged_formula_fails_and_nudging_in_place_then_restoring_passes():
    def slightly_off(loss_fn, weights, i, j, eps=1e-4):
        return numeric_grad_entry(loss_fn, weights, i, j, eps) * 1.001

    assert line_of("9.2", {"numeric_grad_entry": slightly_off}).startswith(
        "✗ 9.2: close, but not the central difference")

    def entry_transposed(loss_fn, weights, i, j, eps=1e-4):
        return numeric_grad_entry(loss_fn, weights, j % weights.shape[0], i, eps)

    assert line_of("9.2", {"numeric_grad_entry": entry_transposed}).startswith(
        "✗ 9.2: not right yet")

    def restores(loss_fn, weights, i, j, eps=1e-4):
        kept = weights[i, j]
        weights[i, j] = kept + eps
        up = loss_fn(weights)
        weights[i, j] = kept - eps
        down = loss_fn(weights)
        weights[i, j] = kept
        return (up - down) / (2 * eps)

    assert line_of("9.2", {"numeric_grad_entry": restores}).startswith("✓ 9.2")


def test_9_2_both_names_on_one_array_get_the_copy_hint():
    def aliased(loss_fn, weights, i, j, eps=1e-4):
        up = weights
        down = weights
        up[i, j] += eps
        down[i, j] -= eps
        return (loss_fn(up) - loss_fn(down)) / (2 * eps)

    assert line_of("9.2", {"numeric_grad_entry": aliased}).startswith(
        "✗ 9.2: nudge a copy, not the array you were given")


def test_9_2_the_pass_line_shows_backward_next_to_the_difference():
    line = line_of("9.2", SOLUTIONS["9.2"])
    x_seq, W, U, _ = lesson_arrays()
    W_leaf = eg.tensor(W, dtype=eg.float64, requires_grad=True)
    h = eg.zeros((1, 3), dtype=eg.float64)
    for t in range(4):
        h = eg.tanh(eg.matmul(eg.tensor(x_seq[:, t], dtype=eg.float64), W_leaf)
                    + eg.matmul(h, eg.tensor(U, dtype=eg.float64)))
    (h ** 2).sum().backward()
    assert f"backward() through the 4 steps gives {W_leaf.grad.numpy()[0, 1]:.6f}" in line


def test_9_2_a_whole_gradient_instead_of_one_entry_is_explained():
    def whole(loss_fn, weights, i, j, eps=1e-4):
        return np.zeros_like(weights)

    assert line_of("9.2", {"numeric_grad_entry": whole}) == (
        "✗ 9.2: numeric_grad_entry(loss_fn, weights, 0, 1, 0.0001) should be one number, "
        "not a numpy array of shape (2, 3).")


def test_9_3_a_float_count_and_a_fraction():
    counts = SOLUTIONS["9.3"]
    assert line_of("9.3", {**counts, "n_params_lstm": 448.0}).startswith("✓ 9.3")
    assert line_of("9.3", {**counts, "n_params_lstm": 448.5}) == \
        "✗ 9.3: n_params_lstm is 448.5; a whole number (a count) is asked for."


def test_9_3_a_gru_without_any_bias_gets_the_bias_hint():
    line = line_of("9.3", {**SOLUTIONS["9.3"], "n_params_gru": 3 * 8 * (5 + 8)})
    assert line.startswith("✗ 9.3: count the biases too")


def test_9_3_the_reference_draws_no_random_numbers():
    """Building layers to count them must not move the lesson's random stream."""
    eg.random.set_seed(5)
    before = eg.randn(3).numpy()
    eg.random.set_seed(5)
    find("9.3")._reference = None
    find("9.3").right_answer()
    assert np.array_equal(eg.randn(3).numpy(), before)


def test_9_4_a_nudged_factor_fails_and_tensors_or_tuples_pass():
    def nudged(grads, max_norm):
        return [g * 1.001 for g in clip_gradients(grads, max_norm)]

    assert line_of("9.4", {"clip_gradients": nudged}).startswith("✗ 9.4: not right yet")

    def with_tensors(grads, max_norm):
        return tuple(eg.tensor(g, dtype=eg.float64) for g in clip_gradients(grads, max_norm))

    assert line_of("9.4", {"clip_gradients": with_tensors}).startswith("✓ 9.4")


def test_9_4_pytorchs_formula_and_float32_pass():
    def like_clip_grad_norm_(grads, max_norm):         # PyTorch adds 1e-6 to the norm
        norm = np.sqrt(sum(np.sum(g ** 2) for g in grads))
        return [g * min(1.0, max_norm / (norm + 1e-6)) for g in grads]

    def in_float32(grads, max_norm):
        return [g.astype(np.float32) for g in clip_gradients(grads, max_norm)]

    for right in (like_clip_grad_norm_, in_float32):
        assert line_of("9.4", {"clip_gradients": right}).startswith("✓ 9.4"), right.__name__


@pytest.mark.parametrize("returned, says", [
    (lambda grads, max_norm: None, "returned None: return the list of clipped gradients"),
    (lambda grads, max_norm: (clip_gradients(grads, max_norm), 9.86),
     "returned two things, as tf.clip_by_global_norm does"),
    (lambda grads, max_norm: (g for g in grads), "should return a list of arrays"),
    (lambda grads, max_norm: grads[:2], "returned 2 arrays for 3 gradients"),
    (lambda grads, max_norm: [g.ravel() for g in grads],
     "clip_gradients(grads, 5)[0] has shape (6,); each clipped gradient keeps the shape of its "
     "gradient, (2, 3)."),
])
def test_9_4_answers_of_another_form_are_explained(returned, says):
    line = line_of("9.4", {"clip_gradients": returned})
    assert line.startswith("✗ 9.4: clip_gradients(grads, 5)") and says in line, line


def test_9_4_an_error_in_the_students_function_names_its_line():
    def clip_gradients(grads, max_norm):
        norm = np.sqrt(sum(np.sum(g ** 2) for g in grads))
        return [g * max_norm / nrom for g in grads]  # noqa: F821

    line = line_of("9.4", {"clip_gradients": clip_gradients})
    assert line.startswith("✗ 9.4: running your answer raised NameError: name 'nrom' is not "
                           "defined (in ")       # <listcomp> before Python 3.12
    assert line.endswith(": return [g * max_norm / nrom for g in grads]  # noqa: F821)")


def test_9_5_a_nudged_gradient_and_a_symbolic_one_fail():
    right = SOLUTIONS["9.5"]["dW_looped"]
    nudged = right.copy()
    nudged[1, 2] += 0.01
    assert line_of("9.5", {"dW_looped": nudged}).startswith("✗ 9.5: not right yet")
    with eg.Graph().as_default():
        symbolic = eg.placeholder(eg.float32, shape=(2, 3))
        assert "symbolic tensor" in line_of("9.5", {"dW_looped": symbolic})


@pytest.mark.parametrize("steps", [3, 40])
def test_9_5_a_loop_run_for_another_number_of_steps_is_seen(steps):
    assert line_of("9.5", {"dW_looped": looped_gradient(steps)}).startswith(
        "✗ 9.5: this is the gradient over another number of steps")


def test_9_6_other_right_spellings_pass():
    def functional_loss_tensor_norm(net, optimizer, x, y, max_norm):
        net.zero_grad()
        eg.nn.functional.mse_loss(net(x), y).backward()
        norm = eg.nn.utils.clip_grad_norm_(list(net.parameters()), max_norm=max_norm)
        optimizer.step()
        return norm                                   # a 0-d tensor is a number too

    def by_hand_with_tfs_formula(net, optimizer, x, y, max_norm):
        optimizer.zero_grad()
        ((net(x) - y) ** 2).mean().backward()
        grads = [p.grad for p in net.parameters()]
        clipped, norm = eg.clip_by_global_norm(grads, max_norm)
        for p, g in zip(net.parameters(), clipped):
            p.grad = g
        optimizer.step()
        return float(norm)

    for answer in (functional_loss_tensor_norm, by_hand_with_tfs_formula):
        assert line_of("9.6", {"clipped_step": answer}).startswith("✓ 9.6"), answer.__name__


def test_9_6_a_nudged_step_fails_and_clipping_before_backward_is_seen():
    def larger_steps(net, optimizer, x, y, max_norm):
        return clipped_step(net, optimizer, x, y, 1.01 * max_norm)

    assert line_of("9.6", {"clipped_step": larger_steps}).startswith("✗ 9.6: not right yet")

    def clip_before_backward(net, optimizer, x, y, max_norm):
        optimizer.zero_grad()
        norm = eg.nn.utils.clip_grad_norm_(net.parameters(), max_norm)
        ((net(x) - y) ** 2).mean().backward()
        optimizer.step()
        return norm.item()

    assert line_of("9.6", {"clipped_step": clip_before_backward}).startswith(
        "✗ 9.6: the step used the gradients as backward() left them")


def test_9_6_a_step_that_returns_nothing_is_told_so():
    def no_return(net, optimizer, x, y, max_norm):
        clipped_step(net, optimizer, x, y, max_norm)

    assert line_of("9.6", {"clipped_step": no_return}) == (
        "✗ 9.6: clipped_step(...) at step 1 is None: no `return` line ran (is it missing, "
        "or does an `if` leave this case out?).")


def test_9_6_the_check_draws_no_random_numbers():
    """The check's model starts from fixed weights: checking must not move the lesson's
    random stream (nn.Linear would draw its start)."""
    eg.random.set_seed(5)
    before = eg.randn(3).numpy()
    eg.random.set_seed(5)
    line_of("9.6", SOLUTIONS["9.6"])
    assert np.array_equal(eg.randn(3).numpy(), before)
