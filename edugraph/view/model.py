"""The model of a view: nodes, edges, and one run's values and gradients at every node.

``GraphView`` keeps plain numpy copies of every value and gradient, walks the backward pass by
hand (so that each edge's share is kept) and says what is on screen: collapsed name scopes,
hidden gradient nodes. The builders (``eager.py``, ``static.py``) make one; ``text.py`` writes
it as tables, ``frame.py`` as one picture per step of the walk.
"""
from dataclasses import dataclass, field

import numpy as np

from ..context import building, no_grad
from ..errors import GradientError
from ..ops.base import sum_to_shape
from ..tensor import Tensor
from . import display, frame, text

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
    shape: tuple = ()           # None: the op has no value (a NoOp grouping others)
    dtype: str = "float32"
    device: str = "cpu:0"
    gate: str = None            # "distributes", "routes", "switches", "copies" (Op.gate)
    attrs: dict = field(default_factory=dict)
    gradient_node: bool = False     # added by eg.gradients / an optimizer (scope gradients/)
    requires_grad: bool = False
    value: np.ndarray = None    # per run: the forward value (host copy)
    grad: np.ndarray = None     # per run: d output / d this node (None: no gradient flows here)
    sums: int = 0               # how many consumers send a gradient here (≥ 2: they are summed)
    name: str = ""              # the graph's name for it ("layer1/MatMul"); "" for eager nodes
    skipped: str = None         # why the view did not run it ("it writes a variable")
    control_flow_result: bool = False   # read from a cond/while_loop: no gradient goes back
    partial: str = None         # per run: why this node's gradient leaves a part out

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
        if self.partial:
            found.append(self.partial)
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
    control: bool = False       # a control dependency (source runs first), no value travels


class GraphView:
    """Nodes in topological order (inputs before the ops that use them), edges, one run."""

    def __init__(self, nodes, edges, output, title="", ops=None, arrays=None, devices=None,
                 rerun=None, control_edges=()):
        self.nodes, self.edges, self.output, self.title = nodes, edges, output, title
        self.control_edges = list(control_edges)    # "runs after" links (no value travels)
        self._by_id = {n.id: n for n in nodes}
        self._by_name = {n.name: n for n in nodes if n.name}
        self._ops = ops or {}             # node id → the Op instance (used to re-run it)
        self._arrays = arrays or {}       # node id → the value on its device
        self._devices = devices or {}     # node id → Device
        self._rerun = rerun               # (arrays, changed leaves) → arrays; None: forward
        self._in_edges = {n.id: [] for n in nodes}
        self._out_edges = {n.id: [] for n in nodes}
        for e in edges:
            self._in_edges[e.target].append(e)
            self._out_edges[e.source].append(e)
        self.collapsed = set()            # name scopes drawn as one box
        self.gradient_nodes_shown = True
        self.parts, self.part_labels = {}, {}   # a summarised big graph (display.py) ...
        self.summary_limit = None               # ... of more boxes than this
        self.opened_parts = set()
        self.listeners = []               # called with the view after every update
        self.display_listeners = []       # called with the view when what is shown changes
        self._shown = (None, None)        # (the display choices, their Shown)
        self._scales = {}                 # quantity → its colour scale, kept while it fits
        self._scales_checked = {}         # quantity → the run it was last checked in
        self._run = 0
        self._backward()
        self._remember_walk()

    # ------------------------------------------------------------------ looking things up
    def node(self, key):
        """A node by id, by label (``view.node("w")``) or by graph name ("layer1/MatMul")."""
        if key in self._by_id:
            return self._by_id[key]
        if key in self._by_name:
            return self._by_name[key]
        found = [n for n in self.nodes if n.label == key]
        if len(found) != 1:
            known = ", ".join(sorted({n.label for n in self.nodes if n.is_leaf}))
            what = "several nodes are" if found else "no node is"
            names = " or a graph name (layer1/MatMul)" if self._by_name else ""
            raise KeyError(f"{what} called {key!r}; use a node id (n0, n1...){names} or one "
                           f"of the leaf names: {known}.")
        return found[0]

    def __contains__(self, node_id):
        return node_id in self._by_id

    def inputs_of(self, key):
        return list(self._in_edges[self.node(key).id])

    def consumers_of(self, key):
        return list(self._out_edges[self.node(key).id])

    def argument_names(self, key):
        """The labels of a node's arguments, in argument order (the names its rules use)."""
        names = {e.index: self._by_id[e.source].label for e in self.inputs_of(key)}
        return [names.get(i, f"input {i}") for i in range(max(names, default=-1) + 1)]

    @property
    def leaves(self):
        return [n for n in self.nodes if n.is_leaf]

    def scopes(self, shown_only=False):
        """Every name scope used, outermost first ("layer1", "layer1/dense", ...); with
        ``shown_only``, those with a node not hidden by ``show_gradient_nodes(False)``."""
        found = set()
        for n in self.nodes:
            if shown_only and n.gradient_node and not self.gradient_nodes_shown:
                continue
            parts = n.scope.split("/") if n.scope else []
            found.update("/".join(parts[:i + 1]) for i in range(len(parts)))
        return sorted(found)

    # ------------------------------------------------------------------ what is shown
    def collapse(self, *scopes):
        """Show each name scope as one box named after it; edges in and out of it are drawn
        to that box. ``expand`` shows its nodes again."""
        known = self.scopes()
        for scope in scopes:
            if scope not in known:
                raise KeyError(f"No name scope {scope!r} in this graph; its scopes are: "
                               f"{', '.join(known) or 'none'}.")
        self.collapsed |= set(scopes)
        return self._display_changed()

    def expand(self, *scopes):
        """Show the nodes of these collapsed scopes again (of all of them if none is named)."""
        self.collapsed -= set(scopes) if scopes else set(self.collapsed)
        return self._display_changed()

    def show_gradient_nodes(self, show=True):
        """Show or hide the nodes ``eg.gradients`` (or an optimizer's ``minimize``) added."""
        self.gradient_nodes_shown = bool(show)
        return self._display_changed()

    def set_display(self, collapsed, gradient_nodes):
        """Both display choices at once (a widget's controls): ``collapsed``, the scopes to
        show collapsed among those offered on screen (``frame.scopes``; the others keep their
        state), and whether to show the gradient nodes."""
        offered = set(self.shown().scopes)
        unknown = set(collapsed) - offered
        if unknown:
            raise KeyError(f"Scopes {sorted(unknown)} are not on screen; the scopes offered "
                           f"are: {', '.join(sorted(offered)) or 'none'}.")
        self.collapsed = (self.collapsed - offered) | set(collapsed)
        self.gradient_nodes_shown = bool(gradient_nodes)
        return self._display_changed()

    def _display_changed(self):
        for listener in self.display_listeners:
            listener(self)
        return self

    def summarise(self, limit):
        """Show at most about ``limit`` boxes: if there are more, collapse the top-level name
        scopes and, if that is still too many, gather runs of boxes into parts (``open_part``
        shows a part's boxes). Returns True when something was summarised."""
        if len(self.shown().members) <= limit:
            return False
        top = {s.split("/")[0] for s in self.scopes(shown_only=True)}
        self.collapsed |= top
        self.summary_limit = limit
        self.parts, self.part_labels = display.summary_parts(self, limit)
        self.opened_parts = set()
        self._display_changed()
        return True

    def open_part(self, part):
        """Show the boxes inside a part of the summary (``"part:0-255"``)."""
        if part not in self.part_labels:
            raise KeyError(f"No part {part!r}; the summary's parts are "
                           f"{', '.join(sorted(self.part_labels)) or 'none'}.")
        self.opened_parts.add(part)
        return self._display_changed()

    def close_parts(self):
        """Back to the summary as ``summarise`` made it: every part closed, every top-level
        scope collapsed again."""
        self.opened_parts = set()
        self.collapsed |= {s.split("/")[0] for s in self.scopes(shown_only=True)}
        return self._display_changed()

    def shown(self):
        """The boxes and links on screen for the current display choices (``display.Shown``)."""
        choices = (frozenset(self.collapsed), self.gradient_nodes_shown,
                   frozenset(self.opened_parts), id(self.parts))
        if self._shown[0] != choices:
            self._shown = (choices, display.Shown(self))
        return self._shown[1]

    def visible_nodes(self, collapsed=None, gradient_nodes=None):
        """``{node id: what stands for it on screen}``: the node's own id, or ``"scope:NAME"``
        for a node inside the collapsed scope NAME (the outermost, if several); hidden
        gradient nodes are left out. By default the view's own choices (``collapse``,
        ``show_gradient_nodes``)."""
        collapsed = self.collapsed if collapsed is None else set(collapsed)
        shown = self.gradient_nodes_shown if gradient_nodes is None else gradient_nodes
        owner = {}
        for n in self.nodes:
            if n.gradient_node and not shown:
                continue
            owner[n.id] = n.id
            if collapsed and n.scope:
                parts = n.scope.split("/")
                for i in range(1, len(parts) + 1):      # outermost first
                    scope = "/".join(parts[:i])
                    if scope in collapsed:
                        owner[n.id] = f"scope:{scope}"
                        break
        return owner

    # ------------------------------------------------------------------ running again
    def update(self, values=None, **named):
        """Give leaves new values (by label or id) and run forward and backward again
        (a static graph's view runs its Session again, with those values fed)."""
        changed = {}
        for key, value in dict(values or {}, **named).items():
            node = self.node(key)
            if not node.is_leaf:
                raise ValueError(f"Node {node.id} ({node.label}) is computed by an op; only "
                                 "leaves (inputs, variables, placeholders) can be given values.")
            array = np.asarray(value, dtype=node.dtype)
            if array.shape != node.shape:
                raise ValueError(f"Leaf {node.label!r} has shape {node.shape}; the new value "
                                 f"has shape {array.shape}. Give a value of the same shape.")
            changed[node.id] = array
            self._arrays[node.id] = self._devices[node.id].put(array)
        self._arrays = self.forward(self._arrays) if self._rerun is None else \
            self._rerun(self._arrays, changed)
        self._backward()
        self._remember_walk()
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
            array = self._arrays.get(n.id)
            n.grad, n.sums, n.partial = None, 0, None
            n.value = None if array is None else devices[n.id].get(array)
            if array is not None:
                t = tensors[n.id] = Tensor(array, devices[n.id])
                t.requires_grad = n.requires_grad
        for e in self.edges:
            e.grad = e.upstream = e.local = None
            e.summed_axes = ()
        if self.output is None or self.output not in tensors:
            return
        out = tensors[self.output]
        grads = {self.output: Tensor(out.device.xp.ones(out.shape, out.dtype), out.device)}
        # eager arithmetic on the values, even when viewed inside ``with graph.as_default():``
        with no_grad(), building(None):
            for n in reversed(self.nodes):
                grad = grads.pop(n.id, None)
                if grad is None:
                    continue
                n.grad = grad.numpy()
                if n.control_flow_result:
                    self._mark_partial(n)
                op = self._ops.get(n.id)
                if op is None or not op.differentiable:
                    continue                    # (as eg.gradients: no gradient through it)
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

    def _mark_partial(self, result):
        """Every node ``result`` (a cond/while_loop's result) was computed from: its gradient
        leaves out the part through the control flow, which the view does not follow (the
        engine's eg.gradients does)."""
        note = (f"partial gradient: the part through '{result.label}' (a cond or while_loop "
                "result) is not shown")
        stack = list(result.inputs)
        while stack:
            node = self._by_id[stack.pop()]
            if node.partial is None:
                node.partial = note
                stack.extend(node.inputs)

    # ------------------------------------------------------------------ the step-by-step walk
    def steps(self):
        """The walk a student steps through: the forward pass node by node (inputs first),
        then the backward pass from the output (seeded with 1) to the leaves.

        Each step is a dict: ``phase`` ("forward" / "backward"), ``node`` (the active node) and
        ``edges`` (the edges active in that step: the inputs read forward, the gradients sent
        backward)."""
        return list(self._walk)

    def _remember_walk(self):
        """The walk of this run, and at which step each value and gradient is computed."""
        walk = [{"phase": "forward", "node": n.id,
                 "edges": [e.id for e in self._in_edges[n.id]]} for n in self.nodes]
        for n in reversed(self.nodes):
            if n.grad is not None:
                walk.append({"phase": "backward", "node": n.id,
                             "edges": [e.id for e in self._in_edges[n.id] if e.grad is not None]})
        self._walk = walk
        self._run += 1                    # (a new run: the colour scales are checked)
        self._computed_at = {(s["phase"], s["node"]): i for i, s in enumerate(walk)}

    def computed_at(self, phase, node_id):
        """The step at which a node's value ("forward") or gradient ("backward") is computed
        (None: never, in this run)."""
        return self._computed_at.get((phase, node_id))

    def known_at(self, step):
        """Which values and gradients exist after ``step`` (index into ``steps()``): two sets."""
        values, grads = set(), set()
        for s in self._walk[:step + 1]:
            (values if s["phase"] == "forward" else grads).add(s["node"])
        return values, grads

    def frame(self, step=None, colour_by="gradient", focus=None, check=None):
        """What the picture shows at ``step`` (an index into ``steps()``; None: the result
        after forward and backward): a ``frame.Frame`` of plain boxes, wires and words.
        ``focus``: the node whose detail to give (default: the active node, else the
        output); ``check``: a ``gradient_check()`` report to mark on the leaves."""
        return frame.build(self, step, colour_by, focus, check or {})

    def colour_scale(self, quantity):
        """The colour scale of ``quantity`` ("gradient" or "value"): the one used so far while
        every node's number still fits in it (colours stay put while a slider moves), else a
        wider one. Checked once per run."""
        scale = self._scales.get(quantity)
        if self._scales_checked.get(quantity) != self._run:
            numbers = [frame.mean(n.grad if quantity == "gradient" else n.value)
                       for n in self.nodes]
            if scale is None or not scale.fits(numbers):
                scale = self._scales[quantity] = frame.ColourScale.fitting(quantity, numbers,
                                                                           scale)
            self._scales_checked[quantity] = self._run
        return scale

    # ------------------------------------------------------------------ checking gradients
    def gradient_check(self, eps=1e-6, max_elements=64):
        """Compare each leaf's gradient with central finite differences in float64.

        Returns ``{leaf id: {"ok", "max_error", "numeric", "analytic"}}``; at most
        ``max_elements`` elements of each leaf are perturbed (the first ones)."""
        if self.output is None:
            raise ValueError("This view has no output (loss), so there is no gradient to check.")
        base = {k: self._devices[k].put(self._devices[k].get(a).astype(np.float64))
                if np.asarray(self._devices[k].get(a)).dtype.kind == "f" else a
                for k, a in self._arrays.items() if k not in self._ops and a is not None}
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
                    bumped = self._devices[n.id].put(bumped.reshape(host.shape))
                    arrays = dict(base, **{n.id: bumped})
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
        """One row per node shown (a collapsed scope: one row; hidden nodes: none): the
        columns of the text and HTML tables."""
        return text.rows(self)

    def edge_rows(self):
        return text.edge_rows(self)

    def to_text(self):
        """A fixed-width table of nodes and one of edges: deterministic, for nbval."""
        return text.to_text(self)

    def to_html(self):
        return text.to_html(self)

    _repr_html_ = to_html

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return f"<GraphView {self.title!r}: {len(self.nodes)} nodes, output {self.output}>"


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
