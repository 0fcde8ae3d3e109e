"""Neural-network building blocks, PyTorch and ``tf.nn`` style.

* functions as in ``tf.nn``: ``relu``, ``softmax``, ``conv2d``, ``max_pool2d``, ``moments``,
  ``batch_normalization``, ``sparse_softmax_cross_entropy_with_logits``...;
* ``Module``, the base class of every layer and model (see ``module.py``);
* PyTorch's class names, as thin aliases of the Keras layers in ``eg.layers`` (one
  implementation each; they differ in constructor arguments, in PyTorch's initial weights, in
  starting in training mode, as PyTorch modules do, and in printing as PyTorch prints them).
  ``Linear``'s ``kernel`` is PyTorch's ``weight`` transposed. ``Conv2d`` and ``MaxPool2d``
  take PyTorch's NCHW images (batch, channels, height, width) and transpose them to the Keras
  layers' NHWC and back; ``Conv2d``'s ``kernel`` is Keras's (kH, kW, in, out), PyTorch's
  ``weight`` is ``kernel.permute(3, 2, 0, 1)``. ``Sequential`` is Keras's with PyTorch's
  habits;
* PyTorch's loss modules, ``CrossEntropyLoss``, ``NLLLoss``, ``MSELoss``, ``L1Loss``, and
  ``torch.nn.functional`` as ``eg.nn.functional`` (``import edugraph.nn.functional as F``).
"""
import math
from collections.abc import Mapping

from ..ops.activation import (  # noqa: F401
    dropout, elu, leaky_relu, log_softmax, relu, sigmoid, softmax, softplus, tanh)
from ..ops.conv import _pair, conv2d, extract_patches, max_pool, max_pool2d  # noqa: F401
from ..ops.base import accepting_tf1_keywords as _accepting_tf1_keywords
from ..ops.reduce import logsumexp, moments  # noqa: F401
from .module import KerasTensor, Module  # noqa: F401
from . import functional
from .. import layers as _layers
from ..models import sequential as _sequential
from ..initializers import RandomUniform as _RandomUniform
from ..layers.normalization import batch_normalization  # noqa: F401
from ..losses import (sigmoid_cross_entropy_with_logits, l2_loss,  # noqa: F401
                      softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits)

moments = _accepting_tf1_keywords(moments)      # TF1 spells keepdims keep_dims


def _pytorch_initial_weights(fan_in, kwargs):
    """PyTorch's default for Linear and Conv2d: weights and biases uniform in ±1/√fan_in
    (its kaiming_uniform with a = √5), not Keras's Glorot weights and zero biases."""
    bound = 1 / math.sqrt(fan_in)
    kwargs.setdefault("kernel_initializer", _RandomUniform(-bound, bound))
    kwargs.setdefault("bias_initializer", _RandomUniform(-bound, bound))
    return kwargs


class Linear(_layers.Dense):
    """``nn.Linear(in_features, out_features, bias=True)``: y = x W + b (W = PyTorch's weightᵀ)."""

    training = True

    def __init__(self, in_features, out_features, bias=True, **kwargs):
        super().__init__(out_features, use_bias=bias, input_dim=in_features,
                         **_pytorch_initial_weights(in_features, kwargs))
        self.build_for((None, in_features))

    def extra_repr(self):
        return f"in_features={self.kernel.shape[0]}, out_features={self.units}, " \
               f"bias={self.use_bias}"


class _ChannelsFirst:
    """PyTorch's NCHW images through a Keras layer built for NHWC: shapes and tensors are
    transposed on the way in and back on the way out."""

    def build(self, input_shape):
        super().build(_nhwc(input_shape, self))

    def compute_output_shape(self, input_shape):
        n, h, w, c = super().compute_output_shape(_nhwc(input_shape, self))
        return (n, c, h, w)

    def call(self, inputs):
        where = f"{type(self).__name__} '{self.name}'"
        return functional.channels_first(super().call(functional.channels_last(inputs, where)))


def _nhwc(shape, layer):
    n, c, h, w = functional.check_images(shape, f"{type(layer).__name__} '{layer.name}'")
    return (n, h, w, c)


class Conv2d(_ChannelsFirst, _layers.Conv2D):
    """``nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True)`` on
    NCHW images; ``padding``: zeros on each side, or "valid" / "same"."""

    training = True

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True,
                 **kwargs):
        fan_in = in_channels * math.prod(_pair(kernel_size, "kernel_size"))
        super().__init__(out_channels, kernel_size, stride, padding, use_bias=bias,
                         **_pytorch_initial_weights(fan_in, kwargs))
        self.build_for((None, in_channels, None, None))

    def extra_repr(self):
        padding = "" if self.padding in ((0, 0), "valid") else f", padding={self.padding}"
        return (f"{self.kernel.shape[2]}, {self.filters}, kernel_size={self.kernel_size}, "
                f"stride={self.strides}{padding}" + ("" if self.use_bias else ", bias=False"))


class MaxPool2d(_ChannelsFirst, _layers.MaxPooling2D):
    """``nn.MaxPool2d(kernel_size, stride=None, padding=0)`` on NCHW images; the stride
    defaults to the window."""

    training = True

    def __init__(self, kernel_size, stride=None, padding=0, **kwargs):
        super().__init__(kernel_size, stride, padding, **kwargs)

    def extra_repr(self):
        return f"kernel_size={self.pool_size}, stride={self.strides}, padding={self.padding}"


class Dropout(_layers.Dropout):
    """``nn.Dropout(p=0.5)``: active until ``eval()``."""

    training = True

    def __init__(self, p=0.5, **kwargs):
        super().__init__(p, **kwargs)

    def extra_repr(self):
        return f"p={self.rate}"


class BatchNorm1d(_layers.BatchNormalization):
    """``nn.BatchNorm1d(num_features, eps=1e-5, momentum=0.1)`` on (batch, features) inputs.
    PyTorch's momentum weighs the *new* batch: it is 1 − Keras's momentum."""

    training = True

    def __init__(self, num_features, eps=1e-5, momentum=0.1, **kwargs):
        super().__init__(axis=-1, momentum=1 - momentum, epsilon=eps, **kwargs)
        self.build_for((None, num_features))


class LayerNorm(_layers.LayerNormalization):
    """``nn.LayerNorm(normalized_shape, eps=1e-5)`` over the last axis."""

    training = True

    def __init__(self, normalized_shape, eps=1e-5, **kwargs):
        super().__init__(epsilon=eps, **kwargs)
        size = normalized_shape if isinstance(normalized_shape, int) else normalized_shape[-1]
        self.build_for((None, size))


class Embedding(_layers.Embedding):
    """``nn.Embedding(num_embeddings, embedding_dim)``, initialised N(0, 1) like PyTorch."""

    training = True

    def __init__(self, num_embeddings, embedding_dim, **kwargs):
        kwargs.setdefault("embeddings_initializer", "random_normal")
        super().__init__(num_embeddings, embedding_dim, **kwargs)
        self.build_for((None, None))


class _Activation(_layers.Activation):
    """PyTorch's activation modules (``nn.Sigmoid()``...): Keras's ``Activation`` layer with
    the function fixed and its settings printed as PyTorch prints them."""

    training = True
    function = None

    def __init__(self, **settings):
        super().__init__(lambda x: type(self).function(x, **settings))
        self.settings = settings

    def extra_repr(self):
        return ", ".join(f"{k}={v}" for k, v in self.settings.items())


class ReLU(_Activation):
    function = staticmethod(relu)


class Sigmoid(_Activation):
    function = staticmethod(sigmoid)


class Tanh(_Activation):
    function = staticmethod(tanh)


class Softplus(_Activation):
    function = staticmethod(softplus)


class Identity(_Activation):
    function = staticmethod(lambda x: x)


class LeakyReLU(_Activation):
    function = staticmethod(functional.leaky_relu)

    def __init__(self, negative_slope=0.01):
        super().__init__(negative_slope=negative_slope)


class ELU(_Activation):
    function = staticmethod(elu)

    def __init__(self, alpha=1.0):
        super().__init__(alpha=alpha)


class Softmax(_Activation):
    function = staticmethod(functional.softmax)

    def __init__(self, dim=None):
        super().__init__(dim=_softmax_dim(dim, type(self).__name__))


class LogSoftmax(_Activation):
    function = staticmethod(functional.log_softmax)

    def __init__(self, dim=None):
        super().__init__(dim=_softmax_dim(dim, type(self).__name__))


def _softmax_dim(dim, where):
    if dim is None:
        raise ValueError(f"nn.{where} needs the dimension of the classes, e.g. nn.{where}("
                         "dim=1) for (batch, classes). (PyTorch guesses one when it is left "
                         "out, with a deprecation warning.)")
    return dim


class Flatten(_layers.Flatten):
    """``nn.Flatten(start_dim=1, end_dim=-1)``: (batch, a, b, ...) → (batch, a·b·...)."""

    training = True

    def __init__(self, start_dim=1, end_dim=-1, **kwargs):
        super().__init__(**kwargs)
        self.start_dim, self.end_dim = start_dim, end_dim

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Sequential(_sequential.Sequential):
    """``nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))``: each module feeds the
    next; or ``nn.Sequential(OrderedDict(fc1=..., act=...))``, whose names become paths
    (``fc1.kernel``) and attributes (``model.fc1``). Keras's Sequential, with PyTorch's habits:
    it starts in training mode, ``model[0]`` is a module and ``model[1:]`` a Sequential."""

    training = True

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], Mapping):
            names, modules = list(modules[0]), list(modules[0].values())
            taken = [n for n in names if hasattr(self, n)]
            if taken:
                raise ValueError(f"nn.Sequential: {taken} cannot name modules: they are "
                                 "attributes of Sequential already. Choose other names.")
        else:
            names = None
        for module in modules:
            self.add(module)            # (named by position, "0", "1"..., as in PyTorch)
        if names is not None:
            self._modules.clear()
            for name, module in zip(names, modules):
                self._modules[name] = module
                object.__setattr__(self, name, module)

    def append(self, module):
        if str(len(self)) in self._modules:
            raise ValueError(f"nn.Sequential.append: the new module would be named "
                             f"'{len(self)}', which names another module already.")
        self.add(module)
        return self

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(dict(list(self._modules.items())[index]))
        return super().__getitem__(index)


class _Loss(Module):
    """A loss as a module (PyTorch's ``nn.MSELoss()``...): ``loss_fn(pred, target)``."""

    training = True

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = functional.check_reduction(reduction, type(self).__name__)


class CrossEntropyLoss(_Loss):
    """``nn.CrossEntropyLoss()(logits, class_ids)``: softmax cross-entropy from logits (see
    ``functional.cross_entropy``; ``weight`` per class, ``label_smoothing``)."""

    def __init__(self, weight=None, *, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight, self.label_smoothing = weight, label_smoothing

    def forward(self, input, target):
        return functional.cross_entropy(input, target, self.weight, self.reduction,
                                        self.label_smoothing)


class NLLLoss(_Loss):
    """``nn.NLLLoss()(log_probs, class_ids)``: the negative log-likelihood of the target
    classes, from log-probabilities (see ``functional.nll_loss``; ``weight`` per class)."""

    def __init__(self, weight=None, *, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, target):
        return functional.nll_loss(input, target, self.weight, self.reduction)


class MSELoss(_Loss):
    """``nn.MSELoss(reduction='sum')(pred, target)``: squared errors (shapes must match)."""

    def __init__(self, *, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        return functional.mse_loss(input, target, self.reduction)


class L1Loss(_Loss):
    """``nn.L1Loss()(pred, target)``: absolute errors (shapes must match)."""

    def __init__(self, *, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        return functional.l1_loss(input, target, self.reduction)
