"""Lesson 1's exercises: the reference answers pass, a nudged answer fails, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.ops.base import Op
from tests.exercise_lines import line_of


def by_hand_1_1():
    q1 = 2.0 * -1.0
    z1 = q1 + 0.5
    f1 = z1 ** 2
    df1_dz = 2 * z1
    return dict(q1=q1, z1=z1, f1=f1, df1_dw=df1_dz * -1.0, df1_dx=df1_dz * 2.0,
                df1_db=df1_dz)


def central(fn, x, eps=1e-5):
    return (fn(x + eps) - fn(x - eps)) / (2 * eps)


class Cube(Op):
    name = "cube"

    def forward(self, xp, x):
        return x ** 3

    def backward(self, grad, out, x):
        return (grad * 3 * x * x,)


class Ratio(Op):
    name = "ratio"

    def forward(self, xp, x, y):
        return x / y

    def backward(self, grad, out, x, y):
        return grad / y, -grad * out / y        # x / y² is out / y


SOLUTIONS = {
    "1.1": by_hand_1_1(),
    "1.2": {"dh_dx": 2.0, "dh_dy": 3.0},
    "1.3": {"dg_da": 3.0 + 2.0 + 1.0, "dg_db": 3.0},
    "1.4": {"numeric_derivative": central},
    "1.5": {"Cube": Cube},
    "1.6": {"dm_da": 3.0, "dm_dc": 0.0},
    "1.7": {"Ratio": Ratio},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


@pytest.mark.parametrize("exercise_id", ["1.1", "1.2", "1.3", "1.6"])
def test_a_nudged_number_fails(exercise_id):
    for name, value in SOLUTIONS[exercise_id].items():
        nudged = {**SOLUTIONS[exercise_id], name: value + 0.01}
        assert line_of(exercise_id, nudged).startswith(f"✗ {exercise_id}: "), name


def test_1_1_accepts_a_scalar_tensor_and_a_numpy_number_as_numbers():
    answer = {**SOLUTIONS["1.1"], "f1": eg.tensor(2.25), "q1": np.float32(-2.0)}
    assert line_of("1.1", answer).startswith("✓ 1.1")


def test_1_4_a_nudged_formula_fails_and_an_error_in_it_names_the_students_line():
    assert line_of("1.4", {"numeric_derivative": lambda f, x, e: central(f, x, e) * 1.001}
                   ).startswith("✗ 1.4: not right yet")

    def numeric_derivative(fn, x, eps):
        return (fn(x + eps) - fn(x - eps)) / (2 * epsilon)  # noqa: F821

    line = line_of("1.4", {"numeric_derivative": numeric_derivative})
    assert line.startswith("✗ 1.4: running your answer raised NameError: name 'epsilon' is "
                           "not defined (in numeric_derivative, line")
    assert line.endswith("return (fn(x + eps) - fn(x - eps)) / (2 * epsilon)  # noqa: F821)")


def test_1_5_a_bare_tensor_from_backward_is_explained():
    """The engine zips backward's result with the inputs: a bare tensor would be iterated."""
    class BareCube(Cube):
        def backward(self, grad, out, x):
            return grad * 3 * x * x

    assert line_of("1.5", {"Cube": BareCube}) == (
        "✗ 1.5: backward must return a tuple with one gradient per input, e.g. "
        "`return (grad * ...,)` (mind the comma); it returned Tensor.")


def test_1_5_a_backward_on_raw_arrays_or_a_non_op_gets_a_hint():
    class NumpyCube(Cube):
        def backward(self, grad, out, x):
            return (grad.numpy() * 3 * x.numpy() ** 2,)

    assert line_of("1.5", {"Cube": NumpyCube}) == (
        "✗ 1.5: backward should build the gradient from the tensors it gets (grad * ...), "
        "not return a ndarray: the engine adds and reshapes tensors.")
    assert line_of("1.5", {"Cube": lambda x: x ** 3}) == (
        "✗ 1.5: Cube should be a class that subclasses Op (class Cube(Op): ...).")

    class Wrong(Cube):
        def backward(self, grad, out, x):
            return (grad * 3 * x * x, grad)

    assert line_of("1.5", {"Cube": Wrong}) == \
        "✗ 1.5: backward returned 2 gradients for an op with one input."


def test_1_7_a_nudged_gradient_fails_and_the_contract_is_explained():
    class Nudged(Ratio):
        def backward(self, grad, out, x, y):
            grad_x, grad_y = super().backward(grad, out, x, y)
            return grad_x, grad_y * 1.01

    assert line_of("1.7", {"Ratio": Nudged}).startswith("✗ 1.7: not right yet")

    class OneGradient(Ratio):
        def backward(self, grad, out, x, y):
            return (grad / y,)

    assert line_of("1.7", {"Ratio": OneGradient}) == (
        "✗ 1.7: backward returned 1 gradient(s); x / y has two inputs, so it returns two, "
        "`return grad_x, grad_y`.")

    class OnArrays(Ratio):
        def backward(self, grad, out, x, y):
            return grad / y, -(grad * x).numpy() / (y * y).numpy()

    assert line_of("1.7", {"Ratio": OnArrays}) == (
        "✗ 1.7: the gradient for y should be built from the tensors backward gets (grad / y...), "
        "not a ndarray.")


def test_1_7_the_stub_is_not_attempted():
    class Stub(Op):
        name = "ratio"

        def forward(self, xp, x, y):
            raise NotImplementedError()

        def backward(self, grad, out, x, y):
            raise NotImplementedError()

    assert line_of("1.7", {"Ratio": Stub}).startswith("1.7 not attempted yet")


def test_1_4_an_equivalent_central_difference_passes_and_a_step_of_its_own_is_explained():
    def averaged(fn, x, eps):           # the mean of the two one-sided differences
        return ((fn(x + eps) - fn(x)) / eps + (fn(x) - fn(x - eps)) / eps) / 2

    assert line_of("1.4", {"numeric_derivative": averaged}).startswith("✓ 1.4")
    assert line_of("1.4", {"numeric_derivative": lambda f, x, e: central(f, x)}) == (
        "✗ 1.4: your numbers are the exact slopes, not the central differences with the step "
        "the check gives: use the argument eps (its steps are large on purpose).")


def test_1_5_and_1_7_a_forward_made_of_edugraph_functions_is_explained():
    class TensorCube(Cube):
        def forward(self, xp, x):
            return eg.pow(x, 3)

    class TensorRatio(Ratio):
        def forward(self, xp, x, y):
            return eg.divide(x, y)

    assert line_of("1.5", {"Cube": TensorCube}) == (
        "✗ 1.5: forward should return a numpy array computed from the arrays it gets "
        "(x ** 3), not a tensor of shape (5,); edugraph's functions, which make tensors, "
        "belong in backward.")
    assert line_of("1.7", {"Ratio": TensorRatio}).startswith(
        "✗ 1.7: forward should return a numpy array computed from the arrays it gets (x / y)")


def test_1_6_a_split_that_forgets_the_factor_3_is_told_the_sum():
    assert line_of("1.6", {"dm_da": 0.5, "dm_dc": 0.5}) == (
        "✗ 1.6: the gradients should add up to the upstream gradient of the max, which is 3 "
        "(the factor in front of it), not 1.")


@pytest.mark.parametrize("exercise_id", ["1.1", "1.2"])
@pytest.mark.parametrize("wrap", [lambda v: np.array([v]), lambda v: eg.tensor([v])],
                         ids=["array", "tensor"])
def test_a_number_in_an_array_of_shape_1_is_not_one_number(exercise_id, wrap):
    """1.1 and 1.2 ask for numbers: the right values in arrays of shape (1,) are refused
    alike, with how to take the number out."""
    answer = {k: wrap(v) for k, v in SOLUTIONS[exercise_id].items()}
    line = line_of(exercise_id, answer)
    assert line.startswith(f"✗ {exercise_id}: ") and "shape (1,)" in line, line
    assert line.endswith("take the number out of it with .item()."), line


def test_one_gradient_with_a_slipped_sign_gets_the_sign_hint():
    from tests.exercise_lines import hint_of
    hint = hint_of("1.1", "a gradient has the right size but the wrong sign")
    for name in ("df1_dw", "df1_dx", "df1_db"):
        slipped = {**SOLUTIONS["1.1"], name: -SOLUTIONS["1.1"][name]}
        assert line_of("1.1", slipped) == hint
