"""The graph view: structure, values, gradients per node and per edge, steps, gradient check."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.ops.base import Op, apply
from edugraph.view import graph_view, short, summed_axes


def f_view(x=2.0, w=-1.0, b=3.0, device="cpu:0"):
    """f = (w·x + b)², the lecture's first graph."""
    x, w, b = (eg.tensor(v, requires_grad=True, device=device) for v in (x, w, b))
    return graph_view((w * x + b) ** 2, names={"x": x, "w": w, "b": b})


def test_scalar_graph_values_and_gradients(device):
    view = f_view(device=device)
    # by hand: s = w·x + b = 1, f = s² = 1, df/ds = 2s = 2, df/dw = 2s·x, df/dx = 2s·w
    assert [n.label for n in view.nodes] == ["w", "x", "mul", "b", "add", "square"]
    expected = {"w": (-1, 4), "x": (2, -2), "mul": (-2, 2), "b": (3, 2), "add": (1, 2),
                "square": (1, 1)}
    for label, (value, grad) in expected.items():
        node = view.node(label)
        assert node.value == value and node.grad == grad, label
        assert node.device == device and node.shape == ()
    assert view.node("square").id == view.output


def test_gate_patterns_on_edges():
    view = f_view()
    add, mul = view.node("add"), view.node("mul")
    assert (add.gate, mul.gate) == ("distributes", "switches")
    # add distributes: both inputs receive the upstream gradient unchanged
    assert [e.grad for e in view.inputs_of("add")] == [add.grad, add.grad]
    # mul switches: w receives upstream·x, x receives upstream·w
    to_w, to_x = view.inputs_of("mul")
    assert to_w.grad == mul.grad * 2 and to_x.grad == mul.grad * -1
    assert to_w.local == 2 and to_x.local == -1 and to_w.upstream == mul.grad


def test_max_routes_loser_gets_zero():
    a, b = eg.tensor(3.0, requires_grad=True), eg.tensor(5.0, requires_grad=True)
    view = graph_view(eg.maximum(a, b) * 4, names={"a": a, "b": b})
    assert view.node("maximum").gate == "routes"
    to_a, to_b = view.inputs_of("maximum")
    assert to_a.grad == 0 and to_b.grad == 4
    assert view.node("a").grad == 0 and view.node("b").grad == 4


def test_fan_out_sums_the_branches():
    x = eg.tensor(3.0, requires_grad=True)
    view = graph_view(x * x + x, names={"x": x})
    node = view.node("x")
    shares = [e.grad for e in view.consumers_of("x")]
    assert node.sums == 3 and len(shares) == 3
    assert node.grad == sum(shares) == 2 * 3 + 1
    assert "sums 3" in view.to_text()


def test_broadcast_edges_show_the_summed_axes():
    a = eg.tensor([[1., -2., 3.]], requires_grad=True)
    c = eg.tensor([[1.], [2.]], requires_grad=True)
    view = graph_view((a * c).sum(), names={"a": a, "c": c})
    to_a, to_c = view.inputs_of("mul")
    assert to_a.summed_axes == (0,) and to_c.summed_axes == (1,)
    np.testing.assert_allclose(to_a.grad, [[3., 3., 3.]])
    np.testing.assert_allclose(to_c.grad, [[2.], [2.]])
    assert summed_axes((4, 2, 3), (2, 1)) == (0, 2)
    assert "summed over axes (0,)" in view.to_text()


def random_net(rng, dtype="float64", device="cpu:0"):
    x = eg.tensor(rng.normal(size=(4, 3)), dtype=dtype, device=device)
    w1 = eg.tensor(rng.normal(size=(3, 5)), dtype=dtype, device=device, requires_grad=True)
    b1 = eg.tensor(rng.normal(size=(5,)), dtype=dtype, device=device, requires_grad=True)
    w2 = eg.tensor(rng.normal(size=(5, 2)), dtype=dtype, device=device, requires_grad=True)
    h = eg.relu(x @ w1 + b1)
    logits = eg.maximum(h @ w2, eg.tanh(h[:, :2]))
    loss = (logits.log_softmax() * -1).mean() + (w1 * w1).sum() * 0.01
    return loss, {"x": x, "w1": w1, "b1": b1, "w2": w2}


def test_node_gradients_match_the_engine(device):
    loss, leaves = random_net(np.random.default_rng(1), device=device)
    view = graph_view(loss, names=leaves)
    wanted = [leaves[k] for k in ("w1", "b1", "w2")]
    for name, engine in zip(("w1", "b1", "w2"), eg.grad(loss, wanted)):
        np.testing.assert_allclose(view.node(name).grad, engine.numpy(), rtol=1e-12)
    assert view.node("x").grad is None            # a constant input gets no gradient


def test_node_gradients_match_torch():
    torch = pytest.importorskip("torch")
    loss, leaves = random_net(np.random.default_rng(2))
    view = graph_view(loss, names=leaves)
    t = {k: torch.tensor(v.numpy(), requires_grad=k != "x") for k, v in leaves.items()}
    h = torch.relu(t["x"] @ t["w1"] + t["b1"])
    logits = torch.maximum(h @ t["w2"], torch.tanh(h[:, :2]))
    (-(logits.log_softmax(-1)).mean() + (t["w1"] ** 2).sum() * 0.01).backward()
    for name in ("w1", "b1", "w2"):
        np.testing.assert_allclose(view.node(name).grad, t[name].grad.numpy(), rtol=1e-10)


def test_ids_are_stable_and_topological():
    first = graph_view(random_net(np.random.default_rng(3))[0])
    second = graph_view(random_net(np.random.default_rng(3))[0])
    assert first.to_text() == second.to_text()
    assert [(n.id, n.label, n.inputs) for n in first.nodes] == \
        [(n.id, n.label, n.inputs) for n in second.nodes]
    position = {n.id: i for i, n in enumerate(first.nodes)}
    for n in first.nodes:
        assert all(position[i] < position[n.id] for i in n.inputs)


def test_steps_walk_forward_then_backward_from_the_output():
    view = f_view()
    steps = view.steps()
    forward = [s for s in steps if s["phase"] == "forward"]
    backward = [s for s in steps if s["phase"] == "backward"]
    assert [s["node"] for s in forward] == [n.id for n in view.nodes]
    assert backward[0]["node"] == view.output
    mul = view.node("mul")
    mul_back = next(s for s in backward if s["node"] == mul.id)
    assert mul_back["edges"] == [e.id for e in view.inputs_of("mul")]
    # the output's backward step comes before its inputs'
    order = [s["node"] for s in backward]
    assert order.index(view.node("add").id) < order.index(mul.id)
    values, grads = view.known_at(len(forward) - 1)
    assert values == {n.id for n in view.nodes} and grads == set()
    values, grads = view.known_at(len(forward))
    assert grads == {view.output}


def test_update_reruns_forward_and_backward():
    view = f_view()
    seen = []
    view.listeners.append(seen.append)
    view.update(w=0.5, x=4.0)
    # s = 0.5·4 + 3 = 5, f = 25, df/dw = 2·5·4 = 40, df/db = 10
    assert view.node("square").value == 25 and view.node("w").grad == 40
    assert view.node("b").grad == 10 and seen == [view]


def test_update_errors_say_what_to_do():
    view = f_view()
    with pytest.raises(ValueError, match="computed by an op"):
        view.update(mul=1.0)
    with pytest.raises(ValueError, match=r"shape \(\).*shape \(2,\)"):
        view.update(w=[1.0, 2.0])
    with pytest.raises(KeyError, match="leaf names: b, w, x"):
        view.node("v")


class WrongSquare(Op):
    """A deliberately broken op: its backward forgets the factor 2."""

    name = "square"

    def forward(self, xp, x):
        return x * x

    def backward(self, grad, out, x):
        return (grad * x,)


def test_gradient_check_passes_and_catches_a_wrong_backward():
    loss, leaves = random_net(np.random.default_rng(4), dtype="float32")
    view = graph_view(loss, names=leaves)
    report = view.gradient_check()
    assert set(report) == {view.node(k).id for k in ("w1", "b1", "w2")}
    assert all(r["ok"] for r in report.values())
    x = eg.tensor([1.0, -2.0], requires_grad=True)
    bad = graph_view(apply(WrongSquare(), x).sum(), names={"x": x}).gradient_check()
    (leaf,) = bad.values()
    assert not leaf["ok"]
    np.testing.assert_allclose(leaf["numeric"], [2.0, -4.0], rtol=1e-6)


def test_health_flags():
    x = eg.tensor([-1.0, 4.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        flags = graph_view(eg.log(x).sum()).nodes[1].flags
    assert "NaN in value" in flags
    dead = graph_view(eg.relu(x - 10).sum(), names={"x": x}).node("relu")
    assert any("dead ReLU" in f for f in dead.flags)


def test_plain_forms_are_serialisable_and_readable():
    import json
    view = f_view()
    data = json.loads(json.dumps(view.to_dict()))
    assert data["output"] == view.output and len(data["nodes"]) == 6
    text = view.to_text()
    assert "mul" in text and "switches" in text and "2 × -1 = -2" in text
    assert "<table" in view._repr_html_()
    assert short(np.array([1.0, 2.0])) == "[1, 2]" and short(np.zeros((3, 4))) == "3×4 μ=0"


def test_graph_view_rejects_other_things():
    with pytest.raises(TypeError, match="graph_view needs a tensor"):
        graph_view([1, 2])
