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
