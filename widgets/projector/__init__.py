"""Embedding Projector: look at trained embeddings in 2-D and 3-D (like TensorBoard's)."""
from .projector import Projector
from .word_map import word_map

__all__ = ["Projector", "word_map"]
