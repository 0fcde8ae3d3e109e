"""``tf.keras.losses``: edugraph's losses (``eg.losses``), with Keras's functions where TF1's
of the same name differ.

TF1's ``tf.losses.mean_squared_error(labels, predictions)`` is one number, the mean over all
values; Keras's ``tf.keras.losses.mean_squared_error(y_true, y_pred)`` (also ``mse``) gives one
value per example, the mean over the last axis, as Keras's other loss functions
(``categorical_crossentropy``...) do. As in Keras, these are the metrics' functions.
"""
from .. import losses as _losses
from ..models.metrics import mean_absolute_error, mean_squared_error

mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error


def __getattr__(name):
    """Any other name is ``eg.losses``'s (the classes, ``categorical_crossentropy``, ``get``)."""
    return getattr(_losses, name)


def __dir__():
    return sorted(set(globals()) | set(dir(_losses)))
