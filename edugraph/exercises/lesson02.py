"""Lesson 2's exercises: predict a broadcast; the gradient of a broadcast bias; a backward pass
by hand in numpy; how fine float32 is; a function that works on any device."""
import numpy as np

import edugraph as eg

from .answers import WrongForm, array, function, number, shape
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
                else f"a {type(returned).__name__}")
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

EXERCISES = [ex2_1, ex2_2, ex2_3, ex2_4, ex2_5]
