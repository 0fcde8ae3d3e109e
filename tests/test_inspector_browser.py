"""The graph inspector in a real JupyterLab: it renders, a click shows a node's detail, the
controls show what is drawn, no two labels overlap, the figure follows the theme, and a wide
graph scrolls instead of being cut off. Screenshots (1400 and 900 px, light and dark) go to
artifacts/."""
import pytest

from tests.browser.harness import (TEXT_BOXES, cell_errors, lab_notebook, mean_brightness,
                                   missing, overlapping, screenshot, set_theme)

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(missing() is not None, reason=str(missing()))]

SETUP = """\
from widgets.inspector import GraphInspector

def f(x, w, b):
    return (w * x + b) ** 2

inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)"""

# Where node ``label`` of the nodes trace is on the page, in CSS pixels, once the picture's
# scroll box has brought it into view.
NODE_POSITION = """(label) => {
    const plot = document.querySelector('.js-plotly-plot');
    const trace = plot.calcdata.find(t => t[0] && t[0].trace.name === 'nodes');
    const i = trace[0].trace.text.findIndex(t => t === label);
    const layout = plot._fullLayout, scroller = plot.closest('.widget-box');
    scroller.scrollLeft = layout.xaxis.l2p(trace[i].x) - scroller.clientWidth / 2;
    const box = plot.getBoundingClientRect();
    return {x: box.left + layout.xaxis._offset + layout.xaxis.l2p(trace[i].x),
            y: box.top + layout.yaxis._offset + layout.yaxis.l2p(trace[i].y)};
}"""

# What the sliders show (their description and readout), and what the output's wire says.
SLIDERS = """() => [...document.querySelectorAll('.widget-slider')]
    .map(s => [s.querySelector('.widget-label').textContent,
               s.querySelector('.widget-readout').textContent.trim()])
    .filter(([name]) => name !== 'step')"""
WIRE_VALUES = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    return plot.data.find(t => t.name === 'values').text;
}"""


def click_node(page, label):
    point = page.evaluate(NODE_POSITION, label)
    page.mouse.move(point["x"], point["y"])
    page.wait_for_timeout(300)          # plotly clicks the point it is hovering
    page.mouse.click(point["x"], point["y"])


def test_inspector_renders_and_a_click_shows_the_node():
    with lab_notebook([SETUP, "inspector"]) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer", state="attached")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        detail = page.locator(".inspector-detail").first
        assert "square" in detail.inner_text()       # the output is shown first
        click_node(page, "mul")
        page.wait_for_function("() => document.querySelector('.inspector-detail h4')"
                               ".textContent.startsWith('mul')", timeout=60_000)
        text = detail.inner_text()
        screenshot(page, "inspector-browser")
        for _ in range(3):                  # from the end back to "mul sends ∇ to w and x"
            page.get_by_role("button", name="◀").click()
        page.wait_for_selector("text=backward 4/6: mul (switches)", timeout=60_000)
        written = page.evaluate("() => document.querySelector('.js-plotly-plot').data"
                                ".find(t => t.name === 'rules').text")
        screenshot(page, "inspector-browser-backward-step")
    # mul switches: w receives upstream 2 × x (2) = 4, x receives 2 × w (-1) = -2
    assert "2 × 2 = 4" in text and "2 × -1 = -2" in text
    assert list(written) == ["<b>2 × 2 = 4</b>", "<b>2 × -1 = -2</b>"]   # on the lit wires


def test_the_sliders_show_the_values_set_in_a_later_cell():
    """Issue 26: lesson 1's exercise sets x = -1, w = 2, b = 0.5 from code after Run All."""
    later = "inspector.view.update(x=-1.0, w=2.0, b=0.5)"
    with lab_notebook([SETUP, "inspector", later]) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer", state="attached")
        page.wait_for_function(f"() => ({SLIDERS})().length === 3")
        page.wait_for_function(f"() => ({WIRE_VALUES})().includes('2.25')", timeout=60_000)
        sliders = {name: float(text.replace("−", "-")) for name, text in page.evaluate(SLIDERS)}
        assert not cell_errors(page)
    # w·x + b = -1.5, squared 2.25; the readouts are those of the values set
    assert sliders == {"w": 2.0, "x": -1.0, "b": 0.5}


LESSON_3 = """\
from widgets import GraphInspector
from bench.bench_inspector import lesson3_graph

inspector = GraphInspector(**lesson3_graph())"""

PICTURE = ".jp-CodeCell:nth-child(2) .jp-OutputArea"
SCROLL_BOX = ".widget-box:has(.js-plotly-plot) >> nth=-1"     # what shows of the figure
# The picture's scroll box, the detail panel and the figure: their widths in CSS pixels.
SIZES = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    const box = plot.closest('.widget-box');
    const detail = document.querySelector('.inspector-detail').closest('.widget-html');
    return {box: box.clientWidth, scroll: box.scrollWidth, plot: plot.offsetWidth,
            bar: box.offsetHeight - box.clientHeight,
            detail: detail.offsetWidth, overflow: getComputedStyle(box).overflowX,
            detailTop: detail.getBoundingClientRect().top,
            plotBottom: box.getBoundingClientRect().bottom,
            right: box.getBoundingClientRect().right,
            outputRight: plot.closest('.jp-OutputArea-output').getBoundingClientRect().right};
}"""


def test_lesson_3s_graph_is_readable_at_1400_and_900_px_in_light_and_dark():
    """Issue 26: overlapping labels, a white figure in the dark theme, a picture cut off at
    900 px and squeezed side panels."""
    with lab_notebook([LESSON_3, "inspector"], viewport=(1400, 1100)) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer", state="attached")
        assert not cell_errors(page)
        page.wait_for_timeout(1500)
        texts = page.evaluate(TEXT_BOXES, PICTURE)
        assert len(texts) > 40 and overlapping(texts) == []
        wide = page.evaluate(SIZES)
        assert wide["overflow"] == "auto" and wide["scroll"] > wide["box"]     # it scrolls
        assert wide["bar"] >= 8                                     # with a scroll bar
        assert wide["right"] <= wide["outputRight"] + 1
        assert wide["detailTop"] < wide["plotBottom"]        # the detail beside the picture
        light = screenshot(page, "inspector-lesson3-1400-light", PICTURE)
        picture = screenshot(page, "inspector-lesson3-picture-light", SCROLL_BOX)
        assert mean_brightness(picture) > 0.8
        set_theme(page, "dark")
        dark = screenshot(page, "inspector-lesson3-picture-dark", SCROLL_BOX)
        assert mean_brightness(dark) < 0.3              # the figure follows the theme
        assert overlapping(page.evaluate(TEXT_BOXES, PICTURE)) == []
        screenshot(page, "inspector-lesson3-1400-dark", PICTURE)
        page.set_viewport_size({"width": 900, "height": 1700})   # (tall: all of it shows)
        page.wait_for_timeout(1500)
        narrow = page.evaluate(SIZES)
        assert narrow["right"] <= narrow["outputRight"] + 1      # inside the notebook ...
        assert narrow["scroll"] > narrow["box"] and narrow["bar"] >= 8   # ... and scrolls
        assert narrow["detail"] >= 300                  # not squeezed: below the picture
        assert narrow["detailTop"] >= narrow["plotBottom"] - 1
        screenshot(page, "inspector-lesson3-900-dark", PICTURE)
        set_theme(page, "light")
        screenshot(page, "inspector-lesson3-900-light", PICTURE)
    assert light.exists()


def test_a_small_graph_shows_whole_with_its_detail_beside_or_under_it():
    """Lesson 1's graph (about 720 px) at a laptop's width with the file browser open was cut
    on its right, where the output is, by the detail panel beside it: it now shows whole, the
    detail under it where both do not fit side by side, and beside it where they do."""
    with lab_notebook([SETUP, "inspector"], viewport=(1400, 1400)) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer", state="attached")
        assert not cell_errors(page)
        page.wait_for_timeout(1500)
        narrow = page.evaluate(SIZES)
        assert narrow["scroll"] <= narrow["box"] + 1            # no part of it hidden
        assert narrow["box"] >= narrow["plot"]
        assert narrow["right"] <= narrow["outputRight"] + 1
        assert narrow["detailTop"] >= narrow["plotBottom"] - 1  # the detail under it
        assert narrow["detail"] >= 300
        screenshot(page, "inspector-small-1400", PICTURE)
        page.set_viewport_size({"width": 1800, "height": 1400})
        page.wait_for_timeout(1500)
        wide = page.evaluate(SIZES)
        assert wide["scroll"] <= wide["box"] + 1
        assert wide["detailTop"] < wide["plotBottom"]           # the detail beside it
        screenshot(page, "inspector-small-1800", PICTURE)


# Lesson 3's training graph as the lesson shows it now, minimize's update collapsed too:
# wide and short.
LESSON_3_TRAINING = LESSON_3.replace(
    "**lesson3_graph()", '**{**lesson3_graph(), "collapsed": ["gradients", "GradientDescent"]}')


# Is node ``label`` inside the part of the figure its scroll box shows?
IN_VIEW = """(label) => {
    const plot = document.querySelector('.js-plotly-plot');
    const trace = plot.calcdata.find(t => t[0] && t[0].trace.name === 'nodes');
    const i = trace[0].trace.text.findIndex(t => t === label);
    const box = plot.closest('.widget-box'), x = plot._fullLayout.xaxis.l2p(trace[i].x);
    return box.scrollLeft < x && x < box.scrollLeft + box.clientWidth;
}"""


def test_a_wide_short_graph_takes_the_whole_row_with_its_detail_under_it():
    """Lesson 3's training graph (about 2000 x 320 px) beside the detail showed a third of
    itself at 1400 px with the file browser open (its layer's Relu and the loss hidden):
    it now scrolls across the output's whole width, the detail under it, and shows the node
    the detail describes (the loss, at its right end, was off-screen)."""
    with lab_notebook([LESSON_3_TRAINING, "inspector"], viewport=(1400, 1000)) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer", state="attached")
        assert not cell_errors(page)
        page.wait_for_timeout(1500)
        # JupyterLab's first layout, as a student opens it: the file browser takes 260 px
        assert page.evaluate("() => window.jupyterapp.shell.leftCollapsed") is False
        sizes = page.evaluate(SIZES)
        row = page.evaluate("""() => document.querySelector('.js-plotly-plot')
            .closest('.jp-OutputArea-output').getBoundingClientRect().width""")
        assert row < 1000
        assert sizes["box"] >= 0.95 * row                      # the whole row ...
        assert sizes["scroll"] > sizes["box"] and sizes["bar"] >= 8     # ... and scrolls
        assert sizes["detailTop"] >= sizes["plotBottom"] - 1    # the detail under it
        assert sizes["detail"] >= 300
        detail = page.locator(".inspector-detail").first
        assert detail.inner_text().startswith("Mean")
        assert not page.evaluate(IN_VIEW, "x")          # (the picture is wider than the row)
        page.wait_for_function(IN_VIEW, arg="Mean", timeout=10_000)    # the loss in view
        assert page.evaluate(IN_VIEW, "GradientDescent")   # and the boxes the text opens
        screenshot(page, "inspector-lesson3-training-1400", PICTURE)
        click_node(page, "MatMul")                  # (scrolled to it, at the left)
        page.wait_for_function("() => document.querySelector('.inspector-detail h4')"
                               ".textContent.startsWith('MatMul')", timeout=60_000)
        assert page.evaluate(IN_VIEW, "MatMul") and not page.evaluate(IN_VIEW, "Mean")
        screenshot(page, "inspector-lesson3-training-1400-matmul", PICTURE)


STATIC_SETUP = """\
from widgets.inspector import GraphInspector
from tests.test_view import two_layer_net

sess, feed, loss, _ = two_layer_net()
inspector = GraphInspector(sess.graph, session=sess, feed_dict=feed, output=loss,
                           collapsed=["GradientDescent"])"""

# The names of the boxes the nodes trace draws.
NODE_TEXTS = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    const trace = plot.calcdata.find(t => t[0] && t[0].trace.name === 'nodes');
    return trace[0].trace.text;
}"""


def test_static_graph_renders_a_click_shows_the_node_and_a_scope_collapses():
    with lab_notebook([STATIC_SETUP, "inspector"], viewport=(1400, 2000)) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer", state="attached")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        detail = page.locator(".inspector-detail").first
        assert "Mean" in detail.inner_text()           # the loss is shown first
        texts = page.evaluate(NODE_TEXTS)
        assert "GradientDescent" in texts               # a collapsed box
        assert not any("MatMul_grad" in t for t in texts)     # gradient nodes hidden
        widget = ".jp-OutputArea-output >> nth=-1"
        screenshot(page, "inspector-static", widget)
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        click_node(page, "Relu")
        page.wait_for_function("() => document.querySelector('.inspector-detail h4')"
                               ".textContent.startsWith('Relu')", timeout=60_000)
        assert "graph name layer1/Relu" in detail.inner_text()
        screenshot(page, "inspector-static-clicked", widget)
        count = len(texts)
        page.locator("select[multiple]").first.select_option(["GradientDescent", "layer1"])
        page.wait_for_function(f"() => ({NODE_TEXTS})().includes('layer1')", timeout=60_000)
        collapsed = page.evaluate(NODE_TEXTS)
        assert len(collapsed) == count - 4        # layer1's five nodes became one box
        screenshot(page, "inspector-static-collapsed", widget)


FUNCTION_SETUP = """\
import numpy as np
import edugraph as eg
from widgets.inspector import GraphInspector

w = eg.Variable(np.array([[0.5], [-1.0], [2.0]], np.float32), name="w")

@eg.function
def train_step(x, y):
    with eg.GradientTape() as tape:
        loss = eg.reduce_mean(eg.square(eg.tanh(eg.matmul(x, w)) * 2.0 + 1.0 - y))
    w.assign(w - 0.1 * tape.gradient(loss, w))
    return loss

x = np.random.default_rng(0).normal(size=(4, 3)).astype(np.float32)
y = np.ones((4, 1), np.float32)
traced = GraphInspector(train_step, args=(x, y), gradient_nodes=False)
optimised = GraphInspector(train_step, args=(x, y), optimized=True, gradient_nodes=False)"""


# The names of the boxes of every figure on the page (none for a figure not drawn yet).
EVERY_NODE_TEXT = """() => [...document.querySelectorAll('.js-plotly-plot')].map(plot => {
    const nodes = (plot.calcdata || []).find(t => t[0] && t[0].trace.name === 'nodes');
    return nodes ? nodes[0].trace.text : [];
})"""


def test_traced_function_before_and_after_its_passes():
    with lab_notebook([FUNCTION_SETUP, "traced", "optimised"], viewport=(1400, 2200)) as page:
        page.wait_for_function(f"() => ({EVERY_NODE_TEXT})().length === 2 && "
                               f"({EVERY_NODE_TEXT})().every(texts => texts.length > 0)")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        texts = page.evaluate(EVERY_NODE_TEXT)
        before, after = texts
        assert {"Tanh", "Mul", "Add", "Sub"} <= set(before)
        assert len(after) < len(before)                   # fused and folded
        assert "Sub" in after and "Add" not in after      # ·2 + 1 − y: one fused node
        screenshot(page, "inspector-function-traced", ".jp-OutputArea-output >> nth=0")
        screenshot(page, "inspector-function-optimized", ".jp-OutputArea-output >> nth=1")
