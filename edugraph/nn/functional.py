r"""``torch.nn.functional`` (``import edugraph.nn.functional as F``): PyTorch's names and
arguments for edugraph's ops and losses, so that ``F.relu(self.fc1(x))`` and
``F.cross_entropy(logits, y)`` run as written. Each function is a thin alias: the maths lives
in ``edugraph/ops`` and ``edugraph/losses``.

Two of PyTorch's layouts differ from TF's, and these functions take PyTorch's: ``linear``'s
weight is (out_features, in_features), the transpose of a Dense kernel; ``cross_entropy``
finds the classes in dimension 1, ``(N, C)`` or ``(N, C, d1, ...)``, where TF puts them last.
"""
from ..errors import ShapeError
from ..losses import _check_class_ids, _compatible, softmax_cross_entropy_with_logits
from ..losses import _labels_and_predictions
from ..ops import activation as _activation
from ..ops.activation import relu, sigmoid, tanh  # noqa: F401  (PyTorch's arguments already)
from ..ops.linalg import matmul
from ..ops.math import abs, cast, square, to_float
from ..ops.reduce import reduce_mean, reduce_sum
from ..ops.shape import gather, one_hot, transpose
from ..tensor import Tensor, tensor

__all__ = ["relu", "leaky_relu", "sigmoid", "tanh", "softmax", "log_softmax", "dropout",
           "linear", "cross_entropy", "mse_loss", "l1_loss"]

REDUCTIONS = ("mean", "sum", "none")


def leaky_relu(input, negative_slope=0.01):
    """PyTorch's default slope, 0.01 (``eg.nn.leaky_relu`` has TF's, 0.2)."""
    return _activation.leaky_relu(input, alpha=negative_slope)


def softmax(input, dim):
    return _activation.softmax(input, axis=dim)


def log_softmax(input, dim):
    return _activation.log_softmax(input, axis=dim)


def dropout(input, p=0.5, training=True):
    """Zero each element with probability ``p``, scale the rest by 1/(1 − p). Unlike the
    ``nn.Dropout`` module it does not know the model's mode: in ``forward`` write
    ``F.dropout(x, p, training=self.training)``, or it drops at evaluation too."""
    return _activation.dropout(input, rate=p, training=training)


def linear(input, weight, bias=None):
    r"""$y = x W^\top + b$ with PyTorch's weight, of shape (out_features, in_features)."""
    if weight.shape[-1] != input.shape[-1] and None not in (weight.shape[-1], input.shape[-1]):
        raise ShapeError(
            f"linear: the input of shape {tuple(input.shape)} has {input.shape[-1]} features, "
            f"but the weight of shape {tuple(weight.shape)} takes {weight.shape[-1]} (PyTorch's "
            "layout, (out_features, in_features)). An eg.nn.Linear's kernel is the transpose, "
            "(in_features, out_features): pass layer.kernel.T.")
    y = matmul(input, transpose(weight))
    return y if bias is None else y + bias


# ----------------------------------------------------------------------------- losses
def cross_entropy(input, target, weight=None, reduction="mean", label_smoothing=0.0):
    r"""Softmax cross-entropy from logits ``input`` (classes in dimension 1) and ``target``:
    integer class ids of shape (N,) (or (N, d1, ...)), or float class probabilities shaped
    like ``input``. Per example $-\sum_k q_k \log\mathrm{softmax}(x)_k$, where $q$ is the
    one-hot target, smoothed to $(1-\varepsilon) q + \varepsilon / C$ by ``label_smoothing``
    and scaled per class by ``weight``; the weighted mean divides by the summed weights of the
    target classes, as PyTorch's does."""
    check_reduction(reduction, "cross_entropy")
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}.")
    logits = _classes_last(to_float(input))
    num_classes = logits.shape[-1]
    target = target if isinstance(target, Tensor) else tensor(target, device=logits.device)
    class_ids = target.dtype.kind in "iu"
    if class_ids:
        if not _compatible(target.shape, logits.shape[:-1]):
            raise ShapeError(
                f"cross_entropy: the target of shape {tuple(target.shape)} should hold one class "
                f"id for each example of the input {tuple(input.shape)} (classes in dimension "
                f"1), i.e. have shape {tuple(logits.shape[:-1])}. For one-hot or probability "
                "targets use a float tensor shaped like the input (target.float()).")
        _check_class_ids(target, num_classes, "cross_entropy")
        labels = one_hot(target, num_classes, logits.dtype)
    elif target.dtype.kind == "f":
        if not _compatible(target.shape, input.shape):
            raise ShapeError(
                f"cross_entropy: a float target holds class probabilities and must be shaped "
                f"like the input {tuple(input.shape)}, but it has shape {tuple(target.shape)}. "
                "Class ids must be integers: target.long().")
        labels = _classes_last(cast(target, logits.dtype))
    else:
        raise TypeError(f"cross_entropy: the target must hold integer class ids or float "
                        f"probabilities, not {target.dtype} values.")
    if label_smoothing:
        labels = labels * (1 - label_smoothing) + label_smoothing / num_classes
    if weight is not None:
        weight = _class_weights(weight, num_classes, logits)
        labels = labels * weight
    losses = softmax_cross_entropy_with_logits(labels, logits)
    if reduction == "mean" and weight is not None and class_ids:
        return reduce_sum(losses) / reduce_sum(gather(weight, target))
    return _reduced(losses, reduction)


def mse_loss(input, target, reduction="mean"):
    r"""$(x - y)^2$ for each element, then their mean (or sum, or each: ``reduction``)."""
    input, target = _same_shape(input, target, "mse_loss", reduction)
    return _reduced(square(input - target), reduction)


def l1_loss(input, target, reduction="mean"):
    r"""$|x - y|$ for each element, then their mean (or sum, or each: ``reduction``)."""
    input, target = _same_shape(input, target, "l1_loss", reduction)
    return _reduced(abs(input - target), reduction)


def check_reduction(reduction, where):
    if reduction not in REDUCTIONS:
        raise ValueError(f"{where}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}.")
    return reduction


def _reduced(losses, reduction):
    if reduction == "mean":
        return reduce_mean(losses)
    return reduce_sum(losses) if reduction == "sum" else losses


def _same_shape(input, target, where, reduction):
    """Both as float tensors of one shape. PyTorch would broadcast a (64, 1) input against a
    (64,) target to (64, 64) and only warn: a silently wrong loss, refused here."""
    check_reduction(reduction, where)
    target, input = _labels_and_predictions(target, input)
    if not _compatible(target.shape, input.shape):
        raise ShapeError(
            f"{where}: the input has shape {tuple(input.shape)} but the target has shape "
            f"{tuple(target.shape)}; they must match (broadcasting them would compare every "
            "prediction with every target). Reshape one, e.g. target.view(-1, 1) or "
            "input.squeeze(1).")
    return input, target


def _classes_last(x):
    """PyTorch's (N, C, d1, ...) as TF's (N, d1, ..., C); (N, C) and (C,) stay as they are."""
    if x.ndim <= 2:
        return x
    return transpose(x, (0,) + tuple(range(2, x.ndim)) + (1,))


def _class_weights(weight, num_classes, logits):
    weight = weight if isinstance(weight, Tensor) else tensor(weight, device=logits.device)
    if tuple(weight.shape) != (num_classes,):
        raise ShapeError(f"cross_entropy: weight must hold one number per class, shape "
                         f"({num_classes},), but it has shape {tuple(weight.shape)}.")
    return cast(weight, logits.dtype)
