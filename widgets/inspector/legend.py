"""The key under the picture: what the shapes, the words on a wire, the gate words and the
colours mean, with the colour bar of the scale that is shown."""
import html

from edugraph.view import number
from edugraph.view.rules import GATES, SUMS

from . import colours

MUTED = "var(--jp-ui-font-color2, #616161)"


def legend(frame, theme):
    """HTML for ``frame``: a colour bar, the wire convention, the gate words on screen."""
    ink = colours.THEMES[theme]
    wire = (f"a wire carries its value above it "
            f"(<b style='color:{ink['value']}'>green</b>) and its gradient ∇ below it "
            f"(<b style='color:{ink['grad']}'>red</b>); in a backward step, each "
            f"<span style='color:{ink['active']}'>lit</span> wire shows the rule that makes "
            f"its gradient (<b style='color:{ink['rule']}'>∇ ⊙ w</b>: the upstream gradient ∇ "
            f"times w, element by element)")
    shapes = ("● op, its sign inside &nbsp; ■ input &nbsp; ◆ variable &nbsp; ▪ constant "
              "&nbsp; ▶ placeholder &nbsp; ▭ a collapsed name scope or part: click to open "
              "&nbsp;|&nbsp; border: device (grey CPU, green GPU, purple sim), "
              f"<span style='color:{colours.WARNING}'>red: a warning</span> &nbsp;|&nbsp; "
              "⋯ runs after (control dependency)")
    lines = [colour_bar(frame), wire, shapes] + gate_words(frame)
    return ("<div class='inspector-legend' style='font-size:12px;line-height:1.5'>" +
            "".join(f"<div>{line}</div>" for line in lines) + "</div>")


def colour_bar(frame):
    """The shades of the scale shown, each with the numbers it stands for."""
    if frame.scale is None:
        return ("<b>colour</b>: the node's device (grey CPU, green GPU, purple sim); wires "
                "by their gradient: " + _bar(frame.scales["gradient"]))
    what = "gradient ∇" if frame.colour_by == "gradient" else "value"
    wires = "; wires: the gradient they carry, same scale" if frame.colour_by == "gradient" \
        else "; wires by their gradient: " + _bar(frame.scales["gradient"])
    return (f"<b>colour</b>: each node's {what} (a tensor's mean), symmetric log scale "
            f"{_bar(frame.scale)}{wires}")


def _bar(scale):
    edges = scale.boundaries()           # floor, 10·floor, …, limit
    cells = []
    for level in range(-scale.decades, scale.decades + 1):
        if level == 0:
            span = f"|x| < {number(edges[0])}"
        else:
            low, high = edges[abs(level) - 1], edges[abs(level)]
            sign = "" if level > 0 else "−"
            span = f"{sign}{number(low)} … {sign}{number(high)}"
        fill = colours.SHADES[level + 4]
        cells.append(f"<span class='inspector-shade' title='{span}' style='display:inline-"
                     f"block;min-width:26px;padding:0 3px;text-align:center;background:{fill};"
                     f"color:{colours.ink_on(level)};font-size:10px'>"
                     f"{_tick(level, edges)}</span>")
    return (f"<span class='inspector-colour-bar' data-limit='{number(scale.limit)}' "
            f"style='white-space:nowrap;border:1px solid {MUTED}'>{''.join(cells)}</span>"
            f" <span style='color:{MUTED}'>(up to ±{number(scale.limit)}; "
            f"white: about 0)</span>")


def _tick(level, edges):
    """The number written on a shade: its larger end (0 for the middle one)."""
    if level == 0:
        return "0"
    return ("" if level > 0 else "−") + number(edges[abs(level)])


def gate_words(frame):
    """One line per gate word on screen: what it says about the gradient."""
    seen = []
    for box in frame.boxes:
        for word in box.gate.replace(" · ", ",").split(","):
            word = word.split()[0] if word.strip() else ""
            if word and word not in seen:
                seen.append(word)
    lines = []
    for word in seen:
        meaning = GATES.get(word, SUMS if word == "sums" else None)
        if meaning:
            text = html.escape(meaning.split(": ", 1)[1])
            lines.append(f"<i>{word}</i>: {text}")
    return lines
