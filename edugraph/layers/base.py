"""KerasLayer: the base of Keras's layers with weights (Dense, Conv2D...), edugraph's ``Module``
with three habits of Keras's ``Layer.__call__`` that PyTorch's modules (``eg.nn``) do not have:

* autocast: floating-point inputs of another precision become the layer's dtype (its
  ``compute_dtype``; an RNN's is its cell's), so numpy's float64 data meets float32 weights
  without an error (``Dense(1)(np.random.rand(3, 2))``); integer inputs stay as they are.
  (In PyTorch, float64 data and float32 weights is an error.)
* an input of too few axes is refused before anything is built, with its shape:
  ``Dense(3)(np.ones(4))`` is one example without its batch axis (``min_ndim``);
* ``input_shape=(4)`` (a number: the brackets make no tuple) is refused with the fix.
"""
import numbers

import numpy as np

from ..errors import ShapeError
from ..nest import map_structure
from ..nn.module import Module, _is_numbers
from ..ops.base import rank_known
from ..ops.math import cast
from ..tensor import Tensor


class KerasLayer(Module):
    """A Keras layer with weights; subclasses set ``min_ndim`` (Keras's ``InputSpec``)."""

    min_ndim = 0

    def __init__(self, **kwargs):
        shape = kwargs.get("input_shape")
        if isinstance(shape, numbers.Integral):
            raise TypeError(f"{type(self).__name__}: input_shape={shape} is a number, not a "
                            f"shape (brackets alone make no tuple); write input_shape=({shape},)"
                            " — the comma makes the tuple.")
        super().__init__(**kwargs)

    def __call__(self, *args, **kwargs):
        if args:
            x = args[0]
            if x.__class__ is Tensor:       # (an eager tensor, the common case: kept short, as
                value = x._value            # an LSTM cell is called once per time step)
                if value.ndim < self.min_ndim:
                    self._check_ndim(x)
                if value.dtype.kind == "f" and value.dtype != self.compute_dtype:
                    args = (cast(x, self.compute_dtype), *args[1:])
            else:
                self._check_ndim(x)
                args = (map_structure(self._autocast, x), *args[1:])
        return super().__call__(*args, **kwargs)

    @property
    def compute_dtype(self):
        """The dtype the layer computes in, which floating inputs are cast to (Keras's name)."""
        return self.dtype

    def _autocast(self, x):
        dtype = self.compute_dtype
        if isinstance(x, np.ndarray) and x.dtype.kind == "f" and x.dtype != dtype:
            return x.astype(dtype)
        if isinstance(x, Tensor) and x.dtype.kind == "f" and x.dtype != dtype:
            return cast(x, dtype)
        return x

    def _check_ndim(self, x):
        shape = np.shape(x) if _is_numbers(x) else getattr(x, "shape", None)
        if shape is None or not rank_known(shape) or len(shape) >= self.min_ndim:
            return
        sizes = ", ".join(str(n) for n in shape) or "features"
        raise ShapeError(f"{type(self).__name__} '{self.name}' got a {len(shape)}-D input of "
                         f"shape {tuple(shape)}; it takes a batch of examples (N, {sizes}). One "
                         "example? Use x[None] (or x.reshape(1, -1)).")
