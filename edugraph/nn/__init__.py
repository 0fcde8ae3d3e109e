"""Neural-network building blocks: activations as functions (``eg.nn.relu``, as in TF's tf.nn)."""
from ..ops.activation import (dropout, leaky_relu, log_softmax, relu, sigmoid, softmax,  # noqa: F401
                              tanh)
from ..ops.reduce import logsumexp  # noqa: F401
