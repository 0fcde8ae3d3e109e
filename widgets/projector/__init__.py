"""Embedding Projector: look at trained embeddings in 2-D and 3-D (like TensorBoard's)."""
from .projector import Projector

__all__ = ["Projector"]
