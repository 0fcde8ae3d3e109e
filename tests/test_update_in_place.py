"""``w -= lr * w.grad`` under no_grad writes straight into w's array (numpy's in-place ufunc,
no full-size result first): the same values, the same tensor, and the same refusals as the
long way round (the op, then a copy)."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.debugging import NotFiniteError


def _grad_step(device):
    rng = np.random.default_rng(0)
    w0, x0 = (rng.standard_normal(s).astype(np.float32) for s in ((3, 2), (4, 3)))
    w = eg.tensor(w0, device=device, requires_grad=True)
    (eg.tensor(x0, device=device) @ w).sum().backward()
    return w, w0, x0.T @ np.ones((4, 2), np.float32)


@pytest.mark.parametrize("spelling", ["-=", "sub_", "+=", "*=", "/="])
def test_update_writes_the_same_values_into_the_same_array(device, spelling):
    w, w0, grad = _grad_step(device)
    array, view, kept = w._value, w.T, w.grad
    step = 0.1 * w.grad
    with eg.no_grad():
        if spelling == "-=":
            w -= step
        elif spelling == "sub_":
            w.sub_(step)
        elif spelling == "+=":
            w += step
        elif spelling == "*=":
            w *= step
        else:
            w /= step
    expected = {"-=": w0 - 0.1 * grad, "sub_": w0 - 0.1 * grad, "+=": w0 + 0.1 * grad,
                "*=": w0 * (0.1 * grad), "/=": w0 / (0.1 * grad)}[spelling]
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-6)
    assert w._value is array and w.requires_grad and w._op is None
    np.testing.assert_allclose(view.numpy(), expected.T, rtol=1e-6)    # views see it
    np.testing.assert_allclose(kept.numpy(), grad, rtol=1e-6)           # the gradient does not


def test_gradients_a_student_keeps_are_never_written_by_later_steps():
    w, _, grad = _grad_step("cpu:0")
    x = eg.tensor(np.ones((4, 3), np.float32))
    kept = []
    for _ in range(3):
        kept.append(w.grad)
        with eg.no_grad():
            w -= 0.1 * w.grad
            w.grad = None
        (x @ w).sum().backward()
    assert len({id(g._value) for g in kept}) == 3
    for g in kept[1:]:
        np.testing.assert_allclose(g.numpy(), np.full((3, 2), 4.0), rtol=1e-6)
    np.testing.assert_allclose(kept[0].numpy(), grad, rtol=1e-6)


def test_a_recorded_backward_still_refuses_the_overwritten_weight():
    w, _, _ = _grad_step("cpu:0")
    loss = (w * w).sum()
    with eg.no_grad():
        w -= 0.1 * w.grad
    with pytest.raises(eg.errors.GradientError, match="changed in place"):
        loss.backward()


def test_what_the_in_place_write_cannot_do_takes_the_long_way_with_its_errors():
    w = eg.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    with eg.no_grad():
        w -= eg.tensor([1.0, 2.0, 3.0])                 # broadcast: the op, then a copy
        np.testing.assert_allclose(w.numpy(), [[0, -1, -2]] * 2)
        w -= 1.0                                        # a number
        np.testing.assert_allclose(w.numpy(), [[-1, -2, -3]] * 2)
        with pytest.raises(TypeError, match="different float dtypes"):
            w -= eg.tensor(np.ones((2, 3)), dtype=eg.float64)
        small = eg.tensor(np.ones(3, np.float32))
        with pytest.raises(eg.errors.ShapeError, match="must keep both"):
            small -= w
    with pytest.raises(eg.errors.GradientError, match="outside eg.no_grad"):
        w -= eg.tensor(np.ones((2, 3), np.float32))


def test_the_numerics_check_still_sees_an_in_place_update():
    w = eg.tensor(np.ones(2, np.float32))
    eg.debugging.enable_check_numerics()
    try:
        with pytest.raises(NotFiniteError, match="sub"):
            w -= eg.tensor([np.nan, 1.0])
    finally:
        eg.debugging.disable_check_numerics()


def test_the_update_makes_no_full_size_temporary():
    import tracemalloc
    w = eg.tensor(np.ones((500, 500), np.float32), requires_grad=True)
    step = eg.tensor(np.full((500, 500), 0.5, np.float32))
    with eg.no_grad():
        tracemalloc.start()
        w -= step
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peak < w._value.nbytes / 10, peak           # (the op's result would be 1 MB)
    np.testing.assert_array_equal(w.numpy(), 0.5)
