"""A plain picture of a computation: its nodes, their values and their gradients.

This is what the graph inspector draws, and what a notebook prints where widgets do not run.
It reads a computation through public links only (an eager tensor's ``_op`` / ``_inputs``, a
static graph's ``get_operations()``) and keeps, for every node and every edge, plain numpy
numbers, so a widget never reaches into an op.

The gradients come from the same rule ``backward()`` uses, walked here by hand so that every
intermediate step can be kept: each node's op turns the gradient arriving at its output into one
gradient per input (``op.backward``); a broadcast input's share is summed back to its shape
(``sum_to_shape``); where a value fans out, the shares arriving from its consumers are *summed*.

>>> x, w, b = (eg.tensor(v, requires_grad=True) for v in (2.0, -1.0, 3.0))
>>> view = eg.graph_view((w * x + b) ** 2, names={"x": x, "w": w, "b": b})
>>> print(view)          # a table: node, value, gradient, what each edge carries
>>> view.update(w=0.5)   # new leaf value: forward and backward run again
"""
from dataclasses import dataclass, field

import numpy as np

from .context import no_grad
from .errors import GradientError
from .ops.base import sum_to_shape
from .tensor import Tensor
from .variable import Variable

__all__ = ["graph_view", "GraphView", "Node", "Edge"]

# Ops that act element by element: only for these is "local gradient" d out / d input an array
# of the output's shape, so the rule "upstream × local = what the input receives" holds per
# element. (For matmul, softmax, sum... the op's backward *is* the rule.)
ELEMENTWISE = {"add", "sub", "mul", "div", "neg", "pow", "square", "sqrt", "exp", "log", "abs",
               "maximum", "minimum", "where", "clip", "cast", "relu", "leaky_relu", "sigmoid",
               "tanh", "identity"}
LEAF_KINDS = ("input", "variable", "constant", "placeholder")


@dataclass
class Node:
    """One node: a leaf (input, variable, constant, placeholder) or an op applied to inputs."""

    id: str                     # stable: from the graph's structure, never from id()
    label: str                  # the op's name ("mul") or the leaf's name ("w")
    kind: str                   # "op" or one of LEAF_KINDS
    op: str = None              # op type, None for leaves
    scope: str = ""             # name scope, "layer1/dense" ("" at top level)
    inputs: list = field(default_factory=list)     # node ids, in argument order
    shape: tuple = ()
    dtype: str = "float32"
    device: str = "cpu:0"
    gate: str = None            # "distributes", "routes", "switches", "copies" (Op.gate)
    attrs: dict = field(default_factory=dict)
    gradient_node: bool = False     # added by eg.gradients / an optimizer (scope gradients/)
    requires_grad: bool = False
    value: np.ndarray = None    # per run: the forward value (host copy)
    grad: np.ndarray = None     # per run: d output / d this node (None: no gradient flows here)
    sums: int = 0               # how many consumers send a gradient here (≥ 2: they are summed)

    @property
    def is_leaf(self):
        return self.kind != "op"

    @property
    def flags(self):
        """Health warnings: NaN / Inf in the value or gradient, a ReLU whose outputs are all 0."""
        found = []
        for what, array in (("value", self.value), ("gradient", self.grad)):
            if array is not None and array.dtype.kind == "f":
                if np.isnan(array).any():
                    found.append(f"NaN in {what}")
                if np.isinf(array).any():
                    found.append(f"Inf in {what}")
        if self.op == "relu" and self.value is not None and self.value.size and \
                not (self.value > 0).any():
            found.append("dead ReLU: every output is 0, no gradient passes")
        return found


@dataclass
class Edge:
    """An input of an op: the value travels source → target, its gradient target → source."""

    id: str
    source: str
    target: str
    index: int                  # which argument of the target's op
    shape: tuple = ()
    grad: np.ndarray = None     # per run: what the target sends back to the source
    upstream: np.ndarray = None  # per run: the gradient at the target's output
    local: np.ndarray = None    # per run: d target / d source per element (elementwise ops)
    summed_axes: tuple = ()     # axes summed away because the source was broadcast


class GraphView:
    """Nodes in topological order (inputs before the ops that use them), edges, one run."""

    def __init__(self, nodes, edges, output, title="", ops=None, arrays=None, devices=None):
        self.nodes, self.edges, self.output, self.title = nodes, edges, output, title
        self._by_id = {n.id: n for n in nodes}
        self._ops = ops or {}             # node id → the Op instance (used to re-run it)
        self._arrays = arrays or {}       # node id → the value on its device
        self._devices = devices or {}     # node id → Device
        self._in_edges = {n.id: [] for n in nodes}
        self._out_edges = {n.id: [] for n in nodes}
        for e in edges:
            self._in_edges[e.target].append(e)
            self._out_edges[e.source].append(e)
        self.listeners = []               # called with the view after every update
        self._backward()

    # ------------------------------------------------------------------ looking things up
    def node(self, key):
        """A node by id or by label (``view.node("w")``)."""
        if key in self._by_id:
            return self._by_id[key]
        found = [n for n in self.nodes if n.label == key]
        if len(found) != 1:
            known = ", ".join(sorted({n.label for n in self.nodes if n.is_leaf}))
            what = "several nodes are" if found else "no node is"
            raise KeyError(f"{what} called {key!r}; use a node id (n0, n1...) or one of the "
                           f"leaf names: {known}.")
        return found[0]

    def inputs_of(self, key):
        return list(self._in_edges[self.node(key).id])

    def consumers_of(self, key):
        return list(self._out_edges[self.node(key).id])

    @property
    def leaves(self):
        return [n for n in self.nodes if n.is_leaf]

    def scopes(self):
        """Every name scope used, outermost first ("layer1", "layer1/dense", ...)."""
        found = set()
        for n in self.nodes:
            parts = n.scope.split("/") if n.scope else []
            found.update("/".join(parts[:i + 1]) for i in range(len(parts)))
        return sorted(found)

    # ------------------------------------------------------------------ running again
    def update(self, values=None, **named):
        """Give leaves new values (by label or id) and run forward and backward again."""
        for key, value in dict(values or {}, **named).items():
            node = self.node(key)
            if not node.is_leaf:
                raise ValueError(f"Node {node.id} ({node.label}) is computed by an op; only "
                                 "leaves (inputs, variables, placeholders) can be given values.")
            array = np.asarray(value, dtype=node.dtype)
            if array.shape != node.shape:
                raise ValueError(f"Leaf {node.label!r} has shape {node.shape}; the new value "
                                 f"has shape {array.shape}. Give a value of the same shape.")
            self._arrays[node.id] = self._devices[node.id].put(array)
        self._arrays = self.forward(self._arrays)
        self._backward()
        for listener in self.listeners:
            listener(self)
        return self

    def forward(self, arrays):
        """Every op's value recomputed in order from the leaves' values in ``arrays``."""
        arrays = dict(arrays)
        for n in self.nodes:
            op = self._ops.get(n.id)
            if op is not None:
                xp = self._devices[n.inputs[0]].xp if n.inputs else self._devices[n.id].xp
                arrays[n.id] = op.forward(xp, *(arrays[i] for i in n.inputs))
        return arrays

    def _backward(self):
        """The reverse walk, keeping each node's gradient and what each edge carries."""
        devices = self._devices
        tensors = {}
        for n in self.nodes:
            n.value = devices[n.id].get(self._arrays[n.id])
            n.grad, n.sums = None, 0
            t = tensors[n.id] = Tensor(self._arrays[n.id], devices[n.id])
            t.requires_grad = n.requires_grad
        for e in self.edges:
            e.grad = e.upstream = e.local = None
            e.summed_axes = ()
        if self.output is None:
            return
        out = tensors[self.output]
        grads = {self.output: Tensor(out.device.xp.ones(out.shape, out.dtype), out.device)}
        with no_grad():
            for n in reversed(self.nodes):
                grad = grads.pop(n.id, None)
                if grad is None:
                    continue
                n.grad = grad.numpy()
                op = self._ops.get(n.id)
                if op is None:
                    continue
                inputs = [tensors[i] for i in n.inputs]
                try:
                    shares = op.backward(grad, tensors[n.id], *inputs)
                except GradientError:
                    continue                    # an op without a gradient stops the flow
                local = _local_gradients(op, tensors[n.id], inputs) \
                    if op.name in ELEMENTWISE else [None] * len(inputs)
                for e, share, x, loc in zip(self._in_edges[n.id], shares, inputs, local):
                    if share is None or not x.requires_grad:
                        continue
                    reduced = sum_to_shape(share, x)    # the engine's one central place
                    e.upstream, e.grad = n.grad, reduced.numpy()
                    e.local = None if loc is None else loc.numpy()
                    e.summed_axes = summed_axes(share.shape, x.shape)
                    grads[e.source] = grads[e.source] + reduced if e.source in grads \
                        else reduced            # branches sum
                    self._by_id[e.source].sums += 1

    # ------------------------------------------------------------------ the step-by-step walk
    def steps(self):
        """The walk a student steps through: the forward pass node by node (inputs first),
        then the backward pass from the output (seeded with 1) to the leaves.

        Each step is a dict: ``phase`` ("forward" / "backward"), ``node`` (the active node) and
        ``edges`` (the edges active in that step: the inputs read forward, the gradients sent
        backward)."""
        walk = [{"phase": "forward", "node": n.id,
                 "edges": [e.id for e in self._in_edges[n.id]]} for n in self.nodes]
        for n in reversed(self.nodes):
            if n.grad is not None:
                walk.append({"phase": "backward", "node": n.id,
                             "edges": [e.id for e in self._in_edges[n.id] if e.grad is not None]})
        return walk

    def known_at(self, step):
        """Which values and gradients exist after ``step`` (index into ``steps()``): two sets."""
        walk = self.steps()
        values, grads = set(), set()
        for s in walk[:step + 1]:
            (values if s["phase"] == "forward" else grads).add(s["node"])
        return values, grads

    # ------------------------------------------------------------------ checking gradients
    def gradient_check(self, eps=1e-6, max_elements=64):
        """Compare each leaf's gradient with central finite differences in float64.

        Returns ``{leaf id: {"ok", "max_error", "numeric", "analytic"}}``; at most
        ``max_elements`` elements of each leaf are perturbed (the first ones)."""
        if self.output is None:
            raise ValueError("This view has no output (loss), so there is no gradient to check.")
        base = {k: self._devices[k].put(self._devices[k].get(a).astype(np.float64))
                if np.asarray(self._devices[k].get(a)).dtype.kind == "f" else a
                for k, a in self._arrays.items() if self._by_id[k].is_leaf}
        report = {}
        for n in self.leaves:
            if n.grad is None or n.value.dtype.kind != "f":
                continue
            host = n.value.astype(np.float64)
            count = min(host.size, max_elements)
            numeric = np.zeros(count)
            for i in range(count):
                total = []
                for sign in (1, -1):
                    bumped = host.copy().reshape(-1)
                    bumped[i] += sign * eps
                    arrays = dict(base, **{n.id: self._devices[n.id].put(bumped.reshape(host.shape))})
                    out = self.forward(arrays)[self.output]
                    total.append(self._devices[self.output].get(out).astype(np.float64).sum())
                numeric[i] = (total[0] - total[1]) / (2 * eps)
            analytic = n.grad.reshape(-1)[:count].astype(np.float64)
            tolerance = 1e-6 if n.grad.dtype == np.float64 else 2e-3
            error = np.abs(numeric - analytic) / np.maximum(1.0, np.abs(numeric))
            report[n.id] = {"ok": bool((error <= tolerance).all()),
                            "max_error": float(error.max(initial=0.0)),
                            "numeric": numeric, "analytic": analytic}
        return report

    # ------------------------------------------------------------------ plain forms
    def to_dict(self):
        """The whole view as JSON-ready lists and numbers."""
        def arr(a):
            return None if a is None else a.tolist()
        return {
            "title": self.title, "output": self.output,
            "nodes": [{"id": n.id, "label": n.label, "kind": n.kind, "op": n.op,
                       "scope": n.scope, "inputs": list(n.inputs), "shape": list(n.shape),
                       "dtype": n.dtype, "device": n.device, "gate": n.gate,
                       "gradient_node": n.gradient_node, "value": arr(n.value),
                       "grad": arr(n.grad), "sums": n.sums, "flags": n.flags}
                      for n in self.nodes],
            "edges": [{"id": e.id, "source": e.source, "target": e.target, "index": e.index,
                       "shape": list(e.shape), "grad": arr(e.grad),
                       "summed_axes": list(e.summed_axes)} for e in self.edges]}

    def rows(self):
        """One row per node: the columns of the text and HTML tables."""
        rows = []
        for n in self.nodes:
            gate = n.gate or ""
            if n.sums > 1:
                gate = (gate + ", " if gate else "") + f"sums {n.sums}"
            rows.append({"id": n.id, "node": n.label, "kind": n.kind,
                         "scope": n.scope, "inputs": " ".join(n.inputs),
                         "shape": shape_text(n.shape), "value": short(n.value),
                         "gradient": "-" if n.grad is None else short(n.grad),
                         "gate": gate, "flags": "; ".join(n.flags)})
        return rows

    def edge_rows(self):
        return [{"edge": f"{e.source} -> {e.target}.{e.index}",
                 "carries": short(e.grad),
                 "rule": edge_rule(e, self._by_id[e.target].op)}
                for e in self.edges if e.grad is not None]

    def to_text(self):
        """A fixed-width table of nodes and one of edges: deterministic, for nbval."""
        columns = ["id", "node", "kind", "shape", "value", "gradient", "inputs", "gate", "flags"]
        if any(n.scope for n in self.nodes):
            columns.insert(3, "scope")
        lines = [self.title] if self.title else []
        lines += _table(columns, self.rows())
        edges = self.edge_rows()
        if edges:
            lines += ["", "gradient flow (what each edge carries back):"]
            lines += _table(["edge", "carries", "rule"], edges)
        return "\n".join(line.rstrip() for line in lines)

    def to_html(self):
        import html
        columns = ["id", "node", "kind", "shape", "value", "gradient", "inputs", "gate", "flags"]
        head = "".join(f"<th>{c}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in columns)
                       + "</tr>" for r in self.rows())
        title = f"<b>{html.escape(self.title)}</b>" if self.title else ""
        return (f"{title}<table class='edugraph-view'><thead><tr>{head}</tr></thead>"
                f"<tbody>{body}</tbody></table>")

    _repr_html_ = to_html

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return f"<GraphView {self.title!r}: {len(self.nodes)} nodes, output {self.output}>"


def _table(columns, rows):
    widths = {c: max([len(c)] + [len(str(r[c])) for r in rows]) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines.append("  ".join("-" * widths[c] for c in columns))
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return lines


def _local_gradients(op, out, inputs):
    """d out / d input per element: the op's own backward given an upstream gradient of 1."""
    ones = Tensor(out.device.xp.ones(out.shape, out.dtype), out.device)
    try:
        return op.backward(ones, out, *inputs)
    except GradientError:
        return [None] * len(inputs)


def summed_axes(grad_shape, input_shape):
    """Axes of a broadcast gradient that ``sum_to_shape`` sums to give the input's shape."""
    lead = len(grad_shape) - len(input_shape)
    return tuple(range(lead)) + tuple(
        i + lead for i, n in enumerate(input_shape) if n == 1 and grad_shape[i + lead] != 1)


# ----------------------------------------------------------------------------- number text
def number(x):
    """A number in at most 4 significant digits, the same on every machine ("-0" shown as 0)."""
    x = float(x)
    if np.isnan(x) or np.isinf(x):
        return str(x)
    return f"{x + 0.0:.4g}"


def shape_text(shape):
    return "scalar" if len(shape) == 0 else "×".join("?" if s is None else str(s) for s in shape)


def short(array):
    """A value in a few characters: a number, a short vector, or the mean of a big tensor."""
    if array is None:
        return "-"
    array = np.asarray(array)
    if array.size == 1:
        return number(array.reshape(-1)[0]) if array.dtype.kind in "fiub" else str(array)
    if array.dtype.kind not in "fiub":
        return shape_text(array.shape)
    if array.ndim == 1 and array.size <= 3:
        return "[" + ", ".join(number(v) for v in array) + "]"
    return f"{shape_text(array.shape)} μ={number(array.astype(np.float64).mean())}"


def edge_rule(edge, op):
    """The local rule in words and numbers: upstream × local = what the input receives."""
    if edge.grad is None:
        return ""
    axes = f"; summed over axes {edge.summed_axes}" if edge.summed_axes else ""
    if edge.local is not None:
        return f"{short(edge.upstream)} × {short(edge.local)} = {short(edge.grad)}{axes}"
    return f"{op}.backward({short(edge.upstream)}) = {short(edge.grad)}{axes}"


# ----------------------------------------------------------------------------- building views
def graph_view(target, names=None, session=None, feed_dict=None, title=""):
    """The view of a computation.

    * eager: ``graph_view(loss)`` — ``loss`` is a tensor computed with ``requires_grad``
      inputs; ``names={"w": w, ...}`` labels leaves (variables use their own names);
    * static: ``graph_view(loss, session=sess, feed_dict=...)`` for a graph tensor (or a Graph
      and no output), values from ``session.run``.
    """
    if getattr(target, "graph", None) is not None or hasattr(target, "get_operations"):
        return _from_graph(target, session, feed_dict, title)
    if not isinstance(target, Tensor):
        raise TypeError(f"graph_view needs a tensor (or a graph with a session), "
                        f"got {type(target).__name__}.")
    return _from_eager(target, names or {}, title)


def _from_eager(output, names, title):
    """Follow ``_op`` / ``_inputs`` back from ``output``; ids follow that walk's order."""
    given = {id(t): name for name, t in names.items()}
    order = _post_order(output)
    counters = {}
    nodes, edges, ops, arrays, devices = [], [], {}, {}, {}
    ids = {}
    for t in order:
        node_id = ids[t] = f"n{len(nodes)}"
        inputs = [ids[i] for i in t._inputs] if t._op is not None else []
        if t._op is not None:
            kind, label = "op", t._op.name
            ops[node_id] = t._op
        else:
            kind = "variable" if isinstance(t, Variable) else \
                "input" if t.requires_grad else "constant"
            label = given.get(id(t)) or t.name or _default_label(kind, t, counters)
        scope = label.rpartition("/")[0] if kind != "op" else ""
        nodes.append(Node(
            id=node_id, label=label, kind=kind, op=t._op.name if t._op else None, scope=scope,
            inputs=inputs, shape=tuple(t.shape), dtype=str(t.dtype), device=t.device.name,
            gate=getattr(t._op, "gate", None), requires_grad=t.requires_grad,
            attrs=t._op.attributes() if t._op is not None else {}))
        arrays[node_id], devices[node_id] = t._value, t.device
        for index, i in enumerate(inputs):
            edges.append(Edge(id=f"e{len(edges)}", source=i, target=node_id, index=index,
                              shape=tuple(t._inputs[index].shape)))
    return GraphView(nodes, edges, ids[output], title=title, ops=ops, arrays=arrays,
                     devices=devices)


def _from_graph(target, session, feed_dict, title):
    raise NotImplementedError("graph_view of static graphs needs edugraph.graph (Session, "
                              "get_operations), which is not in this version yet.")


def _default_label(kind, t, counters):
    if kind == "constant" and t.size == 1:
        return number(t.numpy().reshape(-1)[0])
    n = counters[kind] = counters.get(kind, -1) + 1
    return kind if n == 0 else f"{kind}_{n}"


def _post_order(output):
    """Every tensor ``output`` was computed from, each after its inputs (inputs in argument
    order, so the order depends only on the structure of the computation)."""
    order, done = [], set()
    stack = [(output, False)]
    while stack:
        t, expanded = stack.pop()
        if t in done:
            continue
        if expanded or t._op is None:
            done.add(t)
            order.append(t)
            continue
        stack.append((t, True))
        stack.extend((i, False) for i in reversed(t._inputs) if i not in done)
    return order
