"""The detail panel: one node's value and gradient in full, and the local rule with numbers.

A scalar is shown as a number; a vector or matrix as a heatmap (coloured table cells) with
min / max / mean and NaN / Inf counts; a bigger tensor by its first 2-D slice and its statistics.
"""
import html

import numpy as np

from edugraph.view import edge_rule, number, shape_text, short

from . import colours

MAX_CELLS = 12                  # rows and columns of a heatmap before it is cut


def node_detail(view, node_id, check=None):
    """HTML describing node ``node_id`` of ``view`` (and the gradient check, if given)."""
    n = view.node(node_id)
    facts = [n.kind if n.op is None else f"op <b>{n.op}</b>", shape_text(n.shape), n.dtype,
             n.device] + ([f"scope {html.escape(n.scope)}"] if n.scope else [])
    parts = [f"<div class='inspector-detail'><h4 style='margin:4px 0'>"
             f"{html.escape(n.label)} <small>({n.id})</small></h4>",
             f"<div>{' · '.join(facts)}</div>"]
    if n.name:
        parts.append(f"<div><small>graph name {html.escape(n.name)}</small></div>")
    parts += [f"<div style='color:{colours.WARNING}'>⚠ {html.escape(w)}</div>" for w in n.flags]
    if n.op == "fused":
        fused = " → ".join(map(html.escape, n.attrs.get("ops", ())))
        parts.append(f"<div>one step computing {fused}</div>")
    parts.append(f"<div><b>value</b>: not run: {html.escape(n.skipped)}</div>" if n.skipped
                 else _block("value", n.value))
    parts.append(_block("gradient ∂out/∂" + html.escape(n.label), n.grad))
    parts.append(_rules(view, n))
    verdict = (check or {}).get(n.id)
    if verdict is not None:
        mark = "✓ agrees" if verdict["ok"] else "✗ DISAGREES"
        parts.append(f"<div><b>gradient check</b> (central differences, float64): {mark}; "
                     f"largest relative error {verdict['max_error']:.2e}; numeric "
                     f"{short(verdict['numeric'])}, analytic {short(verdict['analytic'])}</div>")
    parts.append("</div>")
    return "".join(parts)


def _rules(view, n):
    """How the gradient reaches this node's inputs, and how its own gradient was summed."""
    rows = []
    for e in view.inputs_of(n.id):
        source = view.node(e.source).label
        if e.grad is None:
            rows.append(f"<li>{html.escape(source)} (input {e.index}): no gradient</li>")
            continue
        rows.append(f"<li>to <b>{html.escape(source)}</b>: "
                    f"{html.escape(edge_rule(e, n.op))}</li>")
    consumers = [e for e in view.consumers_of(n.id) if e.grad is not None]
    if len(consumers) > 1:
        shares = " + ".join(short(e.grad) for e in consumers)
        rows.append(f"<li>fans out to {len(consumers)} consumers: their gradients "
                    f"<b>sum</b>: {shares} = {short(n.grad)}</li>")
    if not rows:
        return ""
    title = "upstream × local = what each input receives" if n.op else "gradient received"
    gate = f" — <i>{n.op} {n.gate}</i>" if n.gate else ""
    return f"<div><b>{title}</b>{gate}<ul style='margin:2px 0'>{''.join(rows)}</ul></div>"


def _block(title, array):
    if array is None:
        return f"<div><b>{title}</b>: none (no gradient flows here)</div>"
    if array.size == 1:
        return f"<div><b>{title}</b>: {number(array.reshape(-1)[0])}</div>"
    return f"<div><b>{title}</b> {_stats(array)}{heatmap(array)}</div>"


def _stats(array):
    values = np.asarray(array, dtype=np.float64)
    finite = values[np.isfinite(values)]
    parts = [f"min {number(finite.min())}", f"max {number(finite.max())}",
             f"mean {number(finite.mean())}"] if finite.size else ["no finite values"]
    nan, inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
    parts += [f"<span style='color:{colours.WARNING}'>{c} {w}</span>"
              for c, w in ((nan, "NaN"), (inf, "Inf")) if c]
    return "<small>(" + ", ".join(parts) + ")</small>"


def heatmap(array):
    """A table whose cells are coloured by sign and size; big tensors show their first slice."""
    a = np.asarray(array, dtype=np.float64)
    note = ""
    if a.ndim > 2:
        note = f"first slice [{', '.join(['0'] * (a.ndim - 2))}, :, :] of {shape_text(a.shape)}"
        a = a.reshape((-1,) + a.shape[-2:])[0]
    a = a.reshape(1, -1) if a.ndim == 1 else a
    if a.shape[0] > MAX_CELLS or a.shape[1] > MAX_CELLS:
        note = (note + "; " if note else "") + f"first {MAX_CELLS}×{MAX_CELLS} cells shown"
        a = a[:MAX_CELLS, :MAX_CELLS]
    finite = np.abs(a[np.isfinite(a)])
    largest = finite.max() if finite.size else 0.0
    rows = []
    for row in a:
        cells = []
        for x in row:
            colour = colours.WARNING if not np.isfinite(x) else \
                colours.diverging(x / largest if largest else 0.0)
            cells.append(f"<td style='background:{colour};padding:1px 4px;text-align:right;"
                         f"font-size:11px'>{number(x)}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<div><small>{note}</small></div>" if note else ""
    return (f"<table class='inspector-heatmap' style='border-collapse:collapse;margin:2px 0'>"
            f"{''.join(rows)}</table>{caption}")
