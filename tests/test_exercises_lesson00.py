"""The start page's warm-up exercises: the reference answers pass, nudged answers fail, and the
mistakes that need more than their example (tests/test_exercises.py feeds every example) are
seen."""
import math

import numpy as np
import pytest

import edugraph as eg
from tests.exercise_lines import line_of


def sigmoid(t):
    return 1 / (1 + np.exp(-t))


SOLUTIONS = {
    "0.1": {"dy_dx": 2 * (3 * 2.0 + 1) * 3},
    "0.2": {"w_shape": (64, 10), "out_shape": (32, 10)},
    "0.3": {"sigmoid": sigmoid},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


def test_0_1_a_nudged_number_fails_and_a_tensor_is_a_number():
    assert line_of("0.1", {"dy_dx": 42.01}) == \
        "✗ 0.1: not right yet. dy_dx is one number (checked to 1e-6)."
    assert line_of("0.1", {"dy_dx": eg.tensor(42.0)}).startswith("✓ 0.1")


def test_0_2_shapes_may_be_lists_or_a_real_shape_but_not_other_sizes():
    W = np.zeros((64, 10))
    assert line_of("0.2", {"w_shape": W.shape, "out_shape": [32, 10]}).startswith("✓ 0.2")
    assert line_of("0.2", {"w_shape": (64, 10), "out_shape": (32, 64)}).startswith(
        "✗ 0.2: not right yet. w_shape and out_shape are shapes with two sizes each")
    assert "w_shape is right; out_shape is not" in \
        line_of("0.2", {"w_shape": (64, 10), "out_shape": (32, 64)})
    assert line_of("0.2", {"w_shape": "(64, 10)", "out_shape": (32, 10)}) == (
        "✗ 0.2: w_shape should be a shape, a tuple of whole numbers such as (2, 3); it is a "
        "str ('(64, 10)').")


def test_0_3_math_exp_is_explained_and_a_nudged_formula_fails():
    assert line_of("0.3", {"sigmoid": lambda t: 1 / (1 + math.exp(-t))}) == (
        "✗ 0.3: sigmoid must work on a whole array at once: use np.exp, which works "
        "elementwise (math.exp takes one number).")
    assert line_of("0.3", {"sigmoid": lambda t: 1 / (1 + np.exp(-1.01 * t))}).startswith(
        "✗ 0.3: not right yet.")


def test_0_3_a_function_that_loses_the_shape_is_explained():
    assert line_of("0.3", {"sigmoid": lambda t: np.mean(sigmoid(t))}).startswith(
        "✗ 0.3: sigmoid(an array of shape (2, 3)) returned shape ()")
