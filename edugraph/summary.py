"""TensorBoard's summaries (``tf.summary``): event files that ``tensorboard --logdir`` shows.

TF1, as on the slides: a summary is a graph node whose value (a serialised ``Summary``
message, bytes) the Session computes; a ``FileWriter`` adds it to an event file with a step::

    loss_summary = eg.summary.scalar("loss", loss)               # a node, value b"..."
    writer = eg.summary.FileWriter("logs", sess.graph)           # the graph, for GRAPHS
    summary, _ = sess.run([loss_summary, updates], feed_dict=values)
    writer.add_summary(summary, step)                            # a point in SCALARS

TF2: ``with eg.summary.create_file_writer("logs").as_default():`` then
``eg.summary.scalar("loss", loss, step=epoch)`` writes at once (eagerly; not inside an
``eg.function``). An event file is a TFRecord file (``edugraph/io/tfrecord.py``) of ``Event``
messages. edugraph writes it the way ``torch.utils.tensorboard`` does, with the tensorboard
package's own writer (``pip install 'edugraph[tensorboard]'``). Only scalars are kept:
histograms, images and text summaries are left out.
"""
import contextlib
import importlib
import os
import time

import numpy as np

from . import devices
from .context import state
from .graph.graph_def import proto_module
from .ops.base import Op
from .tensor import Tensor

__all__ = ["FileWriter", "create_file_writer", "merge", "merge_all", "scalar"]

SUMMARIES = "summaries"         # the collection merge_all() merges (TF1's GraphKeys.SUMMARIES)
_default_writers = []           # TF2: the writers that `scalar(..., step=...)` writes to


class FileWriter:
    """Writes events to a new event file in ``logdir`` (TF1's ``tf.summary.FileWriter``;
    ``create_file_writer`` makes one too). Given a ``graph``, it writes it first, for
    TensorBoard's GRAPHS tab. The file is written in a background thread: ``flush()`` or
    ``close()`` makes sure everything is on disk."""

    def __init__(self, logdir, graph=None, max_queue=10, flush_secs=120, filename_suffix=None):
        writer = _tensorboard("summary.writer.event_file_writer").EventFileWriter
        self._events = writer(os.fspath(logdir), max_queue, flush_secs, filename_suffix or "")
        if graph is not None:
            self.add_graph(graph)

    def get_logdir(self):
        return self._events.get_logdir()

    def add_summary(self, summary, global_step=None):
        """Add what a summary node gave (bytes, or a ``Summary`` message) at ``global_step``."""
        summary_pb2 = proto_module("summary_pb2")
        if isinstance(summary, bytes):
            summary = summary_pb2.Summary.FromString(summary)
        if not isinstance(summary, summary_pb2.Summary):
            raise TypeError(
                f"add_summary takes a summary, what sess.run gives for an eg.summary node "
                f"(bytes), not {type(summary).__name__} {summary!r}: write "
                "summary = sess.run(eg.summary.scalar('loss', loss)), then "
                "writer.add_summary(summary, step).")
        self._add(global_step, summary=summary)

    def add_graph(self, graph, global_step=None):
        """Add ``graph`` (an ``eg.Graph``, or a ``GraphDef``) for TensorBoard's GRAPHS tab."""
        graph_def = graph.as_graph_def() if hasattr(graph, "as_graph_def") else graph
        self._add(global_step, graph_def=graph_def.SerializeToString())

    def add_event(self, event):
        self._events.add_event(event)

    def _add(self, step, **what):
        event = proto_module("event_pb2").Event(wall_time=time.time(), **what)
        if step is not None:
            event.step = int(step)
        self.add_event(event)

    def flush(self):
        self._events.flush()

    def close(self):
        self._events.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # TF2's writer API: eager ``scalar`` calls write to the default writer
    @contextlib.contextmanager
    def as_default(self):
        _default_writers.append(self)
        try:
            yield self
        finally:
            _default_writers.remove(self)
            self.flush()

    def set_as_default(self):
        _default_writers.append(self)


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None):
    """TF2's ``tf.summary.create_file_writer``: a ``FileWriter`` to use ``as_default()``."""
    return FileWriter(logdir, max_queue=max_queue or 10,
                      flush_secs=(flush_millis or 120_000) / 1000,
                      filename_suffix=filename_suffix)


def scalar(name, data, step=None, description=None, collections=None):
    """A scalar summary: in a TF1 graph, a node whose value is the serialised ``Summary``
    (tagged with the name scope and ``name``); eagerly (TF2), written at once to the default
    writer at ``step``, returning whether there was a writer to write to."""
    graph = state.graph
    if graph is None:
        return _write_scalar(name, data, step)
    if graph.code_era != "tf1":
        raise NotImplementedError(
            f"eg.summary.scalar({name!r}, ...) inside an eg.function is left out: return the "
            "value from the function and write it after the call, eg.summary.scalar(name, "
            "value, step=step).")
    return _summary_node(graph, ScalarSummary(_tag(graph, name)), [data], collections, name)


def merge(inputs, collections=None, name=None):
    """One summary node holding the values of the summary nodes ``inputs``."""
    graph = _graph_or_error("merge")
    tags = [tag for t in inputs for tag in _summary_op(t).tags]
    repeated = sorted({tag for tag in tags if tags.count(tag) > 1})
    if repeated:
        raise ValueError(f"Duplicate tag {repeated[0]} found in summary inputs: give each "
                         "summary its own name.")
    return _summary_node(graph, MergeSummary(tags), list(inputs), collections,
                         name or "Merge/MergeSummary")


def merge_all(key=SUMMARIES):
    """All summary nodes of the default graph merged into one, or None if it has none."""
    summaries = _graph_or_error("merge_all").get_collection(key)
    return merge(summaries, collections=[]) if summaries else None


class ScalarSummary(Op):
    """A ``Summary`` with one value: its input, under ``tag``."""

    name, type_name, differentiable = "scalar_summary", "ScalarSummary", False
    stateful = True                 # (never folded into a constant of bytes)

    def __init__(self, tag):
        self.tag = tag

    @property
    def tags(self):
        return [self.tag]

    def static_shape(self, value):
        if value.shape.rank_known and value.shape != ():
            raise ValueError(f"eg.summary.scalar({self.tag!r}, ...) needs a scalar, but the "
                             f"tensor has shape {value.shape}: reduce it first (e.g. "
                             "eg.reduce_mean).")
        return (), np.dtype(object)

    def session_step(self, session, node):
        return lambda value: _bytes_array(_scalar_summary(self.tag, value))


class MergeSummary(Op):
    """Several serialised ``Summary`` messages as one. Protocol buffers are made to be
    concatenated: the bytes of two messages, one after the other, are one message that holds
    both lists of values."""

    name, type_name, differentiable, stateful = "merge_summary", "MergeSummary", False, True

    def __init__(self, tags):
        self.tags = tags

    def static_shape(self, *summaries):
        return (), np.dtype(object)

    def session_step(self, session, node):
        return lambda *summaries: _bytes_array(b"".join(s.item() for s in summaries))


def _summary_node(graph, op, inputs, collections, name):
    """A summary node on the CPU (the value is made there, as in TF), in ``collections``."""
    out = graph.create_op(op, inputs, name=name)
    out.op._device, out.op.device = devices.cpu, "/device:CPU:0"
    out.requires_grad = False
    for key in [SUMMARIES] if collections is None else collections:
        graph.add_to_collection(key, out)
    return out


def _summary_op(tensor):
    op = getattr(getattr(tensor, "op", None), "eg_op", None)
    if not isinstance(op, (ScalarSummary, MergeSummary)):
        raise TypeError(f"eg.summary.merge merges summary nodes (eg.summary.scalar's), not "
                        f"{tensor!r}.")
    return op


def _tag(graph, name):
    scope = graph.get_name_scope()
    return f"{scope}/{name}" if scope else name


def _scalar_summary(tag, value):
    """The serialised ``Summary`` holding ``value`` (one number) under ``tag``."""
    summary_pb2 = proto_module("summary_pb2")
    value = float(np.asarray(value).reshape(()))
    return summary_pb2.Summary(value=[summary_pb2.Summary.Value(tag=tag, simple_value=value)]
                               ).SerializeToString()


def _write_scalar(name, data, step):
    if not _default_writers:
        return False                # (as TF: no writer, nothing written)
    if step is None:
        raise ValueError(f"eg.summary.scalar({name!r}, ...): no step given. Write "
                         "eg.summary.scalar(name, value, step=epoch).")
    value = data.numpy() if isinstance(data, Tensor) else np.asarray(data)
    if value.shape != ():
        raise ValueError(f"eg.summary.scalar({name!r}, ...) needs a scalar, got shape "
                         f"{value.shape}.")
    _default_writers[-1].add_summary(_scalar_summary(name, value), step)
    return True


def _bytes_array(data):
    """``data`` (bytes) as a 0-d array, what a node's value is; sess.run hands out the bytes."""
    array = np.empty((), dtype=object)
    array[()] = data
    return array


def _graph_or_error(what):
    if state.graph is None:
        raise RuntimeError(f"eg.summary.{what} builds a node of a TF1 graph: it is not "
                           "compatible with eager execution.")
    return state.graph


def _tensorboard(module):
    """``tensorboard.<module>``, or an error that says how to install it."""
    proto_module("summary_pb2")     # (its error names the extra to install)
    return importlib.import_module(f"tensorboard.{module}")


def __getattr__(name):
    """``eg.summary.histogram`` and the other kinds: what is left out, not a bare error."""
    if name in ("histogram", "image", "text", "audio", "tensor_summary"):
        raise AttributeError(f"eg.summary.{name} is left out: edugraph writes scalar summaries "
                             "only (eg.summary.scalar).")
    raise AttributeError(f"module 'edugraph.summary' has no attribute '{name}'")
