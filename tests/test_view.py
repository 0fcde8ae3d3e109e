"""The graph view: structure, values, gradients per node and per edge, steps, gradient check."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import GradientError
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


def test_the_text_rule_of_a_tensor_is_elementwise_with_one_element_worked_out():
    """Issue 27: "5×10 μ=0.0104 × 5×10 μ=0.7 = 5×10 μ=0.0128" read as scalar arithmetic."""
    x = eg.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    w = eg.tensor([[0.5, -1.], [2., 3.]], requires_grad=True)
    b = eg.tensor([1., -1.], requires_grad=True)
    view = graph_view((eg.relu(x * w) + b).sum(), names={"x": x, "w": w, "b": b})
    rules = {row["edge"]: row["rule"] for row in view.edge_rows()}
    # x[0, 0] receives the upstream 1 times w[0, 0] = 0.5 (the relu passed it)
    assert rules["n0 -> n2.0"] == "∇ ⊙ w, elementwise; [0, 0]: 1 × 0.5 = 0.5"
    assert rules["n2 -> n3.0"] == "∇ ⊙ 1[mul > 0], elementwise; [0, 0]: 1 × 1 = 1"
    assert rules["n4 -> n5.1"] == "∇, then summed over axes (0,)"     # b, broadcast
    assert rules["n5 -> n6.0"] == "∇ to every element"
    assert "μ" not in "".join(rules.values())
    text = view.to_text()
    assert "∇ ⊙ w, elementwise; [0, 0]: 1 × 0.5 = 0.5" in text
    s, t = eg.tensor(2.0, requires_grad=True), eg.tensor(3.0, requires_grad=True)
    scalar = graph_view(s * t, names={"s": s, "t": t})
    assert [row["rule"] for row in scalar.edge_rows()] == ["1 × 3 = 3", "1 × 2 = 2"]


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


# ----------------------------------------------------------------------------- static graphs
def two_layer_net(device="cpu:0", batch=5):
    """A 2-layer net in name scopes with a GradientDescent step, initialised in a Session
    (tests/test_inspector_browser.py draws it in a real browser too)."""
    rng = np.random.default_rng(0)
    graph = eg.Graph()
    with graph.as_default(), eg.device(device):
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
    feed = {x: rng.normal(size=(batch, 3)).astype("float32"),
            y: rng.normal(size=(batch, 1)).astype("float32")}
    return sess, feed, loss, train


def test_static_view_values_come_from_the_session(device):
    sess, feed, loss, _ = two_layer_net(device)
    view = graph_view(loss, session=sess, feed_dict=feed)
    graph = loss.graph
    assert [n.name for n in view.nodes] == [
        "x", "y", "layer1/w", "layer1/b", "layer1/MatMul", "layer1/Add", "layer1/Relu",
        "layer2/w", "layer2/b", "layer2/MatMul", "layer2/Add", "loss/Sub", "loss/Square",
        "loss/Mean"]
    assert view.node("layer1/w").kind == "variable" and view.node("x").kind == "placeholder"
    assert view.node("layer1/Relu").scope == "layer1" and view.node("layer1/Relu").label == "Relu"
    assert view.node("loss/Mean").id == view.output and view.node("layer1/MatMul").shape == (5, 4)
    for n in view.nodes:
        expected = sess.run(graph.get_operation_by_name(n.name).outputs[0], feed)
        np.testing.assert_allclose(n.value, expected, rtol=1e-6)
        assert n.device == device


def test_static_gradients_equal_eg_gradients_at_every_node(device):
    """The view walks op.backward on the session's values; eg.gradients builds the same rule
    as graph nodes. Both must agree at every node, and be None at the same nodes."""
    sess, feed, loss, train = two_layer_net(device)
    graph = loss.graph
    view = graph_view(graph, session=sess, feed_dict=feed, output=loss)
    checked = 0
    for n in view.nodes:
        op = graph.get_operation_by_name(n.name)
        if not op.outputs or n.skipped:
            continue
        with graph.as_default():
            (wanted,) = eg.gradients(loss, op.outputs[0])
        if wanted is None:
            assert n.grad is None, n.name
            continue
        np.testing.assert_allclose(n.grad, sess.run(wanted, feed), rtol=1e-5, atol=1e-6,
                                   err_msg=n.name)
        checked += 1
    assert checked == 14            # every forward node, placeholders included (as in TF)
    assert view.node("gradients/grad_ys").grad is None     # gradient nodes get none


def test_static_graph_view_shows_training_without_running_it():
    sess, feed, loss, train = two_layer_net()
    graph = loss.graph
    w = graph.get_operation_by_name("layer1/w").outputs[0]
    before = sess.run(w).copy()
    view = graph_view(graph, session=sess, feed_dict=feed, output=loss)
    names = [n.name for n in view.nodes]
    # the variables' initialisers are left out; eg.gradients' nodes and the update ops stay
    assert "layer1/w/Assign" not in names and "init" not in names
    assert "gradients/layer1/MatMul_grad/MatMul_1" in names
    assert view.node("gradients/layer1/MatMul_grad/MatMul_1").gradient_node
    assert not view.node("GradientDescent/Sub").gradient_node
    assign, update = view.node("GradientDescent/Assign"), view.node("GradientDescent/update")
    assert assign.skipped and assign.value is None and update.shape is None
    assert {(e.source, e.target) for e in view.control_edges} >= {(assign.id, update.id)}
    np.testing.assert_array_equal(sess.run(w), before)      # looking did not train
    # the weights' new values are visible all the same, computed but not written
    new = view.node("GradientDescent/Sub").value
    np.testing.assert_allclose(new, before - 0.1 * view.node("layer1/w").grad, rtol=1e-5)
    assert "not run" in view.to_text()


def test_static_update_reruns_the_session_and_feeds_the_new_leaf():
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, (), name="x")
        w = eg.Variable(-1.0, name="w")
        b = eg.constant(3.0, name="b")
        f = (w * x + b) ** 2
        init = eg.global_variables_initializer()
    sess = eg.Session(graph=graph)
    sess.run(init)
    view = graph_view(f, session=sess, feed_dict={x: 2.0})
    assert view.node("w").grad == 4 and view.node("x").grad == -2
    view.update(x=4.0)                          # s = -1·4 + 3 = -1, f = 1, df/dw = 2s·x = -8
    assert view.node(view.output).value == 1 and view.node("w").grad == -8
    view.update(w=0.5)                          # a variable is fed, not written
    assert view.node(view.output).value == 25 and view.node("w").grad == 40
    assert view.node("b").kind == "constant" and view.node("b").grad is None    # as in TF
    assert sess.run(w) == -1.0
    assert all(r["ok"] for r in view.gradient_check().values())


def test_static_view_uses_the_default_session_and_explains_what_is_missing():
    sess, feed, loss, _ = two_layer_net()
    with pytest.raises(ValueError, match=r"loss/Mean:0 belongs to a static graph.*session=sess"):
        graph_view(loss)
    x = loss.graph.get_tensor_by_name("x:0")
    with pytest.raises(ValueError, match=r"placeholder 'y' \(shape \(\?, 1\), float32\).*"
                                         r"feed_dict=\{y: \.\.\.\}"):
        graph_view(loss, session=sess, feed_dict={x: feed[x]})
    with pytest.raises(ValueError, match="different graph"):
        graph_view(loss, session=eg.Session(graph=eg.Graph()), feed_dict=feed)
    with sess.as_default():
        assert graph_view(loss, feed_dict=feed).node("loss/Mean").value > 0
    with pytest.raises(TypeError, match="args= is for a traced function"):
        graph_view(loss, session=sess, feed_dict=feed, args=(1.0,))


def test_collapse_and_hide_gradient_nodes_in_the_view():
    sess, feed, loss, _ = two_layer_net()
    view = graph_view(loss.graph, session=sess, feed_dict=feed, output=loss)
    assert {"layer1", "layer2", "loss", "gradients", "GradientDescent"} <= set(view.scopes())
    everything = view.visible_nodes()
    assert all(everything[n.id] == n.id for n in view.nodes)
    view.show_gradient_nodes(False).collapse("layer1", "GradientDescent")
    owner = view.visible_nodes()
    assert not any(n.gradient_node and n.id in owner for n in view.nodes)
    assert owner[view.node("layer1/MatMul").id] == "scope:layer1"
    assert owner[view.node("layer2/MatMul").id] == view.node("layer2/MatMul").id
    text = view.to_text()
    assert "layer1 ▸" in text and "5 nodes" in text and "gradient nodes hidden" in text
    assert "layer1/MatMul" not in text and "MatMul_grad" not in text
    view.expand("layer1")
    assert view.visible_nodes()[view.node("layer1/MatMul").id] == view.node("layer1/MatMul").id
    view.expand()
    assert view.collapsed == set()
    with pytest.raises(KeyError, match="No name scope 'layer3'.*layer1"):
        view.collapse("layer3")
    seen = []
    view.display_listeners.append(seen.append)
    view.collapse("loss")
    assert seen == [view]


def test_static_text_is_deterministic():
    texts = []
    for _ in range(2):
        sess, feed, loss, _ = two_layer_net()
        view = graph_view(loss.graph, session=sess, feed_dict=feed, output=loss)
        texts.append(view.show_gradient_nodes(False).collapse("GradientDescent").to_text())
    assert texts[0] == texts[1]
    assert "<table" in view.to_html() and "gradient nodes hidden" in view.to_html()


# ----------------------------------------------------------------------------- traced functions
@eg.function
def traced_f(x, w, b):
    return (w * x + b) ** 2


ARGS = (np.float32(2.0), np.float32(-1.0), np.float32(3.0))


def test_traced_function_before_and_after_optimisation():
    concrete = traced_f.get_concrete_function(*ARGS)
    before = graph_view(concrete, args=ARGS)
    after = graph_view(concrete, args=ARGS, optimized=True)
    assert [n.op for n in before.nodes if n.kind == "op"] == ["mul", "add", "square"]
    (fused,) = [n for n in after.nodes if n.kind == "op"]
    assert fused.op == "fused" and fused.attrs["ops"] == ["Mul", "Add", "Square"]
    assert "as traced" in before.title and "fuse_elementwise" in after.title
    # the same numbers either way: f = 1, df/dw = 2s·x = 4, df/dx = 2s·w = -2, df/db = 2
    for view in (before, after):
        assert view.node(view.output).value == 1
        assert [view.node(k).grad for k in ("x", "w", "b")] == [-2, 4, 2]
    # the fused node sends each input its share, as the three ops did before fusion
    assert [e.grad for e in after.inputs_of(fused.id)] == [4, -2, 2]
    after.update(w=0.5)
    assert after.node(after.output).value == 16 and after.node("w").grad == 16
    assert all(r["ok"] for r in after.gradient_check().values())


def test_traced_function_gradients_equal_eg_gradients_in_its_graph():
    concrete = traced_f.get_concrete_function(*ARGS)
    view = graph_view(traced_f, args=ARGS)         # an eg.function: traced for the args
    graph = concrete.graph
    sess = eg.Session(graph=graph)
    feed = dict(zip(concrete.inputs, ARGS))
    for n in view.nodes:
        with graph.as_default():
            (wanted,) = eg.gradients(concrete.outputs[0], graph.get_operation_by_name(n.name)
                                     .outputs[0])
        np.testing.assert_allclose(n.grad, sess.run(wanted, feed), err_msg=n.name)


def test_traced_function_after_one_pass():
    view = graph_view(traced_f, args=ARGS, optimized="eliminate_common_subexpressions")
    assert view.title == "traced_f (after eliminate_common_subexpressions)"
    assert [n.op for n in view.nodes if n.kind == "op"] == ["mul", "add", "square"]
    with pytest.raises(ValueError, match=r"no stage 'fuse'.*'fuse_elementwise'"):
        graph_view(traced_f, args=ARGS, optimized="fuse")


def test_traced_function_needs_its_arguments():
    concrete = traced_f.get_concrete_function(*ARGS)
    with pytest.raises(TypeError, match=r"needs the values of its arguments.*args="):
        graph_view(concrete)
    with pytest.raises(ValueError, match=r"3 tensor argument\(s\) \(x, w, b\)"):
        graph_view(concrete, args=(np.float32(1.0),))


def test_static_view_built_inside_the_graph_block():
    """Students call graph_view inside ``with graph.as_default():``; the gradient walk on the
    session's values must stay eager there (not add symbolic nodes to the graph)."""
    with eg.Graph().as_default() as g:
        x = eg.placeholder(eg.float32, shape=(None, 3), name="x")
        w = eg.Variable(np.array([[1.0], [-2.0], [0.5]], np.float32), name="w")
        loss = eg.reduce_mean(eg.square(eg.matmul(x, w)))
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            xs = np.array([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]], np.float32)
            count = len(g.get_operations())
            view = graph_view(loss, session=sess, feed_dict={x: xs})
            assert len(g.get_operations()) == count          # viewing adds nothing
            (grad_w,) = sess.run(eg.gradients(loss, [w]), feed_dict={x: xs})
    node_w = next(n for n in view.nodes if n.label == "w")
    np.testing.assert_allclose(node_w.grad, grad_w, rtol=1e-6)
    assert "Traceback" not in str(view)


def test_traced_function_with_cond_shows_the_branch_outputs():
    @eg.function
    def clip(g, m):
        norm = eg.sqrt(eg.reduce_sum(g * g))
        return eg.reduce_sum(eg.cond(norm > m, lambda: g * (m / norm), lambda: g))

    view = graph_view(clip, args=(eg.tensor([3.0, 4.0]), 1.0))
    cond = view.node("cond")
    assert cond.shape is None and "tuple of the chosen branch" in cond.skipped
    np.testing.assert_allclose(view.node("cond_output").value, [0.6, 0.8], rtol=1e-6)
    row = next(r for r in view.rows() if r["node"] == "cond")
    assert row["value"] == "-" and row["shape"] == "-"
    np.testing.assert_allclose(view.node("cond_output").grad, [1.0, 1.0])


def test_eager_view_through_a_traced_call_follows_a_new_input():
    square = eg.function(lambda x: x * x)
    x = eg.tensor(np.array([1.0, 2.0]), requires_grad=True)
    view = graph_view(eg.reduce_sum(square(x) + x), names={"x": x})
    assert view.node("call").op == "call"
    view.update(x=np.array([3.0, 1.0]))
    np.testing.assert_allclose(view.node("call").value, [9.0, 1.0])
    np.testing.assert_allclose(view.node("x").grad, [7.0, 3.0])       # 2x + 1
    assert all(r["ok"] for r in view.gradient_check().values())


# ------------------------------------------------ found by checking the view's numbers
def test_an_input_changed_in_place_with_the_change_recorded_is_drawn_as_used():
    """``a += 1`` while recording makes a a new node; the product before it used the old a
    (the view followed the tensor and drew the product from the new one: x's gradient was
    [14, 22, 30], not [10, 18, 26])."""
    x = eg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a = x * 2
    b = a * a
    a += 1
    out = eg.reduce_sum(b + a)
    view = eg.graph_view(out, names={"x": x})
    (expected,) = eg.grad(out, [x])
    np.testing.assert_allclose(view.node("x").grad, expected.numpy())


def test_values_overwritten_after_use_are_refused_not_drawn():
    c = eg.tensor([1.0, 2.0, 3.0])
    w = eg.tensor([1.0, 1.0, 1.0], requires_grad=True)
    y = eg.reduce_sum((w * c) ** 2)
    c += 10
    with pytest.raises(GradientError, match=r"graph_view: the values of .* were changed in "
                                            r"place .* after mul used them"):
        eg.graph_view(y)


def test_a_gradient_that_misses_the_part_through_a_cond_says_so():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (2,), name="x")
        p = eg.placeholder(eg.bool, (), name="p")
        y = eg.reduce_sum(x * 5.0 + eg.cond(p, lambda: x * x, lambda: x * 3.0))
        with eg.Session() as sess:
            view = eg.graph_view(y, session=sess,
                                 feed_dict={x: np.array([1.0, 2.0], np.float32), p: True})
    assert any(f.startswith("partial gradient: the part through") for f in
               view.node("x").flags)
    assert not any(f.startswith("partial") for f in view.node("Mul").flags)
