"""Changing a tensor's values in place, as in PyTorch: item assignment (``X[1, 2] = 17``,
``x[mask] = 0``) and the initialisers ``normal_``, ``uniform_``, ``fill_``. Values and dtypes
against PyTorch; the rules while gradients are recorded; the clear errors."""
import numpy as np
import pytest

import edugraph as eg

torch = pytest.importorskip("torch")

X0 = np.arange(12.0).reshape(3, 4) - 5

CASES = {   # name: (index, value as a function of the library), on a copy of X0
    "element": (lambda lib, x: (1, 2), lambda lib, x: 17),
    "rows": (lambda lib, x: (slice(None, 2), slice(None)), lambda lib, x: 12),
    "column": (lambda lib, x: (slice(None), 1), lambda lib, x: 0),
    "negative_and_step": (lambda lib, x: (-1, slice(None, None, 2)), lambda lib, x: -3.5),
    "everything": (lambda lib, x: slice(None), lambda lib, x: x * 2 + 1),
    "ellipsis": (lambda lib, x: Ellipsis, lambda lib, x: 4),
    "mask": (lambda lib, x: x > 0, lambda lib, x: 0),
    "row_broadcast": (lambda lib, x: slice(1, None), lambda lib, x: lib.tensor(
        [1.0, 2.0, 3.0, 4.0], dtype=x.dtype, device=x.device)),
    "float64_values": (lambda lib, x: 0, lambda lib, x: lib.tensor(
        [2.5, -1.5, 0.5, 7.0], dtype=lib.float64, device=x.device)),
    "list_value": (lambda lib, x: 0, lambda lib, x: [9, 8, 7, 6] if lib is eg else
                   lib.tensor([9, 8, 7, 6])),       # (PyTorch takes no lists here)
    "cpu_indices": (lambda lib, x: (lib.tensor([0, 2]), 1), lambda lib, x: 5.0),
    "list_of_rows": (lambda lib, x: [2, 0], lambda lib, x: 1.0),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("name", CASES)
def test_item_assignment_matches_pytorch(device, name, dtype):
    """The value is cast to the tensor's dtype (2.7 into an int64 tensor is 2) and
    broadcast to the indexed part, as in PyTorch; indices may be on the CPU."""
    index, value = CASES[name]
    results = []
    for lib, where in ((eg, device), (torch, "cpu")):
        x = lib.tensor(X0 * 1.3, dtype=getattr(lib, dtype), device=where)
        x[index(lib, x)] = value(lib, x)
        results.append(x)
    ours, theirs = results
    assert ours.dtype == eg.as_dtype(dtype) and ours.device.name == device
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_scalar_tensors_can_be_assigned(device):
    """A 0-d result may be held as a numpy scalar (numpy's arithmetic gives those), which
    cannot be written into: it is replaced by a 0-d array with the new value."""
    x = eg.tensor(3.0, device=device)
    x[...] = 5
    assert x.item() == 5
    x[()] = 6
    assert x.item() == 6 and x.dtype == eg.float32
    y = eg.tensor(2.0, device=device) * 3
    y[()] = 7
    assert y.item() == 7 and y.shape == ()


def test_views_and_aliases_see_the_change(device):
    """A reshape, a slice and .data share the tensor's memory (as in PyTorch), so writing
    through one of them changes the others."""
    x = eg.arange(12, dtype=eg.float32, device=device)
    X = x.reshape(3, 4)
    X[1, 2] = 17
    assert x[6].item() == 17
    row = X[0]
    row[:] = -1
    assert x[:4].tolist() == [-1, -1, -1, -1]
    w = eg.Variable(np.zeros(3, np.float32))
    w.data[1] = 2                           # .data does not require grad: allowed
    assert w.tolist() == [0, 2, 0]
    host = eg.tensor([1.0, 2.0])
    array = host.numpy()
    host[0] = 5                             # numpy() shares memory on the CPU, as in PyTorch
    assert array[0] == 5


def test_leaf_that_requires_grad_changes_only_under_no_grad(device):
    for lib, where in ((eg, device), (torch, "cpu")):
        w = lib.ones(3, requires_grad=True, device=where)
        with pytest.raises(RuntimeError, match="leaf"):
            w[0] = 5.0
        (w * 2).sum().backward()
        with lib.no_grad():
            w[0] = 5.0                      # the leaf stays a leaf and keeps its gradient
        assert w.tolist() == [5, 1, 1] and w.grad.tolist() == [2, 2, 2] and w.is_leaf
    w = eg.ones(3, requires_grad=True, device=device)
    with pytest.raises(eg.errors.GradientError, match=r"^x\[0\] = \.\.\. would change a tensor "
                       r"of shape \(3,\) in place while gradients are being recorded, and it is "
                       r"a leaf tensor that requires grad: as in PyTorch, such a tensor cannot be "
                       r"changed in place outside eg\.no_grad\(\)"):
        w[0] = 1.0


def corr2d(lib, X, K):
    """d2l's cross-correlation, written element by element into a tensor of zeros."""
    h, w = K.shape
    Y = lib.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1), dtype=X.dtype, device=X.device)
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
    return Y


RECORDED = {    # name: f(lib, w) → loss, where w requires grad and each f changes in place
    "corr2d_with_a_learnt_kernel": lambda lib, w: (corr2d(
        lib, lib.tensor(X0, device=w.device), w[:1, :2]) ** 2).sum(),
    "residual_add": lambda lib, w: _residual(lib, w),
    "divide_until_small": lambda lib, w: _halved(lib, w),
    "assign_into_a_computed_tensor": lambda lib, w: _overwritten_part(lib, w),
    "methods_and_broadcast_values": lambda lib, w: _methods(lib, w),
}


def _residual(lib, w):
    out = (w * 2).tanh() * 1.5      # (torch refuses to change tanh's output: it needs it)
    out += w                        # a ResNet block's `out += identity`
    return (out * out).sum()


def _halved(lib, w):
    x = w @ w.T
    while x.abs().sum() > 1:        # d2l's FixedHiddenMLP
        x /= 2
    return x.sum()


def _overwritten_part(lib, w):
    y = w.exp() + 1.0
    y[0, 1:] = w[1, :3] * 3         # the replaced values get no gradient, the new ones do
    y[:, 0] = 0.5                   # a number into a column
    return (y * lib.tensor(X0, device=w.device)).sum()


def _methods(lib, w):
    y = w * 1.0
    y.mul_(w).add_(1.0)
    y[1] = w[0].sigmoid()           # a row from another row
    return y.sum()


@pytest.mark.parametrize("name", RECORDED)
def test_gradients_flow_through_in_place_changes_as_in_torch(device, name):
    """PyTorch records an in-place change that a gradient flows through; so does edugraph
    (the tensor becomes a new node, and ops recorded before it keep the values they used):
    values and gradients equal torch's."""
    results = []
    for lib, where in ((eg, device), (torch, "cpu")):
        w = lib.tensor(X0 / 10, requires_grad=True, device=where)
        loss = RECORDED[name](lib, w)
        loss.backward()
        results.append((loss.item(), w.grad.cpu().numpy()))
    assert results[0][0] == pytest.approx(results[1][0], rel=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-15)


def test_ops_recorded_before_an_in_place_change_keep_the_values_they_used(device):
    """``a = x * x`` then ``x += 1``: a's gradient needs the old x. PyTorch refuses ("modified
    by an inplace operation"); edugraph kept the old values in the graph, so it gives the
    gradient of what was computed. Second derivatives pass through the change too."""
    w = eg.tensor([1.0, 2.0], dtype=eg.float64, requires_grad=True, device=device)
    x = w * 3
    a = x * x
    x += w
    loss = a.sum() + (x * x).sum()              # 9w² + 16w²
    (grad,) = eg.autograd.grad(loss, w, create_graph=True)
    np.testing.assert_allclose(grad.numpy(), 50 * np.array([1.0, 2.0]))
    (second,) = eg.autograd.grad(grad.sum(), w)
    np.testing.assert_allclose(second.numpy(), [50.0, 50.0])
    assert x.grad_fn.name == "add" and a.grad_fn.name == "mul"


def test_backward_refuses_values_changed_by_item_assignment(device):
    """The old values are gone: a backward that needs them fails clearly (PyTorch: "modified
    by an inplace operation"), also when it needs an op's own output (exp's gradient is its
    output) or the change came through a view."""
    w = eg.tensor([1.0, 2.0], requires_grad=True, device=device)
    x = eg.tensor([3.0, 4.0], device=device)
    loss = (w * x).sum()
    x[0] = 0.0
    with pytest.raises(eg.errors.GradientError, match=r"^The gradient of mul needs the values "
                       r"of an input \(shape \(2,\)\), but they were changed in place \(assign, "
                       r"assign_add/sub, x -= \.\.\., x\[\.\.\.\] = \.\.\. or \.data = \.\.\.\) "
                       r"after mul used them"):
        loss.backward()
    y = w.exp()
    with eg.no_grad():
        y[0] = 0.0
    with pytest.raises(eg.errors.GradientError, match=r"The gradient of exp needs the values "
                       r"of its output \(shape \(2,\)\), but they were changed in place .* after "
                       r"exp made them"):
        y.sum().backward()
    y = w.exp()
    tail = y[1:]
    with eg.no_grad():
        tail[0] = 0.0
    with pytest.raises(eg.errors.GradientError, match=r"of its output \(shape \(2,\)\) that "
                       r"shares memory with a tensor"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        t = torch.tensor([1.0, 2.0], requires_grad=True).exp()      # PyTorch's rule too
        with torch.no_grad():
            t[0] = 0.0
        t.sum().backward()


def test_item_assignment_errors(device):
    x = eg.zeros((3, 4), device=device)
    with pytest.raises(eg.errors.ShapeError, match=r"^x\[:2, 0\] = \.\.\.: values of shape "
                       r"\(3,\) cannot be written into the part of shape \(2,\) that the index "
                       r"picks \(of a tensor of shape \(3, 4\)\): they must broadcast to it"):
        x[:2, 0] = [1.0, 2.0, 3.0]
    with pytest.raises(eg.errors.ShapeError, match=r"^x\[7\] = \.\.\.: indexing a tensor of "
                       r"shape \(3, 4\) this way failed \(index 7 is out of bounds for axis 0 "
                       r"with size 3\): indices must be integers, slices or booleans"):
        x[7] = 1.0
    with pytest.raises(eg.errors.ShapeError, match=r"^x\[<bool indices of shape \(2,\)>\] = "):
        x[eg.tensor([True, False], device=device)] = 1.0
    other = "cpu:0" if device != "cpu:0" else "sim:0"
    with pytest.raises(eg.errors.DeviceError, match=rf"^x\[0\] = \.\.\.: the values are on "
                       rf"{other} and the tensor on {device}\. Copy them explicitly first, e\.g\. "
                       rf"value\.to\('{device}'\)"):
        x[0] = eg.ones(4, device=other)
    with pytest.raises(TypeError, match="Cannot make a tensor from 'a'"):
        x[0] = "a"
    assert x.tolist() == np.zeros((3, 4)).tolist()          # nothing was written


def test_graph_tensors_cannot_be_assigned():
    """As in TF: a graph tensor has no values yet; where/assign are the ways there."""
    message = (r"^x\[0\] = \.\.\.: a tensor in a graph cannot be changed by indexing, as in "
               r"TensorFlow: it has no values yet, only a recipe\. Make a new tensor instead, "
               r"e\.g\. eg\.where\(mask, value, x\), or give a Variable new values with "
               r"v\.assign\(\.\.\.\)")
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (2,))
        v = eg.Variable([1.0, 2.0])
        for t in (x, v):
            with pytest.raises(TypeError, match=message):
                t[0] = 3.0

    @eg.function
    def step(t):
        t[0] = 3.0
        return t

    with pytest.raises(TypeError, match=message):
        step(eg.tensor([1.0, 2.0]))


def test_eager_variables_follow_the_same_rules():
    v = eg.Variable([1.0, 2.0], name="v")
    with pytest.raises(eg.errors.GradientError, match="a leaf tensor that requires grad"):
        v[0] = 3.0
    loss = (v * v).sum()
    with eg.no_grad():
        v[0] = 3.0                          # PyTorch's Parameter: under no_grad
    assert v.numpy().tolist() == [3, 2]
    with pytest.raises(eg.errors.GradientError, match="needs the values of its variable 'v'"):
        loss.backward()                     # noted as an in-place change, as assign is
    counts = eg.Variable([1, 2], trainable=False)
    counts[1] = 5
    assert counts.numpy().tolist() == [1, 5]


INITIALISERS = {   # name: (the call, what the values must be)
    "normal_": (lambda t: t.normal_(0, 0.01), lambda v: abs(v.std() - 0.01) < 0.001),
    "normal_keywords": (lambda t: t.normal_(mean=3.0, std=2.0),
                        lambda v: abs(v.mean() - 3) < 0.2 and abs(v.std() - 2) < 0.2),
    "uniform_": (lambda t: t.uniform_(-0.5, 0.5), lambda v: v.min() >= -0.5 and v.max() < 0.5
                 and v.std() > 0.2),
    "uniform_keywords": (lambda t: t.uniform_(a=2, b=3), lambda v: v.min() >= 2 and v.max() < 3),
    "fill_": (lambda t: t.fill_(0.25), lambda v: (v == 0.25).all()),
    "fill_tensor": (lambda t: t.fill_(eg.tensor(4.0)), lambda v: (v == 4).all()),
    "zero_": (lambda t: t.zero_(), lambda v: (v == 0).all()),
}


@pytest.mark.parametrize("dtype", [eg.float32, eg.float64])
@pytest.mark.parametrize("name", INITIALISERS)
def test_initialisers_write_into_the_weight_through_data(device, name, dtype):
    """``net[0].weight.data.normal_(0, 0.01)``: .data shares the weight's memory, so the
    weight itself changes (the same object, dtype and device; no gradient recorded)."""
    init, check = INITIALISERS[name]
    weight = eg.zeros(40, 50, dtype=dtype, device=device, requires_grad=True)
    assert init(weight.data) is not None
    values = weight.numpy()
    assert check(values) and values.dtype == dtype and weight.device.name == device
    assert weight.requires_grad and weight.is_leaf and weight.grad is None
    with pytest.raises(eg.errors.GradientError, match=f"^{name.split('_')[0]}_ would change a "
                       "tensor of shape .* a leaf tensor that requires grad"):
        init(weight)
    with eg.no_grad():
        assert init(weight) is weight


def test_initialisers_are_seeded_and_refuse_integers():
    eg.manual_seed(1)
    first = eg.zeros(5).normal_().tolist()
    eg.manual_seed(1)
    assert eg.zeros(5).normal_().tolist() == first
    counts = eg.zeros(3, dtype=eg.int64)
    assert counts.fill_(2.7).tolist() == [2, 2, 2]      # cast, as torch's fill_
    with pytest.raises(TypeError, match="randn_like draws floating-point values, but the result "
                       "would be int64"):
        counts.normal_()
