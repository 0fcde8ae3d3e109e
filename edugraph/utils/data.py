"""PyTorch's data loading (``torch.utils.data``): a ``Dataset`` knows how many samples it has
and gives sample ``i``; a ``DataLoader`` collects them into batches for the training loop.

    train_set = TensorDataset(images, labels)
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True)
    for data, target in train_loader:       # data (64, ...) as the images, target (64,) int64
        ...

(TF1's input pipelines are ``eg.data.Dataset``, a room of its own with tf.data's API.)

The loader reads the samples in the main process, one batch after another. ``num_workers``,
``pin_memory`` and ``persistent_workers`` are accepted, so that PyTorch code such as its MNIST
example runs as written: in PyTorch they change how fast batches arrive (worker processes,
page-locked memory for copies to a GPU), not which batches arrive.
"""
import bisect
import math
import numbers
import warnings
from collections.abc import Mapping, Sequence

import numpy as np

from ..errors import ShapeError
from ..ops import random as _random
from ..tensor import Tensor, from_numpy, tensor

__all__ = ["Dataset", "TensorDataset", "ConcatDataset", "Subset", "random_split", "DataLoader",
           "default_collate"]


class Dataset:
    """The base of datasets: a subclass gives ``__getitem__(index)``, sample ``index`` (any
    structure of tensors, arrays and numbers: an ``(image, label)`` pair...), and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index), "
                                  "which returns sample number index.")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__(), the number "
                                  "of samples.")

    def __add__(self, other):
        """``train_set + extra_set``: one dataset with the samples of both."""
        return ConcatDataset([self, other])


class TensorDataset(Dataset):
    """Samples that are rows of tensors: sample ``i`` is ``(t[i] for t in tensors)``.

    Tensors are kept as they are; numpy arrays become tensors that share their memory and
    keep their dtype (``torch.from_numpy``: float64 data stays float64; convert with
    ``.astype(np.float32)`` first for float32 models); lists become tensors by
    ``eg.tensor``'s rules."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor, e.g. "
                             "TensorDataset(images, labels).")
        self.tensors = tuple(_as_tensor(t) for t in tensors)
        if any(t.ndim == 0 for t in self.tensors):
            raise ValueError(f"TensorDataset: tensors of shapes {self._shapes()}; each needs a "
                             "first dimension that counts the samples, but a 0-d one has none.")
        if len({t.shape[0] for t in self.tensors}) > 1:
            raise ValueError(f"TensorDataset: the tensors' first dimensions (their numbers of "
                             f"samples) differ: shapes {self._shapes()}. Each tensor needs one "
                             "row per sample.")

    def _shapes(self):
        return ", ".join(str(tuple(t.shape)) for t in self.tensors)

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


def _as_tensor(data):
    """``torch.as_tensor``: a tensor as it is, a numpy array without a copy, else a copy."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray):
        return from_numpy(data)
    return tensor(data, device="cpu:0")


class ConcatDataset(Dataset):
    """The samples of several datasets one after another: sample ``len(a)`` of
    ``ConcatDataset([a, b])`` is ``b[0]``."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset needs at least one dataset.")
        for i, d in enumerate(self.datasets):
            if not hasattr(d, "__getitem__") or not hasattr(d, "__len__"):
                raise TypeError(f"ConcatDataset: item {i} ({type(d).__name__}) is not a map-"
                                "style dataset (with __getitem__ and __len__).")
        self.cumulative_sizes = np.cumsum([len(d) for d in self.datasets]).tolist()

    def __getitem__(self, index):
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"ConcatDataset: index {index} is out of range for {n} samples.")
        index %= n
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]

    def __len__(self):
        return self.cumulative_sizes[-1]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Split ``dataset`` at random into ``Subset``s of the given lengths, which add up to its
    length; or of fractions of it that add up to 1 (``[0.8, 0.2]``: the lengths are rounded
    down, then the leftover samples go one each to the first subsets, as in PyTorch).

    The order is drawn from edugraph's global generator: ``eg.manual_seed(s)`` first makes
    the split reproducible (edugraph has no generator objects to pass as ``generator=``)."""
    if generator is not None:
        raise TypeError("random_split: edugraph has no generator objects; seed its global "
                        "generator instead: eg.manual_seed(42), then random_split(dataset, "
                        "lengths).")
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        if any(not 0 <= f <= 1 for f in lengths):
            raise ValueError(f"random_split: fractions must be between 0 and 1, got {lengths}.")
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        if 0 in counts:
            warnings.warn(f"random_split: the fractions {lengths} of {n} samples give lengths "
                          f"{counts}: a subset is empty.", stacklevel=2)
        lengths = counts
    if sum(lengths) != n:
        raise ValueError(f"random_split: the lengths {list(lengths)} add up to {sum(lengths)}, "
                         f"but the dataset has {n} samples. Give lengths that add up to {n}, "
                         "or fractions that add up to 1 ([0.8, 0.2]).")
    order = _random._generator(np).permutation(n).tolist()
    starts = np.cumsum([0] + list(lengths)).tolist()
    return [Subset(dataset, order[start:start + length])
            for start, length in zip(starts, lengths)]


class DataLoader:
    """The samples of a dataset in batches, in order or (``shuffle=True``) in a new random
    order each epoch; ``len(loader)`` is the number of batches.

    ``dataset``: anything with ``__getitem__`` and ``__len__`` (a ``Dataset``, a list, an
    array). ``drop_last``: leave out the last batch when it is smaller than ``batch_size``.
    ``collate_fn(samples)`` makes a batch from a list of samples (default:
    ``default_collate``, which stacks them into CPU tensors). The shuffled order is drawn from
    edugraph's global generator, so ``eg.manual_seed(s)`` makes it reproducible."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None,
                 num_workers=0, pin_memory=False, persistent_workers=False, **unsupported):
        if unsupported:
            raise TypeError(
                f"DataLoader: {', '.join(sorted(unsupported))} not supported. edugraph's "
                "loader reads the samples in order, or shuffled (shuffle=True; seed with "
                "eg.manual_seed), in the main process. To load chosen samples, give it "
                "Subset(dataset, indices); to batch them differently, a collate_fn.")
        if not (hasattr(dataset, "__getitem__") and hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader needs a dataset with __getitem__ and __len__ (a "
                            f"Dataset, a list, an array); got a {type(dataset).__name__}.")
        if isinstance(dataset, tuple) and len(dataset) > 1 and all(
                isinstance(d, Tensor) for d in dataset):
            raise TypeError(f"DataLoader got a tuple of {len(dataset)} tensors: its samples "
                            "would be the whole tensors. Pair them up as a dataset first: "
                            "DataLoader(TensorDataset(X, y), batch_size=...).")
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or \
                batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a whole number of 1 or more, "
                             f"got {batch_size!r}. (PyTorch's batch_size=None, samples one "
                             "by one, is not supported: iterate over the dataset itself.)")
        if num_workers < 0:
            raise ValueError(f"DataLoader: num_workers must be 0 or more, got {num_workers}.")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers keeps worker processes alive "
                             "between epochs, so it needs num_workers > 0 (as in PyTorch).")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last = bool(shuffle), drop_last
        self.collate_fn = collate_fn or default_collate
        self.num_workers, self.pin_memory = num_workers, pin_memory
        self.persistent_workers = persistent_workers

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = _random._generator(np).permutation(n).tolist() if self.shuffle else range(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            indices = order[start:start + self.batch_size]
            yield self.collate_fn([self.dataset[i] for i in indices])


def default_collate(batch):
    """A batch from a list of samples, as PyTorch's ``default_collate``.

    Tensors, numpy arrays and numbers are stacked into one CPU tensor with a new first
    dimension (the batch); tuples and lists are collated position by position into a list
    (``[(x0, y0), (x1, y1)]`` → ``[X, Y]``), named tuples and dicts field by field; strings
    are kept (as a tuple). dtypes follow PyTorch: tensors and arrays keep theirs (float64 data
    gives float64 batches), Python ints give int64 (the class labels ``F.nll_loss`` and
    ``F.cross_entropy`` take), floats float64, bools bool. The batch tensors record no
    gradient."""
    sample = batch[0]
    if isinstance(sample, str):
        return batch
    if isinstance(sample, (Tensor, np.ndarray, np.generic, numbers.Number)):
        return _stack(batch)
    if isinstance(sample, Mapping):
        return {key: default_collate([s[key] for s in batch]) for key in sample}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):        # a named tuple
        return type(sample)(*(default_collate(field) for field in zip(*batch)))
    if isinstance(sample, Sequence):
        if len({len(s) for s in batch}) > 1:
            raise ValueError(f"default_collate: the samples hold different numbers of items "
                             f"({sorted({len(s) for s in batch})}); each sample must have the "
                             "same fields to be batched position by position.")
        return [default_collate(field) for field in zip(*batch)]
    raise TypeError(f"default_collate: a sample holds a {type(sample).__name__}, which it "
                    "cannot batch: samples may hold tensors, numpy arrays, numbers, strings, "
                    "and tuples, lists and dicts of them. Give DataLoader a collate_fn.")


def _stack(values):
    arrays = [_host_array(v) for v in values]
    if arrays[0].dtype.kind not in "biuf":
        raise TypeError(f"default_collate: cannot batch values of dtype {arrays[0].dtype}; "
                        "only numbers (bool, int, float) make tensors.")
    shapes = sorted({a.shape for a in arrays})
    if len(shapes) > 1:
        raise ShapeError(f"default_collate: the samples' values have different shapes "
                         f"{shapes}, and stacking needs one shape. Resize them in the dataset, "
                         "or give DataLoader a collate_fn (one that pads them, say).")
    return from_numpy(np.stack(arrays))


def _host_array(value):
    if isinstance(value, Tensor):
        return value.numpy()
    if isinstance(value, int) and not isinstance(value, bool):     # a Python int, not numpy's
        return np.asarray(value, dtype=np.int64)    # (numpy's default int is 32-bit on Windows)
    return np.asarray(value)
