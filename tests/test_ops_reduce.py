"""Reductions over axes (None, one, negative, several; keepdims): values against numpy,
gradients against central differences, and where max/min send the gradient. Also the running
sum along an axis, cumsum."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import edugraph as eg
from tests.gradcheck import gradcheck
from tests.strategies import arrays, checks, distinct_arrays, shape_and_axis, shapes

REDUCTIONS = {   # name: (edugraph function, numpy reference)
    "reduce_sum": (eg.reduce_sum, np.sum),
    "reduce_mean": (eg.reduce_mean, np.mean),
    "reduce_max": (eg.reduce_max, np.max),
    "reduce_min": (eg.reduce_min, np.min),
    "reduce_variance": (eg.math.reduce_variance, np.var),
    "reduce_std": (eg.math.reduce_std, np.std),
    "logsumexp": (eg.logsumexp,
                  lambda x, axis, keepdims: np.log(np.exp(x).sum(axis=axis, keepdims=keepdims))),
    "norm": (lambda x, axis, keepdims: eg.norm(x, axis=axis, keepdims=keepdims),
             lambda x, axis, keepdims: np.sqrt((x * x).sum(axis=axis, keepdims=keepdims))),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@checks
@given(data=st.data(), shape_axis=shape_and_axis(), keepdims=st.booleans())
def test_reductions_over_axes(device, name, data, shape_axis, keepdims):
    fn, ref = REDUCTIONS[name]
    shape, axis = shape_axis
    # distinct values: max/min have a single winner, and std is away from 0 (its kink), so
    # they are differentiable there; the norm's kink is where all values are 0
    x = data.draw(distinct_arrays(shape) if name in ("reduce_max", "reduce_min", "reduce_std")
                  else arrays(shape, avoid=(0,) if name == "norm" else ()))
    got = fn(eg.tensor(x, device=device), axis, keepdims)
    want = ref(x, axis=axis, keepdims=keepdims)
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    gradcheck(lambda t: fn(t, axis, keepdims), x, device=device, name=f"{name} axis={axis}")


@checks
@given(data=st.data(), shape=shapes(min_dims=1), exclusive=st.booleans(), reverse=st.booleans())
def test_cumsum_along_an_axis(device, data, shape, exclusive, reverse):
    """Each total against its definition: the sum of the elements at or before it (before it
    only: exclusive; at or after it: reverse), written as a 0/1 matrix over the axis."""
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = data.draw(arrays(shape))
    n = shape[axis]
    i, j = np.indices((n, n))
    counted = (j >= i if reverse else j <= i) & ((j != i) if exclusive else True)
    want = np.moveaxis(np.tensordot(counted, np.moveaxis(x, axis, 0), axes=1), 0, axis)
    got = eg.cumsum(eg.tensor(x, device=device), axis, exclusive, reverse)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)
    gradcheck(lambda t: eg.cumsum(t, axis, exclusive, reverse), x, device=device,
              name=f"cumsum axis={axis} exclusive={exclusive} reverse={reverse}")


def test_cumsum_keeps_integers_and_a_scalar_as_pytorch(device):
    counts = eg.tensor([[1, 2], [3, 4]], device=device)
    assert eg.cumsum(counts, dim=1).tolist() == [[1, 3], [3, 7]]
    assert eg.cumsum(counts, 0).dtype == eg.int64
    assert eg.math.cumsum(eg.tensor([1.0, 2.0, 3.0], device=device), reverse=True).tolist() \
        == [6, 5, 3]
    assert eg.cumsum(eg.tensor(2.0, device=device), 0).shape == ()   # its own total
    with pytest.raises(TypeError, match=r"cumsum adds up along one axis, an integer; got "
                       r"axis=None\. Write e\.g\. eg\.cumsum\(x, axis=0\) or x\.cumsum\(0\)"):
        counts.cumsum()
    with pytest.raises(eg.errors.ShapeError, match=r"cumsum over axis 2: a tensor of shape "
                       r"\(2, 2\) has axes -2\.\.1"):
        eg.cumsum(counts, 2)


def test_norm_orders_and_their_errors(device):
    x = eg.tensor([[3.0, -4.0], [0.0, 1.0]], device=device)
    assert eg.norm(x[0]).item() == 5 and eg.norm(x, 1).item() == 8
    assert eg.norm(x, np.inf, axis=1).tolist() == [4, 1]
    assert eg.norm(x, "fro", axis=(0, 1)).item() == pytest.approx(26 ** 0.5)
    assert x.norm(p=1, dim=(0, 1)).item() == 8                  # PyTorch: a vector norm
    assert eg.norm(eg.tensor([3, 4], device=device)).dtype == eg.float32
    with pytest.raises(ValueError, match=r"norm\(ord=1, axis=\(0, 1\)\): over two axes TF's "
                       r"tf\.norm computes a matrix norm .* PyTorch's torch\.norm a vector norm"):
        eg.norm(x, 1, (0, 1))
    with pytest.raises(ValueError, match=r"for ord=2 the largest singular value"):
        eg.norm(x, 2, (0, 1))
    with pytest.raises(ValueError, match=r"norm: ord \(PyTorch's p\) 3 is not supported; "
                       r"edugraph has 'euclidean' \(= 'fro' = 2\), 1 and np\.inf\. Another "
                       r"p-norm is eg\.reduce_sum\(eg\.abs\(x\) \*\* p\) \*\* \(1 / p\)"):
        x.norm(3)


def test_method_spellings(device):
    x = np.arange(24.0).reshape(2, 3, 4)
    t = eg.tensor(x, device=device)
    np.testing.assert_allclose(t.sum(dim=1, keepdim=True).numpy(), x.sum(1, keepdims=True))
    np.testing.assert_allclose(t.mean(axis=(0, 2)).numpy(), x.mean((0, 2)))
    np.testing.assert_allclose(t.max(-1).values.numpy(), x.max(-1))     # PyTorch: a pair
    np.testing.assert_array_equal(t.max(-1).indices.numpy(), x.argmax(-1))
    np.testing.assert_allclose(t.max(axis=-1).values.numpy(), x.max(-1))  # (axis is dim)
    np.testing.assert_allclose(t.min().numpy(), x.min())
    np.testing.assert_allclose(eg.sum(t, 0).numpy(), x.sum(0))
    np.testing.assert_allclose(t.logsumexp(dim=1).numpy(),
                               np.log(np.exp(x).sum(1)), rtol=1e-6)


TF1_SPELLINGS = {   # TF1 code as found in tutorials: axes as lists, the old keyword names
    "axis list": (lambda t: eg.reduce_sum(t, axis=[0, 2]), lambda x: x.sum((0, 2))),
    "reduction_indices": (lambda t: eg.reduce_mean(t, reduction_indices=[1]),
                          lambda x: x.mean(1)),
    "keep_dims": (lambda t: eg.reduce_max(t, 2, keep_dims=True), lambda x: x.max(2, keepdims=True)),
    "std axis list": (lambda t: eg.math.reduce_std(t, [1]), lambda x: x.std(1)),
    "moments keep_dims": (lambda t: eg.nn.moments(t, [0, 1], keep_dims=True)[1],
                          lambda x: x.var((0, 1), keepdims=True)),
    "squeeze list": (lambda t: eg.squeeze(t[:, :1], [1]), lambda x: x[:, 0]),
    "squeeze_dims": (lambda t: eg.squeeze(t[:, :1], squeeze_dims=[1]), lambda x: x[:, 0]),
    "argmax dimension": (lambda t: eg.argmax(t, dimension=1), lambda x: x.argmax(1)),
}


@pytest.mark.parametrize("name", TF1_SPELLINGS)
def test_tf1_spellings_of_axes(name):
    """Eagerly and in a Session: the same values."""
    ours, want = TF1_SPELLINGS[name]
    x = np.random.default_rng(0).normal(size=(2, 3, 4))
    np.testing.assert_allclose(ours(eg.tensor(x)).numpy(), want(x))
    with eg.Graph().as_default():
        fed = eg.placeholder(eg.float64, (None, 3, 4))
        out = ours(fed)
        with eg.Session() as sess:
            value = sess.run(out, {fed: x})
    assert out.shape.is_compatible_with(value.shape)
    np.testing.assert_allclose(value, want(x))


def test_tf1_mnist_cross_entropy_as_written():
    """TF1's "MNIST for ML beginners": cross-entropy with reduction_indices=[1]."""
    probs = np.array([[0.7, 0.2, 0.1], [0.1, 0.1, 0.8]], dtype=np.float32)
    labels = np.array([[1.0, 0, 0], [0, 0, 1]], dtype=np.float32)
    with eg.Graph().as_default():
        y = eg.placeholder(eg.float32, [None, 3])
        y_ = eg.placeholder(eg.float32, [None, 3])
        cross_entropy = eg.reduce_mean(-eg.reduce_sum(y_ * eg.log(y), reduction_indices=[1]))
        with eg.Session() as sess:
            value = sess.run(cross_entropy, feed_dict={y: probs, y_: labels})
    assert value == pytest.approx(-(np.log(0.7) + np.log(0.8)) / 2, rel=1e-6)


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
                      (t.argmax(), x.argmax()), (t.argmax(axis=1), x.argmax(axis=1)),
                      (t.argmin(axis=0, keepdims=True), x.argmin(axis=0, keepdims=True))]:
        np.testing.assert_array_equal(got.numpy(), want)
        assert not got.requires_grad
    assert eg.reduce_any(t > 8.5).item() and not eg.reduce_all(t > 1.5).item()
    np.testing.assert_array_equal(eg.reduce_all(t > 1.5, axis=1).numpy(), [False, True])


def test_argmax_without_an_axis_is_tfs_in_tf_math_torchs_on_tensors_and_refused_between():
    """TF's tf.math.argmax works along axis 0, PyTorch's torch.argmax flattens: the same name,
    two answers. eg.math is TF's, a tensor's method PyTorch's; eg.argmax asks which."""
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 5.0], [7.0, 2.0]])
    t = eg.tensor(x)
    np.testing.assert_array_equal(eg.math.argmax(t).numpy(), [1, 0])
    np.testing.assert_array_equal(eg.math.argmin(t).numpy(), [0, 1])
    np.testing.assert_array_equal(eg.math.argmax(t, dimension=1).numpy(), [1, 0])
    assert eg.math.argmax(t, output_type=eg.int32).dtype == eg.int32
    assert t.argmax().item() == torch.tensor(x).argmax().item() == 2
    assert t.argmin().item() == torch.tensor(x).argmin().item() == 0
    np.testing.assert_array_equal(eg.argmax(t, 1).numpy(), torch.argmax(torch.tensor(x), 1))
    np.testing.assert_array_equal(eg.argmin(t, dim=0).numpy(), torch.argmin(torch.tensor(x), 0))
    assert eg.argmax(eg.tensor([3.0, 9.0, 1.0])).item() == 1      # one axis: both agree
    for kind in ("argmax", "argmin"):
        with pytest.raises(ValueError, match=rf"eg\.{kind}\(x\) without an axis is ambiguous "
                           rf"for x of shape \(2, 2\).*eg\.{kind}\(x, axis=0\) or "
                           rf"eg\.math\.{kind}\(x\) as in TF, x\.{kind}\(\) as in PyTorch"):
            getattr(eg, kind)(t)
    with eg.Graph().as_default():
        with pytest.raises(ValueError, match="ambiguous for x of shape <unknown>"):
            eg.argmax(eg.placeholder(eg.float32))
        column = eg.math.argmax(eg.placeholder(eg.float32, (None, 3), name="p"))
        with eg.Session() as sess:
            np.testing.assert_array_equal(sess.run(column, {"p:0": [[1, 5, 0], [7, 2, 3]]}),
                                          [1, 0, 1])


def test_mean_of_integers_is_float(device):
    got = eg.reduce_mean(eg.tensor([1, 2], device=device))
    assert got.item() == 1.5
