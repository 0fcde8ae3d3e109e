"""The inspector without a browser: layout, the scene drawn per step, the widget's reactions."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.view import graph_view
from widgets.inspector import GraphInspector
from widgets.inspector.colours import diverging, signed_colours
from widgets.inspector.detail import heatmap, node_detail
from widgets.inspector.layout import layered_layout
from widgets.inspector.scene import Scene


def f(x, w, b):
    return (w * x + b) ** 2


def f_view():
    x, w, b = (eg.tensor(v, requires_grad=True) for v in (2.0, -1.0, 3.0))
    return graph_view(f(x, w, b), names={"x": x, "w": w, "b": b})


def chain_graph(layers=3, width=4):
    rng = np.random.default_rng(0)
    h = eg.tensor(rng.normal(size=(2, width)))
    for _ in range(layers):
        w = eg.tensor(rng.normal(size=(width, width)), requires_grad=True)
        h = eg.tanh(h @ w + 1.0)
    return h.sum()


# ----------------------------------------------------------------------------- layout
def test_layout_puts_every_op_right_of_its_inputs_and_leaves_next_to_their_consumer():
    nodes = ["a", "b", "c", "d", "e"]
    edges = [("a", "c"), ("b", "c"), ("c", "e"), ("d", "e")]
    pos = layered_layout(nodes, edges)
    for s, t in edges:
        assert pos[s][0] < pos[t][0]
    assert pos["d"][0] == pos["e"][0] - 1      # d is only read by e: it stands beside e
    columns = {}
    for n, (c, r) in pos.items():
        columns.setdefault(c, []).append(r)
    for rows in columns.values():              # no two nodes on the same spot, centred on 0
        assert len(set(rows)) == len(rows) and abs(sum(rows)) < 1e-9


def crossings(pos, edges):
    count = 0
    for i, (a, b) in enumerate(edges):
        for c, d in edges[i + 1:]:
            if pos[a][0] == pos[c][0] and pos[b][0] == pos[d][0] and len({a, b, c, d}) == 4:
                count += (pos[a][1] - pos[c][1]) * (pos[b][1] - pos[d][1]) < 0
    return count


def test_barycentre_sweeps_remove_crossings():
    nodes = ["a", "b", "c", "x", "y", "z"]
    edges = [("a", "z"), ("b", "y"), ("c", "x")]     # given order crosses everything
    assert crossings(layered_layout(nodes, edges, sweeps=0), edges) == 3
    assert crossings(layered_layout(nodes, edges), edges) == 0


def test_layout_is_deterministic():
    first = Scene(graph_view(chain_graph())).position
    second = Scene(graph_view(chain_graph())).position
    assert first == second


# ----------------------------------------------------------------------------- scene
def test_full_frame_shows_values_gradients_gates_and_edge_shapes():
    view = f_view()
    frame = Scene(view).frame()
    texts = dict(zip(frame["ids"], frame["node_text"]))
    assert "= -2" in texts[view.node("mul").id] and "∇ 2" in texts[view.node("mul").id]
    gates = dict(zip(frame["ids"], frame["gate_text"]))
    assert "switches" in gates[view.node("mul").id]
    assert "distributes" in gates[view.node("add").id]
    assert all(t.startswith("scalar") for t in frame["label_text"])
    assert "∇ 4" in " ".join(frame["label_text"])           # the edge back to w carries 4
    # arrowheads point from input to op: rightwards, and turned clockwise when going down
    scene = Scene(view)
    for (s, t, _), angle in zip(scene.links, frame["arrow_angle"]):
        (x0, y0), (x1, y1) = scene.position[s], scene.position[t]
        assert np.cos(np.radians(angle)) > 0 and np.sign(angle) == np.sign(y0 - y1)
    # colours: w's gradient 4 is the largest (deep blue), x's -2 is red
    colours = dict(zip(frame["ids"], frame["colour"]))
    assert colours[view.node("w").id] == diverging(1.0)
    assert colours[view.node("x").id] == diverging(-0.5)


def test_step_frames_highlight_the_active_node_and_edges():
    view = f_view()
    scene = Scene(view)
    steps = view.steps()
    mul_forward = next(i for i, s in enumerate(steps) if s["node"] == view.node("mul").id)
    frame = scene.frame(step=mul_forward)
    assert frame["active"] == view.node("mul").id
    assert frame["caption"] == "forward 3/6: mul(w, x) = -2"
    assert len(frame["active_x"]) == 2 * 3                  # its two input edges lit
    texts = dict(zip(frame["ids"], frame["node_text"]))
    assert "∇" not in "".join(frame["node_text"])           # no gradient yet going forward
    assert "= 1" not in texts[view.node("square").id]       # square not computed yet
    first_back = scene.frame(step=len(view.nodes))
    assert first_back["caption"] == "backward 1/6: start at square with gradient 1"
    assert first_back["ring_colour"] == ["#FF8C00"]
    texts = dict(zip(first_back["ids"], first_back["node_text"]))
    assert "∇ 1" in texts[view.output] and "∇" not in texts[view.node("w").id]


def test_selected_node_is_ringed():
    view = f_view()
    frame = Scene(view).frame(selected=view.node("b").id)
    assert frame["ring_colour"] == ["#000000"]
    assert (frame["ring_x"][0], frame["ring_y"][0]) == Scene(view).position[view.node("b").id]


def test_fan_out_is_labelled_sums():
    x = eg.tensor(3.0, requires_grad=True)
    view = graph_view(x * x + x, names={"x": x})
    frame = Scene(view).frame()
    gates = dict(zip(frame["ids"], frame["gate_text"]))
    assert gates[view.node("x").id] == "<i>sums 3</i>"
    assert "2× scalar" in frame["label_text"]               # x feeds mul twice: one link


def test_collapsed_scope_stands_for_its_nodes():
    view = f_view()
    for n in view.nodes:
        if n.label in ("mul", "add"):
            n.scope = "layer1"
    scene = Scene(view, collapsed=["layer1"])
    assert "scope:layer1" in scene.shown and len(scene.members["scope:layer1"]) == 2
    assert view.node("mul").id not in scene.shown
    links = {(s, t) for s, t, _ in scene.links}
    assert (view.node("w").id, "scope:layer1") in links
    assert ("scope:layer1", view.output) in links
    frame = scene.frame()
    assert "layer1 ▸" in frame["node_text"][frame["ids"].index("scope:layer1")]


def test_gradient_nodes_can_be_hidden():
    view = f_view()
    view.node("square").gradient_node = True
    assert view.output not in Scene(view, show_gradient_nodes=False).shown
    assert view.output in Scene(view).shown


def test_warnings_and_gradient_check_are_marked():
    x = eg.tensor([1.0, -2.0], requires_grad=True)
    view = graph_view(eg.relu(x - 5).sum(), names={"x": x})
    frame = Scene(view).frame(check={view.node("x").id: {"ok": False}})
    relu = frame["ids"].index(view.node("relu").id)
    assert "⚠ dead ReLU" in frame["node_text"][relu] and frame["line_width"][relu] == 4
    leaf = frame["ids"].index(view.node("x").id)
    assert "✗ grad check" in frame["node_text"][leaf]


def test_signed_colours_scale_by_the_largest():
    assert signed_colours([2.0, -1.0, None, 0.0]) == [
        diverging(1.0), diverging(-0.5), "#D9D9D9", diverging(0.0)]
    assert diverging(0.0) == "rgb(247,247,247)" and diverging(5) == "rgb(33,102,172)"


# ----------------------------------------------------------------------------- detail panel
def test_detail_shows_the_local_rule_with_numbers():
    view = f_view()
    html = node_detail(view, view.node("mul").id)
    assert "upstream × local" in html and "2 × 2 = 4" in html and "2 × -1 = -2" in html
    assert "mul switches" in html


def test_detail_heatmap_and_statistics_for_a_matrix():
    a = eg.tensor([[1.0, -2.0, np.nan]], requires_grad=True)
    view = graph_view((a * 2).sum(), names={"a": a})
    html = node_detail(view, view.node("a").id)
    assert "1 NaN" in html and "min -2" in html and "inspector-heatmap" in html
    big = heatmap(np.arange(2 * 20 * 20.0).reshape(2, 20, 20))
    assert big.count("<td") == 12 * 12 and "first slice" in big


# ----------------------------------------------------------------------------- the widget
def test_widget_draws_one_figure_and_updates_it_in_place():
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    figure = inspector.figure
    nodes = inspector.nodes
    assert len(nodes.x) == 6 and [s.description for s in inspector.sliders] == ["w", "x", "b"]
    inspector.sliders[0].value = 0.5                 # w: s = 0.5·2 + 3 = 4, f = 16
    assert inspector.figure is figure
    assert "= 16" in nodes.text[nodes.hovertext.index(next(
        h for h in nodes.hovertext if h.startswith("<b>square")))]
    assert inspector.view.node("w").grad == 2 * 4 * 2


def test_sliders_follow_values_set_from_code_and_stop_on_round_numbers():
    """A slider shows what is drawn: view.update from code moves it (beyond its range too),
    and its steps stop on round values, so lesson 1's x = -1, w = 2, b = 0.5 can be set."""
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    sliders = {s.description: s for s in inspector.sliders}
    inspector.view.update(b=-6.0)
    assert sliders["b"].value == -6.0
    inspector.view.update(x=40.0)
    assert sliders["x"].value == 40.0 and sliders["x"].min <= 40.0 <= sliders["x"].max
    assert inspector.view.node("x").value == 40.0        # the slider did not write back
    for slider in sliders.values():
        for target in (-1.0, 2.0, 0.5, 0.0):
            if slider.min <= target <= slider.max:
                steps = (target - slider.min) / slider.step
                assert abs(steps - round(steps)) < 1e-9, (slider.description, target)
    sliders["w"].value = 0.5
    assert inspector.view.node("w").value == 0.5


def test_widget_click_selects_and_steps_move():
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    index = inspector.scene.shown.index(inspector.view.node("add").id)

    class Points:
        point_inds = [index]
    inspector._on_click(inspector.nodes, Points(), None)
    assert "<h4" in inspector.detail.value and "add" in inspector.detail.value
    inspector.step.value = 0
    assert inspector.caption.value.startswith("<b>forward 1/6")
    inspector.forward.click()
    assert inspector.step.value == 1
    inspector.grad_check.value = True
    assert all(r["ok"] for r in inspector.check.values())
    assert "gradient check" in inspector.detail.value or inspector.selected


def test_widget_repr_is_the_text_table_and_bad_calls_explain():
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    assert repr(inspector) == inspector.view.to_text()
    with pytest.raises(TypeError, match="needs the inputs' starting values"):
        GraphInspector(f)


def test_widget_of_a_bigger_net_collapses_nothing_and_builds():
    inspector = GraphInspector(chain_graph(layers=4))
    assert len(inspector.nodes.x) == len(inspector.view.nodes)
    assert inspector.sliders == []


# ----------------------------------------------------------------------------- static graphs
def static_inspector(**options):
    from tests.test_view import two_layer_net
    sess, feed, loss, _ = two_layer_net()
    return GraphInspector(loss.graph, session=sess, feed_dict=feed, output=loss, **options)


def test_static_inspector_hides_gradient_nodes_of_a_big_graph_and_collapses_scopes():
    inspector = static_inspector()
    view = inspector.view
    assert len(view.nodes) > 40 and not inspector.show_gradients.value
    assert len(inspector.nodes.x) == len(view.nodes) - sum(n.gradient_node for n in view.nodes)
    assert "layer1" in inspector.collapse.options
    inspector.collapse.value = ("GradientDescent", "layer1")
    assert view.collapsed == {"GradientDescent", "layer1"}
    assert "scope:layer1" in inspector.scene.shown and len(inspector.nodes.x) == 11
    texts = [t for t in inspector.nodes.text if "layer1 ▸" in t]
    assert texts == ["<b>layer1 ▸</b><br>5 nodes"]
    links = {(s, t) for s, t, _ in inspector.scene.links}
    assert ("scope:layer1", view.node("layer2/MatMul").id) in links       # edges rerouted
    inspector.select("scope:layer1")                 # a click on the box opens it again
    assert view.collapsed == {"GradientDescent"} and inspector.collapse.value == (
        "GradientDescent",)
    inspector.expand_all.click()
    assert view.collapsed == set() and inspector.collapse.value == ()
    inspector.show_gradients.value = True
    assert len(inspector.nodes.x) == len(view.nodes)


def test_view_choices_made_in_code_reach_the_widget():
    inspector = static_inspector(collapsed=["loss"], gradient_nodes=True)
    assert inspector.collapse.value == ("loss",) and inspector.show_gradients.value
    inspector.view.collapse("layer2").show_gradient_nodes(False)
    assert inspector.collapse.value == ("layer2", "loss")
    assert not inspector.show_gradients.value
    assert "scope:layer2" in inspector.scene.shown


def test_static_layout_is_deterministic_and_control_edges_are_drawn():
    first, second = static_inspector(gradient_nodes=True), static_inspector(gradient_nodes=True)
    assert first.scene.position == second.scene.position
    assert first.scene.control_links                    # update runs after the assigns
    assert len(first.figure.data[0].x) == 3 * len(first.scene.control_links)
    update = first.view.node("GradientDescent/update").id
    before = [s for s, t in first.scene.control_links if t == update]
    assert len(before) == 4 and all(first.scene.position[update][0] >
                                    first.scene.position[s][0] for s in before)


def test_static_detail_and_click_and_not_run_nodes():
    inspector = static_inspector()
    relu = inspector.view.node("layer1/Relu")

    class Points:
        point_inds = [inspector.scene.shown.index(relu.id)]
    inspector._on_click(inspector.nodes, Points(), None)
    assert "Relu" in inspector.detail.value and "graph name layer1/Relu" in inspector.detail.value
    assert "relu routes" in inspector.detail.value
    inspector.select("GradientDescent/Assign")
    assert "not run: it writes a variable" in inspector.detail.value


def test_static_slider_recomputes_through_the_session():
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, (), name="x")
        w = eg.placeholder(eg.float32, (), name="w")
        b = eg.placeholder(eg.float32, (), name="b")
        with eg.name_scope("f"):
            out = (w * x + b) ** 2
    sess = eg.Session(graph=graph)
    inspector = GraphInspector(out, session=sess, feed_dict={x: 2.0, w: -1.0, b: 3.0})
    assert [s.description for s in inspector.sliders] == ["x", "w", "b"]
    inspector.sliders[1].value = 0.5                 # w: s = 0.5·2 + 3 = 4, f = 16
    assert inspector.view.node(inspector.view.output).value == 16
    assert inspector.view.node("w").grad == 2 * 4 * 2
    assert any("= 16" in t for t in inspector.nodes.text)
    assert repr(inspector) == inspector.view.to_text()


def test_traced_function_inspector_before_and_after():
    @eg.function
    def f(x, w, b):
        return (w * x + b) ** 2
    args = (np.float32(2.0), np.float32(-1.0), np.float32(3.0))
    before = GraphInspector(f, args=args)
    after = GraphInspector(f.get_concrete_function(*args), args=args, optimized=True)
    assert len(before.nodes.x) == 6 and len(after.nodes.x) == 4
    assert any("fused Mul·Add·Square" in t for t in after.nodes.text)
    after.sliders[1].value = 0.5
    assert after.view.node(after.view.output).value == 16


def test_static_inspector_errors_explain():
    from tests.test_view import two_layer_net
    sess, feed, loss, _ = two_layer_net()
    with pytest.raises(ValueError, match="session=sess"):
        GraphInspector(loss)
    with pytest.raises(TypeError, match="args="):
        GraphInspector(loss, session=sess, feed_dict=feed, x=1.0)
