"""Convolution and pooling on NHWC images (batch, height, width, channels), as Keras lays them out.

The trick is *im2col*: cut every sliding window out of the image into a tensor of patches,
``(N, OH, OW, KH, KW, C)``. Then

* a convolution is a matmul per image: windows ``(OH·OW, KH·KW·C)`` @ kernel ``(KH·KW·C, F)``,
* max pooling takes the largest value of each window; its backward *routes* each window's
  gradient to the winning pixel (the first of tied ones, as TF and PyTorch do),
* average pooling divides each window's sum by its number of pixels; its backward
  *distributes* the gradient evenly over the window.

So the new ops come in adjoint pairs, each one's backward the other: ``Im2Col`` and
``Col2Im``, ``MaxPool`` and ``MaxPoolGrad``, ``AvgPool`` and ``AvgPoolGrad``. Everything
else is reshape and matmul, whose gradients exist already.
"""
import math

import numpy as np

from .base import Op, ShapedLike, apply, apply_shaped_like, as_tensor, as_tensors, rank_known
from .base import broadcast_array
from .linalg import matmul
from .shape import reshape
from ..errors import ShapeError


class Im2Col(Op):
    """NHWC images → their sliding windows ``(N, OH, OW, KH, KW, C)``.

    A loop over the KH·KW kernel offsets, each copying one strided slice: a handful of large
    array copies rather than one tiny copy per window.
    """

    name = "im2col"

    def __init__(self, kernel_size, strides, padding, pad_value=0.0):
        self.kernel_size, self.strides = kernel_size, strides
        self.padding, self.pad_value = padding, pad_value     # ((top, bottom), (left, right))

    def forward(self, xp, x):
        (top, bottom), (left, right) = self.padding
        if top or bottom or left or right:
            x = xp.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)),
                       constant_values=self.pad_value)
        n, h, w, c = x.shape
        (kh, kw), (sh, sw) = self.kernel_size, self.strides
        oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
        cols = xp.empty((n, oh, ow, kh, kw, c), dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                cols[:, :, :, i, j, :] = x[:, i:i + sh * oh:sh, j:j + sw * ow:sw, :]
        return cols

    def backward(self, grad, out, x):
        return (apply_shaped_like(Col2Im(self.kernel_size, self.strides, self.padding), x,
                                  grad),)

    def explain_failure(self, shapes):
        return (f"im2col: windows of size {self.kernel_size} with strides {self.strides} and "
                f"padding {self.padding} do not fit an input of shape {shapes[0]}; the input "
                "must be 4-D (batch, height, width, channels) and at least as large as the "
                "window after padding.")


class Col2Im(ShapedLike):
    """The adjoint of im2col: each window's values are *added* back onto the pixels it covered
    (overlapping windows share pixels, so their gradients sum)."""

    name = "col2im"

    def __init__(self, kernel_size, strides, padding):
        self.kernel_size, self.strides, self.padding = kernel_size, strides, padding

    def forward(self, xp, cols, *like):
        (top, bottom), (left, right) = self.padding
        n, h, w, c = like[0].shape if like else self.shape
        _, oh, ow, kh, kw, _ = cols.shape
        sh, sw = self.strides
        image = xp.zeros((n, h + top + bottom, w + left + right, c), dtype=cols.dtype)
        for i in range(kh):
            for j in range(kw):
                image[:, i:i + sh * oh:sh, j:j + sw * ow:sw, :] += cols[:, :, :, i, j, :]
        return image[:, top:top + h, left:left + w, :]

    def backward(self, grad, out, cols, *like):
        return (apply(Im2Col(self.kernel_size, self.strides, self.padding), grad),) + \
            (None,) * len(like)


class MaxPool(Op):
    """The largest value of each window, ``(N, OH, OW, KH, KW, C)`` → ``(N, OH, OW, C)``.
    Backward: "max routes", each window's gradient goes to its largest pixel, to the first of
    tied ones (in row order), as TF's and PyTorch's max pooling give it (``reduce_max``, TF's,
    splits ties; in a window of zeros after a relu that would spread the gradient thin).

    With a second input, ``selector``, the values of ``patches`` where ``selector``'s windows
    have their largest pixel (the adjoint of ``MaxPoolGrad``, for gradients of gradients)."""

    name, gate = "max_pool", "routes"

    def forward(self, xp, patches, *selector):
        if not selector:
            return patches.max(axis=(3, 4))
        n, oh, ow, kh, kw, c = patches.shape
        winner = _first_max_mask(xp, selector[0])
        return xp.where(winner, patches.reshape(n, oh, ow, kh * kw, c), 0).sum(axis=3)

    def backward(self, grad, out, patches, *selector):
        routed = apply(MaxPoolGrad(), grad, selector[0] if selector else patches)
        return (routed,) + (None,) * len(selector)     # (where the max is has no gradient)


class MaxPoolGrad(Op):
    """The adjoint of max_pool: each window's gradient ``(N, OH, OW, C)`` placed at its
    ``selector`` window's first largest pixel, zeros elsewhere, ``(N, OH, OW, KH, KW, C)``
    (Col2Im then adds the places back onto the pixels)."""

    name, gate = "max_pool_grad", "routes"

    def forward(self, xp, grad, selector):
        routed = _first_max_mask(xp, selector) * grad[:, :, :, None, :]
        return routed.reshape(selector.shape)

    def backward(self, grad, out, g, selector):
        return apply(MaxPool(), grad, selector), None


def _first_max_mask(xp, patches):
    """True at each window's largest pixel, the first of tied ones, ``(N, OH, OW, KH·KW, C)``.
    (A loop over the window's few places: numpy's argmax along so short an axis is slow.)"""
    n, oh, ow, kh, kw, c = patches.shape
    flat = patches.reshape(n, oh, ow, kh * kw, c)
    winners = flat == flat.max(axis=3, keepdims=True)
    taken = xp.zeros((n, oh, ow, c), dtype=bool)
    for place in range(kh * kw):        # a later tied winner loses to an earlier one
        winners[:, :, :, place, :] &= ~taken
        taken |= winners[:, :, :, place, :]
    return winners


class AvgPool(Op):
    """im2col's windows ``(N, OH, OW, KH, KW, C)`` → their means ``(N, OH, OW, C)``.

    ``counts`` holds, for each output row and for each output column, how many of the window's
    rows and columns are averaged; a window divides its sum by their product. That is KH·KW,
    or less where a window overlaps padding that does not count (TF's "same")."""

    name, gate = "avg_pool", "distributes"

    def __init__(self, kernel_size, counts):
        self.kernel_size, self.counts = kernel_size, counts

    def forward(self, xp, patches):
        return patches.sum(axis=(3, 4)) / _divisors(xp, self.counts, patches.dtype)

    def backward(self, grad, out, patches):
        # "avg distributes": each place in a window gets an equal share of its gradient
        return (apply(AvgPoolGrad(self.kernel_size, self.counts), grad),)


class AvgPoolGrad(Op):
    """The adjoint of avg_pool: each window's value, divided by the window's count, is spread
    over all KH·KW of its places, ``(N, OH, OW, C)`` → ``(N, OH, OW, KH, KW, C)``. (Col2Im
    then adds the places back onto the pixels; padding gets a share too, and is cut off.)"""

    name = "avg_pool_grad"

    def __init__(self, kernel_size, counts):
        self.kernel_size, self.counts = kernel_size, counts

    def forward(self, xp, grad):
        n, oh, ow, c = grad.shape
        share = grad / _divisors(xp, self.counts, grad.dtype)
        return broadcast_array(xp, share[:, :, :, None, None, :],
                               (n, oh, ow) + self.kernel_size + (c,))

    def backward(self, grad, out, g):
        return (apply(AvgPool(self.kernel_size, self.counts), grad),)


def _divisors(xp, counts, dtype):
    """Each window's number of averaged pixels, shaped (OH, OW, 1) to divide (N, OH, OW, C)."""
    rows, columns = counts
    return xp.asarray(rows, dtype=dtype)[:, None, None] * xp.asarray(columns, dtype=dtype)[:, None]


# ----------------------------------------------------------------------------- functions
def _pair(value, what, smallest=1):
    pair = (value, value) if isinstance(value, int) else tuple(value)
    if len(pair) == 4:                      # TF1 style [1, s, s, 1]
        pair = pair[1:3]
    if len(pair) != 2 or not all(isinstance(v, int) and v >= smallest for v in pair):
        kind = "a positive int" if smallest else "an int, 0 or more,"
        raise ValueError(f"{what} must be {kind} or a pair of them, got {value!r}.")
    return pair


def padding_argument(padding):
    """``padding`` checked: "valid", "same", or zeros on each side, (height, width) (PyTorch's
    ``padding=1``)."""
    if isinstance(padding, str):
        if padding.lower() not in ("valid", "same"):
            raise ValueError(f"padding must be 'valid', 'same' or a number of zeros on each "
                             f"side (an int or a (height, width) pair), got {padding!r}.")
        return padding.lower()
    return _pair(padding, "padding", smallest=0)


def conv_output_size(size, kernel, stride, padding):
    """Output length along one axis: ``ceil(size / stride)`` for "same",
    ``floor((size + 2 padding − kernel) / stride) + 1`` otherwise ("valid": no padding)."""
    if size is None:
        return None
    if padding == "same":
        return math.ceil(size / stride)
    return (size + 2 * (0 if padding == "valid" else padding) - kernel) // stride + 1


def _padding(padding, in_size, kernel_size, strides):
    """((top, bottom), (left, right)): none for "valid", TF's "same" (an extra pixel at the
    end), or the given zeros on each side."""
    padding = padding_argument(padding)
    if padding == "valid":
        return ((0, 0), (0, 0))
    if padding != "same":
        return tuple((n, n) for n in padding)
    pads = []
    for size, k, s in zip(in_size, kernel_size, strides):
        total = max((math.ceil(size / s) - 1) * s + k - size, 0)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def check_image_shape(shape, what):
    """4-D NHWC (batch, height, width, channels), or an error that says how to get there."""
    if not rank_known(shape) or len(shape) != 4:
        raise ShapeError(f"{what} expects a 4-D NHWC input (batch, height, width, channels); "
                         f"got shape {shape}. Add a channel axis with eg.expand_dims(x, -1) "
                         "or reshape the images (a placeholder: give it a shape, e.g. "
                         "shape=(None, 28, 28, 1)).")


def extract_patches(x, kernel_size, strides=1, padding="valid", pad_value=0.0, name=None):
    """The sliding windows of NHWC ``x`` as a tensor ``(N, OH, OW, KH, KW, C)``."""
    return _windows(x, kernel_size, strides, padding, pad_value, "extract_patches", name)


def _windows(x, kernel_size, strides, padding, pad_value, what, name=None):
    """``extract_patches`` for ``what`` (conv2d, max_pool2d...), which its errors name."""
    x = as_tensor(x)
    return apply(_im2col(x, kernel_size, strides, padding, pad_value, what), x, name=name)


def _im2col(x, kernel_size, strides, padding, pad_value, what):
    """The Im2Col op that cuts tensor ``x`` into windows, once their sizes are checked."""
    check_image_shape(x.shape, what)
    if None in x.shape[1:3]:
        raise ShapeError(f"{what}: the height and width of the input (shape {x.shape}) must be "
                         "known when the graph is built: the windows are laid out from them. "
                         "Give the placeholder its image size, e.g. shape=(None, 28, 28, 1).")
    kernel_size, strides = _pair(kernel_size, "kernel_size"), _pair(strides, "strides")
    pads = _padding(padding, x.shape[1:3], kernel_size, strides)
    if any(n + sum(pad) < k for n, pad, k in zip(x.shape[1:3], pads, kernel_size)):
        raise ShapeError(f"{what}: a {kernel_size[0]}x{kernel_size[1]} window does not fit "
                         f"an input of height and width {x.shape[1]}x{x.shape[2]} (shape "
                         f"{x.shape}) with padding '{padding}'. Use a smaller window, "
                         "padding='same', or larger images.")
    return Im2Col(kernel_size, strides, pads, pad_value)


def conv2d(input, filters, strides=1, padding="valid", name=None):
    r"""2-D convolution (really cross-correlation, as in every framework), NHWC.

    ``filters`` has shape ``(KH, KW, C_in, C_out)`` (TF's HWIO);
    $y_{n,i,j,f} = \sum_{a,b,c} x_{n, i s + a, j s + b, c}\, w_{a,b,c,f}$.
    """
    input, filters = as_tensors((input, filters))
    check_image_shape(input.shape, "conv2d")
    if len(filters.shape) != 4:
        raise ShapeError(f"conv2d: filters must be 4-D (height, width, in channels, out "
                         f"channels), got shape {filters.shape}.")
    kh, kw, c_in, c_out = filters.shape
    if input.shape[-1] is not None and input.shape[-1] != c_in:
        raise ShapeError(f"conv2d: the input has {input.shape[-1]} channels (shape "
                         f"{input.shape}) but the filters expect {c_in} (filters shape "
                         f"{filters.shape}, laid out (height, width, in, out)).")
    patches = _windows(input, (kh, kw), strides, padding, 0.0, "conv2d")
    _, oh, ow = patches.shape[:3]
    # One row per window, one matrix per image: every reshape here only folds the batch axis,
    # so it also works on graph tensors whose batch size is unknown (None).
    rows = reshape(patches, (-1, oh * ow, kh * kw * c_in))
    out = matmul(rows, reshape(filters, (kh * kw * c_in, c_out)))
    return reshape(out, (-1, oh, ow, c_out), name=name)


def max_pool2d(input, ksize=2, strides=None, padding="valid", name=None):
    """Largest value in each window (NHWC). Backward routes each window's gradient to its max."""
    strides = ksize if strides is None else strides
    input = as_tensor(input)
    patches = _windows(input, ksize, strides, padding, _lowest(input.dtype), "max_pool2d")
    return apply(MaxPool(), patches, name=name)


def _lowest(dtype):
    """The padding no value loses a max to: -inf, or the smallest integer of an int dtype
    (-inf has no integer, numpy would refuse to pad with it)."""
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return False if dtype.kind == "b" else -math.inf


max_pool = max_pool2d


def _window_sizes(size, kernel, stride, pads, count_pad):
    """How many pixels each window along one axis averages: all ``kernel`` with ``count_pad``,
    else only the real ones. The windows start every ``stride`` pixels of the padded image,
    whose real pixels run from ``before`` to ``before + size``."""
    before, after = pads
    starts = range(0, before + size + after - kernel + 1, stride)
    if count_pad:
        return (kernel,) * len(starts)
    return tuple(min(start + kernel, before + size) - max(start, before) for start in starts)


def avg_pool2d(input, ksize=2, strides=None, padding="valid", name=None, count_include_pad=False):
    r"""Mean of each window (NHWC). Backward spreads each window's gradient evenly over it.

    $y_{n,i,j,c} = \frac{1}{|W_{ij}|} \sum_{(a,b) \in W_{ij}} x_{n,a,b,c}$, where $W_{ij}$ holds
    the pixels under window $(i, j)$. A window that overlaps the padding ("same", or zeros on
    each side) averages its real pixels only, as TF does; ``count_include_pad=True`` divides
    by the whole window, padding zeros included, as PyTorch's ``F.avg_pool2d`` does by default.
    """
    input = as_tensor(input)
    strides = ksize if strides is None else strides
    im2col = _im2col(input, ksize, strides, padding, 0.0, "avg_pool2d")
    kernel_size = im2col.kernel_size
    if any(2 * pad > k for pads, k in zip(im2col.padding, kernel_size) for pad in pads):
        raise ShapeError(
            f"avg_pool2d: padding {padding!r} is more than half the {kernel_size[0]}x"
            f"{kernel_size[1]} window (on images of height and width {input.shape[1]}x"
            f"{input.shape[2]}); the border windows would hold more padding than pixels. "
            "Pad at most kernel_size // 2 on each side (PyTorch's rule).")
    counts = tuple(_window_sizes(n, k, s, pads, count_include_pad) for n, k, s, pads in zip(
        input.shape[1:3], kernel_size, im2col.strides, im2col.padding))
    return apply(AvgPool(kernel_size, counts), apply(im2col, input), name=name)


avg_pool = avg_pool2d
