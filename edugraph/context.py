"""Per-thread execution state: are we recording gradients, building a graph, inside which tapes.

Kept in one small object so the hot path of every op reads one attribute, and so background
threads (the data pipeline's prefetch) never see another thread's ``no_grad``.
"""
import contextlib
import functools
import itertools
import threading
import weakref


_static_default = [None]           # the graph every thread builds into once eager is disabled


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True    # eager ops record their inputs for backward
        self.graph = _static_default[0]     # the Graph receiving new ops, or None (eager)
        self.tapes = []             # active GradientTapes, innermost last
        self.inlined_functions = 0  # eg.function bodies running inlined into a graph
        self.call_training = None   # the training flag a layer call hands down to the layer
                                    # calls inside it (Keras's call context; nn/module.py)


state = _State()
_sequence = itertools.count(1)     # recording order of eager nodes: tapes use it as a boundary


def next_sequence():
    return next(_sequence)


last_in_place_change = 0           # when a tensor's values were last overwritten (a sequence no.)
_written_in_place = {}             # id → weakref of each tensor whose own array was written into


def note_in_place_change(tensor, array_written=True):
    """``tensor``'s values were just overwritten in place (``assign``, ``x.data = ...``): stamp
    it, so that backward refuses nodes recorded earlier that read it (their gradient would be
    computed from the new values: PyTorch's "modified by an inplace operation" error).

    ``array_written``: its array itself was written (``assign``), so every view of that array
    (a reshape, transpose, slice or detach of the tensor) changed too. ``x.data = ...`` instead
    gives the tensor a new array, and views of the old one keep the values they had."""
    global last_in_place_change
    last_in_place_change = tensor._changed_at = next(_sequence)
    if array_written:
        _written_in_place[id(tensor)] = weakref.ref(tensor)
    else:                           # (its array is new: nothing recorded before shares it)
        _written_in_place.pop(id(tensor), None)


def written_in_place_since(sequence):
    """The live tensors whose arrays were written in place after ``sequence``."""
    written = []
    for key, ref in list(_written_in_place.items()):
        tensor = ref()
        if tensor is None:
            _written_in_place.pop(key, None)
        elif tensor._changed_at > sequence:
            written.append(tensor)
    return written


class _GradMode:
    """Context manager *and* decorator that sets whether eager ops record for backward."""

    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        self._previous = state.grad_enabled
        state.grad_enabled = self.enabled

    def __exit__(self, *exc):
        state.grad_enabled = self._previous

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with _GradMode(self.enabled):
                return fn(*args, **kwargs)
        return wrapper


def no_grad():
    """Compute without recording for backward (``with eg.no_grad():`` or ``@eg.no_grad()``)."""
    return _GradMode(False)


def enable_grad():
    """Record for backward again, e.g. inside a ``no_grad`` block."""
    return _GradMode(True)


def set_grad_enabled(enabled):
    return _GradMode(bool(enabled))


def is_grad_enabled():
    return state.grad_enabled


def set_static_default(graph):
    """``eg.disable_eager_execution()``: threads build into ``graph`` (None: eager again)."""
    _static_default[0] = graph
    state.graph = graph


@contextlib.contextmanager
def building(graph):
    """New ops go into ``graph`` while inside (used by ``Graph.as_default``)."""
    previous, state.graph = state.graph, graph
    try:
        yield graph
    finally:
        state.graph = previous


@contextlib.contextmanager
def inlined_function():
    """An ``eg.function``'s body (TF2 code) runs inlined into the graph being built."""
    state.inlined_functions += 1
    try:
        yield
    finally:
        state.inlined_functions -= 1
