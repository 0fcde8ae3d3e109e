"""TrainingPlot: learning curves drawn live while ``fit`` runs, or from a finished History.

    >>> net.fit(x, y, epochs=50, validation_data=(x_val, y_val), callbacks=[TrainingPlot()])
    >>> TrainingPlot.from_history(history)

One panel per logged quantity (loss, accuracy, ...), the training curve solid and the
validation curve (``val_...``) dashed on the same axes, epochs counted from 1 as Keras prints
them. The best validation epoch is marked (lowest loss, highest accuracy): where the curves part
is where the model starts to overfit.

Like the other widgets, the picture is one plotly FigureWidget updated in place (at most ten
times a second while training), and a saved notebook keeps a text table of the final numbers
instead of widget state.
"""
import math
import time

import ipywidgets as w
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from edugraph.models.callbacks import Callback, in_notebook

TRAIN, VALIDATION = "#1f77b4", "#ff7f0e"
REDRAW_EVERY = 0.1          # seconds: a fast epoch must not spend its time drawing


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
    ``display``: show the plot when training starts (default: when running in a notebook).
    """

    def __init__(self, keys=None, log_y=None, title=None, height_per_panel=260, display=None):
        self.keys, self.log_y, self.title = keys, log_y, title
        self.height_per_panel = height_per_panel
        self.display = in_notebook() if display is None else display
        self.history = {}
        self.figure = None
        self.summary = w.HTML()
        self.widget = w.VBox([self.summary])
        self._last_draw = 0.0

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
        self.history, self.figure, self._last_draw = {}, None, 0.0
        self.widget.children = [self.summary]
        self.summary.value = "<i>waiting for the first epoch…</i>"
        if self.display:
            from IPython.display import display
            display(self)

    def on_epoch_end(self, epoch, logs=None):
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(float(value))
        now = time.perf_counter()
        if now - self._last_draw >= REDRAW_EVERY:
            self._last_draw = now
            self._draw()

    def on_train_end(self, logs=None):
        self._draw()

    # ------------------------------------------------------------------ drawing
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
        names = self.panels()
        if not names:
            return
        if self.figure is None or len(self.figure.data) != 3 * len(names):
            self._build(names)
        with self.figure.batch_update():
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
                    self.figure.update_yaxes(tickmode="array", tickvals=ticks,
                                             ticktext=[f"{t:g}" for t in ticks],
                                             row=i + 1, col=1)
        self.summary.value = "<pre style='margin:0'>" + self.text() + "</pre>"

    def _build(self, names):
        rows = len(names)
        figure = go.FigureWidget(make_subplots(rows=rows, cols=1, shared_xaxes=True,
                                               vertical_spacing=0.12 / rows,
                                               subplot_titles=names))
        for row, name in enumerate(names, start=1):
            for key, colour, dash in ((name, TRAIN, "solid"), ("val_" + name, VALIDATION, "dash")):
                figure.add_scatter(name=key, mode="lines+markers", row=row, col=1,
                                   line=dict(color=colour, dash=dash), marker=dict(size=4))
            figure.add_scatter(name=f"best {name}", mode="markers", row=row, col=1,
                               marker=dict(symbol="star", size=13, color=VALIDATION),
                               hovertemplate="best epoch %{x}: %{y:.4g}<extra></extra>",
                               showlegend=False)
            figure.update_yaxes(type="log" if self._is_log(name) else "linear", row=row,
                                col=1)
        figure.update_xaxes(title_text="epoch", row=rows, col=1)
        figure.update_layout(height=self.height_per_panel * rows + 60, width=640,
                             template="plotly_white", margin=dict(l=50, r=20, t=50, b=40),
                             title=self.title, hovermode="x unified")
        self.figure = figure
        self.widget.children = [figure, self.summary]

    def _is_log(self, name):
        return name in self.log_y if self.log_y is not None else "loss" in name

    # ------------------------------------------------------------------ text and display
    def text(self):
        """Final value, best validation epoch and value of each quantity: the saved form."""
        names = self.panels()
        if not names:
            return "TrainingPlot: no epochs yet"
        epochs = max(len(v) for v in self.history.values())
        lines = [f"TrainingPlot: {epochs} epoch{'s' * (epochs != 1)}"]
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
        # The widget for live notebooks; the text keeps saved outputs deterministic.
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return bundle
