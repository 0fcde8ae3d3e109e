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
