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
