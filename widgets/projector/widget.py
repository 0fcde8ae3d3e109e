"""The interactive view of a Projector: controls on top, the picture, a side panel.

The picture is ONE plotly trace (``scattergl`` in 2-D, ``scatter3d`` in 3-D) whose
colours, sizes and labels are per-point arrays. Everything that changes (a new
projection, a search, a click) rewrites those arrays in place inside
``figure.batch_update()``, so the browser receives one message per change instead
of redrawing thousands of separate traces.

In 2-D the axes' ranges are set here, so a point's place on screen is known and the
labels of highlighted points are put where they do not overlap (``labels.py``). The
figure follows the notebook's light or dark theme; the side panel sits beside the
picture, or below it in a narrow notebook.
"""
import functools
import html
import importlib.util
import itertools
import os
import threading

import ipywidgets as w
import numpy as np
import plotly.graph_objects as go

from ..measure import FONT
from ..notebook import FIGURE, ThemeProbe, wrapping
from .colours import colour_points, with_dimmed
from .images import data_uri, png
from .labels import place_labels
from .neighbours import METRICS, neighbours
from .projections import largest_perplexity

POINT_SIZE = {2: 6, 3: 4}
HIGHLIGHT_SIZE = {2: 10, 3: 6}
SELECTED_SIZE = {2: 16, 3: 10}
MAX_TEXT_LABELS = 100     # more labels than this on screen is only clutter
LABELS_3D = 6             # in 3-D (no screen positions known): the selection and 5 more
WIDTH, HEIGHT = 600, 520  # px: the figure's size where the notebook has room for it
NARROWEST = 320           # px: narrower output areas scroll the figure in its box
BOX_SLACK = 4             # px: the picture's box is this much wider than the figure
MARGIN = dict(l=50, r=10, t=10, b=40)
LABEL_PX = 11
NONE = "(none)"


def reports_errors(method):
    """Show a control's error in the status line: in a callback it would vanish."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        try:
            self.status.value = ""
            return method(self, *args, **kwargs)
        except (ValueError, KeyError, ImportError, IndexError) as error:
            self.status.value = f"<span style='color:#D55E00'>{html.escape(str(error))}</span>"
    return wrapper


class ProjectorWidget(w.VBox):
    """Controls, figure and neighbour panel for one ``Projector``."""

    def __init__(self, projector):
        super().__init__()
        self.projector = projector
        self.selected = None                        # row of the clicked point
        self.neighbour_rows = np.array([], int)
        self.matches = np.array([], int)            # rows found by the search box
        self.shown = np.arange(len(projector.indices))  # positions in projector.indices
        self._stop = threading.Event()
        self._worker = None
        self._syncing = False       # True while the controls are set to match the projector
        self.theme = ThemeProbe()
        self.figure = go.FigureWidget(layout=FIGURE["light"])
        self.figure.update_layout(width=WIDTH, height=HEIGHT, margin=MARGIN,
                                  hovermode="closest", showlegend=False, font_family=FONT)
        self._build_controls()
        self.theme.observe(self._on_theme, "dark")
        self.theme.observe(self._on_width, "width")
        projector.listeners.append(self._on_view)
        self._recolour()
        self._draw()
        self._sync_controls()

    # ---- layout ----------------------------------------------------------------
    def _build_controls(self):
        p = self.projector
        methods = ["PCA", "t-SNE", "Custom"]
        if importlib.util.find_spec("umap"):
            methods.insert(2, "UMAP")
        if p.given_coordinates is not None:
            methods.append("Given")
        self.method = w.Dropdown(options=methods, value=p.method if p.method in methods
                                 else "PCA", description="projection")
        self.dims = w.ToggleButtons(options=[("2D", 2), ("3D", 3)],
                                    value=p.coordinates.shape[1], style={"button_width": "48px"})
        self.spherize = w.Checkbox(value=p.spherized, description="spherize data", indent=False)
        columns = list(p.columns)
        self.colour_by = w.Dropdown(options=[NONE] + columns, description="colour by",
                                    value=columns[-1] if columns else NONE)
        self.label_by = w.Dropdown(options=columns or [NONE], description="label by",
                                   value=p.label_column or NONE)
        self.search_box = w.Text(placeholder="search labels", description="search",
                                 continuous_update=False)
        self.regex = w.Checkbox(value=False, description="regex", indent=False)
        self.match_count = w.HTML()
        self.method_settings = w.VBox()
        self._build_method_settings()
        narrow = w.Layout(width="280px")
        self.k = w.IntSlider(value=10, min=1, max=min(100, len(p.vectors) - 1),
                             description="neighbours", layout=narrow)
        self.metric = w.Dropdown(options=METRICS, value="cosine", description="distance",
                                 layout=narrow)
        self.isolate_button = w.Button(description="Isolate", tooltip="show only highlighted")
        self.show_all_button = w.Button(description="Show all")
        self.clear_button = w.Button(description="Clear selection")
        self.export_button = w.Button(description="Export coordinates", icon="download",
                                      layout=w.Layout(width="190px"))
        self.selection = w.HTML("<i>Click a point to list its nearest neighbours.</i>")
        self.neighbour_list = w.HTML()
        self.hover_image = w.Image(format="png", layout=w.Layout(width="84px",
                                                                 display="none"))
        self.legend = w.HTML()
        self.notice = w.HTML()
        self._show_notices()
        self.status = w.HTML()

        self.method.observe(self._on_method, "value")
        self.dims.observe(self._on_reproject, "value")
        self.spherize.observe(self._on_reproject, "value")
        self.colour_by.observe(lambda _: self._recolour(), "value")
        self.label_by.observe(self._on_label_by, "value")
        self.search_box.observe(self._on_search, "value")
        self.regex.observe(self._on_search, "value")
        self.k.observe(self._on_neighbour_settings, "value")
        self.metric.observe(self._on_neighbour_settings, "value")
        self.isolate_button.on_click(self._on_isolate)
        self.show_all_button.on_click(self._on_show_all)
        self.clear_button.on_click(self._on_clear)
        self.export_button.on_click(self._on_export)

        side = w.VBox([self.selection, self.k, self.metric, self.neighbour_list,
                       w.HBox([self.isolate_button, self.show_all_button]),
                       self.clear_button] + ([self.hover_image] if p.images is not None else []),
                      layout=w.Layout(flex="0 0 300px", overflow="auto", max_height="560px"))
        side.add_class("projector-side")
        # The figure is as wide as the output area allows, up to WIDTH (``_on_width``); only
        # below NARROWEST does it scroll in its own box. The side panel keeps its width,
        # beside the picture or below it.
        picture = w.Box([self.figure], layout=w.Layout(
            flex=f"0 1 {WIDTH + BOX_SLACK}px", min_width="0", overflow="auto"))
        self.children = [
            w.HBox([self.method, self.dims, self.spherize], layout=wrapping()),
            self.method_settings,
            w.HBox([self.colour_by, self.label_by], layout=wrapping()),
            w.HBox([self.search_box, self.regex, self.match_count], layout=wrapping()),
            self.legend, self.notice, self.status,
            w.HBox([picture, side], layout=w.Layout(flex_flow="row wrap",
                                                    align_items="flex-start")),
            self.export_button, self.theme,
        ]

    def _build_method_settings(self):
        """The settings row under the projection menu (one per method)."""
        n = len(self.projector.indices)
        self.progress = w.IntProgress(value=0, min=0, max=1, description="t-SNE")
        largest = largest_perplexity(n)
        self.perplexity = w.FloatSlider(value=min(30, largest), min=min(2, largest),
                                        max=min(100, largest), description="perplexity")
        # openTSNE's "auto" rate, written out so the student sees the number.
        self.learning_rate = w.FloatText(value=max(200.0, n / 12), description="learning rate")
        self.iterations = w.IntSlider(value=500, min=50, max=2000, step=50,
                                      description="iterations")
        self.run_button = w.Button(description="Run", button_style="primary")
        self.stop_button = w.Button(description="Stop")
        self.neighbours_umap = w.IntSlider(value=15, min=2, max=100, description="neighbours")
        self.min_dist = w.FloatSlider(value=0.1, min=0, max=1, step=0.05, description="min dist")
        self.left = w.Text(placeholder="e.g. man", description="from")
        self.right = w.Text(placeholder="e.g. woman", description="to")
        self.run_button.on_click(self._on_run)
        self.stop_button.on_click(lambda _: self._stop.set())
        count = min(10, self.projector.vectors.shape[1], n)
        self.components = [w.Dropdown(options=[(f"PC{c + 1}", c) for c in range(count)],
                                      value=i, description=axis,
                                      layout=w.Layout(width="150px"))
                           for i, axis in enumerate("xyz")]
        for dropdown in self.components:
            dropdown.observe(self._on_reproject, "value")
        self.variance = w.HTML()
        self._update_variance()
        self._show_method_settings()

    def _update_variance(self):
        """List the share of variance each principal component explains."""
        shares = ", ".join(f"PC{c + 1} {100 * r:.1f}%"
                           for c, r in enumerate(self.projector.variance))
        self.variance.value = f"variance explained: {shares}" if shares else ""

    def _show_method_settings(self):
        dims = self.dims.value
        rows = {
            "PCA": [self.components[:dims] + [self.variance]],
            "t-SNE": [[self.perplexity, self.learning_rate],
                      [self.iterations, self.run_button, self.stop_button, self.progress]],
            "UMAP": [[self.neighbours_umap, self.min_dist, self.run_button]],
            "Custom": [[self.left, self.right, self.run_button]],
            "Given": [],
        }
        self.method_settings.children = [w.HBox(row, layout=wrapping())
                                          for row in rows[self.method.value]]

    # ---- projections -------------------------------------------------------------
    def _on_method(self, _):
        if self._syncing:
            return
        self._show_method_settings()
        if self.method.value in ("PCA", "Given"):
            self._on_reproject()

    @reports_errors
    def _on_reproject(self, _=None):
        """Re-run the instant projections; the slow ones wait for their Run button."""
        if self._syncing:
            return
        self._stop_worker()
        p = self.projector
        p.spherized = self.spherize.value
        dims = self.dims.value
        if self.method.value == "PCA":
            p.pca(dims, [d.value for d in self.components[:dims]])
            self._update_variance()
        elif self.method.value == "Given":
            p.use_coordinates(p.given_coordinates)
        else:
            self.status.value = f"Press Run to compute the {self.method.value} view."
        self._show_method_settings()

    @reports_errors
    def _on_run(self, _=None):
        p, dims = self.projector, self.dims.value
        p.spherized = self.spherize.value
        if self.method.value == "Custom":
            p.custom(self.left.value, self.right.value, dims)
        elif self.method.value == "UMAP":
            p.umap(dims, self.neighbours_umap.value, self.min_dist.value)
        else:
            self.run_tsne()

    def run_tsne(self, background=True):
        """Start t-SNE in a thread: the notebook stays usable while the picture moves."""
        self._stop_worker()
        self._stop.clear()
        self.progress.value = 0
        settings = dict(dims=self.dims.value, perplexity=self.perplexity.value,
                        learning_rate=self.learning_rate.value,
                        iterations=self.iterations.value, progress=self._tsne_progress)
        run = reports_errors(lambda self: self.projector.tsne(**settings))
        if not background:
            return run(self)
        self._worker = threading.Thread(target=run, args=(self,), daemon=True)
        self._worker.start()
        return self._worker

    def _tsne_progress(self, done, total, coordinates):
        self.progress.max = total
        self.progress.value = done
        return self._stop.is_set()    # True asks openTSNE to stop

    def _stop_worker(self):
        if self._worker is not None and self._worker.is_alive():
            self._stop.set()
            self._worker.join()

    def _on_view(self, final):
        """The projector has new coordinates (a finished projection or t-SNE progress)."""
        if self.figure.data and self.projector.coordinates.shape[1] == self._trace_dims():
            self._update_positions()
        else:
            self._draw()
        if final:
            self._sync_controls()
            self._show_notices()

    def _show_notices(self):
        """The data's notice (a sample, dropped rows) and the view's (points on one spot,
        a perplexity lowered)."""
        p = self.projector
        self.notice.value = "<br>".join(f"<b>{html.escape(notice)}</b>"
                                        for notice in (p.notice, p.view_notice) if notice)

    def _sync_controls(self):
        """The controls show the projection that is drawn, whether a control or code
        (``projector.tsne()``...) made it."""
        p, settings = self.projector, self.projector.settings or {}
        self._syncing = True
        try:
            if p.method in self.method.options:
                self.method.value = p.method
            self.dims.value = p.coordinates.shape[1]
            self.spherize.value = p.spherized
            for dropdown, component in zip(self.components, settings.get("components", ())):
                dropdown.value = component
            for control, key in ((self.perplexity, "perplexity"),
                                 (self.iterations, "iterations"),
                                 (self.learning_rate, "learning_rate"),
                                 (self.neighbours_umap, "neighbours"),
                                 (self.min_dist, "min_dist"), (self.left, "left"),
                                 (self.right, "right")):
                value = settings.get(key)
                if value is not None and not (key == "learning_rate" and value == "auto"):
                    if hasattr(control, "max") and value > control.max:
                        control.max = value
                    control.value = value
        finally:
            self._syncing = False
        self._update_variance()
        self._show_method_settings()

    # ---- drawing ---------------------------------------------------------------
    def _trace_dims(self):
        return 3 if self.figure.data[0].type == "scatter3d" else 2

    def _rows(self):
        """Data rows of the points on screen, in trace order."""
        return self.projector.indices[self.shown]

    def _draw(self):
        """Replace the trace: needed when 2-D/3-D or the set of shown points changes."""
        coordinates = self.projector.coordinates[self.shown]
        dims = coordinates.shape[1]
        axes = dict(zip("xyz", coordinates.T))
        marker = dict(line=dict(width=0))
        if dims == 2:
            trace = go.Scattergl(mode="markers", marker=marker, hoverinfo="text", **axes)
        else:
            trace = go.Scatter3d(mode="markers", marker=marker, hoverinfo="text", **axes)
        with self.figure.batch_update():
            self.figure.data = ()
            self.figure.add_trace(trace)
            self._ranges(coordinates)
            self._style()
            self._titles()
        self.figure.data[0].on_click(self._on_click)
        if self.projector.images is not None:
            self.figure.data[0].on_hover(self._on_hover)

    def _update_positions(self):
        coordinates = self.projector.coordinates[self.shown]
        trace = self.figure.data[0]
        with self.figure.batch_update():
            for axis, values in zip("xyz", coordinates.T):
                setattr(trace, axis, values)
            self._ranges(coordinates)
            if self.selected is not None or len(self.matches):
                self._style()               # labels move with their points
            self._titles()

    def _ranges(self, coordinates):
        """2-D: the axes span the points with a 5 % margin, set here rather than by plotly,
        so that each point's place on screen is known (for its label)."""
        if coordinates.shape[1] != 2 or not len(coordinates):
            return
        for axis, values in zip(("xaxis", "yaxis"), coordinates.T):
            low, high = float(values.min()), float(values.max())
            pad = 0.05 * (high - low) or 1.0
            self.figure.layout[axis].update(range=[low - pad, high + pad], autorange=False)

    def _on_screen(self, positions):
        """Pixel positions (y downwards) of points at data ``positions`` (2-D)."""
        (x0, x1), (y0, y1) = self.figure.layout.xaxis.range, self.figure.layout.yaxis.range
        width = self.width - MARGIN["l"] - MARGIN["r"]
        height = HEIGHT - MARGIN["t"] - MARGIN["b"]
        return [(MARGIN["l"] + (x - x0) / (x1 - x0) * width,
                 MARGIN["t"] + (y1 - y) / (y1 - y0) * height) for x, y in positions]

    def _titles(self):
        titles = self.projector.axis_titles
        if len(titles) == 3:
            self.figure.layout.scene.update(
                {f"{axis}axis": dict(title=dict(text=t)) for axis, t in zip("xyz", titles)})
        else:
            self.figure.layout.xaxis.title.text, self.figure.layout.yaxis.title.text = titles

    def _recolour(self):
        """Colour levels and colourscale for the chosen column, and its legend."""
        p = self.projector
        if self.colour_by.value == NONE:
            self.levels = np.full(len(p.indices), 0.5, dtype=np.float32)
            self.colourscale = [[0, "#0072B2"], [1, "#0072B2"]]
            self.legend.value = ""
        else:
            values = [p.columns[self.colour_by.value][i] for i in p.indices]
            self.levels, self.colourscale, legend = colour_points(values, self.theme.name)
            swatch = ("<span style='display:inline-block;width:11px;height:11px;"
                      "background:{};margin:0 3px 0 10px;border:1px solid "
                      "var(--jp-border-color1, #bdbdbd)'></span>{}")
            self.legend.value = "".join(swatch.format(c, html.escape(str(name)))
                                        for name, c in legend)
        if self.figure.data:
            self._restyle()

    def _style(self):
        """Per-point colours, sizes and labels: highlighted points stand out."""
        rows, dims = self._rows(), self._trace_dims()
        highlighted = np.isin(rows, np.concatenate([self.matches, self.neighbour_rows]))
        selected = rows == self.selected
        levels = self.levels[self.shown].copy()
        sizes = np.full(len(rows), POINT_SIZE[dims])
        if highlighted.any() or selected.any():
            levels[~(highlighted | selected)] = -1        # -1 is light grey
            sizes[highlighted] = HIGHLIGHT_SIZE[dims]
            sizes[selected] = SELECTED_SIZE[dims]
        labels = np.array([self.projector.label(r) for r in rows], dtype=object)
        labelled = highlighted | selected
        trace = self.figure.data[0]
        trace.textfont = dict(size=LABEL_PX, family=FONT)
        trace.marker.update(color=levels,
                            colorscale=with_dimmed(self.colourscale, self.theme.name),
                            cmin=-1, cmax=1, size=sizes)
        trace.hovertext = labels
        if 0 < labelled.sum() <= MAX_TEXT_LABELS:
            texts, sides = self._labels(rows, labels, selected)
            trace.text, trace.textposition = texts, sides
            trace.mode = "markers+text"
        else:
            trace.mode = "markers"

    def _labels(self, rows, labels, selected):
        """The text of each point on screen ("" for none) and its side: the selection first,
        then its neighbours by rank, then the search matches, each where it overlaps no
        label before it."""
        order = [row for row in [self.selected, *self.neighbour_rows, *self.matches]
                 if row is not None]
        position = {row: i for i, row in enumerate(rows.tolist())}
        wanted = list(dict.fromkeys(position[row] for row in order if row in position))
        texts = np.full(len(rows), "", dtype=object)
        sides = np.full(len(rows), "middle right", dtype=object)
        if self._trace_dims() == 3:
            for i in wanted[:LABELS_3D]:
                texts[i] = labels[i]
            return texts, sides
        coordinates = self.projector.coordinates[self.shown][wanted]
        plot_area = (MARGIN["l"], MARGIN["t"], self.width - MARGIN["r"], HEIGHT - MARGIN["b"])
        placed = place_labels(self._on_screen(coordinates), [labels[i] for i in wanted],
                              LABEL_PX, HIGHLIGHT_SIZE[2], plot_area)
        for i, side in zip(wanted, placed):
            if side is not None:
                texts[i], sides[i] = labels[i], side
        return texts, sides

    def _restyle(self):
        with self.figure.batch_update():
            self._style()

    def _on_width(self, change):
        """The output area is ``change["new"]`` px wide: the figure takes up to ``WIDTH`` of
        it (the side panel then sits beside it or under it), so that no part of the picture
        hides behind a scroll bar; the labels are placed again in the new pixels."""
        width = max(NARROWEST, min(WIDTH, change["new"] - BOX_SLACK))
        if width != self.width:
            self.figure.update_layout(width=width)  # (not batched: a batch reads the old one)
            self._restyle()

    @property
    def width(self):
        """The figure's width in px: labels are placed in its pixels."""
        return self.figure.layout.width

    def _on_theme(self, _):
        """The notebook's theme changed: the figure's template and the point colours follow
        (the legend and panels use the notebook's own colours)."""
        with self.figure.batch_update():
            self.figure.update_layout(FIGURE[self.theme.name])
        self._recolour()

    # ---- search, selection, neighbours -------------------------------------------
    def _on_label_by(self, change):
        if change["new"] != NONE:
            self.projector.label_column = change["new"]
            self._restyle()

    @reports_errors
    def _on_search(self, _=None):
        pattern = self.search_box.value
        self.matches = (self.projector.search(pattern, regex=self.regex.value)
                        if pattern else np.array([], int))
        on_screen = np.isin(self.matches, self._rows()).sum()
        self.match_count.value = (f"{len(self.matches)} match(es), {on_screen} on screen"
                                  if pattern else "")
        self._restyle()

    def _on_click(self, trace, points, state):
        if points.point_inds:
            self.select(int(self._rows()[points.point_inds[0]]))

    def _on_hover(self, trace, points, state):
        if points.point_inds:
            self.hover_image.layout.display = ""        # (hidden until there is an image)
            self.hover_image.value = png(self.projector.images[
                self._rows()[points.point_inds[0]]])

    def _on_neighbour_settings(self, _):
        if self.selected is not None:
            self.select(self.selected)

    def select(self, row):
        """Select data row ``row`` and list its nearest neighbours (original space)."""
        p = self.projector
        self.selected = row
        self.neighbour_rows, dists = neighbours(p.vectors, row, self.k.value, self.metric.value)
        self.selection.value = (f"<b>{html.escape(p.label(row))}</b> (point {row})"
                                + self._thumbnail(row))
        shown = set(self._rows().tolist())
        lines = [f"<tr><td>{rank}</td><td>{html.escape(p.label(r))}{self._thumbnail(r)}"
                 f"{'' if r in shown else ' <i>(not shown)</i>'}</td>"
                 f"<td style='text-align:right'>{d:.4f}</td></tr>"
                 for rank, (r, d) in enumerate(zip(self.neighbour_rows, dists), start=1)]
        self.neighbour_list.value = (
            "<style>.projector-neighbours td, .projector-neighbours th {padding: 0 6px}"
            "</style><table class='projector-neighbours'><tr><th>#</th><th>neighbour</th>"
            f"<th style='text-align:right'>{self.metric.value} distance</th></tr>"
            f"{''.join(lines)}</table>")
        self._restyle()

    def _thumbnail(self, row):
        if self.projector.images is None:
            return ""
        return f" <img src='{data_uri(self.projector.images[row])}' width='28'>"

    def _on_clear(self, _=None):
        self.selected, self.neighbour_rows = None, np.array([], int)
        self.selection.value = "<i>Click a point to list its nearest neighbours.</i>"
        self.neighbour_list.value = ""
        self._restyle()

    @reports_errors
    def _on_isolate(self, _=None):
        """Show only the highlighted points (selection, neighbours, search matches)."""
        keep = np.concatenate([self.matches, self.neighbour_rows,
                               [] if self.selected is None else [self.selected]])
        shown = np.flatnonzero(np.isin(self.projector.indices, keep))
        if len(shown) == 0:
            raise ValueError("nothing to isolate: search for points or click one first.")
        self.shown = shown
        self._draw()

    def _on_show_all(self, _=None):
        self.shown = np.arange(len(self.projector.indices))
        self._draw()

    @reports_errors
    def _on_export(self, _=None, name="projection"):
        """Write the view to a new file: projection.tsv, else projection_2.tsv, ..."""
        paths = (f"{name}.tsv" if i == 1 else f"{name}_{i}.tsv" for i in itertools.count(1))
        path = next(path for path in paths if not os.path.exists(path))
        self.projector.export_coordinates(path)
        self.status.value = f"Coordinates written to <code>{html.escape(path)}</code>."
