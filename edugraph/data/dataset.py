"""Dataset: an input pipeline built from small steps, as ``tf.data`` does it.

Each method returns a *new* Dataset describing one more step; nothing runs until you iterate::

    ds = (Dataset.from_tensor_slices((images, labels))
          .shuffle(1000, seed=0).map(augment, num_parallel_calls=4).batch(32).prefetch(2))
    for x, y in ds: ...                     # device tensors, on the current device

Two steps hide waiting (the lecture's point about keeping the GPU busy):

* ``map(fn, num_parallel_calls=k)`` runs ``fn`` on up to k elements at once in threads
  (results keep their order), so slow preprocessing (decoding, reading files) overlaps;
* ``prefetch(n)`` runs everything before it in a background thread that stays up to n
  elements ahead, so producing the next batch overlaps with training on this one.

Threads help whenever the work releases Python's global lock: waiting for disk or network,
sleeping, and most numpy/CuPy maths on large arrays.
"""
import concurrent.futures
import math
import os
import queue
import threading

import numpy as np

from ..devices import current_device
from ..nest import flatten, map_structure
from ..ops import random as _random
from ..tensor import Tensor

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1                   # "pick for me": as many parallel calls as CPU cores
INFINITE_CARDINALITY, UNKNOWN_CARDINALITY = -1, -2


def _host(value):
    """Any leaf (tensor, array, number) → a host numpy array."""
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


def _cpu_tensor(value):
    return value if isinstance(value, Tensor) and value.device.kind == "cpu" else \
        Tensor(_host(value))


class Dataset:
    """A re-iterable stream of elements (tensors, or tuples/dicts of them)."""

    def __init__(self, make_iterator, cardinality=UNKNOWN_CARDINALITY):
        self._make_iterator = make_iterator       # () → a fresh Python iterator of elements
        self._cardinality = cardinality

    # ------------------------------------------------------------------ sources
    @staticmethod
    def from_tensor_slices(tensors):
        """One element per row of ``tensors`` (an array, or a tuple/dict of arrays with the
        same first dimension): ``from_tensor_slices((x, y))`` yields ``(x[i], y[i])``. As in
        TF, a list is one component (``from_tensor_slices((filenames, labels))`` with two
        lists); tuples and dicts are structures."""
        arrays = _components(tensors)
        sizes = {a.shape[0] if a.ndim else None for a in flatten(arrays)}
        if None in sizes or len(sizes) != 1:
            shapes = [a.shape for a in flatten(arrays)]
            raise ValueError(f"from_tensor_slices: every component needs the same first "
                             f"dimension (the number of examples); got shapes {shapes}.")
        n = sizes.pop()

        def iterate():
            for i in range(n):
                yield map_structure(lambda a: Tensor(a[i]), arrays)
        return Dataset(iterate, n)

    @staticmethod
    def from_generator(generator, length=None):
        """Elements from ``generator()`` (called afresh for each pass over the data)."""
        def iterate():
            for element in generator():
                yield map_structure(_cpu_tensor, element)
        return Dataset(iterate, UNKNOWN_CARDINALITY if length is None else length)

    @staticmethod
    def range(*args):
        """0, 1, ..., like Python's ``range`` (int64 scalars)."""
        r = range(*args)
        return Dataset(lambda: (Tensor(np.array(i)) for i in r), len(r))

    @staticmethod
    def zip(*datasets):
        """Elements of several datasets side by side: ``Dataset.zip((images, labels))`` (or
        ``Dataset.zip(images, labels)``) yields ``(image, label)`` pairs, a dict of datasets
        dicts; it ends with the shortest dataset, as Python's ``zip``."""
        structure = datasets[0] if len(datasets) == 1 and isinstance(datasets[0], (tuple, dict)) \
            else datasets
        parts = list(structure.values()) if isinstance(structure, dict) else list(structure)
        if not parts or not all(isinstance(d, Dataset) for d in parts):
            raise TypeError(f"Dataset.zip takes datasets, as a tuple or dict of them "
                            f"(Dataset.zip((images, labels))); got {structure!r}.")

        def iterate():
            for elements in zip(*(d._make_iterator() for d in parts)):
                yield dict(zip(structure, elements)) if isinstance(structure, dict) else elements
        sizes = [d._cardinality for d in parts]
        finite = [n for n in sizes if n >= 0]
        card = min(finite) if finite and (UNKNOWN_CARDINALITY not in sizes or 0 in finite) else \
            UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in sizes else INFINITE_CARDINALITY
        return Dataset(iterate, card)

    def concatenate(self, dataset):
        """This dataset's elements, then ``dataset``'s, which must have the same structure and
        dtypes (checked on the first element of each, when iterating)."""
        if not isinstance(dataset, Dataset):
            raise TypeError(f"concatenate takes a Dataset, got {type(dataset).__name__}.")

        def iterate():
            first = None
            for element in self._make_iterator():
                first = element if first is None else first
                yield element
            for i, element in enumerate(dataset._make_iterator()):
                if i == 0 and first is not None:
                    _check_same_kind(first, element)
                yield element
        a, b = self._cardinality, dataset._cardinality
        card = INFINITE_CARDINALITY if INFINITE_CARDINALITY in (a, b) else \
            a + b if a >= 0 and b >= 0 else UNKNOWN_CARDINALITY
        return Dataset(iterate, card)

    # ------------------------------------------------------------------ steps
    def map(self, fn, num_parallel_calls=None):
        """``fn(element)`` for each element (tuples are unpacked into arguments, as in TF);
        with ``num_parallel_calls`` several at once in threads, results in the input order."""
        def call(element):
            out = fn(*element) if isinstance(element, tuple) else fn(element)
            return map_structure(_cpu_tensor, out)
        workers = (os.cpu_count() or 1) if num_parallel_calls == AUTOTUNE else num_parallel_calls
        if not workers or workers == 1:
            return Dataset(lambda: (call(e) for e in self._make_iterator()), self._cardinality)

        def iterate():
            with concurrent.futures.ThreadPoolExecutor(workers) as pool:
                pending = []
                for element in self._make_iterator():
                    pending.append(pool.submit(call, element))
                    if len(pending) >= workers:        # keep `workers` calls in flight
                        yield pending.pop(0).result()
                while pending:
                    yield pending.pop(0).result()
        return Dataset(iterate, self._cardinality)

    def batch(self, batch_size, drop_remainder=False):
        """Stack ``batch_size`` consecutive elements into one (a new first axis)."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}.")

        def iterate():
            group = []
            for element in self._make_iterator():
                group.append(element)
                if len(group) == batch_size:
                    yield _stacked(group[0], group)
                    group = []
            if group and not drop_remainder:
                yield _stacked(group[0], group)
        n = self._cardinality
        if n >= 0:
            n = n // batch_size if drop_remainder else math.ceil(n / batch_size)
        return Dataset(iterate, n)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        """Random order from a buffer of ``buffer_size`` elements: each step emits a random
        element of the buffer and refills its place (a buffer ≥ the dataset's size gives a
        uniform shuffle). A ``seed`` makes the order reproducible; so does
        ``reshuffle_each_iteration=False``, which keeps one order for every pass (a shuffled
        dataset split by ``take``/``skip`` must not move elements between the parts)."""
        if buffer_size < 1:
            raise ValueError(f"shuffle needs a buffer of at least 1 element, got {buffer_size} "
                             "(1 keeps the order; the dataset's size shuffles it uniformly).")
        if seed is None and not reshuffle_each_iteration:
            seed = int(_random._generator(np).integers(2 ** 62))
        passes = iter(range(2 ** 62))

        def iterate():
            n = next(passes) if reshuffle_each_iteration else 0
            rng = np.random.default_rng([seed, n]) if seed is not None else \
                _random._generator(np)
            buffer = []
            for element in self._make_iterator():
                if len(buffer) < buffer_size:
                    buffer.append(element)
                    continue
                i = int(rng.integers(len(buffer)))
                yield buffer[i]
                buffer[i] = element
            while buffer:
                yield buffer.pop(int(rng.integers(len(buffer))))
        return Dataset(iterate, self._cardinality)

    def repeat(self, count=None):
        """The dataset ``count`` times over (forever if None or -1, as in TF; an empty one
        stays empty instead of looping forever)."""
        if count is not None and count < 0:
            count = None

        def iterate():
            n = 0
            while count is None or n < count:
                n += 1
                empty = True
                for element in self._make_iterator():
                    empty = False
                    yield element
                if empty:
                    return
        n = self._cardinality
        card = (INFINITE_CARDINALITY if n != 0 else 0) if count is None else \
            (n * count if n >= 0 else n)
        return Dataset(iterate, card)

    def take(self, count):
        """At most the first ``count`` elements (all of them for -1, as in TF)."""
        if count < 0:
            return self

        def iterate():
            if count <= 0:
                return
            for i, element in enumerate(self._make_iterator()):
                yield element
                if i + 1 >= count:
                    return
        n = self._cardinality
        return Dataset(iterate, count if n == INFINITE_CARDINALITY else
                       (min(n, count) if n >= 0 else n))

    def skip(self, count):
        """All but the first ``count`` elements (-1 skips them all, as in TF)."""
        if count < 0:
            return Dataset(lambda: iter(()), 0)

        def iterate():
            for i, element in enumerate(self._make_iterator()):
                if i >= count:
                    yield element
        n = self._cardinality
        return Dataset(iterate, max(n - count, 0) if n >= 0 else n)

    def filter(self, predicate):
        """Only the elements for which ``predicate(element)`` is true."""
        def keep(element):
            result = predicate(*element) if isinstance(element, tuple) else predicate(element)
            return bool(_host(result))
        return Dataset(lambda: (e for e in self._make_iterator() if keep(e)))

    def prefetch(self, buffer_size=1):
        """Produce up to ``buffer_size`` elements ahead in a background thread."""
        if buffer_size == AUTOTUNE:
            buffer_size = 2
        if buffer_size < 1:
            raise ValueError(f"prefetch needs a buffer of at least 1, got {buffer_size}.")

        def iterate():
            producer = _Prefetcher(self._make_iterator, buffer_size)
            try:
                yield from producer
            finally:                        # the consumer stopped early: stop the thread too
                producer.stop.set()
        return Dataset(iterate, self._cardinality)

    # ------------------------------------------------------------------ using it
    def __iter__(self):
        """Elements as tensors on the current device (the one in effect when iteration starts)."""
        device = current_device()
        for element in self._make_iterator():
            yield map_structure(lambda t: _cpu_tensor(t).to(device)
                             if device.kind != "cpu" else _cpu_tensor(t), element)

    def cardinality(self):
        """The number of elements, or INFINITE_CARDINALITY (-1) / UNKNOWN_CARDINALITY (-2)."""
        return self._cardinality

    def __len__(self):
        if self._cardinality < 0:
            raise TypeError("The length of this dataset is "
                            f"{'infinite' if self._cardinality == -1 else 'unknown'}.")
        return self._cardinality

    def as_numpy_iterator(self):
        """Elements as host numpy arrays."""
        for element in self._make_iterator():
            yield map_structure(_host, element)

    def __repr__(self):
        return f"<Dataset cardinality={self._cardinality}>"


def _check_same_kind(first, other):
    """Elements of a concatenation must have one structure and one dtype per component."""
    def kind(element):
        leaves = [np.dtype(_host(leaf).dtype) for leaf in flatten(element)]
        return map_structure(lambda _: None, element), leaves
    if kind(first) != kind(other):
        def describe(element):
            return map_structure(lambda leaf: f"{_host(leaf).dtype}", element)
        raise TypeError(f"concatenate: the datasets' elements differ: {describe(first)} then "
                        f"{describe(other)}. Both need the same structure and dtypes: cast one "
                        "first, e.g. ds.map(lambda x: eg.cast(x, eg.float32)).")


def _components(structure):
    """A structure of host arrays, a list being one array (its items stacked), as TF reads
    ``from_tensor_slices``' argument."""
    if isinstance(structure, dict):
        return {k: _components(v) for k, v in structure.items()}
    if isinstance(structure, tuple):
        parts = [_components(v) for v in structure]
        return type(structure)(*parts) if hasattr(structure, "_fields") else tuple(parts)
    if isinstance(structure, list):
        return np.asarray([_host(v) for v in structure])
    return _host(structure)


def _stacked(first, elements):
    """Elements of one structure stacked leaf by leaf, a dict's entries matched by key."""
    if isinstance(first, dict):
        if any(e.keys() != first.keys() for e in elements):
            raise ValueError(f"batch: the elements are dicts with different keys "
                             f"({sorted(first)} and others); each element needs the same ones.")
        return {k: _stacked(v, [e[k] for e in elements]) for k, v in first.items()}
    if isinstance(first, (list, tuple)):
        other = next((e for e in elements if len(e) != len(first)), None)
        if other is not None:
            raise ValueError(f"batch: the elements have different structures (one has "
                             f"{len(first)} parts, another {len(other)}); each element needs "
                             "the same parts.")
        parts = [_stacked(v, [e[i] for e in elements]) for i, v in enumerate(first)]
        return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)
    arrays = [_host(e) for e in elements]
    if len({a.shape for a in arrays}) > 1:
        raise ValueError(f"batch: the elements have different shapes "
                         f"{sorted({a.shape for a in arrays})}, and a batch stacks them into "
                         "one array. Make them one shape in a map step (pad or crop), or "
                         "batch(1).")
    return Tensor(np.stack(arrays))


class _Prefetcher:
    """An iterator whose producer runs in a daemon thread, ``size`` elements ahead."""

    _DONE = object()

    def __init__(self, make_iterator, size):
        self.queue = queue.Queue(maxsize=size)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._produce, args=(make_iterator,), daemon=True)
        self.thread.start()

    def _produce(self, make_iterator):
        try:
            for element in make_iterator():
                if not self._put(element):
                    return
            self._put(self._DONE)
        except BaseException as error:          # re-raised in the consumer's thread
            self._put(error)

    def _put(self, item):
        while not self.stop.is_set():
            try:
                self.queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def __iter__(self):
        return self

    def __next__(self):
        item = self.queue.get()
        if item is self._DONE:
            raise StopIteration
        if isinstance(item, BaseException):
            raise item
        return item
