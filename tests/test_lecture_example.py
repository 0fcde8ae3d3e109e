"""The lecture's worked example, f = (w·x + b)² at x = 2, w = 3, b = −4, and the gate patterns.

Forward:   p = w·x = 6,   q = p + b = 2,   f = q² = 4
Backward:  df/dq = 2q = 4,   df/dp = df/db = 4 (add distributes),
           df/dw = df/dp · x = 8,   df/dx = df/dp · w = 12 (mul switches)
"""
import numpy as np
import pytest

import edugraph as eg


def test_worked_example_values_and_gradients(device):
    x = eg.tensor(2.0, device=device, requires_grad=True)
    w = eg.tensor(3.0, device=device, requires_grad=True)
    b = eg.tensor(-4.0, device=device, requires_grad=True)
    p = (w * x).retain_grad()
    q = (p + b).retain_grad()
    f = q ** 2
    assert (p.item(), q.item(), f.item()) == (6.0, 2.0, 4.0)
    f.backward()
    assert q.grad.item() == 4.0 and p.grad.item() == 4.0
    assert (x.grad.item(), w.grad.item(), b.grad.item()) == (12.0, 8.0, 4.0)


def test_worked_example_with_a_tape_and_variables():
    x, w, b = eg.Variable(2.0), eg.Variable(3.0), eg.Variable(-4.0)
    with eg.GradientTape() as tape:
        f = eg.square(w * x + b)
    grads = tape.gradient(f, {"x": x, "w": w, "b": b})
    assert {k: v.item() for k, v in grads.items()} == {"x": 12.0, "w": 8.0, "b": 4.0}


def test_worked_example_matches_pytorch():
    torch = pytest.importorskip("torch")
    x, w, b = (torch.tensor(v, requires_grad=True) for v in (2.0, 3.0, -4.0))
    ((w * x + b) ** 2).backward()
    ours = [eg.tensor(v, requires_grad=True) for v in (2.0, 3.0, -4.0)]
    ((ours[1] * ours[0] + ours[2]) ** 2).backward()
    assert [t.grad.item() for t in ours] == [x.grad.item(), w.grad.item(), b.grad.item()]


def test_add_distributes(device):
    """Both inputs of an add receive the upstream gradient unchanged."""
    a = eg.tensor([1.0, 2.0], device=device, requires_grad=True)
    c = eg.tensor([5.0, -1.0], device=device, requires_grad=True)
    upstream = eg.tensor([7.0, -3.0], device=device)
    (a + c).backward(upstream)
    np.testing.assert_array_equal(a.grad.numpy(), upstream.numpy())
    np.testing.assert_array_equal(c.grad.numpy(), upstream.numpy())


def test_max_routes(device):
    """The larger input gets the whole upstream gradient; the loser gets 0."""
    a = eg.tensor(4.0, device=device, requires_grad=True)
    c = eg.tensor(1.0, device=device, requires_grad=True)
    eg.maximum(a, c).backward(eg.tensor(5.0, device=device))
    assert (a.grad.item(), c.grad.item()) == (5.0, 0.0)


def test_mul_switches(device):
    """Each input's gradient is the upstream gradient times the *other* input."""
    a = eg.tensor(-2.0, device=device, requires_grad=True)
    c = eg.tensor(3.0, device=device, requires_grad=True)
    (a * c).backward(eg.tensor(10.0, device=device))
    assert (a.grad.item(), c.grad.item()) == (10.0 * 3.0, 10.0 * -2.0)


def test_branches_sum(device):
    """x feeds two branches; its gradient is the sum of what each branch sends back."""
    x = eg.tensor(3.0, device=device, requires_grad=True)
    left = (x * 2).retain_grad()            # sends back 2 · upstream
    right = (x * x).retain_grad()           # sends back 2x · upstream
    (left + right).backward()
    assert left.grad.item() == 1 and right.grad.item() == 1
    assert x.grad.item() == 2 + 2 * 3
