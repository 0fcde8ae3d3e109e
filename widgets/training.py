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
browser's redraws took the kernel's CPU.) The picture is a ``Picture`` whose synced state is
the SVG of the curves so far (``widgets/chart.py``): every view draws the latest one, a view
opened after ``fit`` too, and it follows the notebook's light or dark theme.

A saved notebook keeps text: when ``fit`` ends, the final summary (epochs, last and best
values) is written as an output of its own below the plot. (Updating the plot's own output
instead would store a text that nbval never sees: nbval ignores display updates.)
"""
import math
import time

import ipywidgets as w

from edugraph.models.callbacks import Callback, in_notebook

from .chart import Panel, Series, chart, log_ticks  # noqa: F401  (log_ticks: part of the API)
from .picture import Picture

TRAIN, VALIDATION = "#1f77b4", "#ff7f0e"
WIDTH = 440               # px
REDRAW_S = 0.3            # s: the least time between two redraws while fit runs
LIVE = "TrainingPlot: the curves are drawn live; the summary follows when fit ends"


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
        self.picture = Picture(min_scale=0.0)       # (a chart shrinks to any width)
        self._summary_below = False       # fit's summary is an output of its own
        self._drawn_at = -math.inf        # when the last redraw started (time.monotonic)
        self.progress = w.HTML()
        self.summary = w.HTML()
        self.picture.observe(lambda change: self._draw(), "dark")
        self.widget = w.VBox([self.progress, self.picture, self.summary])

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
        if names:
            self.picture.svg = chart([self._panel(name) for name in names], width=WIDTH,
                                     panel_height=self.height_per_panel,
                                     theme=self.picture.theme, title=self.title or "",
                                     x_label="epoch", x_max=self.planned_epochs())
        self.progress.value = f"<b>{self._epoch_line()}</b>"     # (after the curves)
        self.summary.value = "" if self._summary_below else \
            "<pre style='margin:0;color:var(--jp-ui-font-color1)'>" + self.text() + "</pre>"

    def _panel(self, name):
        """The panel of ``name``: training solid, validation dashed, the best epoch starred."""
        series = []
        for key, colour, dash in ((name, TRAIN, False), ("val_" + name, VALIDATION, True)):
            values = self.history.get(key)
            if values:
                epochs = list(range(1, len(values) + 1))
                series.append(Series(key, epochs, values, colour, dash=dash, marker_px=4,
                                     tips=[f"epoch {e}: {key} {v:.4g}"
                                           for e, v in zip(epochs, values)]))
        if "val_" + name in self.history:
            epoch, value = self.best_epoch(name)
            series.append(Series(f"best val_{name}", [epoch], [value], VALIDATION,
                                 marker="star", marker_px=14, line=False,
                                 tips=[f"best epoch {epoch}: {value:.4g}"]))
        return Panel(name, series, log_y=self._is_log(name))

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
