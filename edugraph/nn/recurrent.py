r"""PyTorch's recurrent modules: ``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their one-step forms
``nn.RNNCell``, ``nn.LSTMCell``, ``nn.GRUCell``, with PyTorch's parameters, so that their state
dicts load into torch's modules and back.

A cell maps an input $x$ and a state $h$ to the next state. Each has ``weight_ih`` (gates ·
hidden, input), ``weight_hh`` (gates · hidden, hidden), ``bias_ih`` and ``bias_hh`` (two biases
where one would do: cuDNN's layout, which PyTorch keeps), the gates stacked in PyTorch's order:

* RNN: $h' = \tanh(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})$ (or ReLU);
* LSTM, gates i, f, g, o: with $a = W_{ih} x + b_{ih} + W_{hh} h + b_{hh}$ cut in four,
  $c' = \sigma(a_f) \odot c + \sigma(a_i) \odot \tanh(a_g)$ and
  $h' = \sigma(a_o) \odot \tanh(c')$;
* GRU, gates r, z, n: $r = \sigma(W_{ir} x + b_{ir} + W_{hr} h + b_{hr})$, $z$ likewise,
  $n = \tanh(W_{in} x + b_{in} + r \odot (W_{hn} h + b_{hn}))$ (the reset gate scales the
  hidden part *with* its bias), $h' = (1 - z) \odot n + z \odot h$.

``nn.RNN`` / ``LSTM`` / ``GRU`` run a cell along a sequence, a Python loop over the time steps;
each step is ordinary ops, so ``loss.backward()`` walks back through every step: that *is*
backpropagation through time. Layers stack (each reads the outputs of the one below), and a
bidirectional layer runs a second cell from the last step to the first and concatenates both
outputs. Every parameter starts uniform in $\pm 1/\sqrt{\text{hidden\_size}}$, as PyTorch's.
(Keras's recurrent layers are in ``eg.layers``, with Keras's names and layouts.)
"""
import math
import numbers
import warnings
from functools import partial
from operator import itemgetter

from ..errors import ShapeError
from ..ops.activation import dropout, relu, sigmoid, tanh
from ..ops.base import as_tensor
from ..ops.random import zeros
from ..ops.shape import concat, expand_dims, squeeze, stack, transpose
from . import Module, _parameter, init      # (nn imports this module last: it has them)
from .functional import linear

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU",
           "rnn_cell", "lstm_cell", "gru_cell"]


def rnn_cell(input, hx, weight_ih, weight_hh, bias_ih=None, bias_hh=None, nonlinearity="tanh"):
    r"""One step of an Elman RNN: $h' = \tanh(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})$, or
    ReLU for ``nonlinearity='relu'`` (``torch.rnn_tanh_cell`` / ``rnn_relu_cell``)."""
    activation = relu if nonlinearity == "relu" else tanh
    return activation(linear(input, weight_ih, bias_ih) + linear(hx, weight_hh, bias_hh))


def lstm_cell(input, hx, weight_ih, weight_hh, bias_ih=None, bias_hh=None):
    """One LSTM step, ``(h', c') = lstm_cell(x, (h, c), ...)``, the gates in PyTorch's order
    i, f, g, o (``torch.lstm_cell``)."""
    h, c = hx
    i, f, g, o = _gates(linear(input, weight_ih, bias_ih) + linear(h, weight_hh, bias_hh), 4)
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    return sigmoid(o) * tanh(c), c


def gru_cell(input, hx, weight_ih, weight_hh, bias_ih=None, bias_hh=None):
    """One GRU step, the gates in PyTorch's order r, z, n (``torch.gru_cell``). The input's
    and the state's parts stay apart: the reset gate scales only the state's part of n."""
    x_r, x_z, x_n = _gates(linear(input, weight_ih, bias_ih), 3)
    h_r, h_z, h_n = _gates(linear(hx, weight_hh, bias_hh), 3)
    r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
    n = tanh(x_n + r * h_n)
    return (1 - z) * n + z * hx


def _gates(stacked, count):
    """The ``count`` equal parts of the last dimension (PyTorch's ``chunk``)."""
    size = stacked.shape[-1] // count
    return [stacked[..., k * size:(k + 1) * size] for k in range(count)]


# PyTorch's ``mode`` → (gates per hidden unit, the step function)
_MODES = {"RNN_TANH": (1, partial(rnn_cell, nonlinearity="tanh")),
          "RNN_RELU": (1, partial(rnn_cell, nonlinearity="relu")),
          "LSTM": (4, lstm_cell), "GRU": (3, gru_cell)}


def _rnn_mode(nonlinearity, where):
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{where}: unknown nonlinearity {nonlinearity!r}; choose 'tanh' or "
                         "'relu'.")
    return "RNN_" + nonlinearity.upper()


class _Recurrent(Module):
    """What the cells and the sequence modules share: sizes, parameters, their PyTorch
    initialisation, and the checks on the input and the state."""

    mode = None                 # PyTorch's: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU"

    def __init__(self, input_size, hidden_size, bias, **kwargs):
        super().__init__(**kwargs)
        for what, size in (("input_size", input_size), ("hidden_size", hidden_size)):
            if not isinstance(size, numbers.Integral) or isinstance(size, bool) or size <= 0:
                raise ValueError(f"{self.where}: {what} must be a whole number above 0, got "
                                 f"{size!r} (e.g. nn.{type(self).__name__}(10, 20)).")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias

    @property
    def where(self):
        """How errors name this module: ``nn.LSTM 'lstm'``."""
        return f"nn.{type(self).__name__} '{self.name}'"

    @property
    def pair(self):
        """Whether the state is a pair, (h, c): an LSTM's."""
        return self.mode == "LSTM"

    def add_weights(self, suffix, input_size):
        """``weight_ih{suffix}``, ``weight_hh{suffix}``, ``bias_ih{suffix}``,
        ``bias_hh{suffix}``, in PyTorch's shapes and order (filled by
        ``reset_parameters``)."""
        rows = _MODES[self.mode][0] * self.hidden_size
        shapes = {"weight_ih": (rows, input_size), "weight_hh": (rows, self.hidden_size),
                  "bias_ih": (rows,), "bias_hh": (rows,)}
        for name, shape in shapes.items():
            if self.bias or name.startswith("weight"):
                _parameter(self, name + suffix, shape, "zeros")
            else:
                setattr(self, name + suffix, None)
        self.built = True

    def reset_parameters(self):
        """Every parameter uniform in ±1/√hidden_size, as PyTorch draws them."""
        bound = 1 / math.sqrt(self.hidden_size)
        for parameter in self.variables:
            init.uniform_(parameter, -bound, bound)

    def step(self, input, state, suffix=""):
        """One step of the cell whose parameters end in ``suffix``."""
        weights = [getattr(self, name + suffix)
                   for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
        return _MODES[self.mode][1](input, state, *weights)

    def check_input(self, input, ranks, layout):
        """``input`` as a tensor, after checking its rank and its number of features."""
        input = as_tensor(input)
        if input.ndim not in ranks:
            raise ShapeError(f"{self.where} expects a {ranks[1]}-D input, {layout}, or a "
                             f"{ranks[0]}-D one without the batch dimension; got shape "
                             f"{tuple(input.shape)}.")
        if input.shape[-1] != self.input_size:
            raise ShapeError(
                f"{self.where} was made for input_size={self.input_size} features, but the "
                f"input of shape {tuple(input.shape)} has {input.shape[-1]} in its last "
                f"dimension. Check the layout, {layout}, or make the module for "
                f"{input.shape[-1]} features.")
        return input

    def initial_state(self, hx, shape, like, names):
        """``hx`` (h, or the pair (h, c)) as tensors of ``shape``, checked; zeros when it is
        None. ``names``: how errors call h and c."""
        if hx is None:
            made = zeros(shape, dtype=like.dtype, device=like.device)
            return (made, made) if self.pair else made
        if self.pair and not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise TypeError(f"{self.where}: the state is a pair (h, c) of tensors, got "
                            f"{type(hx).__name__}.")
        states = [as_tensor(s) for s in (hx if self.pair else [hx])]
        for name, state in zip(names, states):
            if tuple(state.shape) != tuple(shape):
                raise ShapeError(f"{self.where}: {name} must have shape {tuple(shape)}, "
                                 f"got {tuple(state.shape)}.")
        return tuple(states) if self.pair else states[0]


class _Cell(_Recurrent):
    """One step: ``h = cell(x, h)`` (an LSTM cell: ``h, c = cell(x, (h, c))``) on a batch
    (batch, input_size) or a single example (input_size,). The state starts at zeros."""

    def __init__(self, input_size, hidden_size, bias=True, **kwargs):
        super().__init__(input_size, hidden_size, bias, **kwargs)
        self.add_weights("", input_size)
        self.reset_parameters()

    def forward(self, input, hx=None):
        input = self.check_input(input, (1, 2), "(batch, input_size)")
        shape = tuple(input.shape[:-1]) + (self.hidden_size,)
        state = self.initial_state(hx, shape, input, ("h", "c"))
        if input.ndim == 2:
            return self.step(input, state)
        state = _each(lambda s: expand_dims(s, 0), state)      # one example: a batch of one
        return _each(lambda s: squeeze(s, 0), self.step(expand_dims(input, 0), state))

    def extra_repr(self):
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return (f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")
                + ("" if nonlinearity == "tanh" else f", nonlinearity={nonlinearity}"))


def _each(fn, state):
    """``fn`` on h, or on both parts of an LSTM's (h, c)."""
    return tuple(fn(s) for s in state) if isinstance(state, tuple) else fn(state)


class RNNCell(_Cell):
    r"""``nn.RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh')``:
    $h' = \tanh(W_{ih} x + b_{ih} + W_{hh} h + b_{hh})$; ``h = cell(x, h)``."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", **kwargs):
        self.mode = _rnn_mode(nonlinearity, "nn.RNNCell")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, bias, **kwargs)


class LSTMCell(_Cell):
    """``nn.LSTMCell(input_size, hidden_size, bias=True)``: ``h, c = cell(x, (h, c))``; the
    weights hold the gates i, f, g, o, each ``hidden_size`` rows."""

    mode = "LSTM"


class GRUCell(_Cell):
    """``nn.GRUCell(input_size, hidden_size, bias=True)``: ``h = cell(x, h)``; the weights hold
    the gates r, z, n, each ``hidden_size`` rows."""

    mode = "GRU"


class _Sequence(_Recurrent):
    """A cell run along sequences, in ``num_layers`` layers, each one way or both ways.

    ``output, h_n = rnn(input, h_0)`` (an LSTM's: ``output, (h_n, c_n) = lstm(input, (h_0,
    c_0))``). ``input`` is (seq, batch, input_size), or (batch, seq, input_size) with
    ``batch_first=True``, or (seq, input_size) for a single sequence. ``output`` holds the
    last layer's h at every step, (seq, batch, directions · hidden_size) (batch first if the
    input is), the forward direction's first; ``h_n`` and ``c_n`` hold every layer's and
    direction's last state, (num_layers · directions, batch, hidden_size) whatever
    ``batch_first`` says, as ``h_0`` and ``c_0`` (zeros when left out). ``dropout`` drops the
    outputs of every layer but the last, while training only."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, **kwargs):
        super().__init__(input_size, hidden_size, bias, **kwargs)
        if not isinstance(num_layers, numbers.Integral) or num_layers < 1:
            raise ValueError(f"{self.where}: num_layers must be a whole number above 0, got "
                             f"{num_layers!r}.")
        # (PyTorch allows 1, which zeroes every layer's output but the last one's)
        if not isinstance(dropout, numbers.Real) or isinstance(dropout, bool) or \
                not 0 <= dropout < 1:
            raise ValueError(f"{self.where}: dropout is the probability of zeroing each "
                             f"output between layers, a number in [0, 1), got {dropout!r}.")
        if dropout and num_layers == 1:
            warnings.warn(f"{self.where}: dropout acts between layers, so dropout={dropout} "
                          "does nothing with num_layers=1.", stacklevel=3)
        self.num_layers, self.batch_first = num_layers, batch_first
        self.dropout, self.bidirectional = float(dropout), bidirectional
        for layer in range(num_layers):
            for suffix in self.suffixes(layer):
                self.add_weights(suffix, input_size if layer == 0 else
                                 hidden_size * self.num_directions)
        self.reset_parameters()

    @property
    def num_directions(self):
        return 2 if self.bidirectional else 1

    def suffixes(self, layer):
        """The ends of the parameter names of ``layer``'s directions: ``_l0``,
        ``_l0_reverse``."""
        return [f"_l{layer}", f"_l{layer}_reverse"][:self.num_directions]

    def flatten_parameters(self):
        """Nothing to do: PyTorch packs the weights into one buffer for cuDNN here."""

    def forward(self, input, hx=None, training=None):
        training = self.training if training is None else training
        layout = "(batch, seq, input_size)" if self.batch_first else "(seq, batch, input_size)"
        input = self.check_input(input, (2, 3), layout)
        batched = input.ndim == 3
        if not batched:                         # one sequence: a batch of one
            input = expand_dims(input, 1)
        elif self.batch_first:
            input = transpose(input, (1, 0, 2))
        shape = (self.num_layers * self.num_directions,) + ((input.shape[1],) if batched
                                                           else ()) + (self.hidden_size,)
        state = self.initial_state(hx, shape, input, ("h_0", "c_0"))
        if not batched:
            state = _each(lambda s: expand_dims(s, 1), state)
        output, finals = input, []
        for layer in range(self.num_layers):
            if layer and self.dropout:
                output = dropout(output, self.dropout, training)
            outputs = []
            for direction, suffix in enumerate(self.suffixes(layer)):
                index = layer * self.num_directions + direction
                h, last = self.run(output, _each(itemgetter(index), state), suffix, direction)
                outputs.append(h)
                finals.append(last)
            output = concat(outputs, axis=2) if self.bidirectional else outputs[0]
        state = tuple(stack(parts) for parts in zip(*finals)) if self.pair else stack(finals)
        if not batched:
            return squeeze(output, 1), _each(lambda s: squeeze(s, 1), state)
        return (transpose(output, (1, 0, 2)) if self.batch_first else output), state

    def run(self, inputs, state, suffix, backwards):
        """One layer, one direction: the cell along the sequence (from its end when
        ``backwards``). Returns h at every step, in the input's order, and the last state."""
        steps = range(inputs.shape[0])
        hs = [None] * len(steps)
        for t in reversed(steps) if backwards else steps:
            state = self.step(inputs[t], state, suffix)
            hs[t] = state[0] if self.pair else state
        return stack(hs), state

    def extra_repr(self):
        shown = {"num_layers": 1, "bias": True, "batch_first": False, "dropout": 0.0,
                 "bidirectional": False}          # (what differs from these defaults)
        return ", ".join([f"{self.input_size}, {self.hidden_size}"] + [
            f"{name}={getattr(self, name)}" for name, default in shown.items()
            if getattr(self, name) != default])


class RNN(_Sequence):
    r"""``nn.RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False)``: Elman RNN layers,
    $h_t = \tanh(W_{ih} x_t + b_{ih} + W_{hh} h_{t-1} + b_{hh})$;
    ``output, h_n = rnn(input, h_0)``."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, **kwargs):
        self.mode = _rnn_mode(nonlinearity, "nn.RNN")
        self.nonlinearity = nonlinearity
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, **kwargs)


class LSTM(_Sequence):
    """``nn.LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``: LSTM layers; ``output, (h_n, c_n) = lstm(input,
    (h_0, c_0))``."""

    mode = "LSTM"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, **kwargs):
        if proj_size:
            raise NotImplementedError(
                f"nn.LSTM: proj_size={proj_size!r} (an LSTM whose h is projected by "
                "weight_hr_l{k}) is not in edugraph. Leave proj_size out, or add an "
                "nn.Linear after the LSTM (which projects the outputs, not the state fed "
                "back).")
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, **kwargs)


class GRU(_Sequence):
    """``nn.GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``: GRU layers; ``output, h_n = gru(input, h_0)``."""

    mode = "GRU"
