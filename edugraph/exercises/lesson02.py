"""Lesson 2's exercises: predict a broadcast; the gradient of a broadcast bias; a backward pass
by hand in numpy; how fine float32 is; a function that works on any device; the backward of a
matrix product; when a copy to the GPU pays; weight updates in mixed precision."""
import numpy as np

import edugraph as eg
from edugraph.utils.printing import rounded

from .answers import WrongForm, array, close, describe, function, number, shape, \
    whole_number
from .checking import Exercise, Mistake


# ------------------------------------------------------------- 2.1: predict a broadcast's shape
# name -> (shape of the left operand, shape of the right one, the operation)
_BROADCASTS = {
    "shape_mul": ((5, 1, 3), (4, 1), lambda a, b: a * b),
    "shape_add": ((1, 3), (3, 1, 1), lambda a, b: a + b),
    "shape_sub": ((8, 1), (8,), lambda a, b: a - b),      # predictions minus targets
}


def _broadcast_shapes():
    """The shape of each result, as edugraph computes it."""
    return {name: tuple(op(eg.ones(left), eg.ones(right)).shape)
            for name, (left, right, op) in _BROADCASTS.items()}


def _lined_up_from_the_left(left, right):
    """The shape a student gets who pads the shorter shape with 1s on the RIGHT."""
    ndim = max(len(left), len(right))
    return np.broadcast_shapes(left + (1,) * (ndim - len(left)),
                               right + (1,) * (ndim - len(right)))


def _keeps_a_size_one(got, reference):
    """Some answer keeps a 1 where the other operand's larger size should have been repeated."""
    for name, right in reference.items():
        answer = got[name]
        if answer != right and len(answer) == len(right) and all(
                a == r or a == 1 for a, r in zip(answer, right)):
            return True
    return False


def _with_shapes(**shapes):
    return lambda: {**_broadcast_shapes(), **shapes}


ex2_1 = Exercise(
    "2.1",
    reads={name: shape for name in _BROADCASTS},
    reference=_broadcast_shapes,
    passed="{shape_mul}, {shape_add} and {shape_sub}: shapes line up from the right, and "
           "a size-1 dimension is repeated to match the other.",
    expected="shape_mul, shape_add and shape_sub are each a tuple of whole numbers, the "
             "shape of that result.",
    mistakes=(
        Mistake("shape_sub: (8,) lines up from the right against (8, 1), so it acts as (1, 8). "
                "Which dimensions get repeated then? (This is why a loss of predictions (8, 1) "
                "against targets (8,) is silently wrong.)",
                when=lambda got, ref: got["shape_sub"] in ((8, 1), (8,)),
                example=_with_shapes(shape_sub=(8,))),
        Mistake("shape_add: shapes line up from the RIGHT. The shorter shape gets 1s added on "
                "its left, so (1, 3) acts as (1, 1, 3).",
                when=lambda got, ref: got["shape_add"] == _lined_up_from_the_left((1, 3),
                                                                                 (3, 1, 1)),
                example=_with_shapes(shape_add=_lined_up_from_the_left((1, 3), (3, 1, 1)))),
        Mistake("a size-1 dimension does not stay 1 when the other shape has a larger size "
                "there: it is repeated to match that size.",
                when=_keeps_a_size_one, example=_with_shapes(shape_mul=(5, 1, 3))),
    ),
)


# ------------------------------------------------------ 2.2: the gradient of a broadcast bias
# The upstream gradient dL/d(out) of out = h + b_row + b_col (h: 4 × 3), the loss being
# L = Σ g_up ⊙ out. The notebook's answer cell holds the same numbers. No zeros, and row and
# column sums, means and counts all differ, so that each mistake below gives other numbers.
G_UP = np.array([[1.0, 2.0, -1.0],
                 [0.5, 3.0, 1.0],
                 [2.0, -1.0, 2.0],
                 [-0.5, 1.0, 3.0]])
_BIAS_SHAPES = {"grad_b_row": (3,), "grad_b_col": (4, 1)}
_REPEATED_ALONG = {"grad_b_row": 0, "grad_b_col": 1}      # the axis each bias is copied along


def _bias_gradients():
    """Both biases' gradients, as edugraph's backward computes them (float64)."""
    h = eg.tensor(np.arange(12.0).reshape(4, 3))     # any values: L is linear in the biases
    b_row = eg.tensor(np.zeros(3), requires_grad=True)
    b_col = eg.tensor(np.zeros((4, 1)), requires_grad=True)
    ((h + b_row + b_col) * eg.tensor(G_UP)).sum().backward()
    return {"grad_b_row": b_row.grad.numpy(), "grad_b_col": b_col.grad.numpy()}


def _same_numbers(got, expected):
    """The same values in any shape (a gradient can be right but shaped wrongly)."""
    got, expected = np.asarray(got), np.asarray(expected)
    return got.size == expected.size and np.allclose(got.ravel(), expected.ravel())


def _per_bias(reduce):
    """For each bias, upstream gradients reduced along the axis it was copied along."""
    return {name: reduce(G_UP, axis=axis, keepdims=True).reshape(_BIAS_SHAPES[name])
            for name, axis in _REPEATED_ALONG.items()}


def _any_bias(test):
    return lambda got, ref: any(test(name, got[name], ref[name]) for name in _BIAS_SHAPES)


def _summed_along_another_axis(name, got, ref):
    """Summed along the axis the bias was not copied along, or along both."""
    return (_same_numbers(got, G_UP.sum(axis=1 - _REPEATED_ALONG[name]))
            or _same_numbers(got, G_UP.sum()))


def _ignores_the_upstream(name, got, ref):
    copies = G_UP.shape[_REPEATED_ALONG[name]]
    return np.allclose(got, 1.0) or np.allclose(got, copies)


def _bias_answer(**names):
    return lambda: {**_bias_gradients(), **names}


ex2_2 = Exercise(
    "2.2",
    reads={name: array for name in _BIAS_SHAPES},
    reference=_bias_gradients,
    passed=lambda answer: (f"dL/db_row = {answer['grad_b_row'].round(3).tolist()} and "
                           f"dL/db_col = {answer['grad_b_col'].ravel().round(3).tolist()} "
                           "(shape (4, 1)): each bias's copies are summed back into its own "
                           "shape."),
    expected="grad_b_row is an array of shape (3,) and grad_b_col one of shape (4, 1), "
             "computed from g_up (checked to 1e-6).",
    mistakes=(
        Mistake("a gradient has the shape of what it is the gradient of. Each copy of a "
                "broadcast bias gets a gradient, and the copies' gradients are summed back "
                "into the bias's own shape, (3,) for b_row and (4, 1) for b_col.",
                when=_any_bias(lambda name, got, ref: got.shape == G_UP.shape),
                example=_bias_answer(grad_b_row=G_UP)),
        Mistake("the numbers are right but a shape is not: a gradient has exactly its "
                "bias's shape, (3,) for b_row and (4, 1) for b_col (keepdims=True or "
                "reshape keeps an axis of size 1).",
                when=_any_bias(lambda name, got, ref: got.shape != ref.shape and
                               _same_numbers(got, ref)),
                example=lambda: {**_bias_gradients(),
                                 "grad_b_col": _bias_gradients()["grad_b_col"].ravel()}),
        Mistake("these are averages: the gradients of a bias's copies add up (branches "
                "sum, lesson 1), they are not averaged.",
                when=_any_bias(lambda name, got, ref: _same_numbers(
                    got, _per_bias(np.mean)[name])),
                example=lambda: _per_bias(np.mean)),
        Mistake("you summed along the wrong axis, or along all of them: sum along the axis "
                "the bias was copied along only. b_row (one value per column) was copied "
                "down the 4 rows; b_col (one value per row) across the 3 columns.",
                when=_any_bias(_summed_along_another_axis),
                example=_bias_answer(grad_b_row=G_UP.sum(axis=1))),
        Mistake("your gradient does not depend on g_up: it would be right for L = Σ out, "
                "where every upstream gradient is 1 (section 2's example). Here each copy "
                "of a bias brings back its own upstream gradient, from g_up.",
                when=_any_bias(_ignores_the_upstream),
                example={"grad_b_row": np.full(3, 4.0), "grad_b_col": np.full((4, 1), 3.0)}),
    ),
)


# ------------------------------------------- 2.3: c = Σ (x ⊙ y + z)², backward by hand in numpy
# Two sets of float64 inputs of different shapes: a function that only works for the
# lesson's 3 × 4 matrices fails on the second.
_rng = np.random.default_rng(23)
_INPUTS = tuple(tuple(_rng.standard_normal(size) for _ in "xyz") for size in ((3, 4), (2, 5)))
_GRAD_NAMES = ("grad_x", "grad_y", "grad_z")


def _by_edugraph(graph):
    """The gradients of graph(x, y, z) for x, y and z, by edugraph's backward, per input set."""
    per_input = []
    for inputs in _INPUTS:
        leaves = [eg.tensor(value, requires_grad=True) for value in inputs]
        graph(*leaves).backward()
        per_input.append([leaf.grad.numpy() for leaf in leaves])
    return {name: tuple(grads[i] for grads in per_input) for i, name in enumerate(_GRAD_NAMES)}


def _by_formula(gradients):
    """gradients(x, y, z) -> (grad_x, grad_y, grad_z), per input set, like _by_edugraph."""
    per_input = [gradients(*inputs) for inputs in _INPUTS]
    return {name: tuple(grads[i] for grads in per_input) for i, name in enumerate(_GRAD_NAMES)}


def _run_backward_by_hand(answer):
    backward_by_hand = answer["backward_by_hand"]
    return _by_formula(lambda x, y, z: _three_arrays(
        backward_by_hand(x.copy(), y.copy(), z.copy())))


def _three_arrays(returned):
    if returned is None:
        raise WrongForm("backward_by_hand returned None: is its `return grad_x, grad_y, "
                        "grad_z` line missing?")
    if not isinstance(returned, (tuple, list)) or len(returned) != 3:
        what = (f"{len(returned)} values" if isinstance(returned, (tuple, list))
                else describe(returned))
        raise WrongForm("backward_by_hand should return three arrays, "
                        f"`return grad_x, grad_y, grad_z`; it returned {what}.")
    return [array(value, f"the {name} it returned") for value, name in zip(returned,
                                                                              _GRAD_NAMES)]


def _mul_keeps_own_input(x, y, z):
    b = x * y + z
    return 2 * b * x, 2 * b * y, 2 * b


def _z_not_chained(x, y, z):
    b = x * y + z
    return 2 * b * y, 2 * b * x, np.ones_like(z)


def _squared_sum(x, y, z):
    return eg.sum((x * y + z) ** 2)


def _close_all(got, reference, *names):
    """Whether the named gradients match the reference's, for every input set."""
    return all(np.shape(g) == np.shape(r) and np.allclose(g, r)
               for name in names for g, r in zip(got[name], reference[name]))


ex2_3 = Exercise(
    "2.3",
    reads={"backward_by_hand": function},
    run=_run_backward_by_hand,
    reference=lambda: _by_edugraph(_squared_sum),
    passed="backward_by_hand matches edugraph's backward on 3 × 4 and 2 × 5 inputs: the "
           "square sends 2b back, the add passes it on, the mul switches.",
    expected="backward_by_hand(x, y, z) returns (grad_x, grad_y, grad_z), three numpy arrays "
             "of x's shape, the gradients of c = Σ (x ⊙ y + z)² (checked against edugraph "
             "on two input shapes, to 1e-6).",
    mistakes=(
        Mistake("these are section 3's gradients, of Σ (x ⊙ y + z) without the square: "
                "the square between b and the sum multiplies every gradient below it by its "
                "local derivative.",
                gives=lambda: _by_edugraph(lambda x, y, z: eg.sum(x * y + z)),
                example={"backward_by_hand": lambda x, y, z: (y, x, np.ones_like(z))}),
        Mistake("your gradients are half the right ones: the square's local derivative is "
                "2b, not b.",
                gives=lambda: _by_edugraph(lambda x, y, z: eg.sum((x * y + z) ** 2) / 2),
                example={"backward_by_hand": lambda x, y, z: (
                    (x * y + z) * y, (x * y + z) * x, x * y + z)}),
        Mistake("grad_x and grad_y are swapped: a mul gate multiplies the upstream gradient "
                "by its OTHER input.",
                gives=lambda: _by_formula(_mul_keeps_own_input),
                example={"backward_by_hand": _mul_keeps_own_input}),
        Mistake("the square acts on each element, before the sum: its local derivative is "
                "2b, an array of x's shape, not 2·Σb.",
                gives=lambda: _by_edugraph(lambda x, y, z: eg.sum(x * y + z) ** 2),
                example={"backward_by_hand": lambda x, y, z: (
                    2 * np.sum(x * y + z) * y, 2 * np.sum(x * y + z) * x,
                    2 * np.sum(x * y + z) * np.ones_like(z))}),
        Mistake("the signs are flipped: backward computes the gradient itself, ∂c/∂x; the "
                "minus sign belongs to the update step (x - lr · grad), not here.",
                gives=lambda: _by_edugraph(lambda x, y, z: -_squared_sum(x, y, z)),
                example={"backward_by_hand": lambda x, y, z: (
                    -2 * (x * y + z) * y, -2 * (x * y + z) * x, -2 * (x * y + z))}),
        Mistake("grad_x and grad_y are right, grad_z is not: z enters b through the add, "
                "which passes the gradient that reaches b (from the square) on unchanged.",
                when=lambda got, ref: (_close_all(got, ref, "grad_x", "grad_y")
                                       and not _close_all(got, ref, "grad_z")),
                example={"backward_by_hand": _z_not_chained}),
    ),
)


# ------------------------------------------------------------------ 2.4: how fine is float32?
def _machine_epsilon(one, as_dtype):
    """Halve ε while 1 + ε/2 still differs from 1 in that dtype: the gap above 1."""
    eps = 1.0
    while float(one + as_dtype(eps / 2)) != 1.0:
        eps /= 2
    return eps


def _float32_epsilon():
    return _machine_epsilon(eg.tensor(1.0), eg.tensor)       # Python floats become float32


def _float64_epsilon():
    return _machine_epsilon(1.0, float)


def _smallest_float32(got, reference):
    """The smallest positive float32, normal or subnormal: another thing than ε."""
    info = np.finfo(np.float32)
    return any(np.isclose(got["eps_float32"], float(tiny), rtol=1e-2, atol=0.0)
               for tiny in (info.tiny, info.smallest_subnormal))


def _epsilon_line(answer):
    eps = answer["eps_float32"]
    return (f"float32's ε = {eps:.3g} = 2^{np.log2(eps):.0f}: about 7 significant digits "
            f"(float64's ε is {_float64_epsilon():.3g}).")


ex2_4 = Exercise(
    "2.4",
    reads={"eps_float32": number},
    reference=lambda: {"eps_float32": _float32_epsilon()},
    passed=_epsilon_line,
    expected="eps_float32 is one number, the gap between 1 and the next float32 (checked "
             "to 1e-6, relative).",
    atol=0.0,       # ε is tiny: only a relative tolerance tells float32's from float64's
    mistakes=(
        Mistake("that is float64's ε: Python floats, and numpy's arrays by default, are "
                "float64. Do the additions in float32: eg.tensor(...) or np.float32(...).",
                gives=lambda: {"eps_float32": _float64_epsilon()}),
        Mistake("one halving too far: for this ε, 1 + ε already rounds back to 1. Keep the "
                "last ε for which 1 + ε still differs from 1.",
                gives=lambda: {"eps_float32": _float32_epsilon() / 2}),
        Mistake("that is the smallest positive float32, another thing: ε is the spacing of "
                "the numbers next to 1, the relative precision of every float32.",
                when=_smallest_float32,
                example={"eps_float32": float(np.finfo(np.float32).tiny)}),
    ),
)


# -------------------------------------------------------- 2.5: a function for any device
# Each set of numbers is given on cpu:0 and then on sim:0, so that a function that works on
# the first and fails on the second fails because of the device. Multiples of 1/4: float32
# sums them exactly. Neither shape is 1-D, so len(t) is not the number of elements.
_NUMBERS = (np.array([[1.0, 2.5, -3.0], [4.0, 0.25, 6.0]]),
            np.arange(12.0).reshape(3, 2, 2) / 4 - 1)
_DEVICES = ("cpu:0", "sim:0")
_FAILS_ON_SIM = "raised an error on sim:0 only"


def _probes():
    """Fresh float32 tensors (a function could change its input in place)."""
    return [(device, eg.tensor(numbers, dtype=eg.float32, device=device))
            for device in _DEVICES for numbers in _NUMBERS]


def _means(mean_of_numbers):
    return {"means": tuple(float(mean_of_numbers(n)) for _ in _DEVICES for n in _NUMBERS)}


def _run_mean_of(answer):
    mean_of = answer["mean_of"]
    results = []
    for device, tensor in _probes():
        try:
            value = mean_of(tensor)
        except Exception:
            if device == "cpu:0":
                raise           # the student's own error, reported with their line
            results.append(_FAILS_ON_SIM)      # the same numbers worked on cpu:0
            continue
        results.append(_what_mean_of_returned(value))
    return {"means": tuple(results)}


def _what_mean_of_returned(value):
    """A Python float as it is; a tensor or a numpy number as what it is (a known mistake)."""
    if isinstance(value, (eg.Tensor, np.ndarray)) and value.size != 1:
        raise WrongForm(f"mean_of(t) returned {describe(value)}: a mean over some axes. The "
                        "mean of ALL of t's elements is one number: reduce over every axis "
                        "(no axis argument).")
    if isinstance(value, eg.Tensor):
        return "a tensor"
    if isinstance(value, (np.generic, np.ndarray)):
        return "a numpy number"
    if not isinstance(value, float):
        raise WrongForm(f"mean_of(t) should return a Python float; it returned "
                        f"{'an' if type(value).__name__[0] in 'aeiou' else 'a'} "
                        f"{type(value).__name__} ({value!r:.40}).")
    return value


def _returned(kind):
    return lambda got, ref: kind in got["means"]


ex2_5 = Exercise(
    "2.5",
    reads={"mean_of": function},
    run=_run_mean_of,
    reference=lambda: _means(np.mean),
    passed="mean_of gives the mean as a Python float on cpu:0 and on sim:0, for shapes "
           "(2, 3) and (3, 2, 2): one function for every device.",
    expected="mean_of(t) returns one Python float, the mean of all of t's elements, for a "
             "tensor on any device (checked on cpu:0 and sim:0, shapes (2, 3) and "
             "(3, 2, 2), to 1e-6).",
    mistakes=(
        Mistake("mean_of works on cpu:0 but raises on sim:0: numpy cannot read a device's "
                "memory, so np.asarray(t) and other numpy calls on t fail there. Copy the "
                "values explicitly (t.numpy(), t.cpu()) or use the tensor's own operations.",
                when=_returned(_FAILS_ON_SIM),
                example={"mean_of": lambda t: float(np.asarray(t).mean())}),
        Mistake("mean_of returns a tensor (on t's device), not a Python float: .item() "
                "copies a one-element tensor's value to the host as a Python float.",
                when=_returned("a tensor"), example={"mean_of": lambda t: t.mean()}),
        Mistake("mean_of returns a numpy number, not a Python float: float(...) or .item() "
                "turns a numpy scalar (or a one-element array) into a Python float.",
                when=_returned("a numpy number"),
                example={"mean_of": lambda t: t.numpy().mean()}),
        Mistake("you divided by len(t), the size of the first axis only: a mean divides the "
                "sum by the number of ALL elements (t.numel()).",
                gives=lambda: _means(lambda numbers: numbers.sum() / len(numbers)),
                example={"mean_of": lambda t: t.sum().item() / len(t)}),
    ),
)

# ------------------------------------------------------- 2.6: the backward of a matrix product
# (X, W, dY) for Y = X·W: a square problem, on which every mistake below still computes (a
# transpose left out multiplies all the same), and one with N ≠ D ≠ M, which only the right
# shapes fit.
_PROBLEM_SIZES = {"square": (3, 3, 3), "rectangular": (4, 3, 2)}        # (N, D, M)
_rng6 = np.random.default_rng(26)
_MATMUL_PROBLEMS = {kind: tuple(_rng6.standard_normal(shape)
                                for shape in ((n, d), (d, m), (n, m)))
                    for kind, (n, d, m) in _PROBLEM_SIZES.items()}
_RAISED = "raised an error"


def _matmul_by_edugraph():
    """(dX, dW) for each problem: edugraph's backward of L = Σ dY ⊙ (X·W)."""
    results = {}
    for kind, (x, w, dy) in _MATMUL_PROBLEMS.items():
        X, W = eg.tensor(x, requires_grad=True), eg.tensor(w, requires_grad=True)
        ((X @ W) * eg.tensor(dy)).sum().backward()
        results[kind] = (X.grad.numpy(), W.grad.numpy())
    return results


def _matmul_by_formula(backward, kinds=("square", "rectangular")):
    """backward(x, w, dy) -> (dX, dW) on the problems named."""
    return {kind: tuple(backward(*_MATMUL_PROBLEMS[kind])) for kind in kinds}


def _run_matmul_backward(answer):
    matmul_backward = answer["matmul_backward"]
    results = {}
    for kind, (x, w, dy) in _MATMUL_PROBLEMS.items():
        try:
            returned = matmul_backward(x.copy(), w.copy(), dy.copy())
        except ValueError:              # numpy: "matmul: Input operand 1 has a mismatch..."
            if kind == "square":
                raise                   # the student's own error, with their line
            results[kind] = _RAISED     # only the shapes of the second problem fail
            continue
        results[kind] = _two_arrays(returned)
    return results


def _two_arrays(returned):
    if not isinstance(returned, (tuple, list)) or len(returned) != 2:
        what = (f"{len(returned)} values" if isinstance(returned, (tuple, list))
                else describe(returned))
        raise WrongForm(f"matmul_backward should return two arrays, `return dX, dW`; it "
                        f"returned {what}.")
    return tuple(array(value, name) for value, name in zip(returned, ("dX", "dW")))


def _square_mistake(hint, backward):
    """A mistake recognised on the square problem, where ``backward`` still computes."""
    return Mistake(hint, when=lambda got, ref: close(
        got["square"], _matmul_by_formula(backward, ("square",))["square"]),
        example={"matmul_backward": backward})


_N, _D, _M = _PROBLEM_SIZES["rectangular"]

ex2_6 = Exercise(
    "2.6",
    reads={"matmul_backward": function},
    run=_run_matmul_backward,
    reference=_matmul_by_edugraph,
    passed="matmul_backward gives dX = dY·Wᵀ and dW = Xᵀ·dY, checked against edugraph's "
           "backward on a 3 × 3 and a 4 × 3 times 3 × 2 product: each gradient has the shape "
           "of what it is the gradient of.",
    expected="matmul_backward(X, W, dY) returns (dX, dW), two numpy arrays of X's and W's "
             "shapes (checked against edugraph on a square and a rectangular product, to "
             "1e-6).",
    mistakes=(
        _square_mistake("dX and dW are swapped: return them in the order (dX, dW); dX has "
                        "X's shape (N, D), dW has W's shape (D, M).",
                        lambda x, w, dy: (x.T @ dy, dy @ w.T)),
        _square_mistake("the transposes are missing: dY·W and X·dY only fit when every "
                        "matrix is square. Let the shapes decide: dW is D × M and must be "
                        "made of X (N × D) and dY (N × M).",
                        lambda x, w, dy: (dy @ w, x @ dy)),
        _square_mistake("dW is transposed: it must have W's shape (D, M), which Xᵀ·dY has "
                        "and dYᵀ·X does not.",
                        lambda x, w, dy: (dy @ w.T, dy.T @ x)),
        _square_mistake("dX is transposed: it must have X's shape (N, D), one row per "
                        "example, like X: dY·Wᵀ.",
                        lambda x, w, dy: (w @ dy.T, x.T @ dy)),
        _square_mistake("in a matrix product the order matters: dX = dY·Wᵀ, with dY on the "
                        "left (its rows are the examples, as X's are).",
                        lambda x, w, dy: (w.T @ dy, x.T @ dy)),
        _square_mistake("your gradients do not depend on dY: they would be right for "
                        "L = Σ Y, where every upstream gradient is 1. Multiply by dY instead "
                        "of by ones.",
                        lambda x, w, dy: (np.ones_like(dy) @ w.T, x.T @ np.ones_like(dy))),
        _square_mistake("you divided by the batch size: the examples' contributions to dW add "
                        "up (a sum over n), as the copies of a broadcast bias did in section "
                        "2.",
                        lambda x, w, dy: (dy @ w.T, x.T @ dy / len(x))),
        Mistake(f"your function works on the square problem but fails when N, D and M differ "
                f"(the check's second product is {_N} × {_D} times {_D} × {_M}): write each "
                "product's shapes next to it and make them fit.",
                when=lambda got, ref: got["rectangular"] == _RAISED,
                example={"matmul_backward": lambda x, w, dy: (
                    dy @ w.T, (x.T @ dy) if x.shape[0] == x.shape[1] else dy @ x)}),
    ),
)


# ------------------------------------------------------- 2.7: when does a copy to the GPU pay?
# The lecture's figures for its CPU and GPU, and the bus between them; the notebook's answer
# cell holds the same numbers.
CPU_FLOPS = 540e9           # Intel Core i7-7700k, float32 (FLOP/s)
GPU_FLOPS = 11.4e12         # NVIDIA GTX 1080 Ti, float32 (FLOP/s)
PCIE_BYTES = 16e9           # host ↔ GPU over PCIe 3.0 ×16 (bytes/s)
_N_VALUES = (16, 64, 256, 1024, 4096)      # where the functions are compared


def _break_even(cpu_seconds, gpu_seconds):
    """The smallest n for which the GPU, copies included, is faster."""
    n = 1
    while gpu_seconds(n) >= cpu_seconds(n):
        n += 1
    return n


def _timings(flops_per_n3=2, bytes_per_number=4, matrices_copied=3, copies=True):
    """cpu_seconds and gpu_seconds with these choices (the right ones by default)."""
    def cpu_seconds(n):
        return flops_per_n3 * n ** 3 / CPU_FLOPS

    def gpu_seconds(n):
        copy = matrices_copied * n * n * bytes_per_number / PCIE_BYTES if copies else 0.0
        return copy + flops_per_n3 * n ** 3 / GPU_FLOPS
    return cpu_seconds, gpu_seconds


def _costs(**choices):
    cpu_seconds, gpu_seconds = _timings(**choices)
    return {"cpu_seconds": tuple(cpu_seconds(n) for n in _N_VALUES),
            "gpu_seconds": tuple(gpu_seconds(n) for n in _N_VALUES),
            "break_even_n": _break_even(cpu_seconds, gpu_seconds)}


def _run_costs(answer):
    """Each function's values at _N_VALUES, and break_even_n."""
    values = {name: tuple(number(answer[name](n), f"{name}({n})") for n in _N_VALUES)
              for name in ("cpu_seconds", "gpu_seconds")}
    return {**values, "break_even_n": answer["break_even_n"]}


def _costs_answer(**choices):
    """What a student with these choices sets."""
    cpu_seconds, gpu_seconds = _timings(**choices)
    return {"cpu_seconds": cpu_seconds, "gpu_seconds": gpu_seconds,
            "break_even_n": _break_even(cpu_seconds, gpu_seconds)}


def _costs_mistake(hint, key, **choices):
    """A mistake recognised by the values of one function (``key``)."""
    return Mistake(hint, gives=lambda: {key: _costs(**choices)[key]},
                   example=lambda: _costs_answer(**choices))


def _passed_2_7(got):
    cpu, gpu = got["cpu_seconds"], got["gpu_seconds"]      # at _N_VALUES
    return (f"the GPU, copies included, wins from n = {got['break_even_n']} on: at n = "
            f"{_N_VALUES[1]} the CPU takes {cpu[1] * 1e6:.1f} µs and the GPU "
            f"{gpu[1] * 1e6:.1f} µs, mostly copying; at n = {_N_VALUES[-1]} "
            f"{cpu[-1] * 1e3:.0f} ms against {gpu[-1] * 1e3:.0f} ms.")


ex2_7 = Exercise(
    "2.7",
    reads={"cpu_seconds": function, "gpu_seconds": function, "break_even_n": whole_number},
    run=_run_costs,
    reference=_costs,
    passed=_passed_2_7,
    expected="cpu_seconds(n) and gpu_seconds(n) return seconds (numbers) for an n × n float32 "
             "matmul at the lecture's rates, the GPU's with its copies; break_even_n is the "
             "smallest n for which gpu_seconds(n) < cpu_seconds(n) (checked to 1e-6).",
    mistakes=(
        _costs_mistake("gpu_seconds leaves out the copies: A and B must cross the PCIe bus "
                       "to the GPU, and C must come back.", "gpu_seconds", copies=False),
        _costs_mistake("C comes back too: three n × n matrices cross the bus, A and B to the "
                       "GPU and the product C to the host.", "gpu_seconds", matrices_copied=2),
        _costs_mistake("PCIE_BYTES counts bytes per second, and a float32 number takes 4 "
                       "bytes: multiply the numbers copied by 4.", "gpu_seconds",
                       bytes_per_number=1),
        _costs_mistake("the matrices are float32, 4 bytes a number (8 is float64's size).",
                       "gpu_seconds", bytes_per_number=8),
        Mistake("an n × n matmul computes n² results, each a sum of n products: n³ "
                "multiplications and n³ additions, 2n³ FLOPs.",
                when=lambda got, ref: any(close(got[key], _costs(flops_per_n3=1)[key])
                                          for key in ("cpu_seconds", "gpu_seconds")),
                example=lambda: _costs_answer(flops_per_n3=1)),
        Mistake("your functions are right; break_even_n is the smallest n for which the GPU "
                "is FASTER (gpu_seconds(n) < cpu_seconds(n)).",
                when=lambda got, ref: (close(got["cpu_seconds"], ref["cpu_seconds"])
                                       and close(got["gpu_seconds"], ref["gpu_seconds"])
                                       and abs(got["break_even_n"] - ref["break_even_n"]) <= 1),
                example=lambda: {**_costs_answer(),
                                 "break_even_n": _costs()["break_even_n"] - 1}),
    ),
)


# ------------------------------------------------- 2.8: weight updates in mixed precision
# float16 weights, and one update per step (lr · gradient, in float16): small against the
# weights, so that in float16 most of them round away. Each weight its own size and sign.
_W_START = np.array([1.0, -2.0, 0.25, 8.0, 0.125], dtype=np.float16)
_STEP = np.array([1e-4, -2e-4, 3e-5, 2e-3, -1e-5], dtype=np.float16)
_NUM_STEPS = 300


def _updates():
    return [eg.tensor(_STEP, dtype=eg.float16) for _ in range(_NUM_STEPS)]


def _descended(master_dtype, sign=-1):
    """The float16 weights after every update, kept in master_dtype between the steps."""
    w = _W_START.astype(master_dtype)
    for update in _updates():
        w = (w + sign * update.numpy().astype(master_dtype)).astype(master_dtype)
    return {"weights": w.astype(np.float16), "dtype": "float16"}


def _run_mixed(answer):
    w_start = eg.tensor(_W_START, dtype=eg.float16)
    result = answer["mixed_precision_updates"](w_start, _updates())
    dtype = str(getattr(result, "dtype", type(result).__name__))
    weights = array(result, "mixed_precision_updates(w_start, updates)")
    if weights.shape != _W_START.shape:
        raise WrongForm(f"mixed_precision_updates should return the weights, of w_start's "
                        f"shape {_W_START.shape}; it returned the shape {weights.shape}.")
    return {"weights": weights, "dtype": dtype}


def _mixed_answer(body):
    return {"mixed_precision_updates": body}


def _all_in_float16(w_start, updates):
    w = w_start
    for update in updates:
        w = w - update
    return w


def _master_returned(w_start, updates):
    master = w_start.to(eg.float32)
    for update in updates:
        master = master - update.to(eg.float32)
    return master


def _added(w_start, updates):
    master = w_start.to(eg.float32)
    for update in updates:
        master = master + update.to(eg.float32)
    return master.to(eg.float16)


ex2_8 = Exercise(
    "2.8",
    reads={"mixed_precision_updates": function},
    run=_run_mixed,
    reference=lambda: _descended(np.float32),
    passed=lambda got: (f"after {_NUM_STEPS} small updates the float16 weights moved from "
                        f"{rounded(_W_START.tolist())} to {rounded(got['weights'].tolist())}: "
                        "the float32 copy keeps what each update takes away, which float16 "
                        "alone would round off."),
    expected="mixed_precision_updates(w_start, updates) returns float16 weights of w_start's "
             "shape: w_start minus every update, the sum kept in float32 (checked to 1e-3, "
             "float16's precision).",
    rtol=1e-3, atol=1e-4,
    mistakes=(
        Mistake("most of your weights did not move: in float16, 1 − 0.0001 rounds back to 1 "
                "(and larger updates are rounded too). Keep a float32 copy of the weights "
                "across ALL the steps, subtract each update from it, and round to float16 "
                "only at the end.",
                gives=lambda: {"weights": _descended(np.float16)["weights"]},
                example=_mixed_answer(_all_in_float16)),
        Mistake("the weights are right but float32: return them as float16 (.to(eg.float16)), "
                "the dtype the model computes in; the float32 copy stays with the optimizer.",
                when=lambda got, ref: (got["dtype"] != "float16"
                                       and close(got["weights"], ref["weights"], 1e-3, 1e-4)),
                example=_mixed_answer(_master_returned)),
        Mistake("the weights moved the wrong way: an update is subtracted, w − lr · grad.",
                gives=lambda: {"weights": _descended(np.float32, sign=+1)["weights"]},
                example=_mixed_answer(_added)),
    ),
)

EXERCISES = [ex2_1, ex2_2, ex2_3, ex2_4, ex2_5, ex2_6, ex2_7, ex2_8]
