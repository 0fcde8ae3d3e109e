"""PyTorch's ``torch.utils``: ``eg.utils.data`` (``Dataset``, ``DataLoader``...), and the
``eg.save`` / ``eg.load`` of state dicts (``serialization.py``)."""
from . import data, serialization  # noqa: F401

__all__ = ["data", "serialization"]
