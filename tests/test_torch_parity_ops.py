"""Issue 44, section 4: the ops that course code meets, each against PyTorch CPU (values and
gradients, float64) and float64 finite differences (``gradcheck``), on every device."""
import numpy as np
import pytest

import edugraph as eg
import edugraph.nn.functional as F
from tests.gradcheck import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(44)
A = rng.normal(size=(3, 4))
CUBE = rng.normal(size=(2, 3, 4))
SQUARE = rng.normal(size=(4, 4))
DISTINCT = rng.permutation(24).reshape(2, 3, 4) * 0.25 - 3.0      # no ties to sort
INDEX = np.array([[0, 3, 3], [2, 2, 0], [1, 0, 3]])               # repeats: gradients add up
UNIQUE = np.array([[0, 3], [2, 1], [1, 0]])                       # one place each, per row
MASK = A > 0.2


def on(device, array):
    return eg.tensor(array, device=device)


# name: (float inputs, edugraph function, torch function); a function gets each input as a
# tensor, and the device (for the integer index or mask tensors it makes)
CASES = {
    "flip": ([CUBE], lambda x, d: eg.flip(x, (0, 2)), lambda x: torch.flip(x, (0, 2))),
    "flip_method": ([A], lambda x, d: x.flip(-1), lambda x: x.flip(-1)),
    "reverse_tf": ([A], lambda x, d: eg.reverse(x, [0]), lambda x: torch.flip(x, (0,))),
    "roll": ([CUBE], lambda x, d: eg.roll(x, (1, -2), (0, 2)),
             lambda x: torch.roll(x, (1, -2), (0, 2))),
    "roll_flat": ([A], lambda x, d: x.roll(5), lambda x: x.roll(5)),
    "roll_tf_keywords": ([A], lambda x, d: eg.roll(x, shift=-1, axis=1),
                         lambda x: torch.roll(x, -1, 1)),
    "tril": ([CUBE], lambda x, d: eg.tril(x), torch.tril),
    "tril_above": ([A], lambda x, d: x.tril(1), lambda x: x.tril(1)),
    "triu_below": ([CUBE], lambda x, d: eg.triu(x, -1), lambda x: torch.triu(x, -1)),
    "diagonal": ([SQUARE], lambda x, d: eg.diagonal(x), torch.diagonal),
    "diagonal_offset_dims": ([CUBE], lambda x, d: x.diagonal(-1, 2, 1),
                             lambda x: x.diagonal(-1, 2, 1)),
    "diag_of_matrix": ([A], lambda x, d: eg.diag(x, 1), lambda x: torch.diag(x, 1)),
    "diag_of_vector": ([A[0]], lambda x, d: eg.diag(x, -1), lambda x: torch.diag(x, -1)),
    "repeat": ([A], lambda x, d: x.repeat(2, 1, 3), lambda x: x.repeat(2, 1, 3)),
    "tile": ([A], lambda x, d: eg.tile(x, (2,)), lambda x: torch.tile(x, (2,))),
    "repeat_interleave": ([A], lambda x, d: x.repeat_interleave(2, 1),
                          lambda x: x.repeat_interleave(2, 1)),
    "repeat_interleave_counts": ([A], lambda x, d: eg.repeat_interleave(
        x, on(d, np.array([0, 2, 1])), dim=0), lambda x: torch.repeat_interleave(
        x, torch.tensor([0, 2, 1]), dim=0)),
    "repeat_interleave_flat": ([A], lambda x, d: eg.repeat_interleave(x, 2),
                               lambda x: torch.repeat_interleave(x, 2)),
    "sort": ([DISTINCT], lambda x, d: eg.sort(x, 1)[0], lambda x: torch.sort(x, 1)[0]),
    "sort_descending": ([DISTINCT], lambda x, d: x.sort(descending=True).values,
                        lambda x: x.sort(descending=True).values),
    "topk": ([DISTINCT], lambda x, d: eg.topk(x, 2, dim=1).values,
             lambda x: torch.topk(x, 2, dim=1).values),
    "topk_smallest": ([DISTINCT], lambda x, d: x.topk(3, largest=False)[0],
                      lambda x: x.topk(3, largest=False)[0]),
    "gather_dim": ([A], lambda x, d: x.gather(1, on(d, INDEX)),
                   lambda x: x.gather(1, torch.tensor(INDEX))),
    "gather_dim_0": ([A], lambda x, d: eg.gather(x, 0, on(d, INDEX[:2] % 3)),
                     lambda x: torch.gather(x, 0, torch.tensor(INDEX[:2] % 3))),
    "gather_keywords": ([A], lambda x, d: eg.gather(x, dim=1, index=on(d, INDEX[:, :1])),
                        lambda x: torch.gather(x, dim=1, index=torch.tensor(INDEX[:, :1]))),
    "scatter": ([A, A[:, :2] * 3], lambda x, s, d: x.scatter(1, on(d, UNIQUE), s),
                lambda x, s: x.scatter(1, torch.tensor(UNIQUE), s)),
    "scatter_value": ([A], lambda x, d: eg.scatter(x, 0, on(d, UNIQUE[:2] % 3), value=2.5),
                      lambda x: torch.scatter(x, 0, torch.tensor(UNIQUE[:2] % 3), value=2.5)),
    "scatter_add": ([A, A[:, :3] * 2], lambda x, s, d: x.scatter_add(1, on(d, INDEX), s),
                    lambda x, s: x.scatter_add(1, torch.tensor(INDEX), s)),
    "masked_fill": ([A], lambda x, d: eg.masked_fill(x, on(d, MASK), -1.0),
                    lambda x: x.masked_fill(torch.tensor(MASK), -1.0)),
    "masked_select": ([A], lambda x, d: x.masked_select(on(d, MASK)),
                      lambda x: x.masked_select(torch.tensor(MASK))),
    "masked_select_broadcast": ([A[0]], lambda x, d: eg.masked_select(x, on(d, MASK)),
                                lambda x: torch.masked_select(x, torch.tensor(MASK))),
    "eye_times_x": ([A], lambda x, d: eg.matmul(x, eg.eye(4, dtype=eg.float64, device=d)) *
                    eg.eye(3, 4, dtype=eg.float64, device=d),
                    lambda x: x @ torch.eye(4, dtype=torch.float64) *
                    torch.eye(3, 4, dtype=torch.float64)),
}


def _check_against_torch(device, name, cases):
    inputs, ours, theirs = cases[name]
    mine = [eg.tensor(a, device=device, requires_grad=True) for a in inputs]
    ref = [torch.tensor(a, requires_grad=True) for a in inputs]
    out, want = ours(*mine, device), theirs(*ref)
    assert out.shape == tuple(want.shape) and out.dtype == eg.float64
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = np.random.default_rng(0).uniform(0.5, 1.5, size=out.shape)
    (out * eg.tensor(weights, device=device)).sum().backward()
    (want * torch.tensor(weights)).sum().backward()
    for i, (m, r) in enumerate(zip(mine, ref)):
        np.testing.assert_allclose(m.grad.numpy(), r.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}: gradient of input {i}")


@pytest.mark.parametrize("name", CASES)
def test_shape_and_order_ops_match_pytorch(device, name):
    _check_against_torch(device, name, CASES)


@pytest.mark.parametrize("name", CASES)
def test_shape_and_order_ops_pass_gradcheck(name):
    inputs, ours, _ = CASES[name]
    gradcheck(lambda *xs: ours(*xs, "cpu:0"), *inputs, name=name)


def test_sort_argsort_and_topk_indices_match_pytorch():
    x, t = eg.tensor(DISTINCT), torch.tensor(DISTINCT)
    for dim in (0, 1, -1):
        for descending in (False, True):
            ours, theirs = eg.sort(x, dim, descending), torch.sort(t, dim, descending)
            np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
            np.testing.assert_array_equal(eg.argsort(x, dim, descending).numpy(),
                                          torch.argsort(t, dim, descending).numpy())
    np.testing.assert_array_equal(x.topk(2, 1).indices.numpy(), t.topk(2, 1).indices.numpy())
    assert x.argsort().dtype == eg.int64 and x.topk(2)[1].dtype == eg.int64
    # TF's spellings: tf.argsort(values, axis, direction) and tf.math.top_k (last axis)
    np.testing.assert_array_equal(eg.argsort(x, axis=0, direction="DESCENDING").numpy(),
                                  torch.argsort(t, 0, descending=True).numpy())
    np.testing.assert_array_equal(eg.math.top_k(x, 3).values.numpy(), t.topk(3).values.numpy())
    ties = eg.tensor([2, 1, 2, 1, 2])       # a stable sort keeps tied values in their order
    np.testing.assert_array_equal(eg.argsort(ties).numpy(), [1, 3, 0, 2, 4])
    np.testing.assert_array_equal(eg.argsort(ties, descending=True).numpy(), [0, 2, 4, 1, 3])


def test_eye_matches_pytorch_and_tf():
    np.testing.assert_array_equal(eg.eye(3).numpy(), torch.eye(3).numpy())
    np.testing.assert_array_equal(eg.eye(2, 4).numpy(), torch.eye(2, 4).numpy())
    np.testing.assert_array_equal(eg.eye(3, num_columns=2).numpy(), np.eye(3, 2))  # tf.eye
    assert eg.eye(2).dtype == eg.float32 and eg.eye(2, dtype=eg.int64).dtype == eg.int64
    assert eg.eye(2, requires_grad=True).requires_grad
    with pytest.raises(ValueError, match=r"eye\(-1, None\): the numbers of rows and columns"):
        eg.eye(-1)


def test_repeat_and_tile_follow_pytorchs_rules():
    x = eg.tensor([[1, 2], [3, 4]])
    np.testing.assert_array_equal(x.repeat(1, 2).numpy(), torch.tensor([[1, 2], [3, 4]])
                                  .repeat(1, 2).numpy())
    np.testing.assert_array_equal(eg.repeat(x, 2, axis=1).numpy(),       # tf.repeat
                                  np.repeat(x.numpy(), 2, axis=1))
    with pytest.raises(eg.errors.ShapeError, match=r"repeat\(2,\): give a count for each of "
                                                   r"the 2 dimensions.*repeat_interleave"):
        x.repeat(2)
    with pytest.raises(ValueError, match="repeat_interleave: repeats must be one whole number"):
        x.repeat_interleave(eg.tensor([1, 2, 3]), dim=0)


def test_scatter_from_a_larger_src_uses_its_first_elements():
    """As PyTorch does; its gradient, which PyTorch's own backward refuses ("invalid gradient
    ... got [3, 2] but expected shape compatible with [3, 4]"), is 0 for the unused ones."""
    src = CUBE[0]
    want = torch.tensor(A).scatter(1, torch.tensor(UNIQUE), torch.tensor(src))
    np.testing.assert_array_equal(eg.tensor(A).scatter(1, eg.tensor(UNIQUE), eg.tensor(src))
                                  .numpy(), want.numpy())
    (_, grad_src) = gradcheck(lambda x, s: x.scatter(1, eg.tensor(UNIQUE), s), A, src)
    assert (grad_src[:, 2:] == 0).all() and (grad_src[:, :2] != 0).all()


def test_torch_gather_and_scatter_refuse_what_torch_refuses():
    x = eg.tensor(A)
    with pytest.raises(eg.errors.ShapeError, match=r"gather: the index \(shape \(3,\)\) must "
                                                   r"have as many dimensions as the input"):
        x.gather(1, eg.tensor([0, 1, 2]))
    with pytest.raises(TypeError, match="gather: indices must be integers, got float"):
        x.gather(1, eg.tensor([[0.0]]))
    with pytest.raises(eg.errors.ShapeError, match=r"gather along dim 1 of a tensor of shape "
                                                   r"\(3, 4\).*\[0, 4\)"):
        x.gather(1, eg.tensor([[4]]))
    with pytest.raises(eg.errors.ShapeError, match=r"no negative ones"):
        x.gather(1, eg.tensor([[-1]]))
    with pytest.raises(TypeError, match="scatter: give the values to write once"):
        x.scatter(1, eg.tensor([[0]]))
    with pytest.raises(NotImplementedError, match="reduce='multiply' is left out"):
        x.scatter(1, eg.tensor([[0]]), value=1.0, reduce="multiply")


def test_shape_and_order_ops_refuse_bad_dims_by_name():
    x = eg.tensor(A)
    with pytest.raises(eg.errors.ShapeError, match=r"flip: dims \(2,\) must name different "
                                                   r"dimensions of a tensor of shape \(3, 4\)"):
        x.flip(2)
    with pytest.raises(eg.errors.ShapeError, match=r"tril works on matrices.*eg.diag\(v\)"):
        eg.tril(x[0])
    with pytest.raises(ValueError, match="roll: shifts .* must come in pairs"):
        eg.roll(x, (1, 2), 0)
    with pytest.raises(ValueError, match=r"topk: k must be a whole number from 0 to the size "
                                         r"of dim 1, 4"):
        x.topk(5)
    with pytest.raises(TypeError, match="masked_select: the mask must be boolean"):
        x.masked_select(eg.tensor([1, 0, 1, 0]))


def test_new_ops_build_graph_nodes_too():
    """The same functions in a TF1 graph: nodes a Session runs (the inspector reads them)."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (3, 4))
        outs = [eg.flip(x, 0), eg.roll(x, 1, 1), eg.tril(x), eg.diagonal(x),
                eg.tile(x, (1, 2)), eg.sort(x, 1).values, eg.topk(x, 2).values,
                eg.gather(x, 1, eg.constant(INDEX)), eg.repeat_interleave(x, 2, 0)]
        grads = eg.gradients(eg.add_n([eg.reduce_sum(o) for o in outs]), x)
        with eg.Session() as sess:
            values = sess.run(outs + grads, {x: A.astype(np.float32)})
    xs = torch.tensor(A.astype(np.float32), requires_grad=True)
    want = [xs.flip(0), xs.roll(1, 1), xs.tril(), xs.diagonal(), xs.tile(1, 2),
            xs.sort(1).values, xs.topk(2).values, xs.gather(1, torch.tensor(INDEX)),
            xs.repeat_interleave(2, 0)]
    sum(w.sum() for w in want).backward()
    for got, expected in zip(values, want + [xs.grad]):
        np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-6)
