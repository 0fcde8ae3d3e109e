"""The interactive view of a Projector: controls on top, the picture, a side panel.

The picture is a ``Picture`` (``widgets/picture.py``) whose synced state is the SVG of the
current view (``drawing.py``): the points with their colours and sizes, the labels of the
highlighted ones, the axes. Everything that changes (a new projection, t-SNE's progress, a
search, a click, the theme, the width) draws a new SVG, so every view of the widget, one made
later too (the projector displayed again, a notebook reopened while its kernel runs), shows
the current picture. (plotly's FigureWidget, used before, kept in its state only the traces it
was made with: a later view drew bare axes.)

The points are drawn in the pixels the output area gives the picture (up to ``WIDTH``), so a
label's place and size on screen are known here and the labels of highlighted points are put
where they do not overlap (``labels.py``). A click on a point selects it; with images, the
pointer on a point shows its image. The picture follows the notebook's light or dark theme;
the side panel sits beside it, or below it in a narrow notebook. A t-SNE run redraws at most
every ``REDRAW_S`` seconds while it runs, and once at its end.
"""
import functools
import html
import importlib.util
import itertools
import os
import threading
import time

import ipywidgets as w
import numpy as np

from ..notebook import wrapping
from ..picture import Picture
from .colours import DIMMED, colour_points
from .drawing import Scatter
from .images import data_uri, png
from .neighbours import METRICS, neighbours
from .projections import largest_perplexity

POINT_SIZE = {2: 6, 3: 5}
HIGHLIGHT_SIZE = {2: 10, 3: 8}
SELECTED_SIZE = {2: 16, 3: 12}
MAX_TEXT_LABELS = 100     # more labels than this on screen is only clutter
WIDTH, HEIGHT = 600, 520  # px: the picture's size where the notebook has room for it
NARROWEST = 320           # px: in a narrower output area the picture is shrunk as a whole
BOX_SLACK = 4             # px: the picture's box is this much wider than the picture
REDRAW_S = 0.3            # s: the least time between two redraws while t-SNE runs
UNCOLOURED = "#0072B2"
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
    """Controls, picture and neighbour panel for one ``Projector``."""

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
        self._drawn_at = -np.inf    # when the last redraw started (time.monotonic)
        self.width = WIDTH          # px: the picture's, as the output area allows
        self.picture = Picture(min_scale=0.0)
        self.picture.on_click(lambda row: self.select(int(row)))
        if projector.images is not None:
            self.picture.on_hover(self._on_hover)
        self._build_controls()
        self.picture.observe(self._on_theme, "dark")
        self.picture.observe(self._on_room, "room")
        projector.listeners.append(self._on_view)
        self._recolour()
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
        # 3-D: the angles the cube of points is seen from (a drag in plotly's 3-D scene)
        self.turn = w.IntSlider(value=30, min=-180, max=180, step=5, description="turn")
        self.tilt = w.IntSlider(value=20, min=-90, max=90, step=5, description="tilt")
        self.rotation = w.HBox([self.turn, self.tilt], layout=wrapping())
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
        self.turn.observe(lambda _: self._draw(), "value")
        self.tilt.observe(lambda _: self._draw(), "value")

        side = w.VBox([self.selection, self.k, self.metric, self.neighbour_list,
                       w.HBox([self.isolate_button, self.show_all_button]),
                       self.clear_button] + ([self.hover_image] if p.images is not None else []),
                      layout=w.Layout(flex="0 0 300px", overflow="auto", max_height="560px"))
        side.add_class("projector-side")
        # The picture is as wide as its box allows, up to WIDTH (``_on_room``); below
        # NARROWEST it is shrunk as a whole. The side panel keeps its width, beside the
        # picture or below it.
        picture = w.Box([self.picture], layout=w.Layout(
            flex=f"0 1 {WIDTH + BOX_SLACK}px", min_width="0", overflow="auto"))
        self.children = [
            w.HBox([self.method, self.dims, self.spherize], layout=wrapping()),
            self.method_settings, self.rotation,
            w.HBox([self.colour_by, self.label_by], layout=wrapping()),
            w.HBox([self.search_box, self.regex, self.match_count], layout=wrapping()),
            self.legend, self.notice, self.status,
            w.HBox([picture, side], layout=w.Layout(flex_flow="row wrap",
                                                    align_items="flex-start")),
            self.export_button,
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
        self.rotation.layout.display = "" if self.projector.coordinates.shape[1] == 3 \
            else "none"

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
        if final or time.monotonic() - self._drawn_at >= REDRAW_S:
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
    def _rows(self):
        """Data rows of the points on screen, in drawing order."""
        return self.projector.indices[self.shown]

    def scatter(self):
        """What the picture shows now: the points on screen, coloured and sized (highlighted
        points stand out, the rest are dimmed), and which of them are labelled."""
        p, rows = self.projector, self._rows()
        coordinates = p.coordinates[self.shown]
        dims = coordinates.shape[1]
        highlighted = np.isin(rows, np.concatenate([self.matches, self.neighbour_rows]))
        selected = rows == self.selected
        colours = self.colours[self.shown].copy()
        sizes = np.full(len(rows), POINT_SIZE[dims])
        if highlighted.any() or selected.any():
            colours[~(highlighted | selected)] = DIMMED[self.picture.theme]
            sizes[highlighted] = HIGHLIGHT_SIZE[dims]
            sizes[selected] = SELECTED_SIZE[dims]
        # labels: the selection first, then its neighbours by rank, then the search matches
        order = [row for row in [self.selected, *self.neighbour_rows, *self.matches]
                 if row is not None]
        position = {row: i for i, row in enumerate(rows.tolist())}
        labelled = list(dict.fromkeys(position[row] for row in order if row in position))
        return Scatter(coordinates, colours, sizes, ids=rows.tolist(),
                       tips=[p.label(r) for r in rows],
                       labelled=labelled if len(labelled) <= MAX_TEXT_LABELS else [],
                       axis_titles=p.axis_titles, turn=self.turn.value, tilt=self.tilt.value)

    def _draw(self):
        """Draw the current view: a new picture, which is the widget's state."""
        self._drawn_at = time.monotonic()
        self.picture.svg = self.scatter().svg(self.width, HEIGHT, self.picture.theme)

    def _recolour(self):
        """The colour of each point for the chosen column, and its legend."""
        p = self.projector
        if self.colour_by.value == NONE:
            self.colours = np.full(len(p.indices), UNCOLOURED)
            self.legend.value = ""
        else:
            values = [p.columns[self.colour_by.value][i] for i in p.indices]
            self.colours, legend = colour_points(values, self.picture.theme)
            swatch = ("<span style='display:inline-block;width:11px;height:11px;"
                      "background:{};margin:0 3px 0 10px;border:1px solid "
                      "var(--jp-border-color1, #bdbdbd)'></span>{}")
            self.legend.value = "".join(swatch.format(c, html.escape(str(name)))
                                        for name, c in legend)
        self._draw()

    def _on_room(self, change):
        """The browser says how wide the picture's box is: the picture takes up to ``WIDTH``
        of it (the side panel then sits beside it or under it), and its points and labels
        are placed again in the new pixels."""
        width = max(NARROWEST, min(WIDTH, change["new"] - BOX_SLACK))
        if width != self.width:
            self.width = width
            self._draw()

    def _on_theme(self, _):
        """The notebook's theme changed: the picture's ink and the point colours follow
        (the legend and panels use the notebook's own colours)."""
        self._recolour()

    # ---- search, selection, neighbours -------------------------------------------
    def _on_label_by(self, change):
        if change["new"] != NONE:
            self.projector.label_column = change["new"]
            self._draw()

    @reports_errors
    def _on_search(self, _=None):
        pattern = self.search_box.value
        self.matches = (self.projector.search(pattern, regex=self.regex.value)
                        if pattern else np.array([], int))
        on_screen = np.isin(self.matches, self._rows()).sum()
        self.match_count.value = (f"{len(self.matches)} match(es), {on_screen} on screen"
                                  if pattern else "")
        self._draw()

    def _on_hover(self, row):
        """The pointer is on the point of data row ``row``: show its image."""
        self.hover_image.layout.display = ""            # (hidden until there is an image)
        self.hover_image.value = png(self.projector.images[int(row)])

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
        self._draw()

    def _thumbnail(self, row):
        if self.projector.images is None:
            return ""
        return f" <img src='{data_uri(self.projector.images[row])}' width='28'>"

    def _on_clear(self, _=None):
        self.selected, self.neighbour_rows = None, np.array([], int)
        self.selection.value = "<i>Click a point to list its nearest neighbours.</i>"
        self.neighbour_list.value = ""
        self._draw()

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
