"""``tf.keras`` spelled ``eg.keras``, so the slides' Keras code runs with ``tf.`` → ``eg.``:

    model = eg.keras.Sequential([eg.keras.layers.Dense(10, activation="softmax")])
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=eg.keras.optimizers.Adam(), metrics=["accuracy"])

Everything here is edugraph's own (``eg.layers``, ``eg.losses``, ``eg.Sequential``...), under
Keras's module names; ``eg.keras.optimizers`` holds Keras's optimizer names and defaults, and
``eg.keras.losses`` Keras's ``mean_squared_error`` (per example, where TF1's is the mean).
"""
import sys

from . import backend, losses, utils
from .. import initializers, layers, models
from ..layers import activations
from ..models import Input, Model, Sequential, callbacks, metrics, optimizers

__all__ = ["Sequential", "Model", "Input", "layers", "losses", "optimizers", "callbacks",
           "metrics", "initializers", "models", "utils", "backend", "activations"]

# ``from edugraph.keras.layers import Embedding`` (the slides' import) finds the same modules;
# ``eg.keras.models.Sequential`` is ``eg.keras.Sequential`` (TF2's quickstart spelling).
for _name in ("layers", "losses", "optimizers", "callbacks", "metrics", "initializers",
              "models", "activations"):
    sys.modules[f"{__name__}.{_name}"] = globals()[_name]
