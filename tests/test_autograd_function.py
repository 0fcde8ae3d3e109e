"""eg.autograd.Function, PyTorch's way to write your own node: each case is written once as a
function of the library (``torch`` or ``eg``) and must give torch's values and gradients."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import GradientError

torch = pytest.importorskip("torch")

POINTS = np.array([[-1.5, 0.25, 2.0], [0.5, -0.75, 1.25]])


def cube(torch):
    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * 3 * x ** 2
    return Cube


def scale(torch):
    """A non-tensor argument (also by keyword) gets None as its gradient."""
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, k=2.0):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.k, None
    return Scale


def split(torch):
    """Two outputs: backward gets one gradient per output."""
    class Split(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, grad_product, grad_sum):
            x, y = ctx.saved_tensors
            return grad_product * y + grad_sum, grad_product * x + grad_sum
    return Split


def scale_with_setup_context(torch):
    """PyTorch 2's form: forward without ctx, setup_context fills it."""
    class Scale(torch.autograd.Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, k = inputs
            ctx.k = k

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output * ctx.k, None
    return Scale


def results(lib):
    """Values and gradients of every case, as arrays."""
    x = lib.tensor(POINTS, dtype=lib.float64, requires_grad=True)
    y = lib.tensor(POINTS[::-1].copy(), dtype=lib.float64, requires_grad=True)
    product, total = split(lib).apply(x, y)
    outputs = [cube(lib).apply(x), scale(lib).apply(x, k=3.0), product, total,
               scale_with_setup_context(lib).apply(y, 5.0)]
    loss = sum((out * lib.tensor(np.arange(6.0).reshape(2, 3))).sum() for out in outputs)
    loss.backward()
    return [out.detach().numpy() for out in outputs] + [x.grad.numpy(), y.grad.numpy()]


def test_functions_give_torchs_values_and_gradients():
    for ours, theirs in zip(results(eg), results(torch)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_second_derivatives_go_through_a_backward_written_with_tensor_ops():
    grads = []
    for lib in (eg, torch):
        x = lib.tensor(POINTS, dtype=lib.float64, requires_grad=True)
        g, = lib.autograd.grad(cube(lib).apply(x).sum(), x, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), x)
        grads.append((g.detach().numpy(), g2.numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_the_node_prints_as_torchs_and_ctx_says_which_inputs_need_a_gradient():
    seen = []

    class Spy(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x, y, k):
            seen.append((ctx.needs_input_grad, eg.is_grad_enabled()))
            return x * y * k

        @staticmethod
        def backward(ctx, grad_output):
            return grad_output, None, None

    x = eg.tensor([1.0, 2.0], requires_grad=True)
    out = Spy.apply(x, eg.tensor([3.0, 4.0]), 2.0)
    assert seen == [((True, False, False), False)]      # forward is not recorded inside
    assert repr(out).endswith("grad_fn=<SpyBackward>)") and out.grad_fn.name == "Spy"
    with eg.no_grad():
        assert not Spy.apply(x, x, 1.0).requires_grad
    assert not Spy.apply(eg.tensor([1.0]), eg.tensor([1.0]), 1.0).requires_grad


def test_a_gradient_tape_records_a_function_too():
    x = eg.Variable([1.0, 2.0])
    with eg.GradientTape() as tape:
        y = eg.reduce_sum(cube(eg).apply(x))
    np.testing.assert_allclose(tape.gradient(y, x).numpy(), [3.0, 12.0])


def test_an_output_marked_non_differentiable_gets_no_gradient():
    class Double(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out, flag = x * 2, x * 0
            ctx.mark_non_differentiable(flag)
            return out, flag

        @staticmethod
        def backward(ctx, grad_out, grad_flag):
            return grad_out * 2

    out, flag = Double.apply(eg.tensor([1.0], requires_grad=True))
    assert out.requires_grad and not flag.requires_grad


def test_a_saved_input_changed_in_place_before_backward_is_refused():
    x = eg.tensor(POINTS, requires_grad=True)
    h = x * 1
    y = cube(eg).apply(h)
    with eg.no_grad():
        h -= 1
    with pytest.raises(GradientError, match="gradient of Cube needs the values of an input"):
        y.sum().backward()


def bad_backward(returned):
    class Bad(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad_output):
            return returned(grad_output)
    return Bad


@pytest.mark.parametrize("returned, message", [
    (lambda g: g, r"Bad\.backward returned 1 gradient\(s\), but forward took 2 input\(s\)"),
    (lambda g: (g[:1], None), r"gradient of shape \(1,\) for input 0 of shape \(2,\)"),
    (lambda g: (g.numpy(), None), r"returned a ndarray as the gradient of input 0"),
])
def test_a_backward_that_returns_the_wrong_gradients_is_refused(returned, message):
    y = bad_backward(returned).apply(eg.tensor([1.0, 2.0], requires_grad=True), 3.0)
    with pytest.raises(GradientError, match=message):
        y.sum().backward()


def test_old_style_calls_forwards_without_tensors_and_graphs_say_what_to_write():
    Cube = cube(eg)
    with pytest.raises(RuntimeError, match=r"write Cube\.apply\(x\)"):
        Cube()(eg.tensor([1.0]))

    class Number(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return 3.0

    with pytest.raises(TypeError, match="Number.forward must return tensors; output 0 is a "
                                        "float"):
        Number.apply(eg.tensor([1.0], requires_grad=True))
    with eg.Graph().as_default():
        with pytest.raises(RuntimeError, match="runs eagerly, as in PyTorch"):
            Cube.apply(eg.placeholder(eg.float32, (2,)))

    class NoBackward(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

    with pytest.raises(NotImplementedError, match="static backward"):
        NoBackward.apply(eg.tensor([1.0], requires_grad=True)).sum().backward()
