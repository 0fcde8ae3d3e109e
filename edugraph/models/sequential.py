"""Sequential: a plain stack of layers, each feeding the next (Keras's ``Sequential``, PyTorch's
``nn.Sequential``)."""
import inspect

from .model import Model
from ..nn.module import KerasTensor, Module


class Sequential(Model):
    """``Sequential([Dense(64, activation="relu", input_shape=(8,)), Dense(10)])``; also
    ``Sequential(layer1, layer2)`` as in PyTorch, and ``add(layer)``."""

    shares_layers = False   # Keras would share a layer listed twice; a student who lists one
                            # twice means two layers, so edugraph refuses (PyTorch: shared)

    def __init__(self, layers=None, *more, name=None):
        super().__init__(name=name)
        self._stack = []
        items = [] if layers is None else (list(layers) if isinstance(layers, (list, tuple))
                                           else [layers])
        for layer in items + list(more):
            self.add(layer)

    def add(self, layer):
        if isinstance(layer, KerasTensor):           # Sequential([eg.Input((8,)), ...])
            self.batch_input_shape = layer.shape
            return
        if isinstance(layer, type) and issubclass(layer, Module):
            raise TypeError(f"Sequential got the class {layer.__name__}, not a layer: make "
                            f"one, {_call_example(layer)}.")
        if not isinstance(layer, Module):
            raise TypeError(f"Sequential.add expects a layer, got {type(layer).__name__}.")
        if not self.shares_layers and any(layer is l for l in self._stack):
            raise ValueError(f"Layer '{layer.name}' is already in this Sequential model.")
        self._modules[str(len(self._stack))] = layer     # paths "0.kernel", as in PyTorch
        self._stack.append(layer)
        if not self._stack[:-1] and self.batch_input_shape is None:
            self.batch_input_shape = layer.batch_input_shape
        if self.batch_input_shape is not None:       # shapes known: build now, as Keras does
            self.build_for(self.batch_input_shape)

    def build(self, input_shape):
        self.compute_output_shape(input_shape)

    def build_for(self, input_shape):
        self.built = True
        self.output_shape = self.compute_output_shape(input_shape)
        return self.output_shape

    def compute_output_shape(self, input_shape):
        shape = input_shape
        for layer in self._stack:
            shape = layer.build_for(shape)
        return shape

    def call(self, inputs, training=False):
        x = inputs
        for layer in self._stack:
            x = layer(x, training=training)
        return x

    def __getitem__(self, index):
        return self._stack[index]

    def __len__(self):
        return len(self._stack)

    def pop(self):
        layer = self._stack.pop()
        del self._modules[next(k for k, v in self._modules.items() if v is layer)]
        return layer


def _call_example(layer_class):
    """``Dense(units)``: the class called with the arguments it requires, for a message."""
    required = [p.name for p in inspect.signature(layer_class).parameters.values()
                if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    return f"{layer_class.__name__}({', '.join(required)})"
