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
import warnings

import numpy as np

from ..errors import InvalidArgumentError, ShapeError
from ..graph.core import name_scope
from ..graph.shapes import broadcast
from ..ops.activation import log_softmax, softmax, softplus
from ..ops.base import Op, apply, as_tensors, rank_known, sums_to
from ..ops.math import Elementwise, abs, cast, clip, log, maximum, square, to_float
from ..ops.shape import stop_gradient
from ..ops.math import where as select   # (`where` names the calling function in messages)
from ..ops.random import ones_like
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
    """Labels as a tensor next to ``like`` (same device). Float labels take ``like``'s dtype;
    class ids (``integer``) keep theirs until ``_class_ids`` has checked them."""
    if not isinstance(labels, Tensor):
        return tensor(np.asarray(labels), dtype=None if integer else like.dtype,
                      device=like.device)
    return labels if integer else cast(labels, like.dtype)


def _class_ids(labels, predictions, where):
    """``labels`` as checked integer class ids, one per row of ``predictions``, and the number
    of classes (the size of the predictions' last axis, a score per class)."""
    shape = predictions.shape
    if not rank_known(shape) or len(shape) == 0 or shape[-1] is None:
        raise ShapeError(f"{where}: predictions of shape {shape} have no known class axis; "
                         "they need shape (..., num_classes), one score per class (a "
                         "placeholder's: e.g. shape=(None, 10)).")
    if not _compatible(labels.shape, shape[:-1]):
        raise ShapeError(_class_ids_shape_problem(labels.shape, shape, where))
    return _check_class_ids(labels, shape[-1], where), shape[-1]


def _class_ids_shape_problem(labels, predictions, where):
    """Why class ids of shape ``labels`` do not fit ``predictions`` (an error message): the
    arguments swapped, a Dense layer on images without Flatten, or one-hot labels."""
    if rank_known(labels) and len(labels) > len(predictions):
        return (f"{where}: the labels have shape {labels} and the predictions {predictions}: "
                "the arguments look swapped. The labels come first: loss(y_true, y_pred) "
                "(in tf.nn, labels=..., logits=...).")
    if rank_known(labels) and len(labels) < len(predictions) - 1:
        return (f"{where}: the labels of shape {labels} hold one class id per example, but "
                f"the predictions of shape {predictions} have extra axes between the batch "
                "and the classes. A Dense layer on images computes on the last axis only: add "
                "Flatten() before it, so that each example gets one row of scores.")
    return (f"{where}: labels of shape {labels} should hold one class id per row of "
            f"predictions {predictions}, i.e. have shape {predictions[:-1]}. (One-hot labels? "
            "Use the softmax_cross_entropy or categorical_crossentropy loss.)")


def _check_class_ids(labels, num_classes, where):
    """``labels`` as integer class ids, once checked to be whole numbers in
    ``[0, num_classes)``. Both checks stop a silently wrong loss: an out-of-range id gives an
    all-zero one-hot row, and casting 1.7 to an integer gives class 1.

    Whole floats (``[0., 2., 1.]``, as read from a float data file) are accepted as Keras
    accepts them (TF's ``tf.nn`` functions refuse any float labels; edugraph takes whole ones
    there too); but where Keras casts ``1.5`` to 1 without a word, this refuses it: a label
    with a fraction is never a class id (probabilities? swapped arguments?).

    A graph's labels have no values until a Session runs it, so there the check is a node
    (``CheckClassIds``) that raises when it runs, as TF's kernel does."""
    if labels.graph is not None:
        return apply(CheckClassIds(num_classes, where), labels)
    error, message = _class_id_problem(labels.numpy(), labels.shape, num_classes, where)
    if error is not None:
        raise error(message)
    return cast(labels, "int64") if labels.dtype.kind == "f" else labels


def _class_id_problem(ids, shape, num_classes, where):
    """(the error to raise, its message) when the array ``ids`` are not class ids for
    ``num_classes`` classes, else (None, None)."""
    if ids.dtype.kind == "f":
        whole = np.isfinite(ids) & (ids == np.round(ids))
        if not whole.all():
            return ValueError, (
                f"{where}: labels must be class ids, whole numbers 0, 1, 2..., but these "
                f"{ids.dtype} labels of shape {shape} include {ids[~whole][0]:g}; a cast to "
                "integers would silently drop the fraction and train on the wrong class. "
                "One-hot or probability labels? Use softmax_cross_entropy (Keras: "
                "categorical_crossentropy). Or are labels and predictions swapped?")
        ids = ids.astype(np.int64)
    if ids.size and (ids.min() < 0 or ids.max() >= num_classes):
        return ShapeError, (
            f"{where}: labels must be class ids in [0, {num_classes}) for logits with "
            f"{num_classes} classes, but they range over [{ids.min()}, {ids.max()}].")
    return None, None


class CheckClassIds(Op):
    """In a graph: the labels, as int64 class ids, once checked when the graph runs (TF's
    kernel checks its labels then too). An error names this node."""

    name, type_name, differentiable = "check_class_ids", "CheckClassIds", False
    stateful = True         # never folded away while building: it must raise when it runs

    def __init__(self, num_classes, where):
        self.num_classes, self.where = num_classes, where

    def static_shape(self, labels):
        return labels.shape, np.dtype(np.int64) if labels.dtype.kind == "f" else labels.dtype

    def session_step(self, session, node):
        host = node._device.get

        def check(ids):
            _, message = _class_id_problem(host(ids), ids.shape, self.num_classes, self.where)
            if message is not None:
                raise InvalidArgumentError(f"{message}\n\t [[node {node.name}]]", node)
            return ids.astype(np.int64) if ids.dtype.kind == "f" else ids
        return check


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
                         f"shape {predictions.shape}; they must match{_shape_hint(where)}")


def _shape_hint(where):
    """The end of ``_check_same_shape``'s message: what to do, for the loss ``where``."""
    if where == "binary_crossentropy":
        return (". Binary cross-entropy wants one output per example: end the model with "
                "Dense(1, activation='sigmoid'); or, for 2 softmax outputs and class ids, use "
                "loss='sparse_categorical_crossentropy'.")
    if "softmax" in where or "categorical" in where:
        return " (for class ids use the sparse_ version)."
    return "."


# ----------------------------------------------------------------------------- per example (tf.nn)
@_scoped
def softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    r"""Per example: $-\sum_k y_k \log\mathrm{softmax}(z)_k$; gradient softmax(z) − y."""
    labels, logits = _labels_and_predictions(labels, logits)
    _check_same_shape(labels, logits, "softmax_cross_entropy_with_logits")
    return -reduce_sum(weighted_log_probs(labels, log_softmax(logits, axis)), axis)


@_scoped
def sparse_softmax_cross_entropy_with_logits(labels, logits):
    """Per example, with integer class ids as labels: $-\\log\\mathrm{softmax}(z)_{y}$."""
    labels, logits = _labels_and_predictions(labels, logits, integer=True)
    labels, num_classes = _class_ids(labels, logits, "sparse_softmax_cross_entropy")
    return apply(SparseSoftmaxCrossEntropy(num_classes), labels, logits)


class SparseSoftmaxCrossEntropy(Op):
    r"""Per example $-\log\mathrm{softmax}(z)_y$ for class ids $y$, one node, as TF's
    ``SparseSoftmaxCrossEntropyWithLogits`` fuses it: the loss reads only the label's entry
    of $z - \log\sum_j e^{z_j}$ (no one-hot rows, no product), and the gradient is
    $\mathrm{softmax}(z) - \mathrm{onehot}(y)$. (A class masked with a logit of $-\infty$
    costs nothing unless it is the label.)"""

    name, type_name = "sparse_softmax_cross_entropy", "SparseSoftmaxCrossEntropyWithLogits"

    def __init__(self, num_classes):
        self.num_classes = num_classes

    def forward(self, xp, labels, logits):
        shifted = logits - logits.max(axis=-1, keepdims=True)
        label_logit = xp.take_along_axis(shifted, labels[..., None].astype(np.intp), -1)
        return xp.log(xp.exp(shifted).sum(axis=-1)) - label_logit[..., 0]

    def static_shape(self, labels, logits):
        return logits.shape[:-1], logits.dtype      # (one loss per row of scores)

    def backward(self, grad, out, labels, logits):
        return None, expand_dims(grad, -1) * (
            softmax(logits) - one_hot(labels, self.num_classes, logits.dtype))


def weighted_log_probs(weights, log_probs, labels_take_gradient=True):
    r"""$w_k \log p_k$, read as 0 where $w_k = 0$ and $\log p_k = -\infty$ (a class masked
    with a logit of $-\infty$), where the product would be $0 \cdot -\infty$ = nan. (PyTorch
    and TF agree for class-id targets; for probability targets they give nan.) Only there: the
    weights' gradient is $\log p_k$ also where $w_k = 0$, as in TF2, whose labels take a
    gradient (a masked class's stays 0, where TF's is $-\infty$). Weights made from class ids
    take none: ``labels_take_gradient=False`` spares the training step the second test."""
    kept = weights != 0
    if labels_take_gradient:
        kept = kept | (log_probs > -np.inf)
    return weights * select(kept, log_probs, 0.0)


@_scoped
def sigmoid_cross_entropy_with_logits(labels, logits):
    r"""Elementwise binary cross-entropy of $\sigma(z)$: $\log(1 + e^z) - z y$, that is
    $\mathrm{softplus}(z) - z y$, which neither overflows nor loses the small term, and whose
    gradient is $\sigma(z) - y$ everywhere, as TF's. (TF writes it $\max(z, 0) - z y + \log(1 +
    e^{-|z|})$, the same values; built here from relu and abs, its gradient at $z = 0$ would
    take their kinks' one-sided slopes and come out $-y$ instead of $\frac12 - y$.)"""
    labels, logits = _labels_and_predictions(labels, logits)
    _check_same_shape(labels, logits, "sigmoid_cross_entropy_with_logits")
    return softplus(logits) - logits * labels


class BinaryCrossEntropy(Elementwise):
    r"""PyTorch's ``binary_cross_entropy`` of probabilities (Keras's clips them instead):
    $-(y \log p + (1 - y) \log(1 - p))$ with each log clamped to at least −100,
    so that $p = 0$ or $1$ gives a loss of 100, not ∞. The gradient is PyTorch's too,
    $\frac{p - y}{\max(p\,(1 - p),\ \epsilon)}$: huge but finite where $p$ is 0 or 1, where the
    clamps' flat side would give 0 and a saturated $p$ would never move."""

    name = "binary_cross_entropy"
    epsilon = float(np.float32(1e-12))      # PyTorch's is a C float: 1e-12 rounded to float32

    def forward(self, xp, p, y):
        with np.errstate(divide="ignore"):              # log(0) = -inf, then clamped
            return (y - 1) * xp.maximum(xp.log1p(-p), -100) - y * xp.maximum(xp.log(p), -100)

    def static_shape(self, p, y):
        """In a graph: the broadcast of both shapes (a placeholder's unknown sizes included)."""
        return broadcast([p.shape, y.shape], self.name), p.dtype

    def backward(self, grad, out, p, y):
        # the target's gradient is PyTorch's, −logit(p), unclamped: ±∞ where p is 1 or 0
        return (grad * (p - y) / maximum((1 - p) * p, self.epsilon),
                grad * -log(p / (1 - p)) if y.requires_grad else None)


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


def tf1_softmax_cross_entropy_with_logits(labels, logits, axis=-1):
    """TF1's per-example softmax cross-entropy (``tf.compat.v1.nn``'s, and inside
    ``tf.losses.softmax_cross_entropy``): the labels' gradient is stopped (TF1's
    "labels_stop_gradient" node), so only the logits learn. (TF2's ``tf.nn`` function, TF1's
    ``_v2``, and Keras let it flow into the labels too.)"""
    labels, logits = _labels_and_predictions(labels, logits)
    return softmax_cross_entropy_with_logits(stop_gradient(labels), logits, axis)


@_scoped
def softmax_cross_entropy(onehot_labels, logits):
    return reduce_mean(tf1_softmax_cross_entropy_with_logits(onehot_labels, logits))


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
        _warn_if_activated(y_pred, "categorical_crossentropy", "softmax")
    logits = y_pred if from_logits else keras_logits(y_pred, "softmax")
    if logits is not None:
        return softmax_cross_entropy_with_logits(y_true, logits)
    y_true, y_pred = _labels_and_predictions(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "categorical_crossentropy")
    _warn_if_logits(y_pred, "categorical_crossentropy", "CategoricalCrossentropy", "softmax")
    y_pred = y_pred / reduce_sum(y_pred, -1, keepdims=True)     # Keras: they sum to 1 now
    return -reduce_sum(y_true * log(clip(y_pred, EPSILON, 1 - EPSILON)), -1)


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    """Per example, integer class ids as labels (a trailing axis of size 1 is allowed)."""
    y_true, y_pred = _labels_and_predictions(y_true, y_pred, integer=True)
    if y_true.shape and len(y_true.shape) == len(y_pred.shape) and y_true.shape[-1] == 1:
        y_true = y_true.reshape(tuple(-1 if n is None else n for n in y_true.shape[:-1]))
    if from_logits:
        _warn_if_activated(y_pred, "sparse_categorical_crossentropy", "softmax")
    logits = y_pred if from_logits else keras_logits(y_pred, "softmax")
    if logits is not None:
        return sparse_softmax_cross_entropy_with_logits(y_true, logits)
    y_true, num_classes = _class_ids(y_true, y_pred, "sparse_categorical_crossentropy")
    _warn_if_logits(y_pred, "sparse_categorical_crossentropy", "SparseCategoricalCrossentropy",
                    "softmax")
    # Keras's: log-softmax of the clipped probabilities' logs, i.e. −log(p_y / Σ_k p_k) with
    # clipped p: probabilities that do not sum to 1 are renormalised
    log_probs = log_softmax(log(clip(y_pred, EPSILON, 1 - EPSILON)))
    return -reduce_sum(one_hot(y_true, num_classes, y_pred.dtype) * log_probs, -1)


def binary_crossentropy(y_true, y_pred, from_logits=False):
    """Mean over the last axis of the elementwise binary cross-entropy (Keras)."""
    if from_logits:
        _warn_if_activated(y_pred, "binary_crossentropy", "sigmoid")
    logits = y_pred if from_logits else keras_logits(y_pred, "sigmoid")
    if logits is not None:
        return reduce_mean(sigmoid_cross_entropy_with_logits(y_true, logits), -1)
    y_true, y_pred = _labels_and_predictions(y_true, y_pred)
    _check_same_shape(y_true, y_pred, "binary_crossentropy")
    _warn_if_logits(y_pred, "binary_crossentropy", "BinaryCrossentropy", "sigmoid")
    p = clip(y_pred, EPSILON, 1 - EPSILON)
    return reduce_mean(-(y_true * log(p) + (1 - y_true) * log(1 - p)), -1)


def keras_logits(y_pred, activation):
    """The logits of predictions that a Keras ``activation`` made ("sigmoid" or "softmax"), or
    None. Keras's cross-entropies compute from them, not from the probabilities: a saturated
    sigmoid (|z| > 16) reads 1 − 1e-7 once clipped, so the loss would stop near 16 and its
    gradient would be 0, and a model fed unscaled inputs would never learn. (Arrays, and
    tensors no Keras activation made, have no ``_keras_logits``.)"""
    made_by, logits = getattr(y_pred, "_keras_logits", (None, None))
    return logits if made_by == activation else None


def _warn_if_logits(y_pred, where, class_name, activation):
    """Probabilities outside [0, 1] are almost surely logits passed without
    ``from_logits=True``. Keras computes a number from them all the same (clipping hides the
    mistake, and the model trains badly), so the number stays, with a warning. Only eagerly:
    there the values are at hand, and the check costs a min and a max."""
    if y_pred.graph is not None:
        return
    values = y_pred.numpy()
    if values.size and (values.min() < 0 or values.max() > 1):
        warnings.warn(f"{where}: predictions range over [{values.min():.3g}, "
                      f"{values.max():.3g}], outside [0, 1]: are they logits? Pass "
                      f"from_logits=True ({class_name}(from_logits=True) in compile) or end "
                      f"the model with a {activation}.", UserWarning, stacklevel=3)


def _warn_if_activated(y_pred, where, activation):
    """The opposite mistake: ``from_logits=True`` for predictions a softmax (or sigmoid) made,
    which the loss then applies a second time (the model learns slowly, if at all). Keras
    warns, seeing the op that made ``y_pred``; so do we: in a graph always, eagerly while
    gradients are recorded (as in ``fit``'s training steps)."""
    if not isinstance(y_pred, Tensor):
        return
    made_by = y_pred._op if y_pred.graph is None else y_pred.op.eg_op
    if getattr(made_by, "name", None) == activation:
        warnings.warn(f"{where} received from_logits=True, but its predictions were made by "
                      f"a {activation}: they are probabilities, not logits, and the loss "
                      f"applies a {activation} to them a second time. Was this intended? "
                      f"Drop the model's last {activation} (the stabler choice), or pass "
                      "from_logits=False.", UserWarning, stacklevel=3)


# ----------------------------------------------------------------------------- Keras: classes
class Loss:
    """A loss object: ``loss(y_true, y_pred)`` → the mean over the batch.

    As in Keras, labels of shape ``(N,)`` for predictions of shape ``(N, 1)`` (one sigmoid or
    regression output) are taken as ``(N, 1)``; elsewhere shapes must match. Keras's
    ``sample_weight`` multiplies each example's loss, and ``reduction`` says what becomes of
    them: ``"sum_over_batch_size"`` (the default: their sum over how many there are, so the
    mean without weights; Keras 3 also calls it ``"mean"``), ``"mean_with_sample_weight"``
    (their sum over the weights' sum), ``"sum"``, or ``"none"`` / None (each example's
    own)."""

    per_example = None
    reduction, name = "sum_over_batch_size", None     # (a subclass's own __init__ keeps them)

    def __init__(self, reduction="sum_over_batch_size", name=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"{type(self).__name__}: reduction={reduction!r} is not one of "
                             f"Keras's: {', '.join(map(repr, _REDUCTIONS))}.")
        self.reduction = "none" if reduction is None else reduction
        self.name = name

    def __call__(self, y_true, y_pred, sample_weight=None):
        y_pred = _as_predictions(y_pred, y_true)
        y_true = match_label_rank(y_true, y_pred)
        if sample_weight is None and self.reduction in _MEANS:
            return self.call(y_true, y_pred)
        losses = self.per_example(y_true, y_pred)
        if sample_weight is not None:
            losses, weights = _weighted(losses, sample_weight, type(self).__name__)
        if self.reduction == "none":
            return losses
        total = reduce_sum(losses)
        if self.reduction == "sum":
            return total
        if self.reduction == "mean_with_sample_weight" and sample_weight is not None:
            return total / reduce_sum(weights)
        return total / _count(losses)

    def call(self, y_true, y_pred):
        return reduce_mean(self.per_example(y_true, y_pred))

    def __repr__(self):
        return f"{type(self).__name__}()"


_MEANS = ("sum_over_batch_size", "mean", "mean_with_sample_weight")
_REDUCTIONS = _MEANS + ("sum", "none", None)


def _weighted(losses, weights, where):
    """The per-example ``losses`` times Keras's sample weights (one per example, (N,) or
    (N, 1), when the losses take that trailing axis too, as Keras's do; or one number), and
    the weights."""
    weights = as_tensors((weights, losses))[0]
    if weights.dtype != losses.dtype:             # (numpy's float64 weights too, as Keras)
        weights = cast(weights, losses.dtype)
    shape = tuple(weights.shape)
    if len(shape) == len(losses.shape) + 1 and shape[-1] == 1:
        losses = expand_dims(losses, -1)
    if None not in tuple(losses.shape) + shape and not sums_to(tuple(losses.shape), shape):
        raise ShapeError(f"{where}: sample_weight of shape {shape} does not fit the "
                         f"per-example losses of shape {tuple(losses.shape)}: give one weight "
                         "per example, shape (N,), or one number.")
    return losses * weights, weights


def _count(losses):
    """How many per-example losses there are (known when the graph runs, in a graph)."""
    if None not in tuple(losses.shape):
        return max(1, int(np.prod(losses.shape)))
    return reduce_sum(ones_like(losses))


class MeanSquaredError(Loss):
    def per_example(self, y_true, y_pred):
        return reduce_mean(square(y_pred - y_true), -1)

    def call(self, y_true, y_pred):
        return mean_squared_error(y_true, y_pred)


class MeanAbsoluteError(Loss):
    def per_example(self, y_true, y_pred):
        return reduce_mean(abs(y_pred - y_true), -1)

    def call(self, y_true, y_pred):
        return absolute_difference(y_true, y_pred)


class _CrossEntropy(Loss):
    smooths_labels = True

    def __init__(self, from_logits=False, label_smoothing=0.0,
                 reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
        if label_smoothing and not self.smooths_labels:
            raise TypeError(f"{type(self).__name__} has no label_smoothing (as in Keras: "
                            "class ids cannot be smoothed); use CategoricalCrossentropy("
                            "label_smoothing=...) with one-hot labels.")
        if not 0 <= label_smoothing <= 1:
            raise ValueError(f"label_smoothing must be between 0 and 1, got {label_smoothing}.")
        self.from_logits, self.label_smoothing = from_logits, label_smoothing

    def per_example(self, y_true, y_pred):
        if self.label_smoothing:
            y_true = self.smoothed(_as_labels(y_true, y_pred), y_pred)
        return type(self).function(y_true, y_pred, from_logits=self.from_logits)

    def __repr__(self):
        smoothing = f", label_smoothing={self.label_smoothing}" if self.label_smoothing else ""
        return f"{type(self).__name__}(from_logits={self.from_logits}{smoothing})"


class CategoricalCrossentropy(_CrossEntropy):
    function = staticmethod(categorical_crossentropy)

    def smoothed(self, y_true, y_pred):
        """Keras's: each label moves ``label_smoothing`` towards the uniform 1 / classes."""
        return y_true * (1 - self.label_smoothing) + self.label_smoothing / y_pred.shape[-1]


class SparseCategoricalCrossentropy(_CrossEntropy):
    function = staticmethod(sparse_categorical_crossentropy)
    smooths_labels = False


class BinaryCrossentropy(_CrossEntropy):
    function = staticmethod(binary_crossentropy)

    def smoothed(self, y_true, y_pred):
        """Keras's: each label moves ``label_smoothing`` towards 1/2."""
        return y_true * (1 - self.label_smoothing) + 0.5 * self.label_smoothing


class LossFunctionWrapper(Loss):
    """A loss function given to ``compile`` (``loss=eg.keras.losses.categorical_crossentropy``
    or one of your own): Keras functions give one loss per example, and training minimises
    their mean over the batch, as Keras does."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None):
        super().__init__(reduction, name)
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
    object or class, or a function ``f(y_true, y_pred)`` (its values are averaged)."""
    if isinstance(identifier, str):
        if identifier not in _BY_NAME:
            raise ValueError(f"Unknown loss {identifier!r}. Known: {', '.join(sorted(_BY_NAME))},"
                             " or pass a function f(y_true, y_pred).")
        return _BY_NAME[identifier]()
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()                     # (the class itself: Keras 3 makes one too)
    if callable(identifier):
        return LossFunctionWrapper(identifier)
    raise TypeError(f"loss must be a name or a callable, not {type(identifier).__name__}.")
