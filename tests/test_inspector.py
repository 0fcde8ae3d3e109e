"""The inspector without a browser: layout, the scene drawn per step, the widget's reactions."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.view import graph_view
from widgets.inspector import GraphInspector
from widgets.inspector import colours
from widgets.inspector.detail import heatmap, node_detail
from widgets.inspector.layout import crossings, layered_layout, spread
from widgets.inspector.scene import MARKER, NOTE_PX, Scene
from widgets.inspector.widget import MAX_BOXES
from widgets.measure import text_width
from tests.svg_picture import Drawn


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


def lesson3_view(collapsed=("gradients",)):
    """Lesson 3's dense layer, its loss, minimize's gradients and update (issue 26's tangle)."""
    from bench.bench_inspector import lesson3_graph
    graph = lesson3_graph()
    view = graph_view(graph["target"], session=graph["session"],
                      feed_dict=graph["feed_dict"], output=graph["output"])
    return view.collapse(*collapsed) if collapsed else view


def overlaps(rectangles):
    """Pairs of (name, (x0, y0, x1, y1)) whose rectangles overlap."""
    found = []
    for i, (a, (ax0, ay0, ax1, ay1)) in enumerate(rectangles):
        for b, (bx0, by0, bx1, by1) in rectangles[i + 1:]:
            if min(ax1, bx1) > max(ax0, bx0) and min(ay1, by1) > max(ay0, by0):
                found.append((a, b))
    return found


def markers(scene, frame):
    """The rectangle of every node's marker, named after the node."""
    found = []
    for b in frame.boxes:
        if b.kind in MARKER:
            x, y = scene.position[b.id]
            r = MARKER[b.kind] / 2
            found.append((f"marker {b.label}", (x - r, y - r, x + r, y + r)))
    return found


# ----------------------------------------------------------------------------- layout
def test_layout_puts_every_op_right_of_its_inputs_and_leaves_next_to_their_consumer():
    boxes = {n: (30, 30) for n in "abcde"}
    links = [("a", "c", (60, 40)), ("b", "c", (60, 40)), ("c", "e", (60, 40)),
             ("d", "e", (60, 40))]
    placed = layered_layout(boxes, links)
    x = {n: p[0] for n, p in placed.boxes.items()}
    for s, t, _ in links:
        assert x[s] < x[t]
    assert x["d"] > x["b"]                  # d is only read by e: it stands beside e
    for route, (s, t, size) in zip(placed.routes, links):
        assert route.points[0] == placed.boxes[s]
        assert route.points[-1][0] == x[t] and abs(route.points[-1][1] - placed.boxes[t][1]) <= 12
        assert x[s] < route.label[0] < x[t]     # the label sits on the wire, between them
        assert route.points[1][1] == route.points[0][1]      # it leaves and enters level,
        assert route.points[-2][1] == route.points[-1][1]    # clear of the words by a node
    into_c = [r.points[-1][1] for r, (_, t, _) in zip(placed.routes, links) if t == "c"]
    assert into_c[0] != into_c[1]                  # side by side: two arrowheads, not one


def test_layout_keeps_every_box_and_label_clear_of_the_others():
    boxes = {n: (20 + 10 * i, 20 + 7 * i) for i, n in enumerate("abcdefg")}
    links = [("a", "d", (90, 44)), ("b", "d", (70, 44)), ("c", "d", (50, 44)),
             ("a", "g", (80, 44)), ("d", "e", (60, 44)), ("e", "g", (60, 44)),
             ("f", "g", (60, 44)), ("g", None, (60, 44))]
    placed = layered_layout(boxes, links)
    rectangles = [(n, (x - boxes[n][0] / 2, y - boxes[n][1] / 2, x + boxes[n][0] / 2,
                       y + boxes[n][1] / 2)) for n, (x, y) in placed.boxes.items()]
    rectangles += [(f"label {i}", (r.label[0] - s[0] / 2, r.label[1] - s[1] / 2,
                                   r.label[0] + s[0] / 2, r.label[1] + s[1] / 2))
                   for i, (r, (_, _, s)) in enumerate(zip(placed.routes, links))]
    assert overlaps(rectangles) == []
    assert all(0 <= x0 and x1 <= placed.width and 0 <= y0 and y1 <= placed.height
               for _, (x0, y0, x1, y1) in rectangles)
    assert placed.routes[-1].points[-1][0] > placed.boxes["g"][0]    # the output's wire


def test_spread_is_the_closest_placement_that_keeps_the_gaps():
    assert spread([0, 0, 0], [10, 10]) == [-10, 0, 10]           # centred on the wish
    assert spread([0, 50, 20], [10, 10]) == [0, 30, 40]          # 50 and 20 pooled
    assert spread([5, 6], [10], lower=20) == [20, 30]


def test_ordering_sweeps_remove_crossings():
    boxes = {n: (20, 20) for n in ["a", "b", "c", "x", "y", "z"]}
    links = [("a", "z", None), ("b", "y", None), ("c", "x", None)]   # given order crosses
    assert layered_layout(boxes, links, sweeps=0).boxes["a"][1] < \
        layered_layout(boxes, links, sweeps=0).boxes["c"][1]
    placed = layered_layout(boxes, links)
    order = sorted(boxes, key=lambda n: placed.boxes[n][1])
    assert order.index("a") < order.index("c") and order.index("z") < order.index("x")
    assert crossings([["a", "b"], ["x", "y"]], {"a": ["y"], "b": ["x"]}) == 1


def test_layout_is_deterministic():
    first = Scene(graph_view(chain_graph()).frame())
    second = Scene(graph_view(chain_graph()).frame())
    assert first.position == second.position and first.routes == second.routes


def test_gradient_nodes_are_put_aside_below_the_forward_graph():
    view = lesson3_view(collapsed=())
    scene = Scene(view.frame())
    forward = [scene.position[n.id][1] for n in view.nodes if not n.gradient_node]
    backward = [scene.position[n.id][1] for n in view.nodes if n.gradient_node]
    assert min(backward) > max(forward)


# ----------------------------------------------------------------------------- scene
def test_no_two_labels_overlap_in_lesson_3s_graph():
    """Issue 26: labels were drawn on top of each other ("μ=0.0006402μ=-0.0006402")."""
    for collapsed in (("gradients",), ()):
        view = lesson3_view(collapsed)
        for step in (None, 3, len(view.nodes) + 2):
            frame = view.frame(step=step)
            scene = Scene(view.frame())
            labels = scene.label_boxes(frame)
            assert len(labels) > 40
            assert overlaps(labels) == []
            signs = {b.symbol for b in frame.boxes if b.symbol}
            words = [(text, box) for text, box in labels        # (a sign sits in its circle)
                     if text not in signs]
            assert [pair for pair in overlaps(words + markers(scene, frame))
                    if "marker" in pair[0] + pair[1]] == []
            assert "mean" in signs and all(x1 - x0 <= MARKER["op"] - 6 for text, (x0, _, x1, _)
                                           in labels if text in signs)


def test_the_picture_is_the_lectures_circuit():
    """Values above the wires, gradients below, the op's sign in its circle, gate words."""
    view = f_view()
    frame = view.frame()
    scene = Scene(frame)
    texts = {}
    for trace, x, y, text, px in scene.texts(frame):
        texts.setdefault(trace, []).append((x, y, text, px))
    assert {t for _, _, t, _ in texts["symbols"]} == {"<b>×</b>", "<b>+</b>", "<b>x²</b>"}
    assert {t for _, _, t, _ in texts["gates"]} == {"<i>switches</i>", "<i>distributes</i>"}
    values = {t: y for _, y, t, _ in texts["values"]}
    grads = {t: y for _, y, t, _ in texts["grads"]}
    assert values["-1"] < grads["∇ 4"]               # w's wire: value above, gradient below
    sizes = {px for trace in ("values", "grads") for *_, px in texts[trace]}
    others = {px for trace in ("names", "gates") for *_, px in texts[trace]}
    assert min(sizes) > max(others)                  # the largest words on a wire
    drawn = Drawn(scene.svg(frame, "light"))
    arrows = drawn.elements("polygon", "arrow")
    assert len(arrows) == len(frame.wires)           # one arrowhead per wire, pointing right
    for arrow in arrows:
        (tip_x, _), *back = [map(float, p.split(",")) for p in arrow.get("points").split()]
        assert all(tip_x > x for x, _ in back)
    assert sorted(drawn.texts("values")) == sorted(t for *_, t, _ in texts["values"])


def test_wires_and_nodes_are_coloured_on_a_stated_symmetric_scale():
    view = f_view()
    frame = view.frame()
    assert frame.scale.limit == 10 and frame.scale.boundaries()[0] == 0.001
    levels = {b.label: b.level for b in frame.boxes}
    assert levels["w"] == 4 and levels["x"] == -4        # ∇ 4 and ∇ -2: same size, signs
    drawn = Drawn(Scene(frame).svg(frame, "light"))
    nodes = drawn.nodes()
    assert nodes[view.node("w").id][0].get("fill") == colours.SHADES[8]
    assert nodes[view.node("x").id][0].get("fill") == colours.SHADES[0]
    wire_colours = {stroke for d, stroke in drawn.paths("wires") if d}
    assert {colours.SHADES[8], colours.SHADES[0]} <= wire_colours
    assert colours.ink_on(4) == "#ffffff" and colours.ink_on(0) == "#000000"


def test_step_frames_show_what_is_known_and_the_rule_on_the_active_wires():
    view = f_view()
    scene = Scene(view.frame())
    steps = view.steps()
    mul_forward = next(i for i, s in enumerate(steps) if s["node"] == view.node("mul").id)
    frame = view.frame(step=mul_forward)
    assert frame.active == view.node("mul").id
    assert frame.caption == "forward 3/6: mul(w, x) = -2"
    assert sum(w.active for w in frame.wires) == 2          # its two input wires lit
    assert all(not w.grad for w in frame.wires)              # no gradient going forward
    square_in = next(w for w in frame.wires if w.target == view.output)
    assert square_in.value == ""                             # add not computed yet
    drawn = Drawn(scene.svg(frame, "light"))
    assert [stroke for *_, stroke in drawn.rings()] == [colours.THEMES["light"]["active"]]
    assert drawn.texts("rules") == []                       # no rule going forward

    first_back = view.frame(step=len(view.nodes))
    assert first_back.caption == "backward 1/6: start at square with gradient 1"
    mul_back = view.frame(step=len(view.nodes) + 3)
    assert mul_back.caption.startswith("backward 4/6: mul (switches) sends ∇ 2")
    assert "each input receives the upstream gradient times the other input" in \
        mul_back.caption
    rules = Drawn(scene.svg(mul_back, "light")).text_elements("rules")
    assert [t.text for t in rules] == ["2 × 2 = 4", "2 × -1 = -2"]     # on the lit wires
    assert all(t.get("font-weight") == "bold" for t in rules)
    assert overlaps(scene.label_boxes(mul_back)) == []


def test_selected_node_is_ringed():
    view = f_view()
    frame = view.frame()
    scene = Scene(frame)
    drawn = Drawn(scene.svg(frame, "dark", selected=view.node("b").id))
    (x, y, colour), = drawn.rings()
    assert colour == colours.THEMES["dark"]["selected"]
    assert (x, y) == pytest.approx(scene.position[view.node("b").id], abs=0.01)


def test_fan_out_is_labelled_sums():
    x = eg.tensor(3.0, requires_grad=True)
    view = graph_view(x * x + x, names={"x": x})
    frame = view.frame()
    box = next(b for b in frame.boxes if b.label == "x")
    assert box.gate == "sums 3" and box.note == "∇ 7 = 3 + 3 + 1"
    twice = next(w for w in frame.wires if w.target == view.node("mul").id)
    assert twice.value == "2× 3" and twice.grad == "∇ 3 + 3"     # x feeds mul twice
    gates = [text for trace, _, _, text, _ in Scene(frame).texts(frame) if trace == "gates"]
    assert "<i>sums 3</i>" in gates


def test_a_long_summed_gradient_wraps_under_its_node():
    """Lesson 9: x's "∇ 1×3×2 μ=… = 1×3×2 μ=… + … + …" was one line of 530 px, across the
    wires beside x; it now wraps before each "=" and "+" (a short sum stays one line)."""
    x = eg.tensor(np.linspace(-0.4, 0.4, 6).reshape(1, 3, 2), requires_grad=True)
    view = graph_view((eg.tanh(x) * 3.0 + eg.exp(x) + x * 2.0).mean(), names={"x": x})
    frame = view.frame()
    scene = Scene(frame)
    notes = [(text, y) for trace, _, y, text, _ in scene.texts(frame) if trace == "notes"]
    assert [text[0] for text, _ in notes] == ["∇", "=", "+", "+"]
    assert all(text_width(text, 12) <= NOTE_PX for text, _ in notes)
    assert all(y1 > y0 for (_, y0), (_, y1) in zip(notes, notes[1:]))    # one under another
    signs = {b.symbol for b in frame.boxes if b.symbol}     # (a sign sits in its circle)
    words = [(text, box) for text, box in scene.label_boxes(frame) if text not in signs]
    assert overlaps(words + markers(scene, frame)) == []
    x_box = scene.sizes[view.node("x").id]
    assert x_box[0] <= NOTE_PX + 1                      # the column stays narrow
    y = eg.tensor(3.0, requires_grad=True)
    short = graph_view(y * y + y, names={"y": y}).frame()
    assert [text for trace, *_, text, _ in Scene(short).texts(short)
            if trace == "notes"] == ["∇ 7 = 3 + 3 + 1"]


def test_collapsed_scope_stands_for_its_nodes():
    view = f_view()
    for n in view.nodes:
        if n.label in ("mul", "add"):
            n.scope = "layer1"
    view.collapse("layer1")
    frame = view.frame()
    scene = Scene(frame)
    box = next(b for b in frame.boxes if b.id == "scope:layer1")
    assert box.members == 2 and box.kind == "scope"
    assert view.node("mul").id not in scene.ids
    assert (view.node("w").id, "scope:layer1") in scene.links
    assert ("scope:layer1", view.output) in scene.links
    texts = [t for _, _, _, t, _ in scene.texts(frame)]
    assert "<b>layer1</b>" in texts and "▸ 2 nodes" in texts
    drawn = Drawn(scene.svg(frame, "light"))
    box, tooltip = drawn.nodes()["scope:layer1"]     # one rectangle, which opens on a click
    assert box.tag.endswith("rect") and "click to open" in tooltip


def test_gradient_nodes_can_be_hidden():
    view = f_view()
    view.node("square").gradient_node = True
    assert view.output not in view.show_gradient_nodes(False).shown().members
    assert view.output in view.show_gradient_nodes(True).shown().members


def test_warnings_and_gradient_check_are_marked():
    x = eg.tensor([1.0, -2.0], requires_grad=True)
    view = graph_view(eg.relu(x - 5).sum(), names={"x": x})
    frame = view.frame(check={view.node("x").id: {"ok": False}})
    relu, tooltip = Drawn(Scene(frame).svg(frame, "light")).nodes()[view.node("relu").id]
    assert relu.get("stroke-width") == "4"
    assert relu.get("stroke") == colours.WARNING
    assert "dead ReLU" in tooltip
    leaf = next(b for b in frame.boxes if b.label == "x")
    assert leaf.check == "✗ grad check"


# ----------------------------------------------------------------------------- detail panel
def test_detail_shows_the_local_rule_with_numbers():
    view = f_view()
    html = node_detail(view.frame(focus=view.node("mul").id).detail)
    assert "∂L/∂w = ∂L/∂mul × x" in html and "2 × 2 = 4" in html and "2 × -1 = -2" in html
    assert "mul switches" in html


def test_detail_follows_the_step():
    view = f_view()
    add = view.node("add").id
    early = node_detail(view.frame(step=0, focus=add).detail)
    assert "not computed yet: forward step 5 computes it" in early
    assert "not computed yet: the backward pass reaches add at step 8" in early
    assert "2 × 2" not in early and "when the backward pass reaches add" in early
    later = node_detail(view.frame(step=7, focus=add).detail)
    assert "<b>value</b>: 1" in later and "∂L/∂b = ∂L/∂add" in later


def test_detail_states_the_elementwise_rule_for_tensors():
    """Issue 26: "μ=0.0104 × μ=0.7 = μ=0.0128" read as wrong arithmetic."""
    x = eg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    w = eg.tensor([[0.5, -1.0], [2.0, 0.25]], requires_grad=True)
    view = graph_view((x * w).sum(), names={"x": x, "w": w})
    detail = view.frame(focus=view.node("mul").id).detail
    to_x, to_w = detail.rules
    assert to_x.formula == "∂L/∂x = ∂L/∂mul ⊙ w, elementwise"
    assert to_x.numbers == "2×2; mean of the result = 0.4375"     # mean of w: upstream is 1
    assert to_w.formula == "∂L/∂w = ∂L/∂mul ⊙ x, elementwise"
    html = node_detail(detail)
    assert "μ=" not in html and " × μ" not in html


def test_detail_heatmap_fits_the_panel_and_shows_every_column():
    a = eg.tensor([[1.0, -2.0, np.nan]], requires_grad=True)
    view = graph_view((a * 2).sum(), names={"a": a})
    html = node_detail(view.frame(focus=view.node("a").id).detail)
    assert "1 NaN" in html and "min -2" in html and "inspector-heatmap" in html
    ten = heatmap(np.linspace(-0.0128, 0.0131, 30).reshape(3, 10))
    assert ten.count("<td") == 30 and "data-columns='10'" in ten     # all 10 columns
    assert "title=" in ten and "hover a cell" in ten     # numbers too wide: in tooltips
    small = heatmap(np.array([[1.0, -2.0], [0.0, 3.0]]))
    assert ">-2</td>" in small and ">0</td>" in small and "title=" not in small
    zero = small[small.index(">0</td>") - 120:small.index(">0</td>")]
    assert "color:#000000" in zero                       # a 0 stays readable in any theme
    big = heatmap(np.arange(2 * 20 * 20.0).reshape(2, 20, 20))
    assert big.count("<td") == 12 * 16 and "first slice" in big
    assert "first 12 of 20 rows and 16 of 20 columns shown" in big


# ----------------------------------------------------------------------------- the widget
def drawn(inspector):
    """What the inspector's picture holds now: its synced state, which every view draws."""
    return Drawn(inspector.picture.svg)


def test_widget_state_is_its_picture_and_an_update_changes_it():
    """Issue 41: a view made after the kernel's updates (a second display, a reload) drew
    plotly's stale first state. The picture is the widget's synced state: an update is a new
    state, the picture of the new frame."""
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    picture = inspector.picture
    assert picture.trait_metadata("svg", "sync") and picture.keys.count("svg") == 1
    assert len(drawn(inspector).nodes()) == 6 and [s.description for s in inspector.sliders] \
        == ["w", "x", "b"]
    inspector.sliders[0].value = 0.5                 # w: s = 0.5·2 + 3 = 4, f = 16
    assert inspector.picture is picture
    assert "16" in drawn(inspector).texts("values")      # the output's wire carries 16
    assert inspector.view.node("w").grad == 2 * 4 * 2
    assert (drawn(inspector).width, drawn(inspector).height) == \
        (inspector.scene.width, inspector.scene.height)     # 1 unit = 1 px
    inspector.view.update(x=1.0)                     # from code, as a later cell does
    assert {"3.5", "12.25"} <= set(drawn(inspector).texts("values"))   # s = 0.5·1 + 3


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


def test_colours_stay_put_while_a_slider_moves():
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    limit = inspector.view.frame().scale.limit
    for value in (-1.2, -0.5, -0.7, -1.4):           # every |∇| stays below 10
        inspector.sliders[0].value = value
        assert inspector.view.frame().scale.limit == limit
    assert "inspector-colour-bar" in inspector.legend.value
    assert f"data-limit='{limit:g}'" in inspector.legend.value
    inspector.sliders[1].value = 90.0                    # ∇w = 2·(w·x + b)·x: > 10 000
    assert inspector.view.frame().scale.limit > limit    # a wider scale, stated again


def test_widget_click_selects_and_steps_move():
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    inspector.picture._on_message(inspector.picture, {"click": inspector.view.node("add").id},
                                  [])                   # what the browser sends on a click
    assert "<h4" in inspector.detail.value and "add" in inspector.detail.value
    inspector.step.value = 0
    assert inspector.caption.value.startswith("<b>forward 1/6")
    assert "not computed yet" in inspector.detail.value        # add, before the forward pass
    inspector.forward.click()
    assert inspector.step.value == 1
    inspector.grad_check.value = True
    assert all(r["ok"] for r in inspector.check.values())


def test_widget_repr_is_the_text_table_and_bad_calls_explain():
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    assert repr(inspector) == inspector.view.to_text()
    with pytest.raises(TypeError, match="needs the inputs' starting values"):
        GraphInspector(f)


def test_widget_of_a_bigger_net_collapses_nothing_and_builds():
    inspector = GraphInspector(chain_graph(layers=4))
    assert len(drawn(inspector).nodes()) == len(inspector.view.nodes)
    assert inspector.sliders == []
    assert inspector.summary_row.layout.display == "none"     # no summary: no note
    assert inspector.scope_row.layout.display == "none"       # no scopes: no list


def test_a_wide_picture_asks_for_the_whole_row_and_the_detail_wraps_under_it():
    """Issue 26: at 900 px the inspector was cut off and the side panels squeezed; issue 41:
    lesson 3's graph opened scrolled to its loss. The picture asks for its whole width (the
    browser shrinks it to fit the row, or shows it whole as an overview), never more, and
    marks the node the detail describes."""
    inspector = GraphInspector(chain_graph(layers=4))
    assert inspector.scene.width > 900
    assert inspector.picture.layout.flex == f"1 1 {inspector.scene.width + 2}px"
    assert inspector.picture.layout.max_width == f"{inspector.scene.width + 2}px"
    assert inspector.picture.min_scale == pytest.approx(10 / 14)     # numbers stay 10 px
    assert inspector.body.layout.flex_flow == "row wrap"        # the detail wraps below
    assert inspector.detail.layout.min_width == "300px"        # ... rather than shrink
    output = inspector.view.output
    assert inspector.picture.focus == pytest.approx(inspector.scene.position[output])
    inspector.select(inspector.view.nodes[0].id)
    assert inspector.picture.focus == pytest.approx(
        inspector.scene.position[inspector.view.nodes[0].id])


def test_figures_follow_the_notebook_theme():
    inspector = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    light = drawn(inspector)
    assert light.text_elements("names")[0].get("fill") == colours.THEMES["light"]["text"]
    inspector.picture.dark = True                   # what the browser reports in a dark theme
    dark = drawn(inspector)
    assert dark.text_elements("names")[0].get("fill") == colours.THEMES["dark"]["text"]
    assert dark.text_elements("values")[0].get("fill") == colours.THEMES["dark"]["value"]
    assert dark.root.get("style") is None           # no background: the notebook's own


def test_a_big_graph_is_summarised_and_opens_part_by_part():
    """Issue 26: 20 000 nodes built a 10.9 MB figure; above a stated size, a summary."""
    inspector = GraphInspector(chain_graph(layers=40))
    view = inspector.view
    assert len(view.nodes) > MAX_BOXES
    boxes = inspector.scene.ids
    assert len(boxes) <= 40 and all(b.startswith("part:") for b in boxes[:-1])
    assert f"{len(view.nodes)} nodes, too many to read at once (more than {MAX_BOXES} " \
        "boxes)" in inspector.summary_note.value                # it says so, and why
    assert inspector.summary_row.layout.display == "flex"
    assert inspector.back_to_summary.layout.display == "none"
    inspector.select(boxes[0])                       # a click on a part opens it
    assert boxes[0] in view.opened_parts
    assert len(inspector.scene.ids) > len(boxes) and boxes[0] not in inspector.scene.ids
    inspector.back_to_summary.click()
    assert inspector.scene.ids == boxes and not view.opened_parts
    assert len(GraphInspector(chain_graph(layers=40), summary=False).scene.ids) == \
        len(view.nodes)


# ----------------------------------------------------------------------------- static graphs
def static_inspector(**options):
    from tests.test_view import two_layer_net
    sess, feed, loss, _ = two_layer_net()
    return GraphInspector(loss.graph, session=sess, feed_dict=feed, output=loss, **options)


def test_static_inspector_hides_gradient_nodes_of_a_big_graph_and_collapses_scopes():
    inspector = static_inspector()
    view = inspector.view
    assert len(view.nodes) > 40 and not inspector.show_gradients.value
    assert len(drawn(inspector).nodes()) == \
        len(view.nodes) - sum(n.gradient_node for n in view.nodes)
    assert "layer1" in inspector.collapse.options
    inspector.collapse.value = ("GradientDescent", "layer1")
    assert view.collapsed == {"GradientDescent", "layer1"}
    assert "scope:layer1" in inspector.scene.ids and len(drawn(inspector).nodes()) == 11
    assert "layer1" in drawn(inspector).texts("titles")
    assert "▸ 5 nodes" in drawn(inspector).texts("names")
    assert ("scope:layer1", view.node("layer2/MatMul").id) in inspector.scene.links
    inspector.select("scope:layer1")                 # a click on the box opens it again
    assert view.collapsed == {"GradientDescent"} and inspector.collapse.value == (
        "GradientDescent",)
    inspector.expand_all.click()
    assert view.collapsed == set() and inspector.collapse.value == ()
    inspector.show_gradients.value = True
    assert len(drawn(inspector).nodes()) == len(view.nodes)


def test_view_choices_made_in_code_reach_the_widget():
    inspector = static_inspector(collapsed=["loss"], gradient_nodes=True)
    assert inspector.collapse.value == ("loss",) and inspector.show_gradients.value
    inspector.view.collapse("layer2").show_gradient_nodes(False)
    assert inspector.collapse.value == ("layer2", "loss")
    assert not inspector.show_gradients.value
    assert "scope:layer2" in inspector.scene.ids


def test_static_layout_is_deterministic_and_control_edges_are_drawn():
    first, second = static_inspector(gradient_nodes=True), static_inspector(gradient_nodes=True)
    assert first.scene.position == second.scene.position
    assert first.scene.control_links                    # update runs after the assigns
    (control, _), = drawn(first).paths("control")
    assert control.count("M") == len(first.scene.control_links)     # a dotted line each
    update = first.view.node("GradientDescent/update").id
    before = [s for s, t in first.scene.control_links if t == update]
    assert len(before) == 4 and all(first.scene.position[update][0] >
                                    first.scene.position[s][0] for s in before)


def test_static_detail_and_click_and_not_run_nodes():
    inspector = static_inspector()
    relu = inspector.view.node("layer1/Relu")
    inspector.picture._on_message(inspector.picture, {"click": relu.id}, [])
    assert "Relu" in inspector.detail.value and "graph name layer1/Relu" in inspector.detail.value
    assert "relu routes" in inspector.detail.value
    assert "1[Add &gt; 0]" in inspector.detail.value      # relu's local gradient, in symbols
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
    assert "16" in drawn(inspector).texts("values")
    assert repr(inspector) == inspector.view.to_text()


def test_traced_function_inspector_before_and_after():
    @eg.function
    def f(x, w, b):
        return (w * x + b) ** 2
    args = (np.float32(2.0), np.float32(-1.0), np.float32(3.0))
    before = GraphInspector(f, args=args)
    after = GraphInspector(f.get_concrete_function(*args), args=args, optimized=True)
    assert len(drawn(before).nodes()) == 6 and len(drawn(after).nodes()) == 4
    assert "fused Mul·Add·Square" in drawn(after).texts("notes")
    after.sliders[1].value = 0.5
    assert after.view.node(after.view.output).value == 16


def test_static_inspector_errors_explain():
    from tests.test_view import two_layer_net
    sess, feed, loss, _ = two_layer_net()
    with pytest.raises(ValueError, match="session=sess"):
        GraphInspector(loss)
    with pytest.raises(TypeError, match="args="):
        GraphInspector(loss, session=sess, feed_dict=feed, x=1.0)


def test_an_update_stays_right_of_the_loss_it_reads_through_hidden_gradients():
    inspector = static_inspector(collapsed=["GradientDescent"])
    position = inspector.scene.position
    loss = inspector.view.node("loss/Mean").id
    assert position["scope:GradientDescent"][0] > position[loss][0]
