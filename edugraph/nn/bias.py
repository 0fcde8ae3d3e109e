"""``eg.nn.bias_add``: a layer's bias, added along the channel axis (``tf.nn.bias_add``)."""
import numpy as np

from ..ops.math import add
from ..ops.shape import reshape
from ..tensor import Tensor

__all__ = ["bias_add"]


def bias_add(value, bias, data_format=None, name=None):
    """``value + bias``, with the 1-D ``bias`` added along the channels: the last axis
    (``NHWC``, the default) or axis 1 (``NCHW``, ``NCW``...: ``bias`` is then reshaped to
    (C, 1, 1...) so that it broadcasts there). Unlike ``+``, it refuses a bias that would
    broadcast any other way, as TF does."""
    channels_first = bool(data_format) and data_format.startswith("NC")
    value_dims, bias_dims = _dims(value), _dims(bias)
    if bias_dims is not None and len(bias_dims) != 1:
        raise ValueError(f"bias_add: the bias must be 1-D (one number per channel), got shape "
                         f"{bias_dims}.")
    if value_dims is None:
        if channels_first:
            raise ValueError("bias_add with a channels-first data_format needs the input's "
                             "rank: give the placeholder a shape.")
        return add(value, bias, name=name)
    if len(value_dims) < 2:
        raise ValueError(f"bias_add: the input must be at least 2-D (examples, channels), got "
                         f"shape {value_dims}.")
    channels = value_dims[1 if channels_first else -1]
    biases = None if bias_dims is None else bias_dims[0]
    if None not in (channels, biases) and channels != biases:
        raise ValueError(f"bias_add: must provide as many biases as the input has channels "
                         f"(its {'second' if channels_first else 'last'} dimension, "
                         f"{data_format or 'NHWC'}): {biases} biases for input shape "
                         f"{value_dims}.")
    if channels_first:
        bias = reshape(bias, (-1,) + (1,) * (len(value_dims) - 2))
    return add(value, bias, name=name)


def _dims(x):
    """``x``'s shape as a tuple (None for an unknown size), or None if its rank is unknown."""
    shape = x.shape if isinstance(x, Tensor) else np.shape(x)
    return tuple(shape) if getattr(shape, "rank_known", True) else None
