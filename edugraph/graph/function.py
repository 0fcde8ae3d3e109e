"""Traced functions: ``@eg.function`` turns a Python function into a graph (TF2's ``tf.function``).

The first call with a new *signature* runs the Python function once with placeholders instead of
tensors: every op builds a node, so the run leaves behind a graph (a ``ConcreteFunction``). Later
calls with the same signature skip Python and run that graph, optimised and compiled once, through
the same ``Plan`` a ``Session`` uses. What is in a signature (TF2's rules):

* a tensor, numpy array or numpy scalar: its shape and dtype (and device): a new shape
  traces again;
* a Python value (int, float, str, bool, None): the value itself: ``f(x, 2)`` and ``f(x, 3)`` are
  two graphs, and ``if n > 0:`` on a Python ``n`` is decided while tracing;
* lists, tuples and dicts of those: their structure; any other object: its identity.

So Python side effects (``print``, ``list.append``) happen while tracing only. To print on
every call, compute the value and return it.

Variables (TF2's rules):

* an eager ``eg.Variable`` used inside is *captured*: read when the graph runs, not frozen;
  ``v.assign(...)`` inside builds an assign node that runs with every call;
* a variable created while tracing (a layer built on its first call, an optimizer's slots) is
  made once, outside the graph, on the first trace only; creating one on a later trace raises.
  A first trace that made variables is traced once more at once, as TF does: code that makes
  a variable on every run (eagerly, a new one per call) would make one again, and is refused.

``next(iterator)`` of an ``eg.data`` iterator is a node that takes the next element on every
call (``data/iterator.py``).

``eg.GradientTape`` works inside: ``tape.gradient`` adds gradient nodes (``eg.gradients``), so a
whole training step becomes one graph.

A call is differentiable from outside too (TF2's rule): under a recording ``GradientTape``, or
with an argument that requires a gradient, each float output becomes one node of the eager tape
whose backward runs the trace's gradient graph on the values that call read (the arguments and
the captured variables). Second derivatives through such a call are refused with a clear
error: nest the tapes inside the function.

Before the first trace, AutoGraph rewrites the function's ``if``, ``while`` and ``for``
statements so that those on tensors become ``eg.cond`` / ``eg.while_loop`` (``autograph/``;
``autograph=False`` traces the code as written).

Limits, on purpose: a function called while another graph is being built is inlined there.
Shapes are exact unless ``input_signature`` or a ``TensorSpec`` given to
``get_concrete_function`` says ``None``, or ``reduce_retracing`` relaxes them; a call then
runs the most specific trace its tensors fit (TF's subtyping).

``f.get_concrete_function(*args)`` gives the traced graph for those arguments:
``cf.graph`` as written, ``cf.pass_stages`` after each optimisation pass, ``cf.optimized_graph``
as it runs (see ``ConcreteFunction``).
"""
import contextlib
import functools
import inspect
import reprlib
import weakref

import numpy as np

from .. import context, devices, nest
from ..autodiff import fill_unconnected, flatten_sources
from ..errors import GradientError, TracingTypeError
from ..ops.base import Op
from ..tensor import Tensor, as_dtype
from ..variable import Variable
from . import passes as graph_passes
from .core import Const, Graph, Operation, Placeholder, SymbolicTensor, constant, upstream_ops
from .gradients import gradients
from .ops import Assign, Capture, check_assigned
from .session import ConfigProto, Plan
from .shapes import TensorShape

__all__ = ["function", "Function", "ConcreteFunction", "FuncGraph", "TensorSpec"]

# The optimisation passes by name, in the order they run by default.
PASSES = {"prune": graph_passes.prune,
          "fold_constants": graph_passes.fold_constants,
          "eliminate_common_subexpressions": graph_passes.eliminate_common_subexpressions,
          "update_in_place": graph_passes.update_in_place,
          "fuse_elementwise": graph_passes.fuse_elementwise}
DEFAULT_PASSES = tuple(PASSES)


def resolve_passes(names):
    """Pass names (or pass functions) → [(name, function)]; None → all of them."""
    if names is None:
        names = DEFAULT_PASSES
    if isinstance(names, str):
        names = [names]
    resolved = []
    for p in names:
        if callable(p):
            resolved.append((p.__name__, p))
        elif p in PASSES:
            resolved.append((p, PASSES[p]))
        else:
            raise ValueError(f"Unknown graph pass {p!r}. The passes are {list(PASSES)}; "
                             "passes=[] runs the graph as traced.")
    return resolved


# ----------------------------------------------------------------------------- the graph
class FuncGraph(Graph):
    """The graph of a traced function, or of a branch of ``eg.cond`` / ``eg.while_loop``.

    Unlike a TF1 graph it may use values from outside:

    * an eager tensor or Variable becomes a ``Capture`` node, read each time the graph runs;
    * (branches) a tensor of the enclosing graph becomes a placeholder of this graph
      (``outer_captures``), fed by the cond/while node that runs the branch.

    Its stateful ops (assigns, control flow with assigns inside) run on every call, in the order
    they were written (TF2's automatic control dependencies), fetched or not.
    """

    places_when_run = False     # traced like eager code: a missing device is an error at once
    where_values_are = ("the traced function runs (eg.function, or a branch of eg.cond / "
                        "eg.while_loop being built). Return it from the function, or print it "
                        "each time it runs with eg.print(t)")

    def __init__(self, name="function", outer_graph=None, allow_variables=False,
                 checks_variables_made_once=False):
        super().__init__()
        self.name = name
        self.outer_graph = outer_graph
        self.allow_variables = allow_variables   # first trace of an eg.function only
        self.checks_variables_made_once = checks_variables_made_once   # (see Function._trace)
        self.variables_made = 0
        self.side_effects = []                  # ops that run on every call
        self.outer_captures = {}                # outer tensor → placeholder here (branches)
        self.variable_reads = {}                # id(eager tensor) → its Capture nodes here
        self._last_write = {}                   # id(variable) → the op that last wrote it

    @property
    def code_era(self):
        """A traced function's code is TF2's; a branch's is that of the graph around it."""
        return "tf2" if self.outer_graph is None else self.outer_graph.code_era

    # --------------------------------------------------------------- values from outside
    def _as_graph_tensor(self, value, ref, op):
        if isinstance(value, SymbolicTensor) and value.graph is not self:
            return self.capture_outer(value)
        if isinstance(value, Tensor) and value.graph is None:
            return self.capture_eager(value)
        return super()._as_graph_tensor(value, ref, op)

    def as_tensor(self, value):
        """``value`` (a tensor of this or an enclosing graph, an eager tensor, a number or an
        array) as a tensor of this graph."""
        if isinstance(value, SymbolicTensor) and value.graph is self:
            return value
        if isinstance(value, Tensor):
            return self._as_graph_tensor(value, None, None)
        return constant(value, graph=self)

    def capture_outer(self, tensor):
        """The placeholder standing for ``tensor`` of an enclosing graph."""
        if self.outer_graph is None or not _encloses(self.outer_graph, tensor.graph):
            where = f"the traced function '{tensor.graph.name}' (it leaked out of that " \
                "trace: return it instead)" if isinstance(tensor.graph, FuncGraph) else \
                "a TF1 graph (a traced function cannot read those)"
            raise TracingTypeError(
                f"Tensor {tensor.name} belongs to another graph and cannot be used in "
                f"'{self.name}': it was made in {where}. Pass its value in as an argument.")
        outer = tensor if tensor.graph is self.outer_graph else \
            self.outer_graph.capture_outer(tensor)
        inner = self.outer_captures.get(outer)
        if inner is None:
            with self.control_dependencies(None):
                inner = self.add_operation(Placeholder(outer.dtype, outer.shape), (),
                                           outer.shape, outer.dtype, _base_name(outer))
            inner.requires_grad = outer.requires_grad
            inner.op._device, inner.op.device = outer.op._device, outer.op.device
            self.outer_captures[outer] = inner
        return inner

    def capture_eager(self, tensor):
        """The node reading eager ``tensor`` here. In a branch that has not written it, the
        enclosing graph reads it (so gradients reach it there); after an assign to it in this
        graph, a fresh read that runs after the assign."""
        key = id(tensor)
        if self.outer_graph is not None and key not in self._last_write:
            return self.capture_outer(_graph_tensor(self.outer_graph, tensor))
        entry = self._captures.get(key)
        if entry is not None and entry[0] is tensor:
            return entry[1]
        write = self._last_write.get(key)
        with self.control_dependencies(None):
            node = self.add_operation(Capture(tensor), (), tensor.shape, tensor.dtype,
                                      tensor.name or "Capture",
                                      control_inputs=[write] if write is not None else ())
        node.requires_grad = tensor.requires_grad
        node.op._device = node.device = tensor.device
        self._captures[key] = (tensor, node)
        self.variable_reads.setdefault(key, []).append(node)
        return node

    def note_write(self, variable, op):
        """``op`` writes eager ``variable``: later reads here must read it again."""
        self._last_write[id(variable)] = op
        self._captures.pop(id(variable), None)

    @property
    def captures(self):
        """(eager tensor, Capture node) for every eager tensor or Variable this graph reads."""
        return [(node.op.eg_op._tensor, node) for nodes in self.variable_reads.values()
                for node in nodes]

    # --------------------------------------------------------------- recording
    def add_operation(self, op, inputs, shape, dtype, name=None, control_inputs=()):
        result = super().add_operation(op, inputs, shape, dtype, name, control_inputs)
        if isinstance(op, Assign) or getattr(op, "written_variables", None) or \
                getattr(op, "side_effect", False):
            node = result if isinstance(result, Operation) else result.op
            self.side_effects.append(node)
        return result

    def lift_variable(self, initial_value, dtype):
        """The eager tensor a Variable made while tracing starts from (it lives outside)."""
        if self.outer_graph is not None:
            raise ValueError(
                "Variables cannot be created inside eg.cond or eg.while_loop branches. Create "
                "them before (outside the branch functions).")
        if self.checks_variables_made_once:
            raise ValueError(
                f"eg.function '{self.name}' creates a variable each time its code runs: traced "
                "a second time (as TF does after a first trace that made variables), it made "
                "one again. Run eagerly, it would make a new variable on every call; traced, "
                "it would return the one made while tracing every time. As in TF, a traced "
                "function may make a variable only once: create it outside the function, or "
                "on the first call only (if self.v is None: self.v = eg.Variable(...)).")
        if not self.allow_variables:
            raise ValueError(
                f"eg.function '{self.name}' tried to create a variable on a call that is not "
                "its first trace. As in TF2, a traced function may create variables only the "
                "first time it is traced: create them outside (e.g. build the model, or call "
                "the optimizer once) before calling it with new argument shapes or types.")
        with context.building(None):
            value = initial_value() if callable(initial_value) else initial_value
        if isinstance(value, SymbolicTensor):
            computed = _computed_from_constants(value)
            if computed is None:
                raise ValueError(
                    f"eg.function '{self.name}': a variable's initial value must not depend "
                    f"on the function's tensors ({value.name}). Start it from a constant or an "
                    "initializer and assign the computed value: v.assign(...).")
            value = computed
        from ..tensor import tensor
        self.variables_made += 1
        with context.building(None):
            return tensor(value, dtype=dtype)


def _computed_from_constants(t):
    """The value of graph tensor ``t`` if it reads no argument, captured tensor or variable
    (``eg.ones([n, m])`` written in a traced function: TF computes a variable's initial value
    outside the function, eagerly), else None. (Random ops are left out: they draw when the
    graph runs.)"""
    ops = sorted(upstream_ops([t.op]), key=lambda op: op._id)
    if any(isinstance(op.eg_op, (Placeholder, Capture)) or not graph_passes._is_pure(op)
           for op in ops):
        return None
    values = {}
    for op in ops:
        values[op] = op.eg_op.value if isinstance(op.eg_op, Const) else \
            op.eg_op.forward(np, *[values[i.op] for i in op.inputs])
    return values[t.op]


def _encloses(graph, other):
    while graph is not None:
        if graph is other:
            return True
        graph = getattr(graph, "outer_graph", None)
    return False


def _base_name(tensor):
    return tensor.op.name.split("/")[-1]


def _graph_tensor(graph, value):
    """``value`` as a tensor of ``graph`` (a FuncGraph or a TF1 graph)."""
    if isinstance(graph, FuncGraph):
        return graph.as_tensor(value)
    if isinstance(value, SymbolicTensor):
        if value.graph is not graph:
            raise ValueError(f"Tensor {value.name} is not an element of this graph.")
        return value
    if isinstance(value, Tensor):
        from .ops import capture
        return capture(graph, value)
    return constant(value, graph=graph)


def graph_assign(variable, value, mode, name=None):
    """``v.assign(value)`` while a traced function or a branch of ``eg.cond`` /
    ``eg.while_loop`` is being built: an assign node *in that graph* (so that it runs when,
    and only when, that graph runs), writing an eager Variable's own storage, or a graph
    Variable's value in the running Session."""
    graph = context.state.graph
    if not isinstance(graph, FuncGraph) and isinstance(value, SymbolicTensor):
        graph = value.graph
    if not isinstance(graph, FuncGraph):
        raise TypeError(
            f"Cannot assign the graph tensor {value.name} to the eager variable "
            f"'{variable.name}': it has no value yet. Run it first (sess.run) or build the "
            "computation inside an @eg.function.")
    given = value
    value = graph.as_tensor(value) if isinstance(value, Tensor) else \
        constant(value, dtype=variable.dtype, graph=graph)
    shown = variable.name if variable.graph is None else variable.op.name
    check_assigned(shown, variable.dtype, variable.shape, value, given, mode)
    read = graph.as_tensor(variable)            # (an enclosing graph's variable: captured)
    name = name or {"assign": "Assign", "add": "AssignAdd", "sub": "AssignSub"}[mode]
    out = graph.add_operation(Assign(variable, mode), (read, value), variable.shape,
                              variable.dtype, name)
    out.op._exec_inputs = (value,)              # writes without reading the old value first
    graph.note_write(variable, out.op)
    return out


class _VariableValues:
    """Where Assign/ReadVariable nodes find a variable's value when a graph runs outside a
    Session (or inside a branch): an eager Variable's own storage, a graph variable's value in
    the session, if there is one."""

    def __init__(self, session_values=None):
        self._session = session_values

    def get(self, var, default=None):
        if var.graph is None:
            return var._value
        return default if self._session is None else self._session.get(var, default)

    def __getitem__(self, var):
        if var.graph is None:
            return var._value
        if self._session is None:
            raise KeyError(var)
        return self._session[var]

    def __setitem__(self, var, value):
        if var.graph is None:
            raise ValueError(f"Cannot assign a value of shape {tuple(value.shape)} to "
                             f"variable '{var.name}' of shape {var.shape}.")
        self._session[var] = value


_EAGER_VALUES = _VariableValues()


class _Bound:
    """What a ``Plan`` needs from a Session, for a graph that runs without one: the graph,
    the options, where variables live, and the passes for the branches inside."""

    optimize = False                        # the passes ran before: the plan only compiles

    def __init__(self, graph, variables, config, passes):
        self.graph, self._variables, self.config, self.passes = graph, variables, config, passes


def values_of(session):
    """The variable values a sub-graph run inside ``session`` reads and writes."""
    values = session._variables
    return values if isinstance(values, _VariableValues) else _VariableValues(values)


def passes_of(session):
    """The passes a sub-graph run inside ``session`` gets: the function's, or the Session's."""
    if isinstance(session, _Bound):
        return session.passes
    return resolve_passes(None) if session.optimize else []


def compile_graph(graph, fetches, feeds, passes, variables, config=None):
    """Optimise ``graph`` for ``fetches`` (tensors or ops) given ``feeds`` (placeholders) and
    compile it into a Session ``Plan``. Returns (plan, stages): ``stages`` is
    [(pass name, graph, fetches)] starting with ("traced", graph, fetches)."""
    fetches, feeds = list(fetches), list(feeds)
    n = len(fetches)
    stages = [("traced", graph, fetches)]
    outputs = fetches + feeds
    for name, optimization in passes:
        graph, outputs = optimization(graph, outputs)
        stages.append((name, graph, outputs[:n]))
    # (a returned read keeps the value it had where the function read it: TF2's program order)
    graph_passes.protect_reads(graph, outputs[:n])
    plan = Plan(_Bound(graph, variables, config or ConfigProto(), passes), outputs[:n],
                outputs[n:])
    # the values fed are arrays on their devices already (arguments, a node's inputs)
    plan.feed_slots = [(t, i, None) for t, i, _ in plan.feed_slots]
    return plan, stages


def run_on_devices(plan):
    """``plan.run`` with results left on their devices (a Session hands them to the host)."""
    devices_ = [d for d in plan.fetch_devices]
    if all(d is None or d.kind == "cpu" for d in devices_):
        return plan.run
    return lambda feeds: [r if d is None or d.kind == "cpu" or r is None else d.put(r)
                          for r, d in zip(plan.run(feeds), devices_)]


def fed_tensors(plan):
    """The tensors a plan's feed dictionary is keyed by, in the order of its feeds."""
    return [t for t, _, _ in plan.feed_slots]


# ----------------------------------------------------------------------------- signatures
class TensorSpec:
    """The shape and dtype a traced function accepts (``None`` for any size, ``shape=None``
    for any rank): ``@eg.function(input_signature=[eg.TensorSpec((None, 3), eg.float32)])``,
    or ``f.get_concrete_function(eg.TensorSpec(shape=[None], dtype=eg.int32))``."""

    def __init__(self, shape, dtype="float32", name=None):
        self.shape, self.dtype, self.name = TensorShape(shape), as_dtype(dtype), name

    def is_compatible_with(self, value):
        return np.dtype(value.dtype) == self.dtype and \
            self.shape.is_compatible_with(tuple(value.shape))

    def __repr__(self):
        return f"TensorSpec(shape={_tf2_shape(self.shape)}, dtype=eg.{self.dtype.name}, " \
            f"name={self.name!r})"


def _tf2_shape(shape):
    """A static shape as TF2 prints it: ``(None, 3)``, ``<unknown>`` for an unknown rank."""
    return "<unknown>" if not shape.rank_known else repr(tuple(shape))


_PYTHON_VALUES = (int, float, str, bool, bytes, type(None), complex)


def _signature_key(args, kwargs, leaves, keep):
    """The key a call's arguments select a trace by (see ``_signature``)."""
    key = _signature(args, leaves, keep)
    return (key, _signature(kwargs, leaves, keep)) if kwargs else key


def _signature(value, leaves, keep):
    """The part of the signature ``value`` gives; its tensor values are appended to
    ``leaves`` (the arrays to feed), objects known by identity to ``keep``. A tensor's part is
    (shape, dtype, device), the only 3-tuple in a signature (``_without_shapes`` relies on
    it); anything else is a pair."""
    cls = value.__class__
    if cls is Tensor:
        leaves.append(value._value)
        return value.shape, value.dtype, value.device
    if cls is np.ndarray or isinstance(value, np.generic):    # numpy data: a tensor too
        leaves.append(value)
        return value.shape, value.dtype, devices.cpu
    if cls is tuple or cls is list:
        return cls, tuple([_signature(v, leaves, keep) for v in value])
    if cls is dict:
        return dict, tuple([(k, _signature(v, leaves, keep)) for k, v in value.items()])
    if isinstance(value, Tensor):
        if isinstance(value, SymbolicTensor):
            raise TypeError(f"A traced function got the symbolic tensor {value.name}: call "
                            "it with eager tensors or arrays (inside another traced function "
                            "it is simply inlined).")
        if isinstance(value, Variable):         # captured by reference, as TF2 does
            keep.append(value)
            return "variable", id(value)
        leaves.append(value._value)
        return value.shape, value.dtype, value.device
    if isinstance(value, _PYTHON_VALUES):
        return cls, value
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return cls, tuple([_signature(v, leaves, keep) for v in value])
    if cls is TensorSpec:                       # (get_concrete_function(eg.TensorSpec(...)))
        return tuple(value.shape) if value.shape.rank_known else None, value.dtype, \
            devices.cpu
    keep.append(value)
    return "object", id(value)


def _without_shapes(key, shapes):
    """``key`` with every tensor's shape taken out and appended to ``shapes``: the part of a
    signature that must match exactly (TF's trace types; shapes may match by subtyping)."""
    if isinstance(key, tuple):
        if len(key) == 3 and isinstance(key[2], devices.Device):
            shapes.append(TensorShape(key[0]))
            return None, key[1], key[2]
        return tuple([_without_shapes(k, shapes) for k in key])
    return key


def _fits(trace_shapes, shapes):
    """Do arguments of ``shapes`` fit placeholders of ``trace_shapes``?"""
    return all(t.is_compatible_with(tuple(s)) if s.rank_known else not t.rank_known
               for t, s in zip(trace_shapes, shapes))


def _common_shapes(a, b):
    """The most specific shapes that both ``a`` and ``b`` fit: sizes that differ become
    ``None``, ranks that differ an unknown rank (``reduce_retracing``)."""
    return [TensorShape([x if x == y else None for x, y in zip(s, t)])
            if s.rank_known and t.rank_known and len(s) == len(t) else TensorShape(None)
            for s, t in zip(a, b)]


def _placeholders(value, name, made, graph, shapes=None):
    """The traced version of argument ``value``: its tensors become placeholders, of the
    shapes ``shapes`` gives in turn when it is given (a relaxed trace)."""
    if isinstance(value, (np.ndarray, np.generic, TensorSpec)) or (
            isinstance(value, Tensor) and not isinstance(value, Variable)):
        shape = TensorShape(value.shape) if shapes is None else next(shapes)
        t = graph.add_operation(Placeholder(np.dtype(value.dtype), shape),
                                (), shape, value.dtype, getattr(value, "name", None) or name
                                if isinstance(value, TensorSpec) else name)
        if isinstance(value, Tensor):           # fed where the argument lives
            t.op._device = t.device = value.device
            t.op.device = f"/device:{value.device.kind.upper()}:{value.device.index}"
        made.append(t)
        return t
    if isinstance(value, dict):
        return {k: _placeholders(v, f"{name}_{k}", made, graph, shapes)
                for k, v in value.items()}
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_placeholders(v, f"{name}_{i}", made, graph, shapes)
                             for i, v in enumerate(value)])
    if isinstance(value, (list, tuple)):
        return type(value)(_placeholders(v, f"{name}_{i}", made, graph, shapes)
                           for i, v in enumerate(value))
    return value


def _spec_placeholders(spec, name, made, graph):
    if isinstance(spec, TensorSpec):
        t = graph.add_operation(Placeholder(spec.dtype, spec.shape), (), spec.shape,
                                spec.dtype, spec.name or name)
        made.append(t)
        return t
    if isinstance(spec, dict):
        return {k: _spec_placeholders(v, f"{name}_{k}", made, graph) for k, v in spec.items()}
    if isinstance(spec, (list, tuple)):
        return type(spec)(_spec_placeholders(v, f"{name}_{i}", made, graph)
                          for i, v in enumerate(spec))
    raise TypeError(f"input_signature entries must be eg.TensorSpec (or nests of them), "
                    f"not {type(spec).__name__}.")


# ----------------------------------------------------------------------------- functions
class Function:
    """A Python function traced into graphs, one ``ConcreteFunction`` per input signature."""

    def __init__(self, fn, passes=None, input_signature=None, name=None, autograph=True,
                 reduce_retracing=False):
        functools.update_wrapper(self, fn)
        self.python_function = fn
        self.name = name or getattr(fn, "__name__", "function")
        self.passes = resolve_passes(passes)
        self._passes_named = passes
        self.input_signature = None if input_signature is None else list(input_signature)
        self.autograph, self.reduce_retracing = autograph, reduce_retracing
        self._concrete = {}                 # signature → ConcreteFunction
        self._traces = []                   # every ConcreteFunction, in tracing order
        self._tracing_count = 0
        self._methods = weakref.WeakKeyDictionary()

    def __get__(self, instance, owner):
        """``@eg.function`` on a method: one Function per object (its own traces)."""
        if instance is None:
            return self
        bound = self._methods.get(instance)
        if bound is None:
            bound = self._methods[instance] = Function(
                self.python_function.__get__(instance, owner), self._passes_named,
                self.input_signature, self.name, self.autograph, self.reduce_retracing)
        return bound

    def _graph_code(self):
        """The Python function that tracing runs: converted by AutoGraph (``autograph/``,
        once, on first use) unless ``autograph=False``."""
        if not self.autograph:
            return self.python_function
        from ..autograph import convert
        return convert(self.python_function)

    def __call__(self, *args, **kwargs):
        if context.state.graph is not None:     # inside another traced function or a graph:
            with context.inlined_function():    # inline it, as TF2 does
                return self._graph_code()(*args, **kwargs)
        leaves, keep = [], []
        if self.input_signature is None:
            key = _signature_key(args, kwargs, leaves, keep)
        else:
            args = tuple(_as_specified(a, s) for a, s in zip(args, self.input_signature)) + \
                args[len(self.input_signature):]
            key = self._check_signature(args, kwargs, leaves)
        concrete = self._concrete.get(key)
        if concrete is None:
            concrete = self._matching(key) or self._trace(args, kwargs, key, keep)
        return concrete._call(args, kwargs, leaves)

    def _matching(self, key):
        """A trace whose placeholders accept arguments of signature ``key`` though it is not
        theirs (TF's subtyping: a trace for shape (None,) takes a (5,) tensor; of several, the
        most specific), remembered for ``key``; None if there is none."""
        if key == "input_signature":
            return None
        shapes = []
        exact = _without_shapes(key, shapes)
        fits = [cf for cf in self._traces
                if cf.without_shapes == exact and _fits(cf.input_shapes, shapes)]
        if not fits:
            return None
        best = min(fits, key=lambda cf: sum(s.rank_known and s.count(None) or 100
                                            for s in cf.input_shapes))
        self._concrete[key] = best
        return best

    def _check_signature(self, args, kwargs, leaves):
        if kwargs:
            raise TypeError(f"'{self.name}' has an input_signature: pass its arguments by "
                            "position.")
        flat_specs = _flatten_specs(self.input_signature)
        keep = []
        _signature(tuple(args), leaves, keep)
        if len(args) != len(self.input_signature) or keep or len(leaves) != len(flat_specs) \
                or not all(s.is_compatible_with(v) for s, v in zip(flat_specs, leaves)):
            got = [f"{tuple(np.shape(a))} {np.dtype(a.dtype)}" if hasattr(a, "dtype") else
                   reprlib.repr(a) for a in args]
            raise TracingTypeError(f"'{self.name}' was called with {len(args)} argument(s) "
                                   f"({', '.join(got)}) that do not match its input_signature "
                                   f"{self.input_signature}. Pass tensors of those shapes and "
                                   "dtypes (None: any size).")
        return "input_signature"

    def _trace(self, args, kwargs, key, keep):
        """Trace into a new ConcreteFunction. A first trace that made variables is followed at
        once by a second, as in TF, which must make none: a function whose code makes a
        variable on every run would, traced, return the same one on every call (that trace
        is thrown away, and counted, as TF counts it).

        With ``reduce_retracing``, a call that differs from an earlier trace only in its
        tensors' shapes is traced with the shapes both fit (sizes that differ become None),
        so that later such calls reuse it."""
        shapes, exact = None, None
        if key != "input_signature":
            given = []
            exact = _without_shapes(key, given)
            earlier = [cf for cf in self._traces if cf.without_shapes == exact]
            if self.reduce_retracing and earlier:
                shapes = _common_shapes(earlier[-1].input_shapes, given)
        graph = FuncGraph(self.name, allow_variables=not self._traces)
        inputs, result, call = self._run_python(graph, args, kwargs, shapes)
        self._tracing_count += 1
        if graph.variables_made:
            self._run_python(FuncGraph(self.name, checks_variables_made_once=True), args, kwargs,
                             shapes)
            self._tracing_count += 1
        concrete = ConcreteFunction(graph, inputs, result, self.passes, self.name, keep)
        concrete.without_shapes, concrete.call_arguments = exact, call
        concrete.input_shapes = [t.shape for t in inputs]
        self._concrete[key] = concrete
        self._traces.append(concrete)
        return concrete

    def _run_python(self, graph, args, kwargs, shapes=None):
        """Run the Python function into ``graph`` on placeholders for the arguments' tensors
        (of ``shapes``, if given); returns (the placeholders, what it returned, the traced
        arguments bound to the parameters' names)."""
        inputs = []
        names = _argument_names(self.python_function, args, kwargs)
        shapes = None if shapes is None else iter(shapes)
        with context.building(graph), _device_of(args, kwargs):
            if self.input_signature is not None:
                targs = tuple(_spec_placeholders(s, n, inputs, graph)
                              for s, n in zip(self.input_signature, names))
                tkwargs = {}
            else:
                targs = tuple(_placeholders(a, n, inputs, graph, shapes)
                              for a, n in zip(args, names))
                tkwargs = {k: _placeholders(v, k, inputs, graph, shapes)
                           for k, v in kwargs.items()}
            result = self._graph_code()(*targs, **tkwargs)
        if self.autograph:
            from ..autograph.operators import check_defined
            check_defined(result)
        return inputs, result, _bound_arguments(self.python_function, targs, tkwargs)

    def get_concrete_function(self, *args, **kwargs):
        """The ``ConcreteFunction`` for these arguments (traced now if it is new). A
        ``eg.TensorSpec`` stands for any tensor it describes: ``f.get_concrete_function(
        eg.TensorSpec(shape=[None], dtype=eg.float32))``."""
        if context.state.graph is not None:
            raise RuntimeError("get_concrete_function() is called eagerly, not while "
                               "building a graph.")
        leaves, keep = [], []
        if self.input_signature is None:
            key = _signature_key(args, kwargs, leaves, keep)
        else:
            key = "input_signature"
            if key not in self._concrete:
                args = tuple(_zeros_for(s) for s in self.input_signature)
        return self._concrete.get(key) or self._matching(key) or \
            self._trace(args, kwargs, key, keep)

    def experimental_get_tracing_count(self):
        """How many times the Python function was traced (TF's name)."""
        return self._tracing_count

    @property
    def concrete_functions(self):
        return list(self._traces)

    def pretty_printed_concrete_signatures(self, verbose=True):
        """Each trace's arguments, result and captured tensors, as TF prints them."""
        return "\n\n".join(cf.pretty_printed_signature() for cf in self._traces)

    def __repr__(self):
        return f"<eg.function '{self.name}': {self._tracing_count} trace(s)>"


def _bound_arguments(fn, args, kwargs):
    """{parameter name: (kind, traced value)} for a call of ``fn``."""
    try:
        signature = inspect.signature(fn)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return {f"arg{i}": ("POSITIONAL_ONLY", a) for i, a in enumerate(args)} | \
            {k: ("KEYWORD_ONLY", v) for k, v in kwargs.items()}
    return {name: (signature.parameters[name].kind.name, value)
            for name, value in bound.arguments.items()}


def _as_specified(value, spec):
    """``value`` for an argument of the input signature ``spec``: numpy data and Python numbers
    (or lists of them) take the spec's dtype, as TF converts them ([1., 2.] or a float64 array
    for a float32 spec); a tensor stays as it is (TF converts no tensor), and so does a value
    that would lose its fraction (floats for an integer spec: the signature refuses it)."""
    if isinstance(spec, TensorSpec):
        if isinstance(value, Tensor) or spec.dtype is None:
            return value
        try:
            array = np.asarray(value)
        except ValueError:                      # (ragged lists: the signature refuses them)
            return value
        if array.dtype.kind not in "biuf" or (array.dtype.kind == "f" and
                                              spec.dtype.kind in "iu"):
            return value
        return array.astype(spec.dtype, copy=False)
    if isinstance(spec, dict) and isinstance(value, dict):
        return {k: _as_specified(v, spec[k]) if k in spec else v for k, v in value.items()}
    if isinstance(spec, (list, tuple)) and isinstance(value, (list, tuple)) and \
            len(spec) == len(value):
        return type(value)(_as_specified(v, s) for v, s in zip(value, spec))
    return value


def _flatten_specs(specs):
    flat = []
    for s in specs:
        if isinstance(s, TensorSpec):
            flat.append(s)
        elif isinstance(s, dict):
            flat += _flatten_specs(list(s.values()))
        else:
            flat += _flatten_specs(s)
    return flat


def _zeros_for(spec):
    if isinstance(spec, TensorSpec):
        return np.zeros([1 if d is None else d for d in spec.shape], spec.dtype)
    if isinstance(spec, dict):
        return {k: _zeros_for(v) for k, v in spec.items()}
    return type(spec)(_zeros_for(s) for s in spec)


def _device_of(args, kwargs):
    """Ops of a function called on tensors of an accelerator are placed there."""
    for leaf in nest.flatten([args, kwargs]):
        if isinstance(leaf, Tensor) and leaf.device.kind != "cpu":
            return devices.device(leaf.device)
    return contextlib.nullcontext()


def _argument_names(fn, args, kwargs):
    """Names for the positional arguments' placeholders: the parameter names."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(len(args)):
        if i < len(params) and params[i].kind in (params[i].POSITIONAL_ONLY,
                                                  params[i].POSITIONAL_OR_KEYWORD):
            names.append(params[i].name)
        elif params and params[-1].kind is params[-1].VAR_POSITIONAL:
            names.append(f"{params[-1].name}_{i}")
        else:
            names.append(f"arg{i}")
    return names


class ConcreteFunction:
    """One trace of a function: its graph, compiled once, run by calling it.

    Attributes (the interface the inspector and the lessons read):

    * ``graph``: the ``FuncGraph`` as traced (every op the Python code built);
    * ``inputs``: the placeholders, one per tensor argument, in argument order (nested
      arguments flattened depth first); ``captures``: (eager tensor or Variable, its Capture
      node) for what the function reads from outside, each read when the graph runs;
    * ``outputs``: the returned graph tensors, flattened; ``structured_outputs``: the return
      value as traced (its nesting, with graph tensors and any Python values);
    * ``side_effects``: the ops that run on every call though nothing returns them (assigns);
    * ``pass_stages``: [(name, graph, outputs)]: ``("traced", graph, outputs)`` and then the
      graph after each optimisation pass, so each pass can be shown before and after;
    * ``optimized_graph``, ``optimized_outputs``: the last stage, what a call runs;
    * ``passes``: the names of the passes that ran.

    ``cf(*args)`` runs it with tensors for the placeholders (same nesting as the trace);
    ``summary()`` prints the node counts of each stage.
    """

    def __init__(self, graph, inputs, structured_outputs, passes, name="function", keep=()):
        self.name = name
        self.graph = graph
        self.inputs = list(inputs)
        self._keep = list(keep)                  # objects the signature knows by identity
        self.structured_outputs = _outputs_in(graph, structured_outputs)
        self.outputs = [t for t in nest.flatten(self.structured_outputs)
                        if isinstance(t, SymbolicTensor)]
        self.side_effects = list(graph.side_effects)
        self.passes = [n for n, _ in passes]
        fetches = self.outputs + self.side_effects
        self._plan, stages = compile_graph(graph, fetches, self.inputs, passes, _EAGER_VALUES)
        n = len(self.outputs)
        self.pass_stages = [(name, g, outs[:n]) for name, g, outs in stages]
        _, self.optimized_graph, self.optimized_outputs = self.pass_stages[-1]
        self._rebuild = _rebuilder(self.structured_outputs, self.outputs)
        self._devices = [t.op._device for t in self.outputs]
        self._run_plan = run_on_devices(self._plan)
        self._feeds = fed_tensors(self._plan)
        self._resolved_passes = passes
        self._recording_plan = self._replay_plan = None
        self._gradient_plans = {}
        # what the tracing call was (set by Function._trace): its signature without the
        # tensors' shapes, the placeholders' shapes, and {parameter: (kind, traced value)}
        self.without_shapes, self.call_arguments = None, {}
        self.input_shapes = [t.shape for t in self.inputs]

    @property
    def captures(self):
        return self.graph.captures

    def __call__(self, *args, **kwargs):
        for name in [k for k in kwargs if k in self.call_arguments]:
            _, traced = self.call_arguments[name]
            if not _is_traced_tensor(traced):
                given = kwargs.pop(name)
                if not (type(given) is type(traced) and given == traced):
                    raise TypeError(f"{self.name} was traced with {name}={traced!r}, which is "
                                    f"part of its graph; it cannot take {name}={given!r}. "
                                    "Call the eg.function itself (it traces again), or get "
                                    "the concrete function for that value.")
        leaves, keep = [], []
        _signature((args, kwargs) if kwargs else args, leaves, keep)
        if len(leaves) != len(self.inputs):
            raise TypeError(f"{self.name} takes {len(self.inputs)} tensor argument(s), "
                            f"got {len(leaves)}.")
        for t, v in zip(self.inputs, leaves):
            if np.dtype(v.dtype) != t.dtype or not t.shape.is_compatible_with(tuple(v.shape)):
                raise ValueError(f"{self.name}: argument for {t.op.name} has shape "
                                 f"{tuple(v.shape)} and dtype {v.dtype}, but the trace "
                                 f"expects shape {t.shape} and dtype {t.dtype}.")
        return self._call(args, kwargs, leaves)

    def _call(self, args, kwargs, arrays):
        """Run on the argument ``arrays``; recorded for backward (as one node per output)
        where an argument requires a gradient or a GradientTape is recording."""
        state = context.state
        if state.grad_enabled and (state.tapes or _requires_grad(args) or
                                   (kwargs and _requires_grad(kwargs.values()))):
            sources = self._sources(args, kwargs)
            if sources:
                return self._run_recorded(arrays, sources)
        return self._run(arrays)

    def _run(self, arrays):
        results = self._run_plan(dict(zip(self._feeds, arrays)))
        return self._rebuild([Tensor(r, d) for r, d in zip(results, self._devices)])

    # --------------------------------------------------------------- differentiating a call
    def _sources(self, args, kwargs):
        """[(graph tensor, eager tensor)] for what a gradient of this call can reach: argument
        tensors that require a gradient and, under a tape, captured tensors (Variables) at
        their first read. Empty: nothing to record."""
        arguments = [v for v in nest.flatten((args, kwargs) if kwargs else args)
                     if isinstance(v, (Tensor, np.ndarray, np.generic))
                     and not isinstance(v, Variable)]
        sources = [(t, v) for t, v in zip(self.inputs, arguments)
                   if isinstance(v, Tensor) and v.requires_grad]
        if sources or context.state.tapes:
            sources += [(node, tensor) for tensor, node in self.captures
                        if tensor.requires_grad and not node.op.control_inputs]
        return sources if any(s.dtype.kind == "f" for _, s in sources) else []

    def _run_recorded(self, arrays, sources):
        """The call as eager nodes: each float output gets a ``CallOutput`` whose backward
        runs the gradient graph of this trace on the values this call read."""
        reads = [node for _, node in self.captures]
        if self._recording_plan is None:
            plan, _ = compile_graph(self.graph, self.outputs + self.side_effects + reads,
                                    self.inputs, self._resolved_passes, _EAGER_VALUES)
            self._recording_plan = (run_on_devices(plan), fed_tensors(plan))
        run, feeds = self._recording_plan
        results = run(dict(zip(feeds, arrays)))
        n = len(self.outputs)
        # (a read that an assign of this call overwrites in place comes back as a copy:
        # protect_reads, as for any fetch needed after a write)
        read_values = results[n + len(self.side_effects):]
        replay = dict(zip(self.inputs, arrays)) | dict(zip(reads, read_values))
        inputs = tuple(tensor for _, tensor in sources)
        outputs = []
        for index, (value, device) in enumerate(zip(results[:n], self._devices)):
            out = Tensor(value, device)
            if value.dtype.kind == "f":
                out.requires_grad = True
                out._op, out._inputs = CallOutput(self, index, sources, replay), inputs
                out._seq = context.next_sequence()
            outputs.append(out)
        return self._rebuild(outputs)

    def _gradient_plan(self, index, sources):
        """Gradients of output ``index`` (seeded by a fed upstream gradient) with respect to
        ``sources``, compiled on a copy of the traced graph (the trace itself stays as is)."""
        key = (index, tuple(t for t, _ in sources))
        if key not in self._gradient_plans:
            reads = [node for _, node in self.captures]
            fixed = self.inputs + reads         # fed with the values the call read
            targets = [t for t, _ in sources]
            copy, mapped = graph_passes.rewrite(self.graph, [self.outputs[index]] + fixed +
                                                targets)
            output, fixed_copy = mapped[0], mapped[1:1 + len(fixed)]
            with context.building(copy):
                upstream = copy.add_operation(Placeholder(output.dtype, output.shape), (),
                                              output.shape, output.dtype, "upstream")
                grads = gradients([output], mapped[1 + len(fixed):], grad_ys=[upstream])
            present = [g for g in grads if g is not None]
            plan, _ = compile_graph(copy, present, fixed_copy + [upstream],
                                    self._resolved_passes, _EAGER_VALUES)
            self._gradient_plans[key] = (run_on_devices(plan), fed_tensors(plan), fixed,
                                         [g is not None for g in grads])
        return self._gradient_plans[key]

    def output_for(self, index, feeds):
        """Output ``index`` recomputed from ``feeds`` (arguments and variable reads), with no
        side effects: how the inspector re-runs a recorded call."""
        if self._replay_plan is None:
            reads = [node for _, node in self.captures]
            plan, _ = compile_graph(self.graph, self.outputs, self.inputs + reads,
                                    self._resolved_passes, _EAGER_VALUES)
            self._replay_plan = (run_on_devices(plan), fed_tensors(plan), self.inputs + reads)
        run, fed, fixed = self._replay_plan
        return run(dict(zip(fed, [feeds[t] for t in fixed])))[index]

    def call_gradients(self, index, upstream, sources, replay):
        """d(output ``index``)/d(each source) · ``upstream``, as eager tensors (None where the
        output does not depend on a source)."""
        run, feeds, fixed, present = self._gradient_plan(index, sources)
        values = iter(run(dict(zip(feeds, [replay[t] for t in fixed] + [upstream._value]))))
        return [Tensor(next(values), tensor.device) if has else None
                for has, (_, tensor) in zip(present, sources)]

    def pretty_printed_signature(self, verbose=True):
        """The arguments, result and captured tensors of this trace, in TF's layout."""
        lines = ["Input Parameters:"]
        lines += [f"  {name} ({kind}): {_trace_type(value)}"
                  for name, (kind, value) in self.call_arguments.items()]
        lines += ["Output Type:", f"  {_trace_type(self.structured_outputs)}", "Captures:"]
        lines += [f"  {tensor.name or node.name}: "
                  f"{TensorSpec(tensor.shape, tensor.dtype)}"
                  for tensor, node in self.captures] or ["  None"]
        return "\n".join(lines)

    def op_counts(self):
        """[(stage name, number of ops)] for each stage of ``pass_stages``."""
        return [(name, len(g.get_operations())) for name, g, _ in self.pass_stages]

    def summary(self, print_fn=print):
        """Print the ops each pass left (and what it removed)."""
        lines = [f"ConcreteFunction '{self.name}': {len(self.inputs)} input(s), "
                 f"{len(self.outputs)} output(s), {len(self.captures)} capture(s)"]
        previous = None
        for name, count in self.op_counts():
            change = "" if previous is None else f"  ({count - previous:+d})"
            lines.append(f"  {name:<32} {count:4d} ops{change}")
            previous = count
        print_fn("\n".join(lines))

    def __repr__(self):
        counts = self.op_counts()
        return (f"<ConcreteFunction '{self.name}' inputs={[t.name for t in self.inputs]} "
                f"ops: {counts[0][1]} traced → {counts[-1][1]} optimized>")


def _is_traced_tensor(value):
    return any(isinstance(leaf, (SymbolicTensor, Variable)) for leaf in nest.flatten(value))


def _trace_type(value):
    """How TF's signatures print an argument or result: a tensor as its TensorSpec, a Python
    value as ``Literal[...]``, containers by their parts."""
    if isinstance(value, SymbolicTensor):
        return repr(TensorSpec(value.shape, value.dtype))
    if isinstance(value, Variable):
        return f"Variable '{value.name}': {TensorSpec(value.shape, value.dtype)}"
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return f"{type(value).__name__}[{', '.join(_trace_type(v) for v in value)}]"
    if isinstance(value, (list, tuple)):
        kind = "List" if isinstance(value, list) else "Tuple"
        return f"{kind}[{', '.join(_trace_type(v) for v in value)}]"
    if isinstance(value, dict):
        return "Dict[" + ", ".join(f"[{k!r}, {_trace_type(v)}]" for k, v in value.items()) + "]"
    if value is None or isinstance(value, _PYTHON_VALUES):
        return f"Literal[{value!r}]"
    return f"{type(value).__name__} object (by identity)"


def _requires_grad(values):
    """Does any tensor among ``values`` (nested in lists, tuples, dicts) require a gradient?
    (On every call: kept to a plain loop.)"""
    for v in values:
        if isinstance(v, Tensor):
            if v.requires_grad:
                return True
        elif isinstance(v, (list, tuple)):
            if _requires_grad(v):
                return True
        elif isinstance(v, dict):
            if _requires_grad(v.values()):
                return True
    return False


class CallOutput(Op):
    """Output ``index`` of one call of a traced function, as a node of the eager tape: a
    GradientTape (or ``backward()``) around the call differentiates through it, as in TF2.
    Its backward runs the gradient graph of the trace on the values the call read."""

    name = "call"

    def __init__(self, concrete, index, sources, replay):
        self._concrete, self._index = concrete, index
        self._sources, self._replay = sources, replay

    def _feeds(self, inputs):
        """The values the call read, with a source replaced where ``inputs`` holds another
        tensor (the inspector re-running the node with a slider's value)."""
        feeds = dict(self._replay)
        for (node, recorded), given in zip(self._sources, inputs):
            if given is not recorded:
                feeds[node] = given._value if isinstance(given, Tensor) else given
        return feeds

    def forward(self, xp, *values):
        return self._concrete.output_for(self._index, self._feeds(values))

    def backward(self, grad, out, *inputs):
        if context.state.grad_enabled:
            raise GradientError(
                f"A second derivative through a call of the traced function "
                f"'{self._concrete.name}' is not supported: take the gradients inside the "
                "function (nested GradientTapes work there), or call it untraced.")
        return self._concrete.call_gradients(self._index, grad, self._sources,
                                             self._feeds(inputs))


def _outputs_in(graph, value):
    """The return value with every tensor made a tensor of ``graph`` (an eager one returned
    from the function — a Variable — is read when the function runs)."""
    def inside(leaf):
        if isinstance(leaf, Tensor):
            return graph.as_tensor(leaf)
        if isinstance(leaf, Operation):
            if leaf.graph is graph and leaf not in graph.side_effects:
                graph.side_effects.append(leaf)     # a returned op runs (and gives None)
            return None
        return leaf
    return nest.map_structure(inside, value)


def _rebuilder(structure, outputs):
    """A function from the outputs' values (in order) to the return value's nesting."""
    if isinstance(structure, SymbolicTensor) and len(outputs) == 1:
        return lambda values: values[0]
    position = {id(t): i for i, t in enumerate(outputs)}

    def build(values):
        return nest.map_structure(
            lambda leaf: values[position[id(leaf)]] if isinstance(leaf, SymbolicTensor)
            else leaf, structure)
    return build


def function(fn=None, *, passes=None, input_signature=None, name=None, autograph=True,
             reduce_retracing=False, experimental_relax_shapes=None, jit_compile=None):
    """Trace ``fn`` into a graph on its first call with each new signature (TF2's
    ``tf.function``). ``passes``: the names of the optimisation passes to run (default all of
    ``prune``, ``fold_constants``, ``eliminate_common_subexpressions``, ``update_in_place``,
    ``fuse_elementwise``; ``[]`` runs the graph as traced).

    ``autograph``: rewrite ``if``/``while``/``for`` on tensors into ``eg.cond`` /
    ``eg.while_loop`` first (``edugraph/autograph``); False traces the code as written.
    ``reduce_retracing`` (TF1.x's ``experimental_relax_shapes``): a call whose tensors differ
    from a trace's only in their sizes is traced once more for any size (None), not once per
    size. ``jit_compile`` is accepted: edugraph has no XLA, the graph runs as it does without.

    >>> @eg.function
    ... def f(x, y):
    ...     return eg.reduce_sum(x * y)
    """
    relax = bool(reduce_retracing or experimental_relax_shapes)
    if fn is None:
        return lambda f: Function(f, passes, input_signature, name, autograph, relax)
    return Function(fn, passes, input_signature, name, autograph, relax)


def tape_gradient(target, sources, output_gradients=None, unconnected_gradients="none",
                  tape_ops=None):
    """``tape.gradient`` inside a traced function: gradient nodes in its graph
    (``eg.gradients``). A source may be a graph tensor or an eager Variable the function
    reads (its gradient sums over every read of it). ``tape_ops``: (graph, first, end), the
    ops the tape's block made; the gradient goes through those only, as TF's tape records
    only them (an op made before or after the block passes no gradient on)."""
    from .gradients import gradients
    targets = target if isinstance(target, (list, tuple)) else [target]
    graph = next(t.graph for t in targets if isinstance(t, SymbolicTensor))
    stops = ()
    if tape_ops is not None and tape_ops[0] is graph:
        _, first, end = tape_ops                    # (end None: the block is still open)
        operations = graph.get_operations()
        outside = operations[:first] + (operations[end:] if end is not None else [])
        stops = [t for op in outside for t in op.outputs]
    flat, rebuild = flatten_sources(sources)
    xs, owners = [], []
    for i, s in enumerate(flat):
        if isinstance(s, SymbolicTensor):
            reads = [s] if s.graph is graph else []
        else:
            reads = graph.variable_reads.get(id(s), []) if isinstance(graph, FuncGraph) \
                else []
        xs += reads
        owners += [i] * len(reads)
    grad_ys = None
    if output_gradients is not None:
        grad_ys = [graph.as_tensor(g) if g is not None else None for g in
                   (output_gradients if isinstance(output_gradients, (list, tuple))
                    else [output_gradients])]
    ys = [graph.as_tensor(t) if not isinstance(t, SymbolicTensor) else t for t in targets]
    result = [None] * len(flat)
    with context.building(graph):
        grads = gradients(ys, xs, grad_ys=grad_ys, stop_gradients=stops) if xs else []
        for i, g in zip(owners, grads):
            if g is not None:
                result[i] = g if result[i] is None else result[i] + g
        result = fill_unconnected(result, flat, unconnected_gradients)
    return rebuild(result)
