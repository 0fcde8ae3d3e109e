"""Neural-network building blocks, PyTorch and ``tf.nn`` style.

* functions as in ``tf.nn``: ``relu``, ``softmax``, ``conv2d``, ``max_pool2d``, ``moments``,
  ``batch_normalization``, ``sparse_softmax_cross_entropy_with_logits``...;
* ``Module``, PyTorch's base class: edugraph's one layer class (``module.py``), in PyTorch's
  training mode from the start;
* PyTorch's modules, with PyTorch's parameters, so that a state dict has PyTorch's names and
  shapes: ``Linear`` (``weight`` (out, in)), ``Conv2d`` (``weight`` (out, in, kH, kW)) and
  their ``Lazy`` forms, which compute with ``functional`` as PyTorch's do; ``BatchNorm1d`` /
  ``2d`` with PyTorch's running statistics; ``Parameter``, ``ModuleList``, ``nn.init``;
  the recurrent ``RNN``, ``LSTM``, ``GRU`` and their one-step ``RNNCell``, ``LSTMCell``,
  ``GRUCell`` (``weight_ih_l0``... in ``recurrent.py``).
  Modules without parameters are the Keras layers in ``eg.layers`` under PyTorch's names
  (activations, ``Dropout``, ``Flatten``; ``MaxPool2d`` and ``AvgPool2d`` transpose PyTorch's
  NCHW images to Keras's NHWC and back). All start in training mode, as PyTorch's modules do,
  and print as PyTorch prints them. ``Sequential`` is Keras's with PyTorch's habits;
* PyTorch's loss modules, ``CrossEntropyLoss``, ``NLLLoss``, ``BCELoss``, ``BCEWithLogitsLoss``,
  ``MSELoss``, ``L1Loss``, and ``torch.nn.functional`` as ``eg.nn.functional`` (``import
  edugraph.nn.functional as F``).
"""
import itertools
import math
import numbers
from collections.abc import Mapping

import numpy as np

from ..ops.activation import (  # noqa: F401
    elu, leaky_relu, log_softmax, relu, sigmoid, softmax, softplus, tanh)
from ..ops.activation import tf_dropout as dropout  # noqa: F401  (keep_prob in TF1 graphs)
from ..ops.conv import (_pair, avg_pool, avg_pool2d, conv2d, extract_patches,  # noqa: F401
                        max_pool, max_pool2d)
from ..ops.conv import padding_argument
from ..ops.random import ones, zeros
from ..ops.base import accepting_tf1_keywords as _accepting_tf1_keywords, rank_known
from ..ops.reduce import logsumexp, moments  # noqa: F401
from .bias import bias_add  # noqa: F401  (tf.nn.bias_add)
from ..ops.shape import expand_dims, gather, squeeze
from . import module as _module
from .module import KerasTensor, fan_in_shape  # noqa: F401
from . import functional, init  # noqa: F401
from .. import layers as _layers
from ..layers.conv import windows_grid
from ..models import sequential as _sequential
from .. import initializers as _initializers
from ..initializers import RandomUniform as _RandomUniform
from ..layers.normalization import batch_normalization  # noqa: F401
from ..losses import (sigmoid_cross_entropy_with_logits, l2_loss,  # noqa: F401
                      softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits)
from ..context import no_grad
from ..errors import ShapeError
from ..missing import MissingNameError
from ..tensor import Tensor, check_flag, int64, tensor
from ..variable import Variable

moments = _accepting_tf1_keywords(moments)      # TF1 spells keepdims keep_dims


class Parameter(Variable):
    """``nn.Parameter(eg.randn(3, 4))``: a tensor a module learns (a Variable: a leaf that
    requires grad). Assigned to a module's attribute, it is found by ``parameters()``, also
    when made with ``requires_grad=False`` (a frozen parameter, as in PyTorch)."""

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        check_flag(requires_grad, "requires_grad", "nn.Parameter()")
        super().__init__(zeros(0) if data is None else data)
        self.requires_grad = self.requires_grad and requires_grad

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self)


class Module(_module.Module):
    """PyTorch's ``nn.Module``: subclass it, assign the layers in ``__init__`` and write
    ``forward``. It is edugraph's one layer class (``module.py``), which Keras's layers share,
    with PyTorch's mode: a new module starts in training mode (``training`` is True), as in
    PyTorch, until ``eval()``. Keras's layers have no mode of their own; they are told
    ``training=`` per call. Every module in ``eg.nn`` derives from this one."""

    training = True


def _parameter(module, name, shape, initializer):
    """A new Parameter of ``module``, named as Keras names its variables (``linear/weight``)."""
    parameter = Parameter(_initializers.get(initializer)(shape, module.dtype))
    parameter.name = f"{module.name}/{name}"
    setattr(module, name, parameter)
    return parameter


def _is_size(n):
    return isinstance(n, numbers.Integral) and not isinstance(n, bool) and n >= 0


def _uniform_fan_in(fan_in):
    """PyTorch's initial weights and biases for Linear and Conv2d: uniform in ±1/√fan_in (its
    kaiming_uniform with a = √5 gives that bound), not Keras's Glorot weights and zero biases."""
    bound = 1 / math.sqrt(fan_in) if fan_in else 0.0   # (no inputs: nothing to draw, as torch)
    return _RandomUniform(-bound, bound)


class Linear(Module):
    r"""``nn.Linear(in_features, out_features, bias=True)``: $y = x W^\top + b$, with
    PyTorch's ``weight`` of shape (out_features, in_features) (a Keras Dense kernel is its
    transpose). ``nn.LazyLinear(out_features)`` finds ``in_features`` on the first call."""

    def __init__(self, in_features, out_features, bias=True, **kwargs):
        super().__init__(**kwargs)
        for what, size in (("in_features", in_features), ("out_features", out_features)):
            if not (size is None and what == "in_features" or _is_size(size)):
                raise ValueError(f"{type(self).__name__}: {what} must be a whole number, 0 or "
                                 f"more, got {size!r} (e.g. nn.Linear(784, 10)).")
        self.out_features, self.use_bias = out_features, bias
        if in_features is not None:
            self.build_for((None, in_features))

    def build(self, input_shape):
        in_features = fan_in_shape(input_shape, f"{type(self).__name__} '{self.name}'")
        initial = _uniform_fan_in(in_features)
        _parameter(self, "weight", (self.out_features, in_features), initial)
        self.bias = _parameter(self, "bias", (self.out_features,), initial) if self.use_bias \
            else None

    def forward(self, input):
        return functional.linear(input, self.weight, self.bias)

    def input_shape_for(self, weight_shape):
        return (None, weight_shape[1])

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.out_features,)

    def extra_repr(self):
        return f"in_features={self.weight.shape[1]}, out_features={self.out_features}, " \
               f"bias={self.use_bias}"


class _Lazy:
    """PyTorch's lazy modules: the first call sizes the parameters, and then the module
    *becomes* the plain one, ``cls_to_become`` (``type(m) == nn.Linear`` afterwards, as in
    PyTorch)."""

    cls_to_become = None

    def build(self, input_shape):
        super().build(input_shape)
        self.__class__ = self.cls_to_become

    def materialize(self, state_dict, prefix):
        """Size the parameters from ``state_dict``'s: ``load_state_dict`` before the first
        call works, as in PyTorch."""
        for name in ("weight", "running_mean"):
            if prefix + name in state_dict:
                self.build_for(self.input_shape_for(tuple(state_dict[prefix + name].shape)))
                return


class LazyLinear(_Lazy, Linear):
    """``nn.LazyLinear(out_features)``: a Linear whose ``in_features`` is the last dimension
    of its first input (its weights do not exist before that call)."""

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, **kwargs):
        super().__init__(None, out_features, bias, **kwargs)


class _OneImageOrBatch:
    """PyTorch's image modules take one image, (C, H, W), as well as a batch, (N, C, H, W):
    one image runs as a batch of one (``x.unsqueeze(0)``), and the result loses that axis
    again (gradients pass through both)."""

    def __call__(self, *args, **kwargs):
        image = args[0] if args else None
        if isinstance(image, Tensor) and rank_known(image.shape) and len(image.shape) == 3 \
                and self._one_image(image.shape):
            return squeeze(super().__call__(expand_dims(image, 0), *args[1:], **kwargs), 0)
        return super().__call__(*args, **kwargs)

    def _one_image(self, shape):
        return True


class Conv2d(_OneImageOrBatch, Module):
    """``nn.Conv2d(in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True)``
    on NCHW images (or one image, (C, H, W)), with PyTorch's ``weight`` of shape
    (out_channels, in_channels, kH, kW); ``padding``: zeros on each side, or "valid" /
    "same". ``nn.LazyConv2d(out_channels, kernel_size...)`` finds ``in_channels`` on the
    first call."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias=True,
                 **kwargs):
        super().__init__(**kwargs)
        self.out_channels, self.use_bias = out_channels, bias
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.stride = _pair(stride, "stride")
        self.padding = padding_argument(padding)
        if in_channels is not None:
            self.build_for((None, in_channels, None, None))

    def build(self, input_shape):
        in_channels = functional.check_images(input_shape, f"Conv2d '{self.name}'")[1]
        initial = _uniform_fan_in(in_channels * math.prod(self.kernel_size))
        _parameter(self, "weight", (self.out_channels, in_channels) + self.kernel_size, initial)
        self.bias = _parameter(self, "bias", (self.out_channels,), initial) if self.use_bias \
            else None

    def forward(self, input):
        functional.check_images(input.shape, f"Conv2d '{self.name}'")
        return functional.conv2d(input, self.weight, self.bias, self.stride, self.padding)

    def input_shape_for(self, weight_shape):
        return (None, weight_shape[1], None, None)

    def _one_image(self, shape):
        """(C, H, W) with the layer's C: one image; (N, H, W) grey images are told to add
        their channel axis (``x.unsqueeze(1)``) by ``check_images``."""
        weight = self.weight if self.built else None
        return weight is None or shape[0] == weight.shape[1]

    def compute_output_shape(self, input_shape):
        n, _, h, w = functional.check_images(input_shape, f"Conv2d '{self.name}'")
        _, rows, columns = windows_grid((n, h, w, None), self.kernel_size, self.stride,
                                        self.padding)
        return (n, self.out_channels, rows, columns)

    def extra_repr(self):
        padding = "" if self.padding in ((0, 0), "valid") else f", padding={self.padding}"
        return (f"{self.weight.shape[1]}, {self.out_channels}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}{padding}" + ("" if self.use_bias else ", bias=False"))


class LazyConv2d(_Lazy, Conv2d):
    """``nn.LazyConv2d(out_channels, kernel_size, stride=1, padding=0)``: a Conv2d whose
    ``in_channels`` is found on its first call."""

    cls_to_become = Conv2d

    def __init__(self, out_channels, kernel_size, stride=1, padding=0, bias=True, **kwargs):
        super().__init__(None, out_channels, kernel_size, stride, padding, bias, **kwargs)


class _ChannelsFirstPooling(_OneImageOrBatch, Module):
    """PyTorch's pooling modules: a Keras pooling layer, built for NHWC images, on NCHW ones
    (shapes and tensors are transposed on the way in and back on the way out)."""

    def compute_output_shape(self, input_shape):
        n, h, w, c = super().compute_output_shape(_nhwc(input_shape, self))
        return (n, c, h, w)

    def call(self, inputs):
        where = f"{type(self).__name__} '{self.name}'"
        return functional.channels_first(super().call(functional.channels_last(inputs, where)))

    def extra_repr(self):
        return f"kernel_size={self.pool_size}, stride={self.strides}, padding={self.padding}"


def _nhwc(shape, layer):
    n, c, h, w = functional.check_images(shape, f"{type(layer).__name__} '{layer.name}'")
    return (n, h, w, c)


class MaxPool2d(_ChannelsFirstPooling, _layers.MaxPooling2D):
    """``nn.MaxPool2d(kernel_size, stride=None, padding=0)`` on NCHW images; the stride
    defaults to the window. PyTorch's other options are taken at their defaults only."""

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False, **kwargs):
        functional.check_max_pool_options(dilation, ceil_mode, return_indices, "MaxPool2d")
        super().__init__(kernel_size, stride, padding, **kwargs)


class AvgPool2d(_ChannelsFirstPooling, _layers.AveragePooling2D):
    """``nn.AvgPool2d(kernel_size, stride=None, padding=0, ceil_mode=False,
    count_include_pad=True)`` on NCHW images: the mean of each window (a window over the
    zero padding divides by its whole size unless ``count_include_pad=False``)."""

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, **kwargs):
        functional.check_no_ceil_mode(ceil_mode, "AvgPool2d")
        super().__init__(kernel_size, stride, padding, count_include_pad=count_include_pad,
                         **kwargs)


class AdaptiveAvgPool2d(_OneImageOrBatch, Module):
    """``nn.AdaptiveAvgPool2d((1, 1))``: NCHW images of any size averaged onto an
    ``output_size`` grid (``functional.adaptive_avg_pool2d``)."""

    def __init__(self, output_size, **kwargs):
        super().__init__(**kwargs)
        self.output_size = output_size

    def forward(self, input):
        return functional.adaptive_avg_pool2d(input, self.output_size)

    def compute_output_shape(self, input_shape):
        n, c, h, w = functional.check_images(input_shape, f"AdaptiveAvgPool2d '{self.name}'")
        sizes = (self.output_size,) * 2 if isinstance(self.output_size, int) else \
            self.output_size
        return (n, c) + tuple(old if new is None else new for old, new in zip((h, w), sizes))

    def extra_repr(self):
        return f"output_size={self.output_size}"


class Dropout(Module, _layers.Dropout):
    """``nn.Dropout(p=0.5)``: active until ``eval()``."""

    def __init__(self, p=0.5, inplace=False, **kwargs):
        super().__init__(p, **kwargs)
        self.inplace = inplace              # (accepted, as by the activations: a new tensor)

    def extra_repr(self):
        return f"p={self.rate}, inplace={self.inplace}"


class _BatchNorm(Module):
    r"""PyTorch's batch norm over dimension 1, the channels (``functional.batch_norm``):
    learnt ``weight`` and ``bias`` per channel, and the running statistics ``running_mean``
    and ``running_var`` (the *unbiased* batch variance), updated while training as
    $\text{running} \leftarrow (1 - \text{momentum})\,\text{running} + \text{momentum}
    \cdot \text{batch}$ (``momentum=None``: the plain average of all batches so far). Keras's
    ``BatchNormalization`` is the same maths with its own names and conventions."""

    dims = None                     # the input's number of dimensions (with the batch's)

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, *, bias=True, **kwargs):
        super().__init__(**kwargs)
        self.eps, self.momentum = eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.use_bias = affine and bias
        if num_features is not None:        # (built now, but its output shape is known only
            self.build(self.input_shape_for((num_features,)))   # from a first call's input)
            self.built = True

    def build(self, input_shape):
        self._check_dims(input_shape)
        channels = input_shape[1]
        self.weight = _parameter(self, "weight", (channels,), "ones") if self.affine else None
        self.bias = _parameter(self, "bias", (channels,), "zeros") if self.use_bias else None
        if self.track_running_stats:
            self.register_buffer("running_mean", zeros(channels, dtype=self.dtype))
            self.register_buffer("running_var", ones(channels, dtype=self.dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64))
        else:
            self.running_mean = self.running_var = None

    def input_shape_for(self, weight_shape):
        return (None, weight_shape[0]) + (1,) * (self.dims[0] - 2)

    def _check_dims(self, shape):
        if len(shape) not in self.dims:
            expected = " or ".join(f"{d}-D" for d in self.dims)
            raise ShapeError(f"{type(self).__name__} '{self.name}' expects {expected} input "
                             f"with the channels in dimension 1, got shape {tuple(shape)}.")

    def forward(self, input):
        self._check_dims(input.shape)
        sized_by = self.weight if self.affine else self.running_mean
        if sized_by is not None and input.shape[1] not in (None, sized_by.shape[0]):
            raise ShapeError(
                f"{type(self).__name__} '{self.name}' normalises {sized_by.shape[0]} channels "
                f"(dimension 1), but the input of shape {tuple(input.shape)} has "
                f"{input.shape[1]}. Make it {type(self).__name__}({input.shape[1]}), or check "
                "the layout: PyTorch's is (batch, channels, ...).")
        momentum = self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.assign_add(1)
            if momentum is None:            # the cumulative average: batch k weighs 1/k
                momentum = 1 / int(self.num_batches_tracked.numpy())
        use_batch = self.training or not self.track_running_stats
        return functional.batch_norm(input, self.running_mean, self.running_var, self.weight,
                                     self.bias, use_batch, momentum, self.eps)

    def extra_repr(self):
        return (f"{self.weight.shape[0] if self.affine else self.running_mean.shape[0]}, "
                f"eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.use_bias}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """``nn.BatchNorm1d(num_features, eps=1e-5, momentum=0.1)`` on (batch, features) or
    (batch, channels, length) inputs."""

    dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """``nn.BatchNorm2d(num_features)`` on NCHW images: statistics per channel over the
    batch and every pixel."""

    dims = (4,)


class LazyBatchNorm1d(_Lazy, BatchNorm1d):
    """``nn.LazyBatchNorm1d()``: a BatchNorm1d whose features are found on the first call."""

    cls_to_become = BatchNorm1d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, **kwargs):
        super().__init__(None, eps, momentum, affine, track_running_stats, **kwargs)


class LazyBatchNorm2d(_Lazy, BatchNorm2d):
    """``nn.LazyBatchNorm2d()``: a BatchNorm2d whose channels are found on the first call."""

    cls_to_become = BatchNorm2d

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, **kwargs):
        super().__init__(None, eps, momentum, affine, track_running_stats, **kwargs)


class LayerNorm(Module):
    r"""``nn.LayerNorm(normalized_shape, eps=1e-5, elementwise_affine=True, bias=True)``: each
    example normalised over its last ``len(normalized_shape)`` dimensions,
    $y = (x - \mu) / \sqrt{\sigma^2 + \epsilon} \cdot \text{weight} + \text{bias}$, with
    PyTorch's ``weight`` (ones) and ``bias`` (zeros) shaped ``normalized_shape``. (Keras's
    ``LayerNormalization`` normalises the last axis, with ``gamma`` and ``beta``.)"""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 **kwargs):
        super().__init__(**kwargs)
        self.normalized_shape = (normalized_shape,) if isinstance(
            normalized_shape, numbers.Integral) else tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        self.use_bias = elementwise_affine and bias
        self.build_for((None,) + self.normalized_shape)

    def build(self, input_shape):
        self.weight = _parameter(self, "weight", self.normalized_shape, "ones") \
            if self.elementwise_affine else None
        self.bias = _parameter(self, "bias", self.normalized_shape, "zeros") \
            if self.use_bias else None

    def forward(self, input):
        n = len(self.normalized_shape)
        if tuple(input.shape[-n:]) != self.normalized_shape:
            raise ShapeError(f"LayerNorm '{self.name}' normalises over the last dimensions "
                             f"{self.normalized_shape}, but the input has shape "
                             f"{tuple(input.shape)}.")
        mean, variance = moments(input, tuple(range(-n, 0)), keepdims=True)
        return batch_normalization(input, mean, variance, self.bias, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.use_bias}")


class Embedding(Module):
    r"""``nn.Embedding(num_embeddings, embedding_dim)``: row ``i`` of PyTorch's ``weight``
    (num_embeddings, embedding_dim) for each id ``i``, initialised N(0, 1) as PyTorch's. The
    gradient is scattered back into the rows that were used. (Keras's ``Embedding`` keeps its
    table as ``embeddings``, initialised uniform in ±0.05.)"""

    def __init__(self, num_embeddings, embedding_dim, _weight=None, _freeze=False, **kwargs):
        super().__init__(**kwargs)
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        # PyTorch's _weight: a table to start from (from_pretrained's), drawing nothing
        start = _initializers.RandomNormal(0.0, 1.0) if _weight is None else \
            _initializers.Constant(_weight)
        _parameter(self, "weight", (num_embeddings, embedding_dim), start)
        self.weight.requires_grad_(not _freeze)
        self.build_for((None, None))

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True):
        """PyTorch's ``nn.Embedding.from_pretrained(table, freeze=True)``: an Embedding whose
        weight starts as ``table`` (num_embeddings, embedding_dim), in its dtype, frozen
        (``requires_grad`` False) unless ``freeze=False``."""
        table = embeddings.numpy() if isinstance(embeddings, Tensor) else np.asarray(embeddings)
        if table.ndim != 2:
            raise ValueError(f"nn.Embedding.from_pretrained: embeddings must be a 2-D table "
                             f"(one row per id), got shape {table.shape}.")
        return cls(*table.shape, _weight=table, _freeze=freeze, dtype=table.dtype)

    def forward(self, input):
        if input.dtype.kind not in "iu":    # (Keras's Embedding casts floats, truncating 1.7)
            raise TypeError(f"nn.Embedding '{self.name}': the ids must be integers, as in "
                            f"PyTorch, got {input.dtype}. Convert them with ids.long().")
        try:
            return gather(self.weight, input)
        except ShapeError as e:            # (an id outside the table: said in this layer's words)
            message = self._id_out_of_range(input)
            if message is None:
                raise
            raise IndexError(message) from e

    def _id_out_of_range(self, ids):
        """What to do about the first of eager ``ids`` outside the table; None if none is."""
        if ids.graph is not None:
            return None
        n, dim, ids = self.num_embeddings, self.embedding_dim, ids.numpy()
        outside = ids[(ids < 0) | (ids >= n)]
        if not outside.size:
            return None
        where = f"nn.Embedding({n}, {dim}) '{self.name}': id {outside[0]} is out of range: " \
                f"the table's num_embeddings={n} rows are for ids 0..{n - 1}."
        if outside[0] < 0:
            return f"{where} Negative ids do not count from the end: map each id into 0..{n - 1}."
        return f"{where} For ids up to {ids.max()}, make it nn.Embedding({ids.max() + 1}, {dim})."

    def compute_output_shape(self, input_shape):
        return tuple(input_shape) + (self.embedding_dim,)

    def extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class _Activation(Module, _layers.Activation):
    """PyTorch's activation modules (``nn.Sigmoid()``...): Keras's ``Activation`` layer with
    the function fixed and its settings printed as PyTorch prints them."""

    function = None

    def __init__(self, inplace=False, **settings):
        super().__init__(lambda x: type(self).function(x, **settings))
        self.settings = settings
        # inplace=True (PyTorch's memory saving) is accepted; the result is a new tensor with
        # the same values (edugraph records an in-place change as a new node anyway)
        self.inplace = inplace

    def extra_repr(self):
        shown = [f"{k}={v}" for k, v in self.settings.items()]
        return ", ".join(shown + ["inplace=True"] * self.inplace)


class ReLU(_Activation):
    function = staticmethod(relu)


class Sigmoid(_Activation):
    function = staticmethod(sigmoid)


class Tanh(_Activation):
    function = staticmethod(tanh)


class Softplus(_Activation):
    function = staticmethod(functional.softplus)

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__(beta=beta, threshold=threshold)


class Identity(_Activation):
    function = staticmethod(lambda x: x)


class LeakyReLU(_Activation):
    function = staticmethod(functional.leaky_relu)

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(inplace, negative_slope=negative_slope)


class ELU(_Activation):
    function = staticmethod(elu)

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(inplace, alpha=alpha)


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


class Flatten(Module, _layers.Flatten):
    """``nn.Flatten(start_dim=1, end_dim=-1)``: (batch, a, b, ...) → (batch, a·b·...)."""

    def __init__(self, start_dim=1, end_dim=-1, **kwargs):
        super().__init__(**kwargs)
        self.start_dim, self.end_dim = start_dim, end_dim

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Sequential(Module, _sequential.Sequential):
    """``nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))``: each module feeds the
    next; or ``nn.Sequential(OrderedDict(fc1=..., act=...))``, whose names become paths
    (``fc1.kernel``) and attributes (``model.fc1``). Keras's Sequential, with PyTorch's habits:
    it starts in training mode, ``model[0]`` is a module and ``model[1:]`` a Sequential."""

    shares_layers = True            # nn.Sequential(shared, nn.ReLU(), shared): tied weights

    def __init__(self, *modules):
        super().__init__()
        for module in modules:
            if isinstance(module, type):
                raise TypeError(f"nn.Sequential got the class {module.__name__}, not a module: "
                                f"make one, nn.{module.__name__}(...).")
            if isinstance(module, (list, tuple)):
                raise TypeError("nn.Sequential takes the modules one by one, not a list: "
                                "nn.Sequential(*layers).")
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

    def build_for(self, input_shape):
        """Nothing is built ahead, as in PyTorch: each module builds on its first call, from
        the tensor it gets (a custom module's output shape is known only by running it)."""
        self.built = True

    def append(self, module):
        if str(len(self)) in self._modules:
            raise ValueError(f"nn.Sequential.append: the new module would be named "
                             f"'{len(self)}', which names another module already.")
        self.add(module)
        return self

    def call(self, input):
        """Each module on the output of the one before, in its own mode, as PyTorch's
        Sequential runs them (Keras's hands its ``training`` flag to every layer)."""
        for module in self._stack:
            input = module(input)
        return input

    def __getitem__(self, index):
        if isinstance(index, slice):
            return Sequential(dict(list(self._modules.items())[index]))
        return super().__getitem__(index)


class ModuleList(Module):
    """``nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])``: a list of modules whose
    parameters the owner finds (a plain Python list of modules works too; this one also
    indexes, slices, appends and prints as PyTorch's). It has no ``forward``: loop over it."""

    def __init__(self, modules=()):
        super().__init__()
        self.extend(modules)

    def append(self, module):
        self._modules[str(len(self._modules))] = module
        return self

    def extend(self, modules):
        for module in modules:
            self.append(module)
        return self

    def __getitem__(self, index):
        modules = list(self._modules.values())
        return ModuleList(modules[index]) if isinstance(index, slice) else modules[index]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __repr__(self):
        """As PyTorch prints it: a run of equal modules on one line, ``(0-2): 3 x Linear(...)``."""
        lines, start = [], 0
        for text, run in itertools.groupby(repr(m).replace("\n", "\n  ") for m in self):
            n = len(list(run))
            where = f"{start}-{start + n - 1}): {n} x " if n > 1 else f"{start}): "
            lines.append(f"\n  ({where}{text}")
            start += n
        return f"ModuleList({''.join(lines)}{chr(10) if lines else ''})"


class _Loss(Module):
    """A loss as a module (PyTorch's ``nn.MSELoss()``...): ``loss_fn(pred, target)``."""

    def __new__(cls, *args, **kwargs):
        if sum(isinstance(a, Tensor) for a in args) >= 2:      # nn.MSELoss(pred, y)
            raise TypeError(
                f"nn.{cls.__name__} is a module: make it, then call it on the output and the "
                f"target: loss_fn = nn.{cls.__name__}(), then loss = loss_fn(output, target).")
        return super().__new__(cls)

    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = functional.check_reduction(reduction, type(self).__name__)


class CrossEntropyLoss(_Loss):
    """``nn.CrossEntropyLoss()(logits, class_ids)``: softmax cross-entropy from logits (see
    ``functional.cross_entropy``; ``weight`` per class, ``ignore_index``, ``label_smoothing``)."""

    def __init__(self, weight=None, *, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return functional.cross_entropy(input, target, self.weight, self.reduction,
                                        self.label_smoothing, ignore_index=self.ignore_index)


class NLLLoss(_Loss):
    """``nn.NLLLoss()(log_probs, class_ids)``: the negative log-likelihood of the target
    classes, from log-probabilities (see ``functional.nll_loss``; ``weight`` per class,
    ``ignore_index``)."""

    def __init__(self, weight=None, *, ignore_index=-100, reduction="mean"):
        super().__init__(reduction)
        self.weight, self.ignore_index = weight, ignore_index

    def forward(self, input, target):
        return functional.nll_loss(input, target, self.weight, self.reduction,
                                   ignore_index=self.ignore_index)


class BCELoss(_Loss):
    """``nn.BCELoss()(probabilities, targets)``: binary cross-entropy of a sigmoid's outputs
    (see ``functional.binary_cross_entropy``; ``weight`` rescales each element)."""

    def __init__(self, weight=None, *, reduction="mean"):
        super().__init__(reduction)
        self.weight = weight

    def forward(self, input, target):
        return functional.binary_cross_entropy(input, target, self.weight, self.reduction)


class BCEWithLogitsLoss(_Loss):
    """``nn.BCEWithLogitsLoss(pos_weight=...)(logits, targets)``: binary cross-entropy from
    logits, stably (see ``functional.binary_cross_entropy_with_logits``; ``weight`` rescales
    each element, ``pos_weight`` the positives of each class)."""

    def __init__(self, weight=None, *, reduction="mean", pos_weight=None):
        super().__init__(reduction)
        self.weight, self.pos_weight = weight, pos_weight

    def forward(self, input, target):
        return functional.binary_cross_entropy_with_logits(
            input, target, self.weight, self.reduction, pos_weight=self.pos_weight)


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


def __getattr__(name):
    """``eg.nn.<name>`` for a name edugraph does not have: what to use instead (missing.py)."""
    if name.startswith("_"):
        raise AttributeError(f"module 'edugraph.nn' has no attribute '{name}'")
    raise MissingNameError("eg.nn", name, lambda: list(globals()))


# (last: recurrent.py makes its parameters with _parameter, above)
from .recurrent import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNCell  # noqa: E402,F401
from . import utils  # noqa: E402,F401  (torch.nn.utils: clip_grad_norm_)
