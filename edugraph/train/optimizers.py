r"""TF1's optimizers: each is its update rule, written once in framework ops (both modes).

$g$ is the gradient, $\eta$ the learning rate; slots are per-variable state. Adam, the rule the
lessons train with, also gives its formula on the arrays in place for eager steps (see
``Optimizer.update_in_place``).
"""
import numpy as np

from ..ops.math import abs, cast, maximum, sign, sqrt, where
from ..tensor import float64
from .optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    r"""$w \leftarrow w - \eta g$."""

    def update(self, var, grad, slots, step):
        return {var: var - self.learning_rate * grad}


class MomentumOptimizer(Optimizer):
    r"""$a \leftarrow \mu a + g$; $w \leftarrow w - \eta a$ (Nesterov: $w - \eta(g + \mu a)$).

    ``dampening`` $d$ is PyTorch's (``eg.optim.SGD``): $a \leftarrow \mu a + (1 - d) g$, except
    on a variable's first step, where $a = g$ undamped. Given (even as 0), the rule counts
    steps, so that ``dampening`` may change between steps as in PyTorch; TF1's rule (None)
    counts nothing.

    Keras's SGD (``eg.keras.optimizers.SGD``) keeps the step itself, the learning rate inside:
    ``learning_rate_in_momentum=True`` gives $a \leftarrow \mu a + \eta g$; $w \leftarrow w - a$
    (Nesterov: $w - (\mu a + \eta g)$): the same path while $\eta$ stays fixed, not once a
    schedule or a callback changes it (then the steps already taken keep their old rate)."""

    slot_initial = {"momentum": 0.0}

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False, dampening=None, *, learning_rate_in_momentum=False):
        super().__init__(learning_rate, use_locking, name)
        self.momentum, self.use_nesterov, self.dampening = momentum, use_nesterov, dampening
        self.learning_rate_in_momentum = learning_rate_in_momentum
        self.counts_steps = dampening is not None

    def update(self, var, grad, slots, step):
        added = where(step > 1, (1 - self.dampening) * grad, grad) if self.dampening else grad
        if self.learning_rate_in_momentum:
            lr = self.learning_rate
            accum = self.momentum * slots["momentum"] + lr * added
            step_taken = lr * grad + self.momentum * accum if self.use_nesterov else accum
            return {"momentum": accum, var: var - step_taken}
        accum = self.momentum * slots["momentum"] + added
        direction = grad + self.momentum * accum if self.use_nesterov else accum
        return {"momentum": accum, var: var - self.learning_rate * direction}


class AdagradOptimizer(Optimizer):
    r"""$s \leftarrow s + g^2$ (from 0.1); $w \leftarrow w - \eta g / \sqrt{s}$.

    PyTorch's ``torch.optim.Adagrad`` (``eg.optim.Adagrad``) adds ``epsilon`` to the root,
    $w \leftarrow w - \eta_t g / (\sqrt{s} + \epsilon)$, and decays the rate with the step
    number $t$: $\eta_t = \eta / (1 + (t - 1) \cdot$ ``lr_decay``$)$. Keras's Adagrad
    (``eg.keras.optimizers.Adagrad``) adds it inside the root, $g / \sqrt{s + \epsilon}$:
    ``epsilon_in_root=True``, as in ``RMSPropOptimizer``."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad", *, epsilon=0.0, lr_decay=0.0, epsilon_in_root=False):
        super().__init__(learning_rate, use_locking, name)
        self.slot_initial = {"accumulator": initial_accumulator_value}
        self.epsilon, self.lr_decay = epsilon, lr_decay
        self.epsilon_in_root = epsilon_in_root
        self.counts_steps = bool(lr_decay)

    def update(self, var, grad, slots, step):
        accum = slots["accumulator"] + grad * grad
        if not self.epsilon:
            root = sqrt(accum)
        else:
            root = sqrt(accum + self.epsilon) if self.epsilon_in_root else \
                sqrt(accum) + self.epsilon
        lr = self.learning_rate
        if self.lr_decay:
            lr = lr / (1 + cast(step - 1, var.dtype) * self.lr_decay)
        return {"accumulator": accum, var: var - lr * grad / root}


class AdadeltaOptimizer(Optimizer):
    r"""$s \leftarrow \rho s + (1-\rho) g^2$; $u = g\sqrt{d + \epsilon}/\sqrt{s + \epsilon}$;
    $d \leftarrow \rho d + (1-\rho) u^2$; $w \leftarrow w - \eta u$."""

    slot_initial = {"accum": 0.0, "accum_update": 0.0}

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-8, use_locking=False,
                 name="Adadelta"):
        super().__init__(learning_rate, use_locking, name)
        self.rho, self.epsilon = rho, epsilon

    def update(self, var, grad, slots, step):
        rho, eps = self.rho, self.epsilon
        accum = rho * slots["accum"] + (1 - rho) * grad * grad
        change = sqrt(slots["accum_update"] + eps) / sqrt(accum + eps) * grad
        accum_update = rho * slots["accum_update"] + (1 - rho) * change * change
        return {"accum": accum, "accum_update": accum_update,
                var: var - self.learning_rate * change}


class RMSPropOptimizer(Optimizer):
    r"""$s \leftarrow \beta s + (1-\beta) g^2$ (from ONES, as TF1; Keras's RMSprop starts
    from ``initial_mean_square=0``); $m \leftarrow \mu m + \eta g / \sqrt{s + \epsilon}$
    ($\epsilon$ inside the root); $w \leftarrow w - m$. Centered: $s - \bar g^2$ in the root.

    PyTorch's ``torch.optim.RMSprop`` (``eg.optim.RMSprop``) differs in two places, each an
    option: ``epsilon_in_root=False`` adds $\epsilon$ to the root, $g / (\sqrt s +
    \epsilon)$, and ``learning_rate_in_momentum=False`` lets the momentum add up these steps
    unscaled, $m \leftarrow \mu m + g / (\sqrt s + \epsilon)$, $w \leftarrow w - \eta m$
    (the same path while $\eta$ stays fixed; not once a schedule changes it)."""

    def __init__(self, learning_rate, decay=0.9, momentum=0.0, epsilon=1e-10,
                 use_locking=False, centered=False, name="RMSProp", *, initial_mean_square=1.0,
                 epsilon_in_root=True, learning_rate_in_momentum=True):
        super().__init__(learning_rate, use_locking, name)
        self.decay, self.momentum, self.epsilon, self.centered = decay, momentum, epsilon, \
            centered
        self.epsilon_in_root = epsilon_in_root
        self.learning_rate_in_momentum = learning_rate_in_momentum
        self.slot_initial = {"rms": initial_mean_square, "momentum": 0.0}
        if centered:
            self.slot_initial["mg"] = 0.0

    def update(self, var, grad, slots, step):
        rms = self.decay * slots["rms"] + (1 - self.decay) * grad * grad
        new = {"rms": rms}
        denominator = rms
        if self.centered:
            mg = new["mg"] = self.decay * slots["mg"] + (1 - self.decay) * grad
            denominator = rms - mg * mg
        root = sqrt(denominator + self.epsilon) if self.epsilon_in_root else \
            sqrt(denominator) + self.epsilon
        if self.learning_rate_in_momentum:
            mom = self.momentum * slots["momentum"] + self.learning_rate * grad / root
            new.update({"momentum": mom, var: var - mom})
        else:
            mom = self.momentum * slots["momentum"] + grad / root
            new.update({"momentum": mom, var: var - self.learning_rate * mom})
        return new


class AdamOptimizer(Optimizer):
    r"""$m \leftarrow \beta_1 m + (1-\beta_1) g$; $v \leftarrow \beta_2 v + (1-\beta_2) g^2$;
    $w \leftarrow w - \eta_t m / (\sqrt v + \hat\epsilon)$ with
    $\eta_t = \eta\sqrt{1-\beta_2^t}/(1-\beta_1^t)$ (TF1's "epsilon hat" form).

    ``epsilon_hat=False`` adds $\epsilon$ after the bias correction instead, as the paper's
    Algorithm 1 and PyTorch do (``eg.optim.Adam``): $w \leftarrow w - \eta \hat m /
    (\sqrt{\hat v} + \epsilon)$, $\hat m = m/(1-\beta_1^t)$, $\hat v = v/(1-\beta_2^t)$. The two
    differ only by $\epsilon$'s size: TF1's $\hat\epsilon$ is $\epsilon\sqrt{1-\beta_2^t}$."""

    slot_initial = {"m": 0.0, "v": 0.0}
    counts_steps = True

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam", epsilon_hat=True):
        super().__init__(learning_rate, use_locking, name)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.epsilon_hat = epsilon_hat

    def update(self, var, grad, slots, step):
        b1, b2 = self.beta1, self.beta2
        m = b1 * slots["m"] + (1 - b1) * grad
        v = b2 * slots["v"] + (1 - b2) * grad * grad
        if self.epsilon_hat:
            lr_t = self.learning_rate * sqrt(1 - b2 ** step) / (1 - b1 ** step)
            new_var = var - lr_t * m / (sqrt(v) + self.epsilon)
        else:       # PyTorch computes 1 − βᵗ in Python floats: in float32, 1 − 0.999 loses digits
            t = cast(step, float64)
            correction1 = cast(1 - b1 ** t, var.dtype)
            correction2 = cast(sqrt(1 - b2 ** t), var.dtype)
            new_var = var - self.learning_rate / correction1 * m / (
                sqrt(v) / correction2 + self.epsilon)
        return {"m": m, "v": v, var: new_var}

    def update_in_place(self, xp, var, grad, slots, step):
        """``update``'s operations, in its order and dtypes, on the arrays in place."""
        b1, b2, m, v = self.beta1, self.beta2, slots["m"], slots["v"]
        step = step[()]         # (numpy's scalar: the same float32 arithmetic, three times faster)
        lr = float(self.learning_rate)  # a number, as the ops read one (np.float64 would promote)
        m *= b1                             # m ← β₁m + (1 − β₁)g
        m += (1 - b1) * grad
        squared = (1 - b2) * grad           # v ← β₂v + (1 − β₂)g·g, multiplied in
        squared *= grad                     # update's order: ((1 − β₂)g)g
        v *= b2
        v += squared
        root = xp.sqrt(v, out=squared)      # (g²'s buffer is free again)
        if self.epsilon_hat:
            lr_t = lr * xp.sqrt(1 - b2 ** step) / (1 - b1 ** step)
            root += self.epsilon
            step_size = lr_t * m
        else:
            t = step.astype(np.float64)
            correction1 = (1 - b1 ** t).astype(var.dtype)
            correction2 = xp.sqrt(1 - b2 ** t).astype(var.dtype)
            root /= correction2
            root += self.epsilon
            step_size = lr / correction1 * m
        step_size /= root
        var -= step_size


def _shrink(prox, threshold, l2_factor):
    r"""The proximal step for L1/L2: $\mathrm{sign}(p)\max(|p| - t, 0) / (1 + l_2)$."""
    return sign(prox) * maximum(abs(prox) - threshold, 0.0) / (1 + l2_factor)


class ProximalGradientDescentOptimizer(Optimizer):
    r"""A gradient step, then shrink towards 0 for the L1 / L2 penalties."""

    def __init__(self, learning_rate, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, use_locking=False,
                 name="ProximalGradientDescent"):
        super().__init__(learning_rate, use_locking, name)
        self.l1, self.l2 = l1_regularization_strength, l2_regularization_strength

    def update(self, var, grad, slots, step):
        lr = self.learning_rate
        return {var: _shrink(var - lr * grad, lr * self.l1, lr * self.l2)}


class ProximalAdagradOptimizer(Optimizer):
    r"""Adagrad's step size $\eta/\sqrt{s}$, then the proximal shrink."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="ProximalAdagrad"):
        super().__init__(learning_rate, use_locking, name)
        self.slot_initial = {"accumulator": initial_accumulator_value}
        self.l1, self.l2 = l1_regularization_strength, l2_regularization_strength

    def update(self, var, grad, slots, step):
        accum = slots["accumulator"] + grad * grad
        lr = self.learning_rate / sqrt(accum)
        return {"accumulator": accum, var: _shrink(var - lr * grad, lr * self.l1, lr * self.l2)}


class FtrlOptimizer(Optimizer):
    r"""Follow-the-regularised-leader (McMahan et al.), TF1's rule:
    $n' = n + g^2$; $z \leftarrow z + g - (n'^{-p} - n^{-p})/\eta \cdot w$;
    $w = (\mathrm{sign}(z) l_1 - z) / (n'^{-p}/\eta + 2 l_2)$ if $|z| > l_1$ else 0."""

    slot_initial = {"linear": 0.0}

    def __init__(self, learning_rate, learning_rate_power=-0.5, initial_accumulator_value=0.1,
                 l1_regularization_strength=0.0, l2_regularization_strength=0.0,
                 use_locking=False, name="Ftrl"):
        super().__init__(learning_rate, use_locking, name)
        self.power = learning_rate_power
        self.slot_initial = {"accum": initial_accumulator_value, "linear": 0.0}
        self.l1, self.l2 = l1_regularization_strength, l2_regularization_strength

    def update(self, var, grad, slots, step):
        accum = slots["accum"]
        new_accum = accum + grad * grad
        sigma = (new_accum ** -self.power - accum ** -self.power) / self.learning_rate
        linear = slots["linear"] + grad - sigma * var
        quadratic = new_accum ** -self.power / self.learning_rate + 2 * self.l2
        shrunk = (sign(linear) * self.l1 - linear) / quadratic
        return {"accum": new_accum, "linear": linear,
                var: where(abs(linear) > self.l1, shrunk, shrunk * 0)}
