"""What the inspector draws for a frame: the size of every box and label, their places, and
its SVG picture, in screen pixels (1 unit = 1 px, y growing downwards).

A ``Scene`` is made for one set of boxes and wires (``view.shown()``): it measures their
texts, reserves room for numbers that change while a slider moves, and asks the layout where
everything goes. ``Scene.svg(frame, theme)`` then draws any frame of the walk, and ``Scene.label_boxes(frame)`` lists the rectangle of every text it writes (tests
check that no two overlap). Nothing here touches a widget.
"""
import math
import re

from .. import svg
from ..measure import FONT, text_width
from . import colours
from .layout import layered_layout

WIRE_PX = 14        # a wire's value and gradient: the largest words on it
NAME_PX = 12        # a node's name under it
GATE_PX = 11        # the gate word above an op
SYMBOL_PX = 15      # the sign inside an op's circle
TITLE_PX = 13       # a collapsed box's title
RULE_PX = 12        # the rule under a wire, during its backward step
LINE = 1.3          # line height, in font sizes
MARKER = {"op": 40, "input": 16, "variable": 18, "constant": 12, "placeholder": 18}
SHAPE = {"op": "circle", "input": "square", "variable": "diamond", "constant": "square",
         "placeholder": "triangle-right", "scope": "square", "part": "square"}
RESERVED = "-0.1234"        # room kept for a number on a wire (wider ones: a new layout)
BOX_HEIGHT = 46             # a collapsed scope or part
NOTE_PX = 170               # the widest line under a node's name: a longer note wraps (one
                            # line of a summed gradient's terms ran across other wires)


def _note_lines(box):
    """What is written under a node's name: a note (a summed gradient, a fused node's ops)
    and the gradient check's verdict, wrapped before " = " and " + " into lines of at most
    NOTE_PX (``∇ 7 = 3 + 3 + 1`` stays one line; three terms of ``1×3×2 μ=0.1534`` do not)."""
    lines = []
    for part in re.split(r" (?=[=+] )", " · ".join(filter(None, [box.note, box.check]))):
        if lines and text_width(f"{lines[-1]} {part}", NAME_PX) <= NOTE_PX:
            lines[-1] += " " + part
        elif part:
            lines.append(part)
    return lines


def _symbol_px(box):
    """The font size that fits an op's sign inside its circle ("mean" smaller than "×")."""
    room = MARKER[box.kind] - 8
    return min(SYMBOL_PX, int(SYMBOL_PX * room / text_width(box.symbol, SYMBOL_PX, bold=True)))


def _plain(text):
    """A label without its tags (``<b>`` bold, ``<i>`` italic; ``<br>`` a new line)."""
    text = re.sub(r"<br\s*/?>", "\n", text)
    return re.sub(r"</?[a-z]+>", "", text)


class Scene:
    """The boxes and wires of one ``view.shown()``, measured and laid out."""

    def __init__(self, frame):
        self.ids = [b.id for b in frame.boxes]
        self.kinds = {b.id: b.kind for b in frame.boxes}
        self.links = [(w.source, w.target) for w in frame.wires if w.kind != "control"]
        self.control_links = [(w.source, w.target) for w in frame.wires if w.kind == "control"]
        self.reserved = {}              # wire index → widths kept: (value, gradient, rule)
        sizes = {b.id: self._box_size(b) for b in frame.boxes}
        drawn = [w for w in frame.wires if w.kind != "control"]
        links = []
        for i, w in enumerate(drawn):
            size = self._label_size(i, w) if w.kind == "value" else None
            links.append((w.source, w.target, size))
        self.placement = layered_layout(
            sizes, links, order_links=self.control_links + frame.hidden_links,
            bands={b.id: 1 for b in frame.boxes if b.gradient})
        self.position = self.placement.boxes
        self.sizes = sizes
        self.routes = self.placement.routes
        self.width, self.height = math.ceil(self.placement.width), \
            math.ceil(self.placement.height)

    # ------------------------------------------------------------------ measuring
    def _box_size(self, box):
        if box.kind in ("scope", "part"):
            title = text_width(box.label, TITLE_PX, bold=True)
            return max(title, text_width(f"▸ {box.members} nodes", NAME_PX)) + 20, BOX_HEIGHT
        marker = MARKER[box.kind]
        notes = _note_lines(box)
        words = [text_width(box.label, NAME_PX, bold=box.kind != "op"),
                 text_width(box.gate or "", GATE_PX)] + [text_width(n, NAME_PX) for n in notes]
        lines = 1 + len(notes)
        return max([marker + 4] + words), marker + (lines + 1) * LINE * NAME_PX + 6

    def _label_size(self, index, wire):
        """Room for the value above the wire, the gradient below it and, under that, the
        rule written during the wire's backward step (kept free in every step, so the
        picture does not move)."""
        value = max(text_width(wire.value, WIRE_PX), text_width(RESERVED, WIRE_PX))
        grad = max(text_width(wire.grad, WIRE_PX), text_width("∇ " + RESERVED, WIRE_PX))
        rule = text_width(wire.rule, RULE_PX, bold=True)
        self.reserved[index] = (value, grad, rule)
        below = LINE * RULE_PX if wire.rule else 0
        return max(value, grad, rule) + 8, 2 * LINE * WIRE_PX + below + 8, -below / 2

    def fits(self, frame):
        """Do this frame's texts fit the room kept for them (else: lay out again)?"""
        if [b.id for b in frame.boxes] != self.ids:
            return False
        drawn = [w for w in frame.wires if w.kind != "control"]
        for i, w in enumerate(drawn):
            if i in self.reserved and (text_width(w.value, WIRE_PX) > self.reserved[i][0] or
                                       text_width(w.grad, WIRE_PX) > self.reserved[i][1] or
                                       text_width(w.rule, RULE_PX, True) >
                                       self.reserved[i][2]):
                return False
        for b in frame.boxes:
            if b.kind not in ("scope", "part") and \
                    self._box_size(b)[0] > self.sizes[b.id][0] + 0.5:
                return False
        return True

    # ------------------------------------------------------------------ where texts go
    def texts(self, frame):
        """Every text written on the picture: ``(trace, x, y, text, px)``."""
        found = []
        for b in frame.boxes:
            x, y = self.position[b.id]
            if b.kind in ("scope", "part"):
                found.append(("titles", x, y - 8, f"<b>{b.label}</b>", TITLE_PX))
                found.append(("names", x, y + 11, f"▸ {b.members} nodes", NAME_PX))
                continue
            half = MARKER[b.kind] / 2
            line = LINE * NAME_PX
            if b.symbol:
                found.append(("symbols", x, y, f"<b>{b.symbol}</b>", _symbol_px(b)))
            if b.gate:
                found.append(("gates", x, y - half - line / 2 - 1, f"<i>{b.gate}</i>",
                              GATE_PX))
            label = b.label if b.kind == "op" else f"<b>{b.label}</b>"
            found.append(("names", x, y + half + line / 2 + 1, label, NAME_PX))
            for k, note in enumerate(_note_lines(b)):
                found.append(("notes", x, y + half + (1.5 + k) * line + 1, note, NAME_PX))
        drawn = [w for w in frame.wires if w.kind != "control"]
        for i, (w, route) in enumerate(zip(drawn, self.routes)):
            if route.label is None:
                continue
            x, y = route.label
            offset = LINE * WIRE_PX / 2 + 2
            if i in self.reserved and self.reserved[i][2]:     # (the rule's line is kept)
                y -= LINE * RULE_PX / 2
            if w.value:
                found.append(("values", x, y - offset, w.value, WIRE_PX))
            if w.grad:
                found.append(("grads", x, y + offset, w.grad, WIRE_PX))
            if w.rule and w.active and frame.phase == "backward":
                found.append(("rules", x, y + offset + LINE * (WIRE_PX + RULE_PX) / 2,
                              f"<b>{w.rule}</b>", RULE_PX))
        return found

    def label_boxes(self, frame):
        """The rectangle ``(x0, y0, x1, y1)`` of every text on the picture, with its text."""
        boxes = []
        for _, x, y, text, px in self.texts(frame):
            plain = _plain(text)
            half_w = (text_width(plain, px, bold="<b>" in text) - 4) / 2
            half_h = px * 0.6
            boxes.append((plain, (x - half_w, y - half_h, x + half_w, y + half_h)))
        return boxes

    # ------------------------------------------------------------------ the picture
    def svg(self, frame, theme, selected=None):
        """The picture of ``frame`` in ``theme`` ("light" or "dark"), as SVG: boxes, wires
        (by the gradient they carry), arrowheads, rings, nodes (each a group with its
        ``data-id`` and a tooltip) and every text, each of a class named for what it is
        ("values", "grads", "names", ...: what tests read back)."""
        ink = colours.THEMES[theme]
        body = [self._boxes(frame, ink)]
        body += self._wires(frame, ink)
        rings = [(selected, ink["selected"])] if selected in self.position else []
        if frame.active in self.position:
            rings.append((frame.active, ink["active"]))
        body += [svg.marker("circle", *self.position[box], self._ring(box), fill="none",
                            stroke=colour, stroke_width=4, class_="ring")
                 for box, colour in rings]
        body += [self._node(b, frame, theme) for b in frame.boxes]
        words = {"symbols": None, "names": ink["text"], "gates": ink["gate"],
                 "notes": ink["muted"], "titles": ink["text"], "values": ink["value"],
                 "grads": ink["grad"], "rules": ink["rule"]}
        symbol_ink = iter(self._symbol_ink(b, frame) for b in frame.boxes if b.symbol)
        for kind, x, y, text, px in self.texts(frame):
            colour = next(symbol_ink) if kind == "symbols" else words[kind]
            body.append(svg.text(x, y, _plain(text), px, bold="<b>" in text,
                                 italic="<i>" in text, fill=colour, class_=kind))
        return svg.document(self.width, self.height, body, font=FONT,
                            label=frame.title or "computational graph")

    def _boxes(self, frame, ink):
        """The collapsed scopes and parts, each a box that opens on a click."""
        drawn = []
        for b in frame.boxes:
            if b.kind in ("scope", "part"):
                (x, y), (w, h) = self.position[b.id], self.sizes[b.id]
                rect = svg.rect(x - w / 2, y - h / 2, w, h, fill=ink["box"],
                                stroke=ink["box_line"], stroke_width=1.5)
                drawn.append(svg.group([rect], title=_plain(b.hover), class_="box",
                                       data_id=b.id))
        return "".join(drawn)

    def _node(self, b, frame, theme):
        if b.kind in ("scope", "part"):
            return ""
        x, y = self.position[b.id]
        warned = bool(b.flags)
        fill = colours.device_colour(b.device) if frame.colour_by == "device" else \
            colours.shade(b.level, theme)
        shape = svg.marker(SHAPE[b.kind], x, y, MARKER[b.kind], fill=fill,
                           stroke=colours.WARNING if warned else colours.device_colour(b.device),
                           stroke_width=4 if warned else 1.5)
        return svg.group([shape], title=_plain(b.hover), class_="node", data_id=b.id)

    @staticmethod
    def _symbol_ink(b, frame):
        return "#ffffff" if frame.colour_by == "device" else colours.ink_on(b.level)

    def _ring(self, box):
        kind = self.kinds[box]
        return BOX_HEIGHT + 8 if kind in ("scope", "part") else MARKER[kind] + 8

    def _wires(self, frame, ink):
        """The wires, a path per colour: one per shade of gradient (over a grey casing, so
        that light shades stay visible), the wires without a gradient yet, the bundles to and
        from collapsed boxes, the control links (dotted) and the wires of this step (wide,
        under a veil); an arrowhead on each wire."""
        lines = {key: [] for key in ["casing", *range(-4, 5), "none", "group", "active"]}
        arrows = []
        drawn = [w for w in frame.wires if w.kind != "control"]
        for w, route in zip(drawn, self.routes):
            points = self._clipped(route.points, w)
            kind = "group" if w.kind == "group" else "none" if w.level is None else w.level
            lines[kind].append(points)
            if w.level is not None:
                lines["casing"].append(points)
            if w.active:
                lines["active"].append(points)
            (x0, y0), (x1, y1) = points[-2], points[-1]
            angle = math.degrees(math.atan2(y1 - y0, x1 - x0))
            colour = ink["active"] if w.active else ink["wire"] if kind in ("group", "none") \
                else colours.SHADES[kind + 4]
            tip = (x1 + 5 * math.cos(math.radians(angle)),
                   y1 + 5 * math.sin(math.radians(angle)))
            arrows.append(svg.arrowhead(*tip, angle, 10, fill=colour, class_="arrow"))
        control = [[self.position[w.source], self.position[w.target]]
                   for w in frame.wires if w.kind == "control"]
        style = {"casing": (ink["casing"], 6), "none": (ink["wire"], 1.8),
                 "group": (ink["wire"], 1.5)}
        style.update({level: (colours.SHADES[level + 4], 3) for level in range(-4, 5)})
        out = [svg.polylines(lines[key], stroke=colour, stroke_width=width,
                             stroke_linecap="round", stroke_linejoin="round", class_="wires")
               for key, (colour, width) in style.items()]
        out.append(svg.polylines(control, stroke=ink["wire"], stroke_width=1.2,
                                 stroke_dasharray="2 3", class_="control"))
        out.append(svg.polylines(lines["active"], stroke=ink["active"], stroke_width=9,
                                 stroke_opacity=0.55, stroke_linecap="round",
                                 class_="active"))
        return out + arrows

    def _clipped(self, points, wire):
        """The route, starting at the edge of its source's marker and ending at the edge of
        its target's (where the arrowhead goes)."""
        points = list(points)
        points[0] = _towards(points[0], points[1], self._radius(wire.source))
        if wire.target is not None:
            points[-1] = _towards(points[-1], points[-2], self._radius(wire.target) + 5)
        return points

    def _radius(self, box):
        kind = self.kinds[box]
        if kind in ("scope", "part"):
            return self.sizes[box][0] / 2
        return MARKER[kind] / 2


def _towards(point, other, distance):
    """``point`` moved ``distance`` px towards ``other``."""
    (x0, y0), (x1, y1) = point, other
    length = math.hypot(x1 - x0, y1 - y0)
    if length <= distance or length == 0:
        return point
    return (x0 + (x1 - x0) * distance / length, y0 + (y1 - y0) * distance / length)
