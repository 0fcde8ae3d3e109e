"""GradientFlow's numbers are the layers' gradients' own, in all three training styles: the
norms, percentiles, update ratios and dead shares it records equal those computed here from
the gradients (themselves checked by central differences in float64), and its picture, the
widget's synced state, is always the picture of what it holds now."""
import math

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

import edugraph as eg  # noqa: E402
from edugraph import layers, nn  # noqa: E402
from tests.svg_picture import Drawn  # noqa: E402
from widgets import GradientFlow, gradient_flow  # noqa: E402
from widgets.chart import chart  # noqa: E402


def by_hand(grads, before=None, after=None, unit_axis=-1):
    """The statistics of one layer, written out from their definitions."""
    entries = np.abs(np.concatenate([g.ravel() for g in grads]).astype(np.float64))
    entries = entries[entries > 0]                  # (the zeros: in the dead share)
    stats = {"grad_norm": math.sqrt(sum(float((g.astype(np.float64) ** 2).sum())
                                        for g in grads)),
             "p10": np.percentile(entries, 10), "p50": np.percentile(entries, 50),
             "p90": np.percentile(entries, 90)}
    kernel = grads[0]
    units = kernel.shape[unit_axis]
    stats["dead"] = sum(np.all(np.take(kernel, j, axis=unit_axis) == 0)
                        for j in range(units)) / units
    if before is not None:
        moved = math.sqrt(sum(float(((a.astype(np.float64) - b) ** 2).sum())
                              for a, b in zip(after, before)))
        stats["update_ratio"] = moved / math.sqrt(sum(float((b.astype(np.float64) ** 2)
                                                            .sum()) for b in before))
    return stats


def assert_recorded(flow, sample, layer, expected):
    for key, value in expected.items():
        got = flow.history[key][layer][sample]
        np.testing.assert_allclose(got, value, rtol=1e-6, atol=1e-15, err_msg=(layer, key))


class Recorder(eg.models.callbacks.Callback):
    """Each batch's gradients and the weights before and after its update, per layer."""

    def __init__(self):
        self.batches = []

    def on_train_batch_begin(self, batch, logs=None):
        self.before = [[np.array(v.numpy()) for v in layer.trainable_weights]
                       for layer in self.model.layers]

    def on_train_batch_end(self, batch, logs=None):
        grads = {id(v): g.numpy().copy() for g, v in self.model.last_gradients}
        self.batches.append([(layer.name, [grads[id(v)] for v in layer.trainable_weights],
                              before, [np.array(v.numpy()) for v in layer.trainable_weights])
                             for layer, before in zip(self.model.layers, self.before)
                             if layer.trainable_weights])


def digits_mlp(activation="relu", depth=3, units=16, lr=0.1):
    eg.random.set_seed(0)
    net = eg.Sequential([layers.Flatten(input_shape=(8, 8, 1))]
                        + [layers.Dense(units, activation=activation)
                           for _ in range(depth - 1)] + [layers.Dense(10)])
    net.compile(eg.keras.optimizers.SGD(lr),
                eg.losses.SparseCategoricalCrossentropy(from_logits=True))
    return net


def test_fit_records_every_kth_step_with_the_statistics_of_its_gradients():
    (x, y), _ = eg.datasets.load_digits()
    net, flow, recorder = digits_mlp(), GradientFlow(every=3, display=False), Recorder()
    net.fit(x[:320], y[:320], epochs=1, batch_size=32, verbose=0,
            callbacks=[flow, recorder])
    assert flow.steps == [1, 4, 7, 10] and flow.step_count == 10
    assert flow.layers == [layer.name for layer in net.layers[1:]]    # input to output
    for sample, step in enumerate(flow.steps):
        for name, grads, before, after in recorder.batches[step - 1]:
            assert_recorded(flow, sample, name, by_hand(grads, before, after))
            assert flow.history["nonfinite"][name][sample] == 0


def test_the_gradients_fit_keeps_are_the_losss_gradients_by_central_differences():
    """What GradientFlow reads (Model.last_gradients) is d loss / d weights: checked entry by
    entry in float64 on a small model."""
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(6, 3)), rng.normal(size=(6, 1))
    eg.random.set_seed(1)
    net = eg.Sequential([layers.Dense(4, activation="tanh", input_shape=(3,),
                                      dtype="float64"), layers.Dense(1, dtype="float64")])
    net.compile(eg.keras.optimizers.SGD(0.0), "mse")
    flow = GradientFlow(every=1, display=False)
    net.fit(x, y, epochs=1, batch_size=6, verbose=0, shuffle=False, callbacks=[flow])
    weights = net.get_weights()

    def loss(ws):
        h = np.tanh(x @ ws[0] + ws[1])
        return float(np.mean((h @ ws[2] + ws[3] - y) ** 2))
    numeric = []
    for k, w in enumerate(weights):
        g = np.zeros_like(w)
        for index in np.ndindex(w.shape):
            up, down = [v.copy() for v in weights], [v.copy() for v in weights]
            up[k][index] += 1e-6
            down[k][index] -= 1e-6
            g[index] = (loss(up) - loss(down)) / 2e-6
        numeric.append(g)
    for name, grads in zip(flow.layers, (numeric[:2], numeric[2:])):
        np.testing.assert_allclose(flow.history["grad_norm"][name][0],
                                   math.sqrt(sum((g ** 2).sum() for g in grads)), rtol=1e-6)
        assert_recorded(flow, 0, name, {k: v for k, v in by_hand(grads).items()
                                        if k.startswith("p")})
        assert flow.history["update_ratio"][name][0] == 0.0        # the rate is 0


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 6), nn.Linear(6, 1)

    def forward(self, x):
        return self.fc2(eg.nn.functional.relu(self.fc1(x)))


def test_pytorch_style_step_reads_the_grads_and_completes_the_update_ratio_next_call():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(16, 4)), rng.normal(size=(16, 1))
    eg.manual_seed(0)
    net = TwoLayers().double()
    with eg.no_grad():
        net.fc1.bias[:2] = -100.0                 # units 0 and 1: off for every example
    optimizer = eg.optim.SGD(net.parameters(), lr=0.05)
    flow, seen = GradientFlow(net, every=2, display=False), []
    for _ in range(5):
        optimizer.zero_grad()
        ((net(eg.tensor(x)) - eg.tensor(y)) ** 2).mean().backward()
        before = {name: p.numpy().copy() for name, p in net.named_parameters()}
        grads = {name: p.grad.numpy().copy() for name, p in net.named_parameters()}
        flow.step()
        optimizer.step()
        seen.append((grads, before, {n: p.numpy().copy() for n, p in net.named_parameters()}))
    flow.end()
    assert flow.steps == [1, 3, 5] and flow.layers == ["fc1", "fc2"]
    for sample, step in enumerate(flow.steps):
        grads, before, after = seen[step - 1]
        for layer in ("fc1", "fc2"):
            names = [f"{layer}.weight", f"{layer}.bias"]
            assert_recorded(flow, sample, layer, by_hand(
                [grads[n] for n in names], [before[n] for n in names],
                [after[n] for n in names], unit_axis=0))
    assert flow.history["dead"]["fc1"][0] >= 2 / 6      # (the two switched off, at least)
    assert "of layer 1's units are dead" in flow.sentence()


def test_tf1_style_step_runs_the_pairs_of_compute_gradients_in_the_session():
    rng = np.random.default_rng(2)
    x_value, y_value = rng.normal(size=(8, 3)), rng.normal(size=(8, 1))
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float64, shape=(None, 3))
        y = eg.placeholder(eg.float64, shape=(None, 1))
        w1 = eg.Variable(rng.normal(size=(3, 5)), name="hidden/kernel")
        w2 = eg.Variable(rng.normal(size=(5, 1)), name="out/kernel")
        h = eg.tanh(eg.matmul(x, w1))
        loss = eg.reduce_mean((eg.matmul(h, w2) - y) ** 2)
        opt = eg.train.GradientDescentOptimizer(0.1)
        grads_and_vars = opt.compute_gradients(loss)
        train_op = opt.apply_gradients(grads_and_vars)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            flow = GradientFlow(grads_and_vars, session=sess, every=1, display=False)
            feed, values = {x: x_value, y: y_value}, []
            for _ in range(3):
                values.append(sess.run([w1, w2]))
                flow.step(feed)
                sess.run(train_op, feed)
            flow.end()
            values.append(sess.run([w1, w2]))
    assert flow.layers == ["hidden", "out"] and flow.steps == [1, 2, 3]
    for step in range(3):
        W1, W2 = values[step]
        hidden = np.tanh(x_value @ W1)                       # the gradients by hand
        d_out = 2 * (hidden @ W2 - y_value) / len(x_value)
        g2 = hidden.T @ d_out
        g1 = x_value.T @ ((d_out @ W2.T) * (1 - hidden ** 2))
        for name, g, before, after in (("hidden", g1, W1, values[step + 1][0]),
                                       ("out", g2, W2, values[step + 1][1])):
            assert_recorded(flow, step, name, by_hand([g], [before], [after]))


def test_a_ten_layer_sigmoid_networks_gradient_vanishes_towards_the_input():
    (x, y), _ = eg.datasets.load_digits()
    flows = {}
    for activation in ("sigmoid", "relu"):
        net, flows[activation] = digits_mlp(activation, depth=10, units=32), \
            GradientFlow(display=False)
        net.fit(x[:640], y[:640], epochs=1, verbose=0, callbacks=[flows[activation]])
    norms = flows["sigmoid"].latest("grad_norm")
    first, last = norms[flows["sigmoid"].layers[0]], norms[flows["sigmoid"].layers[-1]]
    assert first / last < 1e-4                              # 1.5e-6 / 0.59 here
    assert f"is {gradient_flow.power_of_ten(first / last)} of the one at layer 10: it " \
        "vanishes" in flows["sigmoid"].sentence()
    relu = flows["relu"].latest("grad_norm")
    assert relu[flows["relu"].layers[0]] / relu[flows["relu"].layers[-1]] > 1e-2
    assert "vanishes" not in flows["relu"].sentence()


def test_nan_gradients_are_counted_and_said():
    (x, y), _ = eg.datasets.load_digits()
    net = digits_mlp()
    kernel = net.layers[1].kernel
    broken = kernel.numpy()
    broken[0, :3] = np.nan
    kernel.assign(broken)
    flow = GradientFlow(every=1, display=False)
    net.fit(x[:32], y[:32], epochs=1, verbose=0, callbacks=[flow])
    grads = {id(v): g.numpy() for g, v in net.last_gradients}
    for layer in net.layers[1:]:
        entries = np.concatenate([grads[id(v)].ravel() for v in layer.trainable_weights])
        assert flow.history["nonfinite"][layer.name][0] == np.sum(~np.isfinite(entries)) > 0
    assert flow.sentence().startswith("Layer ") and "NaN or inf" in flow.sentence()


def test_the_picture_is_the_picture_of_the_current_history(monkeypatch):
    """The synced state after the updates is the current picture: one curve per layer, one
    point per sample; redraws wait REDRAW_S, and the end draws everything."""
    clock = [0.0]
    monkeypatch.setattr(gradient_flow.time, "monotonic", lambda: clock[0])
    (x, y), _ = eg.datasets.load_digits()
    net, flow = digits_mlp(), GradientFlow(every=2, display=False, title="digits")
    states = []

    class Watch(eg.models.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            states.append(flow.picture.svg)
    net.fit(x[:320], y[:320], epochs=1, verbose=0, callbacks=[flow, Watch()])
    assert states[0] and all(s == states[0] for s in states)   # the clock stood still
    drawn = Drawn(flow.picture.svg)
    assert drawn.texts("panel-title")[:3] == ["gradient norm ‖g‖ per layer",
                                              "|g| entries: median, 10–90th percentile band",
                                              "update / weight ‖Δw‖ / ‖w‖"]
    assert "dead units (%)" in drawn.texts("panel-title")       # (ReLU layers)
    assert flow.picture.svg == chart(flow.panels(), width=gradient_flow.WIDTH,
                                     panel_height=170, theme="light", title="digits",
                                     x_label="training step")
    curves = [g for g in drawn.elements("g", "series")
              if g.get("data-series") == f"1 {flow.layers[0]}"]
    assert len(curves) == 4               # norm, band, update ratio, dead: one per panel
    first_curve = curves[0].find("{http://www.w3.org/2000/svg}path").get("d")
    assert first_curve.count("L") == len(flow.steps) - 1 == 4
    assert curves[1].find("{http://www.w3.org/2000/svg}polygon") is not None    # the band
    light = flow.picture.svg
    flow.picture.dark = True                                     # what the browser reports
    assert flow.picture.svg != light and Drawn(flow.picture.svg).width <= 520


def test_text_summary_and_mimebundle():
    (x, y), _ = eg.datasets.load_digits()
    net, flow = digits_mlp(), GradientFlow(every=4, display=False)
    assert repr(flow) == "GradientFlow: no steps yet"
    net.fit(x[:128], y[:128], epochs=1, verbose=0, callbacks=[flow])
    lines = flow.text().splitlines()
    assert lines[0] == "GradientFlow: 1 samples of 4 steps (every 4)"
    assert lines[2].split()[:2] == ["1", flow.layers[0]]
    assert lines[2].split()[2] == f"{flow.history['grad_norm'][flow.layers[0]][0]:.2g}"
    assert lines[-1] == "  " + flow.sentence()
    bundle = flow._repr_mimebundle_()
    assert bundle["text/plain"] == flow.text()
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_bad_arguments_say_what_to_do():
    with pytest.raises(ValueError, match="every must be a whole number"):
        GradientFlow(every=0)
    with pytest.raises(ValueError, match="by must be 'layer' or 'parameter'"):
        GradientFlow(by="unit")
    with pytest.raises(ValueError, match="pass the session"):
        GradientFlow([(eg.tensor(1.0), eg.Variable(1.0))])
    with pytest.raises(TypeError, match="pass GradientFlow\\(\\) in callbacks"):
        GradientFlow(display=False).step()
    eg.manual_seed(0)
    with pytest.raises(ValueError, match="after loss.backward\\(\\)"):
        GradientFlow(TwoLayers(), display=False).step()
