r"""Recurrent cells: one time step of a recurrent network, ``output, states = cell(x, states)``.

``LSTMCell`` is Keras's (and ``torch.nn.LSTMCell``'s) long short-term memory step. With
$z = x W + h W_h + b$ cut into four parts $z_i, z_f, z_g, z_o$:

$$i = \sigma(z_i),\quad f = \sigma(z_f),\quad o = \sigma(z_o),\quad
c' = f \odot c + i \odot \tanh(z_g),\quad h' = o \odot \tanh(c').$$

The forget gate $f$ decides how much of the cell state $c$ survives the step; because
$c' $ adds to $f \odot c$ instead of squashing it, gradients can travel many steps back.
"""
import numpy as np

from .. import initializers
from ..nn.module import Module, fan_in_shape
from ..ops.activation import sigmoid, tanh
from ..ops.linalg import matmul
from ..ops.random import zeros


class LSTMCell(Module):
    """``tf.keras.layers.LSTMCell(units)``: ``h, [h, c] = cell(x, [h, c])``.

    Weights: ``kernel`` (inputs, 4·units), ``recurrent_kernel`` (units, 4·units, orthogonal at
    first) and ``bias`` (4·units, the forget gate's part starting at 1, Keras's
    ``unit_forget_bias``), the gates in the order i, f, g, o as Keras and PyTorch keep them.
    """

    def __init__(self, units, kernel_initializer="glorot_uniform",
                 recurrent_initializer="orthogonal", bias_initializer="zeros",
                 unit_forget_bias=True, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"LSTMCell: units must be a positive int, got {units!r}.")
        self.units, self.unit_forget_bias = units, unit_forget_bias
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.state_size = [units, units]

    def build(self, input_shape):
        n_in = fan_in_shape(input_shape, f"LSTMCell '{self.name}'")
        self.add_weight("kernel", (n_in, 4 * self.units), self.kernel_initializer)
        self.add_weight("recurrent_kernel", (self.units, 4 * self.units),
                        self.recurrent_initializer)
        bias = np.array(initializers.get(self.bias_initializer).sample((4 * self.units,)))
        if self.unit_forget_bias:
            bias[self.units:2 * self.units] = 1.0
        self.add_weight("bias", (4 * self.units,), initializers.Constant(bias))

    def call(self, inputs, states):
        h, c = states
        z = matmul(inputs, self.kernel) + matmul(h, self.recurrent_kernel) + self.bias
        n = self.units
        i, f = sigmoid(z[..., :n]), sigmoid(z[..., n:2 * n])
        g, o = tanh(z[..., 2 * n:3 * n]), sigmoid(z[..., 3 * n:])
        c = f * c + i * g
        h = o * tanh(c)
        return h, [h, c]

    def get_initial_state(self, batch_size, dtype=None):
        """Zeros for ``[h, c]``."""
        return [zeros((batch_size, self.units), dtype or self.dtype) for _ in range(2)]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def extra_repr(self):
        return f"units={self.units}"


__all__ = ["LSTMCell"]
