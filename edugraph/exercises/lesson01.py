"""Lesson 1's exercises: backpropagation by hand through add, max and mul; branches that sum;
a central finite difference; nodes of your own, with one input and with two."""
import numpy as np

import edugraph as eg
from edugraph.ops.base import apply

from .answers import WrongForm, array, describe, function, number
from .checking import Exercise, Mistake


def _gradients(fn, **inputs):
    """fn's value and its gradient for each input, computed by edugraph (float64)."""
    leaves = {k: eg.tensor(v, dtype=eg.float64, requires_grad=True) for k, v in inputs.items()}
    out = fn(**leaves)
    out.backward()
    return out.item(), {k: t.grad.item() for k, t in leaves.items()}


# ---------------------------------------------------------------- 1.1: f = (w·x + b)² by hand
X, W, B = -1.0, 2.0, 0.5


def _f_by_parts(square_rule=lambda z: z ** 2, mul=lambda w, x: w * x):
    """q, z, f and f's gradients for w, x, b, as edugraph computes them with these rules."""
    leaves = {k: eg.tensor(v, dtype=eg.float64, requires_grad=True)
              for k, v in dict(x=X, w=W, b=B).items()}
    q = mul(leaves["w"], leaves["x"])
    z = q + leaves["b"]
    f = square_rule(z)
    f.backward()
    return {"q1": q.item(), "z1": z.item(), "f1": (z ** 2).item(),
            "df1_dw": leaves["w"].grad.item(), "df1_dx": leaves["x"].grad.item(),
            "df1_db": leaves["b"].grad.item()}


def _with_forward(gradients):
    """An answer with the right forward values and these gradients."""
    right = _f_by_parts()
    return {**{k: right[k] for k in ("q1", "z1", "f1")}, **gradients}


def _f_local_only():
    """Each input's local derivative alone, without the upstream gradient from the square."""
    return _with_forward({"df1_dw": X, "df1_dx": W, "df1_db": 1.0})


def _f_mul_keeps_own_input():
    upstream = _f_by_parts()["df1_db"]      # what reaches q: add passes it on unchanged
    return _with_forward({"df1_dw": upstream * W, "df1_dx": upstream * X, "df1_db": upstream})


def _f_sign_flipped():
    return _with_forward({k: -v for k, v in _f_by_parts().items() if k.startswith("df")})


def _one_sign_slipped(got, reference):
    """Some gradients have the reference's size and the opposite sign, all else is right."""
    flipped = [k for k in reference if k.startswith("df") and reference[k]
               and np.isclose(got[k], -reference[k])]
    return bool(flipped) and all(np.isclose(got[k], reference[k]) for k in reference
                                 if k not in flipped)


ex1_1 = Exercise(
    "1.1",
    reads={name: number for name in ("q1", "z1", "f1", "df1_dw", "df1_dx", "df1_db")},
    reference=_f_by_parts,
    passed="f = {f1:g}; df/dw = {df1_dw:g}, df/dx = {df1_dx:g}, df/db = {df1_db:g}: "
           "the square sends 2z back, add distributes it, mul switches.",
    expected="Each of q1, z1, f1 and the three gradients is one number (checked to 1e-6).",
    mistakes=(
        Mistake("your gradients are half the right ones: the square's local derivative is "
                "2z, not z.",
                gives=lambda: _f_by_parts(square_rule=lambda z: z ** 2 / 2)),
        Mistake("these are the local derivatives alone (dq/dw = x, ...): multiply each by "
                "the upstream gradient that reaches the node, 2z.",
                gives=_f_local_only),
        Mistake("df1_dw and df1_dx are swapped: a mul gate sends each input the upstream "
                "gradient times the OTHER input.",
                gives=_f_mul_keeps_own_input),
        Mistake("the gradients have the wrong sign: z = w·x + b is negative here, so 2z is "
                "too.",
                gives=_f_sign_flipped),
        Mistake("a gradient has the right size but the wrong sign: follow the signs along "
                "its path: 2z is negative here (z = w·x + b < 0), and a mul gate multiplies "
                "it by the OTHER input, which may be negative too.",
                when=_one_sign_slipped,
                example=lambda: {**_f_by_parts(), "df1_dw": -_f_by_parts()["df1_dw"]}),
    ),
)


# ------------------------------------------------------- 1.2: h = max(x·y, x + y), max routes
X2, Y2 = 3.0, 2.0


def _h_gradients(h):
    _, grads = _gradients(h, x=X2, y=Y2)
    return {"dh_dx": grads["x"], "dh_dy": grads["y"]}


def _swapped(gradients):
    return {"dh_dx": gradients["dh_dy"], "dh_dy": gradients["dh_dx"]}


ex1_2 = Exercise(
    "1.2",
    reads={"dh_dx": number, "dh_dy": number},
    reference=lambda: _h_gradients(lambda x, y: eg.maximum(x * y, x + y)),
    passed="dh/dx = {dh_dx:g} and dh/dy = {dh_dy:g}: max routes everything to x·y, "
           "whose mul gate switches.",
    expected="dh_dx and dh_dy are two numbers (checked to 1e-6).",
    mistakes=(
        Mistake("you followed the x + y branch, but x·y is the larger one: max routes the "
                "whole gradient to the input that won.",
                gives=lambda: _h_gradients(lambda x, y: x + y)),
        Mistake("you sent the gradient down both branches and added: that is what an add "
                "gate does. Max routes it to the winner only.",
                gives=lambda: _h_gradients(lambda x, y: x * y + (x + y))),
        Mistake("dh_dx and dh_dy are swapped: the mul gate gives each input the upstream "
                "gradient times the OTHER input.",
                gives=lambda: _swapped(_h_gradients(lambda x, y: eg.maximum(x * y, x + y)))),
    ),
)


# --------------------------------------------------- 1.3: a leaf used three times: branches sum
A3, B3 = 3.0, -1.0


def _g(a1, a2, a3, b):
    return (a1 + b) * a2 + a3          # g = (a + b)·a + a, with each use of a its own input


def _g_shares():
    """The three shares of a's gradient, one per use, and b's gradient."""
    _, grads = _gradients(_g, a1=A3, a2=A3, a3=A3, b=B3)
    return grads


def _g_reference():
    g = _g_shares()
    return {"dg_da": g["a1"] + g["a2"] + g["a3"], "dg_db": g["b"]}


def _misses_a_share(got, reference):
    g = _g_shares()
    shares = [g["a1"], g["a2"], g["a3"]]
    partial = shares + [shares[i] + shares[j] for i, j in ((0, 1), (0, 2), (1, 2))]
    return any(np.isclose(got["dg_da"], p) for p in partial)


ex1_3 = Exercise(
    "1.3",
    reads={"dg_da": number, "dg_db": number},
    reference=_g_reference,
    passed="dg/da = {dg_da:g} (three shares added) and dg/db = {dg_db:g}: branches sum.",
    expected="dg_da and dg_db are two numbers (checked to 1e-6).",
    mistakes=(
        Mistake("a is used three times in g, so three gradients flow back into it; your "
                "dg_da leaves at least one out. Branches sum: add every share.",
                when=_misses_a_share,
                example=lambda: {"dg_da": _g_shares()["a1"], "dg_db": _g_reference()["dg_db"]}),
        Mistake("dg_db is wrong: b only reaches g through the mul, which multiplies the "
                "upstream gradient by its OTHER input, a.",
                gives=lambda: {"dg_db": A3 + B3},
                example=lambda: {"dg_da": _g_reference()["dg_da"], "dg_db": A3 + B3}),
    ),
)


# ------------------------------------------------------- 1.4: a central finite difference
# (function, point, step): a cube and a sine, with steps large enough that a one-sided
# difference is visibly off
_PROBES = ((lambda t: t ** 3, 2.0, 1e-2), (np.sin, 0.5, 1e-2), (np.exp, -1.0, 1e-3))
_EXACT = (3 * 2.0 ** 2, np.cos(0.5), np.exp(-1.0))     # the probes' true slopes


def _exact_slopes(got, reference):
    """Slopes far closer to the true ones than the probes' steps allow: a step of its own."""
    return np.allclose(got["derivatives"], _EXACT, rtol=1e-6)


def _differences(derivative):
    return {"derivatives": tuple(derivative(fn, x, eps) for fn, x, eps in _PROBES)}


def _run_derivative(answer):
    numeric_derivative = answer["numeric_derivative"]
    values = []
    for fn, x, eps in _PROBES:
        value = numeric_derivative(fn, x, eps)
        values.append(number(value, f"numeric_derivative(fn, {x}, {eps})"))
    return {"derivatives": tuple(values)}


ex1_4 = Exercise(
    "1.4",
    reads={"numeric_derivative": function},
    run=_run_derivative,
    reference=lambda: _differences(lambda f, x, e: (f(x + e) - f(x - e)) / (2 * e)),
    passed="numeric_derivative matches the central difference on x³, sin and exp "
           "(to 1e-9): the error shrinks like ε².",
    expected="numeric_derivative(fn, x, eps) returns one number, the central difference "
             "of fn at x (checked on x³, sin and exp to 1e-9).",
    rtol=1e-9,
    mistakes=(
        Mistake("your numbers are twice the slope: the two points x - ε and x + ε are 2ε "
                "apart, so divide by 2ε, not ε.",
                gives=lambda: _differences(lambda f, x, e: (f(x + e) - f(x - e)) / e),
                example={"numeric_derivative": lambda f, x, e: (f(x + e) - f(x - e)) / e}),
        Mistake("this is the one-sided difference (f(x + ε) - f(x)) / ε: its error shrinks "
                "only like ε. Step to both sides, x - ε and x + ε.",
                gives=lambda: _differences(lambda f, x, e: (f(x + e) - f(x)) / e),
                example={"numeric_derivative": lambda f, x, e: (f(x + e) - f(x)) / e}),
        Mistake("this is the one-sided difference (f(x) - f(x - ε)) / ε: its error shrinks "
                "only like ε. Step to both sides, x - ε and x + ε, and divide by 2ε.",
                gives=lambda: _differences(lambda f, x, e: (f(x) - f(x - e)) / e),
                example={"numeric_derivative": lambda f, x, e: (f(x) - f(x - e)) / e}),
        Mistake("mind the brackets: `/ 2 * eps` divides by 2 and then multiplies by ε. "
                "Write `/ (2 * eps)`.",
                gives=lambda: _differences(lambda f, x, e: (f(x + e) - f(x - e)) / 2 * e),
                example={"numeric_derivative": lambda f, x, e: (f(x + e) - f(x - e)) / 2 * e}),
        Mistake("your numbers are the exact slopes, not the central differences with the "
                "step the check gives: use the argument eps (its steps are large on purpose).",
                when=_exact_slopes,
                example={"numeric_derivative":
                         lambda f, x, e: (f(x + 1e-6) - f(x - 1e-6)) / 2e-6}),
        Mistake("the sign is flipped: subtract the value at x - ε from the value at x + ε.",
                gives=lambda: _differences(lambda f, x, e: (f(x - e) - f(x + e)) / (2 * e)),
                example={"numeric_derivative":
                         lambda f, x, e: (f(x - e) - f(x + e)) / (2 * e)}),
    ),
)


# ------------------------------------------------------------------- 1.5: a node of your own
_POINTS = np.array([-1.5, -0.2, 0.0, 0.7, 2.0])
_UPSTREAM = np.array([1.0, -2.0, 0.5, 3.0, -1.0])     # not all ones: backward must use grad


def _cube_results(op_class):
    """What the op computes, and the gradient that backward() then gives x for the loss
    Σ upstream·cube(x), after checking that backward keeps the engine's contract."""
    _check_forward_returns_an_array(op_class, _POINTS, formula="x ** 3")
    op = op_class()
    x = eg.tensor(_POINTS, dtype=eg.float64, requires_grad=True)
    out = apply(op, x)
    with eg.no_grad():
        grads = op.backward(eg.tensor(_UPSTREAM), out, x)
    if not isinstance(grads, (tuple, list)):
        raise WrongForm("backward must return a tuple with one gradient per input, e.g. "
                        "`return (grad * ...,)` (mind the comma); it returned "
                        f"{type(grads).__name__}.")
    if len(grads) != 1:
        raise WrongForm(f"backward returned {len(grads)} gradients for an op with one input.")
    if not isinstance(grads[0], eg.Tensor):
        raise WrongForm("backward should build the gradient from the tensors it gets "
                        f"(grad * ...), not return a {type(grads[0]).__name__}: the engine "
                        "adds and reshapes tensors.")
    (out * eg.tensor(_UPSTREAM)).sum().backward()
    return {"forward": array(out, "forward(x)"), "backward": array(x.grad, "the gradient")}


def _run_cube(answer):
    op_class = _op_class(answer, "Cube")
    got = _cube_results(op_class)
    got["gradient check"] = _gradient_check(op_class, _POINTS)
    return got


def _op_class(answer, name):
    op_class = answer[name]
    if not (isinstance(op_class, type) and issubclass(op_class, eg.ops.base.Op)):
        raise WrongForm(f"{name} should be a class that subclasses Op (class {name}(Op): ...).")
    return op_class


def _check_forward_returns_an_array(op_class, *arrays, formula):
    """forward gets arrays and returns one. edugraph's functions (eg.pow...) there return a
    tensor, which the engine would wrap again and trip over much later, in another op."""
    value = op_class().forward(np, *(a.copy() for a in arrays))
    if not isinstance(value, np.ndarray):
        raise WrongForm(f"forward should return a numpy array computed from the arrays it "
                        f"gets ({formula}), not {describe(value)}" +
                        ("; edugraph's functions, which make tensors, belong in backward."
                         if isinstance(value, eg.Tensor) else "."))


def _gradient_check(op_class, *points):
    """Whether the node's backward agrees with central differences of its own forward
    (eg.gradcheck, section 8), at these points in float64."""
    inputs = tuple(eg.tensor(p, dtype=eg.float64, requires_grad=True) for p in points)
    return eg.gradcheck(lambda *args: apply(op_class(), *args), inputs, raise_exception=False)


class _RightCube(eg.ops.base.Op):
    name = "cube"

    def forward(self, xp, x):
        return x ** 3

    def backward(self, grad, out, x):
        return (grad * 3 * x * x,)


def _cube_with(backward):
    return type("Cube", (_RightCube,), {"backward": backward})


_ignores_upstream = _cube_with(lambda self, grad, out, x: (3 * x * x,))
_uses_output = _cube_with(lambda self, grad, out, x: (grad * 3 * out,))
_no_factor_three = _cube_with(lambda self, grad, out, x: (grad * x * x,))
_squares = type("Cube", (_RightCube,), {"forward": lambda self, xp, x: x ** 2})


def _results_of(op_class):
    return {**_cube_results(op_class), "gradient check": _gradient_check(op_class, _POINTS)}


ex1_5 = Exercise(
    "1.5",
    reads={"Cube": function},
    run=_run_cube,
    reference=lambda: _results_of(_RightCube),
    passed="your cube node computes x³ and its backward, upstream · 3x², passes "
           "eg.gradcheck.",
    expected="forward returns x ** 3 (an array, from the arrays it gets) and backward "
             "returns a tuple with the gradient for x, grad · 3x², made of tensor ops.",
    mistakes=(
        Mistake("backward ignores `grad`: a node multiplies the upstream gradient by its "
                "local derivative (the chain rule). Here the upstream is not all ones.",
                gives=lambda: _results_of(_ignores_upstream),
                example={"Cube": _ignores_upstream}),
        Mistake("backward uses `out` (that is x³) where the derivative needs x: d(x³)/dx "
                "= 3x².",
                gives=lambda: _results_of(_uses_output), example={"Cube": _uses_output}),
        Mistake("backward is off by a factor: d(x³)/dx = 3x², not x².",
                gives=lambda: _results_of(_no_factor_three),
                example={"Cube": _no_factor_three}),
        Mistake("forward does not compute x³: check it on a few numbers (x ** 3).",
                when=lambda got, ref: not np.allclose(got["forward"], ref["forward"]),
                example={"Cube": _squares}),
    ),
)


# ------------------------------------------------------------------------ 1.6: a tie at max
A6 = C6 = 2.0


def _tie_gradients():
    _, grads = _gradients(lambda a, c: 3 * eg.maximum(a, c), a=A6, c=C6)
    return {"dm_da": grads["a"], "dm_dc": grads["c"]}


def _tie_total():
    return sum(_tie_gradients().values())


ex1_6 = Exercise(
    "1.6",
    reads={"dm_da": number, "dm_dc": number},
    reference=_tie_gradients,
    passed="dm/da = {dm_da:g} and dm/dc = {dm_dc:g}: at a tie, edugraph and TensorFlow "
           "route the whole gradient to the first input.",
    expected="dm_da and dm_dc are two numbers (checked to 1e-6).",
    mistakes=(
        Mistake("half each is PyTorch's rule for torch.maximum at a tie; edugraph follows "
                "TensorFlow, whose max routes everything to one input. Which one?",
                gives=lambda: {"dm_da": _tie_total() / 2, "dm_dc": _tie_total() / 2}),
        Mistake("both inputs got the whole gradient: that is what an add gate does. A max "
                "routes the upstream gradient to ONE input, even at a tie.",
                gives=lambda: {"dm_da": _tie_total(), "dm_dc": _tie_total()}),
        Mistake("at a tie, edugraph and TensorFlow give the gradient to the FIRST input of "
                "maximum(a, c), not the second.",
                gives=lambda: {"dm_da": _tie_gradients()["dm_dc"],
                               "dm_dc": _tie_gradients()["dm_da"]}),
        Mistake("the gradients should add up to the upstream gradient of the max, which is "
                "3 (the factor in front of it), not 1.",
                when=lambda got, ref: np.isclose(got["dm_da"] + got["dm_dc"], 1.0),
                example={"dm_da": 1.0, "dm_dc": 0.0}),
    ),
)

# ------------------------------------------------------------ 1.7: a node with two inputs
# Numerators and denominators of both signs, no denominator near 0, every y different from
# every x (so that swapped gradients differ); an upstream that is not all ones.
_NUMERATORS = np.array([1.5, -2.0, 0.5, 3.0])
_DENOMINATORS = np.array([2.0, 4.0, -1.0, -0.5])
_UPSTREAM_7 = np.array([1.0, -0.5, 2.0, 1.5])


def _ratio_results(op_class):
    """What the node computes and the gradients backward() then gives x and y for the loss
    Σ upstream · ratio(x, y), after checking that backward keeps the engine's contract."""
    _check_forward_returns_an_array(op_class, _NUMERATORS, _DENOMINATORS, formula="x / y")
    x = eg.tensor(_NUMERATORS, dtype=eg.float64, requires_grad=True)
    y = eg.tensor(_DENOMINATORS, dtype=eg.float64, requires_grad=True)
    op = op_class()
    out = apply(op, x, y)
    with eg.no_grad():
        grads = op.backward(eg.tensor(_UPSTREAM_7), out, x, y)
    if not isinstance(grads, (tuple, list)):
        raise WrongForm("backward must return a tuple with one gradient per input, "
                        f"`return grad_x, grad_y`; it returned {type(grads).__name__}.")
    if len(grads) != 2:
        raise WrongForm(f"backward returned {len(grads)} gradient(s); x / y has two inputs, "
                        "so it returns two, `return grad_x, grad_y`.")
    for name, g in zip(("x", "y"), grads):
        if not isinstance(g, eg.Tensor):
            raise WrongForm(f"the gradient for {name} should be built from the tensors "
                            f"backward gets (grad / y...), not a {type(g).__name__}.")
    (out * eg.tensor(_UPSTREAM_7)).sum().backward()
    return {"forward": array(out, "forward(x, y)"), "grad_x": array(x.grad, "x's gradient"),
            "grad_y": array(y.grad, "y's gradient")}


def _run_ratio(answer):
    op_class = _op_class(answer, "Ratio")
    return {**_ratio_results(op_class),
            "gradient check": _gradient_check(op_class, _NUMERATORS, _DENOMINATORS)}


def _ratio_with(backward):
    return type("Ratio", (eg.ops.base.Op,), {
        "name": "ratio", "forward": lambda self, xp, x, y: x / y, "backward": backward})


_RightRatio = _ratio_with(lambda self, grad, out, x, y: (grad / y, -grad * x / (y * y)))
_ratio_sign = _ratio_with(lambda self, grad, out, x, y: (grad / y, grad * x / (y * y)))
_ratio_swapped = _ratio_with(lambda self, grad, out, x, y: (-grad * x / (y * y), grad / y))
_ratio_no_upstream = _ratio_with(lambda self, grad, out, x, y: (1 / y, -x / (y * y)))
_ratio_x_forgotten = _ratio_with(lambda self, grad, out, x, y: (grad / y, -grad / (y * y)))
_ratio_one_y = _ratio_with(lambda self, grad, out, x, y: (grad / y, -grad * x / y))
_ratio_reciprocals_rule = _ratio_with(
    lambda self, grad, out, x, y: (grad / y, -grad * out * out))
_ratio_upside_down = type("Ratio", (_RightRatio,), {"forward": lambda self, xp, x, y: y / x})


def _ratio_results_of(op_class):
    return _run_ratio({"Ratio": op_class})


def _ratio_reference():
    """What edugraph's own division computes, and the gradients its backward gives."""
    x = eg.tensor(_NUMERATORS, dtype=eg.float64, requires_grad=True)
    y = eg.tensor(_DENOMINATORS, dtype=eg.float64, requires_grad=True)
    out = x / y
    (out * eg.tensor(_UPSTREAM_7)).sum().backward()
    return {"forward": out.numpy(), "grad_x": x.grad.numpy(), "grad_y": y.grad.numpy(),
            "gradient check": True}


ex1_7 = Exercise(
    "1.7",
    reads={"Ratio": function},
    run=_run_ratio,
    reference=_ratio_reference,
    passed="your ratio node computes x / y, sends grad / y to x and −grad · x / y² to y, and "
           "passes eg.gradcheck.",
    expected="forward returns x / y; backward returns a tuple (grad_x, grad_y), the upstream "
             "gradient times ∂(x/y)/∂x and times ∂(x/y)/∂y, made of tensor ops (checked to "
             "1e-6).",
    mistakes=(
        Mistake("y's gradient has the wrong sign: x / y shrinks as y grows (for x > 0), so "
                "∂(x/y)/∂y = −x / y².",
                gives=lambda: _ratio_results_of(_ratio_sign), example={"Ratio": _ratio_sign}),
        Mistake("the two gradients are swapped: backward returns them in the order of "
                "forward's inputs, x's first, then y's.",
                gives=lambda: _ratio_results_of(_ratio_swapped),
                example={"Ratio": _ratio_swapped}),
        Mistake("backward ignores `grad`: each gradient is the upstream gradient times the "
                "local derivative (here the upstream is not all ones).",
                gives=lambda: _ratio_results_of(_ratio_no_upstream),
                example={"Ratio": _ratio_no_upstream}),
        Mistake("y's gradient lost its x: x / y = x · y⁻¹, and x stays a factor of the "
                "derivative, ∂(x/y)/∂y = −x · y⁻².",
                gives=lambda: _ratio_results_of(_ratio_x_forgotten),
                example={"Ratio": _ratio_x_forgotten}),
        Mistake("y's gradient needs y squared: the derivative of y⁻¹ is −y⁻², so "
                "∂(x/y)/∂y = −x / y².",
                gives=lambda: _ratio_results_of(_ratio_one_y),
                example={"Ratio": _ratio_one_y}),
        Mistake("y's gradient −grad · out² is the rule of section 8's 1/y, but out is x / y "
                "here: ∂(x/y)/∂y = −x / y², which is −out / y.",
                gives=lambda: _ratio_results_of(_ratio_reciprocals_rule),
                example={"Ratio": _ratio_reciprocals_rule}),
        Mistake("forward does not compute x / y (the first input over the second): check it "
                "on a few numbers.",
                when=lambda got, ref: not np.allclose(got["forward"], ref["forward"]),
                example={"Ratio": _ratio_upside_down}),
    ),
)

EXERCISES = [ex1_1, ex1_2, ex1_3, ex1_4, ex1_5, ex1_6, ex1_7]
