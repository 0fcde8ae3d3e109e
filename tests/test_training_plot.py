"""Live learning curves: the figure follows fit's logs; the saved text form is deterministic."""
import numpy as np
import pytest

pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")

import edugraph as eg  # noqa: E402
from tests.browser.harness import cell_errors, lab_notebook, missing, screenshot  # noqa: E402
from widgets import TrainingPlot  # noqa: E402


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
    traces = {t.name: t for t in plot.figure.data}
    for key, values in history.history.items():
        np.testing.assert_allclose(traces[key].y, values)
        assert list(traces[key].x) == [1, 2, 3, 4]           # epochs counted from 1
    assert traces["val_loss"].line.dash == "dash" and traces["loss"].line.dash == "solid"
    assert traces["loss"].yaxis != traces["accuracy"].yaxis       # one panel each
    assert plot.figure.layout.yaxis.type == "log"                 # the loss panel
    assert plot.figure.layout.yaxis2.type == "linear"


def test_best_validation_epoch_is_marked_and_summarised():
    plot, history = fit_digits()
    val_loss = history.history["val_loss"]
    best = int(np.argmin(val_loss)) + 1
    assert plot.best_epoch("loss") == (best, val_loss[best - 1])
    val_acc = history.history["val_accuracy"]
    assert plot.best_epoch("accuracy")[0] == int(np.argmax(val_acc)) + 1
    star = next(t for t in plot.figure.data if t.name == "best loss")
    assert list(star.x) == [best]
    text = repr(plot)
    assert text.splitlines()[0] == "TrainingPlot: 4 epochs"
    assert f"best {val_loss[best - 1]:.4g} at epoch {best}" in text
    bundle = plot._repr_mimebundle_()
    assert bundle["text/plain"] == text and "application/vnd.jupyter.widget-view+json" in bundle


def test_from_history_draws_the_same_curves_and_keys_pick_panels():
    plot, history = fit_digits(epochs=3)
    again = TrainingPlot.from_history(history)
    assert [t.y for t in again.figure.data] == [t.y for t in plot.figure.data]
    only = TrainingPlot.from_history(history.history, keys=["accuracy"], log_y=[])
    assert only.panels() == ["accuracy"] and len(only.figure.data) == 3
    assert repr(TrainingPlot()) == "TrainingPlot: no epochs yet"


def test_a_second_fit_starts_a_new_plot():
    plot, _ = fit_digits(epochs=2)
    (x, y), _ = eg.datasets.load_digits()
    net = eg.Sequential([eg.layers.Flatten(input_shape=(8, 8, 1)), eg.layers.Dense(10)])
    net.compile("sgd", eg.losses.SparseCategoricalCrossentropy(from_logits=True))
    net.fit(x[:64], y[:64], epochs=3, verbose=0, callbacks=[plot])
    assert plot.panels() == ["loss"] and len(plot.history["loss"]) == 3
    assert len(plot.figure.data) == 3


@pytest.mark.browser
@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_training_plot_renders_live_in_jupyterlab():
    setup = """\
import edugraph as eg
from widgets import TrainingPlot
(x, y), (x_test, y_test) = eg.datasets.load_digits()
eg.random.set_seed(0)
net = eg.Sequential([eg.layers.Flatten(input_shape=(8, 8, 1)),
                     eg.layers.Dense(32, activation="relu"), eg.layers.Dense(10)])
net.compile("adam", eg.losses.SparseCategoricalCrossentropy(from_logits=True), ["accuracy"])
history = net.fit(x, y, epochs=15, validation_data=(x_test, y_test), verbose=0,
                  callbacks=[TrainingPlot(title="MLP on the digits")])"""
    with lab_notebook([setup]) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer .trace")
        page.wait_for_selector("text=TrainingPlot: 15 epochs")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        curves = page.evaluate("""() => document.querySelector('.js-plotly-plot').data
            .map(t => [t.name, (t.y || []).length])""")
        assert ["loss", 15] in curves and ["val_accuracy", 15] in curves
        screenshot(page, "training-plot", ".jp-OutputArea-output >> nth=-1")


def test_a_logarithmic_loss_axis_labels_its_ticks_in_full():
    """plotly labels a log axis's minor ticks with one digit ("5" below "1" for 0.5)."""
    plot = TrainingPlot.from_history({"loss": [2.3, 1.1, 0.4, 0.12], "val_loss": [2.0, 0.9,
                                                                                   0.5, 0.3],
                                      "accuracy": [0.2, 0.5, 0.8, 0.9]})
    loss_axis, accuracy_axis = plot.figure.layout.yaxis, plot.figure.layout.yaxis2
    assert loss_axis.type == "log" and loss_axis.tickmode == "array"
    assert list(loss_axis.ticktext) == ["0.1", "0.2", "0.5", "1", "2", "5"]
    assert list(loss_axis.tickvals) == [0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
    assert accuracy_axis.type == "linear" and accuracy_axis.tickmode is None
