"""PyTorch's recurrent modules, nn.RNN / LSTM / GRU and nn.RNNCell / LSTMCell / GRUCell: with
torch's weights copied in, outputs, final states and the gradients w.r.t. the input, the initial
state and every parameter agree with torch's (float64); names, shapes, printing and the
initialisation are torch's. Without torch: finite differences, dropout only while training, a
small training run, and the errors."""
import math

import numpy as np
import pytest

import edugraph as eg
from edugraph import nn
from edugraph.nn.recurrent import gru_cell, lstm_cell, rnn_cell
from tests.gradcheck import gradcheck

rng = np.random.default_rng(5)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


def pair_of(torch, kind, *args, **settings):
    """Our module and torch's, in float64, ours holding torch's (random) weights."""
    theirs = getattr(torch.nn, kind)(*args, **settings).double()
    ours = getattr(nn, kind)(*args, **settings).double()
    ours.load_state_dict({k: v.detach().numpy() for k, v in theirs.state_dict().items()})
    return ours, theirs


def run_both(ours, theirs, torch, x, state, device="cpu:0"):
    """Both modules on ``x`` and ``state`` (h, a pair (h, c), or None); the loss weighs every
    output element differently. Returns, per library, the outputs, then the gradients w.r.t.
    the input, each part of the state and each parameter (by torch's names)."""
    results = []
    for lib, module in ((eg, ours), (torch, theirs)):
        where = {"device": device} if lib is eg else {}
        leaves = [lib.tensor(a, requires_grad=True, **where) for a in [x] + _parts(state)]
        given = None if state is None else \
            (tuple(leaves[1:]) if isinstance(state, tuple) else leaves[1])
        out = module(leaves[0], given) if given is not None else module(leaves[0])
        outs = _flat(out)
        loss = sum((o * lib.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(o.shape), **where)
                    ).sum() for o in outs)
        loss.backward()
        values = [o.detach().cpu().numpy() for o in outs]
        grads = [t.grad.cpu().numpy() for t in leaves]
        grads += [p.grad.cpu().numpy() for _, p in module.named_parameters()]
        results.append((values, grads))
    return results


def _flat(out):
    """output, h_n, c_n from ``(output, (h_n, c_n))``, or h from h..."""
    return [p for part in out for p in _flat(part)] if isinstance(out, tuple) else [out]


def _parts(state):
    return [] if state is None else list(state) if isinstance(state, tuple) else [state]


def assert_same(ours, theirs, names):
    assert len(ours) == len(theirs)
    for got, want, name in zip(ours, theirs, names):
        assert got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=name)


SEQUENCE_CASES = [
    dict(),
    dict(num_layers=2, bidirectional=True),
    dict(num_layers=2, batch_first=True),
    dict(bidirectional=True, batch_first=True),
    dict(bias=False, num_layers=2),
]


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("settings", SEQUENCE_CASES, ids=str)
@pytest.mark.parametrize("batched", [True, False], ids=["batch", "unbatched"])
@pytest.mark.parametrize("given_state", [False, True], ids=["zeros", "h0"])
def test_sequence_modules_match_torch(torch, kind, settings, batched, given_state):
    ours, theirs = pair_of(torch, kind, 3, 4, **settings)
    seq, batch = 5, 2
    x = rng.normal(size=((batch, seq, 3) if settings.get("batch_first") else (seq, batch, 3))
                   if batched else (seq, 3))
    state_shape = (settings.get("num_layers", 1) * (1 + settings.get("bidirectional", False)),
                   ) + ((batch,) if batched else ()) + (4,)
    state = None
    if given_state:
        state = rng.normal(size=state_shape)
        if kind == "LSTM":
            state = (state, rng.normal(size=state_shape))
    (values, grads), (want_values, want_grads) = run_both(ours, theirs, torch, x, state)
    assert_same(values, want_values, ["output", "h_n", "c_n"])
    names = ["input"] + ["h_0", "c_0"][:len(_parts(state))] + \
        [n for n, _ in theirs.named_parameters()]
    assert_same(grads, want_grads, names)


@pytest.mark.parametrize("given_state", [False, True], ids=["zeros", "h0"])
@pytest.mark.parametrize("batched", [True, False], ids=["batch", "unbatched"])
def test_relu_rnn_matches_torch(torch, given_state, batched):
    ours, theirs = pair_of(torch, "RNN", 3, 4, num_layers=2, nonlinearity="relu",
                           bidirectional=True)
    x = rng.normal(size=(6, 2, 3) if batched else (6, 3))
    state = rng.normal(size=(4, 2, 4) if batched else (4, 4)) if given_state else None
    (values, grads), (want_values, want_grads) = run_both(ours, theirs, torch, x, state)
    assert_same(values, want_values, ["output", "h_n"])
    assert_same(grads, want_grads, ["input", "h_0"] + [n for n, _ in theirs.named_parameters()])


def test_lstm_on_each_device_matches_torch(torch, device):
    ours, theirs = pair_of(torch, "LSTM", 3, 4, num_layers=2, bidirectional=True,
                           batch_first=True)
    ours.to(device)
    state = (rng.normal(size=(4, 2, 4)), rng.normal(size=(4, 2, 4)))
    (values, grads), (want_values, want_grads) = run_both(
        ours, theirs, torch, rng.normal(size=(2, 5, 3)), state, device)
    assert_same(values, want_values, ["output", "h_n", "c_n"])
    assert_same(grads, want_grads, ["input", "h_0", "c_0"] +
                [n for n, _ in theirs.named_parameters()])


CELL_CASES = [("RNNCell", {}), ("RNNCell", dict(nonlinearity="relu")),
              ("RNNCell", dict(bias=False)), ("LSTMCell", {}), ("LSTMCell", dict(bias=False)),
              ("GRUCell", {}), ("GRUCell", dict(bias=False))]


@pytest.mark.parametrize("kind, settings", CELL_CASES, ids=str)
@pytest.mark.parametrize("batched", [True, False], ids=["batch", "unbatched"])
@pytest.mark.parametrize("given_state", [False, True], ids=["zeros", "hx"])
def test_cells_match_torch(torch, kind, settings, batched, given_state):
    """A few steps, each feeding the next (so the gradients reach back through them)."""
    ours, theirs = pair_of(torch, kind, 3, 4, **settings)
    xs = rng.normal(size=(3, 2, 3) if batched else (3, 3))
    state_shape = (2, 4) if batched else (4,)
    state = None
    if given_state:
        state = rng.normal(size=state_shape)
        if kind == "LSTMCell":
            state = (state, rng.normal(size=state_shape))

    class Steps:                    # the cell three times, one step per row of xs
        def __init__(self, cell):
            self.cell = cell

        def __call__(self, x, hx=None):
            for t in range(3):
                hx = self.cell(x[t], hx)
            return hx

        def named_parameters(self):
            return self.cell.named_parameters()

    (values, grads), (want_values, want_grads) = run_both(Steps(ours), Steps(theirs), torch,
                                                          xs, state)
    assert_same(values, want_values, ["h", "c"])
    assert_same(grads, want_grads, ["input"] + ["h", "c"][:len(_parts(state))] +
                [n for n, _ in theirs.named_parameters()])


MODULES = [("RNN", (3, 4)), ("RNN", (3, 4, 2, "relu", False, True, 0.25, True)),
           ("LSTM", (3, 4)), ("LSTM", (3, 4, 3, True, False, 0.0, True)),
           ("GRU", (2, 5)), ("GRU", (2, 5, 2, False, True, 0.5)),
           ("RNNCell", (3, 4)), ("RNNCell", (3, 4, False, "relu")),
           ("LSTMCell", (3, 4)), ("LSTMCell", (3, 4, False)),
           ("GRUCell", (3, 4)), ("GRUCell", (3, 4, False))]


@pytest.mark.parametrize("kind, args", MODULES, ids=str)
def test_names_shapes_printing_and_state_dicts_are_torchs(torch, kind, args):
    theirs, ours = getattr(torch.nn, kind)(*args), getattr(nn, kind)(*args)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert repr(ours) == repr(theirs)
    assert all(p.dtype == eg.float32 for p in ours.parameters())
    theirs.load_state_dict({k: torch.tensor(np.array(v.numpy()))      # and back into torch
                            for k, v in ours.state_dict().items()})
    for name, value in theirs.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), ours.state_dict()[name].numpy())


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"])
def test_parameters_start_uniform_within_one_over_root_hidden_size(kind):
    module = getattr(nn, kind)(30, 50)
    bound = 1 / math.sqrt(50)
    for name, p in module.named_parameters():
        assert bound >= np.abs(p.numpy()).max() > 0.8 * bound, name
    pooled = np.concatenate([p.numpy().ravel() for p in module.parameters()])
    assert abs(pooled.mean()) < 0.05 * bound
    assert pooled.std() == pytest.approx(bound / math.sqrt(3), rel=0.05)    # uniform's
    before = [p.numpy().copy() for p in module.parameters()]
    module.reset_parameters()
    assert all(not np.array_equal(a, p.numpy()) for a, p in zip(before, module.parameters()))


# ----------------------------------------------------------------------------- without torch
@pytest.mark.parametrize("cell, gates", [(rnn_cell, 1), (lstm_cell, 4), (gru_cell, 3)])
def test_cell_functions_pass_a_finite_difference_check(cell, gates):
    hidden, inputs = 3, 2
    args = [rng.normal(size=(2, inputs)), rng.normal(size=(2, hidden)),
            rng.normal(size=(gates * hidden, inputs)), rng.normal(size=(gates * hidden, hidden)),
            rng.normal(size=gates * hidden), rng.normal(size=gates * hidden)]
    if cell is lstm_cell:
        def step(x, h, c, *weights):        # both parts of the new state, in one tensor
            return eg.concat(list(lstm_cell(x, (h, c), *weights)), axis=1)
        gradcheck(step, args[0], args[1], rng.normal(size=(2, hidden)), *args[2:],
                  name="lstm_cell")
    else:
        gradcheck(cell, *args, name=cell.__name__)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_two_layer_bidirectional_gradients_pass_a_finite_difference_check(kind):
    """Gradients w.r.t. the input, the initial state and every parameter (backpropagation
    through time, both directions, both layers) against central differences."""
    module = getattr(nn, kind)(2, 2, num_layers=2, bidirectional=True).double()
    x = rng.normal(size=(3, 2, 2))
    h0 = rng.normal(size=(4, 2, 2))
    weights = [rng.uniform(0.5, 1.5, shape) for shape in [(3, 2, 4), (4, 2, 2), (4, 2, 2)]]

    def loss(x, h0, c0=None):
        out, state = module(x, h0 if c0 is None else (h0, c0))
        parts = [out] + (list(state) if kind == "LSTM" else [state])
        return sum((p * eg.tensor(w)).sum() for p, w in zip(parts, weights))

    extra = [rng.normal(size=(4, 2, 2))] if kind == "LSTM" else []     # c_0
    gradcheck(loss, x, h0, *extra, name=kind)
    inputs = [eg.tensor(a) for a in [x, h0] + extra]
    module.zero_grad()
    loss(*inputs).backward()
    eps = 1e-6
    for name, p in module.named_parameters():
        analytic, values = p.grad.numpy(), p.numpy().copy()
        for index in np.ndindex(values.shape):
            nudged = []
            for step in (eps, -eps):
                moved = values.copy()
                moved[index] += step
                p.assign(moved)
                with eg.no_grad():
                    nudged.append(loss(*inputs).item())
            p.assign(values)
            numeric = (nudged[0] - nudged[1]) / (2 * eps)
            assert analytic[index] == pytest.approx(numeric, rel=1e-5, abs=1e-6), (name, index)


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_dropout_between_layers_only_while_training(kind):
    module = getattr(nn, kind)(3, 8, num_layers=2, dropout=0.5).double()
    plain = getattr(nn, kind)(3, 8, num_layers=2).double()
    plain.load_state_dict(module.state_dict())
    x = eg.tensor(rng.normal(size=(4, 5, 3)))
    want = plain(x)[0].numpy()
    trained = [module(x)[0].numpy() for _ in range(2)]
    assert not np.allclose(trained[0], want) and not np.allclose(trained[0], trained[1])
    module.eval()
    np.testing.assert_array_equal(module(x)[0].numpy(), want)
    np.testing.assert_array_equal(module(x, training=False)[0].numpy(), want)
    module.train()
    np.testing.assert_array_equal(module(x, training=False)[0].numpy(), want)


def test_dropout_with_one_layer_warns_as_torchs_does():
    with pytest.warns(UserWarning, match="num_layers=1"):
        nn.GRU(3, 4, dropout=0.2)


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_adam_trains_a_recurrent_model_to_remember_the_first_step(kind):
    """The target is the first number of each sequence, read after the last step: the state
    must carry it along (losses are averaged over a few steps, which are noisy)."""
    eg.manual_seed(0)

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = getattr(nn, kind)(1, 16, batch_first=True)
            self.head = nn.Linear(16, 1)

        def forward(self, x):
            output, _ = self.rnn(x)
            return self.head(output[:, -1])

    net = Net()
    optimizer = eg.optim.Adam(net.parameters(), lr=0.02)
    data = np.random.default_rng(0)
    losses = []
    for _ in range(120):
        x = data.uniform(-1, 1, size=(32, 6, 1)).astype(np.float32)
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(net(eg.tensor(x)), eg.tensor(x[:, 0]))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert np.mean(losses[-10:]) < 0.1 * np.mean(losses[:10])


def test_float32_by_default_and_shapes():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    output, (h_n, c_n) = lstm(eg.randn(2, 5, 3))
    assert output.shape == (2, 5, 8) and h_n.shape == c_n.shape == (4, 2, 4)
    assert output.dtype == eg.float32
    h, c = nn.LSTMCell(3, 4)(eg.randn(3))
    assert h.shape == c.shape == (4,)


def test_wrong_input_rank_names_the_layouts():
    with pytest.raises(eg.errors.ShapeError, match=r"3-D input, \(seq, batch, input_size\).*"
                                                   r"2-D one without the batch dimension; "
                                                   r"got shape \(2, 3, 4, 5\)"):
        nn.GRU(5, 4)(eg.randn(2, 3, 4, 5))
    with pytest.raises(eg.errors.ShapeError, match=r"\(batch, seq, input_size\)"):
        nn.RNN(5, 4, batch_first=True)(eg.randn(5))
    with pytest.raises(eg.errors.ShapeError, match=r"nn.LSTMCell '.*' expects a 2-D input"):
        nn.LSTMCell(5, 4)(eg.randn(1, 2, 5))


def test_wrong_number_of_features_names_both():
    with pytest.raises(eg.errors.ShapeError, match=r"nn.LSTM '.*' was made for input_size=3 "
                                                   r"features, but the input of shape "
                                                   r"\(5, 2, 6\) has 6"):
        nn.LSTM(3, 4)(eg.randn(5, 2, 6))
    with pytest.raises(eg.errors.ShapeError, match="input_size=3 .* has 2"):
        nn.GRUCell(3, 4)(eg.randn(2, 2))


def test_wrong_initial_states_say_the_expected_shape():
    with pytest.raises(eg.errors.ShapeError, match=r"h_0 must have shape \(4, 2, 5\), got "
                                                   r"\(2, 2, 5\)"):
        nn.GRU(3, 5, num_layers=2, bidirectional=True)(eg.randn(6, 2, 3), eg.zeros(2, 2, 5))
    with pytest.raises(eg.errors.ShapeError, match=r"c_0 must have shape "
                                                   r"\(1, 2, 5\), got \(1, 2, 4\)"):
        nn.LSTM(3, 5)(eg.randn(6, 2, 3), (eg.zeros(1, 2, 5), eg.zeros(1, 2, 4)))
    with pytest.raises(eg.errors.ShapeError, match=r"must have shape \(1, 5\), got \(1, 1, 5\)"):
        nn.RNN(3, 5)(eg.randn(6, 3), eg.zeros(1, 1, 5))         # unbatched: no batch in h_0
    with pytest.raises(eg.errors.ShapeError, match=r"h must have shape \(2, 5\), got \(5,\)"):
        nn.RNNCell(3, 5)(eg.randn(2, 3), eg.zeros(5))
    with pytest.raises(TypeError, match=r"pair \(h, c\)"):
        nn.LSTMCell(3, 5)(eg.randn(2, 3), eg.zeros(2, 5))


def test_unsupported_and_invalid_settings():
    with pytest.raises(NotImplementedError, match="proj_size=2"):
        nn.LSTM(3, 5, proj_size=2)
    for make in (lambda: nn.RNN(3, 5, nonlinearity="sigmoid"),
                 lambda: nn.RNNCell(3, 5, nonlinearity="gelu")):
        with pytest.raises(ValueError, match="unknown nonlinearity .*'tanh' or 'relu'"):
            make()
    with pytest.raises(ValueError, match=r"dropout .* \[0, 1\), got 1.5"):
        nn.LSTM(3, 5, num_layers=2, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be a whole number above 0, got 0"):
        nn.GRU(3, 0)
    with pytest.raises(ValueError, match="num_layers must be a whole number above 0"):
        nn.RNN(3, 4, num_layers=0)
