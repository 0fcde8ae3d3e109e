"""Input pipelines (``eg.data.Dataset``), as ``tf.data``: slices, shuffle, map, batch, prefetch."""
from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]
