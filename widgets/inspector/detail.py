"""The detail panel: one node's value and gradient in full, and how its inputs receive theirs.

It shows the node as known at the current step (a value the forward pass has not reached yet
is "not computed yet"), and each rule as the lecture writes it: for scalars the numbers
multiply out ("∂L/∂w = ∂L/∂mul × x = 2 × 2 = 4"); for tensors the rule holds element by
element and the mean of what the input receives is given. A vector or matrix is a heatmap in
the picture's colours, with its numbers when they fit the panel and in a tooltip when not.
Colours come from JupyterLab's CSS variables, so the panel follows the notebook's theme.
"""
import html

import numpy as np

from edugraph.view import number, shape_text
from edugraph.view.frame import ColourScale

from . import colours
from ..measure import text_width

PANEL_WIDTH = 340       # px: the narrowest the panel gets beside the picture
MAX_ROWS, MAX_COLUMNS = 12, 16
CELL_PX = 11
MUTED = "var(--jp-ui-font-color2, #616161)"


def node_detail(detail, scales=None):
    """HTML for a ``frame.Detail`` (None: nothing focused); ``scales`` (the frame's, by
    quantity) colour the heatmaps as the picture is coloured."""
    if detail is None:
        return "<div class='inspector-detail'><i>Click a node to see it in full.</i></div>"
    d = detail
    parts = [f"<div class='inspector-detail'><h4 style='margin:4px 0'>"
             f"{html.escape(d.label)} <small>({d.id})</small></h4>",
             f"<div>{' · '.join(map(html.escape, d.facts))}</div>"]
    if d.name:
        parts.append(f"<div><small>graph name {html.escape(d.name)}</small></div>")
    parts += [f"<div style='color:{colours.WARNING}'>⚠ {html.escape(w)}</div>" for w in d.flags]
    if d.fused:
        parts.append(f"<div>one step computing {html.escape(d.fused)}</div>")
    scales = scales or {}
    parts.append(_block("value", d.value, d.value_note, scales.get("value")))
    gradient = f"gradient ∂L/∂{html.escape(d.label)}"
    parts.append(_block(gradient, d.grad, d.grad_note, scales.get("gradient")))
    parts.append(_rules(d))
    if d.check is not None:
        mark = "✓ agrees" if d.check["ok"] else "✗ DISAGREES"
        parts.append(f"<div><b>gradient check</b> (central differences, float64): {mark}; "
                     f"largest relative error {d.check['max_error']:.2e}</div>")
    parts.append("</div>")
    return "".join(parts)


def _rules(d):
    """How the gradient reaches this node's inputs, and how its own gradient was summed."""
    rows = [f"<li>to <b>{html.escape(r.source)}</b>: {html.escape(r.formula)}<br>"
            f"&nbsp;&nbsp;{html.escape(r.numbers)}</li>" for r in d.rules]
    if d.summed:
        rows.append(f"<li>{html.escape(d.summed)}</li>")
    if not rows and not d.rules_note:
        return ""
    where = f"<div style='color:{MUTED}'><small>L is the output, {html.escape(d.output)}; "\
            "⊙ multiplies element by element</small></div>" if d.rules else ""
    note = f"<div style='color:{MUTED}'>{html.escape(d.rules_note)}</div>" \
        if d.rules_note else ""
    gate = f"<div><i>{html.escape(d.gate_note)}</i></div>" if d.gate_note else ""
    items = f"<ul style='margin:2px 0;padding-left:18px'>{''.join(rows)}</ul>" if rows else ""
    return f"<div><b>what each input receives</b>{gate}{items}{where}{note}</div>"


def _block(title, array, note, scale):
    if array is None:
        return f"<div><b>{title}</b>: {html.escape(note) or 'none'}</div>"
    if array.size == 1:
        return f"<div><b>{title}</b>: {number(array.reshape(-1)[0])}</div>"
    return f"<div><b>{title}</b> {_stats(array)}{heatmap(array, scale)}</div>"


def _stats(array):
    values = np.asarray(array, dtype=np.float64)
    finite = values[np.isfinite(values)]
    parts = [f"{shape_text(values.shape)}"]
    parts += [f"min {number(finite.min())}", f"max {number(finite.max())}",
              f"mean {number(finite.mean())}"] if finite.size else ["no finite values"]
    nan, inf = int(np.isnan(values).sum()), int(np.isinf(values).sum())
    parts += [f"<span style='color:{colours.WARNING}'>{c} {w}</span>"
              for c, w in ((nan, "NaN"), (inf, "Inf")) if c]
    return "<small>(" + ", ".join(parts) + ")</small>"


def heatmap(array, scale=None, width=PANEL_WIDTH):
    """A table of cells coloured on ``scale`` (by default one fitted to this tensor): with
    their numbers when every column fits in ``width`` px, else as small squares whose number
    shows on hover. Bigger tensors show their first rows and columns, and say so."""
    a = np.asarray(array, dtype=np.float64)
    notes = []
    if a.ndim > 2:
        notes.append(f"first slice [{', '.join(['0'] * (a.ndim - 2))}, :, :] of "
                     f"{shape_text(a.shape)}")
        a = a.reshape((-1,) + a.shape[-2:])[0]
    a = a.reshape(1, -1) if a.ndim == 1 else a
    if a.shape[0] > MAX_ROWS or a.shape[1] > MAX_COLUMNS:
        notes.append(f"first {min(a.shape[0], MAX_ROWS)} of {a.shape[0]} rows and "
                     f"{min(a.shape[1], MAX_COLUMNS)} of {a.shape[1]} columns shown")
        a = a[:MAX_ROWS, :MAX_COLUMNS]
    scale = scale or ColourScale.fitting("value", a[np.isfinite(a)].tolist())
    texts = [[number(x) for x in row] for row in a]
    column_px = [max(text_width(t, CELL_PX) for t in column) + 6 for column in zip(*texts)]
    numbers = sum(column_px) <= width
    if not numbers:
        notes.append("hover a cell for its number")
    rows = []
    for row, row_texts in zip(a, texts):
        cells = []
        for x, text in zip(row, row_texts):
            level = scale.level(x) if np.isfinite(x) else None
            fill = colours.WARNING if not np.isfinite(x) else colours.shade(level, "light")
            ink = colours.ink_on(level) if np.isfinite(x) else "#ffffff"
            style = f"background:{fill};color:{ink};border:1px solid rgba(128,128,128,0.25);"
            if numbers:
                cells.append(f"<td style='{style}padding:1px 3px;text-align:right;"
                             f"font-size:{CELL_PX}px'>{text}</td>")
            else:
                cells.append(f"<td title='{text}' style='{style}width:16px;height:16px;"
                             f"padding:0'></td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<div style='color:{MUTED}'><small>{'; '.join(notes)}</small></div>" \
        if notes else ""
    return (f"<div style='overflow-x:auto;max-width:100%'><table class='inspector-heatmap' "
            f"data-columns='{a.shape[1]}' style='border-collapse:collapse;margin:2px 0'>"
            f"{''.join(rows)}</table></div>{caption}")
