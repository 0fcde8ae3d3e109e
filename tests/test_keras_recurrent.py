"""Keras's recurrent layers (SimpleRNN, LSTM, GRU, RNN and their cells) against numpy written
from Keras's formulas, PyTorch's nn.RNN/LSTM/GRU with converted weights, and central
differences; then the same layers traced, in a TF1 graph, and trained by Sequential.fit."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import layers

from gradcheck import gradcheck

KINDS = {"simple_rnn": layers.SimpleRNN, "lstm": layers.LSTM, "gru": layers.GRU}
STATES = {"simple_rnn": 1, "lstm": 2, "gru": 1}


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


def numpy_cell(kind, weights, x, states, reset_after=True, act=np.tanh, gate=sigmoid):
    """One step as Keras's SimpleRNNCell / LSTMCell / GRUCell compute it; the new states."""
    kernel, recurrent, bias = weights
    n = recurrent.shape[0]
    if kind == "simple_rnn":
        return [act(x @ kernel + bias + states[0] @ recurrent)]
    if kind == "lstm":
        h, c = states
        z = x @ kernel + h @ recurrent + bias
        i, f, g, o = gate(z[:, :n]), gate(z[:, n:2 * n]), act(z[:, 2 * n:3 * n]), gate(z[:, 3 * n:])
        c = f * c + i * g
        return [o * act(c), c]
    h = states[0]
    if reset_after:
        mx, mh = x @ kernel + bias[0], h @ recurrent + bias[1]
        z, r = gate(mx[:, :n] + mh[:, :n]), gate(mx[:, n:2 * n] + mh[:, n:2 * n])
        hh = act(mx[:, 2 * n:] + r * mh[:, 2 * n:])
    else:
        mx = x @ kernel + bias
        z = gate(mx[:, :n] + h @ recurrent[:, :n])
        r = gate(mx[:, n:2 * n] + h @ recurrent[:, n:2 * n])
        hh = act(mx[:, 2 * n:] + (r * h) @ recurrent[:, 2 * n:])
    return [z * h + (1 - z) * hh]          # Keras: h = z * h_tm1 + (1 - z) * hh


def numpy_rnn(kind, weights, x, states, go_backwards=False, **options):
    """Every step's output (batch, time, units) in the order processed, and the final states."""
    outputs = []
    for t in (range(x.shape[1])[::-1] if go_backwards else range(x.shape[1])):
        states = numpy_cell(kind, weights, x[:, t], states, **options)
        outputs.append(states[0])
    return np.stack(outputs, axis=1), states


def make_layer(kind, units, n_in, seed=0, **options):
    """A float64 layer built for n_in features, with random weights (biases too, so that a
    wrongly placed bias shows)."""
    layer = KINDS[kind](units, dtype="float64", **options)
    layer.build_for((None, 3, n_in))
    rng = np.random.default_rng(seed)
    layer.set_weights([0.5 * rng.normal(size=w.shape) for w in layer.get_weights()])
    return layer


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("go_backwards", [False, True])
def test_layers_match_numpy_written_from_keras(kind, go_backwards):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(4, 6, 3))
    states = [rng.normal(size=(4, 5)) for _ in range(STATES[kind])]
    layer = make_layer(kind, 5, 3, return_sequences=True, return_state=True,
                       go_backwards=go_backwards)
    got = layer(eg.tensor(x), initial_state=[eg.tensor(s) for s in states])
    outputs, final = numpy_rnn(kind, layer.get_weights(), x, states, go_backwards)
    assert len(got) == 1 + STATES[kind]
    np.testing.assert_allclose(got[0].numpy(), outputs, rtol=1e-12, atol=1e-12)
    for mine, theirs in zip(got[1:], final):
        np.testing.assert_allclose(mine.numpy(), theirs, rtol=1e-12, atol=1e-12)
    zeros = [np.zeros((4, 5))] * STATES[kind]
    last = make_layer(kind, 5, 3, go_backwards=go_backwards)(eg.tensor(x))     # seed 0 again
    np.testing.assert_allclose(last.numpy(), numpy_rnn(kind, layer.get_weights(), x, zeros,
                                                       go_backwards)[0][:, -1], rtol=1e-12)


def test_go_backwards_reads_the_sequence_from_its_end():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(2, 5, 3))
    forward = make_layer("gru", 4, 3, return_sequences=True)
    backward = make_layer("gru", 4, 3, return_sequences=True, go_backwards=True)
    np.testing.assert_allclose(backward(eg.tensor(x)).numpy(),
                               forward(eg.tensor(x[:, ::-1].copy())).numpy(), rtol=1e-12)


@pytest.mark.parametrize("options", [dict(reset_after=False), dict(reset_after=False,
                                                                    use_bias=False)])
def test_gru_reset_before_matches_numpy(options):
    rng = np.random.default_rng(3)
    x, h = rng.normal(size=(3, 7, 2)), rng.normal(size=(3, 4))
    layer = make_layer("gru", 4, 2, return_sequences=True, return_state=True, **options)
    weights, use_bias = layer.get_weights(), options.get("use_bias", True)
    assert [w.shape for w in weights] == [(2, 12), (4, 12)] + [(12,)] * use_bias
    if not use_bias:
        weights.append(np.zeros(12))
    outputs, h_last = layer(eg.tensor(x), initial_state=eg.tensor(h))
    ref_outputs, (ref_h,) = numpy_rnn("gru", weights, x, [h], reset_after=False)
    np.testing.assert_allclose(outputs.numpy(), ref_outputs, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_last.numpy(), ref_h, rtol=1e-12, atol=1e-12)


def test_cells_take_keras_activations():
    rng = np.random.default_rng(4)
    x, h, c = rng.normal(size=(3, 2)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    relu = lambda z: np.maximum(z, 0)                                   # noqa: E731
    for cell, kind, states in ((layers.LSTMCell(4, "relu", "tanh", dtype="float64"), "lstm",
                                [h, c]),
                               (layers.GRUCell(4, "relu", "tanh", dtype="float64"), "gru", [h]),
                               (layers.SimpleRNNCell(4, "relu", dtype="float64"), "simple_rnn",
                                [h])):
        cell.build_for((None, 2))
        cell.set_weights([rng.normal(size=w.shape) for w in cell.get_weights()])
        out, new = cell(eg.tensor(x), [eg.tensor(s) for s in states])
        ref = numpy_cell(kind, cell.get_weights(), x, states, act=relu, gate=np.tanh)
        np.testing.assert_allclose(out.numpy(), ref[0], rtol=1e-12, atol=1e-12)
        for mine, theirs in zip(new, ref):
            np.testing.assert_allclose(mine.numpy(), theirs, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- against PyTorch
def torch_twin(kind, kernel, recurrent, bias):
    """torch's nn.RNN / LSTM / GRU run with parameters computed from Keras-layout tensors, so
    that gradients land in Keras's layout."""
    torch = pytest.importorskip("torch")
    from torch.func import functional_call
    n_in, n = kernel.shape[0], recurrent.shape[0]
    module = {"simple_rnn": torch.nn.RNN, "lstm": torch.nn.LSTM,
              "gru": torch.nn.GRU}[kind](n_in, n, batch_first=True).double()
    if kind == "gru":               # Keras's gate blocks z, r, h are torch's r, z, n
        order = torch.cat([torch.arange(n, 2 * n), torch.arange(n), torch.arange(2 * n, 3 * n)])
        kernel, recurrent = kernel[:, order], recurrent[:, order]
        b_ih, b_hh = bias[0][order], bias[1][order]
    else:                           # Keras has one bias; torch adds two
        b_ih, b_hh = bias, torch.zeros_like(bias)
    params = {"weight_ih_l0": kernel.T, "weight_hh_l0": recurrent.T, "bias_ih_l0": b_ih,
              "bias_hh_l0": b_hh}
    return lambda x, state: functional_call(module, params, (x, state))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("go_backwards", [False, True])
def test_values_and_gradients_match_torch(kind, go_backwards):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 6, 4))
    states = [rng.normal(size=(3, 5)) for _ in range(STATES[kind])]
    layer = make_layer(kind, 5, 4, return_sequences=True, return_state=True,
                       go_backwards=go_backwards)
    w_out, w_states = rng.normal(size=(3, 6, 5)), rng.normal(size=(3, 5))

    ex, *es = (eg.tensor(a, requires_grad=True) for a in [x, *states])
    outputs, *final = layer(ex, initial_state=es)
    loss = eg.reduce_sum(outputs * eg.tensor(w_out))
    for s in final:
        loss = loss + eg.reduce_sum(s * eg.tensor(w_states))
    loss.backward()

    tx, *ts = (torch.tensor(a, requires_grad=True) for a in [x, *states])
    tw = [torch.tensor(w, requires_grad=True) for w in layer.get_weights()]
    t_state = tuple(s[None] for s in ts) if kind == "lstm" else ts[0][None]
    t_outputs, t_final = torch_twin(kind, *tw)(tx.flip(1) if go_backwards else tx, t_state)
    t_final = t_final if kind == "lstm" else (t_final,)
    t_loss = (t_outputs * torch.tensor(w_out)).sum() + sum(
        (s[0] * torch.tensor(w_states)).sum() for s in t_final)
    t_loss.backward()

    np.testing.assert_allclose(outputs.numpy(), t_outputs.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    for mine, theirs in zip(final, t_final):
        np.testing.assert_allclose(mine.numpy(), theirs[0].detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    for mine, theirs in zip([ex, *es] + layer.cell.trainable_variables, [tx, *ts] + tw):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-9,
                                   atol=1e-10, err_msg=f"{kind}: {getattr(mine, 'name', '')}")


def test_lstm_cell_state_is_what_torch_returns_as_c():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(6).normal(size=(2, 4, 3))
    layer = make_layer("lstm", 3, 3, return_state=True)
    output, h, c = layer(eg.tensor(x))
    _, (t_h, t_c) = torch_twin("lstm", *map(torch.tensor, layer.get_weights()))(
        torch.tensor(x), (torch.zeros(1, 2, 3, dtype=torch.float64),) * 2)
    assert output is h
    np.testing.assert_allclose(c.numpy(), t_c[0].detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(h.numpy(), t_h[0].detach().numpy(), rtol=1e-10)


# ----------------------------------------------------------------------------- central differences
@pytest.mark.parametrize("kind, options", [("simple_rnn", {}), ("lstm", {}), ("gru", {}),
                                           ("gru", dict(reset_after=False))])
def test_gradients_match_central_differences(kind, options, device):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 3, 2))
    states = [rng.normal(size=(2, 3)) for _ in range(STATES[kind])]
    with eg.device(device):
        layer = make_layer(kind, 3, 2, return_sequences=True, return_state=True, **options)

    def run(x, *states):
        outputs, *final = layer(x, initial_state=list(states))
        return eg.concat([eg.reshape(outputs, (2, 9)), *final], axis=1)
    gradcheck(run, x, *states, device=device, name=f"{kind} {options}")

    # the weights' gradients: nudge each element of each variable by ±eps
    with eg.device(device):
        ex, es = eg.tensor(x), [eg.tensor(s) for s in states]
        weights = eg.tensor(rng.uniform(0.5, 1.5, (2, 9 + 3 * len(states))))
        loss = lambda: eg.reduce_sum(run(ex, *es) * weights)          # noqa: E731
        with eg.GradientTape() as tape:
            value = loss()
        analytic = tape.gradient(value, layer.trainable_variables)
        eps = 1e-6
        for var, grad in zip(layer.trainable_variables, analytic):
            start = var.numpy().copy()
            for index in np.ndindex(start.shape):
                sides = []
                for step in (eps, -eps):
                    nudged = start.copy()
                    nudged[index] += step
                    var.assign(nudged)
                    sides.append(loss().item())
                var.assign(start)
                numeric = (sides[0] - sides[1]) / (2 * eps)
                assert np.isclose(grad.numpy()[index], numeric, rtol=1e-5, atol=1e-6), \
                    f"{kind} {options}: d loss / d {var.name}{index}: analytic " \
                    f"{grad.numpy()[index]}, numeric {numeric}"


# ----------------------------------------------------------------------------- weights
def test_weights_live_in_the_cell_in_keras_order():
    lstm = layers.LSTM(5)
    lstm(eg.ones((2, 3, 4)))
    assert [w.shape for w in lstm.get_weights()] == [(4, 20), (5, 20), (20,)]
    assert lstm.weights[0] is lstm.cell.kernel and lstm.weights[2] is lstm.cell.bias
    assert lstm.units == 5
    bias = lstm.cell.bias.numpy()
    np.testing.assert_array_equal(bias[5:10], 1.0)         # unit_forget_bias
    np.testing.assert_array_equal(np.delete(bias, np.s_[5:10]), 0.0)
    r = layers.GRU(3).cell
    r.build_for((None, 2))
    assert [v.shape for v in r.weights] == [(2, 9), (3, 9), (2, 9)]
    np.testing.assert_allclose(r.recurrent_kernel.numpy() @ r.recurrent_kernel.numpy().T,
                               np.eye(3), atol=1e-6)       # orthogonal rows
    simple = layers.SimpleRNN(3, use_bias=False)
    simple(eg.ones((1, 2, 2)))
    assert [w.shape for w in simple.get_weights()] == [(2, 3), (3, 3)]


def test_set_weights_changes_what_the_layer_computes():
    rng = np.random.default_rng(8)
    x = rng.normal(size=(2, 4, 3))
    layer = layers.LSTM(2, dtype="float64")
    layer(eg.tensor(x))
    new = [rng.normal(size=w.shape) for w in layer.get_weights()]
    layer.set_weights(new)
    expected = numpy_rnn("lstm", new, x, [np.zeros((2, 2))] * 2)[0][:, -1]
    np.testing.assert_allclose(layer(eg.tensor(x)).numpy(), expected, rtol=1e-12)


# ----------------------------------------------------------------------------- three modes
@pytest.mark.parametrize("kind", KINDS)
def test_traced_and_graph_give_the_eager_numbers(kind):
    rng = np.random.default_rng(9)
    x = rng.normal(size=(3, 5, 4)).astype(np.float32)
    eg.random.set_seed(1)
    layer = KINDS[kind](6, return_sequences=True)
    with eg.GradientTape() as tape:
        eager = layer(eg.tensor(x))
        loss = eg.reduce_sum(eager * eager)
    eager_grads = [g.numpy() for g in tape.gradient(loss, layer.trainable_variables)]

    traced = eg.function(lambda x: layer(x))
    np.testing.assert_allclose(traced(eg.tensor(x)).numpy(), eager.numpy(), rtol=1e-5,
                               atol=1e-6)
    assert traced.experimental_get_tracing_count() == 1

    with eg.Graph().as_default():
        px = eg.placeholder(eg.float32, shape=(None, 5, 4), name="x")
        graph_layer = KINDS[kind](6, return_sequences=True)
        out = graph_layer(px)
        assert tuple(out.shape) == (None, 5, 6)
        grads = eg.gradients(eg.reduce_sum(out * out), graph_layer.trainable_variables)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for var, value in zip(graph_layer.variables, layer.get_weights()):
                var.load(value, sess)
            values = sess.run([out] + grads, {px: x})
    np.testing.assert_allclose(values[0], eager.numpy(), rtol=1e-5, atol=1e-6)
    for g_graph, g_eager in zip(values[1:], eager_grads):
        np.testing.assert_allclose(g_graph, g_eager, rtol=1e-4, atol=1e-5)


def test_graph_with_an_unknown_sequence_length_asks_for_one():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(None, None, 8))
        with pytest.raises(ValueError, match=r"known sequence length.*\(None, 20, 8\)"
                                             r".*eg.while_loop"):
            layers.LSTM(4)(x)


def test_sequential_lstm_learns():
    rng = np.random.default_rng(10)
    x = rng.normal(size=(64, 6, 2)).astype(np.float32)
    y = x[:, :, :1].sum(axis=1)                   # a sum over time: needs the memory
    eg.random.set_seed(2)
    model = eg.keras.Sequential([eg.keras.layers.LSTM(8, input_shape=(6, 2)),
                                 eg.keras.layers.Dense(1)])
    assert model.output_shape == (None, 1)
    model.compile(optimizer=eg.keras.optimizers.Adam(0.02), loss="mse")
    losses = model.fit(x, y, epochs=15, batch_size=16, verbose=0).history["loss"]
    assert losses[-1] < 0.3 * losses[0], losses
    assert model.predict(x[:5]).shape == (5, 1)


def test_stacked_layers_in_sequential_and_functional_models():
    model = eg.keras.Sequential([eg.keras.layers.GRU(4, return_sequences=True,
                                                     input_shape=(5, 3)),
                                 eg.keras.layers.SimpleRNN(2)])
    assert model.output_shape == (None, 2)
    assert model(eg.ones((7, 5, 3))).shape == (7, 2)
    inputs = eg.Input((5, 3))
    outputs = eg.keras.layers.Dense(1)(eg.keras.layers.LSTM(4, return_sequences=True)(inputs))
    functional = eg.keras.Model(inputs, outputs)
    assert functional(eg.ones((2, 5, 3))).shape == (2, 5, 1)
    x, h, c = eg.Input((5, 3)), eg.Input((4,)), eg.Input((4,))
    with_states = eg.keras.Model([x, h, c], eg.keras.layers.LSTM(4)(x, [h, c]))
    ones = eg.ones((2, 4))
    assert not np.allclose(with_states([eg.ones((2, 5, 3)), ones, ones]).numpy(),
                           with_states([eg.ones((2, 5, 3)), -ones, -ones]).numpy())


def test_rnn_wraps_any_keras_cell():
    x = np.random.default_rng(11).normal(size=(2, 3, 4))
    cell = layers.GRUCell(3, dtype="float64")
    out = layers.RNN(cell, return_sequences=True)(eg.tensor(x))
    expected = numpy_rnn("gru", cell.get_weights(), x, [np.zeros((2, 3))])[0]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-12)


# ----------------------------------------------------------------------------- errors
def test_errors_say_what_is_expected():
    with pytest.raises(ValueError, match=r"LSTM 'lstm\w*' expects inputs of shape \(batch, "
                                         r"time, features\), but got shape \(None, 8\) \(2-D\)"):
        layers.LSTM(4)(eg.ones((2, 8)))
    built = layers.GRU(4)
    built(eg.ones((2, 3, 8)))
    with pytest.raises(ValueError, match=r"\(2, 3, 4, 8\) \(4-D\)"):
        built(eg.ones((2, 3, 4, 8)))
    with pytest.raises(ValueError, match=r"initial_state must be 2 tensor\(s\).*LSTMCell.*"
                                         r"\[\(2, 4\), \(2, 4\)\].*got 1"):
        layers.LSTM(4)(eg.ones((2, 3, 8)), initial_state=[eg.zeros((2, 4))])
    with pytest.raises(ValueError, match=r"shapes \[\(2, 4\)\].*got 1 of shapes \[\(2, 5\)\]"):
        layers.GRU(4)(eg.ones((2, 3, 8)), initial_state=[eg.zeros((2, 5))])
    with pytest.raises(ValueError, match=r"got 1 of shapes \[\(3, 4\)\]"):
        layers.SimpleRNN(4)(eg.ones((2, 3, 8)), initial_state=eg.zeros((3, 4)))
    with pytest.raises(ValueError, match="units must be a positive int"):
        layers.GRUCell(0)
    with pytest.raises(TypeError, match="RNN needs a cell"):
        layers.RNN(layers.Dense(3))
    with pytest.raises(NotImplementedError, match="return_state=True"):
        layers.LSTM(3, return_state=True)(eg.Input((5, 2)))
    inputs, h = eg.Input((5, 2)), eg.Input((3,))
    with pytest.raises(NotImplementedError, match=r"positionally: layer\(x, \[h, c\]\)"):
        layers.GRU(3)(inputs, initial_state=[h])


def test_dropout_drops_the_same_inputs_at_every_step_and_only_while_training():
    """Keras's recurrent dropout on the inputs: one mask for the whole sequence."""
    features = 6
    layer = layers.SimpleRNN(features, activation="linear", use_bias=False, dropout=0.5,
                             return_sequences=True)
    x = eg.ones((4, 5, features))
    layer(x)                                            # built: h_t = x_t W + h W_h
    layer.set_weights([np.eye(features, dtype=np.float32),
                       np.zeros((features, features), np.float32)])
    dropped = layer(x, training=True).numpy()           # so h_t = x_t * mask
    assert set(np.unique(dropped)) == {0.0, 2.0}        # zeroed, or scaled by 1 / (1 - 0.5)
    np.testing.assert_array_equal(dropped, np.repeat(dropped[:, :1], 5, axis=1))
    np.testing.assert_array_equal(layer(x).numpy(), x.numpy())           # inference: none
    assert 0.2 < (dropped == 0).mean() < 0.8


def test_dropout_trains_and_recurrent_dropout_is_refused_clearly():
    model = eg.keras.Sequential([layers.LSTM(8, dropout=0.2, input_shape=(5, 3)),
                                 layers.Dense(1)])
    model.compile(optimizer="adam", loss="mse")
    x = np.random.default_rng(0).normal(size=(32, 5, 3)).astype(np.float32)
    history = model.fit(x, x[:, 0, :1], epochs=3, batch_size=8, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    with pytest.raises(NotImplementedError, match=r"LSTMCell: recurrent_dropout .* use "
                                                  r"dropout="):
        layers.LSTM(8, recurrent_dropout=0.1)
    with pytest.raises(ValueError, match=r"GRUCell: dropout must be in \[0, 1\), got 1"):
        layers.GRU(8, dropout=1)
