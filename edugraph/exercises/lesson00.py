"""The start page's warm-up: the chain rule, the shapes of a layer, a function on whole arrays.

They also show the three kinds of answer the lessons check: a number, a shape, a function.
"""
import numpy as np

import edugraph as eg

from .answers import WrongForm, array, function, number, shape
from .checking import Exercise, Mistake

# ------------------------------------------------------------------ 0.1: the chain rule
X1 = 2.0


def _derivative(y_of):
    """dy/dx at X1, by edugraph's backward pass."""
    x = eg.tensor(X1, dtype=eg.float64, requires_grad=True)
    y_of(x).backward()
    return {"dy_dx": x.grad.item()}


ex0_1 = Exercise(
    "0.1",
    reads={"dy_dx": number},
    reference=lambda: _derivative(lambda x: (3 * x + 1) ** 2),
    passed="dy/dx = {dy_dx:g}: the outer derivative 2(3x + 1), times the inner one, 3.",
    expected="dy_dx is one number (checked to 1e-6).",
    mistakes=(
        Mistake("you differentiated the square but not what is inside it: multiply by the "
                "derivative of 3x + 1 too (the chain rule).",
                gives=lambda: {"dy_dx": 2 * (3 * X1 + 1)}),
        Mistake("the derivative of u² is 2u: your answer misses the factor 2.",
                gives=lambda: _derivative(lambda x: (3 * x + 1) ** 2 / 2)),
        Mistake("that is the value of y at x = 2, not its derivative.",
                gives=lambda: {"dy_dx": (3 * X1 + 1) ** 2}),
    ),
)


# ------------------------------------------------------------- 0.2: the shapes of a layer
BATCH, FEATURES, OUTPUTS = 32, 64, 10


def _layer_shapes():
    """The shapes numpy itself gives: W maps the features to the outputs."""
    X = np.zeros((BATCH, FEATURES))
    W = np.zeros((FEATURES, OUTPUTS))
    b = np.zeros(OUTPUTS)
    return {"w_shape": W.shape, "out_shape": (X @ W + b).shape}


ex0_2 = Exercise(
    "0.2",
    reads={"w_shape": shape, "out_shape": shape},
    reference=_layer_shapes,
    passed="W is {w_shape}, so X @ W + b is {out_shape}: one row per example, one column "
           "per output.",
    expected="w_shape and out_shape are shapes with two sizes each, such as (2, 3).",
    mistakes=(
        Mistake("W is transposed: in X @ W, W's rows meet X's columns (the 64 features), "
                "and W has one column per output.",
                when=lambda got, ref: got["w_shape"] == ref["w_shape"][::-1],
                example={"w_shape": (OUTPUTS, FEATURES), "out_shape": (BATCH, OUTPUTS)}),
        Mistake("out_shape is transposed: the result keeps one row per example of X.",
                when=lambda got, ref: got["out_shape"] == ref["out_shape"][::-1],
                example={"w_shape": (FEATURES, OUTPUTS), "out_shape": (OUTPUTS, BATCH)}),
        Mistake("the bias b adds one number to each output; it does not change the shape of "
                "X @ W, which has one row per example.",
                when=lambda got, ref: got["out_shape"] in ((OUTPUTS,), (1, OUTPUTS)),
                example={"w_shape": (FEATURES, OUTPUTS), "out_shape": (OUTPUTS,)}),
    ),
)


# ---------------------------------------------------------- 0.3: a function on whole arrays
_POINTS = np.array([[-3.0, -0.5, 0.0], [0.25, 1.0, 4.0]])


def _sigmoid_values(sigmoid):
    return {"on an array": sigmoid(_POINTS.copy()), "on a number": sigmoid(0.5)}


def _run_sigmoid(answer):
    sigmoid = answer["sigmoid"]
    try:
        on_array = sigmoid(_POINTS.copy())
    except TypeError as e:
        if "scalar" in str(e) or "length-1" in str(e) or "real number" in str(e):
            raise WrongForm("sigmoid must work on a whole array at once: use np.exp, which "
                            "works elementwise (math.exp takes one number).") from None
        raise
    got = {"on an array": array(on_array, "sigmoid(an array)"),
           "on a number": number(sigmoid(0.5), "sigmoid(0.5)")}
    if got["on an array"].shape != _POINTS.shape:
        raise WrongForm(f"sigmoid(an array of shape {_POINTS.shape}) returned shape "
                        f"{got['on an array'].shape}; it should keep the input's shape "
                        "(one value per element).")
    return got


ex0_3 = Exercise(
    "0.3",
    reads={"sigmoid": function},
    run=_run_sigmoid,
    reference=lambda: _sigmoid_values(lambda t: 1 / (1 + np.exp(-t))),
    passed="sigmoid matches 1 / (1 + e^(-t)) on a number and elementwise on a 2×3 array.",
    expected="sigmoid(t) returns 1 / (1 + e^(-t)): a number for a number, an array of the "
             "same shape for an array (checked to 1e-6).",
    mistakes=(
        Mistake("your function gives 1 − σ(t) = σ(−t): check the sign in the exponent, "
                "e^(−t).",
                gives=lambda: _sigmoid_values(lambda t: 1 / (1 + np.exp(t))),
                example={"sigmoid": lambda t: 1 / (1 + np.exp(t))}),
        Mistake("mind the brackets: 1 / 1 + e^(−t) divides 1 by 1 first. Put the whole "
                "denominator in brackets.",
                gives=lambda: _sigmoid_values(lambda t: 1 / 1 + np.exp(-t)),
                example={"sigmoid": lambda t: 1 / 1 + np.exp(-t)}),
        Mistake("that is e^(−t) alone: the logistic function divides 1 by 1 + e^(−t).",
                gives=lambda: _sigmoid_values(lambda t: np.exp(-t)),
                example={"sigmoid": lambda t: np.exp(-t)}),
    ),
)

EXERCISES = [ex0_1, ex0_2, ex0_3]
