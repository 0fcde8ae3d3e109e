r"""Learning-rate schedules (``torch.optim.lr_scheduler``): ``scheduler = StepLR(optimizer,
step_size=1, gamma=0.7)``, then ``scheduler.step()`` once per epoch, after that epoch's
``optimizer.step()`` calls.

A scheduler counts epochs in ``last_epoch`` (0 once it is made) and, at each ``step()``, writes
each parameter group's learning rate for the new epoch into ``group["lr"]``, where the
optimizer reads it at its next step. That rate depends only on the epoch and on the group's
starting rate (``base_lrs``, kept in the group as ``"initial_lr"``, as PyTorch keeps it). So
``LRScheduler`` holds the mechanism, and each schedule is only its formula, ``get_lr``.

PyTorch computes the same rates, most of them by a recurrence on ``group["lr"]`` (its
"chainable" form: multiply by $\gamma$ at each milestone...). The closed forms here are easier
to read and give the same numbers, with one difference: a rate written into ``group["lr"]`` by
hand is replaced at the next ``step()``, and two schedulers on one optimizer do not combine
(PyTorch multiplies their effects).
"""
import bisect
import math

from . import Optimizer

__all__ = ["LRScheduler", "StepLR", "MultiStepLR", "ExponentialLR", "LambdaLR",
           "CosineAnnealingLR"]


class LRScheduler:
    """The base of learning-rate schedules: a subclass gives ``get_lr``, the rates at epoch
    ``last_epoch``.

    To resume training, load a saved ``state_dict()``. PyTorch's other way, the constructor
    argument ``last_epoch``, is left out: PyTorch's recurrences then keep each group's
    current rate for one more epoch, which a closed form does not reproduce."""

    _not_state = ("optimizer",)         # what state_dict leaves out: not numbers to restore

    def __init__(self, optimizer):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"{type(self).__name__} schedules an eg.optim optimizer (eg.optim.SGD("
                f"model.parameters(), lr=0.1)...), not a {type(optimizer).__name__}. A TF1 "
                "optimizer (eg.train...) takes its learning rate when it is made.")
        self.optimizer = optimizer
        for group in optimizer.param_groups:    # (kept if an earlier schedule set it)
            group.setdefault("initial_lr", group["lr"])
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = -1
        self.step()                     # the rates of epoch 0

    def get_lr(self):
        """The learning rate of each parameter group at epoch ``last_epoch``."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr().")

    def step(self):
        """Move to the next epoch and set each group's ``"lr"`` for it."""
        self.last_epoch += 1
        self._last_lr = self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, self._last_lr):
            group["lr"] = lr

    def get_last_lr(self):
        """The learning rates the last ``step()`` set, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self):
        """The schedule's state (epoch, base rates, settings), for ``eg.save`` in a
        checkpoint beside the model's and the optimizer's."""
        return {key: value for key, value in vars(self).items() if key not in self._not_state}

    def load_state_dict(self, state_dict):
        """Continue from a saved ``state_dict()``."""
        vars(self).update(state_dict)


def _check_positive_int(scheduler, name, value):
    if not isinstance(value, int) or value < 1:
        raise ValueError(f"{scheduler}: {name} is a number of epochs, 1 or more; got {value!r}.")


class StepLR(LRScheduler):
    r"""Multiply the rate by ``gamma`` every ``step_size`` epochs:
    $\eta_e = \eta_0 \gamma^{\lfloor e / s \rfloor}$."""

    def __init__(self, optimizer, step_size, gamma=0.1):
        _check_positive_int("StepLR", "step_size", step_size)
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer)

    def get_lr(self):
        factor = self.gamma ** (self.last_epoch // self.step_size)
        return [base_lr * factor for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    r"""Multiply the rate by ``gamma`` at each milestone epoch: $\eta_e = \eta_0 \gamma^k$,
    $k$ the number of milestones $\le e$ (a milestone listed twice counts twice)."""

    def __init__(self, optimizer, milestones, gamma=0.1):
        self.milestones, self.gamma = sorted(milestones), gamma
        super().__init__(optimizer)

    def get_lr(self):
        factor = self.gamma ** bisect.bisect_right(self.milestones, self.last_epoch)
        return [base_lr * factor for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    r"""Multiply the rate by ``gamma`` every epoch: $\eta_e = \eta_0 \gamma^e$."""

    def __init__(self, optimizer, gamma):
        self.gamma = gamma
        super().__init__(optimizer)

    def get_lr(self):
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class LambdaLR(LRScheduler):
    r"""The starting rate times a function of the epoch: $\eta_e = \eta_0 \lambda(e)$.
    ``lr_lambda``: one function for every group, or a list with one per group.

    >>> LambdaLR(optimizer, lambda epoch: 0.95 ** epoch)"""

    _not_state = ("optimizer", "lr_lambdas")  # functions are code: give them to the new one

    def __init__(self, optimizer, lr_lambda):
        groups = len(getattr(optimizer, "param_groups", ()))
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != groups:
                raise ValueError(f"LambdaLR: got {len(lr_lambda)} lr_lambda functions for "
                                 f"{groups} parameter groups; give one per group, or one "
                                 "function for all.")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        super().__init__(optimizer)

    def get_lr(self):
        return [base_lr * lr_lambda(self.last_epoch)
                for base_lr, lr_lambda in zip(self.base_lrs, self.lr_lambdas)]


class CosineAnnealingLR(LRScheduler):
    r"""From the starting rate down to ``eta_min`` along half a cosine over ``T_max`` epochs
    (SGDR, Loshchilov & Hutter, without restarts):
    $\eta_e = \eta_{min} + (\eta_0 - \eta_{min}) (1 + \cos(\pi e / T_{max})) / 2$.
    After ``T_max`` the cosine goes on: the rate climbs back up, as in PyTorch."""

    def __init__(self, optimizer, T_max, eta_min=0.0):     # noqa: N803 (PyTorch's names)
        _check_positive_int("CosineAnnealingLR", "T_max", T_max)
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer)

    def get_lr(self):
        cosine = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base_lr - self.eta_min) * cosine for base_lr in self.base_lrs]
