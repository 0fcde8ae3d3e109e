r"""``torch.nn.functional`` (``import edugraph.nn.functional as F``): PyTorch's names and
arguments for edugraph's ops and losses, so that ``F.relu(self.fc1(x))`` and
``F.cross_entropy(logits, y)`` run as written. Each function is a thin alias: the maths lives
in ``edugraph/ops`` and ``edugraph/losses``.

Three of PyTorch's layouts differ from TF's, and these functions take PyTorch's: ``linear``'s
weight is (out_features, in_features), the transpose of a Dense kernel; images are NCHW
(batch, channels, height, width) where TF's are NHWC, and ``conv2d``'s weight is (out_channels,
in_channels, kH, kW); ``cross_entropy`` and ``nll_loss`` find the classes in dimension 1,
``(N, C)`` or ``(N, C, d1, ...)``, where TF puts them last.
"""
import math
import numbers

import numpy as np

from ..context import no_grad
from ..errors import ShapeError
from ..missing import MissingNameError
from ..layers.normalization import batch_normalization
from ..losses import BinaryCrossEntropy, _check_class_ids, _compatible
from ..losses import softmax_cross_entropy_with_logits
from ..losses import _labels_and_predictions, weighted_log_probs
from ..ops import activation as _activation, conv as _conv
from ..ops.activation import (  # noqa: F401  (PyTorch's arguments already)
    elu, relu, sigmoid, tanh)
from ..ops.base import apply, as_tensor, rank_known
from ..ops.linalg import matmul
from ..ops.math import abs, cast, square, to_float
from ..ops.math import where as select   # (`where` names the calling function in messages)
from ..ops.reduce import moments, reduce_mean, reduce_sum
from ..ops.shape import expand_dims, gather, reshape, transpose
from ..ops.shape import one_hot as _one_hot
from ..tensor import Tensor, tensor
from ..variable import Variable

__all__ = ["relu", "leaky_relu", "elu", "softplus", "sigmoid", "tanh", "softmax", "log_softmax",
           "dropout", "linear", "conv2d", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d",
           "batch_norm", "one_hot", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "mse_loss", "l1_loss"]

REDUCTIONS = ("mean", "sum", "none")


def leaky_relu(input, negative_slope=0.01):
    """PyTorch's default slope, 0.01 (``eg.nn.leaky_relu`` has TF's, 0.2)."""
    return _activation.leaky_relu(input, alpha=negative_slope)


def softplus(input, beta=1.0, threshold=20.0):
    r"""PyTorch's $\frac1\beta \log(1 + e^{\beta x})$, and $x$ itself where $\beta x$ is
    above ``threshold``, where PyTorch switches to the line the curve approaches (they differ
    by less than $e^{-20}$ there)."""
    input = to_float(input)
    if beta == 1:
        return select(input > threshold, input, _activation.softplus(input))
    scaled = input * beta
    return select(scaled > threshold, input, _activation.softplus(scaled) / beta)


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
            f"layout, (out_features, in_features)). {_linear_fix(input.shape, weight.shape)}")
    y = matmul(input, transpose(weight))
    return y if bias is None else y + bias


def _linear_fix(shape, weight_shape):
    """What to do when an input of ``shape`` does not fit a linear weight of ``weight_shape``."""
    in_features, out_features = weight_shape[-1], weight_shape[0]
    per_example = None if None in shape[1:] else math.prod(shape[1:])
    if len(shape) >= 3 and per_example == in_features:
        sizes = "·".join(map(str, shape[1:]))
        return (f"Flatten each example first ({sizes} = {in_features}): nn.Flatten() or "
                "x.view(x.size(0), -1).")
    if len(shape) == 1 and in_features == 1:
        return (f"A 1-D input is one example; for {shape[0]} examples of one feature each, "
                "use x.unsqueeze(1) (or x.view(-1, 1)).")
    if len(weight_shape) == 2 and out_features == shape[-1]:
        return (f"Its transpose would fit: a Keras Dense kernel is the transpose, "
                f"(in_features, out_features): pass layer.kernel.T (and nn.Linear takes "
                f"in_features first: nn.Linear({shape[-1]}, {in_features})).")
    fix = f"Make this layer nn.Linear({shape[-1]}, {out_features}) to take this input"
    if len(shape) >= 3 and per_example is not None:
        fix += (f", or flatten each example first (nn.Flatten()): then it has {per_example} "
                f"features, for nn.Linear({per_example}, {out_features})")
    return fix + "."


# ----------------------------------------------------------------------------- images, NCHW
def conv2d(input, weight, bias=None, stride=1, padding=0):
    r"""2-D convolution of NCHW images with PyTorch's ``weight``, (out_channels, in_channels,
    kH, kW); ``padding``: zeros on each side (an int or a pair), or "valid" / "same". It is
    edugraph's (NHWC) ``conv2d`` between two transposes: only the layouts differ."""
    input, weight = as_tensor(input), as_tensor(weight)
    if len(weight.shape) != 4:
        raise ShapeError(f"conv2d: the weight must be 4-D, (out_channels, in_channels, kH, kW), "
                         f"got shape {tuple(weight.shape)}.")
    images = channels_last(input, "conv2d", channels=weight.shape[1])
    if images.shape[-1] not in (weight.shape[1], None):
        raise ShapeError(
            f"conv2d: the input of shape {tuple(input.shape)} has {input.shape[1]} channels "
            f"(NCHW: dimension 1), but the weight of shape {tuple(weight.shape)} takes "
            f"{weight.shape[1]} (PyTorch's layout, (out_channels, in_channels, kH, kW)).")
    y = _conv.conv2d(images, transpose(weight, (2, 3, 1, 0)), stride, padding)
    return channels_first(y if bias is None else y + bias)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The largest value of each ``kernel_size`` window of NCHW images; ``stride`` defaults
    to the window, as PyTorch's does, and ``padding`` pads with −∞."""
    check_max_pool_options(dilation, ceil_mode, return_indices, "max_pool2d")
    return channels_first(_conv.max_pool2d(channels_last(input, "max_pool2d"), kernel_size,
                                           stride, padding))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """The mean of each ``kernel_size`` window of NCHW images; ``stride`` defaults to the
    window. A window over the ``padding`` zeros divides by its whole size (PyTorch's default,
    ``count_include_pad=True``) or by its real pixels only."""
    check_no_ceil_mode(ceil_mode, "avg_pool2d")
    return channels_first(_conv.avg_pool2d(channels_last(input, "avg_pool2d"), kernel_size,
                                           stride, padding, count_include_pad=count_include_pad))


def adaptive_avg_pool2d(input, output_size):
    r"""The mean of each of ``output_size`` (rows, columns) windows that tile NCHW images of
    any size: row window $i$ covers rows $\lfloor i H / H_{out} \rfloor$ to
    $\lceil (i + 1) H / H_{out} \rceil$, as PyTorch's. Averaging is linear, so this is
    $A_H \, x \, A_W^\top$ with two averaging matrices; ``output_size=1`` is the global
    average of each channel (a ResNet's head)."""
    check_images(input.shape, "adaptive_avg_pool2d")
    sizes = (output_size, output_size) if isinstance(output_size, int) else output_size
    rows, columns = (_averaging_matrix(n, n if out is None else out, input)
                     for n, out in zip(input.shape[2:], sizes))
    return matmul(matmul(rows, input), transpose(columns))


def _averaging_matrix(size, out, like):
    """(out, size): row i averages window i of ``size`` positions cut into ``out`` windows."""
    if not (isinstance(out, int) and out > 0):
        raise ValueError(f"adaptive_avg_pool2d: output sizes must be positive ints (or None to "
                         f"keep a size), got {out!r}.")
    weights = np.zeros((out, size))
    for i in range(out):
        start, end = (i * size) // out, -((-(i + 1) * size) // out)
        weights[i, start:end] = 1 / (end - start)
    return tensor(weights, dtype=like.dtype, device=like.device)


def check_no_ceil_mode(ceil_mode, where):
    """PyTorch's ``ceil_mode=True`` adds a last window that hangs over the image's edge:
    refused, not silently ignored."""
    if ceil_mode:
        raise NotImplementedError(
            f"{where}: ceil_mode=True is not supported: edugraph's windows always lie within "
            "the (padded) image, as with PyTorch's default ceil_mode=False. Pad the images "
            "(padding=...) if the last pixels must be pooled.")


def check_max_pool_options(dilation, ceil_mode, return_indices, where):
    """PyTorch's max-pooling options beyond its defaults: refused, not silently ignored."""
    check_no_ceil_mode(ceil_mode, where)
    if dilation not in (1, (1, 1)):
        raise NotImplementedError(
            f"{where}: dilation={dilation!r} is not supported: edugraph's windows are "
            "contiguous, as with PyTorch's default dilation=1. Leave dilation out.")
    if return_indices:
        raise NotImplementedError(
            f"{where}: return_indices=True is not supported (there is no MaxUnpool2d to use "
            "them). Leave it out; to find where the largest values are, use x.argmax(dim).")


def channels_last(images, where, channels=None):
    """PyTorch's NCHW images as edugraph's NHWC (a transpose: a node in the graph)."""
    images = as_tensor(images)
    check_images(images.shape, where, channels)
    return transpose(images, (0, 2, 3, 1))


def check_images(shape, where, channels=None):
    """``shape``, if it is that of NCHW images (4-D). ``channels``, when known, tells one
    image (C, H, W) from a batch of grey images (N, H, W) in the message."""
    if len(shape) != 4:
        raise ShapeError(f"{where} expects 4-D images laid out as PyTorch's, (batch, channels, "
                         f"height, width); got shape {tuple(shape)}. "
                         f"{_images_fix(tuple(shape), channels)}")
    return shape


def _images_fix(shape, channels):
    one_image = "One image (C, H, W) becomes a batch of one with x.unsqueeze(0)"
    grey = "a batch of grey images (N, H, W) gets its channel axis with x.unsqueeze(1)"
    if len(shape) == 2 and None not in shape:
        return (f"One grey image (H, W) becomes a batch of one with x.view(1, 1, {shape[0]}, "
                f"{shape[1]}); flattened grey images (N, H·W) become x.view(-1, 1, H, W) with "
                "their height and width.")
    if len(shape) != 3:
        return "Reshape it to that layout."
    if channels is None or None in shape:
        return f"{one_image}; {grey}."
    if shape[0] == channels:
        return f"{one_image}."
    if channels == 1:
        return f"A{grey[1:]}."
    if shape[-1] == channels:
        return ("An image laid out (H, W, C) becomes a batch of one NCHW image with "
                "x.permute(2, 0, 1).unsqueeze(0).")
    return f"{one_image}; {grey}."


def channels_first(images):
    """NHWC images back as NCHW."""
    return transpose(images, (0, 3, 1, 2))


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    r"""PyTorch's batch norm, with the channels in dimension 1: (N, C), (N, C, L) or NCHW.
    Training: each channel is normalised by the batch's mean and (biased) variance over every
    other dimension, and the running statistics move towards the batch's by ``momentum``
    (the variance's unbiased estimate, n/(n − 1) times larger, as PyTorch keeps it). Not
    training: the running statistics normalise. Then $y = \text{weight} \cdot \hat x +
    \text{bias}$ per channel."""
    if len(input.shape) < 2:
        raise ShapeError(f"batch_norm expects (batch, channels, ...) input, got shape "
                         f"{tuple(input.shape)}.")
    per_channel = (1, -1) + (1,) * (len(input.shape) - 2)      # (C,) against the input
    if training:
        axes = (0,) + tuple(range(2, len(input.shape)))
        mean, variance = moments(input, axes, keepdims=True)
        count = input.shape[0] * math.prod(input.shape[2:])
        if count == 1:
            raise ValueError(f"batch_norm: training needs more than one value per channel to "
                             f"take a variance, got input of shape {tuple(input.shape)}. Use "
                             "a batch of two or more, or model.eval().")
        if running_mean is not None:
            with no_grad():
                for running, batch in ((running_mean, mean),
                                       (running_var, variance * (count / (count - 1)))):
                    moved = running * (1 - momentum) + reshape(batch, (-1,)) * momentum
                    if isinstance(running, Variable):
                        running.assign(moved)
                    else:           # (F.batch_norm's caller may keep plain tensors)
                        running.copy_(moved)
    else:
        mean, variance = reshape(running_mean, per_channel), reshape(running_var, per_channel)
    return batch_normalization(input, mean, variance,
                               None if bias is None else reshape(bias, per_channel),
                               None if weight is None else reshape(weight, per_channel), eps)


def one_hot(tensor, num_classes=-1):
    """PyTorch's ``F.one_hot``: an int64 row per class id with a 1 in that column;
    ``num_classes=-1`` makes one more column than the largest id. An id outside
    [0, num_classes) is an error, as in PyTorch (TF's ``eg.one_hot`` gives it a row of
    zeros)."""
    if tensor.dtype.kind not in "iu":
        raise TypeError(f"one_hot: the class ids must be integers, got {tensor.dtype} "
                        "(ids.long() converts them).")
    if tensor.graph is None and tensor.size:
        ids = tensor.numpy()
        if num_classes == -1:
            num_classes = int(ids.max()) + 1
        if ids.min() < 0 or ids.max() >= num_classes:
            raise ValueError(f"one_hot: class ids must be in [0, {num_classes}), but they "
                             f"range over [{ids.min()}, {ids.max()}].")
    elif num_classes == -1:
        raise ValueError("one_hot: give num_classes when the ids are not known yet (a graph "
                         "tensor) or there are none.")
    return _one_hot(tensor, num_classes, dtype="int64")


# ----------------------------------------------------------------------------- losses
def cross_entropy(input, target, weight=None, reduction="mean", label_smoothing=0.0,
                  ignore_index=-100):
    r"""Softmax cross-entropy from logits ``input`` (classes in dimension 1) and ``target``:
    integer class ids of shape (N,) (or (N, d1, ...)), or float class probabilities shaped
    like ``input``. Per example $-\sum_k q_k \log\mathrm{softmax}(x)_k$, where $q$ is the
    one-hot target, smoothed to $(1-\varepsilon) q + \varepsilon / C$ by ``label_smoothing``
    and scaled per class by ``weight``; the weighted mean divides by the summed weights of the
    target classes, as PyTorch's does. A class id equal to ``ignore_index`` (padding, say)
    gives no loss and no gradient, and the mean leaves it out (nan if all are left out, as in
    PyTorch)."""
    check_reduction(reduction, "cross_entropy")
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}.")
    logits = _classes_last(to_float(input))
    num_classes = logits.shape[-1]
    target = target if isinstance(target, Tensor) else tensor(target, device=logits.device)
    class_ids = target.dtype.kind in "iu"
    if class_ids:
        target, kept = _class_id_target(
            target, logits, input, ignore_index, "cross_entropy", " For one-hot or "
            "probability targets use a float tensor shaped like the input (target.float()).")
        labels = _one_hot(target, num_classes, logits.dtype)
    elif target.dtype.kind == "f":
        if ignore_index != -100:
            raise ValueError(
                "cross_entropy: ignore_index works with class-id targets only (PyTorch "
                "refuses it for probability targets too). To leave examples out, take "
                "reduction='none' and average the losses you keep.")
        if not _compatible(target.shape, input.shape):
            if _looks_swapped(input, target):
                raise ShapeError(
                    f"cross_entropy: the input of shape {tuple(input.shape)} holds "
                    f"{input.dtype} values and the target of shape {tuple(target.shape)} "
                    "holds floats: the arguments look swapped. Pass the logits first: "
                    "loss_fn(logits, targets).")
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
        weight = _class_weights(weight, num_classes, logits, "cross_entropy")
        labels = labels * weight
    if class_ids and kept is not None:  # an ignored example's labels are 0: no loss, no gradient
        labels = labels * expand_dims(kept, -1)
    losses = softmax_cross_entropy_with_logits(labels, logits)
    if not class_ids:
        return _reduced(losses, reduction)
    return _reduced(losses, reduction, kept, weight, target)


def _looks_swapped(input, target):
    """``cross_entropy(class_ids, logits)``: an integer input, or a float target shaped as
    logits for the input's ids ((N, C) for (N,), (N, C, H, W) for (N, H, W))."""
    ids_shape = tuple(target.shape[:1]) + tuple(target.shape[2:]) if len(target.shape) > 1 \
        else ()
    return input.dtype.kind in "iub" or _compatible(ids_shape, input.shape)


def nll_loss(input, target, weight=None, reduction="mean", ignore_index=-100):
    r"""The negative log-likelihood $-w_y\, x_y$ of each example's target class $y$, from
    log-probabilities ``input`` (classes in dimension 1: ``F.log_softmax(x, dim=1)``) and
    integer class ids ``target``. ``F.cross_entropy(x, y)`` is
    ``F.nll_loss(F.log_softmax(x, dim=1), y)``; the weighted mean divides by the summed
    weights of the target classes, as PyTorch's does, and leaves out the examples whose id is
    ``ignore_index``."""
    check_reduction(reduction, "nll_loss")
    log_probs = _classes_last(to_float(input))
    target = target if isinstance(target, Tensor) else tensor(target, device=log_probs.device)
    if target.dtype.kind not in "iu":
        raise TypeError(f"nll_loss: the target must hold integer class ids, not {target.dtype} "
                        "values (target.long()).")
    target, kept = _class_id_target(target, log_probs, input, ignore_index, "nll_loss")
    picked = _one_hot(target, log_probs.shape[-1], log_probs.dtype)
    if kept is not None:
        picked = picked * expand_dims(kept, -1)
    if weight is not None:
        weight = _class_weights(weight, log_probs.shape[-1], log_probs, "nll_loss")
        picked = picked * weight
    return _reduced(-reduce_sum(weighted_log_probs(picked, log_probs,
                                                   labels_take_gradient=False), -1),
                    reduction, kept, weight, target)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    r"""Binary cross-entropy of probabilities ``input`` (a sigmoid's outputs) and targets in
    [0, 1] of the same shape: $-w\,(y \log p + (1 - y) \log(1 - p))$ for each element, each
    log clamped to at least −100 as in PyTorch (see ``BinaryCrossEntropy``); ``weight``
    rescales each element's loss and broadcasts to the input's shape. Eagerly, probabilities
    or targets outside [0, 1] are refused, as PyTorch refuses them (a graph's are unknown until
    it runs).
    From logits, ``binary_cross_entropy_with_logits`` is more accurate."""
    input, target = _same_shape(input, target, "binary_cross_entropy", reduction)
    _check_probabilities(input, "input", "Logits? Use binary_cross_entropy_with_logits "
                         "(nn.BCEWithLogitsLoss), or apply a sigmoid first.")
    _check_probabilities(target, "target", "Labels 1 and 2? Make them 0 and 1 (y - 1); soft "
                         "labels must be probabilities too.")
    losses = apply(BinaryCrossEntropy(), input, target)
    if weight is not None:
        losses = losses * _rescaling(weight, input, "binary_cross_entropy")
    return _reduced(losses, reduction)


def _check_probabilities(t, role, hint):
    """Eagerly, a value of ``t`` outside [0, 1] is refused, as PyTorch refuses it (a graph's
    values are unknown until it runs)."""
    if t.graph is None:
        values = t._value                       # (checked where they live: one bool comes back)
        outside = ~((values >= 0) & (values <= 1))          # (nan is outside too)
        if outside.any():
            raise ValueError(
                f"binary_cross_entropy: all elements of {role} should be between 0 and 1 "
                f"(probabilities), but the {role} holds {float(values[outside][0]):g}. {hint}")


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean",
                                     pos_weight=None):
    r"""Binary cross-entropy of $\sigma(x)$ for logits ``input`` and targets in [0, 1] of the
    same shape: $-w\,(p_c\, y \log\sigma(x) + (1 - y) \log(1 - \sigma(x)))$ for each element,
    ``pos_weight`` $p_c$ weighing the positives of each class (the last dimension) and
    ``weight`` rescaling each element (both broadcast to the input's shape). The logs are
    softplus, $-\log\sigma(x) = \mathrm{softplus}(-x)$ and $-\log(1 - \sigma(x)) =
    \mathrm{softplus}(x)$, never ``log(sigmoid(x))``: finite for any logit, no cancellation
    in either tail, and the gradient $(1 - y)\,\sigma(x) - p_c\, y\, \sigma(-x)$ ($\sigma(x) -
    y$ without ``pos_weight``) is as right at 0 as at ±100."""
    input, target = _same_shape(input, target, "binary_cross_entropy_with_logits", reduction)
    positives = target if pos_weight is None else target * _rescaling(
        pos_weight, input, "binary_cross_entropy_with_logits", "pos_weight")
    losses = (1 - target) * _activation.softplus(input) + positives * _activation.softplus(-input)
    if weight is not None:
        losses = losses * _rescaling(weight, input, "binary_cross_entropy_with_logits")
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


def _reduced(losses, reduction, kept=None, class_weight=None, class_ids=None):
    """The mean, sum or each of ``losses``. For class-id losses, the mean counts each example
    as its class's weight (``class_weight`` at ``class_ids``), and not at all where ``kept``
    is 0 (an ignored target): ``_example_counts``. If none counts, the mean is nan, as
    PyTorch's, and its gradient 0, as PyTorch's (the division takes 1 for 0 there: 0/0 would
    give the gradient 0 · ∞ = nan)."""
    if reduction == "mean":
        counted = _example_counts(kept, class_weight, class_ids)
        if counted is None:
            return reduce_mean(losses)
        total = reduce_sum(counted)
        some = total != 0
        return select(some, reduce_sum(losses) / select(some, total, 1.0), math.nan)
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
            f"prediction with every target). {_reshape_fix(input.shape, target.shape)}")
    return input, target


def _reshape_fix(input_shape, target_shape):
    """How to give an input and a target of these (different) shapes one shape."""
    shapes = {"input": tuple(input_shape), "target": tuple(target_shape)}
    for name, shape in shapes.items():
        if shape == ():
            return (f"The {name} is 0-D: if it came from .squeeze(), that removed the batch "
                    "axis of a batch of one too; squeeze only the last axis, .squeeze(1) (or "
                    "use .view(-1)).")
    for longer, shorter in (("input", "target"), ("target", "input")):
        if shapes[longer] == shapes[shorter] + (1,):
            axis = len(shapes[shorter])
            added = "view(-1, 1)" if axis == 1 else f"unsqueeze({axis})"
            return f"Use {longer}.squeeze({axis}) or {shorter}.{added}."
    sizes = [None if None in s else math.prod(s) for s in shapes.values()]
    if sizes[0] != sizes[1] and None not in sizes:
        classes = " (Class ids for (N, C) scores? Use nn.CrossEntropyLoss.)" if \
            len(shapes["input"]) == 2 and shapes["target"] == shapes["input"][:1] else ""
        return (f"They hold different numbers of values, {sizes[0]} and {sizes[1]}: pass one "
                f"target per prediction.{classes}")
    return "Reshape one to the other's shape, e.g. target.view_as(input)."


def _class_id_target(target, logits, input, ignore_index, where, hint=""):
    """``target``'s class ids, one per example (its shape is ``logits``' without the
    classes), once checked, with each ``ignore_index`` read as class 0; and ``kept``, 1.0 for
    each example that counts, 0.0 for each ignored one (None when, eagerly, none is ignored).
    In a graph, a node checks the ids when it runs."""
    if not _compatible(target.shape, logits.shape[:-1]):
        if len(input.shape) == 1:
            raise ShapeError(
                f"{where}: a 1-D input, here of shape {tuple(input.shape)}, is one example's "
                f"class scores (C,), whose target is one class id, of shape (), but the "
                f"target has shape {tuple(target.shape)}. A batch needs (N, C) logits; for "
                "one output per example (two classes), use nn.BCEWithLogitsLoss() with float "
                "targets: loss_fn(output, target.float()).")
        raise ShapeError(
            f"{where}: the target of shape {tuple(target.shape)} should hold one class id for "
            f"each example of the input {tuple(input.shape)} (classes in dimension 1), i.e. "
            f"have shape {tuple(logits.shape[:-1])}."
            f"{hint if _compatible(target.shape, input.shape) else ''}")
    if not isinstance(ignore_index, numbers.Integral):
        raise TypeError(f"{where}: ignore_index must be an int class id, got {ignore_index!r}.")
    if target.graph is None and not (target._value == ignore_index).any():
        return _check_class_ids(target, logits.shape[-1], where), None     # (the usual case)
    target = cast(target, "int64")      # (a uint8 target cannot be compared with -100)
    kept = target != ignore_index
    ids = _check_class_ids(select(kept, target, 0), logits.shape[-1],
                           f"{where} with ignore_index={ignore_index}")
    return ids, cast(kept, logits.dtype)


def _example_counts(kept, weight, ids):
    """What each example counts for in a mean: its class's weight (or 1), 0 if its target is
    ignored (``kept`` 0); None when every example counts 1."""
    counts = None if weight is None else gather(weight, ids)
    if kept is not None:
        counts = kept if counts is None else counts * kept
    return counts


def _classes_last(x):
    """PyTorch's (N, C, d1, ...) as TF's (N, d1, ..., C); (N, C) and (C,) stay as they are."""
    if x.ndim <= 2:
        return x
    return transpose(x, (0,) + tuple(range(2, x.ndim)) + (1,))


def _class_weights(weight, num_classes, logits, where):
    weight = weight if isinstance(weight, Tensor) else tensor(weight, device=logits.device)
    if tuple(weight.shape) != (num_classes,):
        raise ShapeError(f"{where}: weight must hold one number per class, shape "
                         f"({num_classes},), but it has shape {tuple(weight.shape)}.")
    return cast(weight, logits.dtype)


def _rescaling(weight, input, where, name="weight"):
    """``weight`` as a tensor of the input's dtype, once checked to broadcast to the input's
    shape. One that would enlarge it is refused, as in PyTorch: a (N, 1) weight on (N,)
    losses would make (N, N) of them."""
    if not isinstance(weight, Tensor):
        weight = tensor(weight, dtype=input.dtype, device=input.device)
    if not _broadcasts_to(weight.shape, input.shape):
        raise ShapeError(
            f"{where}: {name} of shape {tuple(weight.shape)} must broadcast to the input's "
            f"shape {tuple(input.shape)}: a weight for each element, or fewer that repeat "
            "(one for each class of the last dimension: shape (num_classes,)).")
    return cast(weight, input.dtype)


def _broadcasts_to(shape, full):
    """Does ``shape`` broadcast to ``full`` without enlarging it? An unknown size (None) or
    rank fits any."""
    if not (rank_known(shape) and rank_known(full)):
        return True
    return len(shape) <= len(full) and all(m in (1, None) or n in (m, None)
                                           for m, n in zip(shape[::-1], full[::-1]))


def __getattr__(name):
    """``F.<name>`` for a name edugraph does not have: what to use instead (missing.py), not a
    bare AttributeError."""
    if name.startswith("_"):
        raise AttributeError(f"module 'edugraph.nn.functional' has no attribute '{name}'")
    raise MissingNameError("eg.nn.functional", name, lambda: list(globals()))
