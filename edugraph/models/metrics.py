"""Metrics for ``compile(metrics=[...])``: numbers to watch during training, not to minimise.

Each metric maps (y_true, y_pred) of one batch to the batch mean; ``fit`` averages over the
epoch, weighting each batch by its size (as Keras reports them).
"""
from ..losses import match_label_rank
from ..ops.math import abs, cast, equal, greater, square
from ..ops.reduce import argmax, reduce_mean
from ..ops.shape import reshape


def sparse_categorical_accuracy(y_true, y_pred):
    """Fraction of rows whose largest score is at the labelled class id."""
    labels = reshape(y_true, (-1,)) if len(y_true.shape) == len(y_pred.shape) else y_true
    return reduce_mean(cast(equal(argmax(y_pred, -1), cast(labels, "int64")), y_pred.dtype))


def categorical_accuracy(y_true, y_pred):
    """Fraction of rows whose largest score is where the one-hot label has its 1."""
    return reduce_mean(cast(equal(argmax(y_pred, -1), argmax(y_true, -1)), y_pred.dtype))


def binary_accuracy(y_true, y_pred, threshold=0.5):
    y_true = match_label_rank(y_true, y_pred, "binary_accuracy")
    predicted = cast(greater(y_pred, threshold), y_pred.dtype)
    return reduce_mean(cast(equal(predicted, cast(y_true, y_pred.dtype)), y_pred.dtype))


def accuracy(y_true, y_pred):
    """Keras's "accuracy": binary for one output unit, categorical for one-hot labels,
    sparse for class ids."""
    if y_pred.shape[-1] == 1:
        return binary_accuracy(y_true, y_pred)
    if tuple(y_true.shape) == tuple(y_pred.shape):
        return categorical_accuracy(y_true, y_pred)
    return sparse_categorical_accuracy(y_true, y_pred)


def mean_squared_error(y_true, y_pred):
    y_true = match_label_rank(y_true, y_pred, "mean_squared_error")
    return reduce_mean(square(cast(y_true, y_pred.dtype) - y_pred))


def mean_absolute_error(y_true, y_pred):
    y_true = match_label_rank(y_true, y_pred, "mean_absolute_error")
    return reduce_mean(abs(cast(y_true, y_pred.dtype) - y_pred))


_BY_NAME = {"accuracy": accuracy, "acc": accuracy,
            "sparse_categorical_accuracy": sparse_categorical_accuracy,
            "categorical_accuracy": categorical_accuracy, "binary_accuracy": binary_accuracy,
            "mse": mean_squared_error, "mean_squared_error": mean_squared_error,
            "mae": mean_absolute_error, "mean_absolute_error": mean_absolute_error}


def get(identifier):
    """(name shown in logs, function) from a Keras name or a function."""
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown metric {identifier!r}. Known: "
                             f"{', '.join(sorted(_BY_NAME))}, or pass f(y_true, y_pred).")
        return identifier, _BY_NAME[identifier]
    if callable(identifier):
        return getattr(identifier, "__name__", type(identifier).__name__), identifier
    raise TypeError(f"A metric must be a name or a function, not {type(identifier).__name__}.")
