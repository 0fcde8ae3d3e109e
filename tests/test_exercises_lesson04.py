"""Lesson 4's exercises: the reference answers pass, a nudged answer fails, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.exercises import ExerciseNotPassed
from edugraph.exercises.checking import find
from tests.exercise_lines import line_of


def momentum_path(grad_fn, start, lr, momentum, num_steps):
    w = np.array(start, dtype=float)
    a = np.zeros_like(w)
    path = [w]
    for _ in range(num_steps):
        a = momentum * a + grad_fn(w)
        w = w - lr * a
        path.append(w)
    return np.array(path)


def adam_path(grad_fn, start, lr, num_steps, beta1=0.9, beta2=0.999, epsilon=1e-8):
    w = np.array(start, dtype=float)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    path = [w]
    for t in range(1, num_steps + 1):
        g = grad_fn(w)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g ** 2
        lr_t = lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
        w = w - lr_t * m / (np.sqrt(v) + epsilon)
        path.append(w)
    return np.array(path)


def rmsprop_two_steps():
    w, r = np.array([-9.0, 2.0]), np.ones(2)
    for _ in range(2):
        g = np.array([0.1 * w[0], 2 * w[1]])
        r = 0.9 * r + 0.1 * g ** 2
        w = w - 0.3 * g / np.sqrt(r + 1e-10)
    return {"rms_after_2": r, "p_after_2": w}


SOLUTIONS = {
    "4.1": {"lr_one_step": 0.05, "lr_max": 0.1},
    "4.2": {"momentum_path": momentum_path},
    "4.3": {"adam_path": adam_path},
    "4.4": rmsprop_two_steps(),
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


@pytest.mark.parametrize("exercise_id", ["4.1", "4.4"])
def test_a_nudged_answer_fails(exercise_id):
    for name, value in SOLUTIONS[exercise_id].items():
        nudged = {**SOLUTIONS[exercise_id], name: np.asarray(value) * 1.001}
        assert line_of(exercise_id, nudged).startswith(f"✗ {exercise_id}: "), name


def test_4_1_rates_that_work_but_are_not_the_bound_get_a_hint():
    for lr_max in (0.02, 0.099):        # the lecture's rate; a rate just below the bound
        assert line_of("4.1", {"lr_one_step": 0.05, "lr_max": lr_max}).startswith(
            "✗ 4.1: lr_max is a rate that works, but not the largest")
    assert line_of("4.1", {"lr_one_step": eg.tensor(0.05), "lr_max": np.float32(0.1)}
                   ).startswith("✓ 4.1")


def test_4_2_a_nudged_rule_fails_and_rules_right_at_the_first_step_only_fail():
    def nudged(grad_fn, start, lr, momentum, num_steps):
        return momentum_path(grad_fn, start, lr, momentum * 0.999, num_steps)

    assert line_of("4.2", {"momentum_path": nudged}).startswith("✗ 4.2: not right yet")

    def forgets_after_three(grad_fn, start, lr, momentum, num_steps):
        right = momentum_path(grad_fn, start, lr, momentum, 3)
        rest = momentum_path(grad_fn, right[-1], lr, momentum, num_steps - 3)
        return np.concatenate([right, rest[1:]])

    assert line_of("4.2", {"momentum_path": forgets_after_three}).startswith("✗ 4.2: ")


def test_4_2_forms_equal_to_tf1s_rule_pass():
    """With a fixed rate, the rate inside the slot or a negated slot walk the same path; a
    float32 loop, a list of positions and an eager tensor are fine too."""
    def rate_inside(grad_fn, start, lr, momentum, num_steps):
        w = np.array(start, dtype=float)
        a, path = 0 * w, [w]
        for _ in range(num_steps):
            a = momentum * a - lr * grad_fn(w)
            w = w + a
            path.append(w)
        return path

    def in_float32(grad_fn, start, lr, momentum, num_steps):
        w = np.array(start, dtype=np.float32)
        a, path = np.zeros_like(w), [w]
        for _ in range(num_steps):
            a = np.float32(momentum) * a + grad_fn(w).astype(np.float32)
            w = w - np.float32(lr) * a
            path.append(w)
        return eg.tensor(np.array(path))

    for answer in (rate_inside, in_float32):
        assert line_of("4.2", {"momentum_path": answer}).startswith("✓ 4.2"), answer.__name__


def test_4_2_a_wrongly_shaped_path_or_a_fixed_gradient_is_explained():
    def last_only(grad_fn, start, lr, momentum, num_steps):
        return momentum_path(grad_fn, start, lr, momentum, num_steps)[-1]

    assert line_of("4.2", {"momentum_path": last_only}) == (
        "✗ 4.2: momentum_path(..., lr=0.4, momentum=0.9, num_steps=12) should return the "
        "positions as an array of shape (num_steps + 1,) + start's shape, here (13, 2); it "
        "returned shape (2,).")

    def valley_only(grad_fn, start, lr, momentum, num_steps):
        return momentum_path(lambda p: np.array([0.1 * p[0], 2 * p[1]]), start, lr,
                             momentum, num_steps)

    line = line_of("4.2", {"momentum_path": valley_only})
    assert line.startswith("✗ 4.2: running your answer raised IndexError"), line
    assert "(in <lambda>, line" in line


def test_4_3_nan_from_v_of_g_or_from_t_counted_from_0_is_explained():
    def v_of_g(grad_fn, start, lr, num_steps, beta1=0.9, beta2=0.999, epsilon=1e-8):
        w, m, v = np.array(start, float), 0.0, 0.0
        path = [w]
        for t in range(1, num_steps + 1):
            g = grad_fn(w)
            m, v = beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g  # not g²
            lr_t = lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
            w = w - lr_t * m / (np.sqrt(v) + epsilon)
            path.append(w)
        return path

    def t_from_0(grad_fn, start, lr, num_steps, beta1=0.9, beta2=0.999, epsilon=1e-8):
        w, m, v = np.array(start, float), 0.0, 0.0
        path = [w]
        for t in np.arange(num_steps):          # 0, 1, ...: 1 - β1⁰ = 0
            g = grad_fn(w)
            m, v = beta1 * m + (1 - beta1) * g, beta2 * v + (1 - beta2) * g * g
            lr_t = lr * np.sqrt(1 - beta2 ** t) / (1 - beta1 ** t)
            w = w - lr_t * m / (np.sqrt(v) + epsilon)
            path.append(w)
        return path

    for answer in (v_of_g, t_from_0):
        with np.errstate(all="ignore"):
            line = line_of("4.3", {"adam_path": answer})
        assert line == (
            "✗ 4.3: adam_path(..., lr=0.5, num_steps=12, beta1=0.9, beta2=0.999, "
            "epsilon=1e-08) holds nan or inf: a square root of a negative number (v averages "
            "g², which is never negative), or a division by 1 - β1ᵗ with t = 0 (t counts "
            "steps from 1)?"), answer.__name__


def test_4_3_a_nudged_rule_fails_and_a_signature_without_betas_is_explained():
    def nudged(grad_fn, start, lr, num_steps, beta1=0.9, beta2=0.999, epsilon=1e-8):
        return adam_path(grad_fn, start, lr * 1.01, num_steps, beta1, beta2, epsilon)

    assert line_of("4.3", {"adam_path": nudged}).startswith("✗ 4.3: not right yet")

    def no_betas(grad_fn, start, lr, num_steps):
        return adam_path(grad_fn, start, lr, num_steps)

    assert line_of("4.3", {"adam_path": no_betas}).startswith(
        "✗ 4.3: running your answer raised TypeError: ")


def test_4_4_values_read_with_get_slot_pass_and_the_wrong_slot_or_a_tensor_is_explained():
    rmsprop = eg.train.RMSPropOptimizer(0.3)
    with eg.Graph().as_default():
        p = eg.Variable(np.array([-9.0, 2.0], np.float32), name="p")
        train = rmsprop.minimize(0.05 * p[0] * p[0] + p[1] * p[1])
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
            read = {name: sess.run(rmsprop.get_slot(p, name)) for name in ("rms", "momentum")}
            position = sess.run(p)
        assert line_of("4.4", {"rms_after_2": rmsprop.get_slot(p, "rms"),
                               "p_after_2": position}).startswith(
            "✗ 4.4: rms_after_2 is a symbolic tensor of a graph")
    assert line_of("4.4", {"rms_after_2": read["rms"], "p_after_2": position}
                   ).startswith("✓ 4.4")
    assert line_of("4.4", {"rms_after_2": read["momentum"], "p_after_2": position}
                   ).startswith("✗ 4.4: rms_after_2 holds the last step")


def test_4_4_one_name_still_unset_is_begun_and_named():
    with pytest.raises(ExerciseNotPassed, match="^✗ 4.4: rms_after_2 is not set yet"):
        find("4.4").verify({"rms_after_2": ..., "p_after_2": np.zeros(2)})


def test_4_3_the_papers_form_with_tf1s_epsilon_rescaled_passes():
    """m̂ / (√v̂ + ε̂) with ε̂ = ε / √(1 - β2ᵗ) is TF1's step written with the corrected
    moments: the same path."""
    def with_corrected_moments(grad_fn, start, lr, num_steps, beta1=0.9, beta2=0.999,
                               epsilon=1e-8):
        w = np.array(start, dtype=float)
        m, v, path = np.zeros_like(w), np.zeros_like(w), [w]
        for t in range(1, num_steps + 1):
            g = grad_fn(w)
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g * g
            m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)
            w = w - lr * m_hat / (np.sqrt(v_hat) + epsilon / np.sqrt(1 - beta2 ** t))
            path.append(w)
        return np.array(path)

    assert line_of("4.3", {"adam_path": with_corrected_moments}).startswith("✓ 4.3")
