r"""``torch.nn.utils``: clipping the gradients that ``backward()`` left in the parameters'
``.grad``, in place, between ``loss.backward()`` and ``optimizer.step()``:

    loss.backward()
    eg.nn.utils.clip_grad_norm_(net.parameters(), max_norm=1.0)
    optimizer.step()

``clip_grad_norm_`` scales all the gradients by one factor (the step keeps its direction), as
TF's ``eg.clip_by_global_norm`` does to a list of gradient tensors; ``clip_grad_value_`` clips
each entry to $[-c, c]$, which turns the step.
"""
import math

from ..context import no_grad
from ..ops.math import clip
from ..ops.reduce import vector_norm
from ..ops.shape import stack
from ..tensor import Tensor, tensor

__all__ = ["clip_grad_norm_", "clip_grad_value_"]


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    r"""Scale the ``.grad`` of ``parameters`` in place so that their total norm is at most
    ``max_norm`` (``torch.nn.utils.clip_grad_norm_``); returns the total norm *before*
    clipping, a tensor. The total norm is the ``norm_type`` norm of the gradients' norms, for
    the default 2 the length of all of them as one vector, $\sqrt{\sum_k \lVert g_k
    \rVert^2}$; the factor is $\min(1, \text{max\_norm} / (\text{norm} + 10^{-6}))$.
    Parameters without a gradient (``.grad`` None) are skipped. ``foreach`` (PyTorch's choice
    of kernels) changes nothing here."""
    grads = [p.grad for p in _parameter_list(parameters, "clip_grad_norm_")
             if p.grad is not None]
    if not grads:
        return tensor(0.0)
    norm_type = float(norm_type)
    with no_grad():
        total = vector_norm(stack([vector_norm(g, norm_type) for g in grads]), norm_type)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` is "
                "non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set `error_if_nonfinite=False`")
        factor = clip(max_norm / (total + 1e-6), max=1.0)
        for g in grads:
            g.mul_(factor)
    return total


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clip every entry of the ``.grad`` of ``parameters`` to ``[-clip_value, clip_value]``, in
    place (``torch.nn.utils.clip_grad_value_``). Unlike ``clip_grad_norm_`` this changes the
    direction of the step."""
    clip_value = float(clip_value)
    with no_grad():
        for p in _parameter_list(parameters, "clip_grad_value_"):
            if p.grad is not None:
                p.grad.copy_(clip(p.grad, -clip_value, clip_value))


def _parameter_list(parameters, caller):
    """One tensor or an iterable of them (``net.parameters()``, a generator, is read once)."""
    if isinstance(parameters, Tensor):
        return [parameters]
    if callable(getattr(parameters, "parameters", None)):
        raise TypeError(f"{caller} got the model itself ({type(parameters).__name__}); give "
                        f"it the model's parameters: {caller}(net.parameters(), ...).")
    return list(parameters)
