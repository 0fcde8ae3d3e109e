"""Convolution and pooling layers on NHWC images (batch, height, width, channels), as in Keras."""
from . import activations
from .base import KerasLayer
from ..nn.module import Module, fan_in_shape
from ..ops.conv import _pair, avg_pool2d, check_image_shape, conv2d, conv_output_size
from ..ops.conv import max_pool2d, padding_argument
from ..ops.reduce import reduce_mean


def windows_grid(input_shape, kernel_size, strides, padding):
    """(batch, rows, columns) of the windows that slide over NHWC images of ``input_shape``."""
    paddings = (padding, padding) if isinstance(padding, str) else padding
    return (input_shape[0],) + tuple(conv_output_size(n, k, s, p) for n, k, s, p in zip(
        input_shape[1:3], kernel_size, strides, paddings))


class Conv2D(KerasLayer):
    r"""2-D convolution: ``filters`` kernels of size ``kernel_size`` slide over the image;
    kernel shape (KH, KW, C_in, filters). Computed as im2col + one matmul (see ops/conv.py)."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        self.filters = filters
        self.kernel_size = _pair(kernel_size, "kernel_size")
        self.strides = _pair(strides, "strides")
        self.padding = padding_argument(padding)
        self.activation = activations.get(activation)
        self.use_bias = use_bias
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape):
        check_image_shape(input_shape, f"Conv2D '{self.name}'")
        channels = fan_in_shape(input_shape, f"Conv2D '{self.name}'")
        self.add_weight("kernel", self.kernel_size + (channels, self.filters),
                        self.kernel_initializer, regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.add_weight("bias", (self.filters,), self.bias_initializer,
                            regularizer=self.bias_regularizer)

    def call(self, inputs):
        y = conv2d(inputs, self.kernel, self.strides, self.padding)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        check_image_shape(input_shape, f"Conv2D '{self.name}'")
        return windows_grid(input_shape, self.kernel_size, self.strides, self.padding) + \
            (self.filters,)

    def extra_repr(self):
        return (f"filters={self.filters}, kernel_size={self.kernel_size}, "
                f"strides={self.strides}, padding={self.padding!r}")


class _Pooling2D(Module):
    """What the pooling layers share: windows of ``pool_size`` slide by ``strides`` (by the
    window, unless given) over NHWC images; each layer's ``call`` says what a window gives."""

    def __init__(self, pool_size=2, strides=None, padding="valid", **kwargs):
        super().__init__(**kwargs)
        self.pool_size = _pair(pool_size, "pool_size")
        self.strides = self.pool_size if strides is None else _pair(strides, "strides")
        self.padding = padding_argument(padding)

    def compute_output_shape(self, input_shape):
        check_image_shape(input_shape, f"{type(self).__name__} '{self.name}'")
        return windows_grid(input_shape, self.pool_size, self.strides, self.padding) + \
            (input_shape[3],)

    def extra_repr(self):
        return f"pool_size={self.pool_size}, strides={self.strides}"


class MaxPooling2D(_Pooling2D):
    """The largest value of each ``pool_size`` window; the gradient goes to that winner only."""

    def call(self, inputs):
        return max_pool2d(inputs, self.pool_size, self.strides, self.padding)


class AveragePooling2D(_Pooling2D):
    """The mean of each ``pool_size`` window; its gradient is shared evenly by the window's
    pixels. A window over "same" padding averages its real pixels only, as Keras's does;
    ``count_include_pad=True`` (PyTorch's ``nn.AvgPool2d``) counts the padding zeros too."""

    def __init__(self, pool_size=2, strides=None, padding="valid", count_include_pad=False,
                 **kwargs):
        super().__init__(pool_size, strides, padding, **kwargs)
        self.count_include_pad = count_include_pad

    def call(self, inputs):
        return avg_pool2d(inputs, self.pool_size, self.strides, self.padding,
                          count_include_pad=self.count_include_pad)


class GlobalAveragePooling2D(Module):
    """The mean of each channel over the whole image: (N, H, W, C) → (N, C)."""

    def call(self, inputs):
        return reduce_mean(inputs, axis=(1, 2))

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[3])
