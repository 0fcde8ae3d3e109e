"""Line charts as SVG: panels stacked one above another, sharing their x axis.

    >>> chart([Panel("loss", [Series("loss", [1, 2, 3], [0.9, 0.5, 0.4])], log_y=True)])

What the widgets' curves are drawn with (``TrainingPlot``, ``GradientFlow``): a ``Picture``
shows the string, a saved notebook keeps it as an image, tests read it back. Each panel has
its title and its legend inside the picture (a legend that does not fit one row wraps onto
the next, never past the right edge), axes with round ticks, linear or logarithmic.
"""
import math
from dataclasses import dataclass, field

from . import svg
from .measure import FONT, text_width

INK = {"light": dict(text="#1f1f1f", muted="#5f5f5f", grid="#e3e3e3", axis="#8c8c8c"),
       "dark": dict(text="#e8e8e8", muted="#b0b0b0", grid="#3a3a3a", axis="#9a9a9a")}
TICK_PX, TITLE_PX, LEGEND_PX = 11, 13, 11
LEFT, RIGHT = 58, 14            # px: room for the y ticks' labels; the right edge


@dataclass
class Series:
    """One curve: ``dash`` draws it dashed; ``marker``: a shape at each point ("circle",
    "star"...; None: a line only, ``line=False``: markers only); ``tips``: the tooltip of
    each point; ``low`` and ``high``: a band drawn behind the line, from low to high at each
    x (TensorBoard's percentile bands)."""
    name: str
    x: list
    y: list
    colour: str = "#1f77b4"
    dash: bool = False
    marker: str = "circle"
    marker_px: float = 5
    line: bool = True
    legend: bool = True
    tips: list = None
    low: list = None
    high: list = None


@dataclass
class Panel:
    title: str
    series: list = field(default_factory=list)
    log_y: bool = False
    y_label: str = ""


def log_ticks(values):
    """Tick values for a logarithmic axis over ``values``: 1, 2 and 5 times the powers of
    ten, labelled in full (a "5" under a "1" reads as 5, not 0.5). Only the powers of ten
    where the values span many decades."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return []
    low, high = min(positive), max(positive)
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    steps = (1, 2, 5) if len(decades) <= 4 else (1,)
    ticks = [m * 10.0 ** k for k in decades for m in steps]
    inside = [t for t in ticks if low / 2.5 <= t <= high * 2.5]
    return [float(f"{t:.12g}") for t in inside]


def linear_ticks(low, high, count=5):
    """Round ticks (1, 2 or 5 times a power of ten apart) covering [low, high]."""
    if not high > low:
        low, high = low - 1, high + 1
    raw = (high - low) / count
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    return [float(f"{first + k * step:.12g}")
            for k in range(int(round((high - first) / step)) + 2)
            if first + k * step <= high + step * 0.999]


def tick_label(value):
    """A tick's words: 0.001, 0.5, 20, 1e+06 (no 0.30000000000000004)."""
    return f"{value:.6g}"


class Scale:
    """Maps data to pixels along one axis (log: decades evenly spaced)."""

    def __init__(self, low, high, start, end, log=False):
        self.log = log
        self.low, self.high = (math.log10(low), math.log10(high)) if log else (low, high)
        if self.high == self.low:
            self.low, self.high = self.low - 0.5, self.high + 0.5
        self.start, self.end = start, end

    def __call__(self, value):
        v = math.log10(value) if self.log else value
        return self.start + (v - self.low) / (self.high - self.low) * (self.end - self.start)


def finite(values, log):
    return [v for v in values if v is not None and math.isfinite(v) and (v > 0 or not log)]


def chart(panels, width=440, panel_height=220, theme="light", title="", x_label="",
          x_max=None):
    """The SVG of ``panels`` stacked, ``width`` px wide, sharing one x axis (from 1 to
    ``x_max``, default the longest series)."""
    ink = INK[theme]
    xs = [x for p in panels for s in p.series for x in s.x]
    x_high = max([x_max or 1] + xs)
    x_scale = Scale(min(xs + [1]), x_high, LEFT, width - RIGHT)
    x_ticks = [t for t in linear_ticks(min(xs + [1]), x_high, count=6) if t == int(t)
               and x_scale.low <= t <= x_scale.high]
    body, top = [], 0
    if title:
        body.append(svg.text(width / 2, 14, title, TITLE_PX + 1, bold=True, fill=ink["text"],
                             class_="title"))
        top = 28
    for panel in panels:
        drawn, top = _panel(panel, top, width, panel_height, x_scale, x_ticks, ink)
        body += drawn
    if x_label:
        body.append(svg.text((LEFT + width - RIGHT) / 2, top + 4, x_label, TICK_PX + 1,
                             fill=ink["muted"], class_="x-label"))
        top += 18
    return svg.document(width, top, body, font=FONT, label=title or "chart")


def _legend(series, top, width, ink):
    """The legend's entries, in rows that fit ``width``; the y under them."""
    drawn, x, y = [], LEFT, top + 8
    for s in (s for s in series if s.legend):
        size = 26 + text_width(s.name, LEGEND_PX)
        if x + size > width - RIGHT and x > LEFT:
            x, y = LEFT, y + 16
        sample = svg.polyline([(x, y), (x + 20, y)], stroke=s.colour, stroke_width=2,
                              stroke_dasharray="5 3" if s.dash else None) if s.line else \
            svg.marker(s.marker or "circle", x + 10, y, 8, fill=s.colour)
        drawn += [sample, svg.text(x + 24, y, s.name, LEGEND_PX, anchor="start",
                                   fill=ink["text"], class_="legend")]
        x += size + 10
    return drawn, y + 12


def _panel(panel, top, width, height, x_scale, x_ticks, ink):
    """One panel (its title, legend, axes, grid and curves) from ``top``; its bottom."""
    body = [svg.text(LEFT, top + 10, panel.title, TITLE_PX, bold=True, anchor="start",
                     fill=ink["text"], class_="panel-title")]
    legend, plot_top = _legend(panel.series, top + 14, width, ink)
    body += legend
    plot_bottom = top + height
    ys = [y for s in panel.series for values in (s.y, s.low or [], s.high or [])
          for y in finite(values, panel.log_y)]
    if panel.log_y:
        ticks = log_ticks(ys) or [1.0]
        low, high = min(ys + ticks[:1]), max(ys + ticks[-1:])
        low, high = min(low, ticks[0]), max(high, ticks[-1])
    else:
        low, high = (min(ys), max(ys)) if ys else (0.0, 1.0)
        ticks = linear_ticks(low, high)
        low, high = min(low, ticks[0]), max(high, ticks[-1])
    y_scale = Scale(low, high, plot_bottom - 4, plot_top + 4, log=panel.log_y)
    ticks = [t for t in ticks if low <= t <= high]
    grid = [[(LEFT, y_scale(t)), (width - RIGHT, y_scale(t))] for t in ticks]
    grid += [[(x_scale(t), plot_top), (x_scale(t), plot_bottom)] for t in x_ticks]
    body.append(svg.polylines(grid, stroke=ink["grid"], stroke_width=1, class_="grid"))
    body.append(svg.polyline([(LEFT, plot_top), (LEFT, plot_bottom),
                              (width - RIGHT, plot_bottom)], stroke=ink["axis"],
                             stroke_width=1, class_="axes"))
    body += [svg.text(LEFT - 6, y_scale(t), tick_label(t), TICK_PX, anchor="end",
                      fill=ink["muted"], class_="y-tick") for t in ticks]
    body += [svg.text(x_scale(t), plot_bottom + 10, tick_label(t), TICK_PX,
                      fill=ink["muted"], class_="x-tick") for t in x_ticks]
    if panel.y_label:
        body.append(f'<g transform="translate(12 {svg.number((plot_top + plot_bottom) / 2)}) '
                    f'rotate(-90)">'
                    + svg.text(0, 0, panel.y_label, TICK_PX, fill=ink["muted"],
                               class_="y-label") + "</g>")
    for s in panel.series:
        body.append(_curve(s, x_scale, y_scale, panel.log_y))
    return body, plot_bottom + 24


def _curve(series, x_scale, y_scale, log):
    """A series' line (broken where a value is missing or not drawable) and markers."""
    runs, run, marks = [], [], []
    tips = series.tips or [None] * len(series.x)
    for x, y, tip in zip(series.x, series.y, tips):
        if y is None or not math.isfinite(y) or (log and y <= 0):
            runs.append(run)
            run = []
            continue
        point = (x_scale(x), y_scale(y))
        run.append(point)
        if series.marker:
            mark = svg.marker(series.marker, *point, series.marker_px, fill=series.colour)
            marks.append(svg.group([mark], title=tip) if tip else mark)
    runs.append(run)
    band = _band(series, x_scale, y_scale, log) if series.low and series.high else ""
    line = svg.polylines(runs, stroke=series.colour, stroke_width=2,
                         stroke_dasharray="6 4" if series.dash else None,
                         stroke_linejoin="round") if series.line else ""
    return svg.group([band, line] + marks, class_="series", data_series=series.name)


def _band(series, x_scale, y_scale, log):
    """The filled area between ``low`` and ``high`` (one polygon per run of drawable
    points), faint, in the series' colour."""
    runs, run = [], []
    for x, low, high in zip(series.x, series.low, series.high):
        if not all(v is not None and math.isfinite(v) and (v > 0 or not log)
                   for v in (low, high)):
            runs.append(run)
            run = []
            continue
        run.append((x_scale(x), y_scale(low), y_scale(high)))
    runs.append(run)
    return "".join(svg.polygon([(x, high) for x, _, high in run]
                               + [(x, low) for x, low, _ in reversed(run)],
                               fill=series.colour, fill_opacity=0.18, class_="band")
                   for run in runs if len(run) >= 2)
