"""Lesson 9's exercises: three steps of backpropagation through time by hand; a finite-difference
check of one weight of the recurrent cell; the parameters of the recurrent layers; clipping
gradients by their global norm; the gradient through ``eg.while_loop``; clipping in a PyTorch
training step."""
import functools

import numpy as np

import edugraph as eg
from edugraph import nn
from edugraph.keras import layers

from .answers import WrongForm, array, close, describe, function, number, whole_number
from .checking import Exercise, Mistake


def _shows(variant, rtol=1e-4):
    """A mistake's predicate: some name of the answer has the value this mistake gives it,
    where that value differs from the right one (so a mistake in one name is seen even when
    the other names are right, or wrong in another way)."""
    def when(got, reference):
        wrong = variant()
        return any(not close(wrong[k], reference[k], rtol) and close(got[k], wrong[k], rtol)
                   for k in wrong)
    return when


# ---------------------------------------------------------- the lesson's arrays, drawn again
N_IN, N_H = 2, 3


@functools.lru_cache(maxsize=None)
def _lesson_arrays():
    """Section 1's x_seq, W and U and section 4's x_40, as the lesson draws them after
    np.random.seed(0) (section 2's x_long comes in between); b is zero."""
    rng = np.random.RandomState(0)
    x_seq = rng.randn(1, 4, N_IN).astype(np.float32)
    W = 0.5 * rng.randn(N_IN, N_H).astype(np.float32)
    U = 0.5 * rng.randn(N_H, N_H).astype(np.float32)
    rng.randn(1, 40, 4)                                     # x_long
    x_40 = rng.randn(1, 40, N_IN).astype(np.float32)
    for shared in (x_seq, W, U, x_40):                      # cached: nobody may change them
        shared.flags.writeable = False
    return x_seq, W, U, x_40


def _summed(h):
    return h.sum()


def _squared_length(h):            # section 1's loss
    return (h ** 2).sum()


def _mean(h):
    return h.mean()


def _bptt(x, steps, loss, wrt):
    """The gradient of loss(h_steps) for the cell of section 1 (float64), by backward()."""
    _, W, U, _ = _lesson_arrays()
    weights = {name: eg.tensor(value, dtype=eg.float64, requires_grad=True)
               for name, value in (("W", W), ("U", U))}
    xs = eg.tensor(x[:, :steps], dtype=eg.float64)
    h = eg.zeros((1, N_H), dtype=eg.float64)
    for t in range(steps):
        h = eg.tanh(eg.matmul(xs[:, t], weights["W"]) + eg.matmul(h, weights["U"]))
    loss(h).backward()
    return weights[wrt].grad.numpy()


# --------------------------------------------------------- 9.1: three steps of BPTT by hand
W1, U1, XS1 = 0.5, 1.5, (1.0, -1.0, 2.0)        # h_t = tanh(w·x_t + u·h_{t-1}), L = h_3²


def _scalar_rnn_gradients():
    w = eg.tensor(W1, dtype=eg.float64, requires_grad=True)
    u = eg.tensor(U1, dtype=eg.float64, requires_grad=True)
    h = eg.tensor(0.0, dtype=eg.float64)
    for x in XS1:
        h = eg.tanh(w * x + u * h)
    (h ** 2).backward()
    return {"dL_dw": w.grad.item(), "dL_du": u.grad.item()}


def _by_rules(into_h3=lambda h: 2 * h, slope=lambda h: 1 - h ** 2, slope_one_late=False,
              recurrent=U1, steps=(1, 2, 3), u_reads_step=-1):
    """dL_dw and dL_du by the rules of BPTT, with one rule changed to make a known mistake.

    delta[t] is the gradient that reaches step t's sum w·x_t + u·h_{t-1}: the gradient into
    h_t times tanh's slope at step t; one step back, it passes u and the slope of step t-1.
    """
    h = [0.0]
    for x in XS1:
        h.append(np.tanh(W1 * x + U1 * h[-1]))
    last = len(XS1)
    delta = {last: into_h3(h[last]) * slope(h[last])}
    for t in range(last, 1, -1):
        delta[t - 1] = delta[t] * recurrent * slope(h[t if slope_one_late else t - 1])
    return {"dL_dw": sum(delta[t] * XS1[t - 1] for t in steps),
            "dL_du": sum(delta[t] * h[t + u_reads_step] for t in steps)}


def _u_reads_the_inputs():
    right = _by_rules()
    return {**right, "dL_du": right["dL_dw"]}


def _mistake_9_1(hint, variant):
    return Mistake(hint, when=_shows(variant), example=variant)


ex9_1 = Exercise(
    "9.1",
    reads={"dL_dw": number, "dL_du": number},
    reference=_scalar_rnn_gradients,
    passed="dL/dw = {dL_dw:.4f} and dL/du = {dL_du:.4f}: one share per step, each step back "
           "through u and that step's tanh'.",
    expected="dL_dw and dL_du are two numbers (checked to 1e-4: compute them in Python, "
             "without rounding in between).",
    rtol=1e-4,
    mistakes=(
        # before the mistakes of one name: a swap also gives dL_du the value of dL_dw
        Mistake("the two values are swapped: dL_dw is w's gradient (its shares multiply the "
                "inputs x_t), dL_du is u's (its shares multiply the states h_{t-1}).",
                when=lambda got, ref: close(got["dL_dw"], ref["dL_du"], 1e-4)
                and close(got["dL_du"], ref["dL_dw"], 1e-4),
                example=lambda: {"dL_dw": _scalar_rnn_gradients()["dL_du"],
                                 "dL_du": _scalar_rnn_gradients()["dL_dw"]}),
        _mistake_9_1("that is step 3's share only. w and u are used at every step, so their "
                     "gradients sum one share per step (section 1: dL/dU = Σ_t ...): go back "
                     "to steps 2 and 1 too.",
                     lambda: _by_rules(steps=(3,))),
        _mistake_9_1("each step passes through a tanh, and the gradient through it is "
                     "multiplied by tanh's slope, 1 - h_t² (h_t = tanh(...)).",
                     lambda: _by_rules(slope=lambda h: 1.0)),
        _mistake_9_1("going back from step t to step t-1, the gradient passes u and then the "
                     "tanh of step t-1: its slope is 1 - h_{t-1}². Each step's slope is used "
                     "once, at its own step.",
                     lambda: _by_rules(slope_one_late=True)),
        _mistake_9_1("going back one step, the gradient passes the recurrence u·h_{t-1}: "
                     "multiply by u at every step back, not just by tanh's slope.",
                     lambda: _by_rules(recurrent=1.0)),
        _mistake_9_1("the loss is h_3², so the gradient that enters h_3 is 2·h_3, not 1.",
                     lambda: _by_rules(into_h3=lambda h: 1.0)),
        _mistake_9_1("every share is half the right one: the loss is h_3², whose derivative "
                     "is 2·h_3 (the 2 too), not h_3.",
                     lambda: _by_rules(into_h3=lambda h: h)),
        _mistake_9_1("u multiplies the previous state, so its share at step t is "
                     "δ_t·h_{t-1} (the state that went in), not δ_t·h_t.",
                     lambda: _by_rules(u_reads_step=0)),
        _mistake_9_1("dL_du equals dL_dw: you multiplied by the inputs x_t, which belong to "
                     "w. u multiplies the previous state: its share at step t is δ_t·h_{t-1}.",
                     _u_reads_the_inputs),
    ),
)


# ------------------------------------------- 9.2: check one entry of W by central differences
def _rnn_loss(W_value, U_value):
    """Section 1's loss, the squared length of h_4, in float64."""
    x_seq = _lesson_arrays()[0].astype(np.float64)
    W_value, U_value = np.asarray(W_value, np.float64), np.asarray(U_value, np.float64)
    h = np.zeros((1, N_H))
    for t in range(x_seq.shape[1]):
        h = np.tanh(x_seq[:, t] @ W_value + h @ U_value)
    return float((h ** 2).sum())


def _grad_probes():
    """(loss as a function of one matrix, that matrix, entry, eps): W and U of section 1.
    The first is shown next to backward()'s value; the larger steps make a one-sided
    difference visibly off."""
    _, W, U, _ = _lesson_arrays()
    W64, U64 = W.astype(np.float64), U.astype(np.float64)

    def loss_of_W(W_value):
        return _rnn_loss(W_value, U64)

    def loss_of_U(U_value):
        return _rnn_loss(W64, U_value)

    return ((loss_of_W, W64, (0, 1), 1e-4), (loss_of_W, W64, (1, 2), 1e-2),
            (loss_of_U, U64, (2, 0), 1e-2))


def _run_grad_entry(answer):
    numeric_grad_entry = answer["numeric_grad_entry"]
    values, kept, nearly_kept = [], True, True
    for loss_fn, weights, (i, j), eps in _grad_probes():
        given = weights.copy()
        value = numeric_grad_entry(loss_fn, given, i, j, eps)
        values.append(number(value, f"numeric_grad_entry(loss_fn, weights, {i}, {j}, {eps:g})"))
        kept = kept and np.array_equal(given, weights)
        nearly_kept = nearly_kept and np.allclose(given, weights, rtol=1e-12, atol=0)
    return {"derivatives": tuple(values), "weights kept": kept,
            "weights off by rounding only": nearly_kept and not kept}


def _differences(rule):
    """What a difference rule gives on the probes (each on a copy: the rule may nudge it)."""
    return {"derivatives": tuple(rule(loss_fn, weights.copy(), i, j, eps)
                                 for loss_fn, weights, (i, j), eps in _grad_probes()),
            "weights kept": True}


def _nudged(weights, i, j, step):
    nudged = weights.copy()
    nudged[i, j] += step
    return nudged


def _central(f, w, i, j, eps):
    return (f(_nudged(w, i, j, eps)) - f(_nudged(w, i, j, -eps))) / (2 * eps)


def _one_sided(f, w, i, j, eps):
    return (f(_nudged(w, i, j, eps)) - f(w)) / eps


def _nudges_in_place(f, w, i, j, eps):
    """Moves the caller's array, and does not put it back."""
    w[i, j] += eps
    up = f(w)
    w[i, j] -= 2 * eps
    return (up - f(w)) / (2 * eps)


def _nudges_and_moves_back(f, w, i, j, eps):
    """Moves the caller's array and back by arithmetic: w + eps - 2·eps + eps is not always
    exactly w."""
    w[i, j] += eps
    up = f(w)
    w[i, j] -= 2 * eps
    down = f(w)
    w[i, j] += eps
    return (up - down) / (2 * eps)


def _in_float32(f, w, i, j, eps):
    return _central(f, w.astype(np.float32), i, j, eps)


def _shares_one_array(got, reference):
    """The caller's array changed, or both nudges landed on one array (`up = weights`):
    then the two values are taken at the same point (0) or one of them at weights itself."""
    if not got["weights kept"]:
        return True
    aliased = _differences(lambda f, w, i, j, e: (f(_nudged(w, i, j, e)) - f(w)) / (2 * e))
    return close(got["derivatives"], (0.0,) * 3) or \
        close(got["derivatives"], aliased["derivatives"], rtol=1e-9)


def _backprop_dW01():
    return float(_bptt(_lesson_arrays()[0], 4, _squared_length, "W")[0, 1])


def _passed_9_2(shown):
    return (f"central differences of single entries of W and U, the weights left as they "
            f"were; dL/dW[0, 1] = {shown['derivatives'][0]:.6f}, and backward() through the "
            f"4 steps gives {_backprop_dW01():.6f}.")


ex9_2 = Exercise(
    "9.2",
    reads={"numeric_grad_entry": function},
    run=_run_grad_entry,
    reference=lambda: _differences(_central),
    passed=_passed_9_2,
    expected="numeric_grad_entry(loss_fn, weights, i, j, eps) returns one number, "
             "(loss_fn(weights with [i, j] + eps) - loss_fn(weights with [i, j] - eps)) / 2eps, "
             "and leaves weights as it was (checked on W and U of section 1, to 1e-6).",
    rtol=1e-6,
    mistakes=(
        Mistake("your weights[i, j] came back off by a rounding error: w + eps - 2·eps + eps "
                "is not always exactly w in floating point. Nudge copies (weights.copy()), or "
                "save the old value and put it back.",
                when=lambda got, reference: got["weights off by rounding only"]
                and close(got["derivatives"], reference["derivatives"], rtol=1e-6),
                example={"numeric_grad_entry": _nudges_and_moves_back}),
        Mistake("nudge a copy, not the array you were given: `up = weights` is another name "
                "for the same array, so weights[i, j] moved (or both nudges landed on one "
                "array). Use up = weights.copy().",
                when=_shares_one_array, example={"numeric_grad_entry": _nudges_in_place}),
        Mistake("your values are twice the slope: weights[i, j] - eps and weights[i, j] + eps "
                "are 2·eps apart, so divide by 2·eps.",
                gives=lambda: _differences(lambda f, w, i, j, e: 2 * _central(f, w, i, j, e)),
                example={"numeric_grad_entry":
                         lambda f, w, i, j, e: (f(_nudged(w, i, j, e))
                                                - f(_nudged(w, i, j, -e))) / e}),
        Mistake("this is the one-sided difference (L(w + eps) - L(w)) / eps; step to both "
                "sides of weights[i, j], to - eps and + eps.",
                gives=lambda: _differences(_one_sided),
                example={"numeric_grad_entry": _one_sided}),
        Mistake("you moved every entry of the matrix at once (weights + eps): that measures "
                "the sum of all the entries' gradients. Move only weights[i, j].",
                gives=lambda: _differences(lambda f, w, i, j, e: (f(w + e) - f(w - e)) / (2 * e)),
                example={"numeric_grad_entry":
                         lambda f, w, i, j, e: (f(w + e) - f(w - e)) / (2 * e)}),
        Mistake("the sign is flipped: subtract the loss at - eps from the loss at + eps.",
                gives=lambda: _differences(lambda f, w, i, j, e: -_central(f, w, i, j, e)),
                example={"numeric_grad_entry":
                         lambda f, w, i, j, e: -_central(f, w, i, j, e)}),
        Mistake("close, but not the central difference for this eps: use the eps you are "
                "given, and keep the weights in float64 (in a float32 copy, weights[i, j] "
                "± eps is rounded, and so is the difference).",
                when=lambda got, reference: close(got["derivatives"],
                                                  reference["derivatives"], rtol=1e-3),
                example={"numeric_grad_entry": _in_float32}),
    ),
)


# ----------------------------------------------- 9.3: the parameters of the recurrent layers
FEATURES3, UNITS3 = 5, 8
COUNTS = ("n_params_simple_rnn", "n_params_lstm", "n_params_gru", "n_params_torch_lstm")


class _ShapesOnlyLSTM(nn.LSTM):
    """nn.LSTM without its random initial values: counting needs the shapes only, and a
    check must not move the lesson's random stream."""

    def reset_parameters(self):
        pass


def _parameter_counts():
    """The layers' own weights, summed (zeros to start: nothing is drawn)."""
    counts = {}
    for name, make in (("n_params_simple_rnn", layers.SimpleRNN),
                       ("n_params_lstm", layers.LSTM), ("n_params_gru", layers.GRU)):
        layer = make(UNITS3, kernel_initializer="zeros", recurrent_initializer="zeros")
        layer(eg.zeros((1, 1, FEATURES3)))                  # builds the weights
        counts[name] = sum(w.size for w in layer.get_weights())
    torch_lstm = _ShapesOnlyLSTM(FEATURES3, UNITS3)
    counts["n_params_torch_lstm"] = sum(p.numpy().size for p in torch_lstm.parameters())
    return counts


def _counted(recurrent=True, bias_rows=(1, 1, 2, 2), blocks=(1, 4, 3, 4)):
    """The counts by the layout rule, blocks · units columns for each of the kernel
    (features rows), the recurrent kernel (units rows) and each bias row, with a part
    changed to make a known mistake."""
    rows = FEATURES3 + UNITS3 * recurrent
    return {name: n_blocks * UNITS3 * (rows + n_bias)
            for name, n_blocks, n_bias in zip(COUNTS, blocks, bias_rows)}


def _one_count(name, value):
    return lambda: {**_parameter_counts(), name: value}


def _mistake_9_3(hint, variant, example=None):
    return Mistake(hint, when=_shows(variant, rtol=0), example=example or variant)


ex9_3 = Exercise(
    "9.3",
    reads={name: whole_number for name in COUNTS},
    reference=_parameter_counts,
    passed="SimpleRNN {n_params_simple_rnn}, LSTM {n_params_lstm}, GRU {n_params_gru} and "
           "nn.LSTM {n_params_torch_lstm} parameters: a kernel, a recurrent kernel and biases, "
           "with one block of units columns per gate.",
    expected="Each of the four counts is a whole number, for layers that read 5 features and "
             "have 8 units.",
    mistakes=(
        _mistake_9_3("an LSTM has four blocks side by side, one per gate (i, f, g, o), in its "
                     "kernel, its recurrent kernel and its bias: four times a SimpleRNN's "
                     "columns.",
                     _one_count("n_params_lstm", _counted()["n_params_simple_rnn"])),
        _mistake_9_3("each gate also reads the previous state: the recurrent kernel is "
                     "(units, blocks·units), units × units numbers per block.",
                     lambda: _counted(recurrent=False),
                     example=_one_count("n_params_lstm",
                                        _counted(recurrent=False)["n_params_lstm"])),
        _mistake_9_3("count the biases too: one number per unit and block (and per bias "
                     "row).",
                     lambda: _counted(bias_rows=(0, 0, 0, 0)),
                     example=_one_count("n_params_simple_rnn",
                                        _counted(bias_rows=(0,) * 4)["n_params_simple_rnn"])),
        _mistake_9_3("Keras's GRU (reset_after=True, the default) keeps two bias rows, one "
                     "for the input's part and one for the state's: its bias is "
                     "(2, 3·units).",
                     _one_count("n_params_gru", _counted(bias_rows=(1, 1, 1, 2))["n_params_gru"])),
        _mistake_9_3("a GRU has three blocks (update z, reset r, candidate h), not four.",
                     _one_count("n_params_gru", _counted(blocks=(1, 4, 4, 4))["n_params_gru"])),
        _mistake_9_3("PyTorch's nn.LSTM keeps two biases, bias_ih_l0 and bias_hh_l0 "
                     "(section 3), each with four blocks: one more bias than Keras's LSTM.",
                     _one_count("n_params_torch_lstm", _counted()["n_params_lstm"])),
    ),
)


# ---------------------------------------------------- 9.4: clipping by the global norm
def _clip_probes():
    """Gradients shaped like W, U and b of section 1, of lengths 4, 9 and 0.5 (global norm
    √97.25 ≈ 9.86), clipped to 5 (U alone is above), to 1 (W and U alone are above) and
    to 20 (nothing to clip)."""
    rng = np.random.RandomState(9)
    grads = [rng.randn(*shape) for shape in ((N_IN, N_H), (N_H, N_H), (N_H,))]
    grads = [g * length / np.linalg.norm(g) for g, length in zip(grads, (4.0, 9.0, 0.5))]
    return [(grads, max_norm) for max_norm in (5.0, 1.0, 20.0)]


def _read_clipped(value, name, grads):
    """The student's clipped gradients as a tuple of arrays, one per gradient, each of its
    gradient's shape."""
    if value is None:
        raise WrongForm(f"{name} returned None: return the list of clipped gradients (is the "
                        "return statement missing?).")
    if isinstance(value, tuple) and len(value) == 2 and len(grads) != 2 and \
            np.ndim(value[1]) == 0:
        raise WrongForm(f"{name} returned two things, as tf.clip_by_global_norm does (the "
                        "list and the norm); return only the list of clipped gradients.")
    if not isinstance(value, (list, tuple)):
        raise WrongForm(f"{name} should return a list of arrays, one per gradient; it "
                        f"returned {describe(value)}.")
    if len(value) != len(grads):
        raise WrongForm(f"{name} returned {len(value)} arrays for {len(grads)} gradients: "
                        "return one clipped array per gradient, in their order.")
    clipped = tuple(array(v, f"{name}[{k}]") for k, v in enumerate(value))
    for k, (c, g) in enumerate(zip(clipped, grads)):
        if c.shape != g.shape:
            raise WrongForm(f"{name}[{k}] has shape {c.shape}; each clipped gradient keeps "
                            f"the shape of its gradient, {g.shape}.")
    return clipped


def _run_clip(answer):
    clip_gradients = answer["clip_gradients"]
    results = []
    for grads, max_norm in _clip_probes():
        value = clip_gradients([g.copy() for g in grads], max_norm)
        results.append(_read_clipped(value, f"clip_gradients(grads, {max_norm:g})", grads))
    return {"clipped": tuple(results)}


def _clipped_by(rule):
    """What a clipping rule gives on the probes."""
    return {"clipped": tuple(tuple(np.asarray(c, np.float64) for c in rule(grads, max_norm))
                             for grads, max_norm in _clip_probes())}


def _scaled(grads, max_norm, norm):
    return [g * min(1.0, max_norm / norm) for g in grads]


def _by_global_norm(grads, max_norm):
    """What TF's clip does: eg.clip_by_global_norm (tf.clip_by_global_norm)."""
    clipped, _ = eg.clip_by_global_norm(grads, max_norm)
    return [c.numpy() for c in clipped]


def _each_by_its_norm(grads, max_norm):
    return [_scaled([g], max_norm, np.linalg.norm(g))[0] for g in grads]


def _always_rescaled(grads, max_norm):
    norm = np.sqrt(sum(np.sum(g ** 2) for g in grads))
    return [g * max_norm / norm for g in grads]


def _norms_added(grads, max_norm):
    return _scaled(grads, max_norm, sum(np.linalg.norm(g) for g in grads))


def _no_square_root(grads, max_norm):
    return _scaled(grads, max_norm, sum(np.sum(g ** 2) for g in grads))


def _inverted(grads, max_norm):
    norm = np.sqrt(sum(np.sum(g ** 2) for g in grads))
    return [g * max(1.0, norm / max_norm) for g in grads]


def _by_value(grads, max_norm):
    return [np.clip(g, -max_norm, max_norm) for g in grads]


def _clip_mistake(hint, rule):
    return Mistake(hint, gives=lambda: _clipped_by(rule), example={"clip_gradients": rule})


def _passed_9_4(shown):
    (big, max_norm), *_ = _clip_probes()
    before = np.sqrt(sum(np.sum(g ** 2) for g in big))
    after = np.sqrt(sum(np.sum(c ** 2) for c in shown["clipped"][0]))
    return (f"gradients of global norm {before:.2f} come back with norm {after:.2f} "
            f"(max_norm = {max_norm:g}), all scaled by one factor, so the step keeps its "
            "direction; gradients under max_norm are left alone: as eg.clip_by_global_norm "
            "(tf.clip_by_global_norm) clips them.")


ex9_4 = Exercise(
    "9.4",
    reads={"clip_gradients": function},
    run=_run_clip,
    reference=lambda: _clipped_by(_by_global_norm),
    passed=_passed_9_4,
    expected="clip_gradients(grads, max_norm) returns a list of arrays, one per gradient and "
             "of its shape: all of them times max_norm / global_norm when the global norm is "
             "above max_norm, else unchanged (checked to 1e-6).",
    rtol=1e-6,          # PyTorch's max_norm / (norm + 1e-6), and float32, pass too
    mistakes=(
        _clip_mistake("you clipped each gradient by its own norm: that changes their ratios, "
                      "so the step turns. Compute one global norm over all of them and scale "
                      "them all by the same factor.",
                      _each_by_its_norm),
        _clip_mistake("gradients under max_norm came back changed: clip only when the global "
                      "norm is above max_norm (the factor is min(1, max_norm / norm)).",
                      _always_rescaled),
        _clip_mistake("the global norm is the length of all the gradients as one long "
                      "vector: the square root of the sum of the SQUARES of their norms, not "
                      "the sum of their norms.",
                      _norms_added),
        _clip_mistake("the global norm needs a square root: sqrt of the sum of squares, as "
                      "np.linalg.norm of one long vector.",
                      _no_square_root),
        _clip_mistake("your gradients grow: the factor is max_norm / global_norm (below 1 "
                      "when clipping), not its inverse.",
                      _inverted),
        _clip_mistake("this clips each entry to [-max_norm, max_norm] (clipping by value), "
                      "which changes the direction. Rescale the whole set by one factor, from "
                      "their global norm.",
                      _by_value),
    ),
)


# ------------------------------------------------ 9.5: the gradient through eg.while_loop
STEPS5 = 10


def _loop_gradient(steps=STEPS5, loss=_summed, wrt="W"):
    return {"dW_looped": _bptt(_lesson_arrays()[3], steps, loss, wrt)}


def _other_step_count(got, reference):
    return any(close(got["dW_looped"], _loop_gradient(steps)["dW_looped"], 1e-4, 1e-6)
               for steps in range(1, 41) if steps != STEPS5)


def _wrapped_in_a_list(got, reference):
    return close(got["dW_looped"], reference["dW_looped"][None], 1e-4, 1e-6)


ex9_5 = Exercise(
    "9.5",
    reads={"dW_looped": array},
    reference=_loop_gradient,
    passed="dL/dW through eg.while_loop over 10 steps = backpropagation through the 10 "
           "unrolled steps (to 1e-4): the graph runs the one loop body backwards, step by "
           "step.",
    expected="dW_looped is the value of the gradient, a numpy array of W's shape (2, 3) "
             "(checked to 1e-4).",
    rtol=1e-4,
    atol=1e-6,
    mistakes=(
        Mistake("eg.gradients returns a list, one gradient per tensor you asked about: take "
                "its only element (dW, = eg.gradients(...) or [0]).",
                when=_wrapped_in_a_list,
                example=lambda: {"dW_looped": [_loop_gradient()["dW_looped"]]}),
        Mistake("this is the gradient over another number of steps: the loop runs n_steps "
                "times, so feed n_steps = 10 with the first 10 steps of x_40.",
                when=_other_step_count, example=lambda: _loop_gradient(steps=40)),
        Mistake("this is the gradient for U, the state's weights (3 × 3); the exercise asks "
                "for W, the input's (2 × 3).",
                gives=lambda: _loop_gradient(wrt="U")),
        Mistake("this is W's gradient transposed: W is (n_in, n_h) = (2, 3), and so is its "
                "gradient.",
                gives=lambda: {"dW_looped": _loop_gradient()["dW_looped"].T}),
        Mistake("this is the gradient of section 1's loss, the squared length of h; here the "
                "loss is the plain sum of the final state, eg.reduce_sum(h).",
                gives=lambda: _loop_gradient(loss=_squared_length)),
        Mistake("this is the gradient of the mean over the 3 units; the loss is their sum, "
                "eg.reduce_sum(h).",
                gives=lambda: _loop_gradient(loss=_mean)),
    ),
)

# ------------------------------------------------ 9.6: clipping inside a PyTorch training step
MAX_NORM6, LR6 = 1.5, 0.1
W6 = np.array([[0.5, -0.3], [0.2, 0.8], [-0.6, 0.1]])     # the model's start: (3 in, 2 out)
B6 = np.array([0.1, -0.2])


def _batches6():
    """Two batches whose targets are far from the model's outputs (the gradients' total norm
    is above MAX_NORM6: clipping shortens these steps), then one whose targets are close (a
    short gradient, which clipping must leave alone)."""
    rng = np.random.RandomState(96)
    far = [(rng.randn(4, 3), 5 * rng.randn(4, 2)) for _ in range(2)]
    return far + [(rng.randn(4, 3), np.zeros((4, 2)))]


class _Linear(nn.Module):
    """A linear model x·W + b with a fixed start (a real nn.Linear would draw its start and
    move the lesson's random numbers)."""

    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(eg.tensor(W6))
        self.bias = nn.Parameter(eg.tensor(B6))

    def forward(self, x):
        return eg.matmul(x, self.weight) + self.bias


def _run_clipped_step(answer):
    """The student's step on each batch, with eg.optim.SGD: the weights after each step and
    the norms it returned."""
    clipped_step = answer["clipped_step"]
    net = _Linear()
    optimizer = eg.optim.SGD(net.parameters(), lr=LR6)
    weights, norms = [], []
    for k, (x, y) in enumerate(_batches6()):
        value = clipped_step(net, optimizer, eg.tensor(x), eg.tensor(y), MAX_NORM6)
        norms.append(number(value, f"clipped_step(...) at step {k + 1}"))
        weights.append(np.concatenate([net.weight.numpy().ravel(), net.bias.numpy().ravel()]))
    return {"weights": tuple(weights), "norms": tuple(norms)}


def _steps(clip="global", zero_grad=True, reduce=np.mean, norm_after=False,
           returns_loss=False):
    """The SGD steps in numpy, with the gradients clipped as ``clip`` says ("global": by
    their total norm, as clip_grad_norm_ does; "each": each by its own norm; "value": each
    entry; "always": to max_norm even when shorter; None: not at all), and one rule changed
    to make a known mistake."""
    W, b = W6.copy(), B6.copy()
    grad_W, grad_b = np.zeros_like(W), np.zeros_like(b)
    weights, norms = [], []
    for x, y in _batches6():
        error = 2 * (x @ W + b - y) / (y.size if reduce is np.mean else 1)   # dL/d output
        if not zero_grad:                       # .grad keeps the last step's (clipped) value
            grad_W, grad_b = grad_W + x.T @ error, grad_b + error.sum(0)
        else:
            grad_W, grad_b = x.T @ error, error.sum(0)
        norm = np.sqrt(np.sum(grad_W ** 2) + np.sum(grad_b ** 2))
        loss = reduce((x @ W + b - y) ** 2)
        if clip == "global":
            factor = min(1.0, MAX_NORM6 / (norm + 1e-6))
            grad_W, grad_b = grad_W * factor, grad_b * factor
        elif clip == "always":
            grad_W, grad_b = grad_W * MAX_NORM6 / norm, grad_b * MAX_NORM6 / norm
        elif clip == "each":
            grad_W, grad_b = (g * min(1.0, MAX_NORM6 / (np.linalg.norm(g) + 1e-6))
                              for g in (grad_W, grad_b))
        elif clip == "value":
            grad_W, grad_b = (np.clip(g, -MAX_NORM6, MAX_NORM6) for g in (grad_W, grad_b))
        W, b = W - LR6 * grad_W, b - LR6 * grad_b
        weights.append(np.concatenate([W.ravel(), b]))
        norms.append(loss if returns_loss else min(norm, MAX_NORM6) if norm_after else norm)
    return {"weights": tuple(weights), "norms": tuple(norms)}


def _same_weights_as(**rule):
    """A mistake's predicate on the weights alone (the norms it returns may be anything)."""
    return lambda got, reference: close(got["weights"], _steps(**rule)["weights"])


def _unmoved(got, reference):
    start = np.concatenate([W6.ravel(), B6])
    return all(close(w, start) for w in got["weights"])


def _mean_squared_error(net, x, y):
    return ((net(x) - y) ** 2).mean()


def _clip_after_step(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    _mean_squared_error(net, x, y).backward()
    optimizer.step()
    return nn.utils.clip_grad_norm_(net.parameters(), max_norm).item()


def _clip_each(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    _mean_squared_error(net, x, y).backward()
    norms = [nn.utils.clip_grad_norm_([p], max_norm) for p in net.parameters()]
    optimizer.step()
    return eg.sqrt(sum(n ** 2 for n in norms)).item()


def _clip_values(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    _mean_squared_error(net, x, y).backward()
    norm = eg.sqrt(sum((p.grad ** 2).sum() for p in net.parameters())).item()
    nn.utils.clip_grad_value_(net.parameters(), max_norm)
    optimizer.step()
    return norm


def _rescale_always(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    _mean_squared_error(net, x, y).backward()
    norm = eg.sqrt(sum((p.grad ** 2).sum() for p in net.parameters()))
    for p in net.parameters():
        p.grad = p.grad * (max_norm / norm)
    optimizer.step()
    return norm.item()


def _norm_after(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    _mean_squared_error(net, x, y).backward()
    nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    optimizer.step()
    return eg.sqrt(sum((p.grad ** 2).sum() for p in net.parameters())).item()


def _returns_the_loss(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    loss = _mean_squared_error(net, x, y)
    loss.backward()
    nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    optimizer.step()
    return loss.item()


def _summed_loss(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    ((net(x) - y) ** 2).sum().backward()
    norm = nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    optimizer.step()
    return norm.item()


def _no_zero_grad(net, optimizer, x, y, max_norm):
    _mean_squared_error(net, x, y).backward()
    norm = nn.utils.clip_grad_norm_(net.parameters(), max_norm)
    optimizer.step()
    return norm.item()


def _no_step(net, optimizer, x, y, max_norm):
    optimizer.zero_grad()
    _mean_squared_error(net, x, y).backward()
    return nn.utils.clip_grad_norm_(net.parameters(), max_norm).item()


def _passed_9_6(shown):
    long_1, long_2, short = shown["norms"]
    return (f"each step read the clipped gradients: total norms {long_1:.2f} and {long_2:.2f} "
            f"scaled down to max_norm = {MAX_NORM6:g}, {short:.2f} left alone, every step in "
            "its gradient's own direction.")


ex9_6 = Exercise(
    "9.6",
    reads={"clipped_step": function},
    run=_run_clipped_step,
    reference=_steps,
    passed=_passed_9_6,
    expected="clipped_step(net, optimizer, x, y, max_norm) makes one step (zero_grad, the mean "
             "squared error, backward, clip_grad_norm_, step) and returns the total norm "
             "before clipping as a number; checked on three steps, the weights to 1e-6.",
    atol=1e-6,          # clipping by hand with TF's formula (no + 1e-6 in the norm) passes too
    mistakes=(
        Mistake("the step used the gradients as backward() left them: clip_grad_norm_ "
                "scales the .grad of the parameters in place, so call it after "
                "loss.backward() has written them and before optimizer.step() reads them.",
                when=_same_weights_as(clip=None),
                example={"clipped_step": _clip_after_step}),
        Mistake("each parameter's gradient was clipped by its own norm (that is Keras's "
                "clipnorm=): the step turns. Pass all the parameters to one call, "
                "clip_grad_norm_(net.parameters(), max_norm), so that one factor from their "
                "total norm scales them all.",
                when=_same_weights_as(clip="each"), example={"clipped_step": _clip_each}),
        Mistake("clip_grad_value_ clips each entry to [-max_norm, max_norm], which turns the "
                "step; clip_grad_norm_ scales all the gradients by one factor.",
                when=_same_weights_as(clip="value"), example={"clipped_step": _clip_values}),
        Mistake("the short gradient of the last step was stretched to max_norm: clip only "
                "a gradient that is longer than max_norm, by the factor "
                "min(1, max_norm / norm), as clip_grad_norm_ does.",
                gives=lambda: _steps(clip="always"),
                example={"clipped_step": _rescale_always}),
        Mistake("each step's gradient still holds the ones before: backward() adds to "
                ".grad. Call optimizer.zero_grad() at the start of each step.",
                gives=lambda: _steps(zero_grad=False),
                example={"clipped_step": _no_zero_grad}),
        Mistake("the steps are right, but return the norm clip_grad_norm_ returns, the one "
                "before clipping: after clipping it is never above max_norm, so it would hide "
                "the explosions you want to see.",
                gives=lambda: _steps(norm_after=True), example={"clipped_step": _norm_after}),
        Mistake("the steps are right, but you returned the loss: return the total norm of the "
                "gradients before clipping, which clip_grad_norm_ returns.",
                gives=lambda: _steps(returns_loss=True),
                example={"clipped_step": _returns_the_loss}),
        Mistake("the norms are too large: the loss is the mean of the squared errors, not "
                "their sum, whose longer gradient is also clipped where the mean's is not.",
                gives=lambda: _steps(reduce=np.sum), example={"clipped_step": _summed_loss}),
        Mistake("the weights did not move: after clipping, call optimizer.step().",
                when=_unmoved, example={"clipped_step": _no_step}),
    ),
)

EXERCISES = [ex9_1, ex9_2, ex9_3, ex9_4, ex9_5, ex9_6]
