"""The projector's picture: points, their labels and the axes, drawn as one SVG.

    >>> Scatter(coordinates, colours, tips=words, labelled=[0, 5]).svg(600, 520)

What the widget's ``Picture`` holds (its synced state: every view draws the current points) and
what a saved notebook shows as a static figure (``word_map``). In 2-D the axes span the points
with a 5 % margin; in 3-D the points are turned by ``turn`` degrees about the vertical axis and
tilted by ``tilt``, each axis scaled to the same length (a cube, as plotly's 3-D scenes), and
drawn from the farthest to the nearest. Every point is a circle whose ``data-id`` is its data
row (a click on it selects that row) and whose tooltip is its label. The labels are drawn after
all the points, each on the side of its point where it overlaps no other (``labels.py``), with a
halo in the background's colour so that a word over a cluster still reads.
"""
import html
import math
from dataclasses import dataclass, field

import numpy as np

from .. import svg
from ..chart import INK, Scale, linear_ticks, tick_label
from ..measure import FONT, text_width
from .labels import label_box, place_labels

MARGIN = dict(l=58, r=12, t=12, b=44)      # px around the plot area: ticks and axis titles
LABEL_PX, TICK_PX = 11, 11
LABEL_MARKER = 10          # px: the marker size labels keep clear of
BACKGROUND = {"light": "#ffffff", "dark": "#111111"}    # JupyterLab's: the labels' halo
CUBE = math.sqrt(3)        # the farthest a corner of the turned unit cube is from its centre


@dataclass
class Scatter:
    """What one picture shows: ``coordinates`` (n, 2) or (n, 3); ``colours`` and ``sizes``
    (diameters in px) per point; ``ids``: each point's ``data-id`` (default its position);
    ``tips``: each point's tooltip; ``labelled``: the positions of the points whose ``tips``
    are written beside them, most important first; ``axis_titles``; ``legend``:
    ``[(name, colour)]`` drawn at the top (the widget shows its legend above the picture)."""
    coordinates: np.ndarray
    colours: list
    sizes: list = None
    ids: list = None
    tips: list = None
    labelled: list = field(default_factory=list)
    axis_titles: list = field(default_factory=list)
    legend: list = field(default_factory=list)
    title: str = ""
    background: bool = False     # a background of the theme's colour (else see-through)
    turn: float = 30.0
    tilt: float = 20.0

    def area(self, width, height):
        """The plot area ``(x0, y0, x1, y1)`` in px: the picture less its margins, its title
        and its legend."""
        return (MARGIN["l"], MARGIN["t"] + self._top(width), width - MARGIN["r"],
                height - MARGIN["b"])

    def _top(self, width):
        return (24 if self.title else 0) + (self._legend(width, 0)[1] if self.legend else 0)

    def on_screen(self, width, height):
        """Each point's place in px (y downwards), and its depth (3-D: larger is farther;
        2-D: None)."""
        x0, y0, x1, y1 = self.area(width, height)
        points = np.asarray(self.coordinates, dtype=np.float64)
        if points.shape[1] == 2:
            (low_x, high_x), (low_y, high_y) = self.ranges()
            x = Scale(low_x, high_x, x0, x1)
            y = Scale(low_y, high_y, y1, y0)
            return np.column_stack([x(points[:, 0]), y(points[:, 1])]), None
        u, v, depth = self._turned(points)
        half = min(x1 - x0, y1 - y0) / 2 / CUBE
        return np.column_stack([(x0 + x1) / 2 + u * half, (y0 + y1) / 2 - v * half]), depth

    def ranges(self):
        """2-D: the data range of each axis, the points' own with a 5 % margin."""
        spans = []
        for values in np.asarray(self.coordinates, dtype=np.float64).T:
            low, high = (float(values.min()), float(values.max())) if len(values) else (0, 1)
            pad = 0.05 * (high - low) or 1.0
            spans.append((low - pad, high + pad))
        return spans

    def _turned(self, points):
        """3-D: each axis scaled into [-1, 1], turned and tilted: screen right, up, depth."""
        low, high = points.min(axis=0), points.max(axis=0)
        centre, half = (low + high) / 2, np.where(high > low, (high - low) / 2, 1.0)
        return self._rotated((points - centre) / half)

    def _rotated(self, unit):
        """Points in the unit cube's coordinates, turned about z, then tilted towards the
        viewer: (right, up, depth)."""
        x, y, z = unit.T
        turn, tilt = math.radians(self.turn), math.radians(self.tilt)
        right = x * math.cos(turn) - y * math.sin(turn)
        back = x * math.sin(turn) + y * math.cos(turn)
        return right, z * math.cos(tilt) - back * math.sin(tilt), \
            back * math.cos(tilt) + z * math.sin(tilt)

    def labels(self, width, height):
        """``[(position, side)]`` of the labels that fit, in ``labelled`` order."""
        if not self.labelled or self.tips is None:
            return []
        xy, _ = self.on_screen(width, height)
        wanted = list(dict.fromkeys(self.labelled))
        sides = place_labels([tuple(xy[i]) for i in wanted], [self.tips[i] for i in wanted],
                             LABEL_PX, LABEL_MARKER, self.area(width, height))
        return [(i, side) for i, side in zip(wanted, sides) if side is not None]

    def svg(self, width, height, theme="light"):
        """The picture, ``width`` × ``height`` px."""
        ink = INK[theme]
        xy, depth = self.on_screen(width, height)
        n = len(xy)
        sizes = np.full(n, 6.0) if self.sizes is None else np.asarray(self.sizes, float)
        ids = range(n) if self.ids is None else self.ids
        tips = self.tips if self.tips is not None else [None] * n
        body = [svg.rect(0, 0, width, height, fill=BACKGROUND[theme])] if self.background \
            else []
        if self.title:
            body.append(svg.text(width / 2, 14, self.title, TICK_PX + 3, bold=True,
                                 fill=ink["text"], class_="title"))
        if self.legend:
            body += self._legend(width, 24 if self.title else 0, ink)[0]
        body += self._axes(width, height, theme)
        # the farthest first (3-D); in 2-D the larger (highlighted) points last, on top
        order = np.argsort(-depth, kind="stable") if depth is not None else \
            np.argsort(sizes, kind="stable")
        dots = []
        for i in order:
            x, y = xy[i]
            dot = (f'<circle data-id="{ids[i]}" cx="{svg.number(x)}" cy="{svg.number(y)}" '
                   f'r="{svg.number(sizes[i] / 2)}" fill="{self.colours[i]}">')
            dots.append(dot + (f"<title>{html.escape(str(tips[i]))}</title></circle>"
                               if tips[i] is not None else "</circle>"))
        body.append(svg.group(dots, class_="points"))
        words = []
        for i, side in self.labels(width, height):
            x0, y0, x1, y1 = label_box(*xy[i], self.tips[i], side, LABEL_PX, LABEL_MARKER)
            words.append(svg.text(x0 + 2, (y0 + y1) / 2, self.tips[i], LABEL_PX,
                                  anchor="start", fill=ink["text"], class_="label",
                                  stroke=BACKGROUND[theme], stroke_width=3,
                                  paint_order="stroke", stroke_linejoin="round"))
        body.append(svg.group(words, class_="labels"))
        return svg.document(width, height, body, font=FONT,
                            label=self.title or f"{n} points")

    def _legend(self, width, top, ink=INK["light"]):
        """The legend's swatches and names in rows that fit ``width``; the height they take."""
        drawn, x, y = [], MARGIN["l"], top + 10
        for name, colour in self.legend:
            size = 18 + text_width(name, TICK_PX)
            if x + size > width - MARGIN["r"] and x > MARGIN["l"]:
                x, y = MARGIN["l"], y + 16
            drawn += [svg.marker("circle", x + 5, y, 9, fill=colour),
                      svg.text(x + 13, y, name, TICK_PX, anchor="start", fill=ink["text"],
                               class_="legend")]
            x += size + 12
        return drawn, y + 10 - top

    def _axes(self, width, height, theme):
        """2-D: a frame, a light grid with round ticks and the axis titles. 3-D: the three
        edges of the cube that meet at its corner (-1, -1, -1), named at their ends."""
        ink, x0, y0, x1, y1 = INK[theme], *self.area(width, height)
        titles = list(self.axis_titles) + [""] * 3
        if np.asarray(self.coordinates).shape[1] == 3:
            corner = np.array([[-1.0, -1, -1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]])
            u, v, _ = self._rotated(corner)
            half = min(x1 - x0, y1 - y0) / 2 / CUBE
            ends = [((x0 + x1) / 2 + a * half, (y0 + y1) / 2 - b * half) for a, b in zip(u, v)]
            drawn = [svg.polylines([[ends[0], end] for end in ends[1:]], stroke=ink["axis"],
                                   stroke_width=1, class_="axes")]
            drawn += [svg.text(x, y, title, TICK_PX, fill=ink["muted"], class_="axis-title",
                               stroke=BACKGROUND[theme], stroke_width=3, paint_order="stroke")
                      for (x, y), title in zip(ends[1:], titles)]
            return drawn
        (low_x, high_x), (low_y, high_y) = self.ranges()
        x, y = Scale(low_x, high_x, x0, x1), Scale(low_y, high_y, y1, y0)
        x_ticks = [t for t in linear_ticks(low_x, high_x, 6) if low_x <= t <= high_x]
        y_ticks = [t for t in linear_ticks(low_y, high_y, 5) if low_y <= t <= high_y]
        grid = [[(x(t), y0), (x(t), y1)] for t in x_ticks] + \
            [[(x0, y(t)), (x1, y(t))] for t in y_ticks]
        drawn = [svg.polylines(grid, stroke=ink["grid"], stroke_width=1, class_="grid"),
                 svg.rect(x0, y0, x1 - x0, y1 - y0, fill="none", stroke=ink["axis"],
                          stroke_width=1, class_="axes")]
        drawn += [svg.text(x(t), y1 + 10, tick_label(t), TICK_PX, fill=ink["muted"],
                           class_="x-tick") for t in x_ticks]
        drawn += [svg.text(x0 - 6, y(t), tick_label(t), TICK_PX, anchor="end",
                           fill=ink["muted"], class_="y-tick") for t in y_ticks]
        drawn.append(svg.text((x0 + x1) / 2, y1 + 30, titles[0], TICK_PX + 1,
                              fill=ink["muted"], class_="axis-title"))
        drawn.append(f'<g transform="translate(14 {svg.number((y0 + y1) / 2)}) rotate(-90)">'
                     + svg.text(0, 0, titles[1], TICK_PX + 1, fill=ink["muted"],
                                class_="axis-title") + "</g>")
        return drawn
