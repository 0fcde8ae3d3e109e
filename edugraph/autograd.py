"""PyTorch's ``torch.autograd`` names, for the slides' older PyTorch code:

    from edugraph.autograd import Variable
    x = Variable(eg.randn(N, D), requires_grad=True)

Since PyTorch 0.4 a ``Variable`` is simply a tensor; so it is here. ``Function`` is how you
write your own node (``autograd_function.py``). The anomaly switches
(``eg.autograd.set_detect_anomaly(True)``, ``with eg.autograd.detect_anomaly():``) turn on the
numerics check of ``edugraph/debugging.py``.
"""
from .autodiff import backward, grad
from .autograd_function import Function, FunctionCtx
from .debugging import detect_anomaly, is_anomaly_enabled, set_detect_anomaly
from .tensor import Tensor, tensor

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "grad", "set_detect_anomaly",
           "detect_anomaly", "is_anomaly_enabled"]


def Variable(data, requires_grad=False):
    """A leaf tensor with ``data``'s values (shared, not copied) and ``requires_grad``."""
    leaf = Tensor(data._value, data.device) if isinstance(data, Tensor) else tensor(data)
    return leaf.requires_grad_(requires_grad)
