"""Drive a real JupyterLab in headless Chromium: widgets must render, not just import.

    with lab_notebook(["from widgets.projector import Projector", "Projector(x)"]) as page:
        page.wait_for_selector(".js-plotly-plot")
        screenshot(page, "projector")

``lab_notebook`` writes the cells into a notebook in a temporary folder, starts
JupyterLab on a free localhost port, opens the notebook in Debian's Chromium via
playwright, runs all cells and waits until every cell has finished. The repository
root is on the kernel's PYTHONPATH, so cells import ``edugraph`` and ``widgets``.
"""
import contextlib
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
CHROMIUM = "/usr/bin/chromium"
# WebGL (plotly's scattergl and scatter3d) through SwiftShader, the CPU renderer.
CHROMIUM_ARGS = ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                 "--disable-background-networking", "--disable-component-update"]


def missing():
    """Why a browser test cannot run here, or None when it can."""
    if not os.path.exists(CHROMIUM):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "the playwright package is not installed"
    if shutil.which("jupyter-lab", path=str(Path(sys.executable).parent)) is None:
        return "JupyterLab is not installed next to this Python"
    return None


@contextlib.contextmanager
def lab_notebook(cells, *, timeout=180, viewport=(1400, 1000), theme="light", wait=True):
    """Yield a playwright ``page`` showing ``cells`` (code strings) after they all ran
    (``wait=False``: as soon as they were started). ``theme``: "light" or "dark"
    (JupyterLab Light or JupyterLab Dark)."""
    from playwright.sync_api import sync_playwright
    with tempfile.TemporaryDirectory(prefix="edugraph-lab-") as folder:
        (Path(folder) / "test.ipynb").write_text(json.dumps(_notebook(cells)))
        with _jupyter_lab(Path(folder), theme) as url, sync_playwright() as playwright:
            yield from _open_and_run(playwright, url, len(cells), timeout, viewport, wait)


@contextlib.contextmanager
def lab_lesson(path, *, timeout=600, viewport=(1400, 1000), theme="light"):
    """Yield a playwright ``page`` showing the lesson at ``path`` (a copy, in a temporary
    folder) after Run All, as a student runs it."""
    from playwright.sync_api import sync_playwright
    path = Path(path)
    with tempfile.TemporaryDirectory(prefix="edugraph-lab-") as folder:
        shutil.copy(path, Path(folder) / path.name)
        cells = sum(c["cell_type"] == "code" for c in json.loads(path.read_text())["cells"])
        with _jupyter_lab(Path(folder), theme) as url, sync_playwright() as playwright:
            yield from _open_and_run(playwright, url, cells, timeout, viewport, True,
                                     name=path.name)


@contextlib.contextmanager
def busy_cores(seconds, cores=2):
    """Keep ``cores`` CPU cores busy (a loop in a process each) for at most ``seconds``: a
    shared Binder or JupyterHub node, where the browser and the kernel wait their turn."""
    loop = f"import time\nend = time.monotonic() + {seconds}\nwhile time.monotonic() < end: pass"
    workers = [subprocess.Popen([sys.executable, "-c", loop]) for _ in range(cores)]
    try:
        yield
    finally:
        for worker in workers:
            worker.kill()
            worker.wait()


def save_and_reload(page):
    """Save the notebook, then reload the page while its kernel runs (a student who closes
    and reopens the tab, or whose browser reconnects); wait until the widgets are back."""
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.context.model.dirty")
    page.reload()
    page.wait_for_function("window.jupyterapp && document.querySelector("
                           "'.jp-Notebook .jp-CodeCell')")
    _wait_for_kernel(page)


# The figures of the cell at ``index``, widget or static: each one's kind and how many marks it
# draws (nodes, points, lines, heatmap cells). A bare figure — axes, no marks — counts 0.
# (cells by their place in the notebook's model: JupyterLab keeps only the cells near the
# view in the page, so the n-th '.jp-Cell' element is not the n-th cell)
CELL_NODE = "window.jupyterapp.shell.currentWidget.content.widgets[index].node"
CELL_FIGURES = """(index) => {
    const cell = %s;
    return [
    ...[...cell.querySelectorAll('.eg-picture')].map(p => ['picture',
        p.querySelectorAll('svg [data-id], svg g.series [points], svg g.series circle, ' +
                           'svg g.series path[d^="M"], svg text.values').length]),
    ...[...cell.querySelectorAll('.js-plotly-plot')].map(p => ['plotly',
        p.querySelectorAll('.scatterlayer .point, .scatterlayer .js-line, ' +
                           '.heatmaplayer image, .barlayer .point, ' +
                           '.scatterlayer .textpoint').length]),
    // a reopened notebook's plotly output is first the image plotly's renderer saved with
    // it (a whole picture, but one whose marks cannot be counted: 1), live once re-run
    ...[...cell.querySelectorAll('.jp-RenderedPlotly:not(.js-plotly-plot) img.plot-img')].map(img => ['plotly',
        img.complete && img.naturalWidth > 0 ? 1 : 0]),
    ...[...cell.querySelectorAll('.jp-OutputArea-output')].filter(
        o => /Error displaying widget|Loading widget/.test(o.textContent)).map(
        o => ['missing widget', 0])];
}""" % CELL_NODE


def figure_marks(page, settle_s=8):
    """[(cell index, kind, marks)] of every figure in the notebook, each cell scrolled into
    view first (JupyterLab draws only the cells in view, and plotly a figure once shown); a
    cell's figures are read once they hold marks, or after ``settle_s``."""
    found = []
    for index in range(page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.widgets.length")):
        page.evaluate("async (index) => { await window.jupyterapp.shell.currentWidget"
                      ".content.scrollToItem(index, 'start'); }", index)
        # (a figure's output: plotly's, or a widget's, which may hold a picture)
        outputs = page.evaluate(f"(index) => {CELL_NODE}.querySelectorAll("
                                "'.jp-RenderedPlotly, .jupyter-widgets').length", index)
        marks = page.evaluate(CELL_FIGURES, index)
        deadline = time.monotonic() + settle_s
        while outputs and time.monotonic() < deadline and (
                not marks or any(count == 0 for _, count in marks)):
            page.wait_for_timeout(250)
            marks = page.evaluate(CELL_FIGURES, index)
        found += [(index, kind, count) for kind, count in marks]
    return found


def _open_and_run(playwright, url, num_cells, timeout, viewport, wait, name="test.ipynb"):
    """Open the notebook in Chromium, run all cells, yield the page, close the browser."""
    # (scroll bars shown, as a student sees them: playwright hides them by default)
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                         ignore_default_args=["--hide-scrollbars"])
    try:
        page = browser.new_page(viewport=dict(zip(("width", "height"), viewport)))
        page.set_default_timeout(timeout * 1000)
        page.goto(url.format(path=f"lab/tree/{name}"))
        page.wait_for_function("window.jupyterapp && document.querySelector("
                               "'.jp-Notebook .jp-CodeCell')")
        _wait_for_kernel(page)
        # (not awaited: the command's promise ends only when every cell has run)
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
        if wait:
            page.wait_for_function(_ALL_CELLS_RAN, arg=num_cells)
        yield page
    finally:
        browser.close()


def screenshot(page, name, selector=None):
    """Save a PNG (of the page, or of one element) to ``artifacts/NAME.png``."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    target = page.locator(selector).first if selector else page
    target.screenshot(path=str(path))
    return path


# Every ``Picture`` on the page (widgets/picture.py), as the student sees it: how many
# clickable nodes and texts it draws, its drawn width and its box's, whether its box scrolls
# sideways, whether it is an overview, and the font size of its numbers on screen (CSS px;
# those on the wires: Infinity where there are none).
PICTURES = """() => [...document.querySelectorAll('.eg-picture')].map(p => {
    const svg = p.querySelector('svg'), box = p.querySelector('.eg-picture-box');
    if (!svg) return {nodes: 0, texts: 0, width: 0};
    const scale = svg.getBoundingClientRect().width / Number(svg.getAttribute('width'));
    const texts = [...svg.querySelectorAll('text')].filter(t => t.textContent.trim());
    return {nodes: svg.querySelectorAll('[data-id]').length, texts: texts.length,
            marks: svg.querySelectorAll('circle, rect, polygon, path').length,
            width: svg.getBoundingClientRect().width, box: box.clientWidth,
            scrolls: box.scrollWidth > box.clientWidth + 1,
            overview: p.classList.contains('eg-overview'),
            values: [...svg.querySelectorAll('text.values')].map(t => t.textContent),
            numbers: Math.min(...[...svg.querySelectorAll('text.values, text.grads')]
                .map(t => Number(t.getAttribute('font-size')) * scale)),
            right: svg.getBoundingClientRect().right,
            outputRight: p.closest('.jp-OutputArea-output').getBoundingClientRect().right};
})"""

# The rectangles (CSS px) of every text drawn in the pictures inside ``selector``.
PICTURE_TEXT_BOXES = """(selector) => [...document.querySelectorAll(
        selector + ' .eg-picture svg text')]
    .filter(t => t.textContent.trim() && t.getBoundingClientRect().width > 0)
    .map(t => { const r = t.getBoundingClientRect();
                return {text: t.textContent, x0: r.left, y0: r.top, x1: r.right, y1: r.bottom}; })"""


def click_picture_node(page, label, nth=0):
    """Click the node named ``label`` (its tooltip's first words) in the nth picture, as a
    student does: the mouse on the node's shape, scrolled into view first."""
    found = page.evaluate("""([label, nth]) => {
        const picture = document.querySelectorAll('.eg-picture')[nth];
        const node = [...picture.querySelectorAll('svg g[data-id]')].find(g =>
            g.querySelector('title').textContent.startsWith(label + ' ('));
        if (!node) return false;
        node.scrollIntoView({block: 'center', inline: 'center'});
        return true;
    }""", [label, nth])
    assert found, f"no node {label!r} in picture {nth}"
    box = page.evaluate("""([label, nth]) => {
        const picture = document.querySelectorAll('.eg-picture')[nth];
        const node = [...picture.querySelectorAll('svg g[data-id]')].find(g =>
            g.querySelector('title').textContent.startsWith(label + ' ('));
        const r = node.lastElementChild.getBoundingClientRect();
        return {x: r.left + r.width / 2, y: r.top + r.height / 2};
    }""", [label, nth])
    page.mouse.click(box["x"], box["y"])


def overlapping(boxes, tolerance=0.5):
    """Pairs of text boxes (from ``TEXT_BOXES``) that overlap by more than ``tolerance`` px."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if min(a["x1"], b["x1"]) - max(a["x0"], b["x0"]) > tolerance and \
                    min(a["y1"], b["y1"]) - max(a["y0"], b["y0"]) > tolerance:
                found.append((a["text"], b["text"]))
    return found


def mean_brightness(path):
    """The mean brightness (0 black … 1 white) of a PNG: a screenshot (RGBA) or a recorded
    picture (Pillow stores those with a palette, to keep the notebook small)."""
    from PIL import Image, ImageStat
    with Image.open(path) as image:
        return sum(ImageStat.Stat(image.convert("RGB")).mean) / (3 * 255)


def set_theme(page, theme):
    """Switch JupyterLab to its Light or Dark theme while the notebook is open."""
    name = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}[theme]
    page.evaluate("(theme) => window.jupyterapp.commands.execute('apputils:change-theme', "
                  "{theme})", name)
    page.wait_for_function("(light) => document.body.dataset.jpThemeLight === light",
                           arg="true" if theme == "light" else "false")
    page.wait_for_timeout(1500)         # the widgets hear of it and redraw


def cell_errors(page):
    """Texts of error outputs (tracebacks, stderr) and widgets that failed to display."""
    return page.evaluate("""() => [
        ...document.querySelectorAll(
            '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]'),
        ...[...document.querySelectorAll('.jp-OutputArea-output')].filter(
            el => /Error displaying widget|Traceback/.test(el.textContent))
    ].map(el => el.textContent)""")


# A cell has run when its prompt shows a number, e.g. "[3]:" (not "[ ]:" or "[*]:"); a
# traceback stops "run all", so an error output ends the wait too (the test then reports it).
_ALL_CELLS_RAN = """(count) => {
    const prompts = [...document.querySelectorAll('.jp-CodeCell .jp-InputPrompt')];
    const failed = document.querySelector(
        '.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]');
    return failed !== null || (prompts.length === count &&
        prompts.every(p => /\\[\\d+\\]/.test(p.textContent)));
}"""


def _wait_for_kernel(page):
    """Wait until the notebook's kernel has started and is idle."""
    page.wait_for_function("""() => {
        const panel = window.jupyterapp.shell.currentWidget;
        const kernel = panel && panel.sessionContext && panel.sessionContext.session
            && panel.sessionContext.session.kernel;
        return kernel && kernel.status === 'idle';
    }""")


def _notebook(cells):
    """A minimal nbformat-4 notebook with one code cell per string."""
    return {
        "cells": [{"cell_type": "code", "execution_count": None, "metadata": {},
                   "outputs": [], "source": source} for source in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5,
    }


@contextlib.contextmanager
def _jupyter_lab(folder, theme="light", start_timeout=60):
    """Run JupyterLab in ``folder``; yield its URL with a ``{path}`` placeholder."""
    port, token = _free_port(), secrets.token_hex(16)
    settings = folder / ".settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    # No "Would you like to get notified about news?" toast across the screenshot.
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    (settings / "themes.jupyterlab-settings").write_text(json.dumps(
        {"theme": {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}[theme]}))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    log = open(folder / "jupyterlab.log", "w")    # a file: a full pipe would block the server
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser",
         f"--ServerApp.token={token}", f"--ServerApp.port={port}", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.root_dir={folder}", "--LabApp.expose_app_in_browser=True",
         f"--LabApp.user_settings_dir={folder / '.settings'}",
         f"--LabApp.workspaces_dir={folder / '.workspaces'}", "--LabApp.news_url=None"],
        cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(f"{base}/api/status?token={token}", server, start_timeout, log.name)
        yield f"{base}/{{path}}?token={token}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _wait_until_up(url, server, timeout, log_path):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("JupyterLab exited early:\n" + Path(log_path).read_text())
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise TimeoutError(f"JupyterLab did not answer {url} within {timeout} s")


def _free_port():
    """A localhost port nobody listens on (the OS picks it)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
