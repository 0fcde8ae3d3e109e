"""TrainingPlot: learning curves drawn live while ``fit`` runs, or from a finished History.

    >>> net.fit(x, y, epochs=50, validation_data=(x_val, y_val), callbacks=[TrainingPlot()])
    >>> TrainingPlot.from_history(history)

One panel per logged quantity (loss, accuracy, ...), the training curve solid and the
validation curve (``val_...``) dashed on the same axes, epochs counted from 1 as Keras prints
them. The best validation epoch is marked (lowest loss, highest accuracy): where the curves part
is where the model starts to overfit.

Each epoch is drawn as it ends, under a line "epoch k / N" (N: ``fit``'s epochs, from Keras's
``params`` when ``fit`` hands them over, or ``TrainingPlot(epochs=N)``). An epoch that ends less
than ``REDRAW_S`` seconds after the last redraw waits for the next epoch's, which draws both;
the first and the last epoch and the end of ``fit`` are drawn at once. (On a busy 2-core
machine a redraw per epoch made lesson 6's 49-epoch ``fit`` up to four times slower: the
browser's redraws took the kernel's CPU.) The figure
is on the page from the start of ``fit``: the browser loads plotly while the first epoch runs,
and a short ``fit`` is not over before the picture appears. The picture is one plotly
FigureWidget updated in place, and follows the notebook's light or dark theme.

A saved notebook keeps text: when ``fit`` ends, the final summary (epochs, last and best
values) is written as an output of its own below the plot. (Updating the plot's own output
instead would store a text that nbval never sees: nbval ignores display updates.)
"""
import math
import time

import ipywidgets as w
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from edugraph.models.callbacks import Callback, in_notebook

from .notebook import FIGURE, ThemeProbe

TRAIN, VALIDATION = "#1f77b4", "#ff7f0e"
WIDTH = 440               # px
REDRAW_S = 0.3            # s: the least time between two redraws while fit runs
LIVE = "TrainingPlot: the curves are drawn live; the summary follows when fit ends"


def log_ticks(values):
    """Tick values for a logarithmic axis over ``values``: 1, 2 and 5 times the powers of
    ten, labelled in full. (plotly's own minor labels on a log axis are single digits, so a
    "5" sits below the "1" and a student reads 5 for 0.5.) Only the powers of ten where the
    values span many decades."""
    positive = [v for v in values if v > 0 and math.isfinite(v)]
    if not positive:
        return []
    low, high = min(positive), max(positive)
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    steps = (1, 2, 5) if len(decades) <= 4 else (1,)
    ticks = [m * 10.0 ** k for k in decades for m in steps]
    inside = [t for t in ticks if low / 2.5 <= t <= high * 2.5]
    return [float(f"{t:.12g}") for t in inside]


class TrainingPlot(Callback):
    """A callback for ``fit(..., callbacks=[TrainingPlot()])`` that plots the epoch logs.

    ``keys``: the quantities to plot (default: everything ``fit`` logs, e.g. loss and
    accuracy); ``log_y``: the names whose axis is logarithmic (default: the losses);
    ``epochs``: how many epochs ``fit`` runs, for "epoch k / N" (default: Keras's
    ``params["epochs"]`` if ``fit`` gives them); ``display``: show the plot when training
    starts (default: when running in a notebook).
    """

    def __init__(self, keys=None, log_y=None, title=None, height_per_panel=260, display=None,
                 epochs=None):
        self.keys, self.log_y, self.title = keys, log_y, title
        self.height_per_panel = height_per_panel
        self.display = in_notebook() if display is None else display
        self.epochs = epochs
        self.params = {}
        self.history = {}
        self.figure = go.FigureWidget()
        self._themed = None               # the theme the figure was last styled for
        self._summary_below = False       # fit's summary is an output of its own
        self._drawn_at = -math.inf        # when the last redraw started (time.monotonic)
        self.progress = w.HTML()
        self.summary = w.HTML()
        self.theme = ThemeProbe()
        self.theme.observe(lambda change: self._draw(), "dark")
        self.widget = w.VBox([self.progress, self.figure, self.summary, self.theme])

    def set_params(self, params):
        """Keras's hook: ``fit`` tells its callbacks ``{"epochs": ..., "steps": ...}``."""
        self.params = dict(params)

    @classmethod
    def from_history(cls, history, **options):
        """The curves of a finished ``fit`` (its History, or the ``history.history`` dict)."""
        plot = cls(display=False, **options)
        logs = getattr(history, "history", history)
        plot.history = {k: list(v) for k, v in logs.items()}
        plot._draw()
        return plot

    # ------------------------------------------------------------------ callback hooks
    def on_train_begin(self, logs=None):
        self.history, self._summary_below, self._drawn_at = {}, False, -math.inf
        self.progress.value = f"<b>{self._epoch_line()}</b>"
        self.summary.value = ""
        if self.display:
            from IPython.display import display
            display(self)

    def on_epoch_end(self, epoch, logs=None):
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(float(value))
        if self.epochs_done() == self.planned_epochs() or \
                time.monotonic() - self._drawn_at >= REDRAW_S:
            self._draw()

    def on_train_end(self, logs=None):
        if self.display:                # the saved form: the final numbers, as text (shown
            from IPython.display import display     # once: not in the widget as well)
            self._summary_below = True
            display({"text/plain": self.text()}, raw=True)
        self._draw()

    def planned_epochs(self):
        """N in "epoch k / N": given, or from ``fit``'s params (None: unknown)."""
        return self.epochs or self.params.get("epochs")

    def epochs_done(self):
        return max((len(v) for v in self.history.values()), default=0)

    def _epoch_line(self):
        done, planned = self.epochs_done(), self.planned_epochs()
        line = f"epoch {done} / {planned}" if planned else f"epoch {done}"
        if done:
            line += " — " + ", ".join(f"{k} {v[-1]:.4g}" for k, v in self.history.items())
        return line

    def panels(self):
        """The quantities with a panel each, in the order they were logged."""
        names = []
        for key in self.history:
            base = key[4:] if key.startswith("val_") else key
            if base not in names and (self.keys is None or base in self.keys):
                names.append(base)
        return names

    def best_epoch(self, name):
        """(epoch from 1, value) of the best validation value of ``name`` (else training)."""
        values = self.history.get("val_" + name) or self.history.get(name)
        if not values:
            return None
        pick = max if "acc" in name else min
        best = pick(range(len(values)), key=values.__getitem__)
        return best + 1, values[best]

    def _draw(self):
        self._drawn_at = time.monotonic()
        names = self.panels()
        if not names:
            self.progress.value = f"<b>{self._epoch_line()}</b>"
            return
        with self.figure.batch_update():
            if len(self.figure.data) != 3 * len(names) or \
                    [t.name for t in self.figure.data[::3]] != names:
                self._build(names)
            if self._themed != self.theme.name:      # (a template is slow to set)
                self._themed = self.theme.name
                self.figure.update_layout(FIGURE[self._themed])
            for i, name in enumerate(names):
                train, val, best = self.figure.data[3 * i: 3 * i + 3]
                for trace, key in ((train, name), (val, "val_" + name)):
                    values = self.history.get(key, [])
                    trace.x, trace.y = list(range(1, len(values) + 1)), values
                marked = self.best_epoch(name) if "val_" + name in self.history else None
                best.x, best.y = ([marked[0]], [marked[1]]) if marked else ([], [])
                if self._is_log(name):
                    ticks = log_ticks(self.history.get(name, []) +
                                      self.history.get("val_" + name, []))
                    self.figure.layout[_axis("yaxis", i)].update(
                        tickmode="array", tickvals=ticks, ticktext=[f"{t:g}" for t in ticks])
        self.progress.value = f"<b>{self._epoch_line()}</b>"     # (after the curves)
        self.summary.value = "" if self._summary_below else \
            "<pre style='margin:0;color:var(--jp-ui-font-color1)'>" + self.text() + "</pre>"

    def _build(self, names):
        """Panels for ``names`` in this plot's one figure (it is on the page already)."""
        rows = len(names)
        grid = make_subplots(rows=rows, cols=1, shared_xaxes=True,
                             vertical_spacing=0.12 / rows, subplot_titles=names)
        self.figure.data = ()
        self.figure.layout = grid.layout
        self._themed = None
        traces = []
        for row, name in enumerate(names):
            axes = dict(xaxis=_axis("x", row), yaxis=_axis("y", row))
            for key, colour, dash in ((name, TRAIN, "solid"), ("val_" + name, VALIDATION, "dash")):
                traces.append(go.Scatter(name=key, mode="lines+markers", **axes,
                                         line=dict(color=colour, dash=dash),
                                         marker=dict(size=4)))
            traces.append(go.Scatter(name=f"best {name}", mode="markers", **axes,
                                     marker=dict(symbol="star", size=13, color=VALIDATION),
                                     hovertemplate="best epoch %{x}: %{y:.4g}<extra></extra>",
                                     showlegend=False))
            self.figure.layout[_axis("yaxis", row)].type = \
                "log" if self._is_log(name) else "linear"
        # (all at once: each add_trace is a message of its own, and a redraw in the browser)
        self.figure.add_traces(traces)
        self.figure.layout[_axis("xaxis", rows - 1)].title.text = "epoch"
        # The legend in one row under the panels rather than beside them: the figure then
        # fits a notebook in a 900 px window, where the output area is about 450 px wide.
        self.figure.update_layout(height=self.height_per_panel * rows + 95, width=WIDTH,
                                  margin=dict(l=50, r=20, t=50, b=75), title=self.title,
                                  hovermode="x unified", legend=dict(
                                      orientation="h", yref="container", y=0,
                                      yanchor="bottom", x=0, xanchor="left"))

    def _is_log(self, name):
        return name in self.log_y if self.log_y is not None else "loss" in name

    # ------------------------------------------------------------------ text and display
    def text(self):
        """Epochs run, final value, best validation epoch and value of each quantity: the
        saved form."""
        names = self.panels()
        if not names:
            return "TrainingPlot: no epochs yet"
        epochs, planned = self.epochs_done(), self.planned_epochs()
        of = f" of {planned}" if planned and planned != epochs else ""
        lines = [f"TrainingPlot: {epochs} epoch{'s' * (epochs != 1)}{of}"]
        for name in names:
            line = f"  {name}: {self.history[name][-1]:.4g}" if name in self.history else \
                f"  {name}:"
            if "val_" + name in self.history:
                epoch, value = self.best_epoch(name)
                line += (f", val_{name}: {self.history['val_' + name][-1]:.4g} "
                         f"(best {value:.4g} at epoch {epoch})")
            lines.append(line)
        return "\n".join(lines)

    def __repr__(self):
        return self.text()

    def _repr_mimebundle_(self, **kwargs):
        # The widget for live notebooks; the text keeps saved outputs deterministic. While
        # fit runs that is one fixed line (the numbers follow in an output of their own).
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = LIVE if self.display and not self.epochs_done() else repr(self)
        return bundle


def _axis(kind, row):
    """The name of row ``row``'s axis (from 0): "x", "x2"... or "xaxis", "xaxis2"..."""
    return f"{kind}{row + 1 if row else ''}"
