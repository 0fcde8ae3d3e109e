"""Elementwise maths. Each op: forward on arrays, backward in framework ops, side by side.

Binary ops broadcast; their backward returns gradients of the *broadcast* shape and the engine
reduces them to each input's shape in one place (``sum_to_shape``).
"""
import math
import numbers

import numpy as np

from .base import Op, apply, as_tensor, as_tensors, broadcast_rule_failure
from ..tensor import Tensor, _infer_dtype, as_dtype, float32


class Elementwise(Op):
    promotes_from = 0               # int tensor + float tensor computes in the float's dtype

    def explain_failure(self, shapes):
        return broadcast_rule_failure(self.name, shapes)


# ----------------------------------------------------------------------------- arithmetic
class Add(Elementwise):
    name, gate = "add", "distributes"

    def forward(self, xp, x, y):
        return x + y

    def backward(self, grad, out, x, y):
        return grad, grad                       # add distributes: both get the gradient


class AddN(Elementwise):
    """``tf.add_n``: the sum of n tensors in one node; it distributes like add."""

    name, gate = "add_n", "distributes"

    def forward(self, xp, *arrays):
        total = arrays[0]
        for array in arrays[1:]:
            total = total + array
        return total

    def backward(self, grad, out, *inputs):
        return (grad,) * len(inputs)


class Subtract(Elementwise):
    name, gate = "sub", "distributes"

    def forward(self, xp, x, y):
        return x - y

    def backward(self, grad, out, x, y):
        return grad, -grad if y.requires_grad else None


class Multiply(Elementwise):
    name, gate = "mul", "switches"

    def forward(self, xp, x, y):
        return x * y

    def backward(self, grad, out, x, y):
        grad_x = grad * y if x.requires_grad else None      # mul switches: each input gets
        grad_y = grad * x if y.requires_grad else None      # the upstream times the other
        return grad_x, grad_y


class Divide(Elementwise):
    name = "div"

    def forward(self, xp, x, y):
        return x / y

    def backward(self, grad, out, x, y):
        grad_y = -grad * out / y if y.requires_grad else None    # d(x/y)/dy = -x/y² = -out/y
        return grad / y if x.requires_grad else None, grad_y


class Negative(Op):
    name = "neg"

    def forward(self, xp, x):
        return -x

    def backward(self, grad, out, x):
        return (-grad,)


class Pow(Elementwise):
    name = "pow"

    def forward(self, xp, x, y):
        with np.errstate(divide="ignore", invalid="ignore"):   # 0 ** -1 = inf, as in PyTorch
            return x ** y

    def explain_failure(self, shapes):
        return broadcast_rule_failure(self.name, shapes, values_message=(
            f"pow on inputs of shapes {' and '.join(map(str, shapes))}: integers cannot be "
            "raised to negative integer powers (numpy's rule). Make the base a float first, "
            "e.g. eg.cast(x, eg.float32) ** y."))

    def backward(self, grad, out, x, y):
        # d(x^y)/dx = y x^(y-1), which is 0 where y = 0 (x^0 = 1 is flat), also at x = 0, as
        # in PyTorch: there the formula would read 0 · 0^(-1) = nan, so the base reads 1
        grad_x = grad * y * where(y == 0, 1.0, x) ** (y - 1)
        if not y.requires_grad:
            return grad_x, None
        # d(x^y)/dy = x^y · log x. At x = 0 with y >= 0, where x^y is flat in y, PyTorch and
        # TF give 0, not 0 · log 0 = nan: log x reads 0 there (log of a stand-in 1, which also
        # keeps nan out of second derivatives). With y < 0, x^y = inf and PyTorch's
        # inf · log 0 is -inf: log x reads -inf there, written so that numpy never computes
        # log 0 or inf · 0 (its warnings would reach the student).
        at_zero = x == 0
        log_at_zero = cast(where(y < 0, -math.inf, 0.0), x.dtype)
        log_x = where(at_zero, log_at_zero, log(where(at_zero, 1.0, x)))
        return grad_x, grad * out * log_x


class Square(Op):
    name = "square"

    def forward(self, xp, x):
        return x * x

    def backward(self, grad, out, x):
        return (grad * 2 * x,)


class Sqrt(Op):
    """At 0 the slope is infinite: a gradient of 0 from above gives 0 / 0 = nan there, as in
    PyTorch (TF's kernel gives 0, so ``where(x > 0, sqrt(x), 0)`` at 0 is nan here and in
    PyTorch, 0 in TF; a mask before the sqrt, ``sqrt(where(x > 0, x, 1))``, is safe in all)."""

    name = "sqrt"

    def forward(self, xp, x):
        return xp.sqrt(x)

    def backward(self, grad, out, x):
        return (grad / (2 * out),)


class Exp(Op):
    name = "exp"

    def forward(self, xp, x):
        return xp.exp(x)

    def backward(self, grad, out, x):
        return (grad * out,)                    # exp is its own derivative


class Log(Op):
    name = "log"

    def forward(self, xp, x):
        return xp.log(x)

    def backward(self, grad, out, x):
        return (grad / x,)


class Sin(Op):
    name = "sin"

    def forward(self, xp, x):
        return xp.sin(x)

    def backward(self, grad, out, x):
        return (grad * cos(x),)


class Cos(Op):
    name = "cos"

    def forward(self, xp, x):
        return xp.cos(x)

    def backward(self, grad, out, x):
        return (-grad * sin(x),)


class Abs(Op):
    name = "abs"

    def forward(self, xp, x):
        return xp.abs(x)

    def backward(self, grad, out, x):
        return (grad * sign(x),)


class Sign(Op):
    name, differentiable = "sign", False

    def forward(self, xp, x):
        return xp.sign(x)


class FloorDiv(Elementwise):
    """x // y, rounded towards -inf. Piecewise constant: no gradient flows (as in TensorFlow)."""

    name, differentiable = "floordiv", False

    def forward(self, xp, x, y):
        return xp.floor_divide(x, y)


class FloorMod(Elementwise):
    """x % y with the sign of y (Python's and TensorFlow's floormod; PyTorch's remainder)."""

    name = "floormod"

    def forward(self, xp, x, y):
        return xp.mod(x, y)

    def backward(self, grad, out, x, y):
        # x % y = x - floor(x / y) * y, and floor is flat almost everywhere
        return grad, -grad * floordiv(x, y)


# ----------------------------------------------------------------------------- routing ops
class Maximum(Elementwise):
    """Elementwise max. Ties go to the first input, as in TensorFlow."""

    name, gate = "maximum", "routes"

    def forward(self, xp, x, y):
        return xp.maximum(x, y)

    def backward(self, grad, out, x, y):
        x_wins = cast(x >= y, grad.dtype)       # max routes: the winner gets it all
        return grad * x_wins, grad * (1 - x_wins)


class Minimum(Elementwise):
    name, gate = "minimum", "routes"

    def forward(self, xp, x, y):
        return xp.minimum(x, y)

    def backward(self, grad, out, x, y):
        x_wins = cast(x <= y, grad.dtype)
        return grad * x_wins, grad * (1 - x_wins)


class Where(Elementwise):
    name, gate = "where", "routes"
    promotes_from = 1               # (the condition stays bool)

    def forward(self, xp, condition, x, y):
        return xp.where(condition, x, y)

    def backward(self, grad, out, condition, x, y):
        zero = grad * 0
        return None, where(condition, grad, zero), where(condition, zero, grad)


class Clip(Elementwise):
    """Limit values to [low, high]; the gradient passes only where the value was inside.

    A bound is a number (an attribute; None: no limit) or a tensor that broadcasts to x's
    shape, as in ``tf.clip_by_value``: then it is an input after x, marked ``"input"`` here,
    and it gets the gradient wherever it binds (a lower bound where x < low)."""

    name = "clip"

    def __init__(self, low, high):
        self.low, self.high = low, high

    def _bounds(self, bound_inputs):
        given = iter(bound_inputs)
        low = next(given) if self.low is BOUND_INPUT else self.low
        high = next(given) if self.high is BOUND_INPUT else self.high
        return low, high

    def forward(self, xp, x, *bound_inputs):
        out = xp.clip(x, *self._bounds(bound_inputs))
        if out.shape != x.shape:
            raise ValueError("a bound would change the clipped tensor's shape")
        # (tensor bounds arrive in x's dtype, promote_integers sees to it; a numpy scalar
        # bound, np.float64(0.5) or np.int64(1), would still widen float32 x)
        return out.astype(x.dtype, copy=False)

    def backward(self, grad, out, x, *bound_inputs):
        # PyTorch's rule, which agrees with the values also where low > high (then every
        # output is high, as clip is minimum(maximum(x, low), high)): x gets the gradient
        # where low <= x <= high, low where x < low < high, high where x > high or high < low.
        low, high = self._bounds(bound_inputs)
        inside = x == out if low is None or high is None else (x >= low) & (x <= high)
        grads = [grad * cast(inside, grad.dtype)]
        if self.low is BOUND_INPUT:
            binds = x < low if high is None else (x < low) & (low < high)
            grads.append(grad * cast(binds, grad.dtype))
        if self.high is BOUND_INPUT:
            binds = x > high if low is None else (x > high) | (high < low)
            grads.append(grad * cast(binds, grad.dtype))
        return tuple(grads)

    def explain_failure(self, shapes):
        return (f"clip: bounds of shapes {', '.join(map(str, shapes[1:]))} cannot clip a "
                f"tensor of shape {shapes[0]}: each bound must broadcast to that shape "
                "without changing it (compared from the right, each size equal or 1), as "
                "in tf.clip_by_value. Reshape the bound, or clip a broadcast copy of x.")


BOUND_INPUT = "input"


class Cast(Op):
    name = "cast"

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, xp, x):
        return x.astype(self.dtype)

    def backward(self, grad, out, x):
        return (cast(grad, x.dtype),) if x.dtype.kind == "f" else (None,)


# ----------------------------------------------------------------------------- comparisons
class Compare(Elementwise):
    differentiable = False
    promotes_from = None            # numpy compares an int and a float exactly as they are

    def __init__(self, name, ufunc):
        self.name, self.ufunc = name, ufunc

    def forward(self, xp, x, y):
        return getattr(xp, self.ufunc)(x, y)

    def attributes(self):
        return {}


def _compare(op_name, ufunc):
    def compare(x, y, name=None):
        return apply(Compare(op_name, ufunc), x, y, name=name)
    compare.__name__ = op_name
    compare.__doc__ = f"Elementwise ``{ufunc}`` (a bool tensor; no gradient)."
    return compare


less, less_equal = _compare("less", "less"), _compare("less_equal", "less_equal")
greater, greater_equal = _compare("greater", "greater"), _compare("greater_equal", "greater_equal")
equal, not_equal = _compare("equal", "equal"), _compare("not_equal", "not_equal")


class LogicalNot(Op):
    name, differentiable = "logical_not", False

    def forward(self, xp, x):
        return xp.logical_not(x)


# ----------------------------------------------------------------------------- functions
# The arithmetic ops have no attributes, so one instance of each serves every call: ``y + 1.0``
# in a loop makes no op object per step.
_ADD, _SUBTRACT, _MULTIPLY, _DIVIDE = Add(), Subtract(), Multiply(), Divide()


def add(x, y, name=None):
    """x + y (broadcasting). Backward: *add distributes* the gradient unchanged to both."""
    return apply(_ADD, x, y, name=name)


def add_n(inputs, name=None):
    """The sum of a list of tensors (``tf.add_n``); each gets the whole gradient."""
    if not inputs:
        raise ValueError("add_n needs a non-empty list of tensors to add.")
    return apply(AddN(), *inputs, name=name)


def subtract(x, y, name=None):
    return apply(_SUBTRACT, x, y, name=name)


def multiply(x, y, name=None):
    """x · y (broadcasting). Backward: *mul switches*: x gets grad·y, y gets grad·x."""
    return apply(_MULTIPLY, x, y, name=name)


def divide(x, y, name=None):
    """x / y, true division: integers give float32, as in PyTorch; next to a float they take
    its dtype (an int64 tensor / a float64 one is float64)."""
    if not (_is_float(x) or _is_float(y)):
        x, y = (to_float(t) for t in as_tensors((x, y)))   # (a number joins the tensor's device)
    return apply(_DIVIDE, x, y, name=name)


def divide_no_nan(x, y, name=None):
    """x / y, and 0 where y is 0 (``tf.math.divide_no_nan``): the mean of nothing, a slope at a
    kink. The division never sees a 0, so neither the value nor its gradient is NaN there."""
    nonzero = not_equal(y, 0)
    return where(nonzero, divide(x, where(nonzero, y, 1.0)), 0.0, name=name)


def _is_float(value):
    """A float tensor or array, a Python float, or a list holding one."""
    dtype = getattr(value, "dtype", None)
    return (dtype if dtype is not None else _infer_dtype(value)).kind == "f"


def negative(x, name=None):
    return apply(Negative(), x, name=name)


def pow(x, y, name=None):
    """x ** y; ``x ** 2`` uses the cheaper square (``int_tensor ** 2.0`` is float32, as in
    PyTorch: a float exponent makes the result a float)."""
    if isinstance(y, (int, float)) and not isinstance(y, bool) and y == 2:
        return square(to_float(x) if isinstance(y, float) else x, name=name)
    return apply(Pow(), x, y, name=name)


def square(x, name=None):
    return apply(Square(), x, name=name)


def sqrt(x, name=None):
    return apply(Sqrt(), to_float(x), name=name)


def exp(x, name=None):
    return apply(Exp(), to_float(x), name=name)


def log(x, name=None):
    return apply(Log(), to_float(x), name=name)


def sin(x, name=None):
    return apply(Sin(), to_float(x), name=name)


def cos(x, name=None):
    return apply(Cos(), to_float(x), name=name)


def abs(x, name=None):
    return apply(Abs(), x, name=name)


def sign(x, name=None):
    return apply(Sign(), x, name=name)


def maximum(x, y, name=None):
    """Elementwise max. Backward: *max routes* the gradient to the larger input only; at a
    tie the first input gets all of it (TF's rule, which exercise 1.6 teaches), where
    ``torch.maximum`` gives each input 0.5 of it."""
    return apply(Maximum(), x, y, name=name)


def minimum(x, y, name=None):
    """Elementwise min; at a tie the first input gets the whole gradient (TF's rule), where
    ``torch.minimum`` gives each input 0.5 of it."""
    return apply(Minimum(), x, y, name=name)


def where(condition, x, y, name=None):
    """``x`` where ``condition`` holds, else ``y``."""
    dtype = getattr(condition, "dtype", None)      # (lists of bools have none: fine)
    if dtype is not None and dtype.kind != "b":
        raise TypeError(f"where: the condition must be boolean, not {condition.dtype}; compare "
                        "first, e.g. eg.where(mask > 0, x, y) (as in TF and PyTorch).")
    return apply(Where(), condition, x, y, name=name)


def clip(x, min=None, max=None, name=None):
    """Limit to [min, max] (``tf.clip_by_value``, ``torch.clamp``); each bound is a number,
    None (no limit) or a tensor that broadcasts to x's shape."""
    if min is None and max is None:
        raise ValueError("clip needs at least one bound: clip(x, min=...) and/or max=...")
    if isinstance(min, float) or isinstance(max, float):
        x = to_float(x)     # clamp(int_tensor, 0.5, 3.5) computes in float32, as in PyTorch
    bound_inputs = [b for b in (min, max) if not _is_number(b)]
    op = Clip(*(b if _is_number(b) else BOUND_INPUT for b in (min, max)))
    return apply(op, x, *bound_inputs, name=name)


def _is_number(bound):
    return bound is None or isinstance(bound, numbers.Number)


clip_by_value = clip


def cast(x, dtype, name=None):
    dtype = as_dtype(dtype)
    if getattr(x, "dtype", None) == dtype:
        return x
    return apply(Cast(dtype), x, name=name)


def to_float(x):
    """Integer input to an op that only makes sense on reals (exp, log, /, mean...) becomes
    float32, as in PyTorch (numpy would silently compute in float64); so do lists of
    integers and Python ints."""
    if not isinstance(x, Tensor):
        x = as_tensor(x)
    if x.dtype.kind in "iub":
        return cast(x, float32)
    return x


def logical_not(x, name=None):
    """``~mask`` (``tf.logical_not``); the input must be boolean."""
    _check_boolean("logical_not", x)
    return apply(LogicalNot(), x, name=name)


def _logical(op_name):
    compare = _compare(op_name, op_name)

    def logical(x, y, name=None):
        _check_boolean(op_name, x, y)
        return compare(x, y, name=name)
    logical.__name__ = op_name
    logical.__doc__ = (f"Elementwise ``{op_name}`` of two boolean tensors (``mask & other``, "
                       "as in TF and PyTorch); no gradient.")
    return logical


logical_and, logical_or = _logical("logical_and"), _logical("logical_or")


def _check_boolean(op_name, *args):
    """TF's rule: logical ops take booleans. (PyTorch's ``&`` on integers is bitwise, numpy's
    logical_and reads any nonzero as true: either would be a silent surprise here.)"""
    for a in args:
        dtype = getattr(a, "dtype", None)
        if dtype is not None and dtype.kind != "b":
            raise TypeError(
                f"{op_name}: inputs must be boolean tensors, got one of dtype {dtype} and shape "
                f"{a.shape}. Compare first to make a mask (x > 0), or cast: "
                "eg.cast(x, eg.bool_).")


def floordiv(x, y, name=None):
    """x // y elementwise (``tf.math.floordiv``, ``torch.floor_divide``); no gradient."""
    return apply(FloorDiv(), x, y, name=name)


def floormod(x, y, name=None):
    """x % y elementwise, the result has y's sign (``tf.math.floormod``, ``torch.remainder``)."""
    return apply(FloorMod(), x, y, name=name)
