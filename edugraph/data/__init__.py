"""Input pipelines (``eg.data.Dataset``), as ``tf.data``: slices, shuffle, map, batch, prefetch."""
from .dataset import AUTOTUNE, INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset
from .iterator import Iterator
from .readers import TFRecordDataset

__all__ = ["Dataset", "Iterator", "TFRecordDataset", "AUTOTUNE", "INFINITE_CARDINALITY",
           "UNKNOWN_CARDINALITY"]
