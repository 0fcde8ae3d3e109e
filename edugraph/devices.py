"""Devices: where a tensor's numbers live and which array module computes on them.

``cpu:0`` computes with numpy, ``gpu:0`` with CuPy. Ops never ask which device they run on:
they receive ``xp`` (numpy or cupy) and call ``xp.exp``, ``xp.matmul``... (chainer's idea).

``sim:0`` is a stand-in accelerator for machines without a GPU. Its arrays live "elsewhere" the
way CuPy's do: numpy refuses to convert them silently and refuses to mix them with host arrays.
A test suite that passes on ``sim:0`` has no hidden host/device copies, so CPU-only CI exercises
the same code paths a GPU run takes.
"""
import re
import threading

import numpy as np

from . import context
from .errors import DeviceError


class Device:
    """A place where arrays live, with the array module (``xp``) that computes there."""

    log_placement = False           # eg.log_device_placement(): for every device at once (a
                                    # class attribute: every eager op reads it, cheaply)

    def __init__(self, kind, index, xp, to_device, to_host):
        self.kind, self.index, self.xp = kind, index, xp
        self._to_device, self._to_host = to_device, to_host

    @property
    def name(self):
        return f"{self.kind}:{self.index}"

    @property
    def type(self):
        """PyTorch's name for the kind, ``'cpu'`` or ``'cuda'`` (a GPU): ``if
        x.device.type == 'cuda':`` in PyTorch code works as written."""
        return "cuda" if self.kind == "gpu" else self.kind

    @property
    def full_name(self):
        """TensorFlow's spelling, ``/job:localhost/replica:0/task:0/device:GPU:0``."""
        return f"/job:localhost/replica:0/task:0/device:{self.kind.upper()}:{self.index}"

    def endswith(self, suffix):
        """TF code tests a tensor's device as a string: ``x.device.endswith('GPU:0')``."""
        return self.full_name.endswith(suffix)

    def put(self, array):
        """Copy a host (numpy) array onto this device."""
        return self._to_device(array)

    def get(self, array):
        """Copy an array of this device back to the host as a numpy array."""
        return self._to_host(array)

    def __repr__(self):
        return f"device(type='{self.kind}', index={self.index})"

    def __str__(self):
        return self.name

    def __reduce__(self):
        """Copies and pickles of a tensor refer to the same device, by name (the array module
        it holds cannot be copied): ``copy.deepcopy(model.state_dict())`` works."""
        return get_device, (self.name,)


# --------------------------------------------------------------------------- the stand-in device
class SimArray(np.lib.mixins.NDArrayOperatorsMixin):
    """An array on the simulated accelerator: behaves like a CuPy array.

    Arithmetic with other SimArrays works; implicit conversion to numpy (``np.asarray``) and
    mixing with host ndarrays raise ``TypeError``, exactly as CuPy does.
    """

    __slots__ = ("_data",)
    __array_priority__ = 100

    def __init__(self, data):
        self._data = data

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed on device 'sim:0'. "
                        "Copy explicitly with .numpy() / .cpu() (CuPy: .get()).")

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if "out" in kwargs:
            kwargs["out"] = tuple(_sim_unwrap(o) for o in kwargs["out"])
        result = getattr(ufunc, method)(*(_sim_unwrap(i) for i in inputs), **kwargs)
        return _sim_wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        return _sim_wrap(func(*_sim_unwrap(args), **_sim_unwrap(kwargs)))

    def get(self):
        return self._data.copy()

    def __getattr__(self, name):           # shape, dtype, ndim, T, reshape, sum, astype, ...
        if name.startswith("__array"):      # numpy's array interface would read device memory
            raise AttributeError(name)
        attr = getattr(self._data, name)
        if callable(attr):
            return lambda *a, **k: _sim_wrap(attr(*_sim_unwrap(a), **_sim_unwrap(k)))
        return _sim_wrap(attr)

    def __getitem__(self, index):
        return _sim_wrap(self._data[_sim_unwrap(index)])

    def __setitem__(self, index, value):
        self._data[_sim_unwrap(index)] = _sim_unwrap(value)

    def __len__(self):
        return len(self._data)

    def __float__(self):
        return float(self._data)

    def __int__(self):
        return int(self._data)

    def __bool__(self):
        return bool(self._data)

    def __repr__(self):
        return f"sim_array({self._data!r})"


def _sim_unwrap(x):
    if isinstance(x, SimArray):
        return x._data
    if isinstance(x, np.ndarray) and x.ndim > 0:
        raise TypeError(f"Unsupported type {type(x).__name__}: a host array of shape {x.shape} "
                        "was mixed with arrays on device 'sim:0'. Copy it to the device first.")
    if isinstance(x, (list, tuple)):
        return type(x)(_sim_unwrap(i) for i in x)
    if isinstance(x, dict):
        return {k: _sim_unwrap(v) for k, v in x.items()}
    return x


def _sim_wrap(x):
    if isinstance(x, np.ndarray):
        return SimArray(x)
    if isinstance(x, np.generic):           # numpy gives scalars for 0-d maths; CuPy 0-d arrays
        return SimArray(np.asarray(x))
    if isinstance(x, tuple):
        return tuple(_sim_wrap(i) for i in x)
    if isinstance(x, list):
        return [_sim_wrap(i) for i in x]
    return x


class _SimModule:
    """The array module of ``sim:0``: numpy's functions, with arrays kept on the device."""

    def __init__(self):
        self.random = _SimRandom()

    def __getattr__(self, name):
        attr = getattr(np, name)
        if isinstance(attr, np.ufunc):
            return _SimUfunc(attr)
        if callable(attr) and not isinstance(attr, type):
            return lambda *a, **k: _sim_wrap(attr(*_sim_unwrap(a), **_sim_unwrap(k)))
        return attr

    def asarray(self, x, dtype=None):
        if isinstance(x, SimArray):
            return x if dtype is None else x.astype(dtype)
        if isinstance(x, np.ndarray) and x.ndim > 0:
            raise TypeError("sim:0 refuses a host ndarray here; use device.put(array) "
                            "to copy it explicitly (as cupy.asarray does).")
        return SimArray(np.asarray(x, dtype=dtype))

    array = asarray

    @staticmethod
    def get_array_module(*_):
        return sim_xp


class _SimUfunc:
    """A numpy ufunc on sim:0 arrays, with its methods (``xp.add.at``...) as CuPy's ufuncs have."""

    def __init__(self, ufunc):
        self._ufunc = ufunc

    def __call__(self, *args, **kwargs):
        return _sim_wrap(self._ufunc(*_sim_unwrap(args), **_sim_unwrap(kwargs)))

    def __getattr__(self, name):
        attr = getattr(self._ufunc, name)
        if callable(attr):
            return lambda *a, **k: _sim_wrap(attr(*_sim_unwrap(a), **_sim_unwrap(k)))
        return attr


class _SimRandom:
    def default_rng(self, seed=None):
        rng = np.random.default_rng(seed)

        class _Gen:
            def __getattr__(self, name):
                f = getattr(rng, name)
                return lambda *a, **k: _sim_wrap(np.asarray(f(*a, **k)))
        return _Gen()


sim_xp = _SimModule()


# --------------------------------------------------------------------------- the registry
def _cupy(index=0):
    """Import CuPy and check for a CUDA device; say exactly what is missing otherwise."""
    try:
        import cupy
    except ImportError as e:
        raise DeviceError(
            f"Device 'gpu:{index}' needs CuPy, which is not installed. Install the wheel for "
            "your CUDA version: pip install 'edugraph[gpu-cuda12]' (or [gpu-cuda13]). To run on "
            "the CPU instead, use eg.device('/cpu:0') or drop the device scope.") from e
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:                         # CUDA driver missing or broken
        raise DeviceError(f"CuPy is installed but no CUDA device is usable ({e}). "
                          "Run on the CPU with eg.device('/cpu:0').") from e
    if count == 0:
        raise DeviceError("CuPy is installed but this machine has no CUDA device. "
                          "Run on the CPU with eg.device('/cpu:0').")
    return cupy


_devices = {}


def _make(kind, index):
    if kind == "cpu":
        return Device("cpu", index, np, lambda a: a, lambda a: a)
    if kind == "sim":
        return Device("sim", index, sim_xp, SimArray, lambda a: a._data.copy())
    cupy = _cupy(index)
    if index >= cupy.cuda.runtime.getDeviceCount():
        raise DeviceError(f"No CUDA device gpu:{index}; this machine has "
                          f"{cupy.cuda.runtime.getDeviceCount()}.")

    def put(a):
        with cupy.cuda.Device(index):
            return cupy.asarray(a)
    return Device("gpu", index, cupy, put, cupy.asnumpy)


_ALIASES = {"cpu": "cpu", "gpu": "gpu", "cuda": "gpu", "sim": "sim"}
_SPEC = re.compile(r"^/?(?:(?:job:\w+/)?(?:replica:\d+/)?(?:task:\d+/)?device:)?"
                   r"(?P<kind>[a-zA-Z]+)(?::(?P<index>\d+))?$")


def _parse(spec):
    """(kind, index) of a device name; unknown names raise."""
    m = _SPEC.match(str(spec).strip())
    kind = m and _ALIASES.get(m["kind"].lower())
    if kind is None:
        raise DeviceError(f"Unknown device {spec!r}. Use '/cpu:0', '/gpu:0' (also 'cuda', 'gpu') "
                          "or '/sim:0' (the stand-in accelerator).")
    return kind, int(m["index"] or 0)


class Placement:
    """What ``eg.device(spec)`` returns: a ``with`` scope for ``device``, or the device itself
    wherever one is asked for."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        if isinstance(self.device, MissingDevice) and \
                not getattr(context.state.graph, "places_when_run", False):
            self.device._refuse()
        _scope.stack.append(self.device)
        return self.device

    def __exit__(self, *exc):
        _scope.stack.pop()

    @property
    def type(self):
        """PyTorch's name for the kind: ``'cpu'``, ``'cuda'``... (``Device.type``)."""
        return self.device.type

    def __str__(self):
        return self.device.name

    def __repr__(self):
        return f"device('{self.device.name}')"


def get_device(spec):
    """``'/cpu:0'``, ``'cpu'``, ``'/gpu:0'``, ``'gpu'``, ``'cuda'``, ``'cuda:1'``, ``'sim'`` or a Device."""
    if isinstance(spec, Device):
        return spec
    if isinstance(spec, Placement):
        return spec.device
    key = _parse(spec)
    if key not in _devices:
        _devices[key] = _make(*key)
    return _devices[key]


class MissingDevice(Device):
    """A device a TF1 graph asks for that this machine lacks. Building the graph is fine, as in
    TF1; a Session then places the nodes on the CPU if ``allow_soft_placement`` is set, or
    refuses with ``reason``."""

    def __init__(self, kind, index, reason):
        self.kind, self.index, self.reason = kind, index, reason
        self._to_device = self._to_host = self._refuse

    @property
    def xp(self):
        self._refuse()

    def _refuse(self, *_):
        raise DeviceError(self.reason)


def is_device_spec(spec):
    """A Device, what ``eg.device(...)`` returns, or a name such as ``'/gpu:0'``."""
    if isinstance(spec, (Device, Placement)):
        return True
    m = isinstance(spec, str) and _SPEC.match(spec.strip())
    return bool(m) and m["kind"].lower() in _ALIASES


cpu = get_device("cpu:0")


class _Scope(threading.local):
    def __init__(self):
        self.stack = []


_scope = _Scope()


def current_device():
    """The device new tensors are placed on: the innermost ``eg.device`` scope, else cpu:0."""
    return _scope.stack[-1] if _scope.stack else cpu


def device(spec):
    """Place tensors and ops created inside on a device, like ``tf.device('/gpu:0')``; also a
    device to pass on, like PyTorch's ``torch.device('cuda')`` (``x.to(device)``,
    ``eg.randn(2, 3, device=device)``).

    A device this machine lacks can still be named, as in PyTorch (``torch.device('cuda')``
    on a laptop): using it is the error, which says what is missing. Eagerly (and in traced
    functions) entering its scope is such a use; in a TF1 graph it is recorded, and the
    Session decides (``ConfigProto(allow_soft_placement=True)``)."""
    try:
        placed = get_device(spec)
    except DeviceError as error:
        placed = MissingDevice(*_parse(spec), str(error))     # (an unknown name raises here)
    return Placement(placed)


def log_device_placement(enabled=True):
    """Print the device each eager op runs on (TF's ``log_device_placement``)."""
    Device.log_placement = bool(enabled)


def list_devices():
    """Devices usable on this machine, CPU first; the stand-in ``sim:0`` is always listed last."""
    found = [cpu]
    try:
        cupy = _cupy()
        found += [get_device(f"gpu:{i}") for i in range(cupy.cuda.runtime.getDeviceCount())]
    except DeviceError:
        pass
    return found + [get_device("sim:0")]


def gpu_available():
    return any(d.kind == "gpu" for d in list_devices())
