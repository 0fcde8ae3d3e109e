"""Live learning curves: the figure follows fit's logs; the saved text form is deterministic."""
import re

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

import edugraph as eg  # noqa: E402
from tests.browser.harness import (cell_errors, lab_notebook, mean_brightness,  # noqa: E402
                                   missing, screenshot, set_theme)
from tests.svg_picture import Drawn  # noqa: E402
from widgets import TrainingPlot, training  # noqa: E402
from widgets.measure import text_width  # noqa: E402


def points(plot, key):
    """How many points the plot's picture (its synced state) holds for ``key``."""
    found = Drawn(plot.picture.svg).series(key)
    return 0 if found is None else len(found[0])


def fit_digits(epochs=4, **plot_options):
    (x, y), (x_test, y_test) = eg.datasets.load_digits()
    eg.random.set_seed(0)
    net = eg.Sequential([eg.layers.Flatten(input_shape=(8, 8, 1)),
                         eg.layers.Dense(16, activation="relu"), eg.layers.Dense(10)])
    net.compile("adam", eg.losses.SparseCategoricalCrossentropy(from_logits=True),
                ["accuracy"])
    plot = TrainingPlot(**plot_options)
    history = net.fit(x[:400], y[:400], epochs=epochs, batch_size=32, verbose=0,
                      validation_data=(x_test[:100], y_test[:100]), callbacks=[plot])
    return plot, history


def test_curves_follow_the_history_panel_by_panel():
    plot, history = fit_digits()
    assert plot.panels() == ["loss", "accuracy"]
    drawn = Drawn(plot.picture.svg)
    for key, values in history.history.items():
        tips, _ = drawn.series(key)          # epochs counted from 1
        assert tips == [f"epoch {e}: {key} {v:.4g}" for e, v in enumerate(values, 1)]
    assert drawn.series("val_loss")[1] and not drawn.series("loss")[1]    # dashed: validation
    assert drawn.texts("panel-title") == ["loss", "accuracy"]            # one panel each


def test_best_validation_epoch_is_marked_and_summarised():
    plot, history = fit_digits()
    val_loss = history.history["val_loss"]
    best = int(np.argmin(val_loss)) + 1
    assert plot.best_epoch("loss") == (best, val_loss[best - 1])
    val_acc = history.history["val_accuracy"]
    assert plot.best_epoch("accuracy")[0] == int(np.argmax(val_acc)) + 1
    assert Drawn(plot.picture.svg).series("best val_loss")[0] == \
        [f"best epoch {best}: {val_loss[best - 1]:.4g}"]
    text = repr(plot)
    assert text.splitlines()[0] == "TrainingPlot: 4 epochs"
    assert f"best {val_loss[best - 1]:.4g} at epoch {best}" in text
    bundle = plot._repr_mimebundle_()
    assert bundle["text/plain"] == text and "application/vnd.jupyter.widget-view+json" in bundle


def test_from_history_draws_the_same_curves_and_keys_pick_panels():
    plot, history = fit_digits(epochs=3)
    again = TrainingPlot.from_history(history)
    assert again.picture.svg == plot.picture.svg
    only = TrainingPlot.from_history(history.history, keys=["accuracy"], log_y=[])
    assert only.panels() == ["accuracy"]
    assert Drawn(only.picture.svg).texts("panel-title") == ["accuracy"]
    assert repr(TrainingPlot()) == "TrainingPlot: no epochs yet"


def test_a_second_fit_starts_a_new_plot():
    plot, _ = fit_digits(epochs=2)
    (x, y), _ = eg.datasets.load_digits()
    net = eg.Sequential([eg.layers.Flatten(input_shape=(8, 8, 1)), eg.layers.Dense(10)])
    net.compile("sgd", eg.losses.SparseCategoricalCrossentropy(from_logits=True))
    net.fit(x[:64], y[:64], epochs=3, verbose=0, callbacks=[plot])
    assert plot.panels() == ["loss"] and len(plot.history["loss"]) == 3
    assert Drawn(plot.picture.svg).texts("panel-title") == ["loss"]
    assert points(plot, "loss") == 3


def test_each_epoch_is_drawn_as_it_ends_under_the_line_epoch_k_of_n(monkeypatch):
    """Issue 26: the plot showed nothing until fit ended (it redrew at most every few
    seconds, and a short fit was over before the first redraw). Each epoch here takes
    0.4 s of a fake clock: more than REDRAW_S, so each is drawn as it ends."""
    seen, clock = [], [0.0]
    monkeypatch.setattr(training.time, "monotonic", lambda: clock[0])

    class Watch(eg.models.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append((points(plot, "loss"), re.sub("<[^>]+>", "", plot.progress.value)))
            clock[0] += 0.4
    plot = TrainingPlot(epochs=3)
    (x, y), _ = eg.datasets.load_digits()
    net = eg.Sequential([eg.layers.Flatten(input_shape=(8, 8, 1)), eg.layers.Dense(10)])
    net.compile("sgd", eg.losses.SparseCategoricalCrossentropy(from_logits=True))
    net.fit(x[:64], y[:64], epochs=3, verbose=0, callbacks=[plot, Watch()])
    assert [points for points, _ in seen] == [1, 2, 3]
    assert [line.split(" — ")[0] for _, line in seen] == ["epoch 1 / 3", "epoch 2 / 3",
                                                          "epoch 3 / 3"]
    assert seen[0][1] == f"epoch 1 / 3 — loss {plot.history['loss'][0]:.4g}"
    unplanned = TrainingPlot.from_history({"loss": [1.0, 0.5]})
    assert "epoch 2 — loss 0.5" in unplanned.progress.value     # N unknown: not made up
    unplanned.set_params({"epochs": 5, "steps": 2})             # (Keras hands fit's params)
    unplanned._draw()
    assert "epoch 2 / 5" in unplanned.progress.value
    assert unplanned.text().splitlines()[0] == "TrainingPlot: 2 epochs of 5"


def test_fast_epochs_are_drawn_together_and_every_epoch_once_fit_ends(monkeypatch):
    """A redraw per epoch made lesson 6's fit four times slower in JupyterLab: epochs that
    end within REDRAW_S (0.3 s) of the last redraw wait for the next one; the first and the
    last epoch are drawn at once, and when fit ends (here stopped early) every epoch shows."""
    seen, clock = [], [0.0]
    monkeypatch.setattr(training.time, "monotonic", lambda: clock[0])

    class Watch(eg.models.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            seen.append(points(plot, "loss"))
            clock[0] += 0.125                    # (exact in binary: no rounding)
    plot = TrainingPlot()
    (x, y), _ = eg.datasets.load_digits()
    net = eg.Sequential([eg.layers.Flatten(input_shape=(8, 8, 1)), eg.layers.Dense(10)])
    net.compile("sgd", eg.losses.SparseCategoricalCrossentropy(from_logits=True))
    net.fit(x[:64], y[:64], epochs=6, verbose=0, callbacks=[plot, Watch()])
    assert seen == [1, 1, 1, 4, 4, 6]           # drawn at epochs 1, 4 (0.375 s on) and 6
    seen.clear()
    clock[0] = 0.0
    stop = eg.models.callbacks.LambdaCallback(
        on_epoch_end=lambda epoch, logs: setattr(net, "stop_training", epoch == 4))
    history = net.fit(x[:64], y[:64], epochs=8, verbose=0, callbacks=[plot, Watch(), stop])
    assert seen == [1, 1, 1, 4, 4]              # stopped after 5 of 8: epoch 5 not drawn ...
    assert Drawn(plot.picture.svg).series("loss")[0] == \
        [f"epoch {e}: loss {v:.4g}" for e, v in enumerate(history.history["loss"], 1)]
    assert "epoch 5 / 8" in plot.progress.value


def test_fit_shows_the_plot_then_its_complete_summary_once(monkeypatch):
    """Issue 26: lesson 6's stored output said "no epochs yet"."""
    import IPython.display
    shown = []
    monkeypatch.setattr(IPython.display, "display",
                        lambda obj, raw=False: shown.append(obj))
    plot, history = fit_digits(epochs=2, display=True)
    assert shown[0] is plot and shown[1] == {"text/plain": plot.text()}
    assert len(shown) == 2
    lines = plot.text().splitlines()
    assert lines[0] == "TrainingPlot: 2 epochs" and len(lines) == 3
    assert lines[1].startswith(f"  loss: {history.history['loss'][-1]:.4g}, val_loss: ")
    assert lines[2].startswith("  accuracy: ") and "(best " in lines[2]
    assert plot.summary.value == ""             # below the plot, not in it as well
    light = Drawn(plot.picture.svg)
    plot.picture.dark = True                    # what the browser reports (a redraw keeps it)
    assert plot.summary.value == ""
    dark = Drawn(plot.picture.svg)
    assert dark.text_elements("legend")[0].get("fill") != \
        light.text_elements("legend")[0].get("fill")
    # the figure fits the output area of a notebook in a 900 px window (about 450 px), and
    # its legend is inside it (issue 41: lesson 3's legend ran off the right edge)
    assert dark.width <= 450
    for legend in dark.text_elements("legend"):
        assert float(legend.get("x")) + text_width(legend.text, 11) <= dark.width


LIVE_SETUP = """\
import time
import edugraph as eg
from widgets import TrainingPlot
(x, y), (x_test, y_test) = eg.datasets.load_digits()
eg.random.set_seed(0)
net = eg.Sequential([eg.layers.Flatten(input_shape=(8, 8, 1)),
                     eg.layers.Dense(32, activation="relu"), eg.layers.Dense(10)])
net.compile("adam", eg.losses.SparseCategoricalCrossentropy(from_logits=True), ["accuracy"])
slow = eg.models.callbacks.LambdaCallback(on_epoch_end=lambda epoch, logs: time.sleep(2.5))
history = net.fit(x, y, epochs=8, validation_data=(x_test, y_test), verbose=0,
                  callbacks=[TrainingPlot(title="MLP on the digits", epochs=8), slow])"""
# The line "epoch k / 8" and how many points the loss curve has, read at one moment.
LIVE = """() => {
    const line = [...document.querySelectorAll('.widget-html')].map(h => h.textContent)
        .find(t => /^epoch \\d+ \\/ 8/.test(t));
    const loss = document.querySelector('.eg-picture g.series[data-series="loss"]');
    return [line ? Number(line.match(/^epoch (\\d+)/)[1]) : null,
            loss ? loss.querySelectorAll('title').length : null];
}"""
DONE = """() => [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')]
    .every(p => /\\[\\d+\\]/.test(p.textContent))"""
# How far the plot's output reaches right of the notebook's output area (px; > 0: cut off).
OVERFLOW = """() => {
    const plot = document.querySelector('.eg-picture svg');
    const area = plot.closest('.jp-OutputArea');
    return plot.getBoundingClientRect().right - area.getBoundingClientRect().right;
}"""


@pytest.mark.browser
@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_training_plot_draws_each_epoch_as_it_ends_and_stores_its_summary():
    """Issue 26: in lesson 6 the plot showed nothing until fit ended, and the stored output
    said "no epochs yet"; in the dark theme the figure was a white rectangle. The theme probe
    loads in time: anywidget gives a model 2 s, and the figure's traces, added one message
    (and one redraw in the browser) each, kept the page busy longer ("[anywidget] Failed to
    initialize model.", after which the probe's messages are dropped)."""
    with lab_notebook([LIVE_SETUP], wait=False) as page:
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        seen = []
        while not page.evaluate(DONE):
            epoch, points = page.evaluate(LIVE)
            if epoch is not None and points is not None:
                seen.append((epoch, points))
            page.wait_for_timeout(400)
        page.wait_for_timeout(1000)
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        curves = page.evaluate("""() => [...document.querySelectorAll(
            '.eg-picture g.series')].map(g => [g.dataset.series,
                                                g.querySelectorAll('title').length])""")
        outputs = page.evaluate("() => [...document.querySelectorAll("
                                "'.jp-CodeCell:nth-child(1) .jp-OutputArea-output')]"
                                ".map(o => o.innerText)")
        output = ".jp-CodeCell:nth-child(1) .jp-OutputArea"
        light = screenshot(page, "training-plot-1400-light", output)
        set_theme(page, "dark")
        dark = screenshot(page, "training-plot-1400-dark", output)
        page.set_viewport_size({"width": 900, "height": 1000})
        page.wait_for_timeout(1000)
        overflow = page.evaluate(OVERFLOW)
        screenshot(page, "training-plot-900-dark", output)
        set_theme(page, "light")
        screenshot(page, "training-plot-900-light", output)
    during = [(e, p) for e, p in seen if 0 < e < 8]
    # while fit runs, the plot shows epoch k's point with the line "epoch k / 8": it grows
    # epoch by epoch, not at the end. (The figure and the line are two messages, the figure's
    # first, and plotly draws asynchronously: a sample taken between the two sees the figure
    # one epoch ahead, and on a loaded machine the figure may trail the line by an epoch or
    # two.)
    assert len({e for e, _ in during}) >= 3, seen
    assert len({p for _, p in during if p > 0}) >= 3, seen
    assert all(points <= epoch + 1 for epoch, points in during), seen
    assert sum(points == epoch for epoch, points in during) >= len(during) / 2, seen
    assert ["loss", 8] in curves and ["val_accuracy", 8] in curves
    assert outputs[-1].startswith("TrainingPlot: 8 epochs\n  loss: ")      # the summary
    assert "accuracy: " in outputs[-1] and "(best " in outputs[-1]
    assert mean_brightness(light) > 0.8 and mean_brightness(dark) < 0.35
    assert overflow <= 0
    assert not [e for e in errors if "anywidget" in e], errors


def test_a_logarithmic_loss_axis_labels_its_ticks_in_full():
    """plotly labelled a log axis's minor ticks with one digit ("5" below "1" for 0.5)."""
    plot = TrainingPlot.from_history({"loss": [2.3, 1.1, 0.4, 0.12], "val_loss": [2.0, 0.9,
                                                                                   0.5, 0.3],
                                      "accuracy": [0.2, 0.5, 0.8, 0.9]})
    ticks = Drawn(plot.picture.svg).text_elements("y-tick")
    bottom_of_loss = max(float(t.get("y")) for t in ticks if t.text == "0.1")
    loss_ticks = [t.text for t in ticks if float(t.get("y")) <= bottom_of_loss]
    assert loss_ticks == ["0.1", "0.2", "0.5", "1", "2", "5"]
    accuracy_ticks = [float(t.text) for t in ticks if float(t.get("y")) > bottom_of_loss]
    steps = np.diff(accuracy_ticks)
    assert len(steps) >= 2 and np.allclose(steps, steps[0])      # linear: even steps
