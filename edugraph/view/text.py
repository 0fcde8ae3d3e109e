"""The text form of a view: the tables ``print(view)`` shows.

The tables are deterministic (nbval compares them with the lessons' stored outputs): every
number is written by ``numbers.py``, the same way on every machine.
"""
import html

from . import rules
from .numbers import shape_text, short


def rows(view):
    """One row per node shown (a collapsed scope: one row; hidden nodes: none): the
    columns of the text and HTML tables."""
    owner = view.visible_nodes()
    found, groups = [], {}
    for n in view.nodes:
        shown = owner.get(n.id)
        if shown is None:
            continue
        if shown != n.id:
            if shown not in groups:
                groups[shown] = {"id": shown, "node": shown[6:] + " ▸", "kind": "scope",
                                 "scope": shown[6:].rpartition("/")[0], "inputs": "",
                                 "shape": "", "value": "", "gradient": "", "gate": "",
                                 "flags": "", "count": 0}
                found.append(groups[shown])
            groups[shown]["count"] += 1
            groups[shown]["value"] = f"{groups[shown]['count']} nodes"
            continue
        gate = n.gate or ""
        if n.sums > 1:
            gate = (gate + ", " if gate else "") + f"sums {n.sums}"
        found.append({"id": n.id, "node": n.label, "kind": n.kind,
                      "scope": n.scope, "inputs": " ".join(n.inputs),
                      "shape": shape_text(n.shape),
                      "value": short(n.value) if not n.skipped else
                      "-" if n.shape is None else "not run",      # (no single value)
                      "gradient": "-" if n.grad is None else short(n.grad),
                      "gate": gate, "flags": "; ".join(n.flags)})
    return found


def edge_rows(view):
    owner = view.visible_nodes()
    return [{"edge": f"{e.source} -> {e.target}.{e.index}",
             "carries": short(e.grad), "rule": _rule(view, e)}
            for e in view.edges if e.grad is not None and
            owner.get(e.source) == e.source and owner.get(e.target) == e.target]


def _rule(view, edge):
    target = view.node(edge.target)
    return rules.in_table(edge, target.op, view.argument_names(target.id), target.label)


def hidden_note(view):
    hidden = sum(1 for n in view.nodes if n.gradient_node) \
        if not view.gradient_nodes_shown else 0
    return [f"({hidden} gradient nodes hidden)"] if hidden else []


def _columns(view):
    columns = ["id", "node", "kind", "shape", "value", "gradient", "inputs", "gate", "flags"]
    if any(n.scope for n in view.nodes):
        columns.insert(3, "scope")
    return columns


def to_text(view):
    """A fixed-width table of nodes and one of edges: deterministic, for nbval."""
    lines = [view.title] if view.title else []
    lines += _table(_columns(view), rows(view)) + hidden_note(view)
    edges = edge_rows(view)
    if edges:
        lines += ["", "gradient flow (what each edge carries back):"]
        lines += _table(["edge", "carries", "rule"], edges)
    return "\n".join(line.rstrip() for line in lines)


def to_html(view):
    columns = _columns(view)
    head = "".join(f"<th>{c}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(r[c]))}</td>" for c in columns)
                   + "</tr>" for r in rows(view))
    title = f"<b>{html.escape(view.title)}</b>" if view.title else ""
    note = "".join(f"<div>{html.escape(line)}</div>" for line in hidden_note(view))
    return (f"{title}<table class='edugraph-view'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{note}")


def _table(columns, rows):
    widths = {c: max([len(c)] + [len(str(r[c])) for r in rows]) for c in columns}
    lines = ["  ".join(c.ljust(widths[c]) for c in columns)]
    lines.append("  ".join("-" * widths[c] for c in columns))
    lines += ["  ".join(str(r[c]).ljust(widths[c]) for c in columns) for r in rows]
    return lines
