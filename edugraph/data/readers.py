"""Datasets read from files: ``TFRecordDataset``, the records of TFRecord files.

The input-pipeline slide, as written::

    files = eg.data.Dataset.list_files("data/train-*.tfrecord")
    dataset = eg.data.TFRecordDataset(files, num_parallel_reads=4)
    dataset = dataset.map(parser_fn, num_parallel_calls=4)

edugraph has no string tensors, so a record is a 1-D uint8 tensor of its bytes (TF's is a
string scalar): ``eg.io.decode_raw(record, eg.float32)`` reads the numbers in it, and records
of one length batch into a (batch, bytes) tensor. ``tf.train.Example`` records are left out:
their message definitions come with TensorFlow, not with numpy or TensorBoard.
"""
import os

import numpy as np

from ..io.tfrecord import tf_record_iterator
from ..tensor import Tensor
from .dataset import UNKNOWN_CARDINALITY, Dataset

__all__ = ["TFRecordDataset"]


class TFRecordDataset(Dataset):
    """The records of the TFRecord files ``filenames`` (a name, a list of names, or a dataset
    of them such as ``Dataset.list_files``'s). File after file; with ``num_parallel_reads``
    that many files are open at once, read ahead in threads, and their records taken in
    turns, one from each (TF's ``interleave`` with ``cycle_length=num_parallel_reads``)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        if compression_type not in (None, "", "NONE"):
            raise NotImplementedError(f"TFRecordDataset: compression ({compression_type!r}) is "
                                      "left out; read uncompressed files.")
        files = filenames if isinstance(filenames, Dataset) else \
            Dataset.from_tensor_slices(_file_names(filenames))
        if num_parallel_reads is None:
            records = files.interleave(_records, cycle_length=1)
        else:
            records = files.interleave(_records, cycle_length=num_parallel_reads,
                                       block_length=1, num_parallel_calls=num_parallel_reads)
        super().__init__(records._make_iterator, UNKNOWN_CARDINALITY)


def _file_names(filenames):
    """A file name, or a list of them, as a list of strings."""
    names = [filenames] if isinstance(filenames, (str, os.PathLike, Tensor)) else \
        list(filenames)
    return [_path(name) for name in names]


def _path(name):
    """A file name given as a string, a path or a text tensor (``list_files``' elements)."""
    if isinstance(name, Tensor) and name.dtype.kind == "U" and name.shape == ():
        return str(name.numpy())
    if isinstance(name, (str, os.PathLike)):
        return os.fspath(name)
    raise TypeError(f"TFRecordDataset: a file name must be a string, not {name!r}.")


def _records(filename):
    """One file's records as uint8 tensors, read lazily (and checked) as they are taken."""
    path = _path(filename)
    return Dataset(lambda: (Tensor(np.frombuffer(record, np.uint8).copy())
                            for record in tf_record_iterator(path)))
