"""Session: runs (parts of) a graph and holds the variables' values (TF1's ``tf.Session``).

``sess.run(fetches, feed_dict)`` computes only what the fetches need. For each new
(fetches, feeds) signature the Session compiles a *plan*: prune the graph to what is needed,
optimise it (``passes.py``), and lay it out as a flat list of steps over numbered slots. The
plan is cached, so a training loop pays for compiling once and then just walks the list.
"""
import collections
import contextlib
import copy
import functools
import operator
import zlib

import numpy as np

from .. import context, debugging, devices
from ..errors import FailedPreconditionError, InvalidArgumentError
from ..ops import base as _base, random as random_ops
from ..ops.base import Op
from ..ops.random import RandomOp
from ..tensor import Tensor
from . import passes
from .core import Const, Graph, Operation, SymbolicTensor, get_default_graph, upstream_ops
from .ops import Assign, uninitialized

_default_sessions = []


@contextlib.contextmanager
def building_state_kept():
    """Run code that may open a graph, disable eager execution or enter a Session's
    ``as_default()`` without leaving it, then put back where new ops go, the mode and the
    default sessions. (The exercises' checks run a student's TF1 function in this.)"""
    from . import core
    graph, static_default = context.state.graph, context._static_default[0]
    eager, sessions = core._eager[0], list(_default_sessions)
    try:
        yield
    finally:
        context.state.graph, context._static_default[0] = graph, static_default
        core._eager[0] = eager
        _default_sessions[:] = sessions


def default_session(graph=None):
    if not _default_sessions:
        raise ValueError("Cannot evaluate tensor using `eval()`: No default session is "
                         "registered. Use `with sess.as_default():` or pass session=sess.")
    return _default_sessions[-1]


class ConfigProto:
    """Session options: ``log_device_placement`` prints where each node runs;
    ``allow_soft_placement`` runs nodes placed on a device this machine lacks (``/gpu:0``
    without CuPy or CUDA) on the CPU instead of refusing them."""

    def __init__(self, log_device_placement=False, allow_soft_placement=False, **ignored):
        self.log_device_placement = log_device_placement
        self.allow_soft_placement = allow_soft_placement


class Session:
    """``with eg.Session() as sess: sess.run(fetches, feed_dict={...})``."""

    def __init__(self, target="", graph=None, config=None, optimize=True):
        if isinstance(target, Graph):           # TF1: "TypeError: target must be a string"
            raise TypeError("Session(g): the first argument of Session is target (a server "
                            "address), not the graph; pass the graph by name: "
                            "eg.Session(graph=g).")
        self.graph = graph or get_default_graph()
        self.config = config or ConfigProto()
        self.optimize = optimize
        self._variables = {}            # GraphVariable → its value (an array on its device)
        self._random_ops = {}           # a seeded random op → this session's copy of it
        self._plans = {}
        self._initializers_run = set()  # variables_initializer ops run here (for an error)
        self._closed = False

    # ------------------------------------------------------------------ context management
    def __enter__(self):
        _default_sessions.append(self)
        return self

    def __exit__(self, *exc):
        _default_sessions.remove(self)
        self.close()

    def as_default(self):
        session = self

        class _Default:
            def __enter__(self):
                _default_sessions.append(session)
                return session

            def __exit__(self, *exc):
                _default_sessions.remove(session)
        return _Default()

    def close(self):
        """Free the variables' values; running afterwards is an error."""
        self._closed = True
        self._variables.clear()
        self._random_ops.clear()
        self._plans.clear()

    # ------------------------------------------------------------------ running
    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """Values of ``fetches`` (a tensor, op, name, or nested list/tuple/dict of them)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        flat, rebuild = _flatten_fetches(fetches, self.graph)
        feeds = self._feeds(feed_dict) if feed_dict else {}
        key = (tuple(map(id, flat)), frozenset(map(id, feeds)))
        plan = self._plans.get(key)
        if plan is None:
            plan = self._plans[key] = Plan(self, flat, list(feeds))
        try:
            values = plan.run(feeds)
        except FailedPreconditionError as e:
            raise _explain_uninitialized(e, self._initializers_run, flat) from None
        if plan.initializers:
            self._initializers_run.update(plan.initializers)
        return rebuild(values)

    def make_callable(self, fetches, feed_list=()):
        """A function running ``fetches`` with values for ``feed_list`` as its arguments."""
        feed_list = list(feed_list)
        return lambda *values: self.run(fetches, dict(zip(feed_list, values)))

    def _feeds(self, feed_dict):
        feeds = {}
        for key, value in feed_dict.items():
            t = _feed_key(key, self.graph) if isinstance(key, str) else key
            if isinstance(t, Operation) and t.outputs:
                raise TypeError(f"The feed_dict key {key!r} names the op '{t.name}', not a "
                                f"tensor; feed its tensor '{t.name}:0' or the placeholder "
                                "object itself.")
            if not isinstance(t, SymbolicTensor):
                raise TypeError(f"The feed_dict key {key!r} is not a graph tensor; feed "
                                "placeholders (or other tensors) of this Session's graph.")
            if t.graph is not self.graph:
                raise ValueError(f"Tensor {t.name} fed in feed_dict is not an element of "
                                 "this Session's graph.")
            if isinstance(value, Tensor):
                if value.graph is not None:
                    raise TypeError("The value of a feed cannot be a symbolic tensor "
                                    f"({value.name}); feed numbers or arrays, or "
                                    "sess.run() it first.")
                value = value.numpy()
            try:
                array = np.asarray(value, dtype=t.dtype)
            except (ValueError, TypeError) as e:
                reason = str(e).rstrip(".")
                raise type(e)(f"Cannot feed this value for Tensor '{t.name}' (dtype "
                              f"{t.dtype}, shape {t.shape}): {reason}. Feed numbers in "
                              "nested lists of equal lengths, or a numpy array.") from e
            if array.shape != t.shape and not t.shape.is_compatible_with(array.shape):
                raise ValueError(f"Cannot feed value of shape {array.shape} for Tensor "
                                 f"'{t.name}', which has shape '{t.shape}'")
            feeds[t] = array
        return feeds

    def list_devices(self):
        return devices.list_devices()


def _explain_uninitialized(error, initializers_run, fetches):
    """``error`` (a variable read before its initializer ran), with the reason when it is not
    a missing initializer run: another variable's initial value, computed by the initializer
    being run, reads it (``V = eg.Variable(f(W))`` where edugraph could not rebuild ``f`` to
    read W's initialized value, as it does for ``W * 2``); or this session did run an
    initializer, but one made before the variable existed. The student who ran
    ``eg.global_variables_initializer()`` is otherwise told to do what they did."""
    variable = getattr(getattr(error.op, "eg_op", None), "_variable", None)
    readers = [] if variable is None else _initial_values_reading(variable, fetches)
    if readers:
        reader, name = readers[0].op.name, variable.op.name
        return uninitialized(variable, error.op, (
            f"{reader}'s initial value reads the variable {name}, which has no value yet. "
            f"Build it from {name}.initialized_value(), or run {name}'s initializer first, "
            f"then the rest: sess.run({name}.initializer), then "
            f"sess.run({reader}.initializer)."))
    stale = [op for op in initializers_run
             if variable is not None and op.graph is variable.graph and op._id < variable.op._id]
    if not stale:
        return error
    return FailedPreconditionError(
        f"{error.message}\nThe initializer you ran ('{stale[0].name}') was made before this "
        "variable existed, so it does not initialize it: create the initializer after all "
        "variables (init = eg.global_variables_initializer() once the model is built), and "
        "run that.", error.op)


def _initial_values_reading(variable, fetches):
    """The variables whose initializers ``fetches`` run and whose initial values read
    ``variable`` (only on the error's path: it walks the graph)."""
    needed = passes.needed_ops(fetches, ())
    initializers = [op for op in needed if isinstance(op.eg_op, Assign) and
                    getattr(op.eg_op._variable, "initializer", None) is op and
                    op.eg_op._variable is not variable]
    return [op.eg_op._variable for op in sorted(initializers, key=lambda op: op._id)
            if variable.op in upstream_ops([op.inputs[1].op])]


class InteractiveSession(Session):
    """A Session that makes itself the default at once (for notebooks: ``t.eval()``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _default_sessions.append(self)

    def close(self):
        if self in _default_sessions:
            _default_sessions.remove(self)
        super().close()


def _op_in_session(session, node):
    """The op to run for ``node`` in ``session``. A random op with a seed (its own, or the one
    eg.random.set_seed gave: then the node's name picks its stream) restarts its sequence in
    each new Session, as in TF1, so two sessions draw the same initial weights; the plans of
    one session share the stream (their graphs are copies that keep each node's op and name).
    Sub-graphs, such as a while loop's body, and traced functions keep the node's own stream,
    which goes on from run to run (not the stream eager ops of its seed share)."""
    op = node.eg_op
    if not isinstance(op, RandomOp):
        return op
    copies = getattr(session, "_random_ops", None)
    if copies is None:
        return op.as_node()
    if op.seed is None and random_ops.global_seed() is None:
        return op                                   # unseeded: the global stream
    mine = copies.get(op)
    if mine is None:
        mine = copies[op] = copy.copy(op).as_node(restart=True)
        mine.seed = op.seed if op.seed is not None else zlib.crc32(node.name.encode())
    return mine


class _CopyTo(Op):
    """A transfer between devices that the plan inserts where a node's inputs live elsewhere."""

    def __init__(self, source, target):
        self.source, self.target = source, target

    def forward(self, xp, x):
        return self.target.put(self.source.get(x))


class Plan:
    """The compiled form of one (fetches, feeds) signature: steps over numbered value slots.

    Each step is ``(fn, input slots, output slot, node, slots to drop)``. A value is dropped
    right after the last step that reads it, as a TF executor frees a tensor when its last
    consumer has run: temporaries die as they would in hand-written numpy, so memory peaks
    lower and freed buffers come back warm for the next step.
    """

    def __init__(self, session, fetches, feeds):
        graph = session.graph
        targets = [f for f in fetches if f is not None]
        pruned, outputs = passes.prune(graph, targets + feeds, feeds)
        place = _placement(session.config.allow_soft_placement)
        _place_as_written(pruned, outputs[:len(targets)], set(outputs[len(targets):]), place,
                          session.config.log_device_placement)
        if session.optimize:
            pruned, outputs = passes.optimize(pruned, outputs)
        # A fetched variable shows its value at the end of the run, as in TF1, where the
        # slides' sess.run([y, x, update]) prints x updated; any other fetch shows the value
        # it was computed with, also where an optimisation made it a read (x * 1.0 is x)
        passes.protect_reads(pruned, [new for fetched, new in zip(targets, outputs)
                                      if not passes.reads_a_variable(fetched)])
        self.graph = pruned                 # the optimised graph this plan runs (inspectable)
        outputs, fed_new = outputs[:len(targets)], outputs[len(targets):]
        slots = {}

        def slot(t):
            return slots.setdefault(t, len(slots))

        self.feed_slots = [(orig, slot(new), _off_host(place(new.op)))
                           for orig, new in zip(feeds, fed_new)]
        fed = set(fed_new)
        needed = passes.needed_ops(outputs, fed)
        steps, initial = [], {}
        kept = set()        # slots that may hold arrays outliving a run (a variable's, a
                            # capture's), also passed on by identity or a cond's tuple
        for op in pruned.get_operations():
            if op not in needed or (op.outputs and op.outputs[0] in fed) or not op.outputs:
                continue
            device = place(op)
            out = op.outputs[0]
            if isinstance(op.eg_op, Const):     # constants are put on their device once
                initial[slot(out)] = device.put(np.array(op.eg_op.value))
                continue
            ins = []
            for t in getattr(op, "_exec_inputs", op.inputs):
                source = place(t.op)
                if source is not device:    # TF1 places copies between devices for you
                    copied = slots[(t, device)] = len(slots)
                    steps.append((functools.partial(_CopyTo(source, device).forward, None),
                                  (slot(t),), copied, op))
                    ins.append(copied)
                else:
                    ins.append(slot(t))
            if getattr(op.eg_op, "stateful", False):
                fn = op.eg_op.session_step(session, op)
                kept.add(slot(out))
            else:
                fn = functools.partial(_op_in_session(session, op).forward, device.xp)
                if op.eg_op.returns_an_input and ins[0] in kept:
                    kept.add(slot(out))
            steps.append((fn, tuple(ins), slot(out), op))
        self.initial = [initial.get(i) for i in range(len(slots))]
        self.fetch_slots = [None if f is None or isinstance(o, Operation) else slot(o)
                            for f, o in zip(fetches, _pad(fetches, outputs))]
        self.fetch_devices = [None if s is None else place(o.op)
                              for s, o in zip(self.fetch_slots, _pad(fetches, outputs))]
        self.copy_out = [s in kept or s in initial for s in self.fetch_slots]
        self.steps = _with_drops(steps, set(self.fetch_slots))
        self.initializers = [f for f in fetches
                             if getattr(f, "initializes_variables", False)]

    def run(self, feeds):
        values = list(self.initial)
        for t, i, device in self.feed_slots:
            values[i] = feeds[t] if device is None else device.put(feeds[t])
        checking = _base.check_result is not None   # eg.debugging.enable_check_numerics()
        for fn, ins, out, op, drop in self.steps:
            try:
                values[out] = fn(*[values[i] for i in ins])
            except (ValueError, IndexError, TypeError, ZeroDivisionError) as e:
                if isinstance(e, InvalidArgumentError):
                    raise
                shapes = [tuple(values[i].shape) for i in ins]
                raise InvalidArgumentError(
                    f"{op.eg_op.explain_failure(shapes)}\n\t [[node {op.name} "
                    f"({op.type})]]", op) from e
            if checking:
                debugging.check_node(op, [values[i] for i in ins], values[out])
            for i in drop:
                values[i] = None
        results = []
        for i, device, copy in zip(self.fetch_slots, self.fetch_devices, self.copy_out):
            if i is None:
                results.append(None)
                continue
            value = values[i] if device.kind == "cpu" else device.get(values[i])
            if isinstance(value, tuple):        # (a TensorArray's list, which nothing writes)
                results.append(value)
                continue
            if value is values[i] and (copy or not value.flags.owndata):
                # A variable's storage, a constant the plan keeps, or a view that may be of
                # one (w[0], w.T) must not leak out: a later assign, or the caller writing into
                # the result, would change the other (TF returns arrays of their own).
                value = value.copy()
            results.append(value[()] if value.ndim == 0 else value)
        return results


def _with_drops(steps, kept):
    """Each step with the slots whose value is not needed after it (read last there, or
    never read), except ``kept`` ones (the fetches)."""
    last = {}
    for k, (fn, ins, out, op) in enumerate(steps):
        last[out] = k
        for i in ins:
            last[i] = k
    drops = [[] for _ in steps]
    for i, k in last.items():
        if i not in kept:
            drops[k].append(i)
    return [step + (tuple(drop),) for step, drop in zip(steps, drops)]


def _placement(soft):
    """``op`` → the device it runs on: where it was placed, or (``soft``) the CPU when that
    device is missing here; without soft placement a missing device is refused as TF1 does."""
    def place(op):
        device = op._device
        if not isinstance(device, devices.MissingDevice):
            return device
        if soft:
            return devices.cpu
        raise InvalidArgumentError(
            f"Cannot assign a device for operation {op.name}: Could not satisfy explicit "
            f"device specification '{op.device}' because this machine lacks it: "
            f"{device.reason} Or keep the graph and run it on the CPU: "
            "eg.Session(config=eg.ConfigProto(allow_soft_placement=True)).")
    return place


def _place_as_written(graph, targets, fed, place, log):
    """Place (and with ``log`` print) each op the fetches need as the graph was written, as
    TF1 does: the log and a missing device's error name the ops you built, also those that
    constant folding then removes (``MatMul`` of two constants on '/gpu:2')."""
    needed = passes.needed_ops(targets, fed)
    for op in graph.get_operations():
        if op in needed and op.outputs and op.outputs[0] not in fed:
            device = place(op)
            if log:
                print(f"{op.name}: ({op.type}): {device.full_name}")


def _off_host(device):
    """``device``, or None for the CPU (a fed value then needs no copy)."""
    return None if device.kind == "cpu" else device


def _pad(fetches, outputs):
    """``outputs`` lined up with ``fetches`` (None fetches have no output)."""
    it = iter(outputs)
    return [None if f is None else next(it) for f in fetches]


def _flatten_fetches(fetches, graph):
    """Nested fetches → a flat list of graph elements and a function rebuilding the nesting."""
    flat = []

    def visit(f):
        if isinstance(f, (SymbolicTensor, Operation)) and f.graph is graph:   # the common case
            flat.append(f)
            return operator.itemgetter(len(flat) - 1)
        if isinstance(f, (list, tuple)):
            parts = [visit(x) for x in f]
            if _is_namedtuple(f):
                return lambda values: type(f)(*[p(values) for p in parts])
            return lambda values: type(f)([p(values) for p in parts])
        if isinstance(f, dict):
            parts = {k: visit(v) for k, v in f.items()}
            return lambda values: type(f)((k, p(values)) for k, p in parts.items())
        if isinstance(f, collections.abc.Mapping):
            raise TypeError(f"Fetch mapping of type {type(f).__name__} is not supported.")
        if f is None:
            raise TypeError(_none_fetch_message(fetches))
        flat.append(_element(f, graph))
        return operator.itemgetter(len(flat) - 1)

    rebuild = visit(fetches)
    return flat, rebuild


def _none_fetch_message(fetches):
    """TF's message for a None among the fetches, saying which one and where Nones come from
    (not worked out on every run: only once the fetches are known to hold one)."""
    where = _path_to_none(fetches)
    where = f" (the fetches' element {where})" if where else ""
    return (f"Fetch argument None{where} has invalid type <class 'NoneType'>. eg.gradients "
            "gives None for a variable the loss does not depend on: leave that gradient out "
            "of the fetches, or check that the loss uses the variable.")


def _path_to_none(fetches, path=""):
    """Where the first None is in nested fetches, as an index expression: ``[1][0]``, or ""
    for ``fetches`` itself (None when there is none)."""
    if fetches is None:
        return path
    if isinstance(fetches, dict):
        items = ((repr(k), v) for k, v in fetches.items())
    elif isinstance(fetches, (list, tuple)):
        items = enumerate(fetches)
    else:
        return None
    for key, value in items:
        found = _path_to_none(value, f"{path}[{key}]")
        if found is not None:
            return found
    return None


def _element(f, graph):
    if isinstance(f, str):
        try:
            return graph.as_graph_element(f)
        except (KeyError, ValueError) as e:         # TF1's words: the reason in brackets
            raise ValueError(f"Fetch argument {f!r} cannot be interpreted as a Tensor. "
                             f"({e.args[0]})") from None
    if isinstance(f, (SymbolicTensor, Operation)):
        try:
            return graph.as_graph_element(f)
        except ValueError:
            raise ValueError(f"Fetch argument {f!r} cannot be interpreted as a Tensor. "
                             f"({f.name} is not an element of this graph.)") from None
    if isinstance(f, Tensor):
        raise TypeError(f"Fetch argument {f!r} is an eager tensor, not a graph tensor: it "
                        "has its value already, and no Session needs to run it: use "
                        "t.numpy(). (Was it made outside `with graph.as_default():`, or "
                        "before eg.disable_eager_execution()?)")
    raise TypeError(f"Fetch argument {f!r} has invalid type {type(f)}, must be a string or "
                    f"Tensor. (Can not convert a {type(f).__name__} into a Tensor or "
                    "Operation.)")


def _feed_key(name, graph):
    """The tensor a feed_dict key names ('x:0'), with TF1's error for a name not in the graph."""
    try:
        return graph.as_graph_element(name)
    except (KeyError, ValueError) as e:
        raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e.args[0]}") from None


def _is_namedtuple(f):
    return isinstance(f, tuple) and hasattr(f, "_fields")
