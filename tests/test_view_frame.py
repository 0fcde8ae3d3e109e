"""One frame per step (edugraph/view/frame.py): what the picture shows, in plain data."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.view import graph_view
from edugraph.view.frame import ColourScale
from edugraph.view.rules import GATES, symbol
from tests.test_view import f_view, two_layer_net


def test_the_package_keeps_its_names():
    from edugraph.view import Edge, GraphView, Node, number, shape_text, short  # noqa: F401
    import edugraph.view
    assert eg.graph_view is edugraph.view.graph_view and eg.GraphView is GraphView


def test_a_frame_is_plain_data_for_the_whole_picture():
    view = f_view()
    frame = view.frame()
    assert frame.phase == "result" and frame.step is None and frame.active is None
    boxes = {b.label: b for b in frame.boxes}
    assert [b.id for b in frame.boxes] == [n.id for n in view.nodes]
    assert (boxes["mul"].symbol, boxes["add"].symbol, boxes["square"].symbol) == \
        ("×", "+", "x²")
    assert boxes["mul"].gate == "switches" and boxes["mul"].gate_note.startswith("mul switches")
    assert boxes["w"].value == -1 and boxes["w"].grad == 4
    wires = {(view.node(w.source).label, w.target and view.node(w.target).label): w
             for w in frame.wires}
    assert (wires["w", "mul"].value, wires["w", "mul"].grad) == ("-1", "∇ 4")
    assert (wires["square", None].value, wires["square", None].grad) == ("1", "∇ 1")
    assert frame.output == view.output and frame.detail.label == "square"


def test_every_gate_word_is_explained_and_every_op_has_a_sign():
    assert set(GATES) == {"distributes", "switches", "routes", "copies"}
    assert symbol("mul") == "×" and symbol("maximum") == "max" and symbol("square") == "x²"
    assert symbol("exp") == "eˣ" and symbol("conv2d") == "ƒ" and symbol("cos") == "cos"


def test_a_forward_step_knows_only_what_is_computed():
    view = f_view()
    frame = view.frame(step=2)                               # mul, the third node
    boxes = {b.label: b for b in frame.boxes}
    assert boxes["mul"].value == -2 and boxes["add"].value is None
    assert all(b.grad is None for b in frame.boxes)
    assert frame.detail.label == "mul" and frame.detail.grad is None
    assert frame.detail.grad_note.startswith("not computed yet")
    assert frame.detail.rules == [] and "reaches mul" in frame.detail.rules_note


def test_a_backward_step_writes_its_rule_on_its_wires():
    view = f_view()
    walk = view.steps()
    step = next(i for i, s in enumerate(walk)
                if s["phase"] == "backward" and s["node"] == view.node("add").id)
    frame = view.frame(step=step)
    lit = [w for w in frame.wires if w.active]
    assert [view.node(w.source).label for w in lit] == ["mul", "b"]
    assert [w.rule for w in lit] == ["2 × 1 = 2", "2 × 1 = 2"]
    assert [(r.formula, r.numbers) for r in frame.detail.rules] == [
        ("∂L/∂mul = ∂L/∂add", "2 × 1 = 2"), ("∂L/∂b = ∂L/∂add", "2 × 1 = 2")]
    assert "add distributes" in frame.caption
    boxes = {b.label: b for b in frame.boxes}
    assert boxes["add"].grad == 2 and boxes["mul"].grad is None      # not reached yet


def test_rules_of_tensors_are_elementwise_with_a_mean_never_a_product_of_means():
    rng = np.random.default_rng(0)
    x = eg.tensor(rng.normal(size=(3, 4)), requires_grad=True)
    b = eg.tensor(rng.normal(size=(4,)), requires_grad=True)
    w = eg.tensor(rng.normal(size=(4, 2)), requires_grad=True)
    view = graph_view(eg.tanh(x * b) @ w, names={"x": x, "b": b, "w": w})
    rules = {r.source: r for n in ("mul", "tanh", "matmul")
             for r in view.frame(focus=view.node(n).id).detail.rules}
    assert rules["x"].formula == "∂L/∂x = ∂L/∂mul ⊙ b, elementwise"
    assert rules["b"].formula == ("∂L/∂b = ∂L/∂mul ⊙ x, elementwise; summed over axes (0,) "
                                  "back to b's shape")
    share = view.inputs_of("mul")[1].grad
    assert rules["b"].numbers == f"4; mean of the result = {float(share.mean()):.4g}"
    assert rules["mul"].formula == "∂L/∂mul = ∂L/∂tanh ⊙ 1 − tanh², elementwise"
    assert rules["tanh"].formula == "∂L/∂tanh = 1 · wᵀ"          # L is the matmul itself
    assert rules["w"].formula == "∂L/∂w = tanhᵀ · 1"
    assert not any("μ" in r.numbers for r in rules.values())
    on_wires = [w.rule for w in view.frame().wires]
    assert on_wires == ["∇ ⊙ b", "∇ ⊙ x, then Σ", "∇ ⊙ (1 − tanh²)", "∇ · wᵀ", "tanhᵀ · ∇", ""]


def test_scalar_rules_multiply_out():
    a, b = eg.tensor(3.0, requires_grad=True), eg.tensor(5.0, requires_grad=True)
    view = graph_view(eg.maximum(a, b) * 4, names={"a": a, "b": b})
    rules = view.frame(focus=view.node("maximum").id).detail.rules
    assert [(r.formula, r.numbers) for r in rules] == [
        ("∂L/∂a = ∂L/∂maximum × 1[a ≥ b]", "4 × 0 = 0"),
        ("∂L/∂b = ∂L/∂maximum × 1[b > a]", "4 × 1 = 4")]


def test_the_colour_scale_is_symmetric_logarithmic_and_stated():
    scale = ColourScale("gradient", 10.0)
    assert scale.boundaries() == pytest.approx([0.001, 0.01, 0.1, 1, 10])
    assert [scale.level(x) for x in (0.0, 5e-4, 0.002, 0.05, -0.5, 3.0, -10.0, None)] == \
        [0, 0, 1, 2, -3, 4, -4, None]
    assert ColourScale.fitting("value", [0.3, -4.0, None]).limit == 10
    assert ColourScale.fitting("value", [0.0]).limit == 1
    assert "one shade per power of ten up to ±10" in scale.describe()


def test_the_colour_scale_stays_while_the_numbers_fit_and_widens_when_not():
    view = f_view()
    first = view.colour_scale("gradient")
    view.update(w=-0.5)                         # ∇w = 2·(w·x + b)·x = 8: still below 10
    assert view.colour_scale("gradient") is first
    view.update(w=10.0)                         # ∇x = 2·(w·x + b)·w = 460
    assert view.colour_scale("gradient").limit == 1000
    view.update(w=-1.0)                         # back: the wider scale stays, colours too
    assert view.colour_scale("gradient").limit == 1000


def test_collapsed_scopes_are_boxes_with_links_to_them():
    sess, feed, loss, _ = two_layer_net()
    view = graph_view(loss.graph, session=sess, feed_dict=feed, output=loss)
    view.show_gradient_nodes(False).collapse("layer1")
    frame = view.frame()
    box = next(b for b in frame.boxes if b.id == "scope:layer1")
    assert box.kind == "scope" and box.members == 5 and "click to open" in box.hover
    group = [w for w in frame.wires if w.kind == "group"]
    assert any(w.source == "scope:layer1" for w in group)
    assert all(w.value == "" for w in group)


def test_a_big_graph_is_summarised_by_scope_then_by_parts():
    graph = eg.Graph()
    with graph.as_default():
        h = x = eg.placeholder(eg.float32, (2,), name="x")
        for i in range(300):
            with eg.name_scope(f"layer{i}"):
                h = eg.tanh(h * 0.5 + 0.1)
        loss = eg.reduce_sum(h)
    sess = eg.Session(graph=graph)
    view = graph_view(loss, session=sess, feed_dict={x: np.ones(2, np.float32)})
    text = view.to_text()
    assert not view.summarise(len(view.nodes))          # small enough: nothing changes
    assert view.summarise(100)
    assert view.collapsed == {f"layer{i}" for i in range(300)}
    shown = view.shown()
    assert len(shown.members) <= 40
    top = [b for b in shown.order if b.startswith("part:")]
    assert len(top) == len(shown.order)                 # every box is a part
    assert view.part_labels[top[0]].startswith("x … layer")
    view.open_part(top[0])
    inside = view.shown()
    assert top[0] not in inside.members and len(inside.members) > len(shown.members)
    assert "part:" not in view.to_text() and text != view.to_text()   # scopes, not parts
    with pytest.raises(KeyError, match="No part"):
        view.open_part("part:9999-10000")


def test_a_mean_says_how_many_elements_share_its_gradient():
    x = eg.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    view = graph_view(eg.reduce_mean(x * x), names={"x": x})
    (rule,) = view.frame(focus=view.node("mean").id).detail.rules
    assert rule.formula == "∂L/∂mul = 1 / n copied to every averaged element, n = 6"
    assert rule.numbers == "2×3; mean of the result = 0.1667"


def test_a_frame_carries_the_state_its_controls_show():
    """Issue 26: the widget reads one frame, never the view; its controls show the frame."""
    view = f_view()
    frame = view.frame()
    assert [(i.label, i.value) for i in frame.inputs] == [("w", -1.0), ("x", 2.0), ("b", 3.0)]
    assert frame.steps == len(view.steps()) == 12 and frame.scopes == []
    assert not frame.gradient_nodes
    view.update(w=0.5)
    assert [i.value for i in view.frame().inputs] == [0.5, 2.0, 3.0]

    sess, feed, loss, _ = two_layer_net()
    view = graph_view(loss.graph, session=sess, feed_dict=feed, output=loss)
    frame = view.frame()
    assert frame.gradient_nodes and frame.gradient_nodes_shown and frame.collapsed == []
    assert {"layer1", "layer2", "loss", "gradients"} <= set(frame.scopes)
    seen = []
    view.display_listeners.append(lambda v: seen.append(v.frame().collapsed))
    view.set_display(["layer1", "loss"], gradient_nodes=False)
    frame = view.frame()
    assert frame.collapsed == ["layer1", "loss"] and not frame.gradient_nodes_shown
    assert "gradients" not in frame.scopes                  # hidden with its nodes
    assert seen == [["layer1", "loss"]]                     # one change, one redraw
    with pytest.raises(KeyError, match="not on screen; the scopes offered are"):
        view.set_display(["gradients"], gradient_nodes=False)
