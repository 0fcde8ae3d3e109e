r"""Clipping by norm (TF's ``clip_ops``): ``tf.clip_by_norm``, ``tf.linalg.global_norm`` and
``tf.clip_by_global_norm``, the usual cure for exploding gradients.

A gradient is clipped by *scaling* it, never by changing its entries one by one (that is
``clip_by_value``): a step in the same direction, only shorter. ``clip_by_global_norm`` scales a
whole list of gradients by ONE factor, from the length of all of them together,

$$\text{global\_norm} = \sqrt{\textstyle\sum_k \lVert g_k \rVert_2^2}, \qquad
g_k \leftarrow g_k \cdot \frac{\text{clip\_norm}}{\max(\text{global\_norm},
\text{clip\_norm})},$$

so the update keeps its direction. They are written with framework ops, as TF writes them: they
work eagerly and in a graph (on the gradients ``eg.gradients`` returns), and they have
gradients of their own. PyTorch's in-place spelling, ``clip_grad_norm_``, is in ``eg.nn.utils``.
"""
import numpy as np

from ..graph.core import name_scope
from ..tensor import Tensor
from .base import as_tensor
from .math import add_n, cast, maximum, multiply, sqrt, where
from .random import ones_like
from .reduce import reduce_sum


def clip_by_norm(t, clip_norm, axes=None, name=None):
    r"""``t`` scaled to an L2 norm of at most ``clip_norm`` (``tf.clip_by_norm``):
    $t \cdot \text{clip\_norm} / \max(\lVert t \rVert_2, \text{clip\_norm})$. With ``axes``,
    the norm is taken over those axes, so each row (or column...) is clipped on its own.
    Keras's ``clipnorm=`` clips each gradient this way.

    >>> eg.clip_by_norm(eg.tensor([3.0, 4.0]), 1.0)      # [0.6, 0.8]: length 5 → 1
    """
    _check_positive(clip_norm, "clip_by_norm")
    with name_scope(name, "clip_by_norm"):
        t = as_tensor(t)
        squares = reduce_sum(t * t, axes, keepdims=True)
        # sqrt's gradient at 0 is infinite: take the root of 1 where the sum is 0 (TF's trick)
        nonzero = squares > 0
        norm = where(nonzero, sqrt(where(nonzero, squares, ones_like(squares))), squares)
        return t * clip_norm / maximum(norm, clip_norm)


def global_norm(t_list, name=None):
    r"""The length of all the tensors of ``t_list`` as one long vector (``tf.linalg.global_norm``,
    TF1's ``tf.global_norm``): $\sqrt{\sum_k \lVert t_k \rVert_2^2}$. ``None`` entries (the
    gradient of a variable the loss does not use) are left out."""
    values = [t for t in _sequence(t_list, "global_norm") if t is not None]
    if not values:
        raise ValueError("global_norm: t_list holds no tensors (only None); pass the "
                         "gradients, e.g. tape.gradient(loss, variables).")
    with name_scope(name, "global_norm"):
        return sqrt(add_n([reduce_sum(t * t) for t in map(as_tensor, values)]))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    r"""Scale all the tensors of ``t_list`` by one factor so that their global norm is at most
    ``clip_norm`` (``tf.clip_by_global_norm``); returns ``(list_clipped, global_norm)``, the
    norm *before* clipping. ``None`` entries stay ``None``; ``use_norm`` is a global norm
    computed already. An infinite or NaN norm makes every entry NaN, as in TF: a sign that
    something went wrong, not a step to take.

    >>> grads = tape.gradient(loss, variables)
    >>> grads, norm = eg.clip_by_global_norm(grads, 5.0)
    >>> optimizer.apply_gradients(zip(grads, variables))
    """
    _check_positive(clip_norm, "clip_by_global_norm")
    t_list = [None if t is None else as_tensor(t)
              for t in _sequence(t_list, "clip_by_global_norm")]
    norm = global_norm(t_list) if use_norm is None else use_norm
    with name_scope(name, "clip_by_global_norm"):
        # NaN for an infinite or NaN norm (a comparison with NaN is False)
        scale = where(norm < np.inf, clip_norm / maximum(norm, clip_norm), np.nan)
        clipped = [None if t is None else multiply(t, cast(scale, t.dtype)) for t in t_list]
    return clipped, norm


def _sequence(t_list, caller):
    """``t_list`` as a list; one tensor is refused, as TF refuses it (``list(t)`` would clip
    its rows one by one)."""
    if isinstance(t_list, (Tensor, np.ndarray, str)) or not hasattr(t_list, "__iter__"):
        raise TypeError(f"{caller}: t_list should be a list of tensors (the gradients), not "
                        f"{type(t_list).__name__}; for one tensor write [t], or use "
                        "eg.clip_by_norm(t, clip_norm).")
    return list(t_list)


def _check_positive(clip_norm, caller):
    """A clip_norm of 0 or less would silently zero every gradient (TF takes it all the same)."""
    if isinstance(clip_norm, (int, float, np.number)) and not clip_norm > 0:
        raise ValueError(f"{caller}: clip_norm must be positive, the longest norm to allow "
                         f"(e.g. 1.0 or 5.0); got {clip_norm!r}.")
