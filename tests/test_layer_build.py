"""Keras's spellings for building and taking apart models: ``layer.build(input_shape)`` by hand
builds once (the first call keeps those weights), ``model.build`` then ``summary``, and a
``Sequential``'s ``layers`` / ``get_layer``."""
import numpy as np

import edugraph as eg
from edugraph.keras import layers


def test_build_by_hand_makes_the_weights_the_first_call_uses():
    table = layers.Embedding(10, 4)
    table.build((None,))
    assert table.built
    embeddings, values = table.embeddings, table.embeddings.numpy().copy()
    looked_up = table(eg.constant([1, 7]))
    assert table.embeddings is embeddings and table.weights == [embeddings]
    np.testing.assert_array_equal(looked_up.numpy(), values[[1, 7]])


def test_a_custom_layer_is_built_once_whether_its_build_calls_super_or_not():
    builds = []

    class Scale(eg.keras.layers.Layer):
        def build(self, input_shape):                    # Keras 2's habit: super() last
            builds.append(("scale", input_shape))
            self.scale = self.add_weight("scale", (input_shape[-1],), "ones")
            super().build(input_shape)

        def call(self, inputs):
            return inputs * self.scale

    class Shift(eg.keras.layers.Layer):
        def build(self, input_shape):                    # Keras 3's: no super()
            builds.append(("shift", input_shape))
            self.shift = self.add_weight("shift", (input_shape[-1],), "zeros")

        def call(self, inputs):
            return inputs + self.shift

    for layer in (Scale(), Shift()):
        layer.build((None, 3))
        layer(eg.ones((2, 3)))
        layer(eg.ones((5, 3)))
    assert builds == [("scale", (None, 3)), ("shift", (None, 3))]


def test_model_build_then_summary_as_in_keras():
    net = eg.keras.Sequential([layers.Dense(4), layers.Dense(2)])
    net.build((None, 3))
    lines = []
    net.summary(print_fn=lines.append)
    assert "Total params: 26" in "\n".join(lines)
    kernel = net.layers[0].kernel
    net(np.ones((1, 3), np.float32))
    assert net.layers[0].kernel is kernel


def test_sequential_layers_and_get_layer_give_the_layers_to_call_one_by_one():
    eg.random.set_seed(0)
    net = eg.keras.Sequential([layers.Flatten(input_shape=(2, 2)),
                               layers.Dense(3, activation="relu", name="hidden"),
                               layers.Dense(2)])
    x = np.arange(8, dtype=np.float32).reshape(2, 2, 2)
    assert net.get_layer("hidden") is net.layers[1]
    hidden = net.layers[1](net.layers[0](x))
    np.testing.assert_allclose(net.layers[2](hidden).numpy(), net(x).numpy(), rtol=1e-6)
