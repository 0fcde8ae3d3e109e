"""Ops that move values: reshape, transpose, broadcast, expand/squeeze, concat, stack,
indexing (scatter-add gradient), gather, one_hot, device copies."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import edugraph as eg
from tests.gradcheck import gradcheck
from tests.strategies import arrays, checks, shapes


def on(device, a, **kw):
    return eg.tensor(a, device=device, **kw)


@checks
@given(data=st.data(), shape=shapes(min_dims=1))
def test_reshape(device, data, shape):
    x = data.draw(arrays(shape))
    np.testing.assert_array_equal(eg.reshape(on(device, x), (-1,)).numpy(), x.reshape(-1))
    target = (int(np.prod(shape[1:])), shape[0])
    assert on(device, x).reshape(*target).shape == target
    gradcheck(lambda t: eg.reshape(t, target), x, device=device, name="reshape")


@checks
@given(data=st.data(), shape=shapes(min_dims=1))
def test_transpose_and_permute(device, data, shape):
    x = data.draw(arrays(shape))
    perm = data.draw(st.permutations(range(len(shape))))
    np.testing.assert_array_equal(eg.transpose(on(device, x), perm).numpy(),
                                  np.transpose(x, perm))
    np.testing.assert_array_equal(on(device, x).permute(*perm).numpy(), np.transpose(x, perm))
    np.testing.assert_array_equal(eg.transpose(on(device, x)).numpy(), x.T)
    gradcheck(lambda t: eg.transpose(t, perm), x, device=device, name="transpose")


def test_transpose_method_swaps_two_dims_and_T_reverses(device):
    x = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(on(device, x).transpose(0, 2).numpy(), x.swapaxes(0, 2))
    np.testing.assert_array_equal(on(device, x).transpose().numpy(), x.swapaxes(-1, -2))
    np.testing.assert_array_equal(on(device, x).T.numpy(), x.T)


@checks
@given(data=st.data(), shape=shapes(max_dims=2), lead=shapes(min_dims=1, max_dims=2))
def test_broadcast_to(device, data, shape, lead):
    x = data.draw(arrays(shape))
    target = tuple(lead) + tuple(n * 3 if n == 1 else n for n in shape)
    got = eg.broadcast_to(on(device, x), target)
    np.testing.assert_array_equal(got.numpy(), np.broadcast_to(x, target))
    assert on(device, x).expand(*target).shape == target
    gradcheck(lambda t: eg.broadcast_to(t, target), x, device=device, name="broadcast_to")


@checks
@given(data=st.data(), shape=shapes(max_dims=3))
def test_expand_dims_and_squeeze(device, data, shape):
    x = data.draw(arrays(shape))
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    expanded = eg.expand_dims(on(device, x), axis)
    np.testing.assert_array_equal(expanded.numpy(), np.expand_dims(x, axis))
    np.testing.assert_array_equal(eg.squeeze(expanded, axis).numpy(), x)
    gradcheck(lambda t: eg.squeeze(eg.expand_dims(t, axis), axis), x, device=device,
              name="expand_dims/squeeze")
    np.testing.assert_array_equal(on(device, x).unsqueeze(axis).squeeze().numpy(),
                                  np.squeeze(x))


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(device, axis):
    rng = np.random.default_rng(0)
    a, b, c = (rng.normal(size=s) for s in [(2, 3), (2, 3), (2, 3)])
    if axis == 0:
        b = rng.normal(size=(4, 3))
    else:
        c = rng.normal(size=(2, 1))
    got = eg.concat([on(device, a), on(device, b), on(device, c)], axis)
    np.testing.assert_array_equal(got.numpy(), np.concatenate([a, b, c], axis))
    gradcheck(lambda *ts: eg.concat(ts, axis), a, b, c, device=device, name="concat")
    assert eg.cat([on(device, a), on(device, a)], axis).shape[axis] == 2 * a.shape[axis]


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_stack(device, axis):
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(2, 3)) for _ in range(3)]
    got = eg.stack([on(device, x) for x in xs], axis)
    np.testing.assert_array_equal(got.numpy(), np.stack(xs, axis))
    gradcheck(lambda *ts: eg.stack(ts, axis), *xs, device=device, name="stack")


BASIC_INDEXES = [1, -1, slice(1, 3), (0, 2), (slice(None), 1), (Ellipsis, 0),
                 (slice(None, None, -1), slice(0, 3, 2)), (None, 1), ()]


@pytest.mark.parametrize("index", BASIC_INDEXES, ids=repr)
def test_basic_indexing(device, index):
    x = np.arange(12.0).reshape(3, 4) / 7
    np.testing.assert_array_equal(on(device, x)[index].numpy(), x[index])
    gradcheck(lambda t: t[index], x, device=device, name=f"getitem {index!r}")


def test_integer_array_indexing_with_repeats_scatter_adds(device):
    x = on(device, [10.0, 20.0, 30.0], requires_grad=True)
    picked = x[[0, 2, 0, 0]]
    np.testing.assert_array_equal(picked.numpy(), [10, 30, 10, 10])
    picked.backward(on(device, [1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(x.grad.numpy(), [1 + 3 + 4, 0, 2])   # repeats add up


@pytest.mark.parametrize("index", [
    ([2, 0, 2],), (slice(None), [3, 3, 1]), ([0, 2], [1, 1]), (np.array([[0, 0], [1, 2]]),),
    (np.array([True, False, True]),)], ids=repr)
def test_advanced_indexing(device, index):
    x = np.arange(12.0).reshape(3, 4) / 7
    np.testing.assert_array_equal(on(device, x)[index].numpy(), x[index])
    gradcheck(lambda t: t[index], x, device=device, name=f"getitem {index!r}")


def test_indexing_with_a_tensor(device):
    x = on(device, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    rows = on(device, [2, 2, 0])
    x[rows].sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[1, 1], [0, 0], [2, 2]])


@pytest.mark.parametrize("axis", [0, 1])
def test_gather(device, axis):
    params = np.arange(12.0).reshape(3, 4) / 5
    indices = np.array([[2, 0], [0, 0], [1, 2]]) if axis == 0 else np.array([3, 1, 3])
    got = eg.gather(on(device, params), on(device, indices), axis=axis)
    np.testing.assert_array_equal(got.numpy(), np.take(params, indices, axis=axis))
    grads = gradcheck(lambda p, i: eg.gather(p, i, axis=axis), params, indices,
                      device=device, name=f"gather axis={axis}")
    repeats = np.bincount(indices.ravel(), minlength=params.shape[axis])
    assert (grads[0] != 0).any(axis=1 - axis).tolist() == (repeats > 0).tolist()


def test_gather_repeated_rows_add_up(device):
    table = on(device, np.ones((4, 2)), requires_grad=True)
    eg.gather(table, on(device, [1, 3, 1, 1]), axis=0).sum().backward()
    np.testing.assert_array_equal(table.grad.numpy(), [[0, 0], [3, 3], [0, 0], [1, 1]])


def test_gather_takes_indices_as_lists(device):
    """tf.gather(params, [2, 0]): Python indices stay integers (not params' float dtype)."""
    params = on(device, np.arange(6.0).reshape(3, 2), requires_grad=True)
    np.testing.assert_array_equal(eg.gather(params, [2, 0]).numpy(), [[4, 5], [0, 1]])
    np.testing.assert_array_equal(eg.gather(params, (1,), axis=1).numpy(), [[1], [3], [5]])
    np.testing.assert_array_equal(params.index_select(0, [1, 1]).numpy(), [[2, 3], [2, 3]])
    eg.gather(params, [[2], [2]]).sum().backward()
    np.testing.assert_array_equal(params.grad.numpy(), [[0, 0], [0, 0], [2, 2]])
    with pytest.raises(TypeError, match=r"^gather: indices must be integers, got float32"):
        eg.gather(params, [0.5])
    np.testing.assert_array_equal(eg.gather([[1.0], [2.0]], [1]).numpy(), [[2.0]])
    with eg.Graph().as_default():
        p = eg.placeholder(eg.float32, shape=(None, 2))
        with eg.Session() as sess:
            got = sess.run(eg.gather(p, [1, 0], axis=1), {p: [[1.0, 2.0]]})
    np.testing.assert_array_equal(got, [[2.0, 1.0]])


def test_concat_gradient_when_the_sizes_are_known_only_at_run_time():
    with eg.Graph().as_default():
        a = eg.placeholder(eg.float64, shape=(None, 2))
        b = eg.placeholder(eg.float64, shape=(None, 2))
        joined = eg.concat([a, b * b], 0)
        grads = eg.gradients(eg.reduce_sum(joined * [[1.0, 2.0]]), [a, b])
        with eg.Session() as sess:
            ga, gb = sess.run(grads, {a: np.ones((1, 2)), b: np.full((3, 2), 3.0)})
    np.testing.assert_array_equal(ga, [[1.0, 2.0]])
    np.testing.assert_array_equal(gb, np.tile([[6.0, 12.0]], (3, 1)))


def test_one_hot(device):
    indices = on(device, [[0, 2], [1, 3]])
    got = eg.one_hot(indices, 4)
    assert got.shape == (2, 2, 4) and got.dtype == eg.float32 and got.device.name == device
    np.testing.assert_array_equal(got.numpy(), np.eye(4)[[[0, 2], [1, 3]]])
    assert eg.one_hot(on(device, [1]), 3, dtype=eg.int32).dtype == eg.int32


def test_copy_between_devices_carries_the_gradient_back(device):
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    moved = x.to(device)
    assert moved.device.name == device
    (moved * moved).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2, 4])
    assert x.grad.device.name == "cpu:0"
    assert moved.cpu().device.name == "cpu:0"


def test_identity(device):
    gradcheck(eg.identity, np.array([1.0, -2.0]), device=device, name="identity")


def test_boolean_mask_from_a_comparison(device):
    x = on(device, [[1.0, -2.0], [-3.0, 4.0]], requires_grad=True)
    positive = x[x > 0]
    np.testing.assert_array_equal(positive.numpy(), [1, 4])
    (positive * on(device, [10.0, 20.0])).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[10, 0], [0, 20]])


def test_pytorch_and_tf_spellings_of_shape_functions(device):
    """The same function names take both spellings where they cannot be confused:
    transpose(x, 0, 1) and zeros(2, 3) as in PyTorch, transpose(x, perm) and
    zeros(shape, dtype) as in TF; concat of one tensor returns it, as in TF."""
    x = np.arange(24.0).reshape(2, 3, 4)
    t = on(device, x)
    np.testing.assert_array_equal(eg.transpose(t, 0, 2).numpy(), x.swapaxes(0, 2))
    np.testing.assert_array_equal(eg.transpose(t, [1, 0, 2]).numpy(), x.transpose(1, 0, 2))
    with pytest.raises(TypeError, match=r"transpose\(x, 1, \.\.\.\): TF's perm lists every "
                       r"axis .* PyTorch's transpose\(x, dim0, dim1\)"):
        eg.transpose(t, 1)
    np.testing.assert_array_equal(eg.concat(t, 0).numpy(), x)
    with eg.device(device):
        assert eg.zeros(2, 3).shape == (2, 3) and eg.zeros(2, 3).dtype == eg.float32
        assert eg.ones(4).shape == (4,) and eg.ones(2, 3, dtype=eg.int64).dtype == eg.int64
        assert eg.zeros((2, 3), eg.float64).dtype == eg.float64
        assert eg.ones([2], "int32").dtype == eg.int32
    with eg.Graph().as_default():
        assert eg.ones((2,), eg.int64, "o").name == "o:0"
        assert eg.zeros(2, 3, name="z").shape.as_list() == [2, 3]
