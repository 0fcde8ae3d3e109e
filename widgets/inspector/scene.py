"""What the inspector draws for a graph view: node markers, arrows, labels — as plain lists.

A ``Scene`` is the view seen through the display choices (collapsed name scopes, hidden gradient
nodes); ``Scene.frame`` turns one moment (a step of the walk, a selected node, a colour rule)
into the arrays plotly draws. Nothing here touches a widget, so all of it is unit-tested.
"""
import heapq
import math

import numpy as np

from edugraph.view import number, shape_text, short

from . import colours
from .layout import layered_layout

SYMBOL = {"op": "circle", "input": "square", "variable": "diamond", "constant": "square",
          "placeholder": "triangle-right", "scope": "square"}
SIZE = {"op": 26, "input": 24, "variable": 26, "constant": 14, "placeholder": 26, "scope": 40}
X_SPACING, Y_SPACING = 1.0, 1.0


class Scene:
    """The nodes and links on screen, their positions, for one set of display choices."""

    def __init__(self, view, collapsed=None, show_gradient_nodes=None):
        """``collapsed`` scopes and ``show_gradient_nodes``: by default the view's own
        choices (``view.collapse(...)``, ``view.show_gradient_nodes(...)``)."""
        self.view = view
        self.owner = view.visible_nodes(collapsed, show_gradient_nodes)   # node → shown id
        self.collapsed = tuple(sorted(view.collapsed if collapsed is None else collapsed))
        self.members = {}                        # shown id → node ids it stands for
        for node_id, shown in self.owner.items():
            self.members.setdefault(shown, []).append(node_id)
        self.links = self._linked(view.edges)
        self.control_links = [(s, t) for s, t, _ in self._linked(view.control_edges)
                              if (s, t) not in {(a, b) for a, b, _ in self.links}]
        pairs = [(s, t) for s, t, _ in self.links] + self.control_links
        pairs += [p for p in self._through_hidden() if p not in set(pairs)]
        self.shown = _topological(list(self.members), pairs)
        grid = layered_layout(self.shown, pairs)
        self.position = {k: (c * X_SPACING, -r * Y_SPACING) for k, (c, r) in grid.items()}

    def _through_hidden(self):
        """Pairs of shown nodes joined only through hidden (gradient) nodes. They are not
        drawn, but the layout keeps their order: an optimizer's update stays right of the
        loss whose gradients it applies."""
        reach, pairs = {}, {}           # hidden node → shown nodes it is computed from
        for n in self.view.nodes:
            target = self.owner.get(n.id)
            sources = {}
            for i in n.inputs:
                if i in self.owner:
                    sources[self.owner[i]] = None
                else:
                    sources.update(reach.get(i, {}))
                    if target is not None:
                        pairs.update(((s, target), None) for s in reach.get(i, {})
                                     if s != target)
            if target is None:
                reach[n.id] = sources
        return list(pairs)

    def _linked(self, edges):
        """Edges between what is shown: [(source, target, edges)], one link per pair."""
        links = {}
        for e in edges:
            source, target = self.owner.get(e.source), self.owner.get(e.target)
            if source is not None and target is not None and source != target:
                links.setdefault((source, target), []).append(e)
        return [(s, t, grouped) for (s, t), grouped in links.items()]

    def is_group(self, shown):
        return shown.startswith("scope:")

    def kind(self, shown):
        return "scope" if self.is_group(shown) else self.view.node(shown).kind

    # ------------------------------------------------------------------ one moment
    def frame(self, step=None, selected=None, colour_by="gradient", check=None, aspect=1.0):
        """Arrays for every trace at ``step`` (an index into ``view.steps()``; None: the whole
        result), with ``selected`` (a shown id) ringed and ``check`` (a gradient check report)
        marked on the leaves. ``aspect`` is the screen's pixels per y unit over pixels per x
        unit (so arrowheads point along their edges as drawn)."""
        view = self.view
        walk = view.steps()
        if step is None or step >= len(walk):
            values = grads = {n.id for n in view.nodes}
            active, active_edges, caption = None, set(), "result: forward and backward done"
        else:
            values, grads = view.known_at(step)
            active, active_edges = walk[step]["node"], set(walk[step]["edges"])
            caption = self._caption(walk, step)
        carrying = {e.id for e in view.edges if e.grad is not None and e.target in grads}
        check = check or {}

        out = {"caption": caption, "node_x": [], "node_y": [], "node_text": [], "hover": [],
               "symbol": [], "size": [], "colour": [], "line_colour": [], "line_width": [],
               "gate_text": [], "ids": list(self.shown)}
        numbers = []
        for shown in self.shown:
            x, y = self.position[shown]
            out["node_x"].append(x)
            out["node_y"].append(y)
            kind = self.kind(shown)
            out["symbol"].append(SYMBOL[kind])
            out["size"].append(SIZE[kind])
            if self.is_group(shown):
                inner = len(self.members[shown])
                out["node_text"].append(f"<b>{shown[6:]} ▸</b><br>{inner} nodes")
                out["hover"].append(f"name scope {shown[6:]}: {inner} nodes (collapsed)")
                out["gate_text"].append("")
                out["line_colour"].append(colours.DEVICE["cpu"])
                out["line_width"].append(1)
                numbers.append(None)
                continue
            n = view.node(shown)
            value = n.value if n.id in values else None
            grad = n.grad if n.id in grads else None
            lines = [f"<b>{n.label}</b>" if n.kind != "op" or n.label != n.op else n.label]
            if n.op == "fused":
                lines.append("fused " + "·".join(n.attrs.get("ops", ())))
            if value is not None and n.kind != "constant":
                text = brief(value)
                lines.append(text if text.startswith("μ") else f"= {text}")
            if grad is not None:
                lines.append(f"∇ {brief(grad)}")
            warnings = list(n.flags) if n.id in values else []
            verdict = check.get(n.id)
            if verdict is not None:
                lines.append("✓ grad check" if verdict["ok"] else "✗ grad check")
                if not verdict["ok"]:
                    warnings.append("gradient check failed")
            if warnings:
                lines.append("⚠ " + warnings[0].split(":")[0])
            out["node_text"].append("<br>".join(lines))
            out["hover"].append(_hover(n, value, grad, warnings))
            gate = n.gate or ""
            if n.sums > 1 and n.id in grads:
                gate = f"{gate} · sums {n.sums}" if gate else f"sums {n.sums}"
            out["gate_text"].append(f"<i>{gate}</i>" if gate else "")
            out["line_colour"].append(colours.WARNING if warnings
                                      else colours.device_colour(n.device))
            out["line_width"].append(4 if warnings else 2)
            source = {"gradient": grad, "value": value}.get(colour_by)
            numbers.append(colours.summary_number(source))
        if colour_by == "device":
            out["colour"] = [colours.NO_NUMBER if self.is_group(s) else
                             colours.device_colour(view.node(s).device) for s in self.shown]
        else:
            out["colour"] = colours.signed_colours(numbers)

        out.update(self._edges(active_edges, carrying, aspect))
        rings = [(s, colours.SELECTED) for s in [selected] if s in self.position]
        if active is not None and active in self.owner:
            rings.append((self.owner[active], colours.ACTIVE))
        out["ring_x"] = [self.position[s][0] for s, _ in rings]
        out["ring_y"] = [self.position[s][1] for s, _ in rings]
        out["ring_colour"] = [c for _, c in rings]
        out["active"] = None if active is None else self.owner.get(active)
        return out

    def _edges(self, active_edges, carrying, aspect):
        """Lines with an arrowhead 3/4 along, a label at the middle, the active ones apart."""
        lines = {"edge_x": [], "edge_y": [], "active_x": [], "active_y": [], "arrow_x": [],
                 "arrow_y": [], "arrow_angle": [], "label_x": [], "label_y": [],
                 "label_text": [], "control_x": [], "control_y": []}
        for source, target in self.control_links:     # "runs after": dotted, no label
            (x0, y0), (x1, y1) = self.position[source], self.position[target]
            lines["control_x"] += [x0, x1, None]
            lines["control_y"] += [y0, y1, None]
        for source, target, edges in self.links:
            (x0, y0), (x1, y1) = self.position[source], self.position[target]
            lit = any(e.id in active_edges for e in edges)
            prefix = "active_" if lit else "edge_"
            lines[prefix + "x"] += [x0, x1, None]
            lines[prefix + "y"] += [y0, y1, None]
            lines["arrow_x"].append(x0 + 0.75 * (x1 - x0))
            lines["arrow_y"].append(y0 + 0.75 * (y1 - y0))
            # plotly turns markers clockwise, in screen pixels (y grows downwards there)
            lines["arrow_angle"].append(math.degrees(math.atan2(-(y1 - y0) * aspect, x1 - x0)))
            lines["label_x"].append((x0 + x1) / 2)
            lines["label_y"].append((y0 + y1) / 2)
            # (none on links of a collapsed scope: they bundle edges of many shapes)
            lines["label_text"].append("" if self.is_group(source) or self.is_group(target)
                                       else _edge_label(edges, carrying))
        return lines

    def _caption(self, walk, step):
        s = walk[step]
        n = self.view.node(s["node"])
        total = sum(1 for t in walk if t["phase"] == s["phase"])
        index = sum(1 for t in walk[:step + 1] if t["phase"] == s["phase"])
        if s["phase"] == "forward" and n.skipped:
            return f"forward {index}/{total}: {n.label} is not run: {n.skipped}"
        if s["phase"] == "forward":
            what = f"{n.label} = {short(n.value)}" if n.is_leaf else \
                f"{n.label}({', '.join(self.view.node(i).label for i in n.inputs)}) = " \
                f"{short(n.value)}"
            return f"forward {index}/{total}: {what}"
        if n.id == self.view.output:
            return f"backward {index}/{total}: start at {n.label} with gradient 1"
        if n.is_leaf:
            return f"backward {index}/{total}: {n.label} receives ∇ {short(n.grad)}"
        return f"backward {index}/{total}: {n.label} ({n.gate or n.op}) sends ∇ " \
               f"{short(n.grad)} back to its inputs"


def _topological(keys, links):
    """``keys`` reordered so that every link goes forward (Kahn's algorithm; ties keep the
    given order). Collapsing a scope can break the graph's own order; a cycle through a
    collapsed scope keeps the given order for the nodes on it."""
    waiting = {k: 0 for k in keys}
    after = {k: [] for k in keys}
    for source, target in links:
        waiting[target] += 1
        after[source].append(target)
    rank = {k: i for i, k in enumerate(keys)}
    ready = [(rank[k], k) for k in keys if waiting[k] == 0]
    order = []
    while ready:
        _, k = heapq.heappop(ready)
        order.append(k)
        for t in after[k]:
            waiting[t] -= 1
            if waiting[t] == 0:
                heapq.heappush(ready, (rank[t], t))
    placed = set(order)
    return order + [k for k in keys if k not in placed]


def _edge_label(edges, carrying):
    """The shape each edge carries forward, and the gradient it carries back (if known yet)."""
    e = edges[0]
    text = shape_text(e.shape)
    if len(edges) > 1:
        text = f"{len(edges)}× {text}"
    if e.id in carrying and len(edges) == 1 and e.grad.size <= 3:   # (bigger: in the detail)
        text += f"<br>∇ {short(e.grad)}"
        if e.summed_axes:
            text += f" (Σ axes {','.join(map(str, e.summed_axes))})"
    return text


def brief(array):
    """A value on the picture: a number or a short vector; a bigger tensor by its mean alone
    (its shape is written on its edges)."""
    array = np.asarray(array)
    if array.size > 1 and not (array.ndim == 1 and array.size <= 3) and \
            array.dtype.kind in "fiub":
        return f"μ={number(array.astype(np.float64).mean())}"
    return short(array)


def _hover(n, value, grad, warnings):
    lines = [f"<b>{n.label}</b> ({n.kind}{', ' + n.op if n.op and n.op != n.label else ''})",
             f"id {n.id} · {shape_text(n.shape)} · {n.dtype} · {n.device}"]
    if n.name:
        lines.append(f"name {n.name}")
    elif n.scope:
        lines.append(f"scope {n.scope}")
    lines.append(f"value: not run, {n.skipped}" if n.skipped else f"value: {short(value)}")
    lines.append(f"gradient: {short(grad)}")
    lines += [f"⚠ {w}" for w in warnings]
    return "<br>".join(lines)

