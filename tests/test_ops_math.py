"""Elementwise maths: values against numpy, gradients against central differences (float64),
over generated shapes including broadcasting, on every device."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import edugraph as eg
from tests.gradcheck import gradcheck
from tests.strategies import (arrays, broadcastable_shapes, checks, distinct_arrays,
                              positive_arrays, shapes)

BINARY = {   # name: (edugraph function, numpy reference)
    "add": (eg.add, np.add),
    "subtract": (eg.subtract, np.subtract),
    "multiply": (eg.multiply, np.multiply),
    "maximum": (eg.maximum, np.maximum),
    "minimum": (eg.minimum, np.minimum),
}
UNARY = {    # name: (edugraph function, numpy reference, strategy for the input)
    "negative": (eg.negative, np.negative, arrays),
    "square": (eg.square, np.square, arrays),
    "exp": (eg.exp, np.exp, arrays),
    "sqrt": (eg.sqrt, np.sqrt, positive_arrays),
    "log": (eg.log, np.log, positive_arrays),
    "abs": (eg.abs, np.abs, lambda s: arrays(s, avoid=(0,))),
    "sin": (eg.sin, np.sin, arrays),
    "cos": (eg.cos, np.cos, arrays),
}


def on(device, a, **kw):
    return eg.tensor(a, device=device, **kw)


@pytest.mark.parametrize("name", BINARY)
@checks
@given(data=st.data(), pair=broadcastable_shapes())
def test_binary_broadcasting_values_and_gradients(device, name, data, pair):
    fn, ref = BINARY[name]
    x = data.draw(distinct_arrays(pair[0]) if name in ("maximum", "minimum") else arrays(pair[0]))
    y = data.draw(arrays(pair[1]))
    if name in ("maximum", "minimum"):
        # keep the two inputs apart, so no element is a tie (no derivative there): x's values
        # lie on a grid 0.25 apart, starting at its smallest; each y goes halfway between two
        # (adding 0.125 to y alone tied x = 0.125 with y = 0 + 0.125)
        start = x.min()
        y = start + 0.25 * np.floor((y - start) / 0.25) + 0.125
    out = fn(on(device, x), on(device, y))
    np.testing.assert_allclose(out.numpy(), ref(x, y), rtol=1e-12)
    assert out.device.name == device
    gradcheck(fn, x, y, device=device, name=name)


@checks
@given(data=st.data(), pair=broadcastable_shapes())
def test_divide(device, data, pair):
    x = data.draw(arrays(pair[0]))
    y = data.draw(positive_arrays(pair[1])) * data.draw(st.sampled_from([-1.0, 1.0]))
    np.testing.assert_allclose(eg.divide(on(device, x), on(device, y)).numpy(), x / y)
    gradcheck(eg.divide, x, y, device=device, name="divide")


@checks
@given(data=st.data(), pair=broadcastable_shapes())
def test_pow_gradient_in_base_and_exponent(device, data, pair):
    x = data.draw(positive_arrays(pair[0]))
    y = data.draw(arrays(pair[1]))
    np.testing.assert_allclose(eg.pow(on(device, x), on(device, y)).numpy(), x ** y)
    gradcheck(eg.pow, x, y, device=device, name="pow")


@pytest.mark.parametrize("exponent", [2, 3, 0.5, -1.0])
def test_pow_by_number(device, exponent):
    x = np.array([0.5, 1.5, 2.0])
    np.testing.assert_allclose((on(device, x) ** exponent).numpy(), x ** exponent, rtol=1e-6)
    gradcheck(lambda t: t ** exponent, x, device=device, name=f"pow {exponent}")


@pytest.mark.parametrize("name", UNARY)
@checks
@given(data=st.data(), shape=shapes())
def test_unary_values_and_gradients(device, name, data, shape):
    fn, ref, values = UNARY[name]
    x = data.draw(values(shape))
    np.testing.assert_allclose(fn(on(device, x)).numpy(), ref(x), rtol=1e-12)
    gradcheck(fn, x, device=device, name=name)


def test_operators_match_functions(device):
    x, y = np.array([[1.0, -2.0], [3.0, 4.0]]), np.array([0.5, -1.5])
    a, b = on(device, x), on(device, y)
    for got, want in [(a + b, x + y), (a - b, x - y), (a * b, x * y), (a / b, x / y),
                      (-a, -x), (a ** 2, x ** 2), (2 - a, 2 - x), (1 / b, 1 / y),
                      (2 ** b, 2 ** y), (abs(a), np.abs(x)), (a @ b, x @ y)]:
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    for got, want in [(a < b, x < y), (a <= b, x <= y), (a > b, x > y), (a >= b, x >= y),
                      (a == b, x == y), (a != b, x != y)]:
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got.numpy(), want)


def test_python_numbers_keep_the_tensor_dtype(device):
    x = on(device, [1.0, 2.0])
    assert (x * 2).dtype == eg.float32 and (2.5 + x).dtype == eg.float32
    assert (on(device, [1, 2]) * 2).dtype == eg.int64
    assert (on(device, [1, 2]) * 0.5).dtype == eg.float32
    x64 = on(device, [1.0, 2.0], dtype=eg.float64)
    assert (x64 * [2.0, 3.0]).dtype == eg.float64 and (x64 + [1, 2]).dtype == eg.float64
    np.testing.assert_array_equal((x64 * [2.0, 3.0]).numpy(), [2, 6])
    assert (on(device, [1, 2]) + [1, 2]).dtype == eg.int64
    with eg.Graph().as_default():               # the same rule for graph tensors
        p64 = eg.placeholder(eg.float64, shape=(2,))
        assert (p64 * [2.0, 3.0]).dtype == eg.float64 and (p64 + [1, 2]).dtype == eg.float64
        assert (eg.placeholder(eg.float32, shape=(2,)) * [2.0, 3.0]).dtype == eg.float32


def test_integer_tensor_meets_float_tensor_in_the_float_dtype(device):
    """PyTorch's promotion (numpy would widen float32 to float64): the integer input is cast
    by a visible Cast node, and the float input still gets its gradient."""
    ints, bools = on(device, [3, 4]), on(device, [True, False])
    x = on(device, [1.0, 2.0], requires_grad=True)
    for got, want in [(ints * x, [3, 8]), (x - ints, [-2, -2]), (bools + x, [2, 2]),
                      (eg.maximum(ints, x), [3, 4]), (x / ints, [1 / 3, 0.5]),
                      (eg.where(bools, ints, x), [3, 2]),
                      (eg.matmul(on(device, [[1, 2]]), eg.reshape(x, (2, 1))), [[5]])]:
        assert got.dtype == eg.float32 and got.device.name == device
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6)
    (ints * x).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3, 4])
    x64 = on(device, [1.0, 2.0], dtype=eg.float64)
    assert (ints * x64).dtype == eg.float64 and (ints * ints).dtype == eg.int64
    assert (ints > x).dtype == eg.bool_             # comparisons: exact, no cast
    with eg.Graph().as_default():
        a = eg.placeholder(eg.int64, shape=(2,))
        b = eg.placeholder(eg.float32, shape=(2,))
        product = a * b
        assert product.dtype == eg.float32 and product.op.inputs[0].op.type == "Cast"
        out = eg.Session().run(product, {a: [3, 4], b: [0.5, 1.5]})
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1.5, 6])


def test_a_number_in_where_takes_the_float_inputs_dtype(device):
    """where(mask, x, 0.0): the number follows x, not the boolean mask (it had made float64 x
    float32 eagerly, and refused in graphs)."""
    x = on(device, [1.0, -2.0], dtype=eg.float64, requires_grad=True)
    got = eg.where(x > 0, x, 0.0)
    assert got.dtype == eg.float64
    np.testing.assert_array_equal(got.numpy(), [1, 0])
    got.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 0])
    assert eg.where(on(device, [True, False]), on(device, [1, 2]), 0.5).dtype == eg.float32
    with eg.Graph().as_default():
        p = eg.placeholder(eg.float64, shape=(2,))
        assert eg.where(p > 0, p, 0.0).dtype == eg.float64


def test_where_needs_a_boolean_condition(device):
    x = on(device, [1.0, -2.0])
    with pytest.raises(TypeError, match=r"where: the condition must be boolean, not float32; "
                       r"compare first, e\.g\. eg\.where\(mask > 0, x, y\)"):
        eg.where(x, x, 0.0)
    np.testing.assert_array_equal(eg.where([True, False], x, 0.0).numpy(), [1, 0])


def test_maximum_ties_go_to_the_first_input(device):
    """TF's rule for elementwise maximum/minimum: on a tie the first input gets the gradient."""
    x = on(device, [1.0, 2.0, 3.0], requires_grad=True)
    y = on(device, [1.0, 5.0, 3.0], requires_grad=True)
    eg.maximum(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 0, 1])
    np.testing.assert_array_equal(y.grad.numpy(), [0, 1, 0])
    x.grad = y.grad = None
    eg.minimum(x, y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [1, 1, 1])
    np.testing.assert_array_equal(y.grad.numpy(), [0, 0, 0])


@checks
@given(data=st.data(), triple=broadcastable_shapes(num_shapes=3))
def test_where(device, data, triple):
    condition = data.draw(arrays(triple[0])) > 0
    x, y = data.draw(arrays(triple[1])), data.draw(arrays(triple[2]))
    got = eg.where(on(device, condition), on(device, x), on(device, y))
    np.testing.assert_array_equal(got.numpy(), np.where(condition, x, y))
    gradcheck(lambda a, b: eg.where(on(device, condition), a, b), x, y,
              device=device, name="where")


@checks
@given(data=st.data(), shape=shapes())
def test_clip(device, data, shape):
    x = data.draw(arrays(shape, avoid=(-1, 1)))      # the gradient jumps at the bounds
    np.testing.assert_allclose(eg.clip(on(device, x), -1, 1).numpy(), np.clip(x, -1, 1))
    grads = gradcheck(lambda t: eg.clip(t, -1.0, 1.0), x, device=device, name="clip")
    np.testing.assert_array_equal(grads[0] != 0, np.abs(x) < 1)


def test_clip_one_sided(device):
    x = on(device, [-2.0, 0.5, 3.0], requires_grad=True)
    eg.clip(x, min=0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, 1])
    np.testing.assert_array_equal(x.clamp(max=1).numpy(), [-2, 0.5, 1])


@checks
@given(data=st.data(), triple=broadcastable_shapes(num_shapes=3))
def test_clip_tensor_bounds(device, data, triple):
    """Bounds that broadcast to x's shape (tf.clip_by_value): each gets the gradient where
    it binds, x where it lies inside."""
    x_shape = np.broadcast_shapes(*triple)
    x = data.draw(arrays(x_shape))
    low = data.draw(arrays(triple[1], avoid=())) * 0.25 - 0.5       # in [-1, 0]
    high = data.draw(arrays(triple[2], avoid=())) * 0.25 + 0.51     # in [0.01, 1.01]: a bound
                                                                    # equal to the other is a kink
    apart = np.min(np.abs(np.concatenate([(x - low).ravel(), (x - high).ravel()])))
    if apart < 1e-3:                # at a tie clip has no derivative
        x = x + 3.14159e-3
    got = eg.clip(on(device, x), on(device, low), on(device, high))
    np.testing.assert_allclose(got.numpy(), np.clip(x, low, high))
    gradcheck(eg.clip, x, low, high, device=device, name="clip")


def test_clip_bounds_must_fit_x(device):
    x = on(device, np.zeros((2, 3), np.float32))
    with pytest.raises(eg.errors.ShapeError, match=r"clip: bounds of shapes \(4, 1, 3\) cannot "
                       r"clip a tensor of shape \(2, 3\).*tf.clip_by_value"):
        eg.clip(x, on(device, np.zeros((4, 1, 3), np.float32)))
    with pytest.raises(ValueError, match="at least one bound"):
        eg.clip(x)
    with eg.Graph().as_default():
        p = eg.placeholder(eg.float32, shape=(None, 3))
        with pytest.raises(eg.errors.ShapeError, match=r"bounds of shapes \(2,\)"):
            eg.clip(p, eg.placeholder(eg.float32, shape=(2,)), 1.0)
        assert eg.clip(p, eg.placeholder(eg.float32, shape=(None, 1)), 1.0).shape.as_list() \
            == [None, 3]


def test_clip_integer_bound_keeps_dtype(device):
    x = on(device, [0.5, 2.5, 4.5])
    got = eg.clip(x, on(device, [1, 1, 1]), 4)
    assert got.dtype == eg.float32
    np.testing.assert_array_equal(got.numpy(), [1, 2.5, 4])
    assert eg.clip(x, np.float64(1.0), np.int64(4)).dtype == eg.float32   # numpy scalars


def test_cast(device):
    x = on(device, [1.7, -2.2], requires_grad=True)
    y = eg.cast(x, eg.float64)
    assert y.dtype == eg.float64 and y.device.name == device
    (y * 3).sum().backward()
    assert x.grad.dtype == eg.float32
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3])
    as_int = eg.cast(x, eg.int32)
    assert as_int.dtype == eg.int32 and not as_int.requires_grad
    np.testing.assert_array_equal(as_int.numpy(), [1, -2])
    assert x.to(eg.float64).dtype == eg.float64 and x.double().dtype == eg.float64
    assert x.long().dtype == eg.int64 and eg.cast(x, "float").dtype == eg.float32


def test_comparisons_produce_no_gradient(device):
    x = on(device, [1.0, 2.0, 3.0], requires_grad=True)
    for compare in (eg.less, eg.less_equal, eg.greater, eg.greater_equal, eg.equal,
                    eg.not_equal):
        mask = compare(x, 2.0)
        assert mask.dtype == np.bool_ and not mask.requires_grad and mask.grad_fn is None
    # a mask used as a factor stops the gradient of the comparison, not of x
    (x * eg.cast(x > 1.5, eg.float32)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, 1])
    assert not eg.sign(x).requires_grad
    np.testing.assert_array_equal(eg.logical_not(x > 1.5).numpy(), [True, False, False])


def test_add_n_sums_a_list_and_distributes_the_gradient(device):
    rng = np.random.default_rng(5)
    parts = [rng.normal(size=(2, 3)) for _ in range(3)]
    got = eg.add_n([on(device, p) for p in parts])
    np.testing.assert_allclose(got.numpy(), parts[0] + parts[1] + parts[2])
    gradcheck(lambda a, b, c: eg.add_n([a, b, c]), *parts, device=device, name="add_n")
    with pytest.raises(ValueError, match="add_n needs a non-empty list"):
        eg.add_n([])
    with eg.Graph().as_default():
        p = eg.placeholder(eg.float32, shape=(None, 3))
        total = eg.add_n([p, p, p])
        assert total.op.type == "AddN" and total.shape.as_list() == [None, 3]


def test_constant_fills_or_reshapes_to_its_shape():
    """tf.constant(value, shape=...): one number fills the shape, as many values as it has
    elements fill it row by row (the slides' constant([1., ..., 6.], shape=[2, 3]))."""
    np.testing.assert_array_equal(eg.constant(7.0, shape=(2, 2)).numpy(), np.full((2, 2), 7.0))
    np.testing.assert_array_equal(eg.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], shape=[2, 3])
                                  .numpy(), [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(ValueError, match=r"constant: a value of shape \(3,\) \(3 elements\) "
                       r"cannot make shape \(2, 3\) \(6 elements\)"):
        eg.constant([1.0, 2.0, 3.0], shape=[2, 3])
    with eg.Graph().as_default():
        c = eg.constant([1, 2, 3, 4], shape=[2, 2])
        assert c.shape.as_list() == [2, 2] and c.dtype == eg.int32


def test_logical_ops_combine_masks(device):
    x = on(device, [-1.0, 0.5, 2.0])
    inside, outside = (x > 0) & (x < 1), (x < 0) | (x > 1)
    np.testing.assert_array_equal(inside.numpy(), [False, True, False])
    np.testing.assert_array_equal(outside.numpy(), [True, False, True])
    np.testing.assert_array_equal((~inside).numpy(), outside.numpy())
    np.testing.assert_array_equal(eg.logical_and(x > 0, True).numpy(), [False, True, True])
    np.testing.assert_array_equal(eg.logical_or(False, x > 1).numpy(), [False, False, True])
    assert inside.dtype == eg.bool_ and not eg.logical_or(x > 0, x < 0).requires_grad
    # numpy reads any nonzero as true, PyTorch's & on integers is bitwise: refused, as in TF
    for call in (lambda: x & (x > 0), lambda: eg.logical_or(x > 0, on(device, [1, 0, 2])),
                 lambda: ~x):
        with pytest.raises(TypeError, match=r"^logical_(and|or|not): inputs must be boolean "
                           r"tensors, got one of dtype (float32|int64) and shape \(3,\)\. "
                           r"Compare first"):
            call()


# ----------------------------------------------------------------------------- matmul
@checks
@given(data=st.data(), batch=broadcastable_shapes(max_dims=2, max_side=3),
       n=st.integers(1, 3), k=st.integers(1, 3), m=st.integers(1, 3))
def test_batched_matmul_broadcasts_batch_dims(device, data, batch, n, k, m):
    a = data.draw(arrays(batch[0] + (n, k)))
    b = data.draw(arrays(batch[1] + (k, m)))
    np.testing.assert_allclose(eg.matmul(on(device, a), on(device, b)).numpy(), a @ b,
                               rtol=1e-12, atol=1e-12)
    gradcheck(eg.matmul, a, b, device=device, name="matmul")


@pytest.mark.parametrize("transpose_a", [False, True])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_matmul_transpose_flags(device, transpose_a, transpose_b):
    """TF's transpose_a / transpose_b: values, first and second derivatives (the backward
    uses the flags itself), in eager mode and in a graph (shape inference)."""
    rng = np.random.default_rng(1)
    a = rng.normal(size=(2, 4, 3) if transpose_a else (2, 3, 4))
    b = rng.normal(size=(5, 4) if transpose_b else (4, 5))
    expected = np.swapaxes(a, -1, -2) if transpose_a else a
    expected = expected @ (b.T if transpose_b else b)

    def f(x, y):
        return eg.matmul(x, y, transpose_a=transpose_a, transpose_b=transpose_b)

    np.testing.assert_allclose(f(on(device, a), on(device, b)).numpy(), expected, rtol=1e-12)
    gradcheck(f, a, b, device=device, name="matmul transposed")
    x = on(device, a, requires_grad=True)
    (g,) = eg.grad([eg.reduce_sum(eg.square(f(x, on(device, b))))], [x], create_graph=True)
    gradcheck(lambda x: eg.grad([eg.reduce_sum(eg.square(f(x, on(device, b))))], [x],
                                create_graph=True)[0], a, device=device, name="d/dx of grad")
    with eg.Graph().as_default():
        pa = eg.placeholder(eg.float64, shape=(None,) + a.shape[1:])
        assert tuple(f(pa, eg.constant(b)).shape) == (None,) + expected.shape[1:]
        with pytest.raises(eg.errors.ShapeError, match="inner dimensions differ"):
            eg.matmul(pa, eg.constant(b), transpose_a=not transpose_a,
                      transpose_b=transpose_b)


@pytest.mark.parametrize("shapes_ab", [((3,), (3,)), ((3,), (3, 2)), ((2, 3), (3,)),
                                       ((4, 2, 3), (3,)), ((3,), (4, 3, 2))], ids=str)
def test_matmul_with_vectors(device, shapes_ab):
    rng = np.random.default_rng(0)
    a, b = (rng.normal(size=s) for s in shapes_ab)
    got = eg.matmul(on(device, a), on(device, b))
    assert got.shape == np.matmul(a, b).shape
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-12)
    gradcheck(eg.matmul, a, b, device=device, name="matmul")


PRODUCTS = {   # PyTorch's products of fixed ranks: (function, shapes, numpy reference)
    "dot": (eg.dot, ((3,), (3,)), np.dot),
    "mv": (eg.mv, ((2, 3), (3,)), np.matmul),
    "mm": (eg.mm, ((2, 3), (3, 4)), np.matmul),
    "bmm": (eg.bmm, ((2, 1, 3), (2, 3, 2)), np.matmul),
    "outer": (eg.outer, ((3,), (2,)), np.outer),
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_pytorch_products_values_and_gradients(device, name):
    fn, shapes_ab, ref = PRODUCTS[name]
    rng = np.random.default_rng(0)
    a, b = (rng.normal(size=s) for s in shapes_ab)
    np.testing.assert_allclose(fn(on(device, a), on(device, b)).numpy(), ref(a, b), rtol=1e-12)
    gradcheck(fn, a, b, device=device, name=name)


def test_pytorch_products_name_the_function_and_the_shapes(device):
    v3, v4, m = on(device, np.ones(3)), on(device, np.ones(4)), on(device, np.ones((2, 3)))
    with pytest.raises(eg.errors.ShapeError, match=r"^dot: their lengths differ \(3 and 4\), "
                       r"in shapes \(3,\) and \(4,\)"):
        eg.dot(v3, v4)
    with pytest.raises(eg.errors.ShapeError, match=r"^dot multiplies two 1-D vectors of the same "
                       r"length, got shapes \(2, 3\) and \(3,\)\. eg\.matmul \(or @\) "
                       r"multiplies tensors of any rank"):
        m.dot(v3)
    with pytest.raises(eg.errors.ShapeError, match=r"^mv: the matrix's columns and the vector's "
                       r"length differ \(3 and 4\)"):
        eg.mv(m, v4)
    with pytest.raises(eg.errors.ShapeError, match=r"^mm multiplies two matrices"):
        eg.mm(v3, m)
    with pytest.raises(eg.errors.ShapeError, match=r"^mm: a's columns and b's rows differ "
                       r"\(3 and 2\), in shapes \(2, 3\) and \(2, 3\)"):
        m.mm(m)
    with pytest.raises(eg.errors.ShapeError, match=r"^bmm: the batch sizes \(bmm does not "
                       r"broadcast\) differ \(2 and 1\)"):
        eg.bmm(eg.stack([m, m]), eg.reshape(m, (1, 3, 2)))
    with pytest.raises(eg.errors.ShapeError, match=r"^outer multiplies two 1-D vectors, got "
                       r"shapes \(3,\) and \(2, 3\)"):
        eg.outer(v3, m)
    with eg.Graph().as_default():           # checked as the graph is built, where sizes are known
        x, y = eg.placeholder(eg.float32, (None, 3)), eg.placeholder(eg.float32, (4,))
        with pytest.raises(eg.errors.ShapeError, match=r"^mv: .* differ \(3 and 4\)"):
            eg.mv(x, y)
        assert eg.mv(x, eg.placeholder(eg.float32, (None,))).shape.as_list() == [None]


@pytest.mark.parametrize("fn", [eg.exp, eg.log, eg.sqrt, eg.sigmoid, eg.tanh, eg.softmax,
                                eg.log_softmax, eg.reduce_mean, eg.logsumexp,
                                lambda x: x / 2, lambda x: 1 / x, lambda x: x ** 0.5],
                         ids=["exp", "log", "sqrt", "sigmoid", "tanh", "softmax",
                              "log_softmax", "mean", "logsumexp", "x/2", "1/x", "x**0.5"])
def test_integer_inputs_to_real_ops_give_float32(device, fn):
    """As in PyTorch: numpy would silently switch to float64, which then clashes with float32."""
    x = on(device, [1, 2, 4])
    got = fn(x)
    assert got.dtype == eg.float32
    np.testing.assert_allclose(got.numpy(), fn(on(device, [1.0, 2.0, 4.0])).numpy())


@pytest.mark.parametrize("fn", [eg.exp, eg.sqrt, eg.sigmoid, eg.reduce_mean,
                                lambda x: eg.divide(x, [1, 2, 4]), lambda x: eg.divide(2, x)],
                         ids=["exp", "sqrt", "sigmoid", "mean", "list/list", "int/list"])
def test_lists_and_numbers_of_integers_to_real_ops_give_float32(fn):
    """They gave float64: the list became an int64 constant that numpy widened."""
    got = fn([1, 2, 4])
    assert got.dtype == eg.float32
    np.testing.assert_allclose(got.numpy(), fn(eg.tensor([1.0, 2.0, 4.0])).numpy(), rtol=1e-6)
    with eg.Graph().as_default():
        assert fn([1, 2, 4]).dtype == eg.float32


def test_integer_divided_by_float64_is_float64(device):
    """x64 / ints was refused ("float64 and float32"): the integers went to float32 first."""
    x64, ints = on(device, [1.0, 3.0], dtype=eg.float64), on(device, [2, 4])
    for got, want in [(x64 / ints, [0.5, 0.75]), (ints / x64, [2.0, 4 / 3])]:
        assert got.dtype == eg.float64
        np.testing.assert_allclose(got.numpy(), want)
    assert (ints / 2.5).dtype == eg.float32 and (ints / [2.5, 1.0]).dtype == eg.float32
    with pytest.raises(eg.errors.ShapeError,
                       match="integers cannot be raised to negative integer powers.*eg.cast"):
        ints ** on(device, [-1, 2])


def test_pytorch_method_names(device):
    x, y = on(device, [1.0, -2.0]), on(device, [3.0, 4.0])
    for method, fn in [("add", eg.add), ("subtract", eg.subtract), ("sub", eg.subtract),
                       ("multiply", eg.multiply), ("mul", eg.multiply), ("divide", eg.divide),
                       ("div", eg.divide), ("maximum", eg.maximum), ("minimum", eg.minimum)]:
        np.testing.assert_array_equal(getattr(x, method)(y).numpy(), fn(x, y).numpy())
    for method, fn in [("negative", eg.negative), ("neg", eg.negative), ("square", eg.square),
                       ("exp", eg.exp), ("abs", eg.abs)]:
        np.testing.assert_array_equal(getattr(x, method)().numpy(), fn(x).numpy())
    np.testing.assert_array_equal(y.sqrt().numpy(), eg.sqrt(y).numpy())
    np.testing.assert_array_equal(y.log().numpy(), eg.log(y).numpy())
    np.testing.assert_array_equal(x.pow(3).numpy(), [1, -8])
    np.testing.assert_array_equal(x.where(x > 0, y).numpy(), [1, 4])    # torch.Tensor.where


@checks
@given(data=st.data(), pair=broadcastable_shapes())
def test_floormod_and_floordiv(device, data, pair):
    # x % y jumps where x / y is an integer: keep x / y away from integers for the gradient check
    y = data.draw(st.sampled_from([-1.0, 1.0])) * (data.draw(positive_arrays(pair[1])) + 0.5)
    x = data.draw(arrays(pair[0]))
    x = np.broadcast_to(x, np.broadcast_shapes(x.shape, y.shape)).copy()
    x += np.where(np.abs(x / y - np.round(x / y)) < 0.05, 0.2 * np.abs(y), 0.0)
    np.testing.assert_allclose(eg.floormod(on(device, x), on(device, y)).numpy(), np.mod(x, y))
    np.testing.assert_array_equal((on(device, x) // on(device, y)).numpy(), x // y)
    gradcheck(eg.floormod, x, y, device=device, name="floormod")


def test_floordiv_and_mod_operators_on_integers_and_numbers(device):
    i = on(device, np.array([7, -7, 6]))
    np.testing.assert_array_equal((i // 2).numpy(), [3, -4, 3])
    np.testing.assert_array_equal((i % 3).numpy(), [1, 2, 0])
    np.testing.assert_array_equal((10 % on(device, np.array([3.0, -4.0]))).numpy(), [1.0, -2.0])
    x = on(device, np.array([5.0, -7.0]), requires_grad=True)
    assert not (x // 2.0).requires_grad            # piecewise constant: no gradient, as in TF


def test_divide_no_nan_is_zero_where_the_divisor_is(device):
    """tf.math.divide_no_nan: 0 (and a 0 gradient, not NaN) where y is 0."""
    x = on(device, [1.0, 3.0, 2.0], requires_grad=True)
    y = on(device, [2.0, 0.0, 0.5], requires_grad=True)
    z = eg.math.divide_no_nan(x, y)
    np.testing.assert_allclose(z.numpy(), [0.5, 0.0, 4.0])
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.5, 0.0, 2.0])
    np.testing.assert_allclose(y.grad.numpy(), [-0.25, 0.0, -8.0])
