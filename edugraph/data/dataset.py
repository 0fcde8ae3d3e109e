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
import glob
import math
import os
import queue
import threading

import numpy as np

from ..context import state
from ..devices import current_device
from ..errors import InvalidArgumentError
from ..nest import flatten, map_structure
from ..ops import random as _random
from ..tensor import Tensor, tensor, tf_dtype
from .iterator import Iterator

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1                   # "pick for me": as many parallel calls as CPU cores
INFINITE_CARDINALITY, UNKNOWN_CARDINALITY = -1, -2
_END = object()                 # what next(iterator, _END) gives at the end


def _host(value):
    """Any leaf (tensor, array, number) → a host numpy array. numpy keeps what it cannot type
    (``None``, a ragged list) as objects: those get ``eg.tensor``'s check and its error."""
    if isinstance(value, Tensor):
        return value.numpy()
    array = np.asarray(value)
    return tensor(array).numpy() if array.dtype.kind == "O" else array


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
    def list_files(file_pattern, shuffle=None, seed=None):
        """The names of the files that match ``file_pattern`` (``"data/train-*.tfrecord"``,
        or a list of patterns), as TF: sorted, then shuffled unless ``shuffle=False`` (afresh
        on each pass; a ``seed`` repeats the orders). Each is a text tensor, as
        ``from_tensor_slices(filenames)`` gives, for ``TFRecordDataset`` to open."""
        patterns = [file_pattern] if isinstance(file_pattern, (str, os.PathLike)) else \
            list(file_pattern)
        names = sorted({name for p in patterns for name in glob.glob(os.fspath(p))})
        if not names:
            raise InvalidArgumentError(f"No files matched pattern: {', '.join(map(str, patterns))}"
                                       f" (looked for from the folder {os.getcwd()}).")
        files = Dataset.from_tensor_slices(names)
        return files if shuffle is False else files.shuffle(len(names), seed=seed)

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
        with ``num_parallel_calls`` several at once in threads, results in the input order.
        An error in ``fn`` gets a note naming ``fn`` and the element (its number and shapes)."""
        def call(index, element):
            try:
                out = fn(*element) if isinstance(element, tuple) else fn(element)
            except Exception as error:
                error.add_note(f"Dataset.map: {_function_name(fn)} raised this on element "
                               f"{index}, {_describe(element)}.")
                raise
            if out is None:
                raise TypeError(f"Dataset.map: {_function_name(fn)} returned None for element "
                                f"{index}, {_describe(element)}; it must return the new "
                                "element (is its `return` missing?).")
            try:
                return map_structure(_cpu_tensor, out)
            except (TypeError, ValueError) as error:
                error.add_note(f"Dataset.map: in what {_function_name(fn)} returned for "
                               f"element {index}, {_describe(element)}.")
                raise
        workers = (os.cpu_count() or 1) if num_parallel_calls == AUTOTUNE else num_parallel_calls
        if not workers or workers == 1:
            return Dataset(lambda: (call(i, e) for i, e in enumerate(self._make_iterator())),
                           self._cardinality)

        def iterate():
            with concurrent.futures.ThreadPoolExecutor(workers) as pool:
                pending = []
                for i, element in enumerate(self._make_iterator()):
                    pending.append(pool.submit(call, i, element))
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

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None):
        """``map_func(element)`` makes a dataset of each element (a file's records, say), and
        their elements are taken in turns: ``block_length`` (1) from each of ``cycle_length``
        open datasets (as many as CPU cores), round and round; a finished one's place goes to
        the next element's dataset when its turn comes. That is TF's order, and it stays the
        order with ``num_parallel_calls``, which reads each open dataset ahead in a thread of
        its own (so waiting for several files overlaps)."""
        cycle = (os.cpu_count() or 1) if cycle_length in (None, AUTOTUNE) else cycle_length
        block = 1 if block_length is None else block_length
        if cycle < 1 or block < 1:
            raise ValueError(f"interleave needs cycle_length and block_length of at least 1, "
                             f"got {cycle_length} and {block_length}.")

        def open_dataset(element):
            made = map_func(*element) if isinstance(element, tuple) else map_func(element)
            if not isinstance(made, Dataset):
                raise TypeError(f"interleave: {_function_name(map_func)} must return a Dataset "
                                f"for each element, but returned {type(made).__name__}.")
            return _Prefetcher(made._make_iterator, block) if num_parallel_calls else \
                made._make_iterator()

        def iterate():
            inputs, slots = self._make_iterator(), [None] * cycle
            index = taken = num_open = 0
            more_inputs = True

            def next_slot():
                nonlocal index, taken
                index, taken = (index + 1) % cycle, 0
            try:
                while more_inputs or num_open:
                    if slots[index] is None:            # an empty place: open the next one
                        element = next(inputs, _END) if more_inputs else _END
                        if element is _END:
                            more_inputs = False
                            next_slot()
                        else:
                            slots[index], num_open = open_dataset(element), num_open + 1
                        continue
                    element = next(slots[index], _END)
                    if element is _END:                 # this one is finished
                        slots[index], num_open = None, num_open - 1
                        next_slot()
                        continue
                    yield element
                    taken += 1
                    if taken == block:
                        next_slot()
            finally:                # stopped early: stop the threads reading ahead too
                for slot in slots:
                    if isinstance(slot, _Prefetcher):
                        slot.stop.set()
        return Dataset(iterate)

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
        """Elements as tensors on the current device (the one in effect now). Inside an
        ``eg.function``, ``next(iterator)`` takes a new element on every call (iterator.py)."""
        return Iterator(self._host_elements, current_device())

    def make_one_shot_iterator(self):
        """TF1's iterator (also ``tf.compat.v1.data.make_one_shot_iterator(dataset)``): made
        in a graph, its ``get_next()`` is a node that takes the next element each time
        ``sess.run`` runs it, and raises ``OutOfRangeError`` when they are used up."""
        return Iterator(self._host_elements, current_device(), graph_nodes=True)

    def make_initializable_iterator(self):
        """TF1's iterator for an epoch loop: ``sess.run(iterator.initializer)`` starts it
        at the first element, then ``get_next()`` as in ``make_one_shot_iterator``."""
        if state.graph is None:
            raise RuntimeError(
                "dataset.make_initializable_iterator is not supported when eager execution "
                "is enabled (TF's message): it belongs in a TF1 graph. Eagerly, iterate: "
                "for element in dataset: ... (each for loop starts at the first element).")
        return Iterator(self._host_elements, current_device(), graph_nodes=True,
                        initializable=True)

    def _host_elements(self):
        return (map_structure(_cpu_tensor, element) for element in self._make_iterator())

    def cardinality(self):
        """The number of elements, or INFINITE_CARDINALITY (-1) / UNKNOWN_CARDINALITY (-2)."""
        return self._cardinality

    def __len__(self):
        if self._cardinality < 0:
            raise TypeError("The length of this dataset is "
                            f"{'infinite' if self._cardinality == -1 else 'unknown'}.")
        return self._cardinality

    def as_numpy_iterator(self):
        """Elements as host numpy arrays; a single number as a numpy scalar (``np.int64(0)``),
        as TF gives it."""
        for element in self._make_iterator():
            yield map_structure(_numpy_element, element)

    def __repr__(self):
        return f"<Dataset cardinality={self._cardinality}>"


def _numpy_element(value):
    """A host array, a 0-d one as its numpy scalar (text stays as it is)."""
    array = _host(value)
    return array[()] if isinstance(array, np.ndarray) else array


def _function_name(fn):
    """How an error names a map function: its name, and a lambda's line too."""
    name = getattr(fn, "__qualname__", type(fn).__name__)
    code = getattr(fn, "__code__", None)
    return f"the function {name}" + (f" (line {code.co_firstlineno})"
                                     if name.endswith("<lambda>") and code else "")


def _describe(element):
    """An element for an error message: a scalar's value, else each part's shape and dtype."""
    def leaf(value):
        array = _host(value)
        return repr(array.item()) if array.ndim == 0 else f"<{array.dtype} {array.shape}>"
    return str(map_structure(leaf, element)).replace("'", "").replace('"', "")


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
    array = _host([_host(v) for v in structure] if isinstance(structure, list) else structure)
    return array.astype(tf_dtype(array)) if _python_data(structure) else array


def _python_data(value):
    """Numbers or (nested) lists of them, which TF reads as float32 / int32 (numpy: float64 /
    int64, which float32 weights would then refuse); arrays and tensors keep their dtype."""
    if isinstance(value, (list, tuple)):
        return all(_python_data(v) for v in value)
    return not hasattr(value, "dtype")


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
