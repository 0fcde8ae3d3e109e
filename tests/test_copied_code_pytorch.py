"""Code students copy, PyTorch side: the classic examples run with ``torch.`` replaced by ``eg.``.

Each program is written once, as a function of ``torch``, and run twice: with edugraph in its
place and with PyTorch itself. They print what the originals print (``t, loss``), and the
printed numbers must agree. Both runs draw the same random numbers (``shared_randn``), and
models start from the same weights (``same_start``: the one line the originals lack).

The programs follow Justin Johnson's two-layer-net series ("Learning PyTorch with Examples":
tensors with gradients by hand, autograd, a custom autograd Function, a Module, a dynamic net
with weight sharing, the TF1 version) and PyTorch's Legendre-polynomial Function, with sizes
and steps as there; the code is written anew, the calls as there.
"""
import math
import random

import numpy as np
import pytest

import edugraph as eg

torch = pytest.importorskip("torch")


def shared_randn(monkeypatch, lib, seed=0):
    """``lib.randn(*size, dtype=..., device=..., requires_grad=...)`` gives the draws of one
    fixed numpy stream, so that eg's and torch's runs see the same data and weights."""
    rng = np.random.default_rng(seed)

    def randn(*size, dtype=None, device=None, requires_grad=False):
        draws = rng.standard_normal(size)
        return lib.tensor(draws, dtype=dtype or lib.float32, device=device,
                          requires_grad=requires_grad)
    monkeypatch.setattr(lib, "randn", randn)


def same_start(lib, seed=1):
    """A function that gives a model's parameters, in order, values from one fixed stream."""
    rng = np.random.default_rng(seed)

    def start(model):
        with lib.no_grad():
            for p in model.parameters():
                bound = 1 / math.sqrt(p.shape[-1])
                p.copy_(lib.tensor(rng.uniform(-bound, bound, tuple(p.shape))))
    return start


def printed_numbers(text):
    """Each printed line's numbers (a list per line)."""
    return [[float(v) for v in line.split()] for line in text.splitlines()]


def assert_same_run(ours, theirs):
    """The printed numbers agree to 1e-10, relatively; a loss that has fallen to ~1e-6 from
    ~1e7 sums squares of residuals ~1e13 times smaller than the numbers they are differences
    of, so there a 1e-13 absolute difference (rounding in another order) is allowed too."""
    assert [len(line) for line in ours] == [len(line) for line in theirs]
    np.testing.assert_allclose(np.concatenate(ours), np.concatenate(theirs), rtol=1e-10,
                               atol=1e-13)


def run_both(program, capsys, monkeypatch, dtype="float64", **kwargs):
    """Run ``program`` with eg and with torch; returns the numbers each printed."""
    printed = []
    for lib in (eg, torch):
        shared_randn(monkeypatch, lib)
        random.seed(0)
        program(lib, getattr(lib, dtype), **{k: v(lib) for k, v in kwargs.items()})
        printed.append(printed_numbers(capsys.readouterr().out))
    return printed


# ----------------------------------------------------------------------------- the programs
def two_layer_net_tensor(torch, dtype):
    """Forward and backward by hand, on tensors."""
    device = torch.device('cpu')
    N, D_in, H, D_out = 64, 1000, 100, 10
    x = torch.randn(N, D_in, device=device, dtype=dtype)
    y = torch.randn(N, D_out, device=device, dtype=dtype)
    w1 = torch.randn(D_in, H, device=device, dtype=dtype)
    w2 = torch.randn(H, D_out, device=device, dtype=dtype)

    learning_rate = 1e-6
    for t in range(500):
        h = x.mm(w1)
        h_relu = h.clamp(min=0)
        y_pred = h_relu.mm(w2)

        loss = (y_pred - y).pow(2).sum().item()
        print(t, loss)

        grad_y_pred = 2.0 * (y_pred - y)           # d loss / d y_pred, then back through each op
        grad_w2 = h_relu.t().mm(grad_y_pred)
        grad_h_relu = grad_y_pred.mm(w2.t())
        grad_h = grad_h_relu.clone()
        grad_h[h < 0] = 0
        grad_w1 = x.t().mm(grad_h)

        w1 -= learning_rate * grad_w1
        w2 -= learning_rate * grad_w2


def two_layer_net_autograd(torch, dtype):
    """The same network; backward() computes the gradients."""
    device = torch.device('cpu')
    N, D_in, H, D_out = 64, 1000, 100, 10
    x = torch.randn(N, D_in, device=device, dtype=dtype)
    y = torch.randn(N, D_out, device=device, dtype=dtype)
    w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
    w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 1e-6
    for t in range(500):
        y_pred = x.mm(w1).clamp(min=0).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        print(t, loss.item())

        loss.backward()
        with torch.no_grad():                       # the update is not part of the graph
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()


def two_layer_net_custom_function(torch, dtype):
    """The ReLU as a node of our own: forward and backward, and what backward needs saved."""
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            grad_x = grad_output.clone()
            grad_x[x < 0] = 0                       # relu routes the gradient where x > 0
            return grad_x

    device = torch.device('cpu')
    N, D_in, H, D_out = 64, 1000, 100, 10
    x = torch.randn(N, D_in, device=device, dtype=dtype)
    y = torch.randn(N, D_out, device=device, dtype=dtype)
    w1 = torch.randn(D_in, H, device=device, dtype=dtype, requires_grad=True)
    w2 = torch.randn(H, D_out, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 1e-6
    for t in range(500):
        y_pred = MyReLU.apply(x.mm(w1)).mm(w2)
        loss = (y_pred - y).pow(2).sum()
        print(t, loss.item())

        loss.backward()
        with torch.no_grad():
            w1 -= learning_rate * w1.grad
            w2 -= learning_rate * w2.grad
            w1.grad.zero_()
            w2.grad.zero_()


def legendre_polynomial_function(torch, dtype):
    """PyTorch's tutorial Function: y = a + b P3(c + d x) fitted to sin(x)."""
    class LegendrePolynomial3(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return 0.5 * (5 * input ** 3 - 3 * input)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            return grad_output * 1.5 * (5 * input ** 2 - 1)

    device = torch.device("cpu")
    x = torch.linspace(-math.pi, math.pi, 2000, device=device, dtype=dtype)
    y = torch.sin(x)
    a = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    b = torch.full((), -1.0, device=device, dtype=dtype, requires_grad=True)
    c = torch.full((), 0.0, device=device, dtype=dtype, requires_grad=True)
    d = torch.full((), 0.3, device=device, dtype=dtype, requires_grad=True)

    learning_rate = 5e-6
    for t in range(2000):
        P3 = LegendrePolynomial3.apply
        y_pred = a + b * P3(c + d * x)
        loss = (y_pred - y).pow(2).sum()
        if t % 100 == 99:
            print(t, loss.item())
        loss.backward()
        with torch.no_grad():
            a -= learning_rate * a.grad
            b -= learning_rate * b.grad
            c -= learning_rate * c.grad
            d -= learning_rate * d.grad
            a.grad = None
            b.grad = None
            c.grad = None
            d.grad = None
    print(a.item(), b.item(), c.item(), d.item())


def two_layer_net_module(torch, dtype, same_start):
    """The network as a Module subclass, trained by an optimizer."""
    class TwoLayerNet(torch.nn.Module):
        def __init__(self, D_in, H, D_out):
            super(TwoLayerNet, self).__init__()
            self.linear1 = torch.nn.Linear(D_in, H)
            self.linear2 = torch.nn.Linear(H, D_out)

        def forward(self, x):
            h_relu = self.linear1(x).clamp(min=0)
            return self.linear2(h_relu)

    N, D_in, H, D_out = 64, 1000, 100, 10
    x = torch.randn(N, D_in, dtype=dtype)
    y = torch.randn(N, D_out, dtype=dtype)
    model = TwoLayerNet(D_in, H, D_out).to(dtype)
    same_start(model)

    loss_fn = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4)
    for t in range(500):
        y_pred = model(x)
        loss = loss_fn(y_pred, y)
        print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def dynamic_net(torch, dtype, same_start):
    """A net whose depth Python picks at random on every forward pass, sharing one layer."""
    class DynamicNet(torch.nn.Module):
        def __init__(self, D_in, H, D_out):
            super(DynamicNet, self).__init__()
            self.input_linear = torch.nn.Linear(D_in, H)
            self.middle_linear = torch.nn.Linear(H, H)
            self.output_linear = torch.nn.Linear(H, D_out)

        def forward(self, x):
            h_relu = self.input_linear(x).clamp(min=0)
            for _ in range(random.randint(0, 3)):   # the same weights 0 to 3 times
                h_relu = self.middle_linear(h_relu).clamp(min=0)
            return self.output_linear(h_relu)

    N, D_in, H, D_out = 64, 1000, 100, 10
    x = torch.randn(N, D_in, dtype=dtype)
    y = torch.randn(N, D_out, dtype=dtype)
    model = DynamicNet(D_in, H, D_out).to(dtype)
    same_start(model)

    criterion = torch.nn.MSELoss(reduction='sum')
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-4, momentum=0.9)
    for t in range(500):
        y_pred = model(x)
        loss = criterion(y_pred, y)
        print(t, loss.item())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


# ----------------------------------------------------------------------------- the tests
@pytest.mark.parametrize("program", [two_layer_net_tensor, two_layer_net_autograd,
                                     two_layer_net_custom_function])
def test_two_layer_net_programs_print_torchs_losses(program, capsys, monkeypatch):
    ours, theirs = run_both(program, capsys, monkeypatch)
    assert len(ours) == 500 and ours[-1][1] < ours[0][1] / 1000
    assert_same_run(ours, theirs)


@pytest.mark.parametrize("program", [two_layer_net_module, dynamic_net])
def test_module_programs_print_torchs_losses(program, capsys, monkeypatch):
    ours, theirs = run_both(program, capsys, monkeypatch,
                            same_start=lambda lib: same_start(lib))
    assert len(ours) == 500 and ours[-1][1] < ours[0][1] / 10
    assert_same_run(ours, theirs)


def test_float32_custom_function_program_agrees_with_torch_to_float32_rounding(capsys,
                                                                               monkeypatch):
    ours, theirs = run_both(two_layer_net_custom_function, capsys, monkeypatch, "float32")
    np.testing.assert_allclose(ours[:100], theirs[:100], rtol=1e-4)   # (before the loss is
                                                                      # all rounding)


def test_legendre_polynomial_function_fits_as_torchs_does(capsys, monkeypatch):
    ours, theirs = run_both(legendre_polynomial_function, capsys, monkeypatch)
    assert_same_run(ours, theirs)
    assert len(ours) == 21 and ours[-2][1] < 10     # sin(x) fitted closely on [-pi, pi]


def test_a_custom_function_passes_gradcheck_and_a_wrong_backward_fails_it():
    class MyReLU(eg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            grad_x = grad_output.clone()
            grad_x[x < 0] = 0
            return grad_x

    class Square(eg.autograd.Function):             # backward forgets the factor 2
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad_output):
            x, = ctx.saved_tensors
            return grad_output * x

    x = eg.tensor([[-1.5, 0.25], [2.0, -0.75]], dtype=eg.float64, requires_grad=True)
    assert eg.gradcheck(MyReLU.apply, (x,))
    with pytest.raises(eg.GradcheckError, match=r"input index \(1, 0\): analytic 2 .* numeric 4 "):
        eg.gradcheck(Square.apply, (x,))
