"""Static shape inference in graphs: TF1's shapes before anything runs, clear errors early."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import ShapeError


def test_reshape_infers_minus_one_when_the_size_is_known_and_leaves_it_unknown_otherwise():
    with eg.Graph().as_default():
        known = eg.placeholder(eg.float32, (3, 4, 2), name="known")
        batch = eg.placeholder(eg.float32, (None, 4, 2), name="batch")
        assert eg.reshape(known, (-1, 8)).shape == (3, 8)
        assert eg.reshape(batch, (-1, 8)).shape.as_list() == [None, 8]
        fixed_rows = eg.reshape(batch, (3, -1))
        assert fixed_rows.shape.as_list() == [3, None]
        with eg.Session() as sess:
            out = sess.run(fixed_rows, {batch: np.arange(24.0).reshape(3, 4, 2)})
        np.testing.assert_array_equal(out, np.arange(24.0).reshape(3, 8))


@pytest.mark.parametrize("target", [(5, -1), (5, 3)])
def test_reshape_to_an_impossible_shape_fails_when_the_graph_is_built(target):
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (3, 4, 2), name="x")
        with pytest.raises(ShapeError, match=r"\(3, 4, 2\) \(24 elements\) into \(5, "):
            eg.reshape(x, target)


def test_reshape_with_an_unknown_batch_reports_the_run_time_shape():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (None, 4, 2), name="x")
        y = eg.reshape(x, (5, -1))
        with eg.Session() as sess:
            with pytest.raises(eg.errors.InvalidArgumentError,
                               match=r"shape \(3, 4, 2\) \(24 elements\) into \(5, -1\)"):
                sess.run(y, {x: np.ones((3, 4, 2))})


# What a graph says before running must match what runs: a wrong static shape would, for
# instance, make a gradient sum to the wrong shape. Each op is built on placeholders whose
# batch size is known or not, run, and compared with its eager result.
_A = np.random.default_rng(0).normal(size=(2, 3, 4)).astype(np.float32)
_B = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
STATIC_CASES = {
    "where": lambda a, b: eg.where(a > 0, a, b),
    "clip": lambda a, b: eg.clip(a, b, 1.0),
    "sum over an axis": lambda a, b: eg.reduce_sum(a, axis=-1),
    "sum keepdims": lambda a, b: eg.reduce_sum(a, axis=(0, 2), keepdims=True),
    "sum of integers": lambda a, b: eg.reduce_sum(eg.cast(a, eg.int32), axis=0),
    "mean of integers": lambda a, b: eg.reduce_mean(eg.cast(a, eg.int32)),
    "max": lambda a, b: eg.reduce_max(a, axis=-2),
    "variance": lambda a, b: eg.math.reduce_variance(a, axis=(1, 2)),
    "std keepdims": lambda a, b: eg.std(b, -1, keepdim=True),
    "argmax": lambda a, b: eg.argmax(a, -1),
    "any": lambda a, b: eg.reduce_any(a > 0, axis=1),
    "logsumexp keepdims": lambda a, b: eg.reduce_logsumexp(a, axis=1, keepdims=True),
    "matmul": lambda a, b: eg.matmul(a, b, transpose_b=True),
    "reshape": lambda a, b: eg.reshape(a, (2, -1)),
    "transpose": lambda a, b: eg.transpose(a, (2, 0, 1)),
    "squeeze": lambda a, b: eg.squeeze(eg.expand_dims(a, 1), 1),
    "concat": lambda a, b: eg.concat([a, a * 2.0], -1),
    "stack": lambda a, b: eg.stack([a, a], -1),
    "gather": lambda a, b: eg.gather(a, [[0, 1]], axis=2),
    "getitem": lambda a, b: a[None, 0, 1:, ::2],
    "one_hot": lambda a, b: eg.one_hot(eg.argmax(a, -1), 5),
    "broadcast_to": lambda a, b: eg.broadcast_to(b, (2, 3, 4)),
    "divide integers": lambda a, b: eg.cast(a, eg.int32) / 2,
    "add_n": lambda a, b: eg.add_n([a, b, b]),
    "sparse cross-entropy": lambda a, b: eg.nn.sparse_softmax_cross_entropy_with_logits(
        labels=eg.argmax(a, -1), logits=a),
    "logical": lambda a, b: (a > 0) & (b < 0),
    "conv2d": lambda a, b: eg.nn.conv2d(eg.expand_dims(a, -1), eg.ones((2, 2, 1, 3))),
    "max_pool same": lambda a, b: eg.nn.max_pool2d(eg.expand_dims(a, -1), 2, padding="same"),
    "zeros_like": lambda a, b: eg.zeros_like(a),
}


PLACEHOLDER_SHAPES = {         # what the graph knows of a and b before they are fed
    "known": (_A.shape, _B.shape),
    "batch unknown": ((None, 3, 4), (None, 4)),
    "sizes unknown": ((None, None, None), (None, None)),
    "rank unknown": (None, None),   # eg.placeholder(eg.float32), TF1's first examples
}
# ops that must know a size or the rank when the graph is built say so (and how to give it)
NEEDS_SIZES = {("sparse cross-entropy", "sizes unknown"): "no known class axis",
               ("sparse cross-entropy", "rank unknown"): "no known class axis"}
for _conv in ("conv2d", "max_pool same"):
    NEEDS_SIZES[_conv, "sizes unknown"] = "the height and width of the input"
    NEEDS_SIZES[_conv, "rank unknown"] = "expects a 4-D NHWC input"


@pytest.mark.parametrize("known", PLACEHOLDER_SHAPES)
@pytest.mark.parametrize("name", STATIC_CASES)
def test_static_shape_and_dtype_agree_with_what_runs(name, known):
    """... and so do the gradients, which are built from those shapes."""
    build = STATIC_CASES[name]
    a_eager, b_eager = eg.tensor(_A, requires_grad=True), eg.tensor(_B, requires_grad=True)
    eager = build(a_eager, b_eager)
    with eg.Graph().as_default():
        a_shape, b_shape = PLACEHOLDER_SHAPES[known]
        a, b = eg.placeholder(eg.float32, a_shape), eg.placeholder(eg.float32, b_shape)
        if (name, known) in NEEDS_SIZES:
            with pytest.raises(ShapeError, match=NEEDS_SIZES[name, known] + r".*shape=\("):
                build(a, b)
            return
        out = build(a, b)
        differentiable = eager.requires_grad
        grads = eg.gradients(eg.reduce_sum(out * out), [a, b]) if differentiable else []
        with eg.Session() as sess:
            value, *grad_values = sess.run([out] + [g for g in grads if g is not None],
                                           {a: _A, b: _B})
    value = np.asarray(value)
    assert out.shape.is_compatible_with(value.shape) and out.dtype == value.dtype, \
        f"{name}: static {out.shape} {out.dtype}, ran {value.shape} {value.dtype}"
    assert out.shape.is_fully_defined() or known != "known"
    assert value.dtype == eager.dtype
    np.testing.assert_allclose(value, eager.numpy(), rtol=1e-6)
    if differentiable:
        eg.reduce_sum(eager * eager).backward()
        expected = [t.grad.numpy() for t in (a_eager, b_eager) if t.grad is not None]
        assert [g is not None for g in grads] == [t.grad is not None for t in (a_eager, b_eager)]
        for got, want in zip(grad_values, expected):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_tensor_shape_answers_tfs_questions():
    """rank, dims and num_elements() as TF's TensorShape; as_list() of an unknown rank is TF's
    error (it gave [], as if a scalar)."""
    with eg.Graph().as_default():
        batch = eg.placeholder(eg.float32, (None, 3)).shape
        fixed = eg.placeholder(eg.float32, (2, 3)).shape
        scalar = eg.placeholder(eg.float32, ()).shape
        unknown = eg.placeholder(eg.float32).shape
    assert (batch.rank, batch.dims, batch.num_elements()) == (2, [None, 3], None)
    assert (fixed.rank, fixed.num_elements(), scalar.num_elements()) == (2, 6, 1)
    assert (unknown.rank, unknown.dims, unknown.num_elements()) == (None, None, None)
    assert batch.as_list() == [None, 3]
    with pytest.raises(ValueError, match="as_list\\(\\) is not defined on an unknown "
                                         "TensorShape"):
        unknown.as_list()
