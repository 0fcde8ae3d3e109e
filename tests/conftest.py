"""Shared fixtures: every device test runs on cpu:0 and on the stand-in accelerator sim:0,
and on gpu:0 (CuPy) where a CUDA device is available."""
import numpy as np
import pytest

import edugraph as eg

DEVICES = ["cpu:0", "sim:0"] + (["gpu:0"] if eg.gpu_available() else [])


def pytest_collection_modifyitems(config, items):
    """Tests parameterised with gpu:0 get the ``gpu`` marker (``pytest -m gpu`` runs them)."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and "gpu:0" in callspec.params.values():
            item.add_marker(pytest.mark.gpu)


@pytest.fixture(params=DEVICES)
def device(request):
    """A device name; tests using it run once per available device."""
    return request.param


@pytest.fixture(autouse=True)
def _fresh_state():
    """Each test starts in eager mode with a fixed seed."""
    eg.random.set_seed(0)
    np.random.seed(0)
    yield
