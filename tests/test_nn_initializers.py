"""Initializers: the variance each promises, Keras names, reproducibility, fans of conv kernels."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import initializers as init


@pytest.mark.parametrize("name,variance", [
    ("glorot_uniform", 2 / (300 + 200)), ("glorot_normal", 2 / (300 + 200)),
    ("he_normal", 2 / 300), ("he_uniform", 2 / 300), ("lecun_normal", 1 / 300)])
def test_variance_scaling_family(name, variance):
    values = init.get(name)((300, 200)).numpy()
    assert values.shape == (300, 200) and values.dtype == np.float32
    assert abs(values.mean()) < 0.01 * np.sqrt(variance) * 10
    np.testing.assert_allclose(values.var(), variance, rtol=0.03)


def test_uniform_limits_and_truncation():
    limit = np.sqrt(6 / (30 + 20))
    values = init.GlorotUniform()((30, 20)).numpy()
    assert np.abs(values).max() <= limit
    stddev = 0.5
    values = init.TruncatedNormal(stddev=stddev)((100, 100)).numpy()
    assert np.abs(values).max() <= 2 * stddev


def test_truncated_normal_op_as_tf1_initialises_weights(device):
    """``tf.Variable(tf.truncated_normal(shape, stddev=0.1))``, TF1's Deep MNIST pattern:
    values within two stddevs of the mean, whose spread is that of a normal cut at ±2σ."""
    with eg.device(device):
        values = eg.truncated_normal((200, 100), mean=1.0, stddev=0.1, seed=3)
    assert values.device.name == device and values.dtype == np.float32
    values = values.numpy()
    assert np.abs(values - 1.0).max() <= 0.2
    assert values.mean() == pytest.approx(1.0, abs=0.002)
    assert values.std() == pytest.approx(0.1 * 0.8796, rel=0.02)
    with eg.Graph().as_default():
        w = eg.Variable(eg.random.truncated_normal([5, 5, 1, 32], stddev=0.1, seed=1))
        firsts = []
        for _ in range(2):              # seeded: each Session starts the same stream
            with eg.Session() as sess:
                sess.run(eg.global_variables_initializer())
                firsts.append(sess.run(w))
    np.testing.assert_array_equal(*firsts)
    assert np.abs(firsts[0]).max() <= 0.2 and firsts[0].std() > 0.05


def test_conv_kernels_count_the_receptive_field():
    assert init.compute_fans((3, 3, 16, 32)) == (144, 288)
    values = init.he_normal()((3, 3, 16, 32)).numpy()
    np.testing.assert_allclose(values.var(), 2 / 144, rtol=0.05)


def test_constants_names_and_errors(device):
    with eg.device(device):
        assert init.get("zeros")((2, 3)).device.name == device
    np.testing.assert_array_equal(init.ones()((2,)).numpy(), [1, 1])
    np.testing.assert_array_equal(init.Constant(3.5)((2,)).numpy(), [3.5, 3.5])
    assert isinstance(init.get("GlorotUniform"), init.GlorotUniform)
    assert isinstance(init.get("uniform"), init.RandomUniform)
    assert init.xavier_uniform is init.glorot_uniform
    assert init.variance_scaling_initializer(2.0).scale == 2.0        # TF1 spelling
    with pytest.raises(ValueError, match="Unknown initializer 'glorot'"):
        init.get("glorot")
    with pytest.raises(ValueError, match="mode must be"):
        init.VarianceScaling(mode="fan_out_in")


def test_reproducible_with_the_global_seed_or_an_own_seed():
    eg.random.set_seed(42)
    a = init.he_normal()((5, 5)).numpy()
    eg.random.set_seed(42)
    np.testing.assert_array_equal(init.he_normal()((5, 5)).numpy(), a)
    np.testing.assert_array_equal(init.RandomNormal(seed=7)((3,)).numpy(),
                                  init.RandomNormal(seed=7)((3,)).numpy())
    eg.random.set_seed(42)
    first = eg.layers.Dense(4)
    first.build_for((None, 3))
    eg.random.set_seed(42)
    second = eg.layers.Dense(4)
    second.build_for((None, 3))
    np.testing.assert_array_equal(first.kernel.numpy(), second.kernel.numpy())
