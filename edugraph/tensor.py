"""Tensor: an array on a device, plus the link to the op that made it (for backward).

An eager tensor holds its value. A tensor made by an op while gradients are recorded also keeps
``_op`` (what made it) and ``_inputs`` (from what): following these links backwards from a loss
gives the computational graph that ``backward()`` walks.
"""
import numbers
import warnings

import numpy as np

from . import devices as _device
from .context import note_in_place_change, state
from .errors import DeviceError, GradientError, ShapeError
from .missing import refuse_missing_attributes

float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
int8, int16, int32, int64 = (np.dtype(f"int{n}") for n in (8, 16, 32, 64))
uint8, bool_ = np.dtype("uint8"), np.dtype("bool")
float_ = float32


def as_dtype(dtype):
    """eg.float32, np.float32, 'float32', float, torch-style 'float' → a numpy dtype."""
    if dtype is float or (isinstance(dtype, str) and dtype == "float"):   # np.float64 == "float"
        return float32
    if dtype is int or (isinstance(dtype, str) and dtype == "int"):
        return int64
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"Unknown data type {dtype!r}. Use eg.float32, eg.float64, eg.int64, "
                        "eg.bool (or their names, e.g. 'float32').") from None


class _Size(int):
    """An element count that PyTorch code may call: ``x.size()`` is the shape, ``x.size(dim)``
    the size of one dimension."""

    def __new__(cls, count, shape):
        size = super().__new__(cls, count)
        size.shape = tuple(shape)
        return size

    def __call__(self, dim=None):
        if dim is None:
            return self.shape
        n = len(self.shape)
        if not -n <= dim < n:
            raise IndexError(f"size({dim}): a tensor of shape {self.shape} has dimensions "
                             f"{-n}..{n - 1}.")
        return self.shape[dim]


def _infer_dtype(data):
    """numpy data keeps its dtype; Python floats become float32 and ints int64 (like PyTorch).
    An array of objects or of complex numbers is checked as Python data is."""
    if hasattr(data, "dtype"):
        dtype = np.dtype(data.dtype)
        if dtype.kind not in "Oc":
            return dtype
    return {"f": float32, "i": int64, "u": int64, "b": bool_}[_numbers_kind(data)]


def tf_dtype(array):
    """The dtype TF gives Python data that numpy has read as ``array``: float32 for floats and
    int32 for whole numbers (numpy picks float64 and int64), int64 for whole numbers that do not
    fit in int32 (as TF: ``tf.constant(2**40)``; int32 would wrap them round)."""
    kind = array.dtype.kind
    if kind == "i":
        return int32 if array.size == 0 or (_INT32.min <= array.min() and
                                            array.max() <= _INT32.max) else int64
    return float32 if kind == "f" else array.dtype


_INT32 = np.iinfo(np.int32)


def _numbers_kind(data):
    """The numpy kind ('b', 'i', 'u' or 'f') of Python data (a number or nested lists), or a
    clear error for data that is not a rectangular block of real numbers: numpy would read
    ``[[1, 2], [3]]``, ``[1, None]`` or ``[2**70]`` as objects and ``["1"]`` as text, or fail
    deep inside."""
    try:
        array = np.asarray(data)
    except ValueError as e:
        raise _not_numbers(data, e) from e
    kind = array.dtype.kind
    if kind == "O":                     # numpy found no common type: look at the entries
        kind = _kind_of_objects(data, array)
    elif kind == "u" and array.max(initial=0) > _INT64_MAX:     # whole numbers from 2**63
        raise _too_large(data, int(array.max()))
    if kind == "c":
        raise TypeError(
            f"Cannot make a tensor from {_shown(data)}: it holds complex numbers, and "
            "edugraph's tensors hold real numbers (bool, int, float). Keep the real and "
            "imaginary parts as two tensors (z.real and z.imag).")
    if kind not in "biuf":
        raise _not_numbers(data, "numpy reads them as text")
    return kind


_INT64_MAX = int(np.iinfo(np.int64).max)


def _kind_of_objects(data, array):
    """The kind of entries numpy kept as objects: 'f' for whole numbers too large for int64
    beside floats (``[1.5, 2**70]``, as PyTorch reads it), 'c' for complex numbers; else the
    error naming the first entry that is no real number, or the whole number too large."""
    entries = list(np.ndenumerate(array))
    for index, entry in entries:
        if isinstance(entry, numbers.Complex) and not isinstance(entry, numbers.Real):
            return "c"
        if not isinstance(entry, (numbers.Real, np.bool_)):
            hint = "; None often marks a missing value: fill it in, e.g. with float('nan')" \
                if entry is None else ""
            where = f"at {index} " if array.ndim else ""
            raise _not_numbers(data, f"the entry {where}is {entry!r}, of type "
                                     f"{type(entry).__name__}{hint}")
    if any(isinstance(entry, (float, np.floating)) for _, entry in entries):
        return "f"
    raise _too_large(data, next(entry for _, entry in entries
                                if not -_INT64_MAX - 1 <= entry <= _INT64_MAX))


def _too_large(data, number):
    return ValueError(
        f"Cannot make a tensor from {_shown(data)}: {number} is outside the range of int64, "
        f"the dtype of whole numbers (-2**63 to 2**63 - 1 = {_INT64_MAX}). Write it as a float "
        "(2.0**70 rather than 2**70) for a float tensor.")


class Tensor:
    """A multi-dimensional array on a device that can record how it was computed."""

    # (_changed_at is set only when the values are overwritten in place, _previous only when
    # such a change is recorded, _freed only when a backward() walks the node: see autodiff.py;
    # _keras_logits only on the output of a Keras sigmoid or softmax: see layers/activations.py)
    __slots__ = ("_value", "device", "requires_grad", "_grad", "_op", "_inputs", "_seq",
                 "_retain", "name", "_changed_at", "_previous", "_freed", "_keras_logits",
                 "__weakref__")
    graph = None                    # eager tensors belong to no graph; symbolic ones set it
    # numpy_array * tensor → Tensor.__rmul__ (a tensor, recorded), never an object array;
    # numpy's own functions compute on the values (__array__, __array_function__)
    __array_priority__ = 1000

    def __init__(self, value, device=None, requires_grad=False, name=None):
        self._value = value
        if device is None:          # (ops always give a device: this is eg.Tensor(...) by hand)
            device = _default_device(value)
        self.device = device
        self.requires_grad = requires_grad
        self._grad = None
        self._op = self._inputs = None
        self._seq = 0
        self._retain = False
        self.name = name

    # ------------------------------------------------------------------ what it is
    @property
    def shape(self):
        try:
            return self._value.shape
        except AttributeError:      # (eg.Tensor(3, 4): no array inside)
            raise _made_by_hand(self._value, self.device) from None

    @property
    def dtype(self):
        return self._value.dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        """numpy's element count, ``x.size``; called, PyTorch's ``x.size()`` (the shape) and
        ``x.size(0)`` (one dimension: ``total += labels.size(0)``)."""
        return _Size(self._value.size, self._value.shape)

    @property
    def T(self):
        return _ops.shape.transpose(self)

    @property
    def grad_fn(self):
        """The op that made this tensor (None for leaves), as PyTorch calls it."""
        return self._op

    @property
    def is_leaf(self):
        return self._op is None

    def is_floating_point(self):
        return self.dtype.kind == "f"

    def dim(self):
        return self.ndim

    def numel(self):
        return self._value.size

    # ------------------------------------------------------------------ getting values out
    def numpy(self):
        """The value as a numpy array on the host (an explicit copy from a device)."""
        return self.device.get(self._value)

    def item(self):
        if self.size != 1:
            raise ValueError(f"item() needs a tensor with one element; this one has shape "
                             f"{self.shape}. Select an element first, e.g. t[0, 0].item().")
        return self.numpy().item()

    def tolist(self):
        return self.numpy().tolist()

    def __array__(self, dtype=None, copy=None):
        if self.device.kind != "cpu":
            raise TypeError(f"This tensor lives on {self.device.name}; numpy cannot read it "
                            "directly. Copy it to the host first with .numpy() or .cpu().")
        # (np.asarray: a 0-d result of numpy arithmetic is a numpy scalar, which numpy's
        # protocol refuses, "__array__ method not producing an array"). np.array(t) asks for
        # copy=True: without it, writing into the array would change the tensor.
        value = np.asarray(self._value, dtype)
        return value.copy() if copy and value is self._value else value

    def __array_function__(self, func, types, args, kwargs):
        """numpy's functions on tensors (``np.mean(t, axis=0)``, ``np.concatenate([a, b])``)
        compute on the values and give numpy results, as TF's tensors do: outside the tape,
        so no gradient flows back through them (a GradientTape gives None). Without this,
        numpy would call the tensor's own methods with numpy's keywords (``t.mean(axis=0,
        dtype=None, out=None)``), and those methods are PyTorch's."""
        if func in _SHAPE_QUERIES:      # (no values needed: a graph tensor has none yet)
            return func._implementation(*args, **kwargs)
        if _contains_tensor(kwargs.get("out")):
            raise TypeError(f"np.{func.__name__}(..., out=tensor): numpy cannot write into a "
                            "tensor (its tape would not know). Assign the result instead: "
                            f"t = eg.tensor(np.{func.__name__}(...)).")
        return func(*_host_arrays(args), **_host_arrays(kwargs))

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        if self.dtype.kind not in "iu":
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype}")
        return int(self.item())

    def __bool__(self):
        if self.size != 1:
            raise ValueError(f"The truth value of a tensor of shape {self.shape} is ambiguous. "
                             "Use eg.reduce_any(t) / t.any() or eg.reduce_all(t) / t.all().")
        return bool(self.item())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    __hash__ = object.__hash__

    def __format__(self, spec):
        """``f"Loss: {loss}"`` / ``f"{loss:.4f}"`` print a scalar's value, as in TF and PyTorch
        (their tutorials print running losses this way); other tensors print as ``str``.
        Without a spec, a float32 prints its own shortest digits (0.1), where TF and PyTorch
        print it as a Python float (0.10000000149011612): the number the student wrote."""
        if self.graph is None and not self.shape:
            value = self.numpy()[()]
            return format(value, spec) if spec else str(value)  # (float32's shortest digits)
        return super().__format__(spec)

    def __repr__(self):
        if not isinstance(self.device, _device.Device):         # (eg.Tensor(3, 4))
            raise _made_by_hand(self._value, self.device)
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        extras = []
        if self.device.kind != "cpu":
            extras.append(f"device='{self.device.name}'")
        if self.dtype != float32 or self.dtype.kind != "f":
            extras.append(f"dtype={self.dtype}")
        if self._op is not None:
            extras.append(f"grad_fn=<{type(self._op).__name__}Backward>")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    # ------------------------------------------------------------------ autodiff
    def backward(self, grad=None, retain_graph=None, create_graph=False, inputs=None, *,
                 gradient=None):
        """Accumulate d(self)/d(leaf) into ``leaf.grad`` for every leaf that requires grad
        (only into ``inputs`` when given). PyTorch's spelling works too:
        ``backward(gradient=...)``. As in PyTorch, a second ``backward()`` through the same
        graph is an error unless the first had ``retain_graph=True``."""
        _autodiff.backward(self, gradient if grad is None else grad, retain_graph=retain_graph,
                           create_graph=create_graph, inputs=inputs)

    def detach(self):
        """The same values, cut off from the graph: gradients stop here (in a graph, a
        ``stop_gradient`` node)."""
        return _ops.shape.stop_gradient(self)

    @property
    def data(self):
        """PyTorch's ``x.data`` (as in ``print(x.grad.data)``): the values, detached."""
        return self.detach()

    @data.setter
    def data(self, value):
        """``w.data -= lr * w.grad.data``: new values for this tensor, outside the graph. A
        tensor brings its device and dtype along (``w.data = w.data.to('cuda')``: how
        ``Module.to`` moves a model's variables, as in PyTorch)."""
        if isinstance(value, Tensor):
            device, value = value.device, value._value
        else:
            device, value = self.device, self.device.put(np.asarray(value, dtype=self.dtype))
        if value.shape != self.shape:
            raise ValueError(f"x.data = ... needs shape {self.shape}, got {value.shape}.")
        self._value, self.device = value, device
        note_in_place_change(self, array_written=False)

    # ------------------------------------------------------------------ in place (PyTorch)
    def _update(self, function, other, spelling, ufunc=None):
        """``x -= d`` and ``x.sub_(d)``: write ``function(x, d)`` into x's own array, so x stays
        the same tensor (a leaf keeps its ``.grad``; views and aliases see the change). As in
        PyTorch, a leaf that requires grad may only be changed under ``eg.no_grad()`` (the
        SGD step ``w -= lr * w.grad``); a change that gradients flow through (``out +=
        identity`` in a ResNet block) is recorded (``_record_change``). The result must keep
        x's shape and dtype. While a graph is built (or x is symbolic) ``x -= d`` makes a new
        node instead, as in TF."""
        if self.graph is not None or state.graph is not None:
            return function(self, other)
        if self._change_is_recorded(other, spelling):
            return self._record_change(lambda before: function(before, other), spelling)
        if ufunc is not None and self._writes_through(other):
            # (w -= lr * w.grad: numpy's in-place ufunc, as hand-written numpy does it. The
            # op would first make a full-size result to copy in: one more temporary at the
            # step's peak, when the gradients are all still alive)
            getattr(self.device.xp, ufunc)(self._value, other._value, out=self._value)
            note_in_place_change(self)
            return self
        result = function(self, other)
        self._check_keeps_layout(result, spelling)
        self._store(Ellipsis, result._value)
        return self

    def _writes_through(self, other):
        """Whether ``x -= other`` may write straight into x's array: other is an eager tensor
        of x's float dtype, device and shape (so nothing broadcasts or promotes, and the op's
        checks have nothing to say), and neither a numerics check nor placement logging is
        on (they watch every op)."""
        return (other.__class__ is Tensor and other.graph is None
                and other.device is self.device and other.shape == self.shape
                and other.dtype == self.dtype and self.dtype.kind == "f"
                and not isinstance(self._value, np.generic)
                and _ops.base.check_result is None and not self.device.log_placement)

    def _check_keeps_layout(self, result, spelling):
        if (result.shape, result.dtype) != (self.shape, self.dtype):
            raise ShapeError(
                f"{spelling} on a tensor of shape {self.shape} and dtype {self.dtype} gives "
                f"shape {result.shape} and dtype {result.dtype}: an in-place result must keep "
                "both. Write y = x - d for a new tensor (or cast d first).")

    def _change_is_recorded(self, value, spelling):
        """PyTorch's rules for changing values in place: never a leaf that requires grad while
        gradients are recorded (its gradient would belong to values it no longer has); a
        change that a gradient flows through (the tensor or the new values require grad) is
        recorded; any other change is just written."""
        if not state.grad_enabled:
            return False
        if self.requires_grad and self._op is None:
            raise GradientError(
                f"{spelling} would change a tensor of shape {self.shape} in place while "
                "gradients are being recorded, and it is a leaf tensor that requires grad: as "
                "in PyTorch, such a tensor cannot be changed in place outside eg.no_grad(). For "
                "an update step (w -= lr * w.grad, w.normal_(0, 0.01)) put it under `with "
                "eg.no_grad():`; to compute something new, make a new tensor (y = x - d)." +
                _tf_update_of(self, spelling))
        return self.requires_grad or getattr(value, "requires_grad", False)

    def _record_change(self, compute, spelling):
        """An in-place change that gradients flow through, as PyTorch records it: this tensor
        becomes the output of a new node, ``compute(before)``, where ``before`` is a new tensor
        that takes over the node this one was (its op, inputs and values). The recorded graph
        keeps the values each node used, so every gradient stays right: ops recorded earlier
        that used this tensor get ``before``'s (the engine looks it up, see autodiff.py).

        Unlike PyTorch, the new values are a new array: a view taken before the change (a
        slice, a reshape) keeps the old values."""
        before = Tensor(self._value, self.device, self.requires_grad, self.name)
        before._op, before._inputs, before._seq = self._op, self._inputs, self._seq
        before._changed_at = getattr(self, "_changed_at", 0)
        before._previous = getattr(self, "_previous", None)
        result = compute(before)
        self._check_keeps_layout(result, spelling)
        self._value, self._op, self._inputs, self._seq = \
            result._value, result._op, result._inputs, result._seq
        self.requires_grad, self._previous = result.requires_grad, before
        note_in_place_change(self, array_written=False)
        return self

    def _store(self, index, array):
        """Write ``array`` into ``self._value[index]`` and note the in-place change."""
        if isinstance(self._value, np.generic):     # a numpy scalar cannot be written into:
            value = np.array(self._value)           # a 0-d array with the new value replaces it
            value[index] = array
            self._value = value
            note_in_place_change(self, array_written=False)
        else:
            self._value[index] = array
            note_in_place_change(self)

    def __setitem__(self, index, value):
        """PyTorch's ``X[1, 2] = 17``, ``X[:2, :] = 12``, ``Z[:] = X + Y``, ``x[mask] = 0``:
        ``value`` (a number, a list or a tensor on x's device), cast to x's dtype and
        broadcast to the indexed part, is written into x's own array, so that views and
        aliases see the change. The rules of in-place changes apply (``_change_is_recorded``).
        A graph tensor cannot be changed (as in TF): there ``eg.where`` or ``v.assign``."""
        spelling = f"x[{_index_text(index)}] = ..."
        if self.graph is not None or state.graph is not None:
            raise TypeError(
                f"{spelling}: a tensor in a graph cannot be changed by indexing, as in "
                "TensorFlow: it has no values yet, only a recipe. Make a new tensor instead, "
                "e.g. eg.where(mask, value, x), or give a Variable new values with "
                "v.assign(...).")
        index = _ops.shape.device_index(index, self.device)
        if _ops.shape.torch_steps(index) is not None:
            raise IndexError(
                f"{spelling}: this index has an int and an index array with a slice between "
                "them, for which numpy and PyTorch place the picked part's dimensions "
                "differently (edugraph reads x[...] as PyTorch does, but writes through "
                "numpy), so the values' shape would be ambiguous. Write each int as a slice "
                "of length one (x[1:2, :, idx] instead of x[1, :, idx]) and give the values "
                "that dimension of size 1, or put the index array next to the int.")
        if self._change_is_recorded(value, spelling):
            self._record_change(lambda before: _ops.shape.index_put(before, index, value),
                                spelling)
            return
        array = self._values_to_store(value, spelling)
        try:
            self._store(index, array)
        except (ValueError, IndexError, TypeError) as e:
            raise ShapeError(self._store_failure(spelling, index, array, e)) from e

    def _values_to_store(self, value, spelling):
        """``value`` as an array on this tensor's device, in its dtype."""
        if not isinstance(value, Tensor):
            return tensor(value, dtype=self.dtype, device=self.device)._value
        if value.graph is not None:
            raise TypeError(f"{spelling}: {value.name} is a symbolic tensor (a graph's, with no "
                            "values yet); only values can be written into an eager tensor.")
        if value.device is not self.device:
            raise DeviceError(
                f"{spelling}: the values are on {value.device.name} and the tensor on "
                f"{self.device.name}. Copy them explicitly first, e.g. "
                f"value.to('{self.device.name}').")
        return value._value.astype(self.dtype, copy=False)

    def _store_failure(self, spelling, index, array, error):
        try:
            part = self._value[index].shape
        except (ValueError, IndexError, TypeError):
            return (f"{spelling}: indexing a tensor of shape {self.shape} this way failed "
                    f"({error}): indices must be integers, slices or booleans, within each "
                    "dimension's size (from -size to size - 1).")
        return (f"{spelling}: values of shape {tuple(array.shape)} cannot be written into the "
                f"part of shape {tuple(part)} that the index picks (of a tensor of shape "
                f"{self.shape}): they must broadcast to it (compared from the right, each size "
                "equal or 1). Reshape them, or pick a part of their shape.")

    # (the last argument: numpy's in-place ufunc for the same arithmetic, see _update)
    def __iadd__(self, other): return self._update(_ops.math.add, other, "x += ...", "add")
    def __isub__(self, other):
        return self._update(_ops.math.subtract, other, "x -= ...", "subtract")
    def __imul__(self, other):
        return self._update(_ops.math.multiply, other, "x *= ...", "multiply")
    def __itruediv__(self, other):
        return self._update(_ops.math.divide, other, "x /= ...", "true_divide")
    def add_(self, other): return self._update(_ops.math.add, other, "add_", "add")
    def sub_(self, other): return self._update(_ops.math.subtract, other, "sub_", "subtract")
    def mul_(self, other): return self._update(_ops.math.multiply, other, "mul_", "multiply")
    def div_(self, other): return self._update(_ops.math.divide, other, "div_", "true_divide")

    def copy_(self, src):
        """Overwrite the values with ``src``'s, in place (``w.copy_(w0)``; under
        ``eg.no_grad()`` for a tensor that requires grad): ``src`` is copied to this tensor's
        device, cast to its dtype and broadcast to its shape, as in PyTorch."""
        def copied(x, src):
            src = src.to(x.device) if isinstance(src, Tensor) else \
                _ops.base.as_tensors((src, x))[0]
            return _ops.shape.broadcast_to(_ops.math.cast(src, x.dtype), x.shape)
        return self._update(copied, src, "copy_")

    def zero_(self):
        """Set every element to 0 in place (``w.grad.zero_()``)."""
        return self._update(lambda x, _: _ops.random.zeros_like(x), None, "zero_")

    def fill_(self, value):
        """Set every element to ``value`` in place (``b.data.fill_(0)``)."""
        return self._update(lambda x, v: _ops.random.full_like(
            x, v.item() if isinstance(v, Tensor) else v), value, "fill_")

    def normal_(self, mean=0.0, std=1.0):
        """Overwrite with values from the normal distribution, in place (PyTorch's
        initialisers: ``net[0].weight.data.normal_(0, 0.01)``; ``.data`` shares the
        weight's memory, so the weight changes)."""
        return self._update(lambda x, _: _ops.random.randn_like(x) * std + mean, None,
                            "normal_")

    def uniform_(self, a=0.0, b=1.0):
        """Overwrite with values drawn uniformly from [a, b), in place."""
        return self._update(lambda x, _: _ops.random.rand_like(x) * (b - a) + a, None,
                            "uniform_")

    def requires_grad_(self, requires_grad=True):
        check_flag(requires_grad, "requires_grad", "requires_grad_()")
        if requires_grad and not self.is_floating_point():
            raise TypeError(f"Only floating-point tensors can require gradients; this one is "
                            f"{self.dtype}. Create it with dtype=eg.float32.")
        self.requires_grad = requires_grad
        return self

    def retain_grad(self):
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward (PyTorch)."""
        self._retain = True
        return self

    @property
    def grad(self):
        """The gradient ``backward()`` added up here: in leaves (the tensors you made, the
        parameters) and in tensors that ``retain_grad()``. Other tensors' ``.grad`` stays
        None, and reading it warns, as in PyTorch (``z = x * 2; ...; z.grad`` is a common
        surprise)."""
        if self._grad is None and self._op is not None and not self._retain:
            warnings.warn(
                "The .grad of a tensor that is not a leaf (it was computed by an op) is read, "
                "but backward() fills in only the leaves' .grad. Call .retain_grad() on it "
                "before backward() to keep its gradient too.", UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        self._grad = value

    def zero_grad(self):
        self._grad = None

    # ------------------------------------------------------------------ devices and dtypes
    def to(self, target=None, dtype=None, *, device=None):
        """A copy on another device (``'/gpu:0'``, ``'cpu'``...) or with another dtype; also
        PyTorch's ``x.to(device, dtype)``, ``x.to(device=d)`` and ``x.to(dtype=t)``."""
        result = self
        for spec in (target, device, dtype):
            if spec is not None:
                result = result._to_one(spec)
        return result

    def _to_one(self, target):
        device, dtype = device_or_dtype(target, "x.to")
        if device is not None:
            return _ops.shape.copy_to(self, device)
        return _ops.math.cast(self, dtype)

    def cpu(self):
        return self.to("cpu:0")

    def cuda(self, index=0):
        return self.to(f"gpu:{index}")

    def float(self):
        return _ops.math.cast(self, float32)

    def double(self):
        return _ops.math.cast(self, float64)

    def long(self):
        return _ops.math.cast(self, int64)

    def int(self):
        return _ops.math.cast(self, int32)

    def bool(self):
        return _ops.math.cast(self, bool_)

    def type(self, dtype):
        """PyTorch's ``x.type(eg.float)``: the values converted to ``dtype`` (a cast)."""
        return _ops.math.cast(self, dtype)

    # ------------------------------------------------------------------ operators
    def __add__(self, other): return _ops.math.add(self, other)
    def __radd__(self, other): return _ops.math.add(other, self)
    def __sub__(self, other): return _ops.math.subtract(self, other)
    def __rsub__(self, other): return _ops.math.subtract(other, self)
    def __mul__(self, other): return _ops.math.multiply(self, other)
    def __rmul__(self, other): return _ops.math.multiply(other, self)
    def __truediv__(self, other): return _ops.math.divide(self, other)
    def __rtruediv__(self, other): return _ops.math.divide(other, self)
    def __pow__(self, other): return _ops.math.pow(self, other)
    def __rpow__(self, other): return _ops.math.pow(other, self)
    def __floordiv__(self, other): return _ops.math.floordiv(self, other)
    def __rfloordiv__(self, other): return _ops.math.floordiv(other, self)
    def __mod__(self, other): return _ops.math.floormod(self, other)
    def __rmod__(self, other): return _ops.math.floormod(other, self)
    def __matmul__(self, other): return _ops.linalg.matmul(self, other)
    def __rmatmul__(self, other): return _ops.linalg.matmul(other, self)
    def __neg__(self): return _ops.math.negative(self)
    def __pos__(self): return self
    def __abs__(self): return _ops.math.abs(self)
    def __lt__(self, other): return _ops.math.less(self, other)
    def __le__(self, other): return _ops.math.less_equal(self, other)
    def __gt__(self, other): return _ops.math.greater(self, other)
    def __ge__(self, other): return _ops.math.greater_equal(self, other)
    def __eq__(self, other): return _ops.math.equal(self, other)
    def __ne__(self, other): return _ops.math.not_equal(self, other)
    def __and__(self, other): return _ops.math.logical_and(self, other)
    def __rand__(self, other): return _ops.math.logical_and(other, self)
    def __or__(self, other): return _ops.math.logical_or(self, other)
    def __ror__(self, other): return _ops.math.logical_or(other, self)
    def __invert__(self): return _ops.math.logical_not(self)
    def __getitem__(self, index): return _ops.shape.getitem(self, index)

    # ------------------------------------------------------------------ methods (PyTorch names)
    def add(self, other): return _ops.math.add(self, other)
    def sub(self, other): return _ops.math.subtract(self, other)
    def mul(self, other): return _ops.math.multiply(self, other)
    def div(self, other): return _ops.math.divide(self, other)
    def neg(self): return _ops.math.negative(self)
    subtract, multiply, divide, negative = sub, mul, div, neg
    def where(self, condition, other): return _ops.math.where(condition, self, other)
    def pow(self, exponent): return _ops.math.pow(self, exponent)
    def floor_divide(self, other): return _ops.math.floordiv(self, other)
    def remainder(self, other): return _ops.math.floormod(self, other)
    def square(self): return _ops.math.square(self)
    def sqrt(self): return _ops.math.sqrt(self)
    def exp(self): return _ops.math.exp(self)
    def log(self): return _ops.math.log(self)
    def sin(self): return _ops.math.sin(self)
    def cos(self): return _ops.math.cos(self)
    def abs(self): return _ops.math.abs(self)
    def maximum(self, other): return _ops.math.maximum(self, other)
    def minimum(self, other): return _ops.math.minimum(self, other)
    def clip(self, min=None, max=None): return _ops.math.clip(self, min, max)
    clamp = clip
    def matmul(self, other): return _ops.linalg.matmul(self, other)
    def mm(self, other): return _ops.linalg.mm(self, other)
    def bmm(self, other): return _ops.linalg.bmm(self, other)
    def mv(self, vector): return _ops.linalg.mv(self, vector)
    def dot(self, other): return _ops.linalg.dot(self, other)
    def outer(self, other): return _ops.linalg.outer(self, other)
    def clone(self): return _ops.shape.clone(self)
    def sign(self): return _ops.math.sign(self)
    eq, ne, gt, ge, lt, le = __eq__, __ne__, __gt__, __ge__, __lt__, __le__
    def masked_fill(self, mask, value): return _ops.math.where(mask, value, self)
    def relu(self): return _ops.activation.relu(self)
    def sigmoid(self): return _ops.activation.sigmoid(self)
    def tanh(self): return _ops.activation.tanh(self)
    def softmax(self, dim=-1): return _ops.activation.softmax(self, dim)
    def log_softmax(self, dim=-1): return _ops.activation.log_softmax(self, dim)
    def logsumexp(self, dim=None, keepdim=False):
        return _ops.reduce.logsumexp(self, dim, keepdim)

    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return _ops.reduce.reduce_sum(self, _pick(dim, axis), _pick(keepdim, keepdims))

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return _ops.reduce.reduce_mean(self, _pick(dim, axis), _pick(keepdim, keepdims))

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """PyTorch's ``x.var``: the sample variance (n − 1) unless ``unbiased=False``."""
        return _ops.reduce.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        """PyTorch's ``x.std``: the sample standard deviation unless ``unbiased=False``."""
        return _ops.reduce.std(self, dim, unbiased, keepdim, correction=correction)

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """PyTorch's ``x.max(dim)``: ``(values, indices)`` along ``dim``. ``axis=`` is
        PyTorch's alias of ``dim`` (so the pair too, not numpy's values: ``x.amax(axis)``
        gives those)."""
        return _ops.reduce.torch_max(self, _pick(dim, axis), _pick(keepdim, keepdims))

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return _ops.reduce.torch_min(self, _pick(dim, axis), _pick(keepdim, keepdims))

    def amax(self, dim=None, keepdim=False):
        return _ops.reduce.reduce_max(self, dim, keepdim)

    def amin(self, dim=None, keepdim=False):
        return _ops.reduce.reduce_min(self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """PyTorch's ``x.argmax(dim)``; numpy's ``x.argmax(axis=1)`` (d2l's accuracy)."""
        return _ops.reduce.argmax(self, _pick(dim, axis), keepdims=_pick(keepdim, keepdims))

    def argmin(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return _ops.reduce.argmin(self, _pick(dim, axis), keepdims=_pick(keepdim, keepdims))

    def cumsum(self, dim=None, *, axis=None):
        """PyTorch's ``x.cumsum(dim)`` (also ``axis=``): running totals along ``dim``."""
        return _ops.reduce.cumsum(self, _pick(dim, axis))

    def norm(self, p="fro", dim=None, keepdim=False):
        """PyTorch's ``x.norm(p, dim, keepdim)``: the Euclidean norm by default, over all
        values (as one vector), or along ``dim``; also ``p=1`` and ``p=float('inf')``."""
        return _ops.reduce.vector_norm(self, p, dim, keepdim)

    def any(self, dim=None): return _ops.reduce.reduce_any(self, dim)
    def all(self, dim=None): return _ops.reduce.reduce_all(self, dim)

    def reshape(self, *shape):
        return _ops.shape.reshape(self, _sizes(shape))

    def view(self, *shape):
        """PyTorch's ``x.view(n, -1)``: a reshape. (``x.view(dtype)``, PyTorch's reading of
        the same bytes as another dtype, is left out: its error says how to convert.)"""
        if len(shape) == 1 and _is_dtype(shape[0]):
            raise TypeError(
                f"x.view(eg.{np.dtype(shape[0]).name}): in PyTorch that reads x's bytes as another dtype (a "
                "reinterpretation of the bits, not a conversion); edugraph leaves it out. "
                "To convert the values write x.to(dtype) (or x.int(), x.float()); for the "
                "bits themselves, x.numpy().view(dtype).")
        return _ops.shape.reshape(self, _sizes(shape))

    def view_as(self, other):
        return _ops.shape.reshape_like(self, other)

    def transpose(self, dim0=-2, dim1=-1):
        """Swap two dimensions (PyTorch's meaning; ``eg.transpose(x, perm)`` is TF's)."""
        n = self.ndim
        if not all(isinstance(d, (int, np.integer)) and -n <= d < n for d in (dim0, dim1)):
            raise ShapeError(f"transpose({dim0}, {dim1}) swaps two dimensions, but a tensor of "
                             f"shape {tuple(self.shape)} has dimensions {-n}..{n - 1}.")
        perm = list(range(n))
        perm[dim0], perm[dim1] = perm[dim1], perm[dim0]
        return _ops.shape.transpose(self, perm)

    def t(self):
        """PyTorch's transpose of a matrix (a vector stays as it is)."""
        if self.ndim > 2:
            raise ShapeError(f"t() transposes a matrix, but this tensor has shape "
                             f"{tuple(self.shape)}; use x.transpose(dim0, dim1) or x.permute.")
        return _ops.shape.transpose(self) if self.ndim == 2 else self

    def permute(self, *dims):
        return _ops.shape.transpose(self, _sizes(dims))

    def expand(self, *shape):
        """PyTorch's ``x.expand(3, -1)``: x broadcast to ``shape``, where -1 keeps x's size
        in that dimension (dimensions line up from the right, as in broadcasting)."""
        sizes = list(_sizes(shape))
        lead = len(sizes) - self.ndim
        for i, size in enumerate(sizes):
            if size == -1 and i >= lead and self.shape[i - lead] is not None:
                sizes[i] = self.shape[i - lead]
        return _ops.shape.broadcast_to(self, tuple(sizes))

    def broadcast_to(self, shape): return _ops.shape.broadcast_to(self, shape)
    def expand_as(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"expand_as needs a tensor whose shape to take, got "
                            f"{type(other).__name__}; for a shape use expand(*sizes).")
        return _ops.base.broadcast_like(self, other)    # (other's shape may be known only
                                                        # when a graph runs)

    def index_select(self, dim, index):
        """The entries at ``index`` along ``dim`` (``eg.gather(x, index, axis=dim)``)."""
        return _ops.shape.gather(self, index, axis=dim)

    def unsqueeze(self, dim): return _ops.shape.expand_dims(self, dim)
    def squeeze(self, dim=None): return _ops.shape.squeeze(self, dim)
    def flatten(self, start_dim=0, end_dim=-1):
        return _ops.shape.flatten(self, start_dim, end_dim)

    # PyTorch's order and pick methods (edugraph/ops/shape.py)
    def flip(self, *dims): return _ops.shape.flip(self, _sizes(dims))
    def roll(self, shifts, dims=None): return _ops.shape.roll(self, shifts, dims)
    def tril(self, diagonal=0): return _ops.shape.tril(self, diagonal)
    def triu(self, diagonal=0): return _ops.shape.triu(self, diagonal)
    def diag(self, diagonal=0): return _ops.shape.diag(self, diagonal)
    def diagonal(self, offset=0, dim1=0, dim2=1):
        return _ops.shape.diagonal(self, offset, dim1, dim2)

    def repeat(self, *sizes):
        """PyTorch's ``x.repeat(2, 3)``: x tiled, one count per dimension (``eg.tile``)."""
        sizes = _sizes(sizes)
        if len(sizes) < self.ndim:
            raise ShapeError(f"repeat{sizes}: give a count for each of the {self.ndim} "
                             f"dimensions of a tensor of shape {tuple(self.shape)} (more add "
                             "dimensions in front); to repeat each element in place, use "
                             "x.repeat_interleave(n, dim).")
        return _ops.shape.tile(self, sizes)

    def tile(self, *dims): return _ops.shape.tile(self, _sizes(dims))
    def repeat_interleave(self, repeats, dim=None, *, output_size=None):
        return _ops.shape.repeat_interleave(self, repeats, dim, output_size=output_size)

    def sort(self, dim=-1, descending=False, *, stable=False):
        return _ops.shape.sort(self, dim, descending)

    def argsort(self, dim=-1, descending=False, *, stable=False):
        return _ops.shape.argsort(self, dim, descending)

    def topk(self, k, dim=-1, largest=True, sorted=True):
        return _ops.shape.topk(self, k, dim, largest, sorted)

    def gather(self, dim, index): return _ops.shape.gather_along_dim(self, dim, index)
    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return _ops.shape.scatter(self, dim, index, src, value=value, reduce=reduce)

    def scatter_add(self, dim, index, src): return _ops.shape.scatter_add(self, dim, index, src)
    def masked_select(self, mask): return _ops.shape.masked_select(self, mask)


def _tf_update_of(tensor, spelling):
    """For ``w -= lr * g`` on an ``eg.Variable`` (TF code, where no tape is open: eager mode
    records every op anyway), TF's spelling of the update."""
    if not hasattr(tensor, "assign_sub") or spelling not in ("x -= ...", "x += ..."):
        return ""
    update = "assign_sub" if "-" in spelling else "assign_add"
    return f" For an eg.Variable in TF's style, the update is w.{update}(lr * g)."


def is_array(value):
    """Whether ``value`` is an array (numpy's or CuPy's, or a numpy scalar): what a tensor
    holds, where a tensor itself, a list or a number is not."""
    return not isinstance(value, Tensor) and hasattr(value, "dtype")


def _default_device(value):
    """The CPU, for an array made into a tensor without naming a device (a data pipeline's);
    anything else is PyTorch's ``torch.Tensor(data)`` written with edugraph's class."""
    if not is_array(value):
        raise _made_by_hand(value)
    return _device.cpu


def _made_by_hand(*args):
    """The error for ``eg.Tensor([1., 2.])`` or ``eg.Tensor(3, 4)``: PyTorch's constructor."""
    written = ", ".join(map(_shown, args))
    if all(isinstance(a, numbers.Integral) for a in args):
        fix = (f"eg.zeros({written}) for a tensor of that shape (torch.Tensor({written})'s), or "
               f"eg.tensor([{written}], dtype=eg.float32) for these numbers")
    else:
        fix = (f"eg.tensor({written}, dtype=eg.float32) (float32, as torch.Tensor(data) "
               "gives)")
    return TypeError(f"eg.Tensor({written}): eg.Tensor is the class; make tensors with {fix}.")


def device_or_dtype(target, where):
    """``(device, None)`` or ``(None, dtype)``: what ``x.to(target)`` and ``model.to(target)``
    were asked for."""
    if _device.is_device_spec(target):
        return _device.get_device(target), None
    try:
        return None, as_dtype(target)
    except TypeError:
        raise TypeError(f"{where}({target!r}): that is neither a device ('/cpu:0', '/gpu:0', "
                        "'cuda', 'sim') nor a data type (eg.float32, 'float64', "
                        "eg.int64...).") from None


def _is_dtype(value):
    """A dtype (eg.int32) or a numpy scalar type (np.int32), not a size."""
    return isinstance(value, np.dtype) or \
        (isinstance(value, type) and issubclass(value, np.generic))


def _sizes(args):
    """``t.reshape(2, 3)``, ``t.reshape((2, 3))`` and ``t.reshape(6)`` all work, as in PyTorch
    (a list is the shape, also one holding graph tensors: ``x.reshape([eg.shape(x)[0], 3])``)."""
    if len(args) == 1 and (args[0].__class__ in (list, tuple) or np.ndim(args[0]) == 1):
        return args[0]
    return args


def _index_text(index):
    """An index as written between brackets, for messages: ``(slice(None, 2), 1)`` → ``:2, 1``."""
    parts = index if isinstance(index, tuple) else (index,)
    return ", ".join(_index_part_text(part) for part in parts)


def _index_part_text(part):
    if isinstance(part, slice):
        bounds = ["" if b is None else str(b) for b in (part.start, part.stop, part.step)]
        return ":".join(bounds if part.step is not None else bounds[:2])
    if part is Ellipsis:
        return "..."
    if hasattr(part, "shape") and part.shape:   # a tensor, array or mask: shown by its shape
        return f"<{part.dtype} indices of shape {tuple(part.shape)}>"
    return repr(part)


def _pick(torch_style, tf_style):
    return torch_style if tf_style is None else tf_style


_SHAPE_QUERIES = {np.shape, np.ndim, np.size}


def _host_arrays(value):
    """numpy's arguments with each tensor (also inside lists, tuples, dicts) as its array."""
    if isinstance(value, Tensor):
        return value.__array__()
    if isinstance(value, (list, tuple)):
        return type(value)(map(_host_arrays, value)) if type(value) in (list, tuple) else value
    if isinstance(value, dict):
        return {key: _host_arrays(item) for key, item in value.items()}
    return value


def _contains_tensor(value):
    return isinstance(value, Tensor) or \
        isinstance(value, tuple) and any(isinstance(item, Tensor) for item in value)


def tensor(data, dtype=None, device=None, requires_grad=False, name=None):
    """Make a tensor from data (lists, numbers, numpy arrays, tensors) on a device.

    >>> x = eg.tensor([[1., 2.], [3., 4.]], requires_grad=True)

    While a graph is being built, ``eg.constant(...)`` (= ``eg.tensor``) adds a Const node.
    """
    if state.graph is not None:
        from .graph.core import constant
        return constant(data, dtype, name=name)
    check_flag(requires_grad, "requires_grad", "eg.tensor()")
    if device is not None:
        dev = _device.get_device(device)
    else:               # a tensor's copy stays on its device, as in PyTorch (Variable(t) too)
        dev = data.device if isinstance(data, Tensor) else _device.current_device()
    if isinstance(data, Tensor):
        host = data.numpy()
    elif isinstance(data, _device.SimArray) or type(data).__module__.startswith("cupy"):
        host = data.get()
    else:
        host = data
    # inferred (and so checked) even when a dtype is given: None and "1" would become nan, 1.0
    inferred = _infer_dtype(host)
    dtype = as_dtype(dtype) if dtype is not None else inferred
    try:
        host = np.array(host, dtype=dtype)      # always a copy: the tensor owns its values
    except (ValueError, TypeError) as e:        # (text in a numpy array, to a number dtype)
        raise _not_numbers(data, e) from e
    return Tensor(dev.put(host), dev).requires_grad_(requires_grad)


def check_flag(value, argument, where):
    """Refuse a flag that is not a bool: ``requires_grad='no'`` is a non-empty string, which
    Python counts as true (PyTorch refuses it too)."""
    if value is not True and value is not False and not isinstance(value, np.bool_):
        raise TypeError(f"{where}: argument '{argument}' must be bool (True or False), not "
                        f"{type(value).__name__} {value!r}.")


def from_numpy(array):
    """PyTorch's ``torch.from_numpy``: a CPU tensor that *shares* ``array``'s memory (a change
    to one shows in the other); ``eg.tensor`` copies."""
    if not isinstance(array, np.ndarray) or array.dtype.kind not in "biuf":
        raise TypeError(f"from_numpy needs a numeric numpy array, got {type(array).__name__}"
                        + (f" of dtype {array.dtype}" if hasattr(array, "dtype") else "") +
                        ". Use eg.tensor(data) for lists and numbers.")
    return Tensor(array, _device.cpu)


def _shown(data):
    shown = repr(data)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _not_numbers(data, error):
    """The error for data that is not a rectangular block of numbers."""
    shown = _shown(data)
    if "inhomogeneous" in str(error):
        return ValueError(
            f"Cannot make a tensor from {shown}: its nested lists have different "
            "lengths, and a tensor is rectangular (every row the same length). Pad the short "
            "rows, or make one tensor per row.")
    return TypeError(f"Cannot make a tensor from {shown}: its entries are not all "
                     f"numbers ({error}). Use numbers (bool, int, float) in nested lists, or a "
                     "numeric numpy array.")


def constant_like(value, ref):
    """A Python number or array used next to tensor ``ref``: same device, fitting dtype.

    Numbers and lists of numbers adapt to the tensor (``x * 2`` stays float32, ``x64 * [1., 2.]``
    float64), as in TF; a float next to an integer tensor makes a float32 constant. numpy arrays
    keep their own dtype.
    """
    if ref is None:
        return tensor(value)
    kind = _number_kind(value)
    if kind is not None and ref.graph is None:  # a number (x * 2): the common case, cached
        return _number_tensor(value, kind, ref)
    dtype = dtype_next_to(value, ref)
    if dtype is None:
        return tensor(value, device=ref.device)
    return Tensor(ref.device.put(np.array(value, dtype)), ref.device)


def dtype_next_to(value, ref):
    """The dtype a Python number or list of numbers takes next to tensor ``ref`` (eagerly and
    in graphs alike); None for anything else, such as a numpy array, which keeps its own."""
    kind = _number_kind(value)
    if kind is None and isinstance(value, (list, tuple)):
        kind = _numbers_kind(value)
    return _dtype_for_kind(kind, ref.dtype) if kind in _DEFAULT_DTYPE else None


def _dtype_for_kind(kind, ref_dtype):
    """ref's dtype where it absorbs a Python value of this kind, else the kind's default."""
    return ref_dtype if kind in _WIDENS[ref_dtype.kind] else _DEFAULT_DTYPE[kind]


def _number_tensor(value, kind, ref):
    """Number ``value`` (of Python kind ``kind``) as a constant tensor next to ``ref``, made
    once per (value, kind, dtype, device): ``y + 1.0`` in a loop then costs a dictionary
    look-up, not a new array (or a copy to the GPU) and a new Tensor per call. On the host
    the value is a numpy scalar, which numpy combines with other scalars ~10x faster than
    with 0-d arrays (and which nobody can change in place); the tensor never requires a
    gradient, so sharing it is safe. Zeros are not kept: 0.0 == -0.0 as keys, yet
    1 / -0.0 = -inf."""
    value_dtype, device = ref._value.dtype, ref.device
    key = (value, kind, value_dtype, device)
    constant = _NUMBER_TENSORS.get(key)
    if constant is None:
        dtype = _dtype_for_kind(kind, value_dtype)
        constant = Tensor(device.put(dtype.type(value)), device)
        if value == 0:
            return constant
        if len(_NUMBER_TENSORS) >= 1024:
            _NUMBER_TENSORS.clear()
        _NUMBER_TENSORS[key] = constant
    return constant


_NUMBER_TENSORS = {}


_PYTHON_SCALARS = {bool: "b", int: "i", float: "f"}


def _number_kind(value):
    """'b', 'i' or 'f' for a Python number, else None. numpy's float64 is a Python float
    (``x / np.sqrt(d_k)``): it adapts to the tensor as 2.0 does, as in PyTorch."""
    kind = _PYTHON_SCALARS.get(type(value))
    if kind is None and isinstance(value, float):
        return "f"
    return kind


_DEFAULT_DTYPE = {"b": bool_, "i": int64, "f": float32}
_WIDENS = {"f": "bif", "i": "bi", "u": "bi", "b": "b", "c": "bif"}   # scalar kinds a dtype absorbs


from . import autodiff as _autodiff, ops as _ops  # noqa: E402  (they import Tensor: bind late)

refuse_missing_attributes(Tensor)     # x.copy() and other names from PyTorch/numpy: advice
