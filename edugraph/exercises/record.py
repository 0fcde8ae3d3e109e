"""Record a lesson's outputs: ``python -m edugraph.exercises.record lessons/NN_name.ipynb``.

Runs the solved lesson top to bottom in a fresh kernel, as the tests (nbval) run it, and saves
it with its outputs; then

- joins the printed text that a busy machine splits into several outputs;
- leaves out the widgets' state (a widget stores a text summary, which is what nbval compares);
  a widget with pictures (``widgets/picture.py``: the inspector, ``TrainingPlot``...) stores a
  PNG of its pictures as they were when the lesson ended instead of its view: a lesson opened
  without a running kernel shows the picture, not "Error displaying widget: model not found",
  and running the cell brings the live widget back;
- stores a PNG of every plotly figure in the figure's own output, beside the plotly JSON:
  GitHub and nbviewer run no plotly.js and show the PNG, JupyterLab shows the interactive figure
  (its plotly renderer shows the PNG until the pointer enters, then draws the figure), and nbval
  does not compare PNGs, so a student's kernel, which makes none, still passes;
- writes the lesson's student version again (``student_versions``).

``--no-execute`` keeps the stored outputs: it adds the PNGs and writes the student version.

The PNGs are drawn by kaleido in Chromium (Debian's ``/usr/bin/chromium``, or the browser that
``BROWSER_PATH`` names), from the ``teach`` extra: ``pip install -e ".[lab,teach]"``.
"""
import argparse
import asyncio
import base64
import io
import os
import platform
import sys
import time
from pathlib import Path

import nbformat

from . import student_versions

PLOTLY = "application/vnd.plotly.v1+json"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
CHROMIUM = "/usr/bin/chromium"


def use_lesson_environment():
    """Run the lessons' kernels, when recording and under nbval alike, with the same BLAS.

    A lesson's training numbers depend on the matrix kernels OpenBLAS picks for the CPU: its
    AVX-512 kernels add in another order than its AVX2 ones, and a few hundred training steps
    (a chaotic recurrent net's above all) turn the last bit into the second digit. So on x86-64
    the kernels use OpenBLAS's Haswell (AVX2) kernels, which every x86-64 CPU since 2013 has.
    The lessons' matrices are small: one BLAS thread computes the same numbers, and two threads
    on a busy 2-core machine wait on each other (a 100×64 by 64×512 product took 28 ms, not 0.2).
    A kernel inherits these from the process that starts it; a value already set is kept.
    """
    if platform.machine().lower() in ("x86_64", "amd64"):
        os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def execute(nb, folder):
    """Run ``nb`` (in place) in a fresh kernel started in ``folder``, as nbval does."""
    from nbclient import NotebookClient
    from nbconvert.preprocessors import CoalesceStreamsPreprocessor
    NotebookClient(nb, resources={"metadata": {"path": str(folder)}},
                   store_widget_state=True).execute()
    CoalesceStreamsPreprocessor().preprocess(nb, {})


def widget_pictures(nb):
    """{output index: its pictures' SVGs, in the order they are shown} of every widget output
    that holds ``Picture`` widgets, from the widget state the run stored (the final one)."""
    models = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})

    def pictures(model_id, seen):
        if model_id in seen or model_id not in models:
            return []
        seen.add(model_id)
        state = models[model_id].get("state", {})
        if isinstance(state.get("svg"), str) and "_esm" in state:
            return [state["svg"]] if state["svg"] else []
        found = []
        for value in state.values():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.startswith("IPY_MODEL_"):
                    found += pictures(item[len("IPY_MODEL_"):], seen)
        return found

    found = {}
    for at, output in enumerate(o for cell in nb.cells if cell.cell_type == "code"
                                for o in cell.outputs):
        view = output.get("data", {}).get(WIDGET_VIEW)
        if view and pictures(view["model_id"], set()):
            found[at] = pictures(view["model_id"], set())
    return found


def render_svg_pngs(pictures):
    """A PNG of each list of SVGs, stacked one under another on white, each at its size:
    drawn by Chromium, as the browser draws the widget."""
    import re
    import subprocess
    import tempfile
    pngs = []
    with tempfile.TemporaryDirectory() as folder:
        for k, svgs in enumerate(pictures):
            sizes = [tuple(float(v) for v in re.search(r'width="([\d.]+)" height="([\d.]+)"',
                                                         svg).groups()) for svg in svgs]
            width = int(max(w for w, _ in sizes)) + 1
            height = int(sum(h for _, h in sizes)) + 8 * (len(svgs) - 1) + 1
            page = Path(folder) / f"{k}.html"
            page.write_text("<!DOCTYPE html><html><body style='margin:0;background:#fff'>"
                            + "".join(f"<div style='margin-bottom:8px'>{svg}</div>"
                                      for svg in svgs) + "</body></html>", encoding="utf-8")
            out = Path(folder) / f"{k}.png"
            subprocess.run([browser(), "--headless", "--no-sandbox", "--disable-gpu",
                            "--hide-scrollbars", "--force-device-scale-factor=1",
                            f"--window-size={width},{height}", f"--screenshot={out}",
                            page.as_uri()], check=True, capture_output=True, timeout=120)
            pngs.append(small_png(out.read_bytes()))
    return pngs


def keep_pictures_not_widgets(nb):
    """Give each widget output with pictures a PNG of them in place of its view, then leave
    the widgets' state out (in place); how many outputs got one."""
    found = widget_pictures(nb)
    outputs = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.outputs]
    for at, png in zip(found, render_svg_pngs(list(found.values()))):
        data = outputs[at].data
        del data[WIDGET_VIEW]
        data["image/png"] = base64.b64encode(png).decode("ascii")
    nb.metadata.pop("widgets", None)
    return len(found)


def figure_outputs(nb):
    """The outputs that hold a plotly figure (``fig.show(renderer="plotly_mimetype")``)."""
    return [output for cell in nb.cells if cell.cell_type == "code"
            for output in cell.outputs if PLOTLY in output.get("data", {})]


def browser():
    """The Chromium that draws the PNGs, or an error that says how to get one."""
    path = os.environ.get("BROWSER_PATH", CHROMIUM)
    if not os.access(path, os.X_OK):
        raise FileNotFoundError(
            f"no Chromium at {path}: the figures' PNGs are drawn by kaleido in Chromium "
            "(apt-get install chromium, or set BROWSER_PATH to a Chrome or Chromium)")
    return path


def render_pngs(figures):
    """PNGs of plotly figures (dicts), each at the figure's own width and height."""
    import kaleido

    async def render():
        # (MathJax off: kaleido would fetch it from a CDN; LaTeX in a figure stays as typed)
        async with kaleido.Kaleido(path=browser(), mathjax=False) as drawer:
            return [await drawer.calc_fig(figure, opts={"format": "png", "scale": 1})
                    for figure in figures]

    return [small_png(png) for png in asyncio.run(render())]


def small_png(png):
    """The same picture in at most 256 colours: a fifth to a third of Chromium's bytes.

    A figure is flat colours and their anti-aliased edges: 256 colours look the same, and the
    repository keeps every recorded image in its history.
    """
    from PIL import Image
    with Image.open(io.BytesIO(png)) as image:
        out = io.BytesIO()
        image.convert("RGB").quantize(256).save(out, "PNG", optimize=True)
    return out.getvalue()


def add_pngs(nb):
    """Store a PNG beside every plotly figure in ``nb`` (in place); how many there were."""
    outputs = figure_outputs(nb)
    if outputs:
        pngs = render_pngs([output.data[PLOTLY] for output in outputs])
        for output, png in zip(outputs, pngs):
            output.data["image/png"] = base64.b64encode(png).decode("ascii")
    return len(outputs)


def record(path, run=True):
    """Record the solved lesson at ``path`` and write its student version."""
    path = Path(path)
    if path.parent.name == "student":
        raise ValueError(f"{path} is a student version: record the solved lesson, "
                         "whose student version is written from it")
    before, start = path.stat().st_size, time.perf_counter()
    nb = nbformat.read(path, as_version=4)
    if figure_outputs(nb) or WIDGET_VIEW in path.read_text(encoding="utf-8"):
        browser()       # (before the lesson runs for minutes, not after)
    if run:
        execute(nb, path.parent)
    pictures = keep_pictures_not_widgets(nb)
    figures = add_pngs(nb)
    nbformat.write(nb, path)
    print(f"{path}: {'ran in ' if run else 'kept its outputs, '}"
          f"{time.perf_counter() - start:.0f} s, {figures} figure(s) and {pictures} "
          "widget(s) with a PNG, "
          f"{before / 1024:.0f} KiB -> {path.stat().st_size / 1024:.0f} KiB")
    student_versions.main(["--lessons", str(path.parent), str(path)])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lessons", nargs="+", type=Path, help="solved lessons to record")
    parser.add_argument("--no-execute", action="store_true",
                        help="keep the stored outputs; add the figures' PNGs and write the "
                             "student versions")
    args = parser.parse_args(argv)
    use_lesson_environment()
    for path in args.lessons:
        record(path, run=not args.no_execute)
    return 0


if __name__ == "__main__":
    sys.exit(main())
