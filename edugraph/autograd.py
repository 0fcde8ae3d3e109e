"""PyTorch's ``torch.autograd`` names, for the slides' older PyTorch code:

    from edugraph.autograd import Variable
    x = Variable(eg.randn(N, D), requires_grad=True)

Since PyTorch 0.4 a ``Variable`` is simply a tensor; so it is here.
"""
from .autodiff import backward, grad
from .tensor import Tensor, tensor

__all__ = ["Variable", "backward", "grad"]


def Variable(data, requires_grad=False):
    """A leaf tensor with ``data``'s values (shared, not copied) and ``requires_grad``."""
    leaf = Tensor(data._value, data.device) if isinstance(data, Tensor) else tensor(data)
    return leaf.requires_grad_(requires_grad)
