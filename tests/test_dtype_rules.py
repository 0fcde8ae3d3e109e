"""PyTorch's dtype rules where an integer tensor or a numpy number meets floats: the float's
dtype (float32), never numpy's silent float64. Each case computed in float64 or truncated to
integers before its fix."""
import numpy as np
import pytest

import edugraph as eg


@pytest.mark.parametrize("join", [lambda ts: eg.cat(ts), lambda ts: eg.stack(ts)])
def test_joining_an_int_tensor_to_a_float_one_gives_the_float_dtype(device, join):
    a = eg.tensor([1.5], device=device, requires_grad=True)
    joined = join([a, eg.tensor([2], device=device)])
    assert joined.dtype == eg.float32
    np.testing.assert_array_equal(joined.numpy().ravel(), [1.5, 2.0])
    (joined * 3.0).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [3.0])


def test_joining_in_a_graph_promotes_as_eagerly():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (None, 1))
        joined = eg.concat([x, eg.constant([[1]], dtype=eg.int64)], axis=0)
        assert joined.dtype == eg.float32
        with eg.Session() as sess:
            np.testing.assert_array_equal(sess.run(joined, {x: [[0.5]]}), [[0.5], [1.0]])


def test_clamping_an_int_tensor_to_float_bounds_computes_in_float32(device):
    clamped = eg.clamp(eg.tensor([-1, 5], device=device), 0.5, 3.5)
    assert clamped.dtype == eg.float32
    np.testing.assert_array_equal(clamped.numpy(), [0.5, 3.5])
    assert eg.clamp(eg.tensor([-1, 5], device=device), 0, 3).dtype == eg.int64


def test_numpy_float64_scalars_adapt_like_python_floats(device):
    """np.float64 is a Python float: ``x / np.sqrt(d_k)`` stays float32, as in PyTorch."""
    x = eg.tensor([1.0, 2.0], device=device)
    scaled = x / np.sqrt(4.0)
    assert scaled.dtype == eg.float32
    np.testing.assert_array_equal(scaled.numpy(), [0.5, 1.0])
    assert (eg.tensor([1, 2], device=device) * np.float64(2.5)).dtype == eg.float32
    with eg.Graph().as_default():
        assert (eg.placeholder(eg.float32, (2,)) / np.sqrt(4.0)).dtype == eg.float32


@pytest.mark.parametrize("dtype", ["bool", "uint8", "uint16", "int8", "int32"])
def test_integer_totals_are_int64_as_in_pytorch(device, dtype):
    """numpy totals uint8 pixels as uint64 (and a graph inferred it so); PyTorch as int64."""
    values = np.array([[255, 1, 0], [200, 7, 1]]).astype(dtype)
    x = eg.tensor(values, device=device)
    totals = [eg.reduce_sum(x), x.sum(dim=1), eg.cumsum(x, 1)]
    expected = [values.astype(np.int64).sum(), values.astype(np.int64).sum(1),
                values.astype(np.int64).cumsum(1)]
    for total, want in zip(totals, expected):
        assert total.dtype == eg.int64
        np.testing.assert_array_equal(total.numpy(), want)
    torch = pytest.importorskip("torch")
    assert str(torch.sum(torch.tensor(values)).dtype) == "torch.int64"


def test_integer_totals_in_a_graph_are_inferred_as_they_run():
    with eg.Graph().as_default():
        pixels = eg.placeholder(eg.uint8, (None, 3))
        total, running = eg.reduce_sum(pixels, axis=1), eg.cumsum(pixels, axis=1)
        assert total.dtype == running.dtype == eg.int64
        with eg.Session() as sess:
            got = sess.run([total, running], {pixels: np.array([[255, 255, 1]], np.uint8)})
    np.testing.assert_array_equal(got[0], [511])
    np.testing.assert_array_equal(got[1], [[255, 510, 511]])
    assert got[0].dtype == got[1].dtype == np.int64


def test_python_whole_numbers_are_int32_as_in_tf_unless_too_large():
    """TF's defaults: tf.constant(0) and tf.Variable(0) are int32 (eagerly too: eg.Variable
    took PyTorch's int64); a number beyond int32 is int64 (int32 would wrap 2**40 round to 0)."""
    assert eg.constant(0).dtype == eg.int32 and eg.Variable(0).dtype == eg.int32
    assert eg.Variable([1, 2]).dtype == eg.int32 and eg.Variable(1.5).dtype == eg.float32
    assert eg.Variable(np.int64(3)).dtype == eg.int64           # numpy keeps its own
    assert eg.constant(2**40).numpy() == 2**40 and eg.constant(2**40).dtype == eg.int64
    assert eg.Variable([1, 2**40]).dtype == eg.int64
    with eg.Graph().as_default():
        assert eg.Variable(0).dtype == eg.int32 and eg.constant(-2**40).dtype == eg.int64


def test_tf1_div_floors_whole_numbers_as_python_2():
    """TF1's tf.div is Python 2's /: -7 / 2 is -4 for ints (int32 for Python's); eg.div is
    PyTorch's true division."""
    tf = eg.compat.v1
    assert tf.div(-7, 2).numpy() == -4 and tf.div(-7, 2).dtype == eg.int32
    assert tf.div(eg.constant([-7, 7]), 2).numpy().tolist() == [-4, 3]
    assert tf.div(-7.0, 2).numpy() == -3.5 and eg.div(-7, 2).numpy() == -3.5
    with eg.Graph().as_default():
        x = tf.placeholder(tf.int32)
        with tf.Session() as sess:
            assert sess.run(tf.div(x, 2), {x: [-7, 7]}).tolist() == [-4, 3]
