"""Issue 41 for the projector: every view draws its current picture, fresh, shown twice, reloaded.

With plotly's FigureWidget a view made after the kernel's updates (the projector displayed
again, the page reloaded while the kernel runs) drew bare axes: the widget's synced state kept
the traces it was made with. The picture is now the widget's state (an SVG,
``widgets/picture.py``). Here the projector is shown, changed from Python (another projection, a
search, a selection), shown again; both views must draw the new picture, and so must both after
a save and a reload with the kernel alive. Screenshots go to artifacts/.
"""
import pytest

from tests.browser.harness import (cell_errors, figure_marks, lab_notebook, missing,
                                   save_and_reload, screenshot)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(missing() is not None, reason=str(missing()))]

CELLS = [
    """\
import re
import numpy as np
from widgets.projector import Projector

rng = np.random.default_rng(0)
centres = rng.normal(scale=4, size=(4, 16))
vectors = np.repeat(centres, 30, axis=0) + rng.normal(size=(120, 16))
words = [f"{kind}{i}" for kind in ("cat", "dog", "car", "bus") for i in range(30)]
projector = Projector(vectors, {"word": words, "kind": [w[:3] for w in words]})
projector""",
    # a later cell changes it from Python, then shows it again
    """\
projector.pca(2, [1, 2])
projector.widget.search_box.value = "bus1"
projector.widget.select(5)
display(projector)""",
    # what the kernel holds now: the labels written and the place of point 0
    """\
svg = projector.widget.picture.svg
print(sorted(re.findall(r'class="label"[^>]*>([^<]+)<', svg)))
print(re.search(r'<circle data-id="0" cx="([^"]+)" cy="([^"]+)"', svg).groups())""",
]

# Each projector picture on the page: its labels, the place of point 0, how many points.
VIEWS = """() => [...document.querySelectorAll('.eg-picture svg')].map(svg => ({
    labels: [...svg.querySelectorAll('text.label')].map(t => t.textContent).sort(),
    zero: (c => c && [c.getAttribute('cx'), c.getAttribute('cy')])(
        svg.querySelector('circle[data-id="0"]')),
    points: svg.querySelectorAll('circle[data-id]').length}))"""


def kernel_state(page):
    """The labels and point 0's place the kernel printed (the last cell's output)."""
    text = page.evaluate("() => [...document.querySelectorAll('.jp-OutputArea-output')]"
                         ".map(o => o.textContent).filter(t => t.startsWith('['))[0]")
    labels, zero = text.strip().splitlines()
    return sorted(eval(labels)), list(eval(zero))        # (the kernel's own repr)


def views(page):
    """Both views, read once each has scrolled into view and drawn its points."""
    marks = figure_marks(page)
    return marks, page.evaluate(VIEWS)


def test_the_projector_shown_twice_and_reloaded_draws_its_current_picture_in_every_view():
    with lab_notebook(CELLS, viewport=(1300, 1100)) as page:
        page.wait_for_function("() => document.querySelectorAll("
                               "'.eg-picture svg circle[data-id]').length === 240",
                               timeout=60_000)
        assert not cell_errors(page)
        labels, zero = kernel_state(page)
        fresh = views(page)
        screenshot(page, "projector-pictures-fresh")
        save_and_reload(page)
        for _ in range(30):         # (a reloaded page draws its outputs as they scroll in)
            reloaded = views(page)      # (an output may still say "Loading widget")
            if all(count for *_, count in reloaded[0]) and len(reloaded[1]) == 2:
                break
            page.wait_for_timeout(1000)
        page.evaluate("async () => { await window.jupyterapp.shell.currentWidget"
                      ".content.scrollToItem(1, 'start'); }")
        page.wait_for_timeout(500)
        screenshot(page, "projector-pictures-reloaded")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
    assert "bus1" in labels and "cat5" in labels         # the search and the selection
    for marks, drawn in (fresh, reloaded):
        assert [(kind, count) for _, kind, count in marks] == [("picture", 120)] * 2, marks
        assert len(drawn) == 2
        for view in drawn:          # the first view too: the picture of now, not of then
            assert view["points"] == 120
            assert view["labels"] == labels
            assert view["zero"] == zero
