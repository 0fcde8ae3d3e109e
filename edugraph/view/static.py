"""A view of a static graph (or a traced function's graph): every value from one ``Session.run``.

The gradients are then walked by hand on those values, exactly as for an eager result, so the
gradient at a node is what ``eg.gradients(loss, node)`` computes. Nodes that write a variable
are shown but not run: looking at a training step never takes it.
"""
import re

import numpy as np

from .. import nest
from ..context import enable_grad
from ..tensor import Tensor
from ..variable import Variable
from .model import Edge, GraphView, Node
from .numbers import number


# ----------------------------------------------------------------------------- traced functions
def _from_function(fn, args, optimized, title, output):
    """A traced function's graph (as traced, or optimised) run in a Session with ``args``."""
    from ..graph.session import Session
    if args is None:
        raise TypeError(f"graph_view of the traced function '{fn.name}' needs the values of its "
                        "arguments, to feed its placeholders: graph_view(f, args=(x, w, b)).")
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    concrete = fn.get_concrete_function(*args) if hasattr(fn, "get_concrete_function") else fn
    graph = concrete.optimized_graph if optimized else concrete.graph
    outputs = concrete.optimized_outputs if optimized else concrete.outputs
    stage = "optimised: " + ", ".join(concrete.passes) if optimized else "as traced"
    if isinstance(optimized, str):          # the graph just after that pass
        stages = {name: (g, outs) for name, g, outs in concrete.pass_stages}
        if optimized not in stages:
            raise ValueError(f"'{concrete.name}' has no stage {optimized!r}; its stages are "
                             f"{list(stages)} (optimized=True: after all of them).")
        (graph, outputs), stage = stages[optimized], f"after {optimized}"
    values = _argument_values(concrete, args)
    feeds = {}
    for placeholder, value in zip(concrete.inputs, values):
        name = placeholder.op.name
        if optimized:               # the passes copied the graph: find it there by name
            found = [op for op in graph.get_operations() if op.name == name]
            if not found:
                continue            # an argument the function does not use was pruned away
            placeholder = found[0].outputs[0]
        feeds[placeholder] = value
    if output is None:
        output = next((t for t in outputs if t.dtype.kind == "f"), None)
    title = title or f"{concrete.name} ({stage})"
    return _from_graph(graph, Session(graph=graph), feeds, title, output)


def _argument_values(concrete, args):
    """The arrays for the function's placeholders, from the arguments it is called with."""
    leaves = nest.flatten(args)
    tensors = [a for a in leaves if isinstance(a, (Tensor, np.ndarray, np.generic))]
    values = tensors if len(tensors) == len(concrete.inputs) else leaves
    if len(values) != len(concrete.inputs):
        names = ", ".join(t.op.name for t in concrete.inputs)
        raise ValueError(f"'{concrete.name}' was traced with {len(concrete.inputs)} tensor "
                         f"argument(s) ({names}); args= gives {len(tensors)} tensor(s). Pass "
                         "the arguments you would call it with, e.g. args=(x, w, b).")
    return [v.numpy() if isinstance(v, Tensor) else np.asarray(v, dtype=t.dtype)
            for v, t in zip(values, concrete.inputs)]


# ----------------------------------------------------------------------------- static graphs
_GRADIENT_SCOPE = re.compile(r"(.*/)?gradients(_\d+)?/")    # where eg.gradients builds


def _from_graph(target, session, feed_dict, title, output):
    """Every node's value from one ``session.run``; gradients by the eager walk on them."""
    from ..graph.core import Const, Placeholder
    from ..graph.ops import Capture, ReadVariable
    graph, ops, output = _static_nodes(target, output)
    session = _session_for(graph, session, target)
    feeds = {}
    for key, value in (feed_dict or {}).items():
        t = graph.as_graph_element(key) if isinstance(key, str) else key
        feeds[t] = value.numpy() if isinstance(value, Tensor) and value.graph is None else value
    effects = _effects(ops)
    fetched = [op for op in ops if op.outputs and op not in effects and
               not hasattr(op.eg_op, "output_class")]      # (tuple-valued control flow)
    missing = [op for op in fetched if isinstance(op.eg_op, Placeholder) and
               op.outputs[0] not in feeds]
    if missing:
        wanted = ", ".join(f"'{op.name}' (shape {op.outputs[0].shape}, "
                           f"{op.outputs[0].dtype.name})" for op in missing)
        example = ", ".join(f"{op.name}: ..." for op in missing)
        raise ValueError(f"The graph needs a value for placeholder {wanted} to compute the "
                         f"nodes shown. Pass it: feed_dict={{{example}}}.")

    ids = {op: f"n{i}" for i, op in enumerate(ops)}
    run_here = set(fetched)
    nodes, edges, controls, eg_ops, devices = [], [], [], {}, {}
    for op in ops:
        node_id, out = ids[op], (op.outputs[0] if op.outputs else None)
        scope, _, label = op.name.rpartition("/")
        eg_op = op.eg_op
        if isinstance(eg_op, Placeholder):
            kind = "placeholder"
        elif isinstance(eg_op, ReadVariable) or (isinstance(eg_op, Capture) and
                                                 isinstance(eg_op._tensor, Variable)):
            kind = "variable"
        elif isinstance(eg_op, Capture):
            kind = "input"
        elif isinstance(eg_op, Const):
            kind = "constant"
            if eg_op.value.size == 1 and re.fullmatch(r"Const(_\d+)?", label):
                label = number(eg_op.value.reshape(-1)[0])
        else:
            kind = "op"
        inputs = [ids[t.op] for t in op.inputs if t.op in ids]
        if kind == "op" and op.inputs and op in run_here and len(inputs) == len(op.inputs) and \
                not getattr(eg_op, "stateful", False) and \
                not any(hasattr(t.op.eg_op, "output_class") for t in op.inputs):
            eg_ops[node_id] = _Fused(eg_op) if eg_op.name == "fused" else eg_op
        try:
            attrs = op.attrs
        except Exception:       # an op whose attributes do not print: none shown
            attrs = {}
        nodes.append(Node(
            id=node_id, label=label, kind=kind, op=eg_op.name if kind == "op" else None,
            scope=scope, inputs=inputs, name=op.name,
            shape=None if hasattr(eg_op, "output_class") else _static_shape(out),
            dtype=str(out.dtype) if out is not None else "-", device=op._device.name,
            gate=getattr(eg_op, "gate", None), attrs=attrs,
            gradient_node=bool(_GRADIENT_SCOPE.match(op.name)),
            requires_grad=bool(out is not None and out.requires_grad),
            skipped=_skip_reason(op, effects, run_here),
            control_flow_result=any(hasattr(t.op.eg_op, "output_class") for t in op.inputs)))
        devices[node_id] = op._device
        for index, t in enumerate(op.inputs):
            if t.op in ids:
                edges.append(Edge(id=f"e{len(edges)}", source=ids[t.op], target=node_id,
                                  index=index, shape=_static_shape(t)))
        controls += [(ids[c], node_id) for c in op.control_inputs if c in ids]
    control_edges = [Edge(id=f"c{i}", source=s, target=t, index=-1, control=True)
                     for i, (s, t) in enumerate(controls)]
    run = _SessionRun(session, feeds, [(ids[op], op) for op in fetched], devices)
    arrays = run({}, {})
    for n in nodes:
        if arrays.get(n.id) is not None:
            n.shape = tuple(np.shape(arrays[n.id]))     # the run's shape: no "?" left
    for e in edges:
        e.shape = nodes[int(e.source[1:])].shape
    return GraphView(nodes, edges, ids.get(output), title=title, ops=eg_ops, arrays=arrays,
                     devices=devices, rerun=run, control_edges=control_edges)


def _static_nodes(target, output):
    """The graph, its operations to show (in creation order), and the output op."""
    from ..graph.core import Operation, SymbolicTensor
    items = list(target) if isinstance(target, (list, tuple)) else [target]
    graphs = {id(getattr(t, "graph", t)): getattr(t, "graph", t) for t in items}
    if len(graphs) != 1:
        raise ValueError("graph_view shows one graph at a time; these tensors come from "
                         f"{len(graphs)} different graphs.")
    (graph,) = graphs.values()
    if isinstance(output, str):
        output = graph.as_graph_element(output)
    if output is None:
        output = next((t for t in items if isinstance(t, SymbolicTensor)), None)
    if any(hasattr(t, "get_operations") for t in items):
        ops = _without_initialisers(graph)
    else:
        roots = [t if isinstance(t, Operation) else t.op for t in items]
        ops = _ancestors(graph, roots + ([output.op] if output is not None else []))
    if output is not None:
        if not isinstance(output, SymbolicTensor) or output.graph is not graph:
            raise TypeError(f"output= must be a tensor of the graph shown (the loss whose "
                            f"gradients to show), not {output!r}.")
        if output.op not in ops:
            raise ValueError(f"output {output.name} only initialises a variable; show the "
                             "loss computed from the variables instead.")
    return graph, ops, None if output is None else output.op


def _ancestors(graph, roots):
    """``roots`` and every op they need (inputs and control inputs), in creation order."""
    needed, stack = set(), list(roots)
    while stack:
        op = stack.pop()
        if op not in needed:
            needed.add(op)
            stack.extend(t.op for t in op.inputs)
            stack.extend(op.control_inputs)
    return [op for op in graph.get_operations() if op in needed]


def _without_initialisers(graph):
    """Every op except those that only initialise variables (``w/Assign``, the initial
    value's ops, ``init``): they run once, before training, and would crowd the picture."""
    ops = graph.get_operations()
    init = {v.initializer for v in graph.get_collection("variables")
            if getattr(v, "initializer", None) is not None}
    users = {op: [] for op in ops}
    for op in ops:
        for t in op.inputs:
            users[t.op].append(op)
        for c in op.control_inputs:
            users[c].append(op)
    for op in reversed(ops):                    # consumers come after their inputs
        if op in init:
            continue
        if users[op] and all(u in init for u in users[op]) or \
                not op.outputs and op.control_inputs and all(c in init for c in
                                                             op.control_inputs):
            init.add(op)
    return [op for op in ops if op not in init]


def _effects(ops):
    """Ops that write a variable, and every op after them (through inputs or control
    inputs): the view does not run them, so looking at a training step never takes it."""
    from ..graph.ops import Assign
    effects = set()
    for op in ops:
        if isinstance(op.eg_op, Assign) or getattr(op.eg_op, "written_variables", None) or \
                any(t.op in effects for t in op.inputs) or \
                any(c in effects for c in op.control_inputs):
            effects.add(op)
    return effects


def _skip_reason(op, effects, run_here):
    if op in run_here:
        return None
    if not op.outputs:
        return "it has no value: it only makes other nodes run"
    if op in effects:
        return "it writes a variable (or runs after such a node); the view does not run it"
    if hasattr(op.eg_op, "output_class"):
        return ("its value is the tuple of the chosen branch's results, which the next nodes "
                "hand out; the view shows those and sends no gradient through the branches")
    return "its value is not a single tensor"


def _static_shape(t):
    if t is None:
        return None
    if not t.shape.rank_known:
        return ()
    return tuple(t.shape)


def _session_for(graph, session, target):
    """The session given, or the default one (``with sess.as_default():``) of ``graph``."""
    if session is None:
        from ..graph.session import _default_sessions
        session = next((s for s in reversed(_default_sessions) if s.graph is graph), None)
    if session is None:
        what = getattr(target, "name", None) or type(target).__name__
        raise ValueError(f"{what} belongs to a static graph: its values exist only in a "
                         "Session. Pass the session (and the placeholders' values): "
                         "graph_view(loss, session=sess, feed_dict={x: ...}), or "
                         "GraphInspector(loss, session=sess, feed_dict={x: ...}).")
    if session.graph is not graph:
        raise ValueError("The session runs a different graph from the one shown; pass the "
                         "session made for it: eg.Session(graph=loss.graph).")
    return session


class _SessionRun:
    """Runs the shown nodes in the session: all their values in one ``session.run``.

    Random nodes keep their first values when the view runs again (a slider should move the
    picture by what it changes, not by new random numbers); leaves given new values with
    ``update`` are fed (a variable too: feeding it changes nothing in the session)."""

    def __init__(self, session, feeds, fetched, devices):
        from ..ops.random import RandomOp
        self.session, self.feeds, self.devices = session, dict(feeds), devices
        self.ids = [node_id for node_id, _ in fetched]
        self.tensors = {node_id: op.outputs[0] for node_id, op in fetched}
        self.fetches = [self.tensors[i] for i in self.ids]
        self.random = [i for i, op in fetched if isinstance(op.eg_op, RandomOp)]

    def __call__(self, arrays, changed):
        for node_id, array in changed.items():
            self.feeds[self.tensors[node_id]] = array
        values = self.session.run(self.fetches, feed_dict=self.feeds)
        result = dict(arrays)
        for node_id, value in zip(self.ids, values):
            device = self.devices[node_id]
            value = np.asarray(value)
            result[node_id] = value if device.kind == "cpu" else device.put(value)
        for node_id in self.random:
            self.feeds.setdefault(self.tensors[node_id], np.asarray(values[
                self.ids.index(node_id)]))
        return result


class _Fused:
    """A fused elementwise node (``fuse_elementwise``) seen as one op: its forward, and a
    backward that replays its program with the ops it fused, so gradients pass through it
    as they would through the ops before fusion."""

    name, gate, differentiable = "fused", None, True

    def __init__(self, fused):
        self.fused = fused

    def forward(self, xp, *arrays):
        return self.fused.forward(xp, *arrays)

    def backward(self, grad, out, *inputs):
        import edugraph as eg
        xs = [Tensor(x._value, x.device) for x in inputs]
        for x, given in zip(xs, inputs):
            x.requires_grad = given.requires_grad and x.dtype.kind == "f"
        with enable_grad():
            temps = []
            for ufunc, dtype, args, _, _ in self.fused.program:
                values = [xs[i] if kind == "in" else temps[i] for kind, i in args]
                if ufunc == "cast":
                    temps.append(eg.cast(values[0], dtype))
                else:
                    temps.append(getattr(eg, _FUSED_OPS.get(ufunc, ufunc))(*values))
            wanted = [x for x in xs if x.requires_grad]
            if not temps[-1].requires_grad or not wanted:
                return [None] * len(xs)
            found = iter(eg.grad(temps[-1], wanted, grad_outputs=grad,
                                       allow_unused=True))
        return [next(found) if x.requires_grad else None for x in xs]


# the ufunc a fused step runs → the edugraph op function that computes it
_FUSED_OPS = {"true_divide": "divide", "absolute": "abs"}
