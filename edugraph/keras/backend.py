"""``tf.keras.backend`` (``from keras import backend as K``), for what Keras examples use it
for: the image layout (``K.image_data_format()``), the float type and fuzz factor, a fresh
start (``K.clear_session()``), and the maths of custom losses and metrics::

    def rmse(y_true, y_pred):
        return K.sqrt(K.mean(K.square(y_pred - y_true), axis=-1))

The maths functions are edugraph's own ops under Keras's names.
"""
from .. import graph as _graph
from ..losses import EPSILON
from ..nn import module as _module
from ..ops.linalg import matmul as dot                                               # noqa: F401
from ..ops.math import abs, cast, equal, exp, log, maximum, minimum, sqrt, square  # noqa: F401
from ..ops.math import clip as _clip
from ..ops import reduce as _reduce
from ..ops.reduce import reduce_max, reduce_mean, reduce_min, reduce_sum

__all__ = ["image_data_format", "set_image_data_format", "floatx", "epsilon", "clear_session",
           "mean", "sum", "max", "min", "square", "sqrt", "abs", "exp", "log", "clip",
           "maximum", "minimum", "cast", "equal", "dot", "argmax"]


def image_data_format():
    """Images are (batch, height, width, channels) in edugraph, as in TensorFlow's default."""
    return "channels_last"


def set_image_data_format(data_format):
    if data_format != "channels_last":
        raise ValueError(f"edugraph's Keras layers read images as channels_last (batch, height, "
                         f"width, channels) only, not {data_format!r}; transpose the data "
                         "instead, e.g. x.transpose(0, 2, 3, 1) for NCHW arrays.")


def floatx():
    return "float32"


def epsilon():
    """The fuzz factor Keras's losses clip probabilities by (1e-7)."""
    return EPSILON


def clear_session():
    """Forget the layers made so far: names count from ``dense`` again, and TF1 code gets a
    fresh default graph (``tf.keras.backend.clear_session``)."""
    _module.reset_names()
    _graph.reset_default_graph()


def mean(x, axis=None, keepdims=False):
    return reduce_mean(x, axis, keepdims)


def sum(x, axis=None, keepdims=False):         # (Keras's names, shadowing the builtins here)
    return reduce_sum(x, axis, keepdims)


def max(x, axis=None, keepdims=False):
    return reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):
    return reduce_min(x, axis, keepdims)


def argmax(x, axis=-1):
    return _reduce.argmax(x, axis)


def clip(x, min_value, max_value):
    return _clip(x, min_value, max_value)
