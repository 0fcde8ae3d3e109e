"""PyTorch code as students copy it: no silent difference, no raw numpy error, and where
PyTorch refuses an input, edugraph refuses it too (issue 44, sections 1, 2 and 5)."""
import warnings

import numpy as np
import pytest

import edugraph as eg
import edugraph.nn.functional as F

torch = pytest.importorskip("torch")

rng = np.random.default_rng(44)
X = rng.normal(size=(3, 5, 6))


# ----------------------------------------------------------------- 1. silent differences
@pytest.mark.parametrize("method", ["max", "min"])
def test_max_and_min_with_axis_give_values_and_indices_as_with_dim(method):
    ours, theirs = eg.tensor(X), torch.tensor(X)
    for kwargs in ({"axis": 1}, {"axis": 1, "keepdim": True}, {"dim": 1}):
        got, want = getattr(ours, method)(**kwargs), getattr(theirs, method)(**kwargs)
        np.testing.assert_array_equal(got[0].numpy(), want[0].numpy())
        np.testing.assert_array_equal(got.indices.numpy(), want.indices.numpy())
    assert ours.max(axis=1)[0].shape == (3, 6)


def test_arithmetic_with_the_values_and_indices_pair_is_refused():
    """(numpy would read the pair as one stacked array: a silent extra dimension)"""
    x = eg.tensor(X)
    with pytest.raises(TypeError, match=r"give the pair \(values, indices\).*take \.values"):
        x - x.max(axis=1, keepdims=True)
    with pytest.raises(TypeError):
        torch.tensor(X) - torch.tensor(X).max(axis=1, keepdim=True)
    np.testing.assert_allclose((x - x.max(dim=1, keepdim=True).values).numpy(),
                               X - X.max(1, keepdims=True))


@pytest.mark.parametrize("exponent", [2.0, 3.0, 0.5, 2, 3])
def test_an_int_tensor_to_a_float_power_is_float32(exponent):
    ours = eg.tensor([1, 2, 3]) ** exponent
    theirs = torch.tensor([1, 2, 3]) ** exponent
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_pow_gradient_at_a_zero_base_matches_pytorch_without_numpy_warnings():
    base = np.array([0.0, 0.0, 0.0, 0.0, 2.0, 0.0])
    exponent = np.array([-1.0, -2.0, -0.5, 0.5, 3.0, 0.0])
    x, y = (eg.tensor(a, requires_grad=True) for a in (base, exponent))
    tx, ty = (torch.tensor(a, requires_grad=True) for a in (base, exponent))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # numpy's RuntimeWarnings would fail here
        out = x ** y
        out.sum().backward()
    (tx ** ty).sum().backward()
    np.testing.assert_array_equal(out.numpy(), (tx ** ty).detach().numpy())
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    assert np.isneginf(y.grad.numpy()[:3]).all()        # (not nan)


INDEX = [0, 3, 4]
MIXED_INDEXES = {   # ints and index arrays that slices separate: numpy puts the array first
    "issue_example": lambda x, d: x[1, :, 3:11:2, d, 0:2],
    "int_last": lambda x, d: x[:, :, d, :, 1],
    "with_ellipsis": lambda x, d: x[1, ..., d, 0],
    "with_newaxis": lambda x, d: x[1, None, :, 2:4, d],
    "mask": lambda x, d: x[1, :, 2, :, np.arange(6) % 2 == 0],
    "side_by_side": lambda x, d: x[:, 1, d],                 # (numpy agrees: one step)
}


@pytest.mark.parametrize("name", MIXED_INDEXES)
def test_an_int_among_index_arrays_is_read_as_pytorch_reads_it(device, name):
    index = MIXED_INDEXES[name]
    a = rng.normal(size=(3, 4, 12, 5, 6))
    x = eg.tensor(a, requires_grad=True, device=device)
    t = torch.tensor(a, requires_grad=True)
    got, want = index(x, eg.tensor(INDEX, device=device)), index(t, torch.tensor(INDEX))
    assert got.shape == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    weights = rng.normal(size=got.shape)
    (got * eg.tensor(weights, device=device)).sum().backward()
    (want * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


def test_writing_through_a_mixed_index_is_refused_with_how_to_write_it():
    x = eg.zeros(3, 4, 12, 5, 6)
    with pytest.raises(IndexError, match=r"Write each int as a slice of length one "
                                         r"\(x\[1:2, :, idx\]"):
        x[1, :, 3:11:2, INDEX, 0:2] = 1.0
    x[1:2, :, 3:11:2, INDEX, 0:2] = 1.0                 # the unambiguous spelling
    t = torch.zeros(3, 4, 12, 5, 6)
    t[1, :, 3:11:2, INDEX, 0:2] = 1.0
    np.testing.assert_array_equal(x.numpy(), t.numpy())


def test_maximum_at_a_tie_keeps_tfs_rule_and_says_so():
    """Deliberate (exercise 1.6): the first input gets the whole gradient; torch splits it."""
    a, b = eg.tensor([1.0], requires_grad=True), eg.tensor([1.0], requires_grad=True)
    eg.maximum(a, b).sum().backward()
    ta, tb = torch.tensor([1.0], requires_grad=True), torch.tensor([1.0], requires_grad=True)
    torch.maximum(ta, tb).sum().backward()
    assert (a.grad.item(), b.grad.item()) == (1.0, 0.0)
    assert (ta.grad.item(), tb.grad.item()) == (0.5, 0.5)
    for function in (eg.maximum, eg.minimum):
        assert "torch." in function.__doc__ and "0.5" in function.__doc__


# ----------------------------------------------------------------- 2. raw errors
@pytest.mark.parametrize("dtype", ["int64", "int32", "uint8"])
def test_max_pool_of_an_int_tensor_with_padding(dtype):
    images = rng.integers(0, 100, size=(2, 3, 5, 5)).astype(dtype)
    got = F.max_pool2d(eg.tensor(images), 3, 2, padding=1)
    want = torch.nn.functional.max_pool2d(torch.tensor(images.astype("int64")), 3, 2, padding=1)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_a_view_as_another_dtype_is_refused_by_name():
    x = eg.randn(2, 3)
    with pytest.raises(TypeError, match=r"x\.view\(eg\.int32\): in PyTorch that reads x's "
                                        r"bytes as another dtype.*x\.to\(dtype\)"):
        x.view(eg.int32)
    assert x.view(3, 2).shape == x.view((3, 2)).shape == (3, 2)
