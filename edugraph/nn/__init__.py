"""Neural-network building blocks, PyTorch and ``tf.nn`` style.

* functions as in ``tf.nn``: ``relu``, ``softmax``, ``conv2d``, ``max_pool2d``, ``moments``,
  ``batch_normalization``, ``sparse_softmax_cross_entropy_with_logits``...;
* ``Module``, the base class of every layer and model (see ``module.py``);
* PyTorch's class names, as thin aliases of the Keras layers in ``eg.layers`` (one
  implementation each; they differ only in constructor arguments and in starting in training
  mode, as PyTorch modules do). ``Linear``'s ``kernel`` is PyTorch's ``weight`` transposed.
  There is no ``Conv2d`` alias: edugraph's images are NHWC (Keras), PyTorch's NCHW, and a
  same-named class with a different layout would mislead; use ``eg.layers.Conv2D``.
"""
from ..ops.activation import (  # noqa: F401
    dropout, leaky_relu, log_softmax, relu, sigmoid, softmax, tanh)
from ..ops.conv import conv2d, extract_patches, max_pool, max_pool2d  # noqa: F401
from ..ops.base import accepting_tf1_keywords as _accepting_tf1_keywords
from ..ops.reduce import logsumexp, moments  # noqa: F401
from .module import KerasTensor, Module  # noqa: F401
from .. import layers as _layers
from ..layers.normalization import batch_normalization  # noqa: F401
from ..losses import (sigmoid_cross_entropy_with_logits, l2_loss,  # noqa: F401
                      softmax_cross_entropy_with_logits, sparse_softmax_cross_entropy_with_logits)

moments = _accepting_tf1_keywords(moments)      # TF1 spells keepdims keep_dims


class Linear(_layers.Dense):
    """``nn.Linear(in_features, out_features, bias=True)``: y = x W + b (W = PyTorch's weightᵀ)."""

    training = True

    def __init__(self, in_features, out_features, bias=True, **kwargs):
        super().__init__(out_features, use_bias=bias, input_dim=in_features, **kwargs)
        self.build_for((None, in_features))


class Dropout(_layers.Dropout):
    """``nn.Dropout(p=0.5)``: active until ``eval()``."""

    training = True

    def __init__(self, p=0.5, **kwargs):
        super().__init__(p, **kwargs)


class BatchNorm1d(_layers.BatchNormalization):
    """``nn.BatchNorm1d(num_features, eps=1e-5, momentum=0.1)`` on (batch, features) inputs.
    PyTorch's momentum weighs the *new* batch: it is 1 − Keras's momentum."""

    training = True

    def __init__(self, num_features, eps=1e-5, momentum=0.1, **kwargs):
        super().__init__(axis=-1, momentum=1 - momentum, epsilon=eps, **kwargs)
        self.build_for((None, num_features))


class LayerNorm(_layers.LayerNormalization):
    """``nn.LayerNorm(normalized_shape, eps=1e-5)`` over the last axis."""

    training = True

    def __init__(self, normalized_shape, eps=1e-5, **kwargs):
        super().__init__(epsilon=eps, **kwargs)
        size = normalized_shape if isinstance(normalized_shape, int) else normalized_shape[-1]
        self.build_for((None, size))


class Embedding(_layers.Embedding):
    """``nn.Embedding(num_embeddings, embedding_dim)``, initialised N(0, 1) like PyTorch."""

    training = True

    def __init__(self, num_embeddings, embedding_dim, **kwargs):
        kwargs.setdefault("embeddings_initializer", "random_normal")
        super().__init__(num_embeddings, embedding_dim, **kwargs)
        self.build_for((None, None))


class ReLU(_layers.ReLU):
    training = True


class Flatten(_layers.Flatten):
    training = True
