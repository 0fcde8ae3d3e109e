"""Keras-style layers (``eg.layers.Dense(10, activation="relu")``) and TF1's functional forms
(``eg.layers.dense(inputs, units, activation, kernel_initializer)``).

Every layer is edugraph's one layer class (``Layer`` here, as Keras calls it; ``eg.nn.Module``
is the same class in PyTorch's training mode); PyTorch-style names in ``eg.nn`` (``Dropout``,
``Flatten``...) are thin subclasses of these classes, not copies. The layers with weights
(``Dense``, ``Conv2D``...) derive from ``KerasLayer`` (``base.py``), which adds three habits of
Keras's: float64 data cast to the layer's dtype, one example without its batch axis refused,
and ``input_shape=(4)`` refused.
"""
from . import activations
from .conv import AveragePooling2D, Conv2D, GlobalAveragePooling2D, MaxPooling2D
from .core import (Activation, Add, Concatenate, Dense, Dropout, Flatten, LeakyReLU, ReLU,
                   Reshape, Softmax)
from .embedding import Embedding
from .normalization import BatchNormalization, LayerNormalization
from .recurrent import GRU, GRUCell, LSTM, LSTMCell, RNN, SimpleRNN, SimpleRNNCell
from ..nn.module import KerasTensor, Module as Layer

Convolution2D, MaxPool2D, AvgPool2D = Conv2D, MaxPooling2D, AveragePooling2D

__all__ = ["Layer", "KerasTensor", "Dense", "Activation", "ReLU", "Softmax", "LeakyReLU",
           "Flatten", "Reshape", "Dropout", "Add", "Concatenate", "Conv2D", "Convolution2D",
           "MaxPooling2D", "MaxPool2D", "AveragePooling2D", "AvgPool2D", "GlobalAveragePooling2D",
           "BatchNormalization", "LayerNormalization", "Embedding", "SimpleRNNCell", "LSTMCell",
           "GRUCell", "RNN", "SimpleRNN", "LSTM", "GRU", "activations",
           "dense", "conv2d", "max_pooling2d", "average_pooling2d", "flatten", "dropout",
           "batch_normalization"]


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer="zeros", kernel_regularizer=None, name=None):
    """TF1's ``tf.layers.dense``: create a Dense layer and apply it to ``inputs`` at once.

    >>> y_pred = eg.layers.dense(x, 10, activation=eg.nn.relu,
    ...                          kernel_initializer=eg.initializers.variance_scaling(2.0))
    """
    layer = Dense(units, activation, use_bias, kernel_initializer or "glorot_uniform",
                  bias_initializer, kernel_regularizer, name=name)
    return layer(inputs)


def conv2d(inputs, filters, kernel_size, strides=1, padding="valid", activation=None,
           kernel_initializer=None, name=None):
    """TF1's ``tf.layers.conv2d`` (NHWC)."""
    layer = Conv2D(filters, kernel_size, strides, padding, activation,
                   kernel_initializer=kernel_initializer or "glorot_uniform", name=name)
    return layer(inputs)


def max_pooling2d(inputs, pool_size, strides, padding="valid", name=None):
    """TF1's ``tf.layers.max_pooling2d``."""
    return MaxPooling2D(pool_size, strides, padding, name=name)(inputs)


def average_pooling2d(inputs, pool_size, strides, padding="valid", name=None):
    """TF1's ``tf.layers.average_pooling2d``."""
    return AveragePooling2D(pool_size, strides, padding, name=name)(inputs)


def flatten(inputs, name=None):
    return Flatten(name=name)(inputs)


def dropout(inputs, rate=0.5, training=False, seed=None, name=None):
    """TF1's ``tf.layers.dropout``: off unless ``training`` is True (or a boolean tensor that
    is true when the graph runs)."""
    return Dropout(rate, seed, name=name)(inputs, training=training)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        training=False, name=None):
    """TF1's ``tf.layers.batch_normalization``. In a graph, its moving averages are updated by
    the assigns it adds to ``eg.GraphKeys.UPDATE_OPS``: run them with the training step,
    ``with eg.control_dependencies(eg.get_collection(eg.GraphKeys.UPDATE_OPS)): ...``."""
    layer = BatchNormalization(axis, momentum, epsilon, center, scale, name=name)
    return layer(inputs, training=training)
