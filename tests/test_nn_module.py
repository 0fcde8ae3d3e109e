"""Module, the base of every layer and model: tracking, building, modes, saving, printing."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import layers


class Block(eg.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = eg.Variable(np.float32(2.0), name="scale")
        self.inner = [eg.nn.Linear(3, 3), eg.nn.Linear(3, 2)]
        self.frozen = eg.Variable(np.zeros(2, np.float32), trainable=False)

    def forward(self, x):
        for layer in self.inner:
            x = layer(x)
        return x * self.scale + self.frozen


def test_tracking_names_and_counts():
    block = Block()
    names = [n for n, _ in block.named_variables()]
    assert names == ["scale", "frozen", "inner.0.weight", "inner.0.bias", "inner.1.weight",
                     "inner.1.bias"]
    assert [n for n, _ in block.named_parameters()] == \
        ["scale", "inner.0.weight", "inner.0.bias", "inner.1.weight", "inner.1.bias"]
    assert block.count_params() == 1 + 2 + 12 + 8
    out = block(eg.ones((4, 3)))
    assert out.shape == (4, 2)
    out.sum().backward()
    assert all(p.grad is not None for p in block.parameters())
    block.zero_grad()
    assert all(p.grad is None for p in block.parameters())


def test_lazy_build_uses_the_first_input():
    layer = layers.Dense(5)
    assert not layer.built and layer.variables == []
    layer(eg.ones((2, 7)))
    assert layer.built and layer.kernel.shape == (7, 5)
    assert layer.output_shape == (None, 5)
    with pytest.raises(ValueError, match="must be known"):
        layers.Dense(2).build_for((None, None))


def test_get_set_and_save_load_weights(tmp_path):
    block = Block()
    x = eg.ones((1, 3))
    expected = block(x).numpy()
    block.save_weights(tmp_path / "block.npz")
    other = Block()
    assert not np.array_equal(other(x).numpy(), expected)
    other.load_weights(tmp_path / "block.npz")
    np.testing.assert_array_equal(other(x).numpy(), expected)
    other.set_weights([np.zeros_like(w) for w in other.get_weights()])
    assert not other(x).numpy().any()
    with pytest.raises(ValueError, match="has shape"):
        other.set_weights([np.zeros(3)] * 6)


def test_training_flag_rules():
    keras_drop, torch_drop = layers.Dropout(0.5), eg.nn.Dropout(0.5)
    assert not keras_drop.training and torch_drop.training
    model = eg.Sequential([keras_drop])
    model.train()
    assert keras_drop.training
    x = eg.ones((50, 50))
    assert (model(x).numpy() == 0).any()                # the module's flag...
    np.testing.assert_array_equal(model(x, training=False).numpy(), x.numpy())   # ...or explicit


def test_repr_and_summary_of_a_pytorch_style_module(capsys):
    block = Block()
    text = repr(block)
    assert "(inner.0): Linear(in_features=3, out_features=3, bias=True)" in text   # as PyTorch
    block(eg.ones((1, 3)))
    block.summary()
    out = capsys.readouterr().out
    assert "Total params: 23" in out and "Trainable params: 21" in out


def test_functional_keras_tensors_carry_shapes():
    x = eg.Input((8, 8, 1))
    assert x.shape == (None, 8, 8, 1)
    y = layers.Conv2D(4, 3)(x)
    assert y.shape == (None, 6, 6, 4) and y.layer is not None
    assert "made by 'conv2d" in repr(y)
    ids = eg.Input((None,), dtype="int64")
    assert layers.Embedding(10, 3)(ids).shape == (None, None, 3)
