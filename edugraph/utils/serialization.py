"""``eg.save(obj, f)`` and ``eg.load(f)``, as ``torch.save`` and ``torch.load``: a state dict,
or any nesting of dicts, lists and tuples of tensors, numpy arrays, numbers and strings (a
checkpoint ``{"epoch": 3, "model": model.state_dict(), "optimizer": ...}``), to a file and back.

    eg.save(model.state_dict(), "mnist_cnn.pt")
    model.load_state_dict(eg.load("mnist_cnn.pt"))

The format is Python's pickle, as PyTorch's is, with each tensor and numeric array stored as
its raw bytes, dtype and shape (pickle's "persistent id", which lets the loader rebuild them
itself). A pickle may name any function to call when it is loaded, so ``eg.load``, like
``torch.load`` since PyTorch 2.6 (``weights_only=True``), rebuilds only tensors, arrays,
numbers, strings, lists, tuples, dicts and ordered dicts; ``weights_only=False`` loads any
pickled object, and is for files you trust.
"""
import contextlib
import io
import pickle

import numpy as np

from ..devices import get_device
from ..nn.module import Module
from ..tensor import Tensor, from_numpy

__all__ = ["save", "load"]

_SAFE = {("collections", "OrderedDict")}    # what weights_only lets a file name


def save(obj, f):
    """Write ``obj`` (a state dict, or a nesting of containers of tensors) to ``f``, a path
    or a binary file. Tensors are saved as their values: they load as CPU tensors (a
    Variable as a plain tensor), with ``requires_grad`` as it was."""
    pickled = io.BytesIO()              # (pickled first: an error leaves no half-written file)
    _Pickler(pickled, pickle.HIGHEST_PROTOCOL).dump(obj)
    with _opened(f, "wb") as file:
        file.write(pickled.getvalue())


def load(f, map_location=None, *, weights_only=True):
    """Read what ``save`` wrote to ``f`` (a path or a binary file). ``map_location``: a
    device for the tensors (default: the CPU). ``weights_only=False`` also loads other
    pickled objects: only for files you trust (see the module docstring)."""
    device = get_device(map_location) if map_location is not None else None
    with _opened(f, "rb") as file:
        data = file.read()
    if not data.startswith(b"\x80"):        # how a pickle of protocol 2 or later starts
        zipped = " It is a zip archive, as PyTorch's torch.save writes: torch.load reads it." \
            if data.startswith(b"PK") else ""
        raise pickle.UnpicklingError(
            f"eg.load: {getattr(f, 'name', f)!s} was not written by eg.save.{zipped}")
    return _Unpickler(io.BytesIO(data), device, weights_only).load()


def _opened(f, mode):
    """``f`` itself if it is a file object, else the file at path ``f`` opened in ``mode``."""
    if hasattr(f, "read" if "r" in mode else "write"):
        return contextlib.nullcontext(f)
    return open(f, mode)


class _Pickler(pickle.Pickler):
    def persistent_id(self, obj):
        """How a tensor or numeric array is stored: ``(kind, bytes, dtype, shape, flag)``;
        None for everything else, which pickle stores as usual."""
        if isinstance(obj, Module):
            raise TypeError(
                f"eg.save: {type(obj).__name__} is a model; save its weights instead, "
                "eg.save(model.state_dict(), path), and load them into a new model of the same "
                "class with model.load_state_dict(eg.load(path)) (as PyTorch recommends).")
        if isinstance(obj, Tensor):
            if obj.graph is not None:
                raise TypeError(f"eg.save: {obj.name or 'a tensor'} belongs to a graph and has "
                                "no value to save; save what a Session run returns.")
            return ("tensor", *_raw(obj.numpy()), obj.requires_grad)
        if isinstance(obj, (np.ndarray, np.generic)) and obj.dtype.kind in "biufc":
            return ("array", *_raw(np.asarray(obj)), isinstance(obj, np.generic))
        return None


def _raw(array):
    return np.ascontiguousarray(array).tobytes(), array.dtype.str, array.shape


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, device, weights_only):
        super().__init__(file)
        self.device, self.weights_only = device, weights_only

    def persistent_load(self, pid):
        kind, data, dtype, shape, flag = pid
        array = np.frombuffer(data, dtype=dtype).reshape(shape).copy()  # (writable: a copy)
        if kind == "array":
            return array[()] if flag else array         # flag: a numpy scalar
        tensor = from_numpy(array)
        if self.device is not None:
            tensor = tensor.to(self.device)
        return tensor.requires_grad_(flag)

    def find_class(self, module, name):
        if self.weights_only and (module, name) not in _SAFE:
            raise pickle.UnpicklingError(
                f"eg.load: the file holds a {module}.{name}, and loading one runs code that "
                "the file chooses. With weights_only=True (the default) eg.load rebuilds only "
                "tensors, arrays, numbers, strings, lists, tuples and dicts. If you trust the "
                "file, load it with eg.load(f, weights_only=False).")
        return super().find_class(module, name)
