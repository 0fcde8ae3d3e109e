"""The projector in a real JupyterLab: it renders, and a click lists neighbours."""
import pytest

from tests.browser.harness import (COVERED_TEXTS, TEXT_BOXES, cell_errors, lab_notebook,
                                   mean_brightness, missing, overlapping, screenshot,
                                   set_theme)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(missing() is not None, reason=str(missing()))]

SETUP = """\
import numpy as np
from widgets.projector import Projector

rng = np.random.default_rng(0)
centres = rng.normal(scale=4, size=(4, 16))
vectors = np.repeat(centres, 30, axis=0) + rng.normal(size=(120, 16))
words = [f"{kind}{i}" for kind in ("cat", "dog", "car", "bus") for i in range(30)]
projector = Projector(vectors, {"word": words, "kind": [w[:3] for w in words]})"""

# Where the rightmost point of the trace is on the page, in CSS pixels.
RIGHTMOST_POINT = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    const xs = plot.data[0].x, ys = plot.data[0].y;
    const best = xs.indexOf(Math.max(...xs));
    const layout = plot._fullLayout, box = plot.getBoundingClientRect();
    return {index: best,
            x: box.left + layout.xaxis._offset + layout.xaxis.l2p(xs[best]),
            y: box.top + layout.yaxis._offset + layout.yaxis.l2p(ys[best])};
}"""


def test_projector_renders_and_a_click_lists_neighbours():
    with lab_notebook([SETUP, "projector"], viewport=(1300, 1400)) as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", state="attached")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        output = ".jp-CodeCell:nth-child(2) .jp-OutputArea"
        screenshot(page, "projector-browser-initial", output)
        point = page.evaluate(RIGHTMOST_POINT)
        page.mouse.move(point["x"], point["y"])
        page.wait_for_timeout(300)          # plotly clicks the point it is hovering
        page.mouse.click(point["x"], point["y"])
        table = page.wait_for_selector("table.projector-neighbours", timeout=60_000)
        names = [cell.inner_text() for cell in
                 table.query_selector_all("tr td:nth-child(2)")]
        screenshot(page, "projector-browser-clicked", output)

    namespace = {}
    exec(SETUP, namespace)
    projector = namespace["projector"]
    expected = [name for name, _ in projector.neighbours(point["index"], k=10)]
    assert names == expected
    # All neighbours of a point in a tight cluster come from that cluster.
    assert len({name[:3] for name in names} | {projector.label(point["index"])[:3]}) == 1


DIGITS = """\
import numpy as np
import edugraph as eg
from widgets.projector import Projector

(images, labels), _ = eg.datasets.load_digits()
vectors = images[:300].reshape(300, -1)
digits = Projector(vectors, metadata={"digit": labels[:300].tolist()}, images=images[:300])"""
LATER = "digits.tsne(perplexity=20, iterations=250)"
PICTURE_BOX = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    const box = plot.closest('.widget-box'), out = plot.closest('.jp-OutputArea-output');
    return {scroll: box.scrollWidth, client: box.clientWidth, plot: plot.offsetWidth,
            right: box.getBoundingClientRect().right, out: out.getBoundingClientRect().right};
}"""


def test_the_figure_narrows_with_the_notebook_instead_of_scrolling():
    """At 900 px with the file browser open, lesson 7's projector hid its right side behind a
    scroll bar: a plotly figure has a fixed size, and Python did not know the page's. The
    figure now takes the output area's width (up to 600 px), also when the window changes."""
    with lab_notebook([SETUP, "projector"], viewport=(720, 1200)) as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", state="attached")
        assert not cell_errors(page)
        page.wait_for_timeout(2000)
        narrow = page.evaluate(PICTURE_BOX)
        assert narrow["plot"] < 600                         # it narrowed ...
        assert narrow["scroll"] <= narrow["client"] + 1     # ... so nothing hides
        assert narrow["right"] <= narrow["out"] + 1
        screenshot(page, "projector-720", ".jp-CodeCell:nth-child(2) .jp-OutputArea")
        page.set_viewport_size({"width": 1400, "height": 1200})
        page.wait_for_timeout(2000)
        wide = page.evaluate(PICTURE_BOX)
        assert wide["plot"] == 600 and wide["scroll"] <= wide["client"] + 1


MENU = """() => [...document.querySelectorAll('.widget-dropdown')].map(d => [
    d.querySelector('label').textContent, d.querySelector('select').value])"""


def test_the_menu_shows_a_projection_made_in_a_later_cell_in_both_themes_and_widths():
    """Issue 26: after Run All, lesson 7's menu said PCA over a t-SNE picture; the digits
    lumped three classes as grey "others"; the figure stayed white in the dark theme."""
    with lab_notebook([DIGITS, "digits", LATER], viewport=(1400, 1200)) as page:
        page.wait_for_selector(".js-plotly-plot .main-svg", state="attached")
        assert not cell_errors(page)
        page.wait_for_function(f"() => ({MENU})().some(([l, v]) => l === 'projection' && "
                               "v.endsWith('t-SNE'))", timeout=60_000)
        menu = dict(page.evaluate(MENU))
        swatches = page.locator(".jp-OutputArea-output >> nth=1").inner_text()
        output = ".jp-CodeCell:nth-child(2) .jp-OutputArea"
        screenshot(page, "projector-digits-1400-light", output)
        plot = screenshot(page, "projector-digits-plot-light", ".js-plotly-plot")
        assert mean_brightness(plot) > 0.8
        set_theme(page, "dark")
        plot = screenshot(page, "projector-digits-plot-dark", ".js-plotly-plot")
        assert mean_brightness(plot) < 0.35
        screenshot(page, "projector-digits-1400-dark", output)
        page.set_viewport_size({"width": 900, "height": 1200})
        page.wait_for_timeout(1500)
        sizes = page.evaluate("""() => {
            const plot = document.querySelector('.js-plotly-plot');
            const box = plot.closest('.widget-box'), out = plot.closest('.jp-OutputArea');
            const side = document.querySelector('.projector-side');
            return {box: box.getBoundingClientRect().right, out: out.getBoundingClientRect().right,
                    side: side.offsetWidth};
        }""")
        screenshot(page, "projector-digits-900-dark", output)
        set_theme(page, "light")
        screenshot(page, "projector-digits-900-light", output)
    assert menu["projection"].endswith("t-SNE")
    assert all(str(d) in swatches for d in range(10)) and "others" not in swatches
    assert sizes["box"] <= sizes["out"] + 1 and sizes["side"] >= 280


# Lesson 7's static map, where the dots of a kind drawn later (a verb's) lie on a word.
WORD_MAP = """\
import numpy as np
from widgets.projector import word_map

words = ["drink", "eat", "go", "paris", "rome", "oslo", "france", "italy", "norway"]
kinds = ["verb"] * 3 + ["capital"] * 3 + ["country"] * 3
coordinates = np.array([[0, 0], [2, 0], [5.05, 5.2], [5, 5], [5.5, 3], [4.5, 6],
                        [8, 1], [8.5, 3], [0.5, 2]])        # ("go" on the word "paris")
word_map(coordinates, words, kinds, title="t-SNE").show(renderer="plotly_mimetype")"""


def test_the_static_word_map_writes_every_word_above_every_dot():
    """Lesson 7's static t-SNE map wrote each kind's words with its own dots: the dots of
    kinds drawn later covered them ("drink" under the verbs' dots)."""
    with lab_notebook([WORD_MAP]) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer text", state="attached")
        assert not cell_errors(page)
        output = ".jp-CodeCell .jp-OutputArea"
        texts = page.evaluate(TEXT_BOXES, output)
        assert {t["text"] for t in texts} == {"drink", "eat", "paris", "rome", "france",
                                              "italy"}       # two words of each kind
        assert overlapping(texts) == []
        assert page.evaluate(COVERED_TEXTS, output) == []     # no dot drawn over a word
        screenshot(page, "word-map", output)
