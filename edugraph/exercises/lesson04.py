"""Lesson 4's exercises: the largest stable learning rate on the parabola; momentum and Adam
written by hand so that they follow ``eg.train`` step for step; RMSProp's slots after two
steps.

The references run the real optimizers (``eg.train.*Optimizer``) in a graph, as the lesson's
``trajectory`` does. The known mistakes are the same rules written in numpy with one thing
changed, so each hint is earned by exactly the path that mistake produces. Paths are compared
over several steps: a rule that is right only at the first step fails.
"""
import numpy as np

import edugraph as eg

from .answers import WrongForm, array, function, number
from .checking import Exercise, Mistake


def _parabola(x):
    return 10 * x * x - 5 * x + 4


def _parabola_gradient(x):
    return 20 * x - 5


def _valley(p):
    return 0.05 * p[0] * p[0] + p[1] * p[1]


def _valley_gradient(p):
    return np.array([0.1 * p[0], 2 * p[1]])


def _bowl(p):
    """A tilted bowl that the lesson does not use: a path must follow the grad_fn it is given
    (an answer that ran the lesson's optimizer on the lesson's losses would not)."""
    return 0.3 * p[0] * p[0] + 0.2 * p[0] * p[1] + 0.5 * p[1] * p[1]


def _bowl_gradient(p):
    return np.array([0.6 * p[0] + 0.2 * p[1], 0.2 * p[0] + p[1]])


def _optimizer_path(optimizer, loss_fn, start, num_steps):
    """The parameter after 0, 1, ..., num_steps updates (the lesson's ``trajectory``)."""
    with eg.Graph().as_default():
        p = eg.Variable(np.array(start, np.float32), name="p")
        train = optimizer.minimize(loss_fn(p))
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            path = [sess.run(p)]
            for _ in range(num_steps):
                sess.run(train)
                path.append(sess.run(p))
    return np.array(path, dtype=np.float64)


def _read_path(value, call, num_steps, start, if_not_finite=None):
    """A returned path as a float64 array of the right shape; a path holding nan or inf
    earns ``if_not_finite`` where given (it says where such numbers come from)."""
    if if_not_finite is not None and not isinstance(value, eg.Tensor):
        try:
            numbers = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            numbers = None          # not made of numbers: array() below says so
        if numbers is not None and not np.isfinite(numbers).all():
            raise WrongForm(f"{call} holds nan or inf: {if_not_finite}")
    path = array(value, call)
    expected = (num_steps + 1,) + np.shape(start)
    if path.ndim != len(expected) or path.shape[1:] != expected[1:]:
        raise WrongForm(f"{call} should return the positions as an array of shape "
                        f"(num_steps + 1,) + start's shape, here {expected}; it returned "
                        f"shape {path.shape}.")
    return path


# ------------------------------------------------------- 4.1: the largest stable learning rate
def _curvature():
    """d²y/dx² of the parabola: its gradient (by edugraph) grows this much per unit of x."""
    slopes = []
    for x0 in (0.0, 1.0):
        x = eg.tensor(x0, dtype=eg.float64, requires_grad=True)
        _parabola(x).backward()
        slopes.append(x.grad.item())
    return slopes[1] - slopes[0]


def _rates(curvature):
    """A step multiplies the distance to the minimum by 1 − η·curvature: it lands in one step
    where that is 0, and converges while |1 − η·curvature| < 1."""
    return {"lr_one_step": 1 / curvature, "lr_max": 2 / curvature}


def _swapped_rates(rates):
    return {"lr_one_step": rates["lr_max"], "lr_max": rates["lr_one_step"]}


def _twice_too_large(got, reference):
    return np.isclose(got["lr_max"], 2 * reference["lr_max"])


def _converges_but_not_the_largest(got, reference):
    return 0 < got["lr_max"] < reference["lr_max"]


def _diverges(got, reference):
    return got["lr_max"] > reference["lr_max"]


ex4_1 = Exercise(
    "4.1",
    reads={"lr_one_step": number, "lr_max": number},
    reference=lambda: _rates(_curvature()),
    passed="η = {lr_one_step:g} lands on 0.25 in one step, and gradient descent converges "
           "for every 0 < η < {lr_max:g}, where |1 - 20η| < 1.",
    expected="lr_one_step and lr_max are two numbers, lr_max the bound itself (checked to "
             "1e-6).",
    mistakes=(
        Mistake("lr_one_step and lr_max are swapped: one step lands on 0.25 where the factor "
                "1 - 20η is 0; convergence stops where it reaches -1.",
                gives=lambda: _swapped_rates(_rates(_curvature()))),
        Mistake("lr_max is too large by a factor of 2: dy/dx = 20x - 5 (the derivative of "
                "10x² is 20x), so a step multiplies the distance to 0.25 by 1 - 20η.",
                when=_twice_too_large, example=lambda: _rates(_curvature() / 2)),
        Mistake("at lr_one_step the factor 1 - 20η is -1: x jumps to the other side of 0.25, "
                "just as far away. One step lands on 0.25 where the factor is 0.",
                when=lambda got, ref: np.isclose(got["lr_one_step"], ref["lr_max"]),
                example=lambda: {"lr_one_step": 2 / _curvature(),
                                 "lr_max": 2 / _curvature()}),
        Mistake("lr_max is the rate that lands in one step. Larger rates overshoot 0.25, "
                "yet the distance still shrinks as long as the factor 1 - 20η stays above -1.",
                when=lambda got, ref: np.isclose(got["lr_max"], ref["lr_one_step"]),
                example=lambda: {"lr_one_step": 1 / _curvature(),
                                 "lr_max": 1 / _curvature()}),
        Mistake("lr_max is a rate that works, but not the largest: give the bound itself, "
                "the η where |1 - 20η| reaches 1 (any rate below it converges).",
                when=_converges_but_not_the_largest,
                example=lambda: {"lr_one_step": 1 / _curvature(),
                                 "lr_max": 0.95 * 2 / _curvature()}),
        Mistake("at that lr_max gradient descent no longer converges: |1 - 20η| > 1, so "
                "every step moves further from 0.25 (try it with the lesson's trajectory).",
                when=_diverges,
                example=lambda: {"lr_one_step": 1 / _curvature(),
                                 "lr_max": 1.5 * 2 / _curvature()}),
    ),
)


# ---------------------------------------------- 4.2 and 4.3: what a path function returns
_NUM_STEPS = 12


def _aliased(path_fn):
    """What ``path.append(w)`` followed by ``w -= step`` returns: the list holds the same
    array again and again, so every row is the last position."""
    def path(*args, **kwargs):
        positions = path_fn(*args, **kwargs)
        return np.array([positions[-1]] * len(positions))
    return path


def _without_start(path_fn):
    def path(*args, **kwargs):
        return path_fn(*args, **kwargs)[1:]
    return path


def _path_mistakes(name, right_rule):
    """The two ways a right rule still returns a wrong path; ``right_rule`` (the rule in
    numpy) only makes their examples."""
    return (
        Mistake("every row of your path is the same point: `w -= ...` changes the array that "
                "the list already holds. Write `w = w - ...` or append `w.copy()`.",
                when=_aliased_but_right, example={name: _aliased(right_rule)}),
        Mistake("your path has one position per step; it should begin with the start point "
                "too (num_steps + 1 rows, like the lesson's trajectory).",
                when=_one_row_short, example={name: _without_start(right_rule)}),
    )


def _aliased_but_right(got, reference):
    return all(np.ptp(got[name], axis=0).max() == 0 and
               np.allclose(got[name][-1], reference[name][-1], rtol=1e-3, atol=1e-4)
               for name in reference)


def _one_row_short(got, reference):
    return all(len(got[name]) == len(reference[name]) - 1 for name in reference)


# ------------------------------------------------------------------ 4.2: momentum by hand
# (loss for the optimizer, its gradient for the student, start, learning rate, momentum):
# the lesson's valley, and the parabola with another momentum, so fixed numbers fail
_MOMENTUM_PROBES = (
    ("valley", _valley, _valley_gradient, np.array([-9.0, 2.0]), 0.4, 0.9),
    ("parabola", _parabola, _parabola_gradient, 0.0, 0.03, 0.7),
    ("bowl", _bowl, _bowl_gradient, np.array([3.0, -2.0]), 0.2, 0.8),
)


def _momentum_reference():
    return {name: _optimizer_path(eg.train.MomentumOptimizer(lr, momentum=mu), loss,
                                  start, _NUM_STEPS)
            for name, loss, _, start, lr, mu in _MOMENTUM_PROBES}


def _run_momentum(answer):
    momentum_path = answer["momentum_path"]
    got = {}
    for name, _, gradient, start, lr, mu in _MOMENTUM_PROBES:
        call = f"momentum_path(..., lr={lr}, momentum={mu}, num_steps={_NUM_STEPS})"
        value = momentum_path(gradient, np.copy(start), lr, mu, _NUM_STEPS)
        got[name] = _read_path(value, call, _NUM_STEPS, start)
    return got


def _momentum_with(step):
    """A momentum_path around ``step(w, a, g, lr, mu) -> (new w, new a)``."""
    def momentum_path(grad_fn, start, lr, momentum, num_steps):
        w = np.array(start, dtype=np.float64)
        a = np.zeros_like(w)
        path = [w]
        for _ in range(num_steps):
            w, a = step(w, a, grad_fn(w), lr, momentum)
            path.append(w)
        return np.array(path)
    return momentum_path


def _tf1_momentum(w, a, g, lr, mu):
    a = mu * a + g
    return w - lr * a, a


# The mistakes: TF1's rule with one thing changed.
def _fresh_accumulator(w, a, g, lr, mu):     # a not kept: plain gradient descent
    return w - lr * g, g


def _running_average(w, a, g, lr, mu):
    a = mu * a + (1 - mu) * g
    return w - lr * a, a


def _rate_twice(w, a, g, lr, mu):
    a = mu * a + lr * g
    return w - lr * a, a


def _nesterov(w, a, g, lr, mu):
    a = mu * a + g
    return w - lr * (g + mu * a), a


def _stale_accumulator(w, a, g, lr, mu):     # steps with a before adding this gradient
    return w - lr * a, mu * a + g


def _climbs(w, a, g, lr, mu):
    a = mu * a + g
    return w + lr * a, a


def _momentum_mistake(step, hint):
    path_fn = _momentum_with(step)
    return Mistake(hint, gives=lambda: _run_momentum({"momentum_path": path_fn}),
                   example={"momentum_path": path_fn})


ex4_2 = Exercise(
    "4.2",
    reads={"momentum_path": function},
    run=_run_momentum,
    reference=_momentum_reference,
    passed=f"momentum_path follows MomentumOptimizer step for step ({_NUM_STEPS} steps on "
           "the valley, the parabola and a tilted bowl, to 1e-4): a ← μa + g, then w ← w - ηa.",
    expected="momentum_path(grad_fn, start, lr, momentum, num_steps) returns the start and "
             "the position after each step, an array of shape (num_steps + 1,) + start's "
             "shape, following MomentumOptimizer (checked to 1e-4).",
    rtol=1e-4, atol=1e-5,
    mistakes=(
        _momentum_mistake(
            _fresh_accumulator,
            "your path is plain gradient descent: the accumulator must carry over from one "
            "step to the next (create it once, before the loop, and keep updating it)."),
        _momentum_mistake(
            _running_average,
            "that is momentum as a running average, a ← μa + (1 - μ)g. TF1's accumulator "
            "adds the whole gradient: a ← μa + g."),
        _momentum_mistake(
            _rate_twice,
            "the learning rate is applied twice. In TF1 it scales only the step: "
            "a ← μa + g, then w ← w - ηa."),
        _momentum_mistake(
            _nesterov,
            "that is the Nesterov step, w ← w - η(g + μa). Plain momentum steps by the "
            "accumulator itself: w ← w - ηa."),
        _momentum_mistake(
            _stale_accumulator,
            "your steps lag one behind: add this step's gradient to the accumulator first, "
            "then step with the new a."),
        _momentum_mistake(
            _climbs,
            "your path climbs the loss: the step goes against the gradient, w ← w - ηa."),
    ) + _path_mistakes("momentum_path", _momentum_with(_tf1_momentum)),
)


# ---------------------------------------------------------------------- 4.3: Adam by hand
# (loss, gradient, start, lr, beta1, beta2, epsilon): the valley with TF1's defaults, and the
# parabola with other betas and a large epsilon, so that where ε goes shows in the path
_ADAM_PROBES = (
    ("valley", _valley, _valley_gradient, np.array([-9.0, 2.0]), 0.5, 0.9, 0.999, 1e-8),
    ("parabola", _parabola, _parabola_gradient, 0.0, 0.05, 0.8, 0.99, 0.1),
    ("bowl", _bowl, _bowl_gradient, np.array([3.0, -2.0]), 0.3, 0.85, 0.99, 1e-8),
)
_ADAM_NOT_FINITE = ("a square root of a negative number (v averages g², which is never "
                    "negative), or a division by 1 - β1ᵗ with t = 0 (t counts steps from 1)?")


def _adam_reference():
    return {name: _optimizer_path(eg.train.AdamOptimizer(lr, beta1=b1, beta2=b2, epsilon=eps),
                                  loss, start, _NUM_STEPS)
            for name, loss, _, start, lr, b1, b2, eps in _ADAM_PROBES}


def _run_adam(answer):
    adam_path = answer["adam_path"]
    got = {}
    for name, _, gradient, start, lr, b1, b2, eps in _ADAM_PROBES:
        call = f"adam_path(..., lr={lr}, num_steps={_NUM_STEPS}, beta1={b1}, beta2={b2}, " \
               f"epsilon={eps})"
        value = adam_path(gradient, np.copy(start), lr, _NUM_STEPS, beta1=b1, beta2=b2,
                          epsilon=eps)
        got[name] = _read_path(value, call, _NUM_STEPS, start, _ADAM_NOT_FINITE)
    return got


def _adam_with(step, betas_swapped=False, t_counts=True):
    """An adam_path with TF1's moments m and v around ``step(w, m, v, t, lr, b1, b2, eps)``;
    the two switches make two more mistakes."""
    def adam_path(grad_fn, start, lr, num_steps, beta1=0.9, beta2=0.999, epsilon=1e-8):
        b1, b2 = (beta2, beta1) if betas_swapped else (beta1, beta2)
        w = np.array(start, dtype=np.float64)
        m, v = np.zeros_like(w), np.zeros_like(w)
        path = [w]
        for t in range(1, num_steps + 1):
            g = grad_fn(w)
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * g * g
            w = step(w, m, v, t if t_counts else 1, lr, beta1, beta2, epsilon)
            path.append(w)
        return np.array(path)
    return adam_path


def _tf1_adam(w, m, v, t, lr, b1, b2, eps):
    lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - lr_t * m / (np.sqrt(v) + eps)


# The mistakes: TF1's step with one thing changed.
def _no_bias_correction(w, m, v, t, lr, b1, b2, eps):
    return w - lr * m / (np.sqrt(v) + eps)


def _m_corrected_only(w, m, v, t, lr, b1, b2, eps):
    return w - lr * m / (1 - b1 ** t) / (np.sqrt(v) + eps)


def _epsilon_after_correction(w, m, v, t, lr, b1, b2, eps):     # the paper's, PyTorch's
    m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
    return w - lr * m_hat / (np.sqrt(v_hat) + eps)


def _epsilon_under_root(w, m, v, t, lr, b1, b2, eps):           # where RMSProp puts it
    lr_t = lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
    return w - lr_t * m / np.sqrt(v + eps)


def _correction_without_root(w, m, v, t, lr, b1, b2, eps):
    lr_t = lr * (1 - b2 ** t) / (1 - b1 ** t)
    return w - lr_t * m / (np.sqrt(v) + eps)


def _adam_mistake(path_fn, hint):
    return Mistake(hint, gives=lambda: _run_adam({"adam_path": path_fn}),
                   example={"adam_path": path_fn})


ex4_3 = Exercise(
    "4.3",
    reads={"adam_path": function},
    run=_run_adam,
    reference=_adam_reference,
    passed=f"adam_path follows AdamOptimizer step for step ({_NUM_STEPS} steps on the valley, "
           "a tilted bowl, and the parabola with ε = 0.1, to 1e-3): bias-corrected rate η_t, "
           "ε added to √v.",
    expected="adam_path(grad_fn, start, lr, num_steps, beta1, beta2, epsilon) returns the "
             "start and the position after each step, an array of shape (num_steps + 1,) + "
             "start's shape, following AdamOptimizer (checked to 1e-3).",
    rtol=1e-3, atol=1e-4,
    mistakes=(
        _adam_mistake(
            _adam_with(_no_bias_correction),
            "the bias correction is missing: m and v start at 0, so early on they are too "
            "small; TF1 scales the rate, η_t = η·√(1 - β2ᵗ)/(1 - β1ᵗ)."),
        _adam_mistake(
            _adam_with(_m_corrected_only),
            "only m is bias-corrected: v starts at 0 too, so η_t also has the factor "
            "√(1 - β2ᵗ), η_t = η·√(1 - β2ᵗ)/(1 - β1ᵗ)."),
        _adam_mistake(
            _adam_with(_epsilon_after_correction),
            "that is the paper's (and PyTorch's) Adam, with ε added after the bias "
            "correction. TF1 adds ε to √v itself: w ← w - η_t·m/(√v + ε)."),
        _adam_mistake(
            _adam_with(_epsilon_under_root),
            "ε is under the square root, as in TF1's RMSProp; TF1's Adam adds it outside: "
            "w ← w - η_t·m/(√v + ε)."),
        _adam_mistake(
            _adam_with(_correction_without_root),
            "check η_t = η·√(1 - β2ᵗ)/(1 - β1ᵗ): v averages squares, so its correction "
            "goes under a square root."),
        _adam_mistake(
            _adam_with(_tf1_adam, t_counts=False),
            "your steps are right at the first step only: t must count the steps (1, 2, "
            "3, ...), so that the bias correction fades."),
        _adam_mistake(
            _adam_with(_tf1_adam, betas_swapped=True),
            "β1 and β2 are swapped: β1 (0.9 by default) averages the gradients into m, β2 "
            "(0.999) their squares into v."),
    ) + _path_mistakes("adam_path", _adam_with(_tf1_adam)),
)


# ---------------------------------------------------------- 4.4: RMSProp's slots, two steps
_RMS_START, _RMS_LR, _RMS_DECAY, _RMS_EPSILON = np.array([-9.0, 2.0]), 0.3, 0.9, 1e-10


def _rmsprop_reference():
    """rms slot and parameter after two RMSPropOptimizer steps, read with get_slot."""
    optimizer = eg.train.RMSPropOptimizer(_RMS_LR, decay=_RMS_DECAY, epsilon=_RMS_EPSILON)
    with eg.Graph().as_default():
        p = eg.Variable(_RMS_START.astype(np.float32), name="p")
        train = optimizer.minimize(_valley(p))
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for _ in range(2):
                sess.run(train)
            rms, position = sess.run([optimizer.get_slot(p, "rms"), p])
    return {"rms_after_2": rms.astype(np.float64), "p_after_2": position.astype(np.float64)}


def _rmsprop_by_hand(rms_start=1.0, new_weight=1 - _RMS_DECAY, root=np.sqrt, num_steps=2,
                     fresh_gradient=True):
    """The same two steps in numpy, with one thing changeable (for the mistakes)."""
    p, rms = _RMS_START.copy(), np.full(2, rms_start)
    g = _valley_gradient(p)
    for _ in range(num_steps):
        if fresh_gradient:
            g = _valley_gradient(p)
        rms = (1 - new_weight) * rms + new_weight * g * g
        p = p - _RMS_LR * g / root(rms + _RMS_EPSILON)
    return {"rms_after_2": rms, "p_after_2": p}


def _momentum_slot_read():
    """What get_slot(p, "momentum") holds with momentum = 0: the last step, η·g/√(rms + ε)."""
    one, two = _rmsprop_by_hand(num_steps=1), _rmsprop_by_hand()
    return {"rms_after_2": one["p_after_2"] - two["p_after_2"], "p_after_2": two["p_after_2"]}


ex4_4 = Exercise(
    "4.4",
    reads={"rms_after_2": array, "p_after_2": array},
    reference=_rmsprop_reference,
    passed="rms_after_2 and p_after_2 match get_slot(p, 'rms') and p after two RMSProp steps "
           "(to 1e-4): the rms slot starts at ones and decays towards g².",
    expected="rms_after_2 and p_after_2 are arrays of 2 numbers (u and v), after two steps "
             "of RMSPropOptimizer(0.3) from (-9, 2) (checked to 1e-4).",
    rtol=1e-4, atol=1e-6,
    mistakes=(
        Mistake("TF1 starts the rms slot at ONES (the table's 'from 1'), not zeros: from "
                "zeros, the first step would be about η/√0.1 ≈ 3η whatever the gradient.",
                gives=lambda: _rmsprop_by_hand(rms_start=0.0)),
        Mistake("0.1 is where Adagrad's accumulator starts; TF1's RMSProp starts its rms "
                "slot at ONES (the table's 'from 1').",
                gives=lambda: _rmsprop_by_hand(rms_start=0.1)),
        Mistake("these are the values after ONE step; two are asked (the second step starts "
                "from the first one's rms and position).",
                gives=lambda: _rmsprop_by_hand(num_steps=1)),
        Mistake("the decay weighs the OLD mean: rms ← 0.9·rms + 0.1·g², not 0.1·rms + "
                "0.9·g².",
                gives=lambda: _rmsprop_by_hand(new_weight=_RMS_DECAY)),
        Mistake("RMSProp divides the step by the square ROOT of the mean of g²: "
                "w ← w - η·g/√(rms + ε).",
                gives=lambda: _rmsprop_by_hand(root=lambda s: s)),
        Mistake("the second step needs the gradient at the new position: compute g again "
                "after the first step.",
                gives=lambda: _rmsprop_by_hand(fresh_gradient=False)),
        Mistake("rms_after_2 holds the last step, η·g/√(rms + ε): that is the slot "
                "'momentum'. The running mean of g² is the slot 'rms'.",
                gives=_momentum_slot_read),
    ),
)

EXERCISES = [ex4_1, ex4_2, ex4_3, ex4_4]
