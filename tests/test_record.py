"""``python -m edugraph.exercises.record``, the one command that records a lesson's outputs.

A tiny lesson is recorded as an author would record one: it runs in a fresh kernel with the
lessons' BLAS settings, its split printed text is joined, its widget state left out, its plotly
figure gets a PNG beside it (drawn in Debian's Chromium, which .ci/run installs: without it these
tests fail and say so), its student version is written, and nbval passes on it.
"""
import base64
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from edugraph.exercises import record
from test_lessons_meta import png_size

ROOT = Path(__file__).resolve().parent.parent

CELLS = [
    # printed in pieces, as a busy machine splits it
    "import os\nimport plotly.graph_objects as go\n"
    "for i in range(3):\n    print(i, end=' ', flush=True)",
    "# NBVAL_IGNORE_OUTPUT\nprint(os.environ.get('OPENBLAS_NUM_THREADS'))",
    "fig = go.Figure(go.Scatter(y=[1, 3, 2]))\n"
    "fig.update_layout(template='none', width=320, height=200)\n"
    "fig.show(renderer='plotly_mimetype')",
    "import ipywidgets\nipywidgets.IntSlider(description='n')",
    "from widgets import TrainingPlot\n"
    "plot = TrainingPlot.from_history({'loss': [1.0, 0.5]})\nplot",
    "plot.on_epoch_end(2, {'loss': 0.25})\nplot.on_train_end()",
]


def tiny_lesson(folder):
    nb = nbformat.v4.new_notebook()
    nb.metadata.kernelspec = {"name": "python3", "display_name": "Python 3",
                              "language": "python"}
    nb.cells = ([nbformat.v4.new_markdown_cell("# A tiny lesson")]
                + [nbformat.v4.new_code_cell(code) for code in CELLS])
    path = folder / "01_tiny.ipynb"
    nbformat.write(nb, path)
    return path


def run(*args, cwd=ROOT):
    """Run this Python with ``args``, without the lessons' BLAS settings."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("OPENBLAS_")}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=600)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A tiny lesson, recorded with the command in lessons/README.md."""
    path = tiny_lesson(tmp_path_factory.mktemp("lessons"))
    result = run("-m", "edugraph.exercises.record", str(path))
    assert result.returncode == 0, f"recording failed:\n{result.stderr[-3000:]}"
    return path


def outputs(path):
    return [cell["outputs"] for cell in json.loads(path.read_text())["cells"]
            if cell["cell_type"] == "code"]


def test_the_lesson_runs_with_the_lessons_blas_settings(recorded):
    printed, threads, *_ = outputs(recorded)
    assert [o["output_type"] for o in printed] == ["stream"], \
        "the printed pieces are one output"
    assert "".join(printed[0]["text"]) == "0 1 2 "
    assert "".join(threads[0]["text"]) == "1\n"


def test_the_figure_gets_a_png_of_its_size(recorded):
    figure = outputs(recorded)[2]
    assert len(figure) == 1, "the PNG is in the figure's own output, not a second one"
    data = figure[0]["data"]
    assert record.PLOTLY in data, "the interactive figure stays"
    png = base64.b64decode(data["image/png"])
    assert png_size(png) == (320, 200)


def test_no_widget_state(recorded):
    nb = json.loads(recorded.read_text())
    assert "widgets" not in nb["metadata"]
    assert "application/vnd.jupyter.widget-view+json" in outputs(recorded)[3][0]["data"]


def test_a_widget_with_pictures_keeps_a_png_of_its_final_pictures(recorded):
    """Issue 41: a saved lesson opened without its kernel showed "Error displaying widget:
    model not found" where the inspector or a plot was; it shows their picture now."""
    data = outputs(recorded)[4][0]["data"]
    assert record.WIDGET_VIEW not in data
    assert "".join(data["text/plain"]).startswith("TrainingPlot: 2 epochs")   # (as shown)
    png = base64.b64decode(data["image/png"])
    width, height = png_size(png)
    assert width == 441 and height > 200        # the plot's picture, 440 px wide
    # white, with the loss curve (plotly's blue) and dark words on it
    from PIL import Image
    with Image.open(io.BytesIO(png)) as image:
        pixels = list(image.convert("RGB").getdata())
    curve = sum(b > r + 60 and b > 120 for r, _, b in pixels)
    words = sum(max(p) < 100 for p in pixels)
    white = sum(min(p) > 240 for p in pixels)
    assert white > 0.8 * len(pixels) and curve > 300 and words > 100, (white, curve, words)


def test_the_pictures_are_read_from_the_final_widget_state():
    """The inspector's pictures inside its boxes, in the order shown; a widget without
    pictures is left as it is."""
    def model(state):
        return {"model_name": "AnyModel", "state": state}
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(outputs=[nbformat.v4.new_output(
        "display_data", data={record.WIDGET_VIEW: {"model_id": top}, "text/plain": "x"})])
        for top in ("top", "slider")]
    nb.metadata.widgets = {record.WIDGET_STATE: {"state": {
        "top": model({"children": ["IPY_MODEL_box", "IPY_MODEL_second"]}),
        "box": model({"children": ["IPY_MODEL_first"], "layout": "IPY_MODEL_layout"}),
        "layout": model({"width": "100%"}),
        "first": model({"_esm": "...", "svg": "<svg>1</svg>"}),
        "second": model({"_esm": "...", "svg": "<svg>2</svg>"}),
        "slider": model({"value": 3})}}}
    assert record.widget_pictures(nb) == {0: ["<svg>1</svg>", "<svg>2</svg>"]}


def test_the_student_version_is_written(recorded):
    student = recorded.parent / "student" / recorded.name
    assert student.exists()
    assert all(not cell_outputs for cell_outputs in outputs(student))


def test_nbval_passes_on_the_recorded_lesson(recorded):
    """A fresh run makes no PNG; nbval (like the lessons' addopts) does not compare PNGs."""
    result = run("-m", "pytest", "-p", "no:cacheprovider", "--nbval", "--nbval-current-env",
                 "--rootdir", str(recorded.parent), recorded.name, cwd=recorded.parent)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "6 passed" in result.stdout


def test_no_execute_keeps_the_outputs_and_adds_the_pngs(recorded, tmp_path):
    nb = nbformat.read(recorded, as_version=4)
    for output in record.figure_outputs(nb):
        del output.data["image/png"]
    path = tmp_path / recorded.name
    nbformat.write(nb, path)
    result = run("-m", "edugraph.exercises.record", "--no-execute", str(path))
    assert result.returncode == 0, result.stderr[-3000:]
    again = nbformat.read(path, as_version=4)
    assert [c.get("execution_count") for c in again.cells] == \
        [c.get("execution_count") for c in nb.cells]
    assert all("image/png" in o.data for o in record.figure_outputs(again))


def test_without_chromium_the_error_says_what_to_install(recorded, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", "/nowhere/chromium")
    nb = nbformat.read(recorded, as_version=4)
    with pytest.raises(FileNotFoundError, match="no Chromium at /nowhere/chromium.*apt-get "
                                                "install chromium"):
        record.add_pngs(nb)


def test_a_student_version_is_not_recorded(tmp_path):
    (tmp_path / "student").mkdir()
    path = tiny_lesson(tmp_path / "student")
    with pytest.raises(ValueError, match="record the solved lesson"):
        record.record(path)
