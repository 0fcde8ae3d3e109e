"""Every op against PyTorch CPU: the same values and the same gradients (float64)."""
import numpy as np
import pytest

import edugraph as eg

torch = pytest.importorskip("torch")

rng = np.random.default_rng(42)
A, B = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
ROW, COL = rng.normal(size=(4,)), rng.normal(size=(3, 1))
POS = rng.uniform(0.5, 2.0, size=(3, 4))
DISTINCT = rng.permutation(12).reshape(3, 4) * 0.3 - 1.5
BATCH_A, BATCH_B = rng.normal(size=(2, 1, 3, 4)), rng.normal(size=(3, 4, 5))
INDEX = np.array([2, 0, 2, 1])
TIES = rng.integers(0, 3, size=(2, 3, 6, 6)).astype(float)     # windows with tied maxima
T = torch

CASES = {   # name: (inputs, edugraph function, torch function)
    "add": ([A, ROW], eg.add, T.add),
    "subtract": ([A, COL], eg.subtract, T.sub),
    "multiply": ([A, ROW], eg.multiply, T.mul),
    "divide": ([A, POS], eg.divide, T.div),
    "negative": ([A], eg.negative, T.neg),
    "pow": ([POS, A], eg.pow, T.pow),
    "pow_number": ([POS], lambda x: x ** 1.5, lambda x: x ** 1.5),
    "pow_zero_base": ([np.array([0.0, 0.0, 2.0, 0.5]), np.array([2.0, 1.5, 3.0, 0.5])], eg.pow,
                      T.pow),       # d/dy at x = 0 is 0 (not 0 · log 0)
    "square": ([A], eg.square, T.square),
    "sqrt": ([POS], eg.sqrt, T.sqrt),
    "exp": ([A], eg.exp, T.exp),
    "log": ([POS], eg.log, T.log),
    "abs": ([A], eg.abs, T.abs),
    "floormod": ([A * 3, POS], eg.floormod, T.remainder),
    "maximum": ([DISTINCT, ROW], eg.maximum, T.maximum),
    "minimum": ([DISTINCT, COL], eg.minimum, T.minimum),
    "where": ([A, B], lambda x, y: eg.where(x > y, x, y), lambda x, y: T.where(x > y, x, y)),
    "clip": ([A], lambda x: eg.clip(x, -0.5, 0.7), lambda x: T.clamp(x, -0.5, 0.7)),
    "clip_tensor_bounds": ([A, COL * 0.1 - 0.5, ROW * 0.1 + 0.5], eg.clip, T.clamp),
    "sum": ([A], lambda x: eg.reduce_sum(x, 1), lambda x: x.sum(1)),
    "sum_keepdims": ([A], lambda x: eg.reduce_sum(x, 0, True), lambda x: x.sum(0, True)),
    "mean": ([A], lambda x: eg.reduce_mean(x, (0, 1)), lambda x: x.mean((0, 1))),
    "max": ([DISTINCT], lambda x: eg.reduce_max(x, 1), lambda x: x.amax(1)),
    "min_all": ([DISTINCT], eg.reduce_min, T.amin),
    "logsumexp": ([A], lambda x: eg.logsumexp(x, 1), lambda x: T.logsumexp(x, 1)),
    "var": ([A], lambda x: x.var(1), lambda x: x.var(1)),
    "var_all_population": ([A], lambda x: eg.var(x, unbiased=False),
                           lambda x: T.var(x, unbiased=False)),
    "std_keepdim": ([A], lambda x: x.std(0, keepdim=True), lambda x: x.std(0, keepdim=True)),
    "std_correction": ([A], lambda x: eg.std(x, (0, 1), correction=2),
                       lambda x: T.std(x, (0, 1), correction=2)),
    "std_of_equal_values": ([np.array([[2.0, 1, 3], [4, 1, 0], [3, 1, 3]])],
                            lambda x: x.std(0), lambda x: x.std(0)),     # column 1: gradient 0
    "matmul": ([A, B.T], eg.matmul, T.matmul),
    "matmul_batched": ([BATCH_A, BATCH_B], eg.matmul, T.matmul),
    "matmul_vector": ([A, ROW], eg.matmul, T.matmul),
    "matmul_transpose_a_b": ([A.T, B], lambda a, b: eg.matmul(a, b, transpose_a=True,
                                                               transpose_b=True),
                             lambda a, b: T.matmul(a.T, b.T)),
    "reshape": ([A], lambda x: eg.reshape(x, (2, 6)), lambda x: x.reshape(2, 6)),
    "transpose": ([BATCH_A], lambda x: eg.transpose(x, (3, 0, 2, 1)),
                  lambda x: x.permute(3, 0, 2, 1)),
    "broadcast_to": ([COL], lambda x: eg.broadcast_to(x, (2, 3, 4)),
                     lambda x: x.expand(2, 3, 4)),
    "expand_squeeze": ([COL], lambda x: eg.squeeze(eg.expand_dims(x, 0), 2),
                       lambda x: x.unsqueeze(0).squeeze(2)),
    "concat": ([A, B], lambda x, y: eg.concat([x, y], 1), lambda x, y: T.cat([x, y], 1)),
    "stack": ([A, B], lambda x, y: eg.stack([x, y], 1), lambda x, y: T.stack([x, y], 1)),
    "getitem_slice": ([A], lambda x: x[1:, ::2], lambda x: x[1:, ::2]),
    "getitem_repeats": ([A], lambda x: x[[0, 2, 0]], lambda x: x[[0, 2, 0]]),
    "getitem_pairs": ([A], lambda x: x[[0, 2, 2], [1, 1, 3]], lambda x: x[[0, 2, 2], [1, 1, 3]]),
    "gather_rows": ([A], lambda x: eg.gather(x, eg.tensor(INDEX[:3], device=x.device), 0),
                    lambda x: x[INDEX[:3]]),
    "gather_cols": ([A], lambda x: eg.gather(x, eg.tensor(INDEX, device=x.device), 1),
                    lambda x: x[:, INDEX]),
    "index_select_method": ([A], lambda x: x.index_select(1, eg.tensor(INDEX, device=x.device)),
                            lambda x: x.index_select(1, torch.tensor(INDEX))),
    "broadcast_to_method": ([COL], lambda x: x.broadcast_to((2, 3, 4)),
                            lambda x: x.broadcast_to((2, 3, 4))),
    "expand_as_method": ([ROW, A], lambda x, y: x.expand_as(y) * y,
                         lambda x, y: x.expand_as(y) * y),
    "relu": ([A], eg.nn.relu, T.relu),
    "leaky_relu": ([A], lambda x: eg.nn.leaky_relu(x, 0.01),
                   lambda x: T.nn.functional.leaky_relu(x, 0.01)),
    "sigmoid": ([A * 5], eg.nn.sigmoid, T.sigmoid),
    "tanh": ([A], eg.nn.tanh, T.tanh),
    "sin_method": ([A], lambda x: x.sin(), lambda x: x.sin()),
    "cos": ([A], eg.cos, T.cos),
    "softplus": ([A * 5], eg.nn.functional.softplus, T.nn.functional.softplus),
    "elu": ([A], eg.nn.functional.elu, T.nn.functional.elu),
    "elu_alpha": ([A], lambda x: eg.nn.elu(x, 0.3), lambda x: T.nn.functional.elu(x, 0.3)),
    "softmax": ([A], lambda x: eg.nn.softmax(x, 0), lambda x: T.softmax(x, 0)),
    "log_softmax": ([A], eg.nn.log_softmax, lambda x: T.log_softmax(x, -1)),
    "cumsum": ([A], lambda x: eg.cumsum(x, 1), lambda x: T.cumsum(x, 1)),
    "cumsum_method_dim0": ([A], lambda x: x.cumsum(dim=0), lambda x: x.cumsum(dim=0)),
    "cumsum_exclusive_reverse": ([A], lambda x: eg.cumsum(x, -1, exclusive=True, reverse=True),
                                 lambda x: x.flip(-1).cumsum(-1).flip(-1) - x),
    "norm": ([A], eg.norm, T.norm),
    "norm_of_zeros": ([np.zeros(3)], eg.norm, T.norm),       # gradient 0, not NaN
    "norm_rows_keepdim": ([A], lambda x: eg.norm(x, dim=1, keepdim=True),
                          lambda x: T.norm(x, dim=1, keepdim=True)),
    "norm_row_of_zeros": ([np.array([[0.0, 0.0], [3.0, -4.0]])], lambda x: eg.norm(x, axis=1),
                          lambda x: T.norm(x, dim=1)),
    "norm_fro_method": ([BATCH_B], lambda x: x.norm("fro", (0, 2)),
                        lambda x: x.norm("fro", (0, 2))),
    "norm_1": ([A], lambda x: eg.norm(x, 1, 0), lambda x: T.norm(x, 1, 0)),
    "norm_1_over_two_dims": ([A], lambda x: x.norm(p=1, dim=(0, 1)),
                             lambda x: x.norm(p=1, dim=(0, 1))),
    "norm_inf": ([DISTINCT], lambda x: eg.norm(x, np.inf, 1), lambda x: T.norm(x, np.inf, 1)),
    "dot": ([ROW, A[0]], eg.dot, T.dot),
    "dot_method": ([ROW, A[1]], lambda a, b: a.dot(b), lambda a, b: a.dot(b)),
    "mv": ([A, ROW], eg.mv, T.mv),
    "mv_method": ([A, ROW], lambda a, x: a.mv(x), lambda a, x: a.mv(x)),
    "mm": ([A, B.T], eg.mm, T.mm),
    "bmm": ([BATCH_A[0], BATCH_B[:1]], eg.bmm, T.bmm),
    "bmm_method": ([BATCH_B, BATCH_B.transpose(0, 2, 1)], lambda a, b: a.bmm(b),
                   lambda a, b: a.bmm(b)),
    "outer": ([ROW, COL[:, 0]], eg.outer, T.outer),
    "outer_method": ([COL[:, 0], ROW], lambda a, b: a.outer(b), lambda a, b: a.outer(b)),
    # cases differential testing found (each gave a wrong gradient or failed before its fix)
    "permute_negative_dims": ([BATCH_B], lambda x: x.permute(-1, 0, 1),
                              lambda x: x.permute(-1, 0, 1)),
    "gather_negative_axis_2d_indices": (
        [A], lambda x: eg.gather(x, eg.tensor([[0, 3], [2, 2]], device=x.device), axis=-1),
        lambda x: x[:, torch.tensor([[0, 3], [2, 2]])]),
    "pow_zero_exponent_at_zero": ([np.array([0.0, 0.0, 2.0]), np.array([0.0, 1.0, 0.0])],
                                  eg.pow, T.pow),
    "pow_number_zero_at_zero": ([np.array([0.0, 1.5])], lambda x: x ** 0, lambda x: x ** 0),
    "expand_keeping_a_size": ([COL], lambda x: x.expand(2, -1, 4), lambda x: x.expand(2, -1, 4)),
    "softmax_of_empty": ([np.zeros((3, 0))], lambda x: eg.nn.softmax(x, -1),
                         lambda x: T.softmax(x, -1)),
    "softplus_beta_and_its_line": ([np.linspace(-30, 30, 13)],
                                   lambda x: eg.nn.functional.softplus(x, 2.0, 15.0),
                                   lambda x: T.nn.functional.softplus(x, 2.0, 15.0)),
    "softplus_module_above_threshold": ([np.linspace(15, 25, 6)], eg.nn.Softplus(),
                                        T.nn.Softplus()),
    "max_pool_ties_go_to_the_first": (
        [TIES], lambda x: eg.nn.functional.max_pool2d(x, 3, 2, padding=1),
        lambda x: T.nn.functional.max_pool2d(x, 3, 2, padding=1)),
}


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_match_pytorch(device, name):
    inputs, ours, theirs = CASES[name]
    mine = [eg.tensor(a, device=device, requires_grad=True) for a in inputs]
    ref = [torch.tensor(a, requires_grad=True) for a in inputs]
    out, want = ours(*mine), theirs(*ref)
    assert out.shape == tuple(want.shape)
    np.testing.assert_allclose(out.numpy(), want.detach().numpy(), rtol=1e-10, atol=1e-12)
    weights = np.random.default_rng(0).uniform(0.5, 1.5, size=out.shape)
    (out * eg.tensor(weights, device=device)).sum().backward()
    (want * torch.tensor(weights)).sum().backward()
    for i, (m, r) in enumerate(zip(mine, ref)):
        np.testing.assert_allclose(m.grad.numpy(), r.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}: gradient of input {i}")


def test_max_tie_rules_match_pytorch():
    """reduce_max splits ties like torch.amax; elementwise maximum gives ties to the first
    input like TF (PyTorch splits them: a documented difference)."""
    x = np.array([[2.0, 2.0, 1.0], [3.0, 3.0, 3.0]])
    ours = eg.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    eg.reduce_max(ours, 1).sum().backward()
    theirs.amax(1).sum().backward()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy())
    a, b = eg.tensor([1.0], requires_grad=True), eg.tensor([1.0], requires_grad=True)
    eg.maximum(a, b).sum().backward()
    assert (a.grad.item(), b.grad.item()) == (1.0, 0.0)


@pytest.mark.parametrize("low, high", [(0.0, 1.0), (1.0, 1.0), (1.3, 1.0)])
def test_clip_gradients_match_pytorch_also_for_crossed_bounds(device, low, high):
    """Where low > high every output is high (clip is minimum(maximum(x, low), high)), so
    high gets the gradient, as in PyTorch; ties follow PyTorch too."""
    x = np.array([-1.0, 0.0, 0.5, 1.0, 1.2, 2.0])
    bounds = np.full(x.shape, low), np.full(x.shape, high)
    ours = [eg.tensor(a, device=device, requires_grad=True) for a in (x, *bounds)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x, *bounds)]
    eg.clip(*ours).sum().backward()
    torch.clamp(*theirs).sum().backward()
    np.testing.assert_array_equal(eg.clip(*ours).numpy(), torch.clamp(*theirs).detach())
    for name, m, t in zip(("x", "low", "high"), ours, theirs):
        np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy(), err_msg=name)
    with eg.Graph().as_default():           # the same gradient nodes in a graph
        fed = [eg.placeholder(eg.float64, shape=x.shape) for _ in range(3)]
        grads = eg.gradients(eg.reduce_sum(eg.clip(*fed)), fed)
        with eg.Session() as sess:
            got = sess.run(grads, dict(zip(fed, (x, *bounds))))
    for name, g, t in zip(("x", "low", "high"), got, theirs):
        np.testing.assert_array_equal(g, t.grad.numpy(), err_msg=f"graph: {name}")


def test_second_derivatives_match_pytorch():
    x0 = np.array([0.3, -1.2, 2.0])
    x = eg.tensor(x0, requires_grad=True)
    (g,) = eg.grad((eg.sigmoid(x) * eg.exp(x)).sum(), [x], create_graph=True)
    (h,) = eg.grad(g.sum(), [x])
    tx = torch.tensor(x0, requires_grad=True)
    (tg,) = torch.autograd.grad((torch.sigmoid(tx) * torch.exp(tx)).sum(), tx,
                                create_graph=True)
    (th,) = torch.autograd.grad(tg.sum(), tx)
    np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-12)


@pytest.mark.parametrize("ours, theirs", [(eg.nn.softplus, T.nn.functional.softplus),
                                           (eg.nn.elu, T.nn.functional.elu), (eg.sin, T.sin)])
def test_second_derivatives_of_the_new_activations_match_pytorch(ours, theirs):
    """elu's backward reads its own output (α eˣ = out + α below 0): that path must be
    differentiable too."""
    x0 = np.array([0.3, -1.2, 2.0, -0.4])
    results = []
    for lib, fn in ((eg, ours), (torch, theirs)):
        x = lib.tensor(x0, requires_grad=True)
        (g,) = (eg.grad if lib is eg else T.autograd.grad)((fn(x) * x).sum(), [x],
                                                           create_graph=True)
        (h,) = (eg.grad if lib is eg else T.autograd.grad)((g * g).sum(), [x])
        results.append((g.detach().numpy(), h.numpy()))
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_dropout_scaling_matches_pytorch():
    """Same inverted scaling as torch.nn.functional.dropout: kept values are x / (1 - p)."""
    x = np.full((100,), 3.0)
    ours = eg.nn.dropout(eg.tensor(x), rate=0.4, seed=0).numpy()
    torch.manual_seed(0)
    theirs = torch.nn.functional.dropout(torch.tensor(x), p=0.4).numpy()
    assert set(np.unique(ours)) == set(np.unique(theirs)) == {0.0, 3.0 / 0.6}


@pytest.mark.parametrize("which", ["max", "min"])
@pytest.mark.parametrize("dim, keepdim", [(None, False), (0, False), (1, True), (-1, False)])
def test_torch_max_and_min_return_what_pytorch_returns(device, which, dim, keepdim):
    """x.max(dim) and eg.max(x, dim) give (values, indices) as in PyTorch, so
    ``_, predicted = eg.max(scores, 1)`` reads the indices; without dim, the value."""
    ours = eg.tensor(DISTINCT, device=device, requires_grad=True)
    theirs = torch.tensor(DISTINCT, requires_grad=True)
    args = () if dim is None else (dim, keepdim)
    for got in (getattr(ours, which)(*args), getattr(eg, which)(ours, *args)):
        want = getattr(theirs, which)(*args)
        if dim is None:
            np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
            continue
        values, indices = got
        assert got.values is values and got.indices is indices
        np.testing.assert_array_equal(values.numpy(), want.values.detach().numpy())
        np.testing.assert_array_equal(indices.numpy(), want.indices.numpy())
        assert indices.dtype == eg.int64
    (got if dim is None else got.values).sum().backward()
    (want if dim is None else want.values).sum().backward()
    np.testing.assert_array_equal(ours.grad.numpy(), theirs.grad.numpy())


def test_max_elementwise_and_other_spellings(device):
    x = eg.tensor(DISTINCT, device=device)
    y = eg.tensor(A, device=device)
    np.testing.assert_array_equal(eg.max(x, y).numpy(), torch.max(torch.tensor(DISTINCT),
                                                                  torch.tensor(A)).numpy())
    np.testing.assert_array_equal(eg.min(x, y).numpy(), np.minimum(DISTINCT, A))
    np.testing.assert_array_equal(x.max(axis=1).values.numpy(),     # axis= is PyTorch's
                                  torch.tensor(DISTINCT).max(axis=1).values.numpy())  # dim=
    np.testing.assert_array_equal(x.amin(0).numpy(), DISTINCT.min(0))
    np.testing.assert_array_equal(eg.amax(x, 1, True).numpy(), DISTINCT.max(1, keepdims=True))
    _, predicted = eg.max(x, np.int64(1))
    np.testing.assert_array_equal(predicted.numpy(), DISTINCT.argmax(1))


FORWARDS = {"operators": lambda x, w1, w2: (x @ w1).clamp(min=0) @ w2,
            "methods": lambda x, w1, w2: x.mm(w1).clamp(min=0).mm(w2)}


@pytest.mark.parametrize("spelling", FORWARDS)
def test_learning_pytorch_with_examples_autograd_loop_as_written(device, spelling):
    """The autograd loop of PyTorch's "Learning PyTorch with Examples", line by line: a device
    and a dtype passed to the factories, ``x.mm(w1).clamp(min=0).mm(w2)``, in-place updates
    under no_grad, gradients zeroed in place. The starting values are copied in, so the
    losses and weights must agree with PyTorch's."""
    rng = np.random.default_rng(7)
    x0, y0 = rng.normal(size=(16, 10)), rng.normal(size=(16, 3))
    w10, w20 = rng.normal(size=(10, 8)), rng.normal(size=(8, 3))
    histories = []
    for lib, where in ((eg, device), (torch, "cpu")):
        dev, dtype = lib.device(where), lib.float64
        x, y = lib.zeros(16, 10, device=dev, dtype=dtype), lib.zeros(16, 3, device=dev,
                                                                    dtype=dtype)
        w1 = lib.randn(10, 8, device=dev, dtype=dtype, requires_grad=True)
        w2 = lib.randn(8, 3, device=dev, dtype=dtype, requires_grad=True)
        with lib.no_grad():             # (the tutorial's values: random; here, the same ones)
            for t, value in ((x, x0), (y, y0), (w1, w10), (w2, w20)):
                t -= t - lib.tensor(value, device=dev)
        losses = []
        for _ in range(5):
            y_pred = FORWARDS[spelling](x, w1, w2)
            loss = (y_pred - y).pow(2).sum()
            losses.append(loss.item())
            loss.backward()
            with lib.no_grad():
                w1 -= 1e-3 * w1.grad
                w2 -= 1e-3 * w2.grad
                w1.grad.zero_()
                w2.grad.zero_()
        histories.append((losses, w1.detach().cpu().numpy(), w2.detach().cpu().numpy()))
        assert str(w1.device).endswith(str(dev)) and w1.dtype == dtype
    for ours, theirs in zip(*histories):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_tensor_methods_with_pytorch_names(device):
    ours, theirs = eg.tensor(A, device=device, requires_grad=True), torch.tensor(A,
                                                                                requires_grad=True)
    results = []
    for x in (ours, theirs):
        cloned = x.clone()
        outs = [x.t(), x.mm(x.t()), cloned, x.sign(), x.masked_fill(x > 0.5, 0.0),
                x.eq(x[0]), x.ne(0), x.gt(0), x.ge(0), x.lt(0), x.le(0), x[0].t()]
        (x.t().mm(x) * 2).sum().backward()
        results.append(outs)
    for got, want in zip(*results):
        np.testing.assert_allclose(got.detach().numpy().astype(float),
                                   want.detach().numpy().astype(float), rtol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12)
    copy = ours.clone()
    with eg.no_grad():
        ours += 1.0                     # a clone keeps the values it had (its own array)
    np.testing.assert_allclose(copy.numpy(), A)
    with pytest.raises(eg.errors.ShapeError, match=r"t\(\) transposes a matrix, but this "
                       r"tensor has shape \(2, 1, 3, 4\)"):
        eg.tensor(BATCH_A).t()


def test_pytorch_function_spellings_with_dim_keywords():
    x, t = eg.tensor(DISTINCT), torch.tensor(DISTINCT)
    pairs = [(eg.sum(x, dim=1, keepdim=True), torch.sum(t, dim=1, keepdim=True)),
             (eg.mean(x, dim=0), torch.mean(t, dim=0)),
             (eg.cat([x, x], dim=1), torch.cat([t, t], dim=1)),
             (eg.stack([x, x], dim=2), torch.stack([t, t], dim=2)),
             (eg.argmax(x, dim=1), torch.argmax(t, dim=1)),
             (eg.softmax(x, dim=0), torch.softmax(t, dim=0)),
             (eg.logsumexp(x, dim=1), torch.logsumexp(t, dim=1)),
             (eg.amax(x, dim=-1, keepdim=True), torch.amax(t, dim=-1, keepdim=True)),
             (eg.unsqueeze(x, dim=0), torch.unsqueeze(t, dim=0)),
             (eg.clamp(x, min=0), torch.clamp(t, min=0)),
             (eg.full((2, 3), 0.5), torch.full((2, 3), 0.5))]
    for ours, theirs in pairs:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)
    assert eg.sum(x, axis=1).shape == (3,)                  # TF's keywords still work
    array = np.zeros(3)
    shared = eg.from_numpy(array)
    array[0] = 5.0                                          # shares memory, as in PyTorch
    assert shared.numpy()[0] == 5.0 and torch.from_numpy(array)[0] == 5.0
    with pytest.raises(TypeError, match="from_numpy needs a numeric numpy array, got list"):
        eg.from_numpy([1.0])


CREATIONS = {   # name: a call with PyTorch's signature, for eg and for torch
    "arange": lambda lib: lib.arange(5),
    "arange_start_end": lambda lib: lib.arange(1, 4),
    "arange_float_step": lambda lib: lib.arange(0, 1, 0.25),
    "arange_keywords": lambda lib: lib.arange(start=2, end=8, step=3),
    "arange_end_only": lambda lib: lib.arange(end=3),
    "arange_float": lambda lib: lib.arange(4.0, requires_grad=True),
    "arange_dtype": lambda lib: lib.arange(3, dtype=lib.float64),
    "full_float": lambda lib: lib.full((2, 3), 0.5, requires_grad=True),
    "full_int": lambda lib: lib.full((2,), 7),
    "full_bool": lambda lib: lib.full((2,), True),
    "full_like": lambda lib: lib.full_like(lib.ones(2, 3, dtype=lib.float64), 4),
}


@pytest.mark.parametrize("name", CREATIONS)
def test_creation_functions_match_pytorch(name):
    ours, theirs = CREATIONS[name](eg), CREATIONS[name](torch)
    assert ours.dtype == np.dtype(str(theirs.dtype).replace("torch.", ""))
    assert ours.requires_grad == theirs.requires_grad
    np.testing.assert_array_equal(ours.numpy(), theirs.detach().numpy())


RANDOM = {   # name: (a call with PyTorch's signature, the mean and std its values should have)
    "randn_sizes": (lambda lib: lib.randn(300, 200), 0.0, 1.0),
    "randn_tuple": (lambda lib: lib.randn((300, 200)), 0.0, 1.0),
    "randn_size_keyword": (lambda lib: lib.randn(size=(300, 200), requires_grad=True), 0.0, 1.0),
    "rand_size_keyword": (lambda lib: lib.rand(size=(300, 200)), 0.5, 12 ** -0.5),
    "normal": (lambda lib: lib.normal(3.0, 0.5, (300, 200)), 3.0, 0.5),
    "normal_keywords": (lambda lib: lib.normal(0, 0.01, size=(300, 200), requires_grad=True,
                                               dtype=lib.float64), 0.0, 0.01),
    "randn_like": (lambda lib: lib.randn_like(lib.zeros(300, 200, dtype=lib.float64)), 0, 1),
    "rand_like": (lambda lib: lib.rand_like(lib.zeros(300, 200)), 0.5, 12 ** -0.5),
    "randint": (lambda lib: lib.randint(0, 10, (300, 200)), 4.5, (99 / 12) ** 0.5),
    "randint_high_only": (lambda lib: lib.randint(4, size=(300, 200)), 1.5, (15 / 12) ** 0.5),
}


@pytest.mark.parametrize("name", RANDOM)
def test_random_functions_take_pytorch_signatures(device, name):
    """Shape, dtype, requires_grad and the distribution as PyTorch's; the values come from
    edugraph's generator, so the same seed gives the same values."""
    call, mean, std = RANDOM[name]
    with eg.device(device):
        ours = call(eg)
    theirs = call(torch)
    assert ours.shape == tuple(theirs.shape) and ours.device.name == device
    assert ours.dtype == np.dtype(str(theirs.dtype).replace("torch.", ""))
    assert ours.requires_grad == theirs.requires_grad
    values = ours.numpy()
    assert abs(values.mean() - mean) < 0.05 * std and abs(values.std() - std) < 0.02 * std
    eg.manual_seed(3)
    first = call(eg).numpy()
    eg.manual_seed(3)
    np.testing.assert_array_equal(call(eg).numpy(), first)


def test_randn_of_an_empty_shape_is_a_scalar_and_devices_are_kept():
    for ours, theirs in ((eg.randn(()), torch.randn(())), (eg.randn(size=()),
                                                           torch.randn(size=()))):
        assert ours.shape == tuple(theirs.shape) == ()
    assert eg.randint(1, 2, (3,)).tolist() == [1, 1, 1]
    for made in (eg.randn_like(eg.ones(2, device="sim")), eg.full((2,), 1.5, device="sim"),
                 eg.arange(3, device="sim"), eg.normal(0, 1, (2,), device="sim"),
                 eg.randint(3, (2,), device="sim")):
        assert made.device.name == "sim:0"
    assert eg.random.normal((2, 3), 1.0).shape == (2, 3)      # TF's, as it was


def test_creation_errors_say_what_to_do():
    with pytest.raises(TypeError, match=r"^eg\.normal\(mean, std, size\) takes two numbers and a "
                       r"shape, as torch\.normal\(0, 0\.01, size=\(2, 1\)\); got mean=tensor.*"
                       r"write mean \+ std \* eg\.randn_like\(mean\)"):
        eg.normal(eg.zeros(2), 1.0, (2,))
    with pytest.raises(TypeError, match=r"size=None"):
        eg.normal(0.0, 1.0)
    with pytest.raises(ValueError, match=r"^randint\(low, high, size\) draws from low to high - 1, "
                       r"so it needs high > low and a size, e\.g\. eg\.randint\(0, 10, \(3,\)\); "
                       r"got low=5, high=2, size=\(3,\)"):
        eg.randint(5, 2, (3,))
    with pytest.raises(TypeError, match=r"^rand_like draws floating-point values, but the result "
                       r"would be int64 \(x's dtype unless one is given\): pass dtype=eg\.float32"):
        eg.rand_like(eg.tensor([1, 2]))
    assert eg.rand_like(eg.tensor([1, 2]), dtype=eg.float32).dtype == eg.float32
    with pytest.raises(TypeError, match="Only floating-point tensors can require gradients"):
        eg.randint(0, 3, (2,), requires_grad=True)


def test_logsumexp_over_an_empty_axis_is_minus_infinity_as_in_pytorch():
    np.testing.assert_array_equal(eg.logsumexp(eg.zeros((0, 3)), 0).numpy(),
                                  torch.logsumexp(torch.zeros((0, 3)), 0).numpy())


def test_max_pool_second_derivatives_match_pytorch():
    mine = eg.tensor(TIES, requires_grad=True)
    ref = torch.tensor(TIES, requires_grad=True)
    for x, pool, grad in ((mine, eg.nn.functional.max_pool2d, eg.grad),
                          (ref, T.nn.functional.max_pool2d, torch.autograd.grad)):
        y = pool(x, 2)
        (g,) = grad((y * y * y).sum(), x, create_graph=True)
        (g * g).sum().backward()
    np.testing.assert_allclose(mine.grad.numpy(), ref.grad.numpy(), rtol=1e-12)


def test_pytorch_modules_take_torchs_arguments_and_print_like_torch():
    pairs = [(eg.nn.ReLU(inplace=True), T.nn.ReLU(inplace=True)),
             (eg.nn.LeakyReLU(0.1, inplace=True), T.nn.LeakyReLU(0.1, inplace=True)),
             (eg.nn.ELU(inplace=True), T.nn.ELU(inplace=True)),
             (eg.nn.Softplus(beta=2.0), T.nn.Softplus(beta=2.0)),
             (eg.nn.Dropout(0.3, inplace=True), T.nn.Dropout(0.3, inplace=True))]
    x = np.linspace(-3, 3, 7)
    for ours, theirs in pairs:
        assert repr(ours) == repr(theirs)
        if not isinstance(ours, eg.nn.Dropout):
            np.testing.assert_allclose(ours(eg.tensor(x)).numpy(),
                                       theirs(torch.tensor(x)).numpy(), rtol=1e-12)


def test_functional_batch_norm_updates_plain_tensor_statistics_as_torch():
    x = np.random.default_rng(1).normal(size=(4, 3))
    mean, var = eg.zeros(3, dtype=eg.float64), eg.ones(3, dtype=eg.float64)
    t_mean, t_var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    y = eg.nn.functional.batch_norm(eg.tensor(x), mean, var, training=True)
    want = T.nn.functional.batch_norm(torch.tensor(x), t_mean, t_var, training=True)
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mean.numpy(), t_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(var.numpy(), t_var.numpy(), rtol=1e-12)
