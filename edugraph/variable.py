"""Variables: tensors that hold a model's state and are updated in place.

In eager mode a Variable is a leaf tensor that requires grad (PyTorch's ``nn.Parameter``) and is
watched by every GradientTape automatically. Inside a graph, ``eg.Variable(...)`` builds a graph
variable instead, whose value lives in each Session (see ``edugraph.graph``).
"""
import itertools

import numpy as np

from .context import state
from .tensor import Tensor, tensor

_graph_variable_class = None        # set by edugraph.graph: what Variable(...) makes in a graph
_unnamed = itertools.count()


class Variable(Tensor):
    """``eg.Variable(initial_value, name=..., trainable=True)``, as in TF1 and TF2."""

    __slots__ = ("trainable",)

    def __new__(cls, *args, **kwargs):
        if cls is Variable and state.graph is not None and _graph_variable_class is not None:
            return object.__new__(_graph_variable_class)   # Python then runs its __init__
        return object.__new__(cls)

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        value = initial_value() if callable(initial_value) else initial_value
        t = tensor(value, dtype=dtype)
        super().__init__(t._value, t.device, name=name or f"Variable_{next(_unnamed)}")
        self.trainable = trainable
        self.requires_grad = trainable and t.is_floating_point()

    def assign(self, value):
        """Overwrite the value in place (shape and dtype stay)."""
        self._value[...] = self._array(value)
        return self

    def assign_add(self, delta):
        self._value += self._array(delta)
        return self

    def assign_sub(self, delta):
        self._value -= self._array(delta)
        return self

    def _array(self, value):
        if isinstance(value, Tensor):
            if value.device is not self.device:
                raise ValueError(f"Cannot assign a value on {value.device.name} to variable "
                                 f"'{self.name}' on {self.device.name}; copy it with .to().")
            value = value._value
        else:
            value = self.device.put(np.asarray(value, dtype=self.dtype))
        if tuple(value.shape) not in (self.shape, ()):
            raise ValueError(f"Cannot assign a value of shape {tuple(value.shape)} to variable "
                             f"'{self.name}' of shape {self.shape}.")
        return value

    def value(self):
        return Tensor(self._value, self.device)

    read_value = value

    def __repr__(self):
        return f"<eg.Variable '{self.name}' shape={self.shape} dtype={self.dtype}, " \
               f"numpy={self.numpy()!r}>"
