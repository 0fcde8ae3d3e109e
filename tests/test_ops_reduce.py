"""Reductions over axes (None, one, negative, several; keepdims): values against numpy,
gradients against central differences, and where max/min send the gradient."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import edugraph as eg
from tests.gradcheck import gradcheck
from tests.strategies import arrays, checks, distinct_arrays, shape_and_axis

REDUCTIONS = {   # name: (edugraph function, numpy reference)
    "reduce_sum": (eg.reduce_sum, np.sum),
    "reduce_mean": (eg.reduce_mean, np.mean),
    "reduce_max": (eg.reduce_max, np.max),
    "reduce_min": (eg.reduce_min, np.min),
    "logsumexp": (eg.logsumexp,
                  lambda x, axis, keepdims: np.log(np.exp(x).sum(axis=axis, keepdims=keepdims))),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@checks
@given(data=st.data(), shape_axis=shape_and_axis(), keepdims=st.booleans())
def test_reductions_over_axes(device, name, data, shape_axis, keepdims):
    fn, ref = REDUCTIONS[name]
    shape, axis = shape_axis
    # distinct values: max/min have a single winner, so they are differentiable there
    x = data.draw(distinct_arrays(shape) if name in ("reduce_max", "reduce_min")
                  else arrays(shape))
    got = fn(eg.tensor(x, device=device), axis, keepdims)
    want = ref(x, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    gradcheck(lambda t: fn(t, axis, keepdims), x, device=device, name=f"{name} axis={axis}")


def test_method_spellings(device):
    x = np.arange(24.0).reshape(2, 3, 4)
    t = eg.tensor(x, device=device)
    np.testing.assert_allclose(t.sum(dim=1, keepdim=True).numpy(), x.sum(1, keepdims=True))
    np.testing.assert_allclose(t.mean(axis=(0, 2)).numpy(), x.mean((0, 2)))
    np.testing.assert_allclose(t.max(-1).values.numpy(), x.max(-1))     # PyTorch: a pair
    np.testing.assert_array_equal(t.max(-1).indices.numpy(), x.argmax(-1))
    np.testing.assert_allclose(t.max(axis=-1).numpy(), x.max(-1))       # numpy: the values
    np.testing.assert_allclose(t.min().numpy(), x.min())
    np.testing.assert_allclose(eg.sum(t, 0).numpy(), x.sum(0))
    np.testing.assert_allclose(t.logsumexp(dim=1).numpy(),
                               np.log(np.exp(x).sum(1)), rtol=1e-6)


def test_reduce_max_routes_to_the_winner(device):
    x = eg.tensor([[1.0, 5.0, 3.0], [7.0, 2.0, 0.0]], device=device, requires_grad=True)
    eg.reduce_max(x, axis=1).backward(eg.tensor([10.0, 20.0], device=device))
    np.testing.assert_array_equal(x.grad.numpy(), [[0, 10, 0], [20, 0, 0]])


def test_reduce_max_splits_ties_evenly(device):
    """TF's rule: tied maxima share the gradient equally (PyTorch's amax does the same)."""
    x = eg.tensor([[2.0, 2.0, 1.0], [3.0, 3.0, 3.0]], device=device, requires_grad=True)
    eg.reduce_max(x, axis=1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]])
    y = eg.tensor([4.0, -1.0, -1.0], device=device, requires_grad=True)
    eg.reduce_min(y).backward()
    np.testing.assert_array_equal(y.grad.numpy(), [0, 0.5, 0.5])


@pytest.mark.parametrize("keepdims", [False, True])
def test_logsumexp_is_stable_for_huge_inputs(device, keepdims):
    x = eg.tensor([[1e4, 1e4 - 1.0, -1e4], [-1e4, -1e4, -1e4]], device=device,
                  requires_grad=True)
    out = eg.logsumexp(x, axis=1, keepdims=keepdims)
    want = np.array([1e4 + np.log1p(np.exp(-1.0)), -1e4 + np.log(3.0)])
    np.testing.assert_allclose(out.numpy().reshape(-1), want, rtol=1e-6)
    out.sum().backward()
    e = np.exp(-1.0)
    np.testing.assert_allclose(x.grad.numpy(), [[1 / (1 + e), e / (1 + e), 0], [1 / 3] * 3],
                               rtol=1e-5, atol=1e-7)
    assert np.isfinite(x.grad.numpy()).all()


@pytest.mark.filterwarnings("ignore:divide by zero")      # log(0) = -inf is the answer
def test_logsumexp_of_all_minus_infinity(device):
    x = eg.tensor([-np.inf, -np.inf], device=device)
    assert eg.logsumexp(x).item() == -np.inf


def test_argmax_argmin_any_all(device):
    x = np.array([[1.0, 9.0, 3.0], [7.0, 2.0, 8.0]])
    t = eg.tensor(x, device=device, requires_grad=True)
    for got, want in [(eg.argmax(t, 1), x.argmax(1)), (t.argmin(0), x.argmin(0)),
                      (eg.argmax(t), x.argmax())]:
        np.testing.assert_array_equal(got.numpy(), want)
        assert not got.requires_grad
    assert eg.reduce_any(t > 8.5).item() and not eg.reduce_all(t > 1.5).item()
    np.testing.assert_array_equal(eg.reduce_all(t > 1.5, axis=1).numpy(), [False, True])


def test_mean_of_integers_is_float(device):
    got = eg.reduce_mean(eg.tensor([1, 2], device=device))
    assert got.item() == 1.5
