"""The graph inspector in a real JupyterLab: it renders, and a click on a node shows its detail."""
import pytest

from tests.browser.harness import cell_errors, lab_notebook, missing, screenshot

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(missing() is not None, reason=str(missing()))]

SETUP = """\
from widgets.inspector import GraphInspector

def f(x, w, b):
    return (w * x + b) ** 2

inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)"""

# Where node ``label`` of the nodes trace is on the page, in CSS pixels.
NODE_POSITION = """(label) => {
    const plot = document.querySelector('.js-plotly-plot');
    const trace = plot.calcdata.find(t => t[0] && t[0].trace.name === 'nodes');
    const i = trace[0].trace.text.findIndex(t => t.replace(/<[^>]+>/g, '').startsWith(label));
    const layout = plot._fullLayout, box = plot.getBoundingClientRect();
    return {x: box.left + layout.xaxis._offset + layout.xaxis.l2p(trace[i].x),
            y: box.top + layout.yaxis._offset + layout.yaxis.l2p(trace[i].y)};
}"""


def test_inspector_renders_and_a_click_shows_the_node():
    with lab_notebook([SETUP, "inspector"]) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        detail = page.locator(".inspector-detail").first
        assert "square" in detail.inner_text()       # the output is shown first
        point = page.evaluate(NODE_POSITION, "mul")
        page.mouse.move(point["x"], point["y"])
        page.wait_for_timeout(300)          # plotly clicks the point it is hovering
        page.mouse.click(point["x"], point["y"])
        page.wait_for_function("() => document.querySelector('.inspector-detail h4')"
                               ".textContent.startsWith('mul')", timeout=20_000)
        text = detail.inner_text()
        screenshot(page, "inspector-browser")
        for _ in range(3):                  # from the end back to "mul sends ∇ to w and x"
            page.get_by_role("button", name="◀").click()
        page.wait_for_selector("text=backward 4/6: mul (switches)", timeout=20_000)
        screenshot(page, "inspector-browser-backward-step")
    # mul switches: w receives upstream 2 × x (2) = 4, x receives 2 × w (-1) = -2
    assert "2 × 2 = 4" in text and "2 × -1 = -2" in text


STATIC_SETUP = """\
import numpy as np
import edugraph as eg
from widgets.inspector import GraphInspector

rng = np.random.default_rng(0)
graph = eg.Graph()
with graph.as_default():
    x = eg.placeholder(eg.float32, (None, 3), name="x")
    y = eg.placeholder(eg.float32, (None, 1), name="y")
    with eg.name_scope("layer1"):
        w1 = eg.Variable(rng.normal(size=(3, 4)).astype("float32"), name="w")
        b1 = eg.Variable(np.zeros(4, "float32"), name="b")
        h = eg.relu(eg.matmul(x, w1) + b1)
    with eg.name_scope("layer2"):
        w2 = eg.Variable(rng.normal(size=(4, 1)).astype("float32"), name="w")
        b2 = eg.Variable(np.zeros(1, "float32"), name="b")
        out = eg.matmul(h, w2) + b2
    with eg.name_scope("loss"):
        loss = eg.reduce_mean((out - y) ** 2)
    train = eg.train.GradientDescentOptimizer(0.1).minimize(loss)
    init = eg.global_variables_initializer()
sess = eg.Session(graph=graph)
sess.run(init)
feed = {x: rng.normal(size=(5, 3)).astype("float32"),
        y: rng.normal(size=(5, 1)).astype("float32")}
inspector = GraphInspector(graph, session=sess, feed_dict=feed, output=loss,
                           collapsed=["GradientDescent"])"""

# How many nodes the nodes trace draws, and whether one is labelled ``text``.
NODE_TEXTS = """() => {
    const plot = document.querySelector('.js-plotly-plot');
    const trace = plot.calcdata.find(t => t[0] && t[0].trace.name === 'nodes');
    return trace[0].trace.text.map(t => t.replace(/<[^>]+>/g, ' '));
}"""


def test_static_graph_renders_a_click_shows_the_node_and_a_scope_collapses():
    with lab_notebook([STATIC_SETUP, "inspector"], viewport=(1400, 2000)) as page:
        page.wait_for_selector(".js-plotly-plot .scatterlayer")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        detail = page.locator(".inspector-detail").first
        assert "Mean" in detail.inner_text()           # the loss is shown first
        texts = page.evaluate(NODE_TEXTS)
        assert any(t.strip().startswith("GradientDescent ▸") for t in texts)
        assert not any("MatMul_grad" in t for t in texts)     # gradient nodes hidden
        widget = ".jp-OutputArea-output >> nth=-1"
        screenshot(page, "inspector-static", widget)
        page.locator(".js-plotly-plot").first.scroll_into_view_if_needed()
        point = page.evaluate(NODE_POSITION, "Relu")
        page.mouse.move(point["x"], point["y"])
        page.wait_for_timeout(300)
        page.mouse.click(point["x"], point["y"])
        page.wait_for_function("() => document.querySelector('.inspector-detail h4')"
                               ".textContent.startsWith('Relu')", timeout=20_000)
        assert "graph name layer1/Relu" in detail.inner_text()
        screenshot(page, "inspector-static-clicked", widget)
        count = len(texts)
        page.locator("select[multiple]").first.select_option(["GradientDescent", "layer1"])
        page.wait_for_function(f"() => ({NODE_TEXTS})().some(t => t.trim().startsWith("
                               "'layer1 ▸'))",
                               timeout=20_000)
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


def test_traced_function_before_and_after_its_passes():
    with lab_notebook([FUNCTION_SETUP, "traced", "optimised"], viewport=(1400, 2200)) as page:
        page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length === 2")
        assert not cell_errors(page)
        assert page.locator("text=Error displaying widget").count() == 0
        texts = page.evaluate("""() => [...document.querySelectorAll('.js-plotly-plot')].map(
            plot => plot.calcdata.find(t => t[0] && t[0].trace.name === 'nodes')[0].trace.text
                .map(t => t.replace(/<[^>]+>/g, ' ').trim().split(' ')[0]))""")
        before, after = texts
        assert {"Tanh", "Mul", "Add", "Sub"} <= set(before)
        assert len(after) < len(before)                   # fused and folded
        assert "Sub" in after and "Add" not in after      # ·2 + 1 − y: one fused node
        screenshot(page, "inspector-function-traced", ".jp-OutputArea-output >> nth=0")
        screenshot(page, "inspector-function-optimized", ".jp-OutputArea-output >> nth=1")
