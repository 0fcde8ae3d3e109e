"""The projector in a real JupyterLab: it renders, and a click lists neighbours.

Its picture is an SVG (``widgets/picture.py``): each point a circle whose ``data-id`` is its
data row."""
import pytest

from tests.browser.harness import (cell_errors, lab_notebook, mean_brightness, missing,
                                   screenshot, set_theme)

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

# Where the rightmost point of the picture is on the page, in CSS pixels.
RIGHTMOST_POINT = """() => {
    const dots = [...document.querySelectorAll('.eg-picture svg circle[data-id]')];
    const best = dots.reduce((a, b) => +b.getAttribute('cx') > +a.getAttribute('cx') ? b : a);
    const r = best.getBoundingClientRect();
    return {index: +best.dataset.id, x: r.left + r.width / 2, y: r.top + r.height / 2};
}"""
DRAWN = ".eg-picture svg circle[data-id]"


def test_projector_renders_and_a_click_lists_neighbours():
    with lab_notebook([SETUP, "projector"], viewport=(1300, 1400)) as page:
        page.wait_for_selector(DRAWN, state="attached")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        output = ".jp-CodeCell:nth-child(2) .jp-OutputArea"
        screenshot(page, "projector-browser-initial", output)
        point = page.evaluate(RIGHTMOST_POINT)
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
    const plot = document.querySelector('.eg-picture svg');
    const box = plot.closest('.widget-box'), out = plot.closest('.jp-OutputArea-output');
    return {scroll: box.scrollWidth, client: box.clientWidth,
            plot: plot.getBoundingClientRect().width, drawn: +plot.getAttribute('width'),
            right: box.getBoundingClientRect().right, out: out.getBoundingClientRect().right};
}"""


def test_the_figure_narrows_with_the_notebook_instead_of_scrolling():
    """At 900 px with the file browser open, lesson 7's projector hid its right side behind a
    scroll bar: a plotly figure has a fixed size, and Python did not know the page's. The
    picture is now drawn in the width its box has (up to 600 px), also when the window
    changes."""
    with lab_notebook([SETUP, "projector"], viewport=(720, 1200)) as page:
        page.wait_for_selector(DRAWN, state="attached")
        assert not cell_errors(page)
        page.wait_for_timeout(2000)
        narrow = page.evaluate(PICTURE_BOX)
        assert narrow["plot"] < 600 and narrow["drawn"] < 600   # drawn narrower ...
        assert narrow["scroll"] <= narrow["client"] + 1     # ... so nothing hides
        assert narrow["right"] <= narrow["out"] + 1
        screenshot(page, "projector-720", ".jp-CodeCell:nth-child(2) .jp-OutputArea")
        page.set_viewport_size({"width": 1400, "height": 1200})
        page.wait_for_timeout(2000)
        wide = page.evaluate(PICTURE_BOX)
        assert wide["plot"] == wide["drawn"] == 600 and wide["scroll"] <= wide["client"] + 1


MENU = """() => [...document.querySelectorAll('.widget-dropdown')].map(d => [
    d.querySelector('label').textContent, d.querySelector('select').value])"""


def test_the_menu_shows_a_projection_made_in_a_later_cell_in_both_themes_and_widths():
    """Issue 26: after Run All, lesson 7's menu said PCA over a t-SNE picture; the digits
    lumped three classes as grey "others"; the figure stayed white in the dark theme."""
    with lab_notebook([DIGITS, "digits", LATER], viewport=(1400, 1200)) as page:
        page.wait_for_selector(DRAWN, state="attached")
        assert not cell_errors(page)
        page.wait_for_function(f"() => ({MENU})().some(([l, v]) => l === 'projection' && "
                               "v.endsWith('t-SNE'))", timeout=60_000)
        menu = dict(page.evaluate(MENU))
        swatches = page.locator(".jp-OutputArea-output >> nth=1").inner_text()
        output = ".jp-CodeCell:nth-child(2) .jp-OutputArea"
        screenshot(page, "projector-digits-1400-light", output)
        plot = screenshot(page, "projector-digits-plot-light", ".eg-picture svg")
        assert mean_brightness(plot) > 0.8
        set_theme(page, "dark")
        plot = screenshot(page, "projector-digits-plot-dark", ".eg-picture svg")
        assert mean_brightness(plot) < 0.35
        screenshot(page, "projector-digits-1400-dark", output)
        page.set_viewport_size({"width": 900, "height": 1200})
        page.wait_for_timeout(1500)
        sizes = page.evaluate("""() => {
            const plot = document.querySelector('.eg-picture svg');
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


# Lesson 7's static map: words close together, two of each kind named.
WORD_MAP = """\
import numpy as np
from widgets.projector import word_map

words = ["drink", "eat", "go", "english", "spanish", "seoul", "the", "in", "paris"]
kinds = ["verb"] * 3 + ["language"] * 2 + ["capital", "other", "other", "capital"]
coordinates = np.array([[0, 0], [2, 0], [5.05, 5.2], [5, 5], [5.2, 5.05], [8, 1],
                        [8.1, 1.05], [0.5, 2], [8.5, 3]])
word_map(coordinates, words, kinds, title="t-SNE", width=700)"""


def test_the_static_word_map_is_shown_at_its_width_with_no_word_on_another():
    """Lesson 7's static t-SNE map printed "english" and "spanish" as "englishpanish" and
    "seoul" on "the", and was shown at half its width. It is now an SVG drawn as the
    projector draws, at the width it is given."""
    with lab_notebook([WORD_MAP]) as page:
        page.wait_for_selector(".jp-RenderedSVG img, .jp-RenderedSVG svg", state="attached")
        assert not cell_errors(page)
        width = page.evaluate("() => document.querySelector('.jp-RenderedSVG img, "
                              ".jp-RenderedSVG svg').getBoundingClientRect().width")
        screenshot(page, "word-map", ".jp-CodeCell .jp-OutputArea")
    assert width == 700
