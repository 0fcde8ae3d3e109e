"""Lesson 2's exercises: the reference answers pass, a nudged answer fails, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import json
from pathlib import Path

import numpy as np
import pytest

import edugraph as eg
from edugraph.exercises.lesson02 import G_UP
from tests.exercise_lines import line_of

LESSON = Path(__file__).resolve().parent.parent / "lessons" / "02_tensors_devices.ipynb"


def backward_by_hand(x, y, z):
    b = x * y + z
    grad_b = 2 * b                  # the sum sends 1, the square multiplies by 2b
    return grad_b * y, grad_b * x, grad_b


def mean_of(t):
    return t.mean().item()


def matmul_backward(X, W, dY):
    return dY @ W.T, X.T @ dY


def cpu_seconds(n):
    return 2 * n ** 3 / 540e9


def gpu_seconds(n):
    return 3 * 4 * n * n / 16e9 + 2 * n ** 3 / 11.4e12


def mixed_precision_updates(w_start, updates):
    master = w_start.numpy().astype(np.float32)
    for update in updates:
        master -= update.numpy()
    return master.astype(np.float16)


SOLUTIONS = {
    "2.1": {"shape_mul": (5, 4, 3), "shape_add": (3, 1, 3), "shape_sub": (8, 8)},
    # the upstream gradients summed down the rows (b_row) and across the columns (b_col)
    "2.2": {"grad_b_row": np.array([1 + 0.5 + 2 - 0.5, 2 + 3 - 1 + 1, -1 + 1 + 2 + 3]),
            "grad_b_col": np.array([[1 + 2 - 1], [0.5 + 3 + 1], [2 - 1 + 2], [-0.5 + 1 + 3]])},
    "2.3": {"backward_by_hand": backward_by_hand},
    "2.4": {"eps_float32": 2.0 ** -23},       # float32 keeps 23 bits after the leading 1
    "2.5": {"mean_of": mean_of},
    "2.6": {"matmul_backward": matmul_backward},
    # 12 n² / 16e9 < 2 n³ (1 / 540e9 - 1 / 11.4e12)  ⇔  n > 212.6
    "2.7": {"cpu_seconds": cpu_seconds, "gpu_seconds": gpu_seconds, "break_even_n": 213},
    "2.8": {"mixed_precision_updates": mixed_precision_updates},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


def test_2_1_a_changed_shape_fails_and_says_which_are_right():
    for name, value in SOLUTIONS["2.1"].items():
        changed = {**SOLUTIONS["2.1"], name: (value[0] + 1,) + value[1:]}
        line = line_of("2.1", changed)
        assert line.startswith("✗ 2.1: not right yet.") and f"{name} is not" in line, line


def test_2_1_accepts_a_shape_from_edugraph_or_numpy_and_a_list():
    answer = {"shape_mul": (eg.ones((5, 1, 3)) * eg.ones((4, 1))).shape,
              "shape_add": np.ones((3, 1, 3)).shape, "shape_sub": [8, 8]}
    assert line_of("2.1", answer).startswith("✓ 2.1")


def test_2_1_a_tensor_instead_of_its_shape_is_explained():
    answer = {**SOLUTIONS["2.1"], "shape_mul": eg.ones((5, 4, 3))}
    assert line_of("2.1", answer) == ("✗ 2.1: shape_mul should be a shape, a tuple of whole "
                                      "numbers such as (2, 3); it is a tensor of shape "
                                      "(5, 4, 3).")


def test_2_1_a_column_minus_a_column_earns_the_loss_bug_hint():
    line = line_of("2.1", {**SOLUTIONS["2.1"], "shape_sub": (8, 1)})
    assert line.startswith("✗ 2.1: shape_sub: (8,) lines up from the right"), line


@pytest.mark.parametrize("name", ["grad_b_row", "grad_b_col"])
def test_2_2_a_nudged_gradient_fails(name):
    nudged = {**SOLUTIONS["2.2"], name: SOLUTIONS["2.2"][name] + 0.01}
    assert line_of("2.2", nudged).startswith("✗ 2.2: not right yet."), name


def test_2_2_accepts_edugraphs_gradients_and_lists():
    b_row = eg.tensor(np.zeros(3), requires_grad=True)
    b_col = eg.tensor(np.zeros((4, 1)), requires_grad=True)
    ((eg.ones((4, 3), dtype=eg.float64) + b_row + b_col) * eg.tensor(G_UP)).sum().backward()
    assert line_of("2.2", {"grad_b_row": b_row.grad, "grad_b_col": b_col.grad}
                   ).startswith("✓ 2.2")
    assert line_of("2.2", {name: value.tolist() for name, value in SOLUTIONS["2.2"].items()}
                   ).startswith("✓ 2.2")


def test_2_2_the_right_numbers_in_a_row_or_summed_over_everything_get_their_hints():
    as_row = {**SOLUTIONS["2.2"], "grad_b_row": SOLUTIONS["2.2"]["grad_b_row"][None, :]}
    assert line_of("2.2", as_row).startswith("✗ 2.2: the numbers are right but a shape is not")
    total = {**SOLUTIONS["2.2"], "grad_b_row": G_UP.sum()}
    assert line_of("2.2", total).startswith("✗ 2.2: you summed along the wrong axis, or along "
                                            "all of them")
    ones = {**SOLUTIONS["2.2"], "grad_b_col": np.ones((4, 1))}
    assert line_of("2.2", ones).startswith("✗ 2.2: your gradient does not depend on g_up")


def test_2_2_the_notebooks_upstream_gradient_is_the_checks():
    """The answer cell gives the student g_up; the check computes with G_UP."""
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    answer = next("".join(c["source"]) for c in cells
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex2_2_answer")
    namespace = {"np": np}
    exec(answer.split("### BEGIN SOLUTION")[0], namespace)
    assert np.array_equal(namespace["g_up"], G_UP)


def test_2_3_a_nudged_function_fails_and_tensors_from_backward_pass():
    def nudged(x, y, z):
        return tuple(g * 1.001 for g in backward_by_hand(x, y, z))

    assert line_of("2.3", {"backward_by_hand": nudged}).startswith("✗ 2.3: not right yet.")

    def with_edugraph(x, y, z):
        leaves = [eg.tensor(v, requires_grad=True) for v in (x, y, z)]
        eg.sum((leaves[0] * leaves[1] + leaves[2]) ** 2).backward()
        return tuple(leaf.grad for leaf in leaves)

    assert line_of("2.3", {"backward_by_hand": with_edugraph}).startswith("✓ 2.3")


def test_2_3_a_function_for_the_lessons_shape_only_names_the_students_line():
    N, D = 3, 4

    def only_3_by_4(x, y, z):
        grad_b = 2 * (x * y + z) * np.ones((N, D))
        return grad_b * y, grad_b * x, grad_b

    line = line_of("2.3", {"backward_by_hand": only_3_by_4})
    assert line.startswith("✗ 2.3: running your answer raised ValueError: operands could not "
                           "be broadcast together"), line
    assert line.endswith("grad_b = 2 * (x * y + z) * np.ones((N, D)))"), line


def test_2_3_a_missing_return_or_a_wrong_number_of_arrays_is_explained():
    assert line_of("2.3", {"backward_by_hand": lambda x, y, z: None}) == (
        "✗ 2.3: backward_by_hand returned None: is its `return grad_x, grad_y, grad_z` line "
        "missing?")
    assert line_of("2.3", {"backward_by_hand": lambda x, y, z: backward_by_hand(x, y, z)[:2]}
                   ) == ("✗ 2.3: backward_by_hand should return three arrays, `return grad_x, "
                         "grad_y, grad_z`; it returned 2 values.")


def test_2_3_a_gradient_of_the_wrong_shape_gets_the_expected_form():
    def summed_z(x, y, z):
        grad_x, grad_y, grad_z = backward_by_hand(x, y, z)
        return grad_x, grad_y, grad_z.sum()

    line = line_of("2.3", {"backward_by_hand": summed_z})
    assert line.startswith("✗ 2.3: grad_x and grad_y are right, grad_z is not"), line


def test_2_4_a_nudged_epsilon_fails_and_a_float32_or_a_tensor_passes():
    assert line_of("2.4", {"eps_float32": 2.0 ** -23 * 1.01}).startswith("✗ 2.4: not right")
    assert line_of("2.4", {"eps_float32": np.finfo(np.float32).eps}).startswith("✓ 2.4")
    assert line_of("2.4", {"eps_float32": eg.tensor(2.0 ** -23)}).startswith("✓ 2.4")


def test_2_4_the_loop_in_python_floats_and_the_smallest_subnormal_get_their_hints():
    eps = 1.0
    while 1.0 + eps / 2 != 1.0:             # Python floats: float64
        eps /= 2
    assert line_of("2.4", {"eps_float32": eps}).startswith("✗ 2.4: that is float64's ε")
    assert line_of("2.4", {"eps_float32": 1.4e-45}).startswith(
        "✗ 2.4: that is the smallest positive float32")


def test_2_5_a_nudged_mean_fails():
    assert line_of("2.5", {"mean_of": lambda t: t.mean().item() + 0.01}).startswith(
        "✗ 2.5: not right yet.")


@pytest.mark.parametrize("mean", [lambda t: float(t.mean()),
                                  lambda t: float(t.numpy().mean()),
                                  lambda t: t.cpu().sum().item() / t.numel()],
                         ids=["float of a tensor", "via numpy", "sum over numel"])
def test_2_5_other_right_ways_pass(mean):
    assert line_of("2.5", {"mean_of": mean}).startswith("✓ 2.5")


def test_2_5_a_float64_numpy_number_and_an_int_are_not_a_python_float():
    line = line_of("2.5", {"mean_of": lambda t: t.numpy().mean(dtype=np.float64)})
    assert line.startswith("✗ 2.5: mean_of returns a numpy number"), line
    assert line_of("2.5", {"mean_of": lambda t: int(t.mean().item())}) == (
        "✗ 2.5: mean_of(t) should return a Python float; it returned an int (1).")


def test_2_5_an_error_on_cpu_names_the_students_line_and_cpu_only_code_fails():
    def mean_of_elements(t):        # float() of a tensor of many elements: which one?
        return float(t)

    line = line_of("2.5", {"mean_of": mean_of_elements})
    assert line.startswith("✗ 2.5: running your answer raised ValueError: item() needs a "
                           "tensor with one element"), line
    assert line.endswith("return float(t))"), line

    def cpu_only(t):
        return t.mean().item() if str(t.device) == "cpu:0" else 0.0

    assert line_of("2.5", {"mean_of": cpu_only}).startswith("✗ 2.5: not right yet.")


def test_2_5_a_function_that_changes_its_input_cannot_spoil_the_next_check():
    def shifts_then_means(t):
        t.add_(1.0)
        return t.mean().item() - 1.0

    for _ in range(2):      # each check makes its own tensors
        assert line_of("2.5", {"mean_of": shifts_then_means}).startswith("✓ 2.5")


def test_2_6_a_nudged_gradient_fails_and_tensors_pass():
    def nudged(X, W, dY):
        dX, dW = matmul_backward(X, W, dY)
        return dX, dW * 1.001

    assert line_of("2.6", {"matmul_backward": nudged}).startswith("✗ 2.6: not right yet.")

    def with_edugraph(X, W, dY):
        X, W = eg.tensor(X, requires_grad=True), eg.tensor(W, requires_grad=True)
        ((X @ W) * eg.tensor(dY)).sum().backward()
        return X.grad, W.grad

    assert line_of("2.6", {"matmul_backward": with_edugraph}).startswith("✓ 2.6")


def test_2_6_a_shape_error_on_the_square_problem_names_the_students_line():
    def no_transpose_at_all(X, W, dY):
        return dY @ W, X @ dY[:2]

    line = line_of("2.6", {"matmul_backward": no_transpose_at_all})
    assert line.startswith("✗ 2.6: running your answer raised ValueError"), line
    assert line.endswith("return dY @ W, X @ dY[:2])"), line


def test_2_6_one_array_or_three_is_explained():
    assert line_of("2.6", {"matmul_backward": lambda X, W, dY: dY @ W.T}).startswith(
        "✗ 2.6: matmul_backward should return two arrays, `return dX, dW`; it returned a "
        "numpy array")
    assert line_of("2.6", {"matmul_backward": lambda X, W, dY: (dY @ W.T, X.T @ dY, dY)}
                   ) == ("✗ 2.6: matmul_backward should return two arrays, `return dX, dW`; "
                         "it returned 3 values.")


def test_2_7_the_notebooks_rates_are_the_checks():
    """The answer cell gives the student the lecture's rates; the check computes with its own."""
    from edugraph.exercises import lesson02
    cells = json.loads(LESSON.read_text(encoding="utf-8"))["cells"]
    answer = next("".join(c["source"]) for c in cells
                  if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "ex2_7_answer")
    namespace = {}
    exec(answer.split("### BEGIN SOLUTION")[0], namespace)
    assert (namespace["CPU_FLOPS"], namespace["GPU_FLOPS"], namespace["PCIE_BYTES"]) == (
        lesson02.CPU_FLOPS, lesson02.GPU_FLOPS, lesson02.PCIE_BYTES)


def test_2_7_a_nudged_rate_or_break_even_fails():
    answer = SOLUTIONS["2.7"]
    assert line_of("2.7", {**answer, "gpu_seconds": lambda n: gpu_seconds(n) * 1.01}
                   ).startswith("✗ 2.7: not right yet.")
    line = line_of("2.7", {**answer, "break_even_n": 300})
    assert line.startswith("✗ 2.7: not right yet.") and "break_even_n is not" in line, line
    assert line_of("2.7", {**answer, "break_even_n": 214}).startswith(
        "✗ 2.7: your functions are right; break_even_n is the smallest n")


def test_2_7_a_function_that_returns_no_number_is_explained():
    line = line_of("2.7", {**SOLUTIONS["2.7"], "cpu_seconds": lambda n: None})
    assert line == ("✗ 2.7: cpu_seconds(16) is None: no `return` line ran (is it missing, "
        "or does an `if` leave this case out?)."), line


def test_2_8_other_right_ways_pass_and_a_nudged_one_fails():
    def with_tensors(w_start, updates):
        master = w_start.to(eg.float32)
        for update in updates:
            master = master - update.to(eg.float32)
        return master.to(eg.float16)

    def summed_first(w_start, updates):
        total = sum(u.numpy().astype(np.float64) for u in updates)
        return (w_start.numpy().astype(np.float64) - total).astype(np.float16)

    for right in (with_tensors, summed_first):
        assert line_of("2.8", {"mixed_precision_updates": right}).startswith("✓ 2.8")
    assert line_of("2.8", {"mixed_precision_updates":
                           lambda w, u: with_tensors(w, u[:200])}).startswith(
        "✗ 2.8: not right yet.")


def test_2_8_weights_of_another_shape_are_explained():
    line = line_of("2.8", {"mixed_precision_updates": lambda w, u: w.sum()})
    assert line == ("✗ 2.8: mixed_precision_updates should return the weights, of w_start's "
                    "shape (5,); it returned the shape ()."), line


def test_2_3_a_stacked_array_is_described_by_its_shape():
    def stacked(x, y, z):
        return np.stack(backward_by_hand(x, y, z))

    line = line_of("2.3", {"backward_by_hand": stacked})
    assert line.startswith("✗ 2.3: backward_by_hand should return three arrays, `return grad_x, "
                           "grad_y, grad_z`; it returned a numpy array of shape (3, 3, 4)"), line


def test_2_7_n_cubed_flops_on_the_gpu_alone_gets_the_flops_hint():
    def gpu_n_cubed(n):
        return 3 * 4 * n * n / 16e9 + n ** 3 / 11.4e12

    answer = {**SOLUTIONS["2.7"], "gpu_seconds": gpu_n_cubed}
    assert line_of("2.7", answer).startswith("✗ 2.7: an n × n matmul computes n² results")
