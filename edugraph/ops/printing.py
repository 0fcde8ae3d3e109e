"""``eg.print``: TF's ``tf.print``, which prints when the computation *runs*.

Eagerly that is at once. In a graph it is a node: a Session prints when the node is fetched (or
a fetched node depends on it through ``control_dependencies``); a traced function prints on
every call, because its side effects always run, whereas Python's ``print`` runs only while
the function is traced.

As TF's, it writes to standard error unless ``output_stream`` says otherwise, and shows a
tensor as TF does: a float with 6 significant digits where they give the number back, else 9
(17 for float64): ``[2 4]``, ``0.1``, ``3.14159274``; and the first and last ``summarize``
entries of each dimension around ``...`` (3 unless told; -1 shows them all).
"""
import sys

import numpy as np

from ..context import state
from ..nest import map_structure
from ..tensor import Tensor
from .base import Op


class Print(Op):
    """Prints its inputs each time it runs: ``parts`` are the texts between them, or the
    ``_Slot`` where a tensor's value goes (also inside a list or dict)."""

    name, type_name = "print", "PrintV2"
    differentiable = False
    stateful = True             # never folded away or merged with another print
    side_effect = True          # a traced function runs it on every call

    def __init__(self, parts, summarize, write, sep, end):
        self.parts, self.summarize, self.sep, self.end = parts, summarize, sep, end
        self._write = write         # (``_writer``'s function for the output_stream)

    def forward(self, xp, *values):
        shown = [_filled(part, values, self.summarize) for part in self.parts]
        self._write(self.sep.join(shown) + self.end)
        return xp.zeros((), dtype=bool)

    def static_shape(self, *inputs):
        return (), bool                 # (a flag: building the graph must not print)

    def session_step(self, session, node):
        host = node._device.get
        return lambda *values: self.forward(node._device.xp, *(host(v) for v in values))


def print_(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """``eg.print("loss:", loss)``: tensors print as TF prints them, strings as they are, other
    values as ``str`` (a list or dict with the tensors in it shown; a numpy array as its
    ``repr``, as TF shows it). ``output_stream``: standard error unless given
    (``sys.stdout``, an open file, ``"file://path"``, or a function such as
    ``logging.info``)."""
    write = _writer(output_stream)
    if not isinstance(summarize, int) or summarize < -1:
        raise ValueError(f"eg.print: summarize is how many entries to show at each end of a "
                         f"dimension (-1: all of them), got {summarize!r}.")
    tensors = []
    parts = [_template(x, tensors) for x in inputs]
    op = Print(parts, summarize, write, sep, end)
    if state.graph is None:
        op.forward(np, *(t.numpy() for t in tensors))
        return None
    return state.graph.create_op(op, tensors, name=name).op


class _Slot:
    """Where the value of the ``index``-th tensor goes in what is printed."""

    def __init__(self, index):
        self.index = index


def _template(value, tensors):
    """``value`` with each tensor in it replaced by its ``_Slot`` (appended to ``tensors``):
    a text stays as it is, a list or dict keeps its other entries (``str`` shows them later),
    anything else becomes its text now."""
    if isinstance(value, (Tensor, dict, list, tuple)):
        return map_structure(lambda leaf: _slot_for(leaf, tensors), value)
    return repr(value) if isinstance(value, np.ndarray) else str(value)


def _slot_for(leaf, tensors):
    if not isinstance(leaf, Tensor):
        return leaf
    tensors.append(leaf)
    return _Slot(len(tensors) - 1)


def _filled(part, values, summarize):
    """The text of one printed input: ``part`` with its slots filled from ``values``."""
    if isinstance(part, str):
        return part
    if isinstance(part, _Slot):
        return format_tensor(values[part.index], summarize)
    return str(map_structure(lambda leaf: _Shown(format_tensor(values[leaf.index], summarize))
                             if isinstance(leaf, _Slot) else leaf, part))


def format_tensor(value, summarize=3):
    """An array as ``tf.print`` shows it: ``[[1 2]\\n [3 4]]``, ``3.14159274``."""
    array = np.asarray(value)
    if array.size == 0:
        return "[]"
    entry = _entry_format(array.dtype)
    return _nested(array, 0, array.size if summarize == -1 else summarize, entry)


def _nested(array, depth, ends, entry):
    """TF's ``PrintOneDimV2``: the first and last ``ends`` entries of each dimension, the
    dimensions after the first separated by as many line breaks as they have dimensions
    below them, and indented by their depth."""
    if array.ndim == 0:
        return entry(array[()])
    n = len(array)
    parts = [_nested(array[i], depth + 1, ends, entry) for i in range(min(ends, n))]
    if n > 2 * ends:
        parts.append("...")
    parts += [_nested(array[i], depth + 1, ends, entry) for i in range(max(ends, n - ends), n)]
    spacing = " " if array.ndim == 1 else "\n" * (array.ndim - 1) + " " * (depth + 1)
    return "[" + spacing.join(parts) + "]"


def _entry_format(dtype):
    if dtype.kind == "f":         # TF's FloatToBuffer: 6 digits (15 for float64) where they
        if dtype.itemsize == 8:   # read back as the same number, else 9 (17)
            return lambda x: _shortest_of(float(x), 15, 17, float)
        return lambda x: _shortest_of(np.float32(x), 6, 9, np.float32)
    if dtype.kind == "b":
        return lambda x: "1" if x else "0"
    if dtype.kind in "SU":
        return lambda x: x.decode() if isinstance(x, bytes) else str(x)
    return str


def _shortest_of(x, short, long, parse):
    text = f"{x:.{short}g}"
    return text if parse(text) == x else f"{x:.{long}g}"


class _Shown:
    """A tensor's value inside a list or dict printed by ``str``: its text as TF shows it."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _writer(stream):
    """The function that writes a printed text to ``output_stream`` (an unsupported one is
    refused here, when ``eg.print`` is called)."""
    if stream is None:                      # standard error, the one in use when it prints
        return lambda text: sys.stderr.write(text)          # (Jupyter replaces it)
    if isinstance(stream, str) and stream.startswith("file://"):
        def append(text):
            with open(stream[len("file://"):], "a") as file:
                file.write(text)
        return append
    if hasattr(stream, "write"):
        return stream.write
    if callable(stream):                    # a logging function: one message, no newline
        return lambda text: stream(text.rstrip("\n"))
    raise ValueError(
        f"eg.print: unsupported output_stream {stream!r}. Give sys.stdout, sys.stderr (the "
        "default), an open file, a function such as logging.info, or 'file://<filepath>' "
        "(as TF's tf.print takes).")
