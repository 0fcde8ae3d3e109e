"""The everyday layers: Dense, Activation, Flatten, Reshape, Dropout; Add and Concatenate merge."""
from . import activations
from .base import KerasLayer
from ..nn.module import Module, fan_in_shape
from ..ops.activation import dropout
from ..ops.linalg import matmul
from ..ops.math import add
from ..ops.shape import concat, flatten, flattened_shape, reshape
from ..errors import ShapeError


class Dense(KerasLayer):
    r"""A fully connected layer: $y = \mathrm{activation}(x W + b)$, W of shape (inputs, units).

    >>> layer = eg.layers.Dense(10, activation="relu")     # input size found on first call
    """

    min_ndim = 2            # a batch of examples (N, features); one example alone is refused

    def __init__(self, units, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"Dense: units must be a positive int, got {units!r}.")
        self.units, self.use_bias = units, use_bias
        self.activation = activations.get(activation)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer

    def build(self, input_shape):
        n_in = fan_in_shape(input_shape, f"Dense '{self.name}'")
        self.add_weight("kernel", (n_in, self.units), self.kernel_initializer,
                        regularizer=self.kernel_regularizer)
        if self.use_bias:
            self.add_weight("bias", (self.units,), self.bias_initializer,
                            regularizer=self.bias_regularizer)

    def call(self, inputs):
        if inputs.shape[-1] is not None and inputs.shape[-1] != self.kernel.shape[0]:
            raise ShapeError(f"Dense '{self.name}' was built for inputs with "
                             f"{self.kernel.shape[0]} features, but got shape {inputs.shape}.")
        y = matmul(inputs, self.kernel)
        if self.use_bias:
            y = y + self.bias
        return self.activation(y)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def extra_repr(self):
        return f"units={self.units}, activation={activations.name_of(self.activation)}"


class Activation(Module):
    """An activation function as a layer: ``Activation("relu")``."""

    def __init__(self, activation, **kwargs):
        super().__init__(**kwargs)
        self.activation = activations.get(activation)

    def call(self, inputs):
        return self.activation(inputs)

    def extra_repr(self):
        return activations.name_of(self.activation)


class ReLU(Activation):
    def __init__(self, **kwargs):
        super().__init__("relu", **kwargs)


class Softmax(Activation):
    def __init__(self, **kwargs):
        super().__init__("softmax", **kwargs)


class LeakyReLU(Activation):
    def __init__(self, alpha=0.3, **kwargs):       # Keras's default slope
        super().__init__(lambda x: activations.leaky_relu(x, alpha), **kwargs)
        self.alpha = alpha

    def extra_repr(self):
        return f"alpha={self.alpha}"


class Flatten(Module):
    """(batch, a, b, ...) → (batch, a·b·...): images into vectors for a Dense layer."""

    start_dim, end_dim = 1, -1          # (PyTorch's nn.Flatten chooses them)

    def call(self, inputs):
        return flatten(inputs, self.start_dim, self.end_dim)

    def compute_output_shape(self, input_shape):
        return flattened_shape(input_shape, self.start_dim, self.end_dim,
                               f"{type(self).__name__} '{self.name}'")


class Reshape(Module):
    """Reshape each example (the batch axis stays): ``Reshape((8, 8, 1))``."""

    def __init__(self, target_shape, **kwargs):
        super().__init__(**kwargs)
        self.target_shape = tuple(target_shape)

    def call(self, inputs):
        return reshape(inputs, (-1,) + self.target_shape)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self.target_shape


class Dropout(Module):
    """Inverted dropout: in training, zero each value with probability ``rate`` and scale the rest
    by 1/(1 − rate), so inference needs no change (and does nothing)."""

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 <= rate < 1:
            raise ValueError(f"Dropout: rate must be in [0, 1), got {rate}.")
        self.rate, self.seed = rate, seed

    def call(self, inputs, training=False):
        return dropout(inputs, self.rate, training=training, seed=self.seed)

    def extra_repr(self):
        return f"rate={self.rate}"


class Add(Module):
    """Sum of a list of inputs of one shape: ``Add()([a, b])`` (residual connections)."""

    def call(self, inputs):
        total = inputs[0]
        for x in inputs[1:]:
            total = add(total, x)
        return total

    def compute_output_shape(self, input_shape):
        return input_shape[0]


class Concatenate(Module):
    """Join a list of inputs along ``axis`` (the last by default)."""

    def __init__(self, axis=-1, **kwargs):
        super().__init__(**kwargs)
        self.axis = axis

    def call(self, inputs):
        return concat(list(inputs), axis=self.axis)

    def compute_output_shape(self, input_shape):
        sizes = [s[self.axis] for s in input_shape]
        out = list(input_shape[0])
        out[self.axis] = None if None in sizes else sum(sizes)
        return tuple(out)
