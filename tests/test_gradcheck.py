"""eg.gradcheck: right gradients pass, wrong ones are named (output, input, index, both values,
relative error), and its verdicts and tolerances are torch.autograd.gradcheck's."""
import traceback

import numpy as np
import pytest

import edugraph as eg
from edugraph.ops.base import Op, apply


class Cube(Op):
    name = "cube"

    def __init__(self, factor=3.0):
        self.factor = factor            # the local derivative's factor: 3 is right

    def forward(self, xp, x):
        return x ** 3

    def backward(self, grad, out, x):
        return (grad * self.factor * x * x,)


def torch_cube(torch):
    """The same node in PyTorch, with the same (possibly wrong) factor (torch is only the
    reference: the suite runs without it, these comparisons where it is installed)."""

    class TorchCube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, factor):
            ctx.save_for_backward(x)
            ctx.factor = factor
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            (x,) = ctx.saved_tensors
            return grad * ctx.factor * x * x, None
    return TorchCube


POINTS = [0.5, -1.0, 2.0]


def leaf(values, dtype=eg.float64, device=None):
    return eg.tensor(values, dtype=dtype, device=device, requires_grad=True)


def cube(factor=3.0):
    return lambda t: apply(Cube(factor), t)


def test_right_gradients_pass_for_one_and_several_inputs():
    rng = np.random.default_rng(0)
    x = leaf(POINTS)
    assert eg.gradcheck(eg.sin, (x,)) is True
    assert eg.gradcheck(cube(), x) is True                  # a bare tensor is one input
    a, b = leaf(rng.standard_normal((3, 4))), leaf(rng.standard_normal((4, 2)))
    assert eg.gradcheck(eg.matmul, (a, b))
    bias = leaf(rng.standard_normal(2))
    assert eg.gradcheck(lambda a, b, c: eg.tanh(a @ b + c), (a, b, bias))   # broadcast bias


def test_a_wrong_backward_is_named_with_both_values_and_the_relative_error():
    x = leaf(POINTS)
    with pytest.raises(eg.GradcheckError) as failure:
        eg.gradcheck(lambda t: apply(Cube(factor=1.0), t).sum(), (x,))
    # d(x³)/dx at 2.0: backward says 1·2² = 4, the differences 3·2² = 12
    assert str(failure.value) == (
        "Jacobian mismatch for output 0 with respect to input 0, at input index (2,): "
        "analytic 4 (from backward), numeric 12 (central differences), relative error "
        "0.667. 3 of 3 entries disagree; this one the most (eps=1e-06, atol=1e-05, "
        "rtol=0.001).")
    assert isinstance(failure.value, RuntimeError)          # as torch's GradcheckError


def test_a_non_scalar_output_names_the_output_index_too():
    with pytest.raises(eg.GradcheckError, match=r"at output index \(2,\) and input index "
                                                r"\(2,\): analytic 4 .* 3 of 9 entries"):
        eg.gradcheck(cube(1.0), leaf(POINTS))


def test_raise_exception_false_returns_false_and_changes_no_grad():
    x = leaf(POINTS)
    assert eg.gradcheck(cube(1.0), x, raise_exception=False) is False
    assert eg.gradcheck(cube(), x, raise_exception=False) is True
    assert x.grad is None                   # the check never accumulates into .grad


def test_a_gradient_of_the_wrong_shape_is_refused():
    class SwappedMatMul(Op):
        name = "matmul"

        def forward(self, xp, a, b):
            return a @ b

        def backward(self, grad, out, a, b):
            return grad @ b.T, grad.T @ a       # dW transposed: (M, D) instead of (D, M)

    rng = np.random.default_rng(1)
    a, b = leaf(rng.standard_normal((3, 4))), leaf(rng.standard_normal((4, 2)))
    with pytest.raises(eg.GradcheckError, match=r"^backward gave input 1 a gradient of shape "
                                                r"\(2, 4\), but input 1 has shape \(4, 2\)"):
        eg.gradcheck(lambda a, b: apply(SwappedMatMul(), a, b), (a, b))
    assert eg.gradcheck(lambda a, b: apply(SwappedMatMul(), a, b), (a, b),
                        raise_exception=False) is False


def test_only_inputs_that_require_a_gradient_are_checked_and_others_pass_through():
    x, data = leaf(POINTS), eg.tensor(POINTS, dtype=eg.float64)
    # the wrong gradient would reach only `data`, which is not checked
    assert eg.gradcheck(lambda a, b, n: a ** n * apply(Cube(1.0), b), (x, data, 2))
    with pytest.raises(ValueError, match="none does"):
        eg.gradcheck(eg.sin, (data,))


def test_several_outputs_and_a_tensor_used_twice():
    x = leaf(POINTS)
    assert eg.gradcheck(lambda t: (t * 2, eg.argmax(t), t ** 2), x)   # integer output skipped
    with pytest.raises(eg.GradcheckError, match="for output 1 with respect to input 0"):
        eg.gradcheck(lambda t: (t * 2, apply(Cube(1.0), t)), x)
    assert eg.gradcheck(lambda a, b: a * b, (x, x))    # both uses move: d(x²)/dx = 2x


def test_on_the_stand_in_device():
    x = leaf(POINTS, device="sim:0")
    assert eg.gradcheck(cube(), x)
    assert not eg.gradcheck(cube(1.0), x, raise_exception=False)


def test_float32_inputs_warn():
    with pytest.warns(UserWarning, match="input 0 is float32, not float64"):
        eg.gradcheck(eg.sin, leaf(POINTS, dtype=eg.float32), raise_exception=False)


def test_wrong_arguments_get_clear_errors():
    x = leaf(POINTS)
    with pytest.raises(TypeError, match="output 0 is a float"):
        eg.gradcheck(lambda t: t.sum().item(), x)
    with eg.Graph().as_default():
        p = eg.placeholder(eg.float64, shape=(3,), name="p")
        with pytest.raises(RuntimeError, match="while a graph is being built"):
            eg.gradcheck(eg.sin, x)
    with pytest.raises(TypeError, match="input 0 is the graph tensor 'p:0'"):
        eg.gradcheck(eg.sin, (p,))


@pytest.mark.parametrize("factor, passes", [
    (3.0, True),                # right
    (3.0 * (1 + 5e-4), True),   # off by 0.05 %: inside rtol = 1e-3
    (3.0 * (1 + 3e-3), False),  # off by 0.3 %: outside
    (1.0, False),               # the factor forgotten
    (-3.0, False),              # the sign flipped
])
def test_the_same_verdicts_as_torch_autograd_gradcheck(factor, passes):
    ours = eg.gradcheck(cube(factor), leaf(POINTS), raise_exception=False)
    assert ours is passes
    torch = pytest.importorskip("torch")
    x = torch.tensor(POINTS, dtype=torch.float64, requires_grad=True)
    theirs = torch.autograd.gradcheck(lambda t: torch_cube(torch).apply(t, factor), (x,),
                                      raise_exception=False)
    assert theirs is passes


@pytest.mark.parametrize("broken", ["forward", "backward"])
def test_a_students_unfinished_op_shows_only_their_own_frames_in_ipython(broken):
    """IPython leaves out frames whose locals hold __tracebackhide__: between the student's
    gradcheck call and their op's stub, no edugraph frame is shown (lesson 1's student
    versions ran 30 lines of edugraph's internals there)."""
    class Cube(Op):
        name = "cube"

        def forward(self, xp, x):
            if broken == "forward":
                raise NotImplementedError()
            return x ** 3

        def backward(self, grad, out, x):
            raise NotImplementedError()

    x = eg.tensor([-1.5, 0.7, 2.0], dtype=eg.float64, requires_grad=True)
    with pytest.raises(NotImplementedError) as failure:
        eg.gradcheck(lambda t: apply(Cube(), t), (x,))
    frames = [frame for frame, _ in traceback.walk_tb(failure.value.__traceback__)]
    shown = [f.f_code.co_name for f in frames if "/edugraph/" in f.f_code.co_filename
             and not f.f_locals.get("__tracebackhide__")]
    assert shown == [], shown
    assert frames[-1].f_code.co_name == broken
