"""The eager hot path's shortcuts give the same answers as the long way round."""
import numpy as np
import pytest

import edugraph as eg


def test_numbers_next_to_tensors_keep_adapting_to_the_tensor():
    assert (eg.tensor([1.0, 2.0]) * 2).dtype == eg.float32
    assert (eg.tensor([1.0, 2.0], dtype=eg.float64) * 2.5).dtype == eg.float64
    assert (eg.tensor([1, 2], dtype=eg.int32) + 2).dtype == eg.int32
    assert (eg.tensor([1, 2]) * 2.5).dtype == eg.float32
    assert (eg.tensor([True, False]) + 1).dtype == eg.int64
    np.testing.assert_array_equal((2 - eg.tensor([1.0, 3.0])).numpy(), [1.0, -1.0])
    assert (eg.tensor([1.0], dtype=eg.float64) / 3).dtype == eg.float64
    assert (3 * eg.tensor([1.0], dtype=eg.float64)).dtype == eg.float64
    big = 2**53 + 1                     # an int next to a float64 tensor rounds like numpy's
    assert (eg.tensor([0.0], dtype=eg.float64) + big).numpy()[0] == np.float64(big)


def test_signed_zeros_are_not_confused_by_the_constant_cache():
    x = eg.tensor([1.0])
    with np.errstate(divide="ignore"):
        assert (x / 0.0).numpy()[0] == np.inf
        assert (x / -0.0).numpy()[0] == -np.inf
        assert (x / 0.0).numpy()[0] == np.inf


def test_a_scalar_chain_gives_the_sum_and_gradient_one():
    x = eg.tensor(0.5, requires_grad=True)
    y = x
    for _ in range(100):
        y = y + 1.0
    y.backward()
    assert y.item() == pytest.approx(100.5) and x.grad.item() == 1.0


def test_mixed_float_dtypes_are_still_refused():
    a, b = eg.tensor([1.0]), eg.tensor([1.0], dtype=eg.float64)
    with pytest.raises(TypeError, match="different float dtypes"):
        a + b
    with pytest.raises(TypeError, match="different float dtypes"):
        eg.where(eg.tensor([True]), a, b)


def test_inputs_that_need_no_gradient_get_none_and_the_others_are_right():
    rng = np.random.default_rng(0)
    x_val, w_val, y_val = (rng.standard_normal(s).astype(np.float32)
                           for s in ((4, 3), (3, 2), (4, 2)))
    x, y = eg.tensor(x_val), eg.tensor(y_val)
    w = eg.tensor(w_val, requires_grad=True)
    loss = eg.reduce_sum((eg.matmul(x, w) - y) * 3.0)
    loss.backward()
    assert x.grad is None and y.grad is None
    np.testing.assert_allclose(w.grad.numpy(), x_val.T @ np.full((4, 2), 3.0), rtol=1e-6)


def test_broadcast_gradients_are_still_summed_back():
    b = eg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    m = eg.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    eg.reduce_sum(m * b + b).backward()
    np.testing.assert_allclose(b.grad.numpy(), [4.0, 4.0, 4.0])
    np.testing.assert_allclose(m.grad.numpy(), [[1.0, 2.0, 3.0]] * 2)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape, axis, keepdims", [
    ((64, 1000), None, False), ((64, 1000), 1, False), ((3, 4, 5), (0, 2), True),
    ((7,), 0, False), ((5,), None, True), ((2, 3), -1, True)])
def test_reduce_mean_is_bit_for_bit_numpys_mean(dtype, shape, axis, keepdims):
    # Mean's forward divides the sum by the count itself (numpy.mean does the same in Python)
    x = (np.random.default_rng(0).standard_normal(shape) * 100).astype(dtype)
    got = eg.reduce_mean(eg.tensor(x), axis=axis, keepdims=keepdims).numpy()
    expected = np.asarray(x.mean(axis=axis, keepdims=keepdims))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_the_mean_of_nothing_is_nan_with_numpys_warning():
    with pytest.warns(RuntimeWarning, match="Mean of empty slice"), np.errstate(invalid="ignore"):
        got = eg.reduce_mean(eg.tensor(np.zeros((0, 3), np.float32)), axis=0).numpy()
    assert got.shape == (3,) and np.isnan(got).all()


def test_matmul_transposes_as_read_on_stacked_matrices():
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((2, 4, 3)), rng.standard_normal((2, 5, 4))
    got = eg.matmul(eg.tensor(a), eg.tensor(b), transpose_a=True, transpose_b=True).numpy()
    np.testing.assert_allclose(got, np.swapaxes(a, -1, -2) @ np.swapaxes(b, -1, -2))
