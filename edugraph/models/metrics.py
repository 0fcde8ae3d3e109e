"""Metrics: numbers to watch during training, not to minimise.

The functions (``sparse_categorical_accuracy``...) give one value per example, as Keras's do;
``compile(metrics=[...])`` averages them over each batch, and ``fit`` over the epoch, weighting
each batch by its size (as Keras reports them).

The classes (``eg.keras.metrics.Mean()``, ``SparseCategoricalAccuracy()``...) keep a running
value over batches for a hand-written training loop (TF2's quickstart): calling one adds a
batch and returns the value so far, ``result()`` reads it and ``reset_state()`` starts again.
Their totals are Variables, so calls inside an ``eg.function`` update them on every run.
"""
import re

import numpy as np

from ..context import no_grad
from ..losses import _as_predictions, match_label_rank
from ..ops.base import as_tensor
from ..ops.math import abs, cast, divide_no_nan, equal, greater, square
from ..ops.random import ones_like
from ..ops.reduce import argmax, reduce_mean, reduce_sum
from ..ops.shape import broadcast_to, reshape
from ..tensor import as_dtype
from ..variable import Variable


def sparse_categorical_accuracy(y_true, y_pred):
    """Per example: 1 where the largest score is at the labelled class id, else 0."""
    labels = reshape(y_true, (-1,)) if len(y_true.shape) == len(y_pred.shape) else y_true
    return cast(equal(argmax(y_pred, -1), cast(labels, "int64")), y_pred.dtype)


def categorical_accuracy(y_true, y_pred):
    """Per example: 1 where the largest score is where the one-hot label has its 1."""
    return cast(equal(argmax(y_pred, -1), argmax(y_true, -1)), y_pred.dtype)


def binary_accuracy(y_true, y_pred, threshold=0.5):
    """Per example: the fraction of its outputs on the right side of ``threshold``."""
    y_true = match_label_rank(y_true, y_pred, "binary_accuracy")
    predicted = cast(greater(y_pred, threshold), y_pred.dtype)
    return reduce_mean(cast(equal(predicted, cast(y_true, y_pred.dtype)), y_pred.dtype), -1)


def accuracy(y_true, y_pred):
    """Keras's "accuracy": binary for one output unit, categorical for one-hot labels,
    sparse for class ids."""
    if y_pred.shape[-1] == 1:
        return binary_accuracy(y_true, y_pred)
    if tuple(y_true.shape) == tuple(y_pred.shape):
        return categorical_accuracy(y_true, y_pred)
    return sparse_categorical_accuracy(y_true, y_pred)


def mean_squared_error(y_true, y_pred):
    """Per example: the mean over the last axis of the squared errors (also Keras's loss
    function ``eg.keras.losses.mean_squared_error``, as in Keras)."""
    y_pred = _as_predictions(y_pred, y_true)
    y_true = match_label_rank(y_true, y_pred, "mean_squared_error")
    return reduce_mean(square(cast(y_true, y_pred.dtype) - y_pred), -1)


def mean_absolute_error(y_true, y_pred):
    """Per example: the mean over the last axis of the absolute errors."""
    y_pred = _as_predictions(y_pred, y_true)
    y_true = match_label_rank(y_true, y_pred, "mean_absolute_error")
    return reduce_mean(abs(cast(y_true, y_pred.dtype) - y_pred), -1)


_BY_NAME = {"accuracy": accuracy, "acc": accuracy,
            "sparse_categorical_accuracy": sparse_categorical_accuracy,
            "categorical_accuracy": categorical_accuracy, "binary_accuracy": binary_accuracy,
            "mse": mean_squared_error, "mean_squared_error": mean_squared_error,
            "mae": mean_absolute_error, "mean_absolute_error": mean_absolute_error}


# ----------------------------------------------------------------------------- running metrics
class Metric:
    """A weighted mean kept over batches: ``total / count``, both Variables."""

    def __init__(self, name=None, dtype=None):
        self.name = name or re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()
        self.dtype = as_dtype(dtype or "float32")
        self.total = Variable(np.zeros((), self.dtype), trainable=False, name=f"{self.name}/total")
        self.count = Variable(np.zeros((), self.dtype), trainable=False, name=f"{self.name}/count")

    def update_state(self, *args, **kwargs):
        raise NotImplementedError

    def result(self):
        """The mean so far (0 before anything was added, as in Keras)."""
        return divide_no_nan(self.total, self.count)

    def reset_state(self):
        with no_grad():
            self.total.assign(0.0)
            self.count.assign(0.0)

    reset_states = reset_state          # the name before TF 2.5

    def __call__(self, *args, **kwargs):
        self.update_state(*args, **kwargs)
        return self.result()

    def _add(self, values, sample_weight=None):
        """Add each of ``values`` to the mean, with its weight (1 if none is given)."""
        values = cast(as_tensor(values), self.dtype)
        weights = ones_like(values) if sample_weight is None else \
            broadcast_to(cast(as_tensor(sample_weight), self.dtype), values.shape)
        with no_grad():                 # a metric is watched, never differentiated
            self.total.assign_add(reduce_sum(values * weights))
            self.count.assign_add(reduce_sum(weights))

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} result={float(self.result()):.6g}>"


class Mean(Metric):
    """The running mean of every value passed in (``train_loss(loss)``)."""

    def update_state(self, values, sample_weight=None):
        self._add(values, sample_weight)


class MeanMetricWrapper(Metric):
    """The running mean of a per-example metric function over all examples seen."""

    def __init__(self, fn, name=None, dtype=None, **fn_kwargs):
        self.fn, self._fn_kwargs = fn, fn_kwargs
        super().__init__(name or fn.__name__, dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred = as_tensor(y_pred)
        self._add(self.fn(as_tensor(y_true), y_pred, **self._fn_kwargs), sample_weight)


def _wrapping(fn):
    """A MeanMetricWrapper class for ``fn``, with Keras's constructor arguments."""
    class Wrapped(MeanMetricWrapper):
        def __init__(self, name=None, dtype=None, **fn_kwargs):
            super().__init__(fn, name, dtype, **fn_kwargs)
    return Wrapped


def _exact_match(y_true, y_pred):
    return cast(equal(cast(y_true, y_pred.dtype), y_pred), "float32")


class Accuracy(_wrapping(_exact_match)):
    """How often predictions equal labels exactly (Keras's ``Accuracy``; the "accuracy" string
    in ``compile`` picks the right kind of accuracy instead)."""

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(name, dtype)


class SparseCategoricalAccuracy(_wrapping(sparse_categorical_accuracy)):
    """How often the top score is at the class id (the TF2 quickstart's metric)."""


class CategoricalAccuracy(_wrapping(categorical_accuracy)):
    """How often the top score is where the one-hot label has its 1."""


class BinaryAccuracy(_wrapping(binary_accuracy)):
    """How often a probability is on the right side of ``threshold`` (default 0.5)."""


class MeanSquaredError(_wrapping(mean_squared_error)):
    pass


class MeanAbsoluteError(_wrapping(mean_absolute_error)):
    pass


def get(identifier):
    """(name shown in logs, per-example function) from a Keras name, a metric object such as
    ``SparseCategoricalAccuracy()`` (or its class: Keras 3 makes one) or a function."""
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        identifier = identifier()
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown metric {identifier!r}. Known: "
                             f"{', '.join(sorted(_BY_NAME))}, or pass f(y_true, y_pred).")
        return identifier, _BY_NAME[identifier]
    if isinstance(identifier, MeanMetricWrapper):
        fn, kwargs = identifier.fn, identifier._fn_kwargs
        return identifier.name, (lambda y_true, y_pred: fn(y_true, y_pred, **kwargs))
    if isinstance(identifier, Metric):
        raise TypeError(f"compile(metrics=...) takes metrics of (y_true, y_pred); "
                        f"{type(identifier).__name__} averages values passed to it: call it in "
                        "your own training loop instead.")
    if callable(identifier):
        return getattr(identifier, "__name__", type(identifier).__name__), identifier
    raise TypeError(f"A metric must be a name or a function, not {type(identifier).__name__}.")
