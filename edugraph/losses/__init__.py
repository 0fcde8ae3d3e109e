r"""Losses: how far predictions are from labels, as one number to minimise.

Three spellings of the same maths, as students meet them:

* TF1 (``tf.losses``): ``mean_squared_error(labels, predictions)``,
  ``softmax_cross_entropy(onehot_labels, logits)``, ``sparse_softmax_cross_entropy(labels,
  logits)``, ``sigmoid_cross_entropy(multi_class_labels, logits)`` — each returns the mean;
* ``tf.nn``'s per-example ``*_with_logits`` functions, which the others are built on;
* Keras: classes (``SparseCategoricalCrossentropy(from_logits=True)``) that return the mean, and
  lower-case functions (``binary_crossentropy(y_true, y_pred)``) that return one value per
  example. ``compile(loss="sparse_categorical_crossentropy")`` looks names up with ``get``.

Cross-entropy from logits is computed stably with log-softmax,
$-\sum_k y_k (z_k - \log\sum_j e^{z_j})$, never as ``log(softmax(z))``, which gives
``log(0) = -inf`` once a probability underflows. Regularisation terms (``l2_loss``, ``l2(0.01)``)
are ordinary ops, so they appear as nodes in the graph.
"""
import functools

import numpy as np

from ..errors import ShapeError
from ..graph.core import name_scope
from ..ops.activation import log_softmax, relu
from ..ops.base import as_tensors, rank_known
from ..ops.math import abs, cast, clip, exp, log, square, to_float
from ..ops.reduce import reduce_mean, reduce_sum
from ..ops.shape import expand_dims, one_hot
from ..tensor import Tensor, tensor

__all__ = ["mean_squared_error", "absolute_difference", "softmax_cross_entropy",
           "sparse_softmax_cross_entropy", "sigmoid_cross_entropy",
           "softmax_cross_entropy_with_logits", "sparse_softmax_cross_entropy_with_logits",
           "sigmoid_cross_entropy_with_logits", "categorical_crossentropy",
           "sparse_categorical_crossentropy", "binary_crossentropy", "l1_loss", "l2_loss",
           "Loss", "MeanSquaredError", "MeanAbsoluteError", "CategoricalCrossentropy",
           "SparseCategoricalCrossentropy", "BinaryCrossentropy", "Regularizer", "l1", "l2",
           "l1_l2", "get", "match_label_rank"]

EPSILON = 1e-7      # Keras clips probabilities to [ε, 1 − ε] before taking logs


def _scoped(loss):
    """``loss(..., name=None)``: in a graph its ops go under one name scope (TF1's
    ``mean_squared_error/Square``), so the inspector can collapse the loss into one box."""
    @functools.wraps(loss)
    def named(*args, name=None, **kwargs):
        with name_scope(name, loss.__name__):
            return loss(*args, **kwargs)
    return named


def _labels_and_predictions(labels, predictions, integer=False):
    """Both as tensors: the predictions as floats, the labels next to them."""
    predictions = _as_predictions(predictions, labels)
    return _as_labels(labels, predictions, integer), predictions


def _as_predictions(predictions, labels):
    """Predictions (logits or probabilities) as a float tensor, also from lists and arrays as
    TF takes them (on the labels' device when those are a tensor)."""
    return to_float(as_tensors((predictions, labels))[0])


def _as_labels(labels, like, integer=False):
    """Labels as a tensor next to ``like`` (same device; same float dtype unless ``integer``)."""
    if not isinstance(labels, Tensor):
        dtype = "int64" if integer else like.dtype
        return tensor(np.asarray(labels), dtype=dtype, device=like.device)
    if integer:
        return cast(labels, "int64") if labels.dtype.kind == "f" else labels
    return cast(labels, like.dtype)


def _class_count(labels, predictions, where):
    """The number of classes (the size of the predictions' last axis, a score per class),
    once ``labels`` are checked to hold one class id in range per row of ``predictions``."""
    shape = predictions.shape
    if not rank_known(shape) or len(shape) == 0 or shape[-1] is None:
        raise ShapeError(f"{where}: predictions of shape {shape} have no known class axis; "
                         "they need shape (..., num_classes), one score per class (a "
                         "placeholder's: e.g. shape=(None, 10)).")
    if not _compatible(labels.shape, shape[:-1]):
        raise ShapeError(f"{where}: labels of shape {labels.shape} should hold one class id per "
                         f"row of predictions {shape}, i.e. have shape {shape[:-1]}. (One-hot "
                         "labels? Use the softmax_cross_entropy or categorical_crossentropy "
                         "loss.)")
    _check_class_ids(labels, shape[-1], where)
    return shape[-1]


def _check_class_ids(labels, num_classes, where):
    """Out-of-range ids would give an all-zero one-hot row and a silently wrong loss."""
    if labels.graph is not None:
        return
    ids = labels.numpy()
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        raise ShapeError(f"{where}: labels must be class ids in [0, {num_classes}) for logits "
                         f"with {num_classes} classes, but they range over "
                         f"[{ids.min()}, {ids.max()}].")


def match_label_rank(y_true, y_pred, where=None):
    """Keras's rule for loss objects and metrics: labels of shape ``(N,)`` for predictions of
    shape ``(N, 1)`` are taken as ``(N, 1)`` (not broadcast to ``(N, N)``). With ``where``
    (the caller's name) the shapes must then match."""
    shape, pred_shape = tuple(np.shape(y_true)), tuple(y_pred.shape)
    if len(shape) == len(pred_shape) - 1 and pred_shape[-1] == 1:
        y_true = expand_dims(y_true, -1)
    if where is not None:
        _check_same_shape(y_true, y_pred, where)
    return y_true


def _compatible(a, b):
    """Could shapes ``a`` and ``b`` be the same when the graph runs? A placeholder's unknown
    dimension (None) matches any size, and its unknown rank any shape."""
    if not (rank_known(a) and rank_known(b)):
        return True
    return len(a) == len(b) and all(m is None or n is None or m == n for m, n in zip(a, b))


def _check_same_shape(labels, predictions, where):
    if not _compatible(labels.shape, predictions.shape):
        raise ShapeError(f"{where}: labels have shape {labels.shape} but predictions have "
                         f"shape {predictions.shape}; they must match" +
                         (" (for class ids use the sparse_ version)." if "entropy" in where
                          else "."))


# ----------------------------------------------------------------------------- per example (tf.nn)
@_scoped
def softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    r"""Per example: $-\sum_k y_k \log\mathrm{softmax}(z)_k$; gradient softmax(z) − y."""
    labels, logits = _labels_and_predictions(labels, logits)
    _check_same_shape(labels, logits, "softmax_cross_entropy_with_logits")
    return -reduce_sum(labels * log_softmax(logits, axis), axis)


@_scoped
def sparse_softmax_cross_entropy_with_logits(labels, logits):
    """Per example, with integer class ids as labels: $-\\log\\mathrm{softmax}(z)_{y}$."""
    labels, logits = _labels_and_predictions(labels, logits, integer=True)
    num_classes = _class_count(labels, logits, "sparse_softmax_cross_entropy")
    return -reduce_sum(one_hot(labels, num_classes, logits.dtype) * log_softmax(logits), -1)


@_scoped
def sigmoid_cross_entropy_with_logits(labels, logits):
    r"""Elementwise binary cross-entropy of $\sigma(z)$, in TF's overflow-free form
    $\max(z, 0) - z y + \log(1 + e^{-|z|})$."""
    labels, logits = _labels_and_predictions(labels, logits)
    _check_same_shape(labels, logits, "sigmoid_cross_entropy_with_logits")
    return relu(logits) - logits * labels + log(1 + exp(-abs(logits)))


# ----------------------------------------------------------------------------- TF1: the mean
@_scoped
def mean_squared_error(labels, predictions):
    r"""$\frac1n\sum_i (y_i - \hat y_i)^2$ (``tf.losses.mean_squared_error``)."""
    labels, predictions = _labels_and_predictions(labels, predictions)
    _check_same_shape(labels, predictions, "mean_squared_error")
    return reduce_mean(square(labels - predictions))


@_scoped
def absolute_difference(labels, predictions):
    r"""$\frac1n\sum_i |y_i - \hat y_i|$ (mean absolute error)."""
    labels, predictions = _labels_and_predictions(labels, predictions)
    _check_same_shape(labels, predictions, "absolute_difference")
    return reduce_mean(abs(labels - predictions))


@_scoped
def softmax_cross_entropy(onehot_labels, logits):
    return reduce_mean(softmax_cross_entropy_with_logits(onehot_labels, logits))


@_scoped
def sparse_softmax_cross_entropy(labels, logits):
    return reduce_mean(sparse_softmax_cross_entropy_with_logits(labels, logits))


@_scoped
def sigmoid_cross_entropy(multi_class_labels, logits):
    return reduce_mean(sigmoid_cross_entropy_with_logits(multi_class_labels, logits))


# ----------------------------------------------------------------------------- Keras: per example
def categorical_crossentropy(y_true, y_pred, from_logits=False):
    """Per example; ``y_pred`` are probabilities unless ``from_logits``."""
    if from_logits:
        return softmax_cross_entropy_with_logits(y_true, y_pred)
    y_true, y_pred = _labels_and_predictions(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "categorical_crossentropy")
    return -reduce_sum(y_true * log(clip(y_pred, EPSILON, 1 - EPSILON)), -1)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    """Per example, integer class ids as labels (a trailing axis of size 1 is allowed)."""
    y_true, y_pred = _labels_and_predictions(y_true, y_pred, integer=True)
    if y_true.shape and len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = y_true.reshape(tuple(-1 if n is None else n for n in y_true.shape[:-1]))
    if from_logits:
        return sparse_softmax_cross_entropy_with_logits(y_true, y_pred)
    num_classes = _class_count(y_true, y_pred, "sparse_categorical_crossentropy")
    picked = reduce_sum(one_hot(y_true, num_classes, y_pred.dtype) * y_pred, -1)
    return -log(clip(picked, EPSILON, 1 - EPSILON))


def binary_crossentropy(y_true, y_pred, from_logits=False):
    """Mean over the last axis of the elementwise binary cross-entropy (Keras)."""
    if from_logits:
        return reduce_mean(sigmoid_cross_entropy_with_logits(y_true, y_pred), -1)
    y_true, y_pred = _labels_and_predictions(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "binary_crossentropy")
    p = clip(y_pred, EPSILON, 1 - EPSILON)
    return reduce_mean(-(y_true * log(p) + (1 - y_true) * log(1 - p)), -1)


# ----------------------------------------------------------------------------- Keras: classes
class Loss:
    """A loss object: ``loss(y_true, y_pred)`` → the mean over the batch.

    As in Keras, labels of shape ``(N,)`` for predictions of shape ``(N, 1)`` (one sigmoid or
    regression output) are taken as ``(N, 1)``; elsewhere shapes must match."""

    per_example = None

    def __call__(self, y_true, y_pred):
        y_pred = _as_predictions(y_pred, y_true)
        return self.call(match_label_rank(y_true, y_pred), y_pred)

    def call(self, y_true, y_pred):
        return reduce_mean(self.per_example(y_true, y_pred))

    def __repr__(self):
        return f"{type(self).__name__}()"


class MeanSquaredError(Loss):
    def call(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred)


class MeanAbsoluteError(Loss):
    def call(self, y_true, y_pred):
        return absolute_difference(y_true, y_pred)


class _CrossEntropy(Loss):
    def __init__(self, from_logits=False):
        self.from_logits = from_logits

    def per_example(self, y_true, y_pred):
        return type(self).function(y_true, y_pred, from_logits=self.from_logits)

    def __repr__(self):
        return f"{type(self).__name__}(from_logits={self.from_logits})"


class CategoricalCrossentropy(_CrossEntropy):
    function = staticmethod(categorical_crossentropy)


class SparseCategoricalCrossentropy(_CrossEntropy):
    function = staticmethod(sparse_categorical_crossentropy)


class BinaryCrossentropy(_CrossEntropy):
    function = staticmethod(binary_crossentropy)


class LossFunctionWrapper(Loss):
    """A loss function given to ``compile`` (``loss=eg.keras.losses.categorical_crossentropy``
    or one of your own): Keras functions give one loss per example, and training minimises
    their mean over the batch, as Keras does."""

    def __init__(self, fn):
        self.fn = fn

    def per_example(self, y_true, y_pred):
        return self.fn(y_true, y_pred)

    def __repr__(self):
        return f"LossFunctionWrapper({getattr(self.fn, '__name__', self.fn)})"


# ----------------------------------------------------------------------------- regularisation
@_scoped
def l2_loss(t):
    r"""$\frac12 \sum t^2$ (``tf.nn.l2_loss``): a weight-decay term to add to the loss."""
    return reduce_sum(square(t)) / 2


@_scoped
def l1_loss(t):
    r"""$\sum |t|$: pushes weights to exactly zero (sparse models)."""
    return reduce_sum(abs(t))


class Regularizer:
    r"""A penalty on a weight, for ``Dense(..., kernel_regularizer=eg.losses.l2(0.01))``:
    $\lambda_1 \sum|w| + \lambda_2 \sum w^2$ (Keras's definition: no ½)."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = l1, l2

    def __call__(self, weight):
        terms = []
        if self.l1:
            terms.append(self.l1 * l1_loss(weight))
        if self.l2:
            terms.append(self.l2 * reduce_sum(square(weight)))
        return sum(terms[1:], terms[0]) if terms else reduce_sum(weight) * 0

    def __repr__(self):
        return f"Regularizer(l1={self.l1}, l2={self.l2})"


def l1(l1=0.01):
    return Regularizer(l1=l1)


def l2(l2=0.01):
    return Regularizer(l2=l2)


def l1_l2(l1=0.01, l2=0.01):
    return Regularizer(l1=l1, l2=l2)


_BY_NAME = {
    "mse": MeanSquaredError, "mean_squared_error": MeanSquaredError,
    "mae": MeanAbsoluteError, "mean_absolute_error": MeanAbsoluteError,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
}


def get(identifier):
    """A loss object from a Keras name ("sparse_categorical_crossentropy", "mse"), a loss
    object or a function ``f(y_true, y_pred)`` (its values are averaged)."""
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown loss {identifier!r}. Known: {', '.join(sorted(_BY_NAME))},"
                             " or pass a function f(y_true, y_pred).")
        return _BY_NAME[identifier]()
    if isinstance(identifier, Loss):
        return identifier
    if callable(identifier):
        return LossFunctionWrapper(identifier)
    raise TypeError(f"loss must be a name or a callable, not {type(identifier).__name__}.")
