"""One moment of the walk as plain data: what the inspector draws at one step.

A ``Frame`` holds the boxes on screen (nodes, collapsed name scopes, parts of a summary), the
wires between them (the value each carries forward, the gradient it carries back, the rule
written on it while that gradient is computed), the caption, the colour scales and the detail
of one node. It is computed from the view alone and holds only strings, numbers and numpy
arrays: ``widgets/`` places and draws it, and never asks an op anything.

The lecture's picture: a wire carries its value above it and its gradient below it; an op's
circle holds its sign (×, +, max); a gate word (switches, distributes, routes, copies) says how
the op hands its gradient back (``rules.GATES``).
"""
import math
from dataclasses import dataclass, field

import numpy as np

from . import rules
from .numbers import number, shape_text, short

DECADES = 4     # shades of one sign on a colour scale: one per power of ten
SETTABLE = ("input", "variable", "placeholder")     # leaves a student may give a new value


@dataclass(frozen=True)
class ColourScale:
    """A symmetric logarithmic colour scale: positive numbers blue, negative red, one shade
    stronger per power of ten from ``limit / 10**decades`` (below it: white, "about 0") up to
    ``limit``. It is stated (a colour bar shows it) and kept while the numbers fit, so a number
    keeps its colour from step to step and while a slider moves."""

    quantity: str               # "gradient" or "value"
    limit: float                # a power of ten at least as large as every |number|
    decades: int = DECADES

    @property
    def floor(self):
        return self.limit / 10 ** self.decades

    def level(self, x):
        """The shade of ``x``: 0 for about 0, else ±1 … ±decades; None for no number."""
        if x is None or not np.isfinite(x):
            return None
        if abs(x) < self.floor:
            return 0
        shade = min(self.decades, 1 + math.floor(math.log10(abs(x) / self.floor) + 1e-9))
        return shade if x > 0 else -shade

    def boundaries(self):
        """Where the shades change: floor, 10·floor, …, limit."""
        return [self.floor * 10 ** k for k in range(self.decades + 1)]

    def fits(self, numbers):
        return _largest(numbers) <= self.limit

    @classmethod
    def fitting(cls, quantity, numbers, wider_than=None):
        """The scale whose limit is the smallest power of ten above every number (never
        narrower than ``wider_than``)."""
        largest = _largest(numbers)
        limit = 10.0 ** math.ceil(math.log10(largest)) if largest > 0 else 1.0
        if wider_than is not None:
            limit = max(limit, wider_than.limit)
        return cls(quantity, limit)

    def describe(self):
        return (f"{self.quantity}: blue > 0, red < 0, one shade per power of ten up to "
                f"±{number(self.limit)}; white: |x| < {number(self.floor)}")


@dataclass
class Box:
    """A node, a collapsed name scope or a part of a summary, as drawn at this step."""

    id: str
    kind: str                   # "op", a leaf kind ("input", "variable", ...), "scope", "part"
    label: str                  # the name under the node, or the box's title
    symbol: str = ""            # the sign inside an op's circle
    gate: str = ""              # the gate word above it ("switches", "sums 3")
    gate_note: str = ""         # what that word means
    value: object = None        # the value known at this step (None: not computed yet)
    grad: object = None         # the gradient known at this step
    note: str = ""              # a line under the name: a fanned-out value's summed gradient
                                # ("∇ 11 = 5 + 5 + 1"), the ops of a fused node
    level: int = None           # shade on the colour scale (None: no number to colour)
    flags: list = field(default_factory=list)
    check: str = ""             # the gradient check's verdict on a leaf
    active: bool = False        # the node of this step (or the box holding it)
    gradient: bool = False      # added by eg.gradients: drawn aside
    members: int = 1            # nodes a box stands for
    device: str = "cpu:0"
    hover: str = ""             # lines shown when the pointer rests on it


@dataclass
class Wire:
    """A link between two boxes: an edge, several edges bundled, or a "runs after" link."""

    source: str
    target: str                 # None: the output's own wire, leaving the picture
    kind: str = "value"         # "value", "group" (to or from a box of many), "control"
    value: str = ""             # what it carries forward, written above it
    grad: str = ""              # what it carries back, written below it
    level: int = None           # shade of its gradient on the gradient scale
    active: bool = False        # read (forward) or filled (backward) in this step
    rule: str = ""              # the rule that makes its gradient, written under it while
                                # that gradient is computed ("2 × 2 = 4", "∇ ⊙ w")
    shape: str = ""


@dataclass
class Rule:
    """How one input receives its gradient, in two lines of plain text."""

    source: str                 # the input's label
    index: int                  # which argument
    formula: str                # "∂L/∂w = ∂L/∂mul × x"
    numbers: str                # "2 × 2 = 4", or the shape and mean of a tensor's share


@dataclass
class Detail:
    """One node in full, as known at this step."""

    id: str
    label: str
    kind: str
    op: str
    facts: list                 # kind or op, shape, dtype, device, scope
    name: str = ""              # the static graph's name ("layer1/MatMul")
    flags: list = field(default_factory=list)
    fused: str = ""             # the ops a fused node computes
    value: object = None
    value_note: str = ""        # why there is no value (not run, not computed yet)
    grad: object = None
    grad_note: str = ""
    output: str = ""            # the label of L, whose gradients are shown
    rules: list = field(default_factory=list)
    rules_note: str = ""        # why there are no rules (yet)
    summed: str = ""            # "fans out to 3 consumers: ... = 11"
    gate_note: str = ""
    check: dict = None


@dataclass
class Input:
    """A scalar leaf whose value a slider sets."""

    id: str
    label: str
    value: float


@dataclass
class Frame:
    """Everything the inspector shows at one step: the picture, the words around it and the
    state its controls show (so that a control never says something the picture does not)."""

    step: int                   # None: the result after forward and backward
    phase: str                  # "forward", "backward" or "result"
    caption: str
    boxes: list
    wires: list
    active: str                 # the box of this step's node (None for the result)
    output: str                 # the box of the output (None when hidden)
    scales: dict                # "gradient" and "value" → its ColourScale
    colour_by: str = "gradient"  # what colours the boxes ("device": their device)
    hidden_links: list = field(default_factory=list)    # boxes joined through hidden nodes:
                                # not drawn, but an optimizer's update stays right of its loss
    summary: str = ""           # what a summarised graph's boxes are ("" when not summarised)
    parts_opened: bool = False  # a part of the summary is open
    detail: Detail = None
    title: str = ""
    steps: int = 0              # how many steps the walk has
    inputs: list = field(default_factory=list)      # Input: the scalar leaves, their values
    scopes: list = field(default_factory=list)      # the name scopes offered to collapse
    collapsed: list = field(default_factory=list)   # those of them collapsed
    gradient_nodes: bool = False        # the graph has nodes added by eg.gradients ...
    gradient_nodes_shown: bool = True   # ... and they are shown

    @property
    def scale(self):
        """The scale of the boxes' colours (None when coloured by device); the wires are
        always coloured by the gradient they carry."""
        return self.scales.get(self.colour_by)


def build(view, step, colour_by, focus, check):
    """The frame of ``view`` at ``step`` (see ``GraphView.frame``)."""
    shown = view.shown()
    walk = view.steps()
    at = len(walk) if step is None or step >= len(walk) else step

    def known(phase, node_id):
        computed = view.computed_at(phase, node_id)
        return computed is not None and computed <= at

    current = walk[at] if at < len(walk) else None
    active_node = current["node"] if current else None
    active_edges = set(current["edges"]) if current else set()
    phase = current["phase"] if current else "result"

    boxes = [_box(view, shown, box, known, active_node, check) for box in shown.order]
    scales = {quantity: view.colour_scale(quantity) for quantity in ("gradient", "value")}
    if colour_by in scales:
        for b in boxes:
            b.level = scales[colour_by].level(mean(b.grad if colour_by == "gradient"
                                                   else b.value))
    wires = _wires(view, shown, known, active_edges, current, scales["gradient"])
    output = shown.owner.get(view.output) if view.output is not None else None
    target = focus or active_node or view.output
    detail = _detail(view, target, known, check) if target in view else None
    return Frame(step=None if current is None else at, phase=phase,
                 caption=caption(view, walk, at) if current else "result: forward and "
                 "backward done", boxes=boxes, wires=wires,
                 active=shown.owner.get(active_node) if active_node else None,
                 output=output, scales=scales, colour_by=colour_by, detail=detail,
                 hidden_links=list(shown.hidden_links), summary=_summary(view),
                 parts_opened=bool(view.opened_parts), title=view.title, steps=len(walk),
                 inputs=[Input(n.id, n.label, float(n.value)) for n in view.leaves
                         if n.kind in SETTABLE and n.shape == () and
                         n.dtype.startswith("float")],
                 scopes=list(shown.scopes),
                 collapsed=[s for s in shown.scopes if s in view.collapsed],
                 gradient_nodes=any(n.gradient_node for n in view.nodes),
                 gradient_nodes_shown=view.gradient_nodes_shown)


def _summary(view):
    if not view.part_labels:
        return ""
    return (f"This graph has {len(view.nodes):,} nodes, too many to read at once (more than "
            f"{view.summary_limit} boxes): it is shown by its top-level name scopes and parts of "
            "about equal size, in the order of the walk. Click a box to open it.")


def _box(view, shown, box_id, known, active_node, check):
    members = shown.members[box_id]
    active = active_node in members
    if shown.is_group(box_id):
        kind, _, name = box_id.partition(":")
        label = view.part_labels[box_id] if kind == "part" else name
        gradient = all(view.node(m).gradient_node for m in members)
        count = f"{len(members)} node{'s' * (len(members) != 1)}"
        what = "name scope" if kind == "scope" else "part of the graph"
        return Box(id=box_id, kind=kind, label=label, members=len(members), active=active,
                   gradient=gradient, hover=f"{what} {label}: {count}, click to open")
    n = view.node(box_id)
    value = n.value if known("forward", n.id) and not n.skipped else None
    grad = n.grad if known("backward", n.id) else None
    gate, meaning = n.gate or "", rules.gate_note(n.gate, n.op)
    note = f"fused {'·'.join(n.attrs.get('ops', ()))}" if n.op == "fused" else ""
    if n.sums > 1 and grad is not None:
        gate = f"{gate} · sums {n.sums}" if gate else f"sums {n.sums}"
        meaning = "; ".join(filter(None, [meaning, rules.SUMS]))
        shares = [short(e.grad) for e in view.consumers_of(n.id) if e.grad is not None]
        note = f"∇ {short(grad)} = " + " + ".join(shares) if len(shares) <= 3 else \
            f"∇ {short(grad)}, the sum of {len(shares)}"
    flags = list(n.flags) if known("forward", n.id) else []
    verdict = check.get(n.id)
    mark = "" if verdict is None else "✓ grad check" if verdict["ok"] else "✗ grad check"
    if verdict is not None and not verdict["ok"]:
        flags.append("gradient check failed")
    return Box(id=n.id, kind=n.kind, label=n.label,
               symbol=rules.symbol(n.op) if n.op else "", gate=gate, gate_note=meaning,
               value=value, grad=grad, note=note, flags=flags, check=mark, active=active,
               gradient=n.gradient_node, device=n.device,
               hover=_hover(n, value, grad, flags, meaning))


def _wires(view, shown, known, active_edges, current, scale):
    phase = current["phase"] if current else "result"
    wires = []
    for source, target, edges in shown.links:
        active = any(e.id in active_edges for e in edges)
        if shown.is_group(source) or shown.is_group(target):
            wires.append(Wire(source, target, kind="group", active=active,
                              shape=f"{len(edges)} edge{'s' * (len(edges) != 1)}"))
            continue
        value = view.node(source).value if known("forward", source) and \
            not view.node(source).skipped else None
        carried = [e.grad for e in edges if e.grad is not None and known("backward", target)]
        grad = ""
        if carried:
            grad = "∇ " + " + ".join(short(g) for g in carried) if len(carried) <= 3 else \
                f"∇ {short(sum(carried))} in all"
        ruled = "; ".join(_on_wire(view, e) for e in edges if e.grad is not None)
        wires.append(Wire(
            source, target, value="" if value is None else
            (f"{len(edges)}× " if len(edges) > 1 else "") + short(value),
            grad=grad, active=active, rule=ruled,
            level=scale.level(mean(sum(carried))) if carried else None,
            shape=shape_text(edges[0].shape)))
    for source, target in shown.control_links:
        wires.append(Wire(source, target, kind="control"))
    out = view.output
    if out is not None and shown.owner.get(out) == out:
        grad = view.node(out).grad if known("backward", out) else None
        value = view.node(out).value if known("forward", out) else None
        wires.append(Wire(out, None, value="" if value is None else short(value),
                          grad="" if grad is None else f"∇ {short(grad)}",
                          level=None if grad is None else scale.level(mean(grad)),
                          active=current is not None and current["node"] == out and
                          phase == "backward"))
    return wires


def _on_wire(view, edge):
    target = view.node(edge.target)
    return rules.on_wire(edge, target.op, view.argument_names(target.id), target.label)


def _rule(view, edge):
    target = view.node(edge.target)
    formula, numbers = rules.rule(edge, target.op, view.argument_names(target.id),
                                  target.label, at_output=target.id == view.output)
    return Rule(view.node(edge.source).label, edge.index, formula, numbers)


def caption(view, walk, at):
    """One line saying what step ``at`` of the walk does."""
    s = walk[at]
    n = view.node(s["node"])
    total = sum(1 for t in walk if t["phase"] == s["phase"])
    index = sum(1 for t in walk[:at + 1] if t["phase"] == s["phase"])
    if s["phase"] == "forward" and n.skipped:
        return f"forward {index}/{total}: {n.label} is not run: {n.skipped}"
    if s["phase"] == "forward":
        what = f"{n.label} = {short(n.value)}" if n.is_leaf else \
            f"{n.label}({', '.join(view.node(i).label for i in n.inputs)}) = " \
            f"{short(n.value)}"
        return f"forward {index}/{total}: {what}"
    if n.id == view.output:
        return f"backward {index}/{total}: start at {n.label} with gradient 1"
    if n.is_leaf:
        return f"backward {index}/{total}: {n.label} receives ∇ {short(n.grad)}"
    line = f"backward {index}/{total}: {n.label} ({n.gate or n.op}) sends ∇ " \
           f"{short(n.grad)} back to its inputs"
    note = rules.gate_note(n.gate, n.op)
    return f"{line} — {note}" if note else line


def _detail(view, node_id, known, check):
    n = view.node(node_id)
    facts = [n.kind if n.op is None else f"op {n.op}", shape_text(n.shape), n.dtype, n.device]
    if n.scope:
        facts.append(f"scope {n.scope}")
    detail = Detail(id=n.id, label=n.label, kind=n.kind, op=n.op, facts=facts, name=n.name,
                    fused=" → ".join(n.attrs.get("ops", ())) if n.op == "fused" else "",
                    output=view.node(view.output).label if view.output else "",
                    gate_note=rules.gate_note(n.gate, n.op), check=check.get(n.id))
    if n.skipped:
        detail.value_note = f"not run: {n.skipped}"
    elif known("forward", n.id):
        detail.value, detail.flags = n.value, list(n.flags)
    else:
        detail.value_note = f"not computed yet: forward step " \
                            f"{view.computed_at('forward', n.id) + 1} computes it"
    if known("backward", n.id):
        detail.grad = n.grad
    elif n.grad is None:
        detail.grad_note = "none (no gradient flows here)"
    else:
        detail.grad_note = f"not computed yet: the backward pass reaches {n.label} at step " \
                           f"{view.computed_at('backward', n.id) + 1}"
    edges = [e for e in view.inputs_of(n.id) if e.grad is not None]
    if edges and known("backward", n.id):
        detail.rules = [_rule(view, e) for e in edges]
    elif edges:
        detail.rules_note = "its inputs receive their gradients when the backward pass " \
                            f"reaches {n.label}"
    consumers = [e for e in view.consumers_of(n.id) if e.grad is not None]
    if len(consumers) > 1 and known("backward", n.id):
        shares = " + ".join(short(e.grad) for e in consumers)
        detail.summed = f"fans out to {len(consumers)} consumers: their gradients sum: " \
                        f"{shares} = {short(n.grad)}"
    return detail


def _hover(n, value, grad, flags, note):
    lines = [f"<b>{n.label}</b> ({n.kind}{', ' + n.op if n.op and n.op != n.label else ''})",
             f"id {n.id} · {shape_text(n.shape)} · {n.dtype} · {n.device}"]
    if n.name:
        lines.append(f"name {n.name}")
    elif n.scope:
        lines.append(f"scope {n.scope}")
    lines.append(f"value: not run, {n.skipped}" if n.skipped else f"value: {short(value)}")
    lines.append(f"gradient: {short(grad)}")
    if note:
        lines.append(note)
    lines += [f"⚠ {w}" for w in flags]
    return "<br>".join(lines)


def mean(array):
    """One number standing for a tensor on the colour scale: its mean (NaN/Inf ignored)."""
    if array is None:
        return None
    array = np.asarray(array)
    if array.size == 0 or array.dtype.kind not in "fiub":
        return None
    finite = array.astype(np.float64)
    finite = finite[np.isfinite(finite)]
    return float(finite.mean()) if finite.size else None


def _largest(numbers):
    return max((abs(x) for x in numbers if x is not None and np.isfinite(x)), default=0.0)
