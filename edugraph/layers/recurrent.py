r"""Recurrent layers: a *cell* computes one time step, ``output, states = cell(x, states)``;
the ``RNN`` layer runs a cell over every step of a sequence of shape (batch, time, features).

The cells, as Keras (and PyTorch) define them, with $\sigma$ the ``recurrent_activation`` and
$\tanh$ the ``activation``:

``SimpleRNNCell``: $h' = \tanh(x W + h W_h + b)$.

``LSTMCell``: with $z = x W + h W_h + b$ cut into four parts $z_i, z_f, z_g, z_o$,

$$i = \sigma(z_i),\quad f = \sigma(z_f),\quad o = \sigma(z_o),\quad
c' = f \odot c + i \odot \tanh(z_g),\quad h' = o \odot \tanh(c').$$

The forget gate $f$ decides how much of the cell state $c$ survives the step; because
$c'$ adds to $f \odot c$ instead of squashing it, gradients can travel many steps back.

``GRUCell`` (``reset_after=True``, Keras's default since TF2 and PyTorch's form): with
$x W + b_x$ cut into $x_z, x_r, x_h$ and $h W_h + b_h$ into $u_z, u_r, u_h$,

$$z = \sigma(x_z + u_z),\quad r = \sigma(x_r + u_r),\quad
\tilde h = \tanh(x_h + r \odot u_h),\quad h' = z \odot h + (1 - z) \odot \tilde h.$$

The update gate $z$ keeps the old state; the reset gate $r$ decides how much of it the
candidate $\tilde h$ sees. ``reset_after=False`` (the original GRU, one bias) resets
before the product: $\tilde h = \tanh(x_h + (r \odot h) W_{h,h})$.

The ``RNN`` layer is a Python loop over the time steps, so backpropagation through time
needs nothing new: the ops of every step are recorded and differentiated like any others.
In a graph the loop is unrolled, one copy of the cell per step, which needs the number of
steps when the graph is built.
"""
import numpy as np

from . import activations
from .base import KerasLayer
from .. import initializers
from ..nn.module import KerasTensor, Module, _flat, fan_in_shape
from ..ops.linalg import matmul
from ..ops import activation as _activation
from ..ops.random import ones_like, zeros, zeros_like
from ..ops.shape import stack


class RecurrentCell(KerasLayer):
    """What the cells share: a ``kernel`` (inputs, blocks·units) for the input, a
    ``recurrent_kernel`` (units, blocks·units, orthogonal at first) for the previous state and
    a ``bias``, each holding one block of ``units`` columns per gate."""

    blocks = 1                  # gates (and candidates) side by side in the kernels

    def __init__(self, units, activation, use_bias, kernel_initializer, recurrent_initializer,
                 bias_initializer, dropout=0.0, recurrent_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(units, int) or units <= 0:
            raise ValueError(f"{type(self).__name__}: units must be a positive int, "
                             f"got {units!r}.")
        if not 0 <= dropout < 1:
            raise ValueError(f"{type(self).__name__}: dropout must be in [0, 1), got "
                             f"{dropout!r}.")
        if recurrent_dropout:
            raise NotImplementedError(
                f"{type(self).__name__}: recurrent_dropout (a dropout mask on the state inside "
                "the cell) is not available in edugraph; use dropout= (on the inputs) or a "
                "Dropout layer between recurrent layers.")
        self.units, self.use_bias, self.dropout = units, use_bias, dropout
        self.activation = activations.get(activation)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.state_size = units

    def build(self, input_shape):
        n_in = fan_in_shape(input_shape, f"{type(self).__name__} '{self.name}'")
        width = self.blocks * self.units
        self.add_weight("kernel", (n_in, width), self.kernel_initializer)
        self.add_weight("recurrent_kernel", (self.units, width), self.recurrent_initializer)
        if self.use_bias:
            self.add_weight("bias", self.bias_shape(), self.initial_bias())

    def bias_shape(self):
        return (self.blocks * self.units,)

    def initial_bias(self):
        return self.bias_initializer

    def split(self, z):
        """The gate blocks of ``z`` (..., blocks·units), each (..., units)."""
        n = self.units
        return [z[..., k * n:(k + 1) * n] for k in range(self.blocks)]

    def get_initial_state(self, batch_size, dtype=None):
        """Zeros for each state, (batch_size, units)."""
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [zeros((batch_size, size), dtype=dtype or self.dtype) for size in sizes]

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def extra_repr(self):
        return f"units={self.units}, activation={activations.name_of(self.activation)}"


def _one_state(states):
    """The state of a one-state cell, given as ``[h]`` (what the cell returns) or as ``h``."""
    return states[0] if isinstance(states, (list, tuple)) else states


class SimpleRNNCell(RecurrentCell):
    r"""``tf.keras.layers.SimpleRNNCell(units)``: ``h, [h] = cell(x, [h])`` with
    $h' = \mathrm{activation}(x W + h W_h + b)$ (``torch.nn.RNNCell``, one bias)."""

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, **kwargs)

    def call(self, inputs, states):
        z = matmul(inputs, self.kernel) + matmul(_one_state(states), self.recurrent_kernel)
        h = self.activation(z + self.bias if self.use_bias else z)
        return h, [h]


class LSTMCell(RecurrentCell):
    """``tf.keras.layers.LSTMCell(units)``: ``h, [h, c] = cell(x, [h, c])``.

    The gates in the order i, f, g, o, as Keras and PyTorch keep them; the bias's forget-gate
    part starts at 1 (Keras's ``unit_forget_bias``).
    """

    blocks = 4

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.unit_forget_bias = unit_forget_bias
        self.state_size = [units, units]

    def initial_bias(self):
        bias = np.array(initializers.get(self.bias_initializer).sample(self.bias_shape()))
        if self.unit_forget_bias:
            bias[self.units:2 * self.units] = 1.0
        return initializers.Constant(bias)

    def call(self, inputs, states):
        h, c = states
        z = matmul(inputs, self.kernel) + matmul(h, self.recurrent_kernel)
        z_i, z_f, z_g, z_o = self.split(z + self.bias if self.use_bias else z)
        gate = self.recurrent_activation
        c = gate(z_f) * c + gate(z_i) * self.activation(z_g)
        h = gate(z_o) * self.activation(c)
        return h, [h, c]


class GRUCell(RecurrentCell):
    """``tf.keras.layers.GRUCell(units)``: ``h, [h] = cell(x, [h])``, the gates in Keras's
    order z, r, h (PyTorch's is r, z, n).

    ``reset_after=True`` (default): ``bias`` is (2, 3·units), row 0 for the input, row 1 for
    the recurrent part (PyTorch's ``bias_ih``, ``bias_hh``); ``False``: one (3·units,) bias.
    """

    blocks = 3

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", *, reset_after=True, **kwargs):
        super().__init__(units, activation, use_bias, kernel_initializer,
                         recurrent_initializer, bias_initializer, **kwargs)
        self.recurrent_activation = activations.get(recurrent_activation)
        self.reset_after = reset_after

    def bias_shape(self):
        return (2, 3 * self.units) if self.reset_after else (3 * self.units,)

    def call(self, inputs, states):
        h = _one_state(states)
        n, gate = self.units, self.recurrent_activation
        x = matmul(inputs, self.kernel)
        u = matmul(h, self.recurrent_kernel if self.reset_after
                   else self.recurrent_kernel[:, :2 * n])          # h W_h for z and r (and h)
        if self.use_bias and self.reset_after:
            x, u = x + self.bias[0], u + self.bias[1]
        elif self.use_bias:
            x = x + self.bias
        x_z, x_r, x_h = self.split(x)
        z, r = gate(x_z + u[..., :n]), gate(x_r + u[..., n:2 * n])
        if self.reset_after:
            candidate = self.activation(x_h + r * u[..., 2 * n:])
        else:
            candidate = self.activation(x_h + matmul(r * h, self.recurrent_kernel[:, 2 * n:]))
        h = z * h + (1 - z) * candidate
        return h, [h]


class RNN(KerasLayer):
    """``tf.keras.layers.RNN(cell)``: the cell run over the time axis of inputs (batch, time,
    features), from zero states or ``initial_state``.

    Returns the last output (batch, units), or every step's (batch, time, units) with
    ``return_sequences=True``; with ``return_state=True`` a list ``[output, *final_states]``
    (an LSTM's ``[output, h, c]``). ``go_backwards=True`` reads the sequence from its end, and
    returns the sequence of outputs in that reversed order, as Keras does.

    >>> outputs = eg.keras.layers.RNN(eg.keras.layers.GRUCell(16))(x)   # x: (32, 10, 8)
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(cell, Module) or not hasattr(cell, "state_size"):
            raise TypeError(f"RNN needs a cell (a layer with a state_size, such as "
                            f"LSTMCell(16)), got {type(cell).__name__}.")
        self.cell = cell
        self.return_sequences, self.return_state = return_sequences, return_state
        self.go_backwards = go_backwards

    @property
    def units(self):
        return self.cell.units

    @property
    def compute_dtype(self):
        return self.cell.dtype          # the states start in the inputs' dtype: the cell's

    def _state_sizes(self):
        size = self.cell.state_size
        return list(size) if isinstance(size, (list, tuple)) else [size]

    def _check_rank(self, shape):
        if len(shape) != 3:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' expects inputs of shape (batch, time, "
                f"features), but got shape {tuple(shape)} ({len(shape)}-D). One sequence needs "
                "a batch axis (x[None]); one time step is the cell's job "
                f"({type(self.cell).__name__}).")

    def build(self, input_shape):
        self._check_rank(input_shape)
        self.cell.build_for((input_shape[0], input_shape[2]))

    def compute_output_shape(self, input_shape):
        batch, steps, _ = input_shape
        output = (batch, steps, self.cell.units) if self.return_sequences else \
            (batch, self.cell.units)
        return [output] + [(batch, size) for size in self._state_sizes()] \
            if self.return_state else output

    def call(self, inputs, initial_state=None, training=False):
        self._check_rank(inputs.shape)
        steps = inputs.shape[1]
        if steps is None:
            raise ValueError(
                f"{type(self).__name__} '{self.name}' runs a Python loop over the time steps, "
                f"so it needs their number when the graph is built, but the input shape is "
                f"{tuple(inputs.shape)}. Give the placeholder a known sequence length, e.g. "
                f"shape=(None, 20, {inputs.shape[2]}), or write the loop with eg.while_loop.")
        states = self._initial_states(inputs, initial_state)
        # the cell's dropout: one mask for the whole sequence (Keras's), drawn when training
        rate = getattr(self.cell, "dropout", 0.0)
        keep = _activation.dropout(ones_like(inputs[:, 0]), rate, training=True) \
            if training and rate else None
        outputs = []
        for t in (reversed(range(steps)) if self.go_backwards else range(steps)):
            step = inputs[:, t] if keep is None else inputs[:, t] * keep
            output, states = self.cell(step, states)
            states = list(states) if isinstance(states, (list, tuple)) else [states]
            outputs.append(output)
        output = stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return [output, *states] if self.return_state else output

    def _initial_states(self, inputs, initial_state):
        sizes = self._state_sizes()
        if initial_state is None:
            # (batch, 1) zeros + (size,) zeros: also for a batch size known only when a graph
            # runs (a placeholder's None)
            batch_zeros = zeros_like(inputs[:, 0, :1])
            return [batch_zeros + zeros((size,), dtype=inputs.dtype, device=inputs.device)
                    for size in sizes]
        states = list(initial_state) if isinstance(initial_state, (list, tuple)) \
            else [initial_state]
        batch, shapes = inputs.shape[0], [tuple(s.shape) for s in states]

        def fits(shape, size):
            return len(shape) == 2 and shape[1] == size and (
                None in (shape[0], batch) or shape[0] == batch)
        if len(states) != len(sizes) or not all(map(fits, shapes, sizes)):
            raise ValueError(
                f"{type(self).__name__} '{self.name}': initial_state must be {len(sizes)} "
                f"tensor(s), one per state of its {type(self.cell).__name__}, of shapes "
                f"{[(batch, size) for size in sizes]} (batch, units), but got {len(states)} "
                f"of shapes {shapes}.")
        return states

    def _call_symbolic(self, args, kwargs):
        if self.return_state or any(isinstance(v, KerasTensor) for v in _flat(kwargs.values())):
            raise NotImplementedError(
                f"{type(self).__name__} '{self.name}': a functional model (eg.Input) "
                "supports neither return_state=True (call the layer on tensors instead, e.g. "
                "in a subclassed model's call()) nor initial_state= (give the states "
                "positionally: layer(x, [h, c])).")
        return super()._call_symbolic(args, kwargs)

    def extra_repr(self):
        flags = [f for f in ("return_sequences", "return_state", "go_backwards")
                 if getattr(self, f)]
        return ", ".join([f"units={self.cell.units}"] + [f"{f}=True" for f in flags])


def _cell_kwargs(kwargs):
    """The keyword arguments a layer (LSTM...) hands to its cell: the dtype and whether it
    learns (input_shape and name are the layer's)."""
    return {k: kwargs[k] for k in ("dtype", "trainable") if k in kwargs}


class SimpleRNN(RNN):
    """``tf.keras.layers.SimpleRNN(units)``: ``RNN(SimpleRNNCell(units))`` (``torch.nn.RNN``)."""

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", *, dropout=0.0, recurrent_dropout=0.0,
                 return_sequences=False, return_state=False, go_backwards=False, **kwargs):
        cell = SimpleRNNCell(units, activation, use_bias, kernel_initializer,
                             recurrent_initializer, bias_initializer, dropout=dropout,
                             recurrent_dropout=recurrent_dropout, **_cell_kwargs(kwargs))
        super().__init__(cell, return_sequences, return_state, go_backwards, **kwargs)


class LSTM(RNN):
    """``tf.keras.layers.LSTM(units)``: ``RNN(LSTMCell(units))``; ``return_state=True`` gives
    ``[output, h, c]``.

    >>> model = eg.keras.Sequential([eg.keras.layers.LSTM(32, input_shape=(20, 8)),
    ...                              eg.keras.layers.Dense(1)])
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, *, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, **kwargs):
        cell = LSTMCell(units, activation, recurrent_activation, use_bias, kernel_initializer,
                        recurrent_initializer, bias_initializer, unit_forget_bias,
                        dropout=dropout, recurrent_dropout=recurrent_dropout,
                        **_cell_kwargs(kwargs))
        super().__init__(cell, return_sequences, return_state, go_backwards, **kwargs)


class GRU(RNN):
    """``tf.keras.layers.GRU(units)``: ``RNN(GRUCell(units))``."""

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", *, reset_after=True, dropout=0.0,
                 recurrent_dropout=0.0, return_sequences=False, return_state=False,
                 go_backwards=False, **kwargs):
        cell = GRUCell(units, activation, recurrent_activation, use_bias, kernel_initializer,
                       recurrent_initializer, bias_initializer, reset_after=reset_after,
                       dropout=dropout, recurrent_dropout=recurrent_dropout,
                       **_cell_kwargs(kwargs))
        super().__init__(cell, return_sequences, return_state, go_backwards, **kwargs)


__all__ = ["SimpleRNNCell", "LSTMCell", "GRUCell", "RNN", "SimpleRNN", "LSTM", "GRU"]
