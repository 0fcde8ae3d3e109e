"""``torch.cuda``'s questions about the GPU, for ``device = "cuda" if eg.cuda.is_available()
else "cpu"``. A GPU here is a CUDA device that CuPy can use (see ``devices.py``)."""
from .devices import gpu_available as is_available, list_devices

__all__ = ["is_available", "device_count"]


def device_count():
    """How many CUDA devices CuPy can use (0 without CuPy or a CUDA device)."""
    return sum(d.kind == "gpu" for d in list_devices())
