"""Lesson 5's exercises: a training step with backward(); two losses from one persistent tape;
a second derivative with nested tapes; predicting when eg.function traces; a branch inside a
traced graph with eg.cond written by hand; a Python while loop that AutoGraph turns into a
graph loop."""
import numpy as np

import edugraph as eg
from edugraph.errors import GradientError, NoValueError

from .answers import WrongForm, array, function, number
from .checking import Exercise, Mistake


def _returned(value, call):
    """What a student's function returned; None (a function without `return`) is said so,
    where a reader would only see nan."""
    if value is None:
        raise WrongForm(f"{call} returned None: end the function with `return ...`.")
    return value


# ----------------------------------------------------- 5.1: a training step with backward()
# Points on y = x² - 3x + 2; three steps from a = b = c = 0 show every kind of slip: the
# gradients that were not reset add up from step 2 on.
QUAD_X = np.linspace(-2, 2, 21).astype(np.float32)
QUAD_Y = (QUAD_X ** 2 - 3 * QUAD_X + 2).astype(np.float32)
QUAD_LR, QUAD_STEPS, QUAD_FIT_STEPS = 0.05, 3, 200


def _quadratic_step(params, x, y, lr, reduce="mean", resets=True, direction=-1.0):
    """edugraph's step, PyTorch's way; the keywords make the mistakes: the loss summed,
    gradients kept, a step uphill."""
    a, b, c = params
    squares = (a * x ** 2 + b * x + c - y) ** 2
    loss = squares.mean() if reduce == "mean" else squares.sum()
    loss.backward()
    with eg.no_grad():
        for p in params:
            p += direction * lr * p.grad
            if resets:
                p.grad.zero_()
    return loss.item()


def _rebinds(params, x, y, lr):
    """The update written `p = p - lr * p.grad`: a new tensor, the parameter unchanged."""
    a, b, c = params
    loss = ((a * x ** 2 + b * x + c - y) ** 2).mean()
    loss.backward()
    with eg.no_grad():
        for p in params:
            p = p - lr * p.grad
            p.grad.zero_()
    return loss.item()


def _swapped_features(params, x, y, lr):
    """A step whose model is a·x + b·x²: a and b trade places."""
    a, b, c = params
    return _quadratic_step([b, a, c], x, y, lr)


def _steps(step, num_steps=QUAD_STEPS):
    """The loss of each step and a, b, c after it, for ``step`` run from a = b = c = 0."""
    params = [eg.nn.Parameter(eg.tensor(0.0)) for _ in "abc"]
    x, y = eg.tensor(QUAD_X), eg.tensor(QUAD_Y)
    losses, after = [], []
    for _ in range(num_steps):
        try:
            loss = step(list(params), x, y, QUAD_LR)
        except AttributeError as e:
            # `p = p - lr * p.grad` rebinds p to a new tensor, which has no .grad to zero
            if "'NoneType' object has no attribute" in str(e) and \
                    all(p.item() == 0 for p in params):
                return {"rebound": True}
            raise
        loss = _returned(loss, "quadratic_step(params, x, y, lr)")
        losses.append(number(loss, "the loss quadratic_step returns"))
        after.append([p.item() for p in params])    # the parameters the check made
    return {"losses": np.array(losses), "params": np.array(after)}


def _quadratic_passed(shown):
    fit = _steps(shown["quadratic_step"], QUAD_FIT_STEPS)["params"][-1]
    losses = " → ".join(f"{v:.1f}" for v in shown["losses"])
    return (f"three steps match edugraph's, parameter by parameter (loss {losses}), and "
            f"{QUAD_FIT_STEPS} steps fit a, b, c = {fit[0]:.2f}, {fit[1]:.2f}, {fit[2]:.2f}.")


ex5_1 = Exercise(
    "5.1",
    reads={"quadratic_step": function},
    run=lambda answer: _steps(answer["quadratic_step"]),
    reference=lambda: _steps(_quadratic_step),
    passed=_quadratic_passed,
    expected="quadratic_step(params, x, y, lr) moves the three parameters in params by -lr "
             "times their gradient of the mean squared error and returns the loss as one "
             "number (checked over 3 steps, to 1e-4).",
    rtol=1e-4, atol=1e-6,
    mistakes=(
        Mistake("`p = p - lr * p.grad` makes a new tensor (with no .grad, hence the "
                "AttributeError) and only rebinds the name p: the parameter itself never "
                "changes. Update it in place, p -= lr * p.grad, under `with eg.no_grad():`, "
                "then p.grad.zero_().",
                when=lambda got, reference: got.get("rebound", False),
                example={"quadratic_step": _rebinds}),
        Mistake("the parameters never moved. Either `p = p - lr * p.grad` made a new "
                "tensor and only rebound the name p (change the parameter itself, in place: "
                "p -= lr * p.grad under `with eg.no_grad():`), or the gradient was zeroed "
                "before the update read it (zero it after the update).",
                when=lambda got, reference: np.all(got["params"] == 0),
                example={"quadratic_step": lambda params, x, y, lr: 1.0}),
        Mistake("step 1 is right, then the steps grow: backward() adds into .grad, so "
                "without a reset each step uses the sum of all the gradients so far. Zero "
                "them after the update: p.grad.zero_() (or p.grad = None).",
                gives=lambda: _steps(lambda *args: _quadratic_step(*args, resets=False)),
                example={"quadratic_step":
                         lambda *args: _quadratic_step(*args, resets=False)}),
        Mistake("the loss goes up: the gradient points uphill, so a descent step "
                "subtracts lr times the gradient.",
                gives=lambda: _steps(lambda *args: _quadratic_step(*args, direction=1.0)),
                example={"quadratic_step":
                         lambda *args: _quadratic_step(*args, direction=1.0)}),
        Mistake("your steps are 21 times too big: the loss is the MEAN of the squared "
                "errors (.mean()), not their sum.",
                gives=lambda: _steps(lambda *args: _quadratic_step(*args, reduce="sum")),
                example={"quadratic_step":
                         lambda *args: _quadratic_step(*args, reduce="sum")}),
        Mistake("a, b and c are right after every step, but the returned loss is not: "
                "return the loss this step computed (before the update), as a number.",
                when=lambda got, reference: np.allclose(got["params"], reference["params"],
                                                        rtol=1e-4, atol=1e-6),
                example={"quadratic_step": lambda *args: _quadratic_step(*args) / 2}),
        Mistake("a, b and c are off from the first step on: check the model, a·x² + b·x + c "
                "(a goes with x²), the loss (the mean of the squared errors) and the update "
                "(lr times the gradient).",
                when=lambda got, reference: not np.allclose(
                    got["params"][0], reference["params"][0], rtol=1e-4, atol=1e-6),
                example={"quadratic_step": _swapped_features}),
    ),
)


# ------------------------------------------------------ 5.2: two losses, one persistent tape
# Residuals w·x - y of both signs and none zero, at two weights.
TWO_X = np.array([-2.0, -1.0, 0.5, 1.0, 2.0, 3.0], dtype=np.float32)
TWO_Y = np.array([1.2, -0.3, 2.1, 0.4, -1.1, 2.6], dtype=np.float32)
TWO_WEIGHTS = (0.5, -1.5)


def _mse(prediction, y):
    return eg.reduce_mean(eg.square(prediction - y))


def _mae(prediction, y):
    return eg.reduce_mean(eg.abs(prediction - y))


def _abs_of_mean(prediction, y):
    return eg.abs(eg.reduce_mean(prediction - y))


def _sum_of_squares(prediction, y):
    return eg.reduce_sum(eg.square(prediction - y))


def _only_wrong(got, reference, column):
    """Whether only this column (0: the MSE's gradients, 1: the MAE's) is wrong."""
    right = [np.allclose(got["gradients"][:, i], reference["gradients"][:, i], rtol=1e-5,
                         atol=1e-6) for i in (0, 1)]
    return not right[column] and right[1 - column]


def _gradients_of(losses):
    """The gradient of each loss by w, at each weight of TWO_WEIGHTS, with one tape each."""
    rows = []
    for w0 in TWO_WEIGHTS:
        row = []
        for loss_of in losses:
            w = eg.Variable(w0, name="w")
            with eg.GradientTape() as tape:
                loss = loss_of(w * eg.tensor(TWO_X), eg.tensor(TWO_Y))
            row.append(tape.gradient(loss, w).item())
        rows.append(row)
    return {"gradients": np.array(rows)}


def _gradients_at(w, *losses):
    """A student's answer that computes these losses (for the mistakes' examples)."""
    with eg.GradientTape(persistent=True) as tape:
        prediction = w * eg.tensor(TWO_X)
        values = [loss_of(prediction, eg.tensor(TWO_Y)) for loss_of in losses]
    return tuple(tape.gradient(v, w) for v in values)


def _run_two_losses(answer):
    two_loss_gradients = answer["two_loss_gradients"]
    rows = []
    for w0 in TWO_WEIGHTS:
        call = f"two_loss_gradients(w, x, y) at w = {w0}"
        try:
            pair = two_loss_gradients(eg.Variable(w0, name="w"), eg.tensor(TWO_X),
                                      eg.tensor(TWO_Y))
        except GradientError as e:
            if "one set of gradients" not in str(e):
                raise
            raise WrongForm("a tape answers one gradient() call and then frees its "
                            "recording: make it eg.GradientTape(persistent=True) to ask "
                            "it twice.") from None
        pair = _returned(pair, call)
        if isinstance(pair, (np.ndarray, eg.Tensor)) and pair.shape == (2,):
            pair = list(pair)       # two numbers in one array will do too
        if isinstance(pair, (np.ndarray, eg.Tensor)) and pair.shape == ():
            raise WrongForm(f"{call} should return a pair (dmse_dw, dmae_dw); it returned "
                            "one number. (tape.gradient([mse, mae], w) gives one gradient, "
                            "that of mse + mae: ask the persistent tape once per loss.)")
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            shape = f" of shape {tuple(pair.shape)}" if hasattr(pair, "shape") else ""
            raise WrongForm(f"{call} should return a pair (dmse_dw, dmae_dw); it returned "
                            f"a {type(pair).__name__}{shape}.")
        if any(g is None for g in pair):
            raise WrongForm("a gradient is None: the tape only sees what runs inside its "
                            "`with` block, so compute the prediction and both losses there.")
        rows.append([number(g, f"a gradient returned by {call}") for g in pair])
    return {"gradients": np.array(rows)}


ex5_2 = Exercise(
    "5.2",
    reads={"two_loss_gradients": function},
    run=_run_two_losses,
    reference=lambda: _gradients_of((_mse, _mae)),
    passed=lambda got: ("dMSE/dw and dMAE/dw from one forward pass (at w = 0.5: "
                        f"{got['gradients'][0, 0]:.3f} and {got['gradients'][0, 1]:.3f}): "
                        "a persistent tape answers twice."),
    expected="two_loss_gradients(w, x, y) returns a pair of numbers, the gradients by w of "
             "the mean squared error and of the mean absolute error of w·x against y "
             "(checked at two weights, to 1e-5).",
    rtol=1e-5, atol=1e-6,
    mistakes=(
        Mistake("the pair is the wrong way round: first the mean squared error's gradient, "
                "then the mean absolute error's.",
                gives=lambda: _gradients_of((_mae, _mse)),
                example={"two_loss_gradients": lambda w, x, y: _gradients_at(w, _mae, _mse)}),
        Mistake("both gradients are the same: ask the tape once for each loss, "
                "tape.gradient(mse, w) and tape.gradient(mae, w).",
                when=lambda got, reference: np.allclose(got["gradients"][:, 0],
                                                         got["gradients"][:, 1]),
                example={"two_loss_gradients": lambda w, x, y: _gradients_at(w, _mse, _mse)}),
        Mistake("dmse_dw is right but dmae_dw is not: the mean absolute error is the mean "
                "of the absolute errors, eg.reduce_mean(eg.abs(y_hat - y)).",
                when=lambda got, reference: _only_wrong(got, reference, column=1),
                example={"two_loss_gradients":
                         lambda w, x, y: _gradients_at(w, _mse, _abs_of_mean)}),
        Mistake("dmae_dw is right but dmse_dw is not: the mean squared error is the mean "
                "of the squared errors, eg.reduce_mean(eg.square(y_hat - y)).",
                when=lambda got, reference: _only_wrong(got, reference, column=0),
                example={"two_loss_gradients":
                         lambda w, x, y: _gradients_at(w, _sum_of_squares, _mae)}),
    ),
)


# ------------------------------------------------ 5.3: a second derivative with nested tapes
# (function, point): the sigmoid where the lesson's old exercise asked, then functions whose
# second derivative no formula for σ gives. None has f' = f'' at its point.
_PROBES = ((eg.sigmoid, 0.0), (eg.sigmoid, 2.0), (eg.sigmoid, -1.0),
           (lambda t: t ** 3, -1.5), (lambda t: t * eg.sin(t), 1.0), (eg.tanh, 0.5))
_NUM_SIGMOID_PROBES = 3


def _derivatives(order):
    """f' (order 1) or f'' (order 2) at each probe, by edugraph in float64."""
    values = []
    for fn, t0 in _PROBES:
        t = eg.tensor(t0, dtype=eg.float64, requires_grad=True)
        (d1,) = eg.grad([fn(t)], [t], create_graph=True)
        values.append(d1.item() if order == 1 else eg.grad([d1], [t])[0].item())
    return {"second derivatives": np.array(values)}


def _sigmoid_formula(fn, t):
    """σ'' = σ(1 - σ)(1 - 2σ), whatever fn is: right for the sigmoid only."""
    s = 1 / (1 + np.exp(-t))
    return s * (1 - s) * (1 - 2 * s)


def _first_derivative(fn, t):
    t = eg.Variable(t)
    with eg.GradientTape() as tape:
        y = fn(t)
    return tape.gradient(y, t)


def _run_second_derivative(answer):
    second_derivative = answer["second_derivative"]
    values = []
    for fn, t0 in _PROBES:
        call = f"second_derivative(fn, {t0})"
        try:
            value = second_derivative(fn, t0)
        except GradientError as e:
            hint = _tape_hint(str(e))
            if hint is None:
                raise
            raise WrongForm(hint) from None
        except (TypeError, AttributeError) as e:     # None.item(), float(None), None * 2
            if "NoneType" not in str(e):
                raise
            raise WrongForm(_NONE_HINT) from None
        if value is None:
            raise WrongForm(f"{call} returned None. If it has no `return` line, end it with "
                            f"one; if it returns a gradient, {_NONE_HINT}")
        values.append(number(value, f"what {call} returns"))
    return {"second derivatives": np.array(values)}


_NONE_HINT = ("a gradient came back None: a tape gives None for what it did not see used. "
              "Watch t (or make it an eg.Variable), and call inner.gradient inside the "
              "outer tape's `with` block, so that the outer tape records it.")


def _tape_hint(message):
    """The hint for a GradientError that nesting the tapes wrongly raises, or None."""
    if "one set of gradients" in message:
        return ("you asked one tape twice: the inner tape gives dy/dt, then the OUTER tape, "
                "which recorded that computation, gives its gradient.")
    if "does not require grad" in message:
        return ("the first derivative was not recorded, so it cannot be differentiated: "
                "with eg.grad pass create_graph=True; with tapes, call inner.gradient "
                "inside the outer tape's `with` block.")
    return None         # another error: the checker names it and the student's line


def _second_passed(got):
    reference = _derivatives(2)["second derivatives"]
    return (f"second_derivative matches σ'', (t³)'', (t·sin t)'' and tanh'' (to 1e-5): "
            f"σ''(0) = {reference[0] + 0.0:.3f}, σ''(2) = {reference[1]:.3f}.")


ex5_3 = Exercise(
    "5.3",
    reads={"second_derivative": function},
    run=_run_second_derivative,
    reference=lambda: _derivatives(2),
    passed=_second_passed,
    expected="second_derivative(fn, t) returns one number, fn''(t), computed with two "
             "nested GradientTapes (checked on σ, t³, t·sin t and tanh, to 1e-5).",
    rtol=1e-5, atol=1e-6,
    mistakes=(
        Mistake("these are first derivatives: the inner tape gives dy/dt; the second "
                "derivative is the OUTER tape's gradient of dy/dt, not of y.",
                gives=lambda: _derivatives(1),
                example={"second_derivative": _first_derivative}),
        Mistake("right for the sigmoid only: a formula for σ'' cannot know fn. "
                "Differentiate fn itself, twice, with the nested tapes.",
                when=lambda got, reference: np.allclose(
                    got["second derivatives"][:_NUM_SIGMOID_PROBES],
                    reference["second derivatives"][:_NUM_SIGMOID_PROBES], atol=1e-5),
                example={"second_derivative": _sigmoid_formula}),
    ),
)


# ------------------------------------------------------------ 5.4: predict the traces
# The calls, exactly as the prompt shows them (a test checks that it does).
SHIFT_CALLS = (
    "shift(eg.tensor([1.0, 2.0]), 1.0)",
    "shift(eg.tensor([5.0, 6.0]), 1.0)",
    "shift(eg.tensor([1.0, 2.0]), 2.0)",
    "shift(eg.tensor([1.0, 2.0, 3.0]), 1.0)",
    "shift(eg.tensor([1.0, 2.0]), eg.tensor(1.0))",
    "shift(eg.tensor([3.0, 4.0]), eg.tensor(5.0))",
    "shift(eg.tensor([1.0, 2.0], dtype=eg.float64), 1.0)",
    "shift(eg.tensor([7.0, 8.0]), 2.0)",
)


def _traced_counts():
    """The tracing count after each call, as eg.function counts it."""
    shift = eg.function(lambda v, k: v + k)
    counts = []
    for call in SHIFT_CALLS:
        eval(call, {"eg": eg, "shift": shift})
        counts.append(shift.experimental_get_tracing_count())
    return {"predicted_traces": np.array(counts, dtype=float)}


def _counts_if(python_values=True, shapes=True, dtypes=True, tensor_values=False,
               keeps_all=True):
    """The counts a student predicts who believes these rules: what of a call's arguments
    picks its trace, and whether all traces are kept or only the last one."""
    def signature(args):
        return tuple(("tensor", a.shape if shapes else None, a.dtype if dtypes else None,
                      a.numpy().tobytes() if tensor_values else None)
                     if isinstance(a, eg.Tensor) else
                     ("python", type(a), a if python_values else None) for a in args)
    seen, counts, previous = set(), [], None
    for call in SHIFT_CALLS:
        key = signature(eval(call, {"eg": eg, "shift": lambda *args: args}))
        traces = counts[-1] if counts else 0
        if (key not in seen) if keeps_all else (key != previous):
            traces += 1
        seen.add(key)
        previous = key
        counts.append(traces)
    return {"predicted_traces": np.array(counts, dtype=float)}


def _trace_counts(value, name):
    """A list (or array) of one whole number per call."""
    wanted = len(SHIFT_CALLS)
    if not isinstance(value, (list, tuple, np.ndarray, eg.Tensor)):
        raise WrongForm(f"{name} should be a list of {wanted} whole numbers, one count per "
                        f"call, e.g. [1, 1, 2, ...]; it is a {type(value).__name__}.")
    counts = array(value, name)
    if counts.shape != (wanted,):
        raise WrongForm(f"{name} should hold {wanted} counts, one per call; it has shape "
                        f"{counts.shape}.")
    if not np.all(counts == np.round(counts)) or np.any(counts < 0):
        raise WrongForm(f"{name} should hold whole numbers: how many traces there are after "
                        "each call.")
    return counts


def _passes_k_as_a_tensor(call):
    args = eval(call, {"eg": eg, "shift": lambda *args: args})
    return isinstance(args[1], eg.Tensor)


# The first call with k a tensor, after calls with k a Python number.
_TENSOR_K = next(i for i, call in enumerate(SHIFT_CALLS) if _passes_k_as_a_tensor(call))


def _tensor_k_like_a_number(got, reference):
    """Whether the prediction has no trace where k turns into a tensor (and edugraph has)."""
    counts, right = got["predicted_traces"], reference["predicted_traces"]
    return counts[_TENSOR_K] == counts[_TENSOR_K - 1] < right[_TENSOR_K]


def _not_a_count_sequence(got, reference):
    counts = got["predicted_traces"]
    steps = np.diff(counts)
    return counts[0] != 1 or not np.all((steps == 0) | (steps == 1))


ex5_4 = Exercise(
    "5.4",
    reads={"predicted_traces": _trace_counts},
    reference=_traced_counts,
    passed=lambda got: (f"{int(got['predicted_traces'][-1])} traces for "
                        f"{len(SHIFT_CALLS)} calls, as you predicted: a new Python value, "
                        "shape or dtype traces; new tensor values, and a signature seen "
                        "before, reuse a graph."),
    expected=f"predicted_traces holds {len(SHIFT_CALLS)} whole numbers: the tracing count "
             "after each call, in order.",
    mistakes=(
        Mistake("a count goes up by at most 1 per call (a call traces once or not at all), "
                "starts at 1 and never goes down.",
                when=_not_a_count_sequence,
                example={"predicted_traces": [1, 2, 3, 3, 2, 2, 3, 4]}),
        Mistake("not every call traces: a trace is picked by the arguments' signature, "
                "tensors by their shape and dtype (not their values), Python values by "
                "value. A call with a signature seen before reuses its graph.",
                gives=lambda: _counts_if(tensor_values=True)),
        Mistake("a new Python value traces again: a Python number is not fed, it is "
                "written into the graph as a constant.",
                gives=lambda: _counts_if(python_values=False)),
        Mistake("a tensor of a new shape traces again: the placeholders of a trace have the "
                "shapes it was traced with.",
                gives=lambda: _counts_if(shapes=False)),
        Mistake("a tensor of a new dtype traces again, as a new shape does: float64 "
                "placeholders are not float32 ones.",
                gives=lambda: _counts_if(dtypes=False)),
        Mistake("the last call has the signature of an earlier one: eg.function keeps every "
                "trace, not only the latest, and reuses it.",
                gives=lambda: _counts_if(keeps_all=False)),
        Mistake(f"call {_TENSOR_K + 1} passes k as a tensor where the calls before passed a "
                "Python number: a tensor is fed through a placeholder, a Python number is "
                "written into the graph, so the signatures differ.",
                when=_tensor_k_like_a_number,
                example={"predicted_traces": [1, 1, 2, 3, 3, 3, 4, 4]}),
    ),
)


# ---------------------------------------------------- 5.5: a branch in the graph, eg.cond
# Shape (4,), float32, no zeros (relu's kink): the mean is positive, negative and exactly 0
# (which is not > 0), and the elements' signs differ from the mean's.
COND_INPUTS = ((-0.5, 1.5, 2.0, -1.0), (1.0, -2.0, -0.5, -1.5), (1.5, -0.5, -2.0, 1.0))


def _cond_rule(square_if=lambda mean: mean > 0, swapped=False, cut=lambda t: t,
               autograph=False):
    """relu_or_square with these rules, traced as the prompt asks (``autograph=False``), for
    the reference and the mistakes (``cut=eg.stop_gradient``: a square whose gradient sees
    one factor only)."""
    def relu_or_square(v):
        square, relu = (lambda: v * cut(v)), (lambda: eg.nn.relu(v))
        if swapped:
            square, relu = relu, square
        return eg.cond(square_if(eg.reduce_mean(v)), square, relu)
    return eg.function(relu_or_square, autograph=autograph)


@eg.function(autograph=False)
def _per_element(v):
    return eg.where(v > 0, v * v, eg.nn.relu(v))


def _branch_results(relu_or_square):
    """Each input's output and the gradient of the output's sum, by a tape around the call."""
    outputs, gradients = [], []
    for values in COND_INPUTS:
        call = f"relu_or_square(eg.tensor({list(values)}))"
        v = eg.tensor(values)
        with eg.GradientTape() as tape:
            tape.watch(v)
            try:
                out = relu_or_square(v)
            except TypeError as e:
                if "as a Python `bool`" not in str(e):
                    raise
                raise WrongForm("a Python `if` cannot test a tensor while eg.function "
                                "traces with autograph=False: it has no value yet. Write "
                                "eg.cond(pred, true_fn, false_fn), which puts both branches "
                                "into the graph.") from None
            total = eg.reduce_sum(out) if isinstance(out, eg.Tensor) else None
        value = array(_returned(out, call), call)
        if value.shape != (len(values),):
            raise WrongForm(f"{call} should return a tensor of v's shape ({len(values)},); "
                            f"its result has shape {value.shape}.")
        gradient = tape.gradient(total, v) if total is not None and total.requires_grad \
            else None
        if gradient is None:
            raise WrongForm(f"no gradient flows back from {call} to v: build the result "
                            "from v with edugraph ops, not from numpy values.")
        outputs.append(value)
        gradients.append(array(gradient, "the gradient"))
    return {"outputs": np.array(outputs), "gradients": np.array(gradients)}


def _right_branches(got, reference):
    """Are the values and the gradients right (whatever else is wrong)?"""
    return np.allclose(got["outputs"], reference["outputs"], rtol=1e-6) and \
        np.allclose(got["gradients"], reference["gradients"], rtol=1e-6)


def _run_cond(answer):
    relu_or_square = answer["relu_or_square"]
    got = _branch_results(relu_or_square)   # first: a stub, not traced, is "not attempted"
    traced = isinstance(relu_or_square, eg.Function)
    graph_branch = traced and "If" in [
        op.type for op in relu_or_square.get_concrete_function(
            eg.tensor(COND_INPUTS[0])).graph.get_operations()]
    return {**got, "traced": traced, "cond by hand": traced and not relu_or_square.autograph,
            "graph branch": graph_branch}


def _both_computed(v):
    """eg.where on the one number mean > 0: the right values, both branches computed."""
    return eg.where(eg.reduce_mean(v) > 0, v * v, eg.nn.relu(v))


ex5_5 = Exercise(
    "5.5",
    reads={"relu_or_square": function},
    run=_run_cond,
    reference=lambda: {**_branch_results(_cond_rule()), "traced": True, "cond by hand": True,
                       "graph branch": True},
    passed="relu_or_square squares v when its mean is > 0 and applies relu otherwise, on 3 "
           "inputs, and the gradient flows through the branch that ran: your eg.cond put "
           "both branches into one traced graph, as an If node.",
    expected="relu_or_square(v) is an @eg.function(autograph=False) that returns v * v when "
             "eg.reduce_mean(v) > 0 and eg.nn.relu(v) otherwise, with eg.cond (checked on 3 "
             "inputs of shape (4,): the values and the gradient of their sum, to 1e-6).",
    mistakes=(
        Mistake("the branches are swapped: eg.cond(pred, true_fn, false_fn) runs true_fn "
                "when pred holds, and the square is for a positive mean.",
                gives=lambda: _branch_results(_cond_rule(swapped=True)),
                example={"relu_or_square": _cond_rule(swapped=True)}),
        Mistake("wrong at a mean of exactly 0: the square is for a mean > 0, so 0 takes "
                "the relu branch.",
                gives=lambda: _branch_results(_cond_rule(square_if=lambda mean: mean >= 0)),
                example={"relu_or_square": _cond_rule(square_if=lambda mean: mean >= 0)}),
        Mistake("you chose per element, as eg.where does: eg.cond picks ONE branch for the "
                "whole tensor, by the one number eg.reduce_mean(v) > 0.",
                gives=lambda: _branch_results(_per_element),
                example={"relu_or_square": _per_element}),
        Mistake("the values are right but the gradient is not: the result must stay "
                "connected to v through edugraph ops, with nothing cut off (detach, "
                "stop_gradient, numpy) inside the branches.",
                when=lambda got, reference: np.allclose(got["outputs"], reference["outputs"])
                and not np.allclose(got["gradients"], reference["gradients"]),
                example={"relu_or_square": _cond_rule(cut=eg.stop_gradient)}),
        Mistake("right values, but relu_or_square is not traced: put "
                "@eg.function(autograph=False) above its def, so that eg.cond builds one "
                "graph with both branches.",
                when=lambda got, reference: _right_branches(got, reference) and
                not got["traced"],
                example={"relu_or_square": _cond_rule().python_function}),
        Mistake("right values, but AutoGraph wrote the cond for you: keep "
                "@eg.function(autograph=False) as given, and write eg.cond(pred, true_fn, "
                "false_fn) yourself (5.6 is AutoGraph's turn).",
                when=lambda got, reference: _right_branches(got, reference) and
                not got["cond by hand"],
                example={"relu_or_square": _cond_rule(autograph=True)}),
        Mistake("right values, but the traced graph has no If node: eg.where (or arithmetic "
                "with the condition) computes both branches and picks afterwards. Write "
                "eg.cond(pred, true_fn, false_fn), which runs one branch.",
                when=lambda got, reference: _right_branches(got, reference) and
                got["cond by hand"] and not got["graph branch"],
                example={"relu_or_square": eg.function(autograph=False)(_both_computed)}),
    ),
)


# ------------------------------------------------- 5.6: a Python while loop, a graph loop
# Shape (3,), positive: the largest element needs 0, 2, 2 (exactly 4: a power of two, where
# `>= 1` halves once more) and 6 halvings; the sums need more than the largest elements.
HALVING_INPUTS = ((0.5, 0.25, 0.9), (3.0, 1.0, 0.5), (1.0, 4.0, 2.0), (40.0, 0.5, 0.5))


def _halving_rule(too_big=lambda v: eg.reduce_max(v) > 1, first_count=0):
    """count_halvings with these rules, for the reference and the mistakes: a Python while
    loop on a tensor, which AutoGraph turns into a graph loop."""
    def count_halvings(x):
        n = first_count
        while too_big(x):
            x = x / 2
            n += 1
        return n
    return eg.function(count_halvings)


def _run_halvings(answer):
    count_halvings = answer["count_halvings"]
    counts = []
    for values in HALVING_INPUTS:
        call = f"count_halvings(eg.tensor({list(values)}))"
        try:
            n = count_halvings(eg.tensor(values))
        except NoValueError:
            raise WrongForm("while eg.function traces, a tensor has no value, so .numpy() "
                            "(or float()) cannot read it. Compare tensors: while "
                            "eg.reduce_max(x) > 1: — AutoGraph makes it a graph loop.") from None
        except TypeError as e:
            if "as a Python `bool`" not in str(e):
                raise
            raise WrongForm("a Python `while` on a tensor needs AutoGraph: trace with "
                            "@eg.function (autograph is on unless you switch it off).") from None
        if getattr(n, "shape", ()) == (len(values),):
            raise WrongForm(f"{call} returned a tensor of x's shape ({len(values)},), the "
                            "halved x perhaps: return the count of halvings, one number.")
        counts.append(number(_returned(n, call), f"what {call} returns"))
    traced = isinstance(count_halvings, eg.Function)
    graph_loop = traced and "While" in [
        op.type for op in count_halvings.get_concrete_function(
            eg.tensor(HALVING_INPUTS[0])).graph.get_operations()]
    return {"counts": np.array(counts), "traced": traced, "graph loop": graph_loop}


def _unrolled_halvings(x):
    """Right counts for inputs below 2**10, from an unrolled Python loop: no graph loop."""
    n = eg.constant(0)
    for _ in range(10):
        n += eg.cast(eg.reduce_max(x) > 1, eg.int32)
        x = eg.where(eg.reduce_max(x) > 1, x / 2, x)
    return n


ex5_6 = Exercise(
    "5.6",
    reads={"count_halvings": function},
    run=_run_halvings,
    reference=lambda: _run_halvings({"count_halvings": _halving_rule()}),
    passed=lambda got: ("count_halvings gives " + ", ".join(str(int(n)) for n in got["counts"])
                        + " halvings on 4 inputs, from one trace per shape: AutoGraph turned "
                        "your while into a While node that counts when the graph runs."),
    expected="count_halvings(x) is an @eg.function with a Python `while` loop that halves x "
             "while its largest element is > 1 and returns how many halvings it made (checked "
             "on 4 positive inputs of shape (3,); its graph must hold a While node).",
    mistakes=(
        Mistake("one halving too many where the largest element is exactly a power of two: "
                "the loop goes on while the largest element is > 1; at exactly 1 it stops.",
                gives=lambda: _run_halvings({"count_halvings": _halving_rule(
                    too_big=lambda v: eg.reduce_max(v) >= 1)}),
                example={"count_halvings": _halving_rule(
                    too_big=lambda v: eg.reduce_max(v) >= 1)}),
        Mistake("every count is one too many: start the counter at 0 and add 1 per halving.",
                gives=lambda: _run_halvings({"count_halvings": _halving_rule(first_count=1)}),
                example={"count_halvings": _halving_rule(first_count=1)}),
        Mistake("the loop tests the sum: the largest element (eg.reduce_max) must be > 1.",
                gives=lambda: _run_halvings({"count_halvings": _halving_rule(
                    too_big=lambda v: eg.reduce_sum(v) > 1)}),
                example={"count_halvings": _halving_rule(
                    too_big=lambda v: eg.reduce_sum(v) > 1)}),
        Mistake("the loop tests the mean: the largest element (eg.reduce_max) must be > 1.",
                gives=lambda: _run_halvings({"count_halvings": _halving_rule(
                    too_big=lambda v: eg.reduce_mean(v) > 1)}),
                example={"count_halvings": _halving_rule(
                    too_big=lambda v: eg.reduce_mean(v) > 1)}),
        Mistake("right counts, but count_halvings is not traced: put @eg.function above its "
                "def, so that AutoGraph converts the while.",
                when=lambda got, reference: np.array_equal(got["counts"], reference["counts"])
                and not got["traced"],
                example={"count_halvings": _halving_rule().python_function}),
        Mistake("right counts, but the graph has no While node: a Python loop over "
                "range(...) is unrolled while tracing, and fixes how many steps there can be. "
                "Write `while <a tensor condition>:` so that the graph loops.",
                when=lambda got, reference: np.array_equal(got["counts"], reference["counts"])
                and got["traced"] and not got["graph loop"],
                example={"count_halvings": eg.function(_unrolled_halvings)}),
    ),
)

EXERCISES = [ex5_1, ex5_2, ex5_3, ex5_4, ex5_5, ex5_6]
