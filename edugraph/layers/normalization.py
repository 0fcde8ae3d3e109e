r"""Normalisation layers: rescale activations to mean 0, variance 1, then learn a scale and shift.

$y = \gamma \, (x - \mu) / \sqrt{\sigma^2 + \epsilon} + \beta$.

BatchNormalization takes $\mu, \sigma^2$ over the batch (per channel) while training and keeps
running averages for inference; LayerNormalization takes them over each example's features, so
it behaves the same in training and inference.
"""
from .base import KerasLayer
from ..context import no_grad
from ..graph.variables import UPDATE_OPS
from ..nn.module import fan_in_shape
from ..ops.math import cast, sqrt, where
from ..ops.reduce import moments
from ..ops.shape import identity, reshape
from ..tensor import Tensor


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    r"""``tf.nn.batch_normalization``: $\text{scale} \cdot (x - \text{mean}) /
    \sqrt{\text{variance} + \epsilon} + \text{offset}$ (``offset`` and ``scale`` may be
    None). The statistics come from the caller: ``eg.nn.moments`` for a batch's."""
    y = (x - mean) / sqrt(variance + variance_epsilon)
    if scale is not None:
        y = y * scale
    if offset is not None:
        y = y + offset
    return y if name is None else identity(y, name=name)


class BatchNormalization(KerasLayer):
    r"""Batch norm (Keras defaults: momentum 0.99, epsilon 1e-3; channels on the last axis).

    While training: batch mean and (biased) variance per channel, and
    $\text{moving} \leftarrow \text{momentum}\cdot\text{moving} + (1 - \text{momentum})\cdot
    \text{batch}$. At inference: the moving averages. PyTorch's ``momentum=0.1, eps=1e-5`` is
    ``momentum=0.9, epsilon=1e-5`` here (PyTorch's running variance is the unbiased one).
    """

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones",
                 moving_mean_initializer="zeros", moving_variance_initializer="ones", **kwargs):
        super().__init__(**kwargs)
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon
        self.center, self.scale = center, scale
        self._inits = (beta_initializer, gamma_initializer, moving_mean_initializer,
                       moving_variance_initializer)

    def build(self, input_shape):
        channels = input_shape[self.axis]
        if channels is None:
            raise ValueError(f"BatchNormalization '{self.name}': the size of axis {self.axis} "
                             f"must be known, but the input shape is {input_shape}.")
        beta, gamma, mean, variance = self._inits
        self.gamma = self.add_weight("gamma", (channels,), gamma) if self.scale else None
        self.beta = self.add_weight("beta", (channels,), beta) if self.center else None
        self.add_weight("moving_mean", (channels,), mean, trainable=False)
        self.add_weight("moving_variance", (channels,), variance, trainable=False)

    def call(self, inputs, training=False):
        ndim = len(inputs.shape)
        axis = self.axis % ndim
        reduce_axes = tuple(a for a in range(ndim) if a != axis)
        shape = [1] * ndim
        shape[axis] = -1

        def per_channel(v):     # (C,) → broadcastable against the input
            return v if axis == ndim - 1 or v is None else reshape(v, shape)
        moving = self.moving_mean, self.moving_variance
        fed = isinstance(training, Tensor)     # TF1's is_training placeholder
        if fed or training:
            statistics = moments(inputs, reduce_axes, keepdims=True)
            # fed: the moving averages move only while training (momentum 1 otherwise), and
            # the batch's or the moving statistics are picked when the graph runs
            momentum = 1 - (1 - self.momentum) * cast(training, inputs.dtype) if fed else \
                self.momentum
            self._update_moving_averages(*(reshape(s, (-1,)) for s in statistics), momentum)
            if fed:
                statistics = [where(training, batch, per_channel(average))
                              for batch, average in zip(statistics, moving)]
        else:
            statistics = [per_channel(average) for average in moving]
        return batch_normalization(inputs, *statistics, per_channel(self.beta),
                                   per_channel(self.gamma), self.epsilon)

    def _update_moving_averages(self, mean, variance, m):
        updates = [(self.moving_mean, mean), (self.moving_variance, variance)]
        if mean.graph is None or hasattr(mean.graph, "lift_variable"):
            # eager: update the averages right now; in an eg.function: assigns that run with
            # every call (as TF2's automatic control dependencies do)
            with no_grad():
                for var, batch in updates:
                    var.assign(var * m + batch * (1 - m))
            return
        # In a graph an assign only happens when run: as in TF1, the updates go into the
        # "update_ops" collection, to run with the training step:
        #   with eg.control_dependencies(graph.get_collection("update_ops")): train = ...
        if self.moving_mean.graph is not mean.graph:
            raise ValueError(f"BatchNormalization '{self.name}' was built outside this graph, "
                             "so its moving averages cannot be updated by it. Build the layer "
                             "in the graph (call it there first), or use training=False.")
        for var, batch in updates:
            mean.graph.add_to_collection(UPDATE_OPS, var.assign(var * m + batch * (1 - m)))

    def extra_repr(self):
        return f"momentum={self.momentum}, epsilon={self.epsilon}"


class LayerNormalization(KerasLayer):
    """Layer norm over the last axis (Keras epsilon 1e-3; PyTorch's LayerNorm uses 1e-5)."""

    def __init__(self, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", **kwargs):
        super().__init__(**kwargs)
        if axis not in (-1,):
            raise ValueError("LayerNormalization here normalises the last axis (axis=-1).")
        self.axis, self.epsilon, self.center, self.scale = axis, epsilon, center, scale
        self._inits = (beta_initializer, gamma_initializer)

    def build(self, input_shape):
        features = fan_in_shape(input_shape, f"LayerNormalization '{self.name}'")
        self.gamma = self.add_weight("gamma", (features,), self._inits[1]) if self.scale else None
        self.beta = self.add_weight("beta", (features,), self._inits[0]) if self.center else None

    def call(self, inputs):
        mean, variance = moments(inputs, -1, keepdims=True)
        return batch_normalization(inputs, mean, variance, self.beta, self.gamma, self.epsilon)

    def extra_repr(self):
        return f"epsilon={self.epsilon}"
