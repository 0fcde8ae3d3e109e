r"""PyTorch's optimizers (``torch.optim``): ``optimizer = eg.optim.SGD(model.parameters(),
lr=0.1)``, then for each batch ``loss.backward(); optimizer.step(); optimizer.zero_grad()``.

They bring no update rules of their own. Each picks the rule of ``eg.train`` (TF1's
optimizers, written once in framework ops) that computes PyTorch's formula:

* ``SGD`` is ``GradientDescentOptimizer``, or with ``momentum`` ``MomentumOptimizer`` (whose
  ``dampening`` option is PyTorch's);
* ``Adam`` is ``AdamOptimizer(epsilon_hat=False)``: PyTorch adds $\epsilon$ to $\sqrt{\hat v}$
  after the bias correction, TF1 to $\sqrt v$ before it;
* ``Adadelta`` is ``AdadeltaOptimizer``: TF1's ApplyAdadelta and PyTorch compute the same
  formula (only the defaults differ: PyTorch's are ``lr=1.0, rho=0.9, eps=1e-6``);
* ``RMSprop`` is ``RMSPropOptimizer`` with PyTorch's three differences from TF1: the mean
  square starts at 0, $\epsilon$ is added to its root, and the momentum adds up unscaled steps;
* ``Adagrad`` is ``AdagradOptimizer`` with PyTorch's $\epsilon$, ``lr_decay`` and a sum
  that starts at 0 (TF1's at 0.1);
* ``weight_decay`` $\lambda$ adds $\lambda w$ to the gradient first (L2 regularisation), for
  every optimizer; ``AdamW`` instead shrinks $w$ by $1 - \eta\lambda$ ("decoupled").

What is added here is PyTorch's bookkeeping. ``param_groups`` is a list of dicts, read again at
every step, so that ``for g in optimizer.param_groups: g["lr"] = 0.01`` changes the learning
rate. State is kept per parameter, as PyTorch keeps it: a parameter whose ``.grad`` is None is
skipped, and its step count (Adam's bias correction) does not advance. So each parameter has a
rule object of its own, which holds its slots and step count.

The update is in place (``Variable.assign``, or ``copy_`` for a plain tensor), so the model
keeps its parameter objects, and a graph recorded before the step refuses ``backward``.
"""
from collections.abc import Mapping
import numbers

from .. import train
from ..context import enable_grad, no_grad
from ..ops.random import zeros_like
from ..tensor import Tensor

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adadelta", "RMSprop", "Adagrad",
           "lr_scheduler"]


class Optimizer:
    """The base of PyTorch-style optimizers: a subclass gives its ``defaults`` and ``rule``."""

    decoupled_weight_decay = False      # AdamW's: shrink the weights instead of adding λw to g

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.param_groups = []
        self._rules = {}                # (id(parameter), rule class) → that parameter's rule
        if isinstance(params, Tensor):
            raise TypeError(f"{self._name}: params must be an iterable of tensors, not one "
                            "tensor: write [w] (or pass model.parameters()).")
        if callable(getattr(params, "parameters", None)):
            raise TypeError(f"{self._name} got the model itself ({type(params).__name__}); "
                            "give it the model's parameters: "
                            f"{self._name}(model.parameters(), lr=...).")
        if callable(params) and getattr(params, "__name__", "") == "parameters":
            raise TypeError(f"{self._name} got the method model.parameters, not what it gives: "
                            f"call it, {self._name}(model.parameters(), lr=...).")
        groups = list(params)           # (model.parameters() may be a generator: read it once)
        if not groups:
            raise ValueError(
                f"{self._name} got an empty parameter list. Pass model.parameters() of a model "
                "whose weights exist: Keras layers such as eg.layers.Dense(10) make theirs on "
                "the first call, so call the model on a batch first (or use eg.nn.Linear(in, "
                "out), which makes them at once).")
        for group in groups if isinstance(groups[0], Mapping) else [{"params": groups}]:
            self.add_param_group(group)

    @property
    def _name(self):
        return f"eg.optim.{type(self).__name__}"

    def rule(self, group):
        """``(rule class, settings)``: the ``eg.train`` rule that computes this optimizer's
        update, and its constructor's arguments for ``group``'s current settings. The rules keep
        those arguments as attributes of the same names, so later steps update them."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Add ``{"params": [...], "lr": ...}``: parameters with their own settings (the
        optimizer's defaults fill in the rest)."""
        if not isinstance(param_group, Mapping) or "params" not in param_group:
            raise TypeError(f"{self._name}: a parameter group is a dict with a 'params' list, "
                            f"such as {{'params': model.fc.parameters(), 'lr': 1e-3}}; got "
                            f"{type(param_group).__name__}.")
        group = dict(param_group)
        params = group["params"]
        group["params"] = [params] if isinstance(params, Tensor) else list(params)
        if not group["params"]:
            raise ValueError(f"{self._name}: a parameter group has an empty 'params' list.")
        earlier = [p for g in self.param_groups for p in g["params"]]
        seen = {id(p) for p in earlier}
        for index, param in enumerate(group["params"], start=len(earlier)):
            self._check_parameter(param, index)
            if id(param) in seen:
                raise ValueError(f"{self._name}: {_describe(param, index)} is listed twice; "
                                 "each step would update it twice. List each parameter once.")
            seen.add(id(param))
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        self.param_groups.append(group)

    def _check_parameter(self, param, index):
        if not isinstance(param, Tensor):
            raise TypeError(
                f"{self._name}: parameter {index} is a {type(param).__name__}, not a tensor. "
                "Pass model.parameters(), or a list of tensors made with requires_grad=True "
                "(eg.randn(3, 4, requires_grad=True)) or eg.Variable(...).")
        if param.graph is not None:
            raise TypeError(
                f"{self._name}: {_describe(param, index)} belongs to a graph; eg.optim works "
                "eagerly. In a graph use a TF1 optimizer and run its op: train_op = "
                "eg.train.GradientDescentOptimizer(0.1).minimize(loss).")
        if not param.is_floating_point():
            raise TypeError(
                f"{self._name}: {_describe(param, index)} has dtype {param.dtype}, and only "
                "floating-point tensors have gradients to follow. Make it with "
                "dtype=eg.float32.")
        if not param.is_leaf:
            raise ValueError(
                f"{self._name}: {_describe(param, index)} was computed by an op "
                f"({param.grad_fn.name}), so its values come from other tensors and step() "
                "cannot change them. Optimise the leaf tensors it was computed from, or make "
                "it a leaf with .detach().requires_grad_().")

    # ------------------------------------------------------------------ the training step
    def zero_grad(self, set_to_none=True):
        """Forget the gradients of the last ``backward``: set each ``.grad`` to None (PyTorch
        2's default), or to zeros with ``set_to_none=False``."""
        for group in self.param_groups:
            for param in group["params"]:
                if set_to_none:
                    param.grad = None
                elif param.grad is not None:
                    param.grad = zeros_like(param.grad)

    def step(self, closure=None):
        """Update, in place, each parameter that has a gradient, with its group's current
        settings. ``closure``: a function that recomputes the loss (zero_grad, forward,
        backward) and returns it; ``step`` then returns that loss."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        index = 0
        with no_grad():
            for group in self.param_groups:
                for param in group["params"]:
                    if param.grad is not None:
                        self._update(param, index, group)
                    index += 1
        return loss

    def _update(self, param, index, group):
        grad = self._checked_gradient(param, index)
        rule = self._rule_for(param, index, group)
        decay = group["weight_decay"]
        if decay and self.decoupled_weight_decay:
            param.mul_(1 - group["lr"] * decay)
        elif decay:
            grad = grad + decay * param
        rule.apply_gradients([(grad, param)])

    def _checked_gradient(self, param, index):
        grad = param.grad
        if (grad.shape, grad.dtype, grad.device) != (param.shape, param.dtype, param.device):
            raise ValueError(
                f"{self._name}.step: {_describe(param, index)} is {_layout(param)}, but its "
                f".grad is {_layout(grad)}; a gradient must match its parameter. Was .grad set "
                "by hand? Set it to None (optimizer.zero_grad()) and call backward() again.")
        return grad

    def _rule_for(self, param, index, group):
        """``param``'s own rule object, made at its first step and given ``group``'s current
        settings at each (a changed ``lr``...); SGD's rule changes when momentum is turned on."""
        rule_class, settings = self.rule(group)
        key = (id(param), rule_class)
        rule = self._rules.get(key)
        if rule is None:
            rule = self._rules[key] = rule_class(name=type(self).__name__, **settings)
            return rule
        vars(rule).update(settings)
        for name in rule.get_slot_names():
            slot = rule.get_slot(param, name)
            if slot is not None and _layout(slot) != _layout(param):
                raise ValueError(
                    f"{self._name}.step: {_describe(param, index)} is now {_layout(param)}, but "
                    f"the optimizer's state for it ({', '.join(rule.get_slot_names())}) is "
                    f"{_layout(slot)}. Move or convert the model first and make the optimizer "
                    f"after: model.to(...), then {self._name}(model.parameters(), ...).")
        return rule

    # ------------------------------------------------------------------ saving
    def state_dict(self):
        """The optimizer's state, laid out as PyTorch lays it out (for ``eg.save``).

        ``{"state": {i: {name: tensor}}, "param_groups": [{settings..., "params": [i, ...]}]}``,
        the parameters numbered in order across the groups. A parameter's state is its rule's
        slots (``m`` and ``v`` for Adam: the names of the ``eg.train`` rule, not PyTorch's
        ``exp_avg``...) and, for rules that count them, its ``step``s. As in PyTorch the
        tensors are the optimizer's own, so later steps change them."""
        state, groups, index = {}, [], 0
        for group in self.param_groups:
            numbers = list(range(index, index + len(group["params"])))
            rule_class = self.rule(group)[0]
            for number, param in zip(numbers, group["params"]):
                rule = self._rules.get((id(param), rule_class))
                kept = _rule_state(rule, param) if rule is not None else {}
                if kept:                    # (plain SGD keeps nothing, as in PyTorch)
                    state[number] = {name: value.detach() for name, value in kept.items()}
            groups.append({**group, "params": numbers})
            index += len(numbers)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Continue from a saved ``state_dict()``: each group's settings, and each
        parameter's state, matched to this optimizer's parameters by position."""
        saved_groups = state_dict["param_groups"]
        sizes = [len(g["params"]) for g in self.param_groups]
        saved_sizes = [len(g["params"]) for g in saved_groups]
        if sizes != saved_sizes:
            raise ValueError(
                f"{self._name}.load_state_dict: the saved optimizer has parameter groups of "
                f"{saved_sizes} parameters, this one of {sizes}. Make this optimizer the same "
                "way, for a model with the same layers.")
        lacking = sorted({key for g in saved_groups for key in self.defaults if key not in g})
        if lacking:
            raise ValueError(
                f"{self._name}.load_state_dict: the saved parameter groups have no {lacking}, "
                "settings this optimizer needs. Was the state saved from another kind of "
                "optimizer?")
        for group, saved in zip(self.param_groups, saved_groups):
            group.update({key: value for key, value in saved.items() if key != "params"})
        self._rules.clear()             # the saved state replaces the current one
        params = [(p, g) for g in self.param_groups for p in g["params"]]
        for index, values in state_dict["state"].items():
            param, group = params[index]
            rule = self._rule_for(param, index, group)
            for name, variable in _rule_state(rule, param).items():
                value = values[name]
                variable.assign(value.numpy() if isinstance(value, Tensor) else value)

    def __repr__(self):
        text = f"{type(self).__name__} ("
        for i, group in enumerate(self.param_groups):
            text += f"\nParameter Group {i}\n" + "".join(
                f"    {key}: {group[key]}\n" for key in sorted(group) if key != "params")
        return text + ")"


def _rule_state(rule, param):
    """``{name: Variable}``: the slots ``rule`` keeps for ``param`` (made if they are not yet
    there) and, if the rule counts steps, its step count."""
    state = dict(rule.slots_for(param))
    if rule.counts_steps:
        state["step"] = rule.step_variable(param)
    return state


def _describe(param, index):
    name = f" '{param.name}'" if getattr(param, "name", None) else ""
    return f"parameter {index}{name} (shape {tuple(param.shape)})"


def _layout(t):
    return f"{t.dtype} on {t.device.name} with shape {tuple(t.shape)}"


def _check(name, ok, problem):
    if not ok:
        raise ValueError(f"eg.optim.{name}: {problem}")


def _numbers(name, **values):
    """Each of ``values`` a real number (``lr='0.1'`` from a config file would fail deep in
    the first step, or in a comparison here)."""
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"eg.optim.{name}: {key} must be a number, got {value!r} "
                            f"({type(value).__name__}).")


def _non_negative(name, **values):
    _numbers(name, **values)
    for key, value in values.items():
        _check(name, value >= 0, f"{key} must be 0 or more, got {value}.")


class SGD(Optimizer):
    r"""``torch.optim.SGD``: $w \leftarrow w - \eta g$. With ``momentum`` $\mu$:
    $b \leftarrow \mu b + (1 - d) g$ ($b = g$ at the first step), $w \leftarrow w - \eta b$;
    ``nesterov``: $w \leftarrow w - \eta (g + \mu b)$. ``weight_decay`` $\lambda$: $g + \lambda w$
    is used for $g$."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False):
        _non_negative("SGD", lr=lr, momentum=momentum, weight_decay=weight_decay)
        _numbers("SGD", dampening=dampening)
        _check("SGD", not nesterov or (momentum > 0 and dampening == 0),
               "Nesterov momentum needs a momentum above 0 and dampening 0.")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def rule(self, group):
        if not group["momentum"]:
            return train.GradientDescentOptimizer, {"learning_rate": group["lr"]}
        return train.MomentumOptimizer, {"learning_rate": group["lr"],
                                         "momentum": group["momentum"],
                                         "use_nesterov": group["nesterov"],
                                         "dampening": group["dampening"]}


class Adam(Optimizer):
    r"""``torch.optim.Adam``: $m \leftarrow \beta_1 m + (1-\beta_1) g$,
    $v \leftarrow \beta_2 v + (1-\beta_2) g^2$, $w \leftarrow w - \eta \hat m / (\sqrt{\hat v} +
    \epsilon)$ with the bias-corrected $\hat m = m / (1-\beta_1^t)$, $\hat v = v / (1-\beta_2^t)$.
    ``weight_decay`` $\lambda$: $g + \lambda w$ is used for $g$ (L2; see ``AdamW``)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0):
        name = type(self).__name__
        _non_negative(name, lr=lr, eps=eps, weight_decay=weight_decay)
        _check(name, isinstance(betas, (tuple, list)) and len(betas) == 2,
               f"betas must be a pair (beta1, beta2), got {betas!r}.")
        _numbers(name, beta1=betas[0], beta2=betas[1])
        _check(name, all(0 <= b < 1 for b in betas), f"betas must be in [0, 1), got {betas}.")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def rule(self, group):
        beta1, beta2 = group["betas"]
        return train.AdamOptimizer, {"learning_rate": group["lr"], "beta1": beta1,
                                     "beta2": beta2, "epsilon": group["eps"],
                                     "epsilon_hat": False}


class AdamW(Adam):
    r"""``torch.optim.AdamW``: Adam, with weight decay "decoupled" from the gradient
    (Loshchilov & Hutter): $w \leftarrow (1 - \eta\lambda) w$, then Adam's step with $g$."""

    decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)


class Adadelta(Optimizer):
    r"""``torch.optim.Adadelta`` (Zeiler, 2012): $s \leftarrow \rho s + (1-\rho) g^2$,
    $u = g \sqrt{d + \epsilon} / \sqrt{s + \epsilon}$, $d \leftarrow \rho d + (1-\rho) u^2$,
    $w \leftarrow w - \eta u$. ``weight_decay`` $\lambda$: $g + \lambda w$ is used for $g$."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0):
        _non_negative("Adadelta", lr=lr, eps=eps, weight_decay=weight_decay, rho=rho)
        _check("Adadelta", rho <= 1, f"rho must be in [0, 1], got {rho}.")
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay))

    def rule(self, group):
        return train.AdadeltaOptimizer, {"learning_rate": group["lr"], "rho": group["rho"],
                                         "epsilon": group["eps"]}


class RMSprop(Optimizer):
    r"""``torch.optim.RMSprop`` (Hinton's lecture 6e): $s \leftarrow \alpha s + (1-\alpha) g^2$
    (from 0), $w \leftarrow w - \eta g / (\sqrt s + \epsilon)$. ``centered``: $s - \bar g^2$
    under the root, $\bar g$ the running mean of $g$. ``momentum`` $\mu$:
    $b \leftarrow \mu b + g / (\sqrt s + \epsilon)$, $w \leftarrow w - \eta b$."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False):
        _non_negative("RMSprop", lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay,
                      alpha=alpha)
        _check("RMSprop", alpha <= 1, f"alpha must be in [0, 1], got {alpha}.")
        super().__init__(params, dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                                      momentum=momentum, centered=centered))

    def rule(self, group):
        return train.RMSPropOptimizer, {
            "learning_rate": group["lr"], "decay": group["alpha"], "momentum": group["momentum"],
            "epsilon": group["eps"], "centered": group["centered"], "initial_mean_square": 0.0,
            "epsilon_in_root": False, "learning_rate_in_momentum": False}


class Adagrad(Optimizer):
    r"""``torch.optim.Adagrad`` (Duchi et al., 2011): $s \leftarrow s + g^2$ (from
    ``initial_accumulator_value``, 0), $w \leftarrow w - \eta_t g / (\sqrt s + \epsilon)$ with
    $\eta_t = \eta / (1 + (t - 1) \cdot$ ``lr_decay``$)$ at the parameter's step $t$."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10):
        _non_negative("Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                      initial_accumulator_value=initial_accumulator_value, eps=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value,
                                      eps=eps))

    def rule(self, group):
        return train.AdagradOptimizer, {
            "learning_rate": group["lr"],
            "initial_accumulator_value": group["initial_accumulator_value"],
            "epsilon": group["eps"], "lr_decay": group["lr_decay"]}


from . import lr_scheduler  # noqa: E402  (torch.optim.lr_scheduler; it needs Optimizer)
