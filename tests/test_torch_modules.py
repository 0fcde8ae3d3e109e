"""PyTorch's modules with PyTorch's parameters: nn.Linear, Conv2d and their Lazy forms with
``weight`` in torch's layout, batch norm with torch's running statistics, nn.Parameter,
nn.init, ModuleList, and Module.apply / children / named_modules / register_buffer. Values,
state dicts and gradients are checked against torch."""
import math

import numpy as np
import pytest

import edugraph as eg
from edugraph import nn

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)


def load_into_torch(ours, theirs):
    """``theirs`` with ``ours``'s values: the same names and layouts, so the state dict loads
    as it is."""
    theirs.load_state_dict({name: torch.tensor(np.array(t.numpy()))
                            for name, t in ours.state_dict().items()})
    return theirs


def model_pair():
    def build(lib):
        m = lib.nn
        return m.Sequential(m.Conv2d(2, 3, 3, padding=1), m.BatchNorm2d(3), m.ReLU(),
                            m.MaxPool2d(2), m.Flatten(), m.Linear(3 * 2 * 2, 4),
                            m.BatchNorm1d(4), m.Linear(4, 2)).double()
    ours = build(eg)
    return ours, load_into_torch(ours, build(torch))


@pytest.mark.parametrize("steps", [1, 3])
def test_a_cnn_with_batch_norm_trains_as_torchs_does(steps, device):
    """Outputs, gradients, running statistics (torch keeps the unbiased batch variance) and
    num_batches_tracked agree after each SGD step, in training and in eval mode."""
    ours, theirs = model_pair()
    ours.to(device)
    x = rng.normal(size=(5, 2, 4, 4))
    target = rng.normal(size=(5, 2))
    optimizers = [lib.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
                  for lib, m in ((eg, ours), (torch, theirs))]
    for _ in range(steps):
        losses = []
        for lib, model, optimizer in zip((eg, torch), (ours, theirs), optimizers):
            where = device if lib is eg else "cpu"
            optimizer.zero_grad()
            out = model(lib.tensor(x, device=where))
            loss = ((out - lib.tensor(target, device=where)) ** 2).mean()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        assert losses[0] == pytest.approx(losses[1], rel=1e-12)
    for name, value in theirs.state_dict().items():
        np.testing.assert_allclose(ours.state_dict()[name].numpy(), value.numpy(), rtol=1e-10,
                                   atol=1e-12, err_msg=name)
    assert ours.state_dict()["1.num_batches_tracked"].item() == steps
    ours.eval(), theirs.eval()
    x_test = rng.normal(size=(3, 2, 4, 4))
    np.testing.assert_allclose(ours(eg.tensor(x_test, device=device)).numpy(),
                               theirs(torch.tensor(x_test)).detach().numpy(), rtol=1e-10)


@pytest.mark.parametrize("momentum, affine, track, bias", [
    (None, True, True, True), (0.3, False, True, True), (0.1, True, False, True),
    (0.1, True, True, False)])
def test_batch_norm_options_match_torch(momentum, affine, track, bias):
    x = [rng.normal(size=(4, 3, 5)) for _ in range(3)]
    results = []
    for lib in (eg, torch):
        bn = lib.nn.BatchNorm1d(3, momentum=momentum, affine=affine, track_running_stats=track,
                                bias=bias).double()
        outs = [bn(lib.tensor(batch)).detach().numpy() for batch in x]
        bn.eval()
        outs.append(bn(lib.tensor(x[0])).detach().numpy())
        results.append((outs, sorted(bn.state_dict()), repr(bn)))
    for got, want in zip(results[0][0], results[1][0]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert results[0][1:] == results[1][1:]


def test_batch_norm_gradients_match_torch_and_finite_differences():
    from gradcheck import gradcheck
    x = rng.normal(size=(4, 3, 2, 2))
    bn = nn.BatchNorm2d(3).double()
    nn.init.normal_(bn.weight), nn.init.normal_(bn.bias)
    upstream = rng.normal(size=x.shape)
    gradcheck(lambda t: bn(t) * eg.tensor(upstream), x, name="BatchNorm2d")
    theirs = load_into_torch(bn, torch.nn.BatchNorm2d(3).double())
    bn.zero_grad()                          # (the checker's backward passes reached it)
    ex, tx = eg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (bn(ex) * eg.tensor(upstream)).sum().backward()
    (theirs(tx) * torch.tensor(upstream)).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(bn.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10)


def test_lazy_modules_find_their_inputs_on_the_first_call():
    net = nn.Sequential(nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
                        nn.MaxPool2d(2), nn.Flatten(), nn.LazyBatchNorm1d(), nn.LazyLinear(10))
    assert net.parameters() == []
    out = net(eg.randn(2, 1, 8, 8))
    assert out.shape == (2, 10)
    assert [(name, tuple(p.shape)) for name, p in net.named_parameters()] == [
        ("0.weight", (6, 1, 5, 5)), ("0.bias", (6,)), ("4.weight", (96,)), ("4.bias", (96,)),
        ("5.weight", (10, 96)), ("5.bias", (10,))]
    assert repr(net[5]) == "Linear(in_features=96, out_features=10, bias=True)"
    assert [type(m) for m in (net[0], net[4], net[5])] == [nn.Conv2d, nn.BatchNorm1d, nn.Linear]


def test_parameters_are_parameters_and_print_as_torchs():
    layer = nn.Linear(3, 2, bias=False)
    assert isinstance(layer.weight, nn.Parameter) and layer.bias is None
    assert layer.weight.name == f"{layer.name}/weight"      # in optimizer errors
    p = nn.Parameter(eg.tensor([1.0, 2.0]))
    assert p.requires_grad and p.is_leaf and isinstance(p, eg.Variable)
    assert repr(p).startswith("Parameter containing:\ntensor([1., 2.]")
    assert not nn.Parameter(eg.ones(2), requires_grad=False).requires_grad

    class Scaled(nn.Module):                # the custom-layer pattern of every course
        def __init__(self, units):
            super().__init__()
            self.weight = nn.Parameter(eg.randn(units, 1))
            self.register_buffer("calls", eg.tensor(0))

        def forward(self, x):
            self.calls += 1
            return x @ self.weight

    m = Scaled(3)
    with eg.no_grad():
        m(eg.ones((2, 3)))
    assert [n for n, _ in m.named_parameters()] == ["weight"]
    assert list(m.state_dict()) == ["weight", "calls"] and m.calls.item() == 1


def test_init_functions_follow_torchs_formulas():
    """Each fills in place, under no_grad, with torch's bounds and standard deviations (fans
    from torch's layouts: (out, in) and (out, in, kH, kW))."""
    conv = nn.Conv2d(20, 30, 5)             # fan_in 500, fan_out 750
    weight = conv.weight
    cases = [(nn.init.xavier_uniform_, {}, "uniform", math.sqrt(6 / 1250)),
             (nn.init.xavier_normal_, {"gain": 2.0}, "normal", 2 * math.sqrt(2 / 1250)),
             (nn.init.kaiming_uniform_, {"nonlinearity": "relu"}, "uniform",
              math.sqrt(3) * math.sqrt(2) / math.sqrt(500)),
             (nn.init.kaiming_normal_, {"mode": "fan_out", "nonlinearity": "relu"}, "normal",
              math.sqrt(2) / math.sqrt(750)),
             (nn.init.kaiming_uniform_, {"a": math.sqrt(5)}, "uniform", 1 / math.sqrt(500)),
             (nn.init.normal_, {"std": 0.01}, "normal", 0.01),
             (nn.init.uniform_, {"a": -0.2, "b": 0.2}, "uniform", 0.2)]
    for fill, kwargs, kind, scale in cases:
        assert fill(weight, **kwargs) is weight and conv.weight is weight
        values = weight.numpy()
        if kind == "uniform":
            assert np.abs(values).max() <= scale and np.abs(values).max() > 0.99 * scale
        else:
            assert values.std() == pytest.approx(scale, rel=0.03)
        assert abs(values.mean()) < scale / 10
    nn.init.constant_(conv.bias, 0.5)
    np.testing.assert_array_equal(conv.bias.numpy(), np.full(30, 0.5, np.float32))
    nn.init.zeros_(conv.bias), nn.init.ones_(weight)
    assert not conv.bias.numpy().any() and (weight.numpy() == 1).all()
    for name in ("linear", "sigmoid", "tanh", "relu", "selu"):
        assert nn.init.calculate_gain(name) == pytest.approx(torch.nn.init.calculate_gain(name))
    assert nn.init.calculate_gain("leaky_relu", 0.2) == \
        pytest.approx(torch.nn.init.calculate_gain("leaky_relu", 0.2))
    with pytest.raises(ValueError, match=r"xavier_uniform_ needs the fans of a weight with at "
                                         r"least 2 dimensions.*shape \(30,\)"):
        nn.init.xavier_uniform_(conv.bias)
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out'"):
        nn.init.kaiming_normal_(weight, mode="fan_avg")


def test_apply_children_named_modules_and_module_list():
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 8), nn.ReLU()),
                        nn.Linear(8, 1))
    seen = []

    def init_weights(m):                    # d2l's and the tutorials' idiom
        seen.append(type(m).__name__)
        if type(m) == nn.Linear:
            nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)
    assert net.apply(init_weights) is net
    assert seen == ["Linear", "ReLU", "Linear", "ReLU", "Sequential", "Linear", "Sequential"]
    assert all(not m.bias.numpy().any() for m in net.modules() if isinstance(m, nn.Linear))
    assert [type(m).__name__ for m in net.children()] == ["Linear", "ReLU", "Sequential",
                                                          "Linear"]
    assert [name for name, _ in net.named_modules()] == ["", "0", "1", "2", "2.0", "2.1", "3"]
    assert [name for name, _ in net.named_children()] == ["0", "1", "2", "3"]

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.ModuleList([nn.Linear(3, 3) for _ in range(2)])
            self.blocks.append(nn.Linear(3, 1))

        def forward(self, x):
            for block in self.blocks:
                x = block(x)
            return x
    stack = Stack()
    assert len(stack.blocks) == 3 and stack.blocks[-1].weight.shape == (1, 3)
    assert [n for n, _ in stack.named_parameters()][-2:] == ["blocks.2.weight", "blocks.2.bias"]
    assert isinstance(stack.blocks[:2], nn.ModuleList) and len(stack.blocks[:2]) == 2
    assert stack(eg.ones((2, 3))).shape == (2, 1)
    listed = [repr(lib.nn.ModuleList([lib.nn.Linear(3, 3), lib.nn.Linear(3, 3), lib.nn.ReLU(),
                                      lib.nn.Sequential(lib.nn.Linear(3, 1))]))
              for lib in (eg, torch)]
    assert listed[0] == listed[1] and "(0-1): 2 x Linear" in listed[0]  # a run: one line
    assert repr(eg.nn.ModuleList()) == repr(torch.nn.ModuleList()) == "ModuleList()"


def test_a_new_module_starts_in_training_mode_as_in_pytorch():
    """Every PyTorch module starts in training mode, one derived from nn.Module too, so that
    F.dropout(x, p, training=self.training) drops from the start. A subclass started with
    training False (the flag of Keras's layers, which share edugraph's layer class), and
    dropped nothing until .train()."""
    def net_class(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = lib.nn.Linear(4, 4)
                self.drop = lib.nn.Dropout(0.5)

            def forward(self, x):
                return lib.nn.functional.dropout(self.drop(self.fc(x)), 0.5,
                                                 training=self.training)
        return Net
    ours, theirs = net_class(eg)(), net_class(torch)()
    assert ours.training is theirs.training is True
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    assert (ours(eg.ones((8, 4))).numpy() == 0).any()
    ours.drop.eval()                    # one module's own mode: the others keep theirs
    theirs.drop.eval()
    assert [m.training for m in ours.modules()] == [m.training for m in theirs.modules()]
    assert ours.eval().training is theirs.eval().training is False
    x = eg.ones((8, 4))
    np.testing.assert_array_equal(ours(x).numpy(), ours(x).numpy())
    assert not eg.layers.Dense(2).training          # Keras's layers: told per call instead
    assert not isinstance(eg.layers.Dense(2), nn.Module)


def _frozen_pair():
    """A model of each library with its embedding frozen the PyTorch way."""
    def build(lib):
        net = lib.nn.Sequential(lib.nn.Embedding(5, 3), lib.nn.Flatten(), lib.nn.Linear(6, 2),
                                lib.nn.BatchNorm1d(2))
        net[0].weight.requires_grad_(False)
        return net
    return build(eg), build(torch)


def test_frozen_parameters_are_parameters_but_not_trainable():
    """PyTorch lists a parameter frozen with requires_grad_(False) in parameters(); Keras's
    trainable_weights and summary() leave it out, as a layer with trainable=False. They
    listed it as trainable, and summary() counted it so."""
    ours, theirs = _frozen_pair()
    assert [(n, tuple(p.shape), p.requires_grad) for n, p in ours.named_parameters()] == \
        [(n, tuple(p.shape), p.requires_grad) for n, p in theirs.named_parameters()]
    assert [tuple(v.shape) for v in ours.trainable_variables] == [(2, 6), (2,), (2,), (2,)]
    lines = []
    ours(eg.tensor([[0, 1], [2, 3]]))                 # (built by a call, as nn.Sequential is)
    ours.summary(print_fn=lines.append)
    assert "Trainable params: 18" in lines[0] and "Non-trainable params: 20" in lines[0]
    torch_count = sum(p.numel() for p in theirs.parameters() if p.requires_grad)
    assert torch_count == sum(v.size for v in ours.trainable_variables)


def test_requires_grad_on_a_module_and_from_pretrained_as_in_pytorch():
    """Module.requires_grad_(flag) sets every parameter's flag (not the buffers') and returns
    the module; nn.Embedding.from_pretrained(table, freeze=True) starts from the table, frozen
    unless freeze=False. A module's `trainable` attribute is Keras's: PyTorch ignores it, and
    parameters() lists the same parameters with it (it left them out)."""
    ours, theirs = _frozen_pair()
    for lib_net in (ours, theirs):
        assert lib_net[3].requires_grad_(False) is lib_net[3]
    assert [p.requires_grad for p in ours.parameters()] == \
        [p.requires_grad for p in theirs.parameters()] == [False, True, True, False, False]
    assert not any(b.requires_grad for b in ours[3].variables if not b.trainable)
    ours.requires_grad_()
    assert all(p.requires_grad for p in ours.parameters())
    table = rng.normal(size=(4, 3))
    for freeze in (True, False):
        ours_e = nn.Embedding.from_pretrained(eg.tensor(table), freeze=freeze)
        theirs_e = torch.nn.Embedding.from_pretrained(torch.tensor(table), freeze=freeze)
        assert ours_e.weight.requires_grad is theirs_e.weight.requires_grad is (not freeze)
        assert ours_e.weight.dtype == np.float64 and repr(ours_e) == repr(theirs_e)
        np.testing.assert_array_equal(ours_e(eg.tensor([3, 1])).numpy(),
                                      theirs_e(torch.tensor([3, 1])).detach().numpy())
    with pytest.raises(ValueError, match="2-D table"):
        nn.Embedding.from_pretrained(eg.ones(3))
    ours[2].trainable = False
    assert len(ours.parameters()) == 5 and len(ours.trainable_variables) == 3


def test_module_errors_say_what_to_do():
    with pytest.raises(eg.errors.ShapeError, match=r"BatchNorm2d 'batch_norm2d\w*' expects 4-D "
                                                   r"input with the channels in dimension 1, "
                                                   r"got shape \(5, 3\)"):
        nn.BatchNorm2d(3)(eg.ones((5, 3)))
    with pytest.raises(ValueError, match=r"batch_norm: training needs more than one value per "
                                         r"channel.*shape \(1, 3\).*model.eval\(\)"):
        nn.BatchNorm1d(3)(eg.ones((1, 3)))
    with pytest.raises(eg.errors.ShapeError, match=r"linear: the input of shape \(2, 5\) has 5 "
                                                   r"features, but the weight of shape \(2, 3\)"):
        nn.Linear(3, 2)(eg.ones((2, 5)))
    with pytest.raises(ValueError, match=r"LazyLinear 'lazy_linear\w*': the last dimension of "
                                         r"the input must be known"):
        nn.LazyLinear(3).build_for((None, None))


@pytest.mark.parametrize("size", [(1, 1), 3, (2, 4), (None, 2), (7, 5), (5, 3)])
def test_adaptive_avg_pool2d_matches_torch_for_even_and_uneven_windows(size, device):
    x = rng.normal(size=(2, 3, 7, 5))
    weights = rng.normal(size=torch.nn.functional.adaptive_avg_pool2d(torch.tensor(x),
                                                                      size).shape)
    ours, theirs = eg.tensor(x, requires_grad=True, device=device), \
        torch.tensor(x, requires_grad=True)
    module = nn.AdaptiveAvgPool2d(size)
    y = module(ours)
    (y * eg.tensor(weights, device=device)).sum().backward()
    want = torch.nn.AdaptiveAvgPool2d(size)(theirs)
    (want * torch.tensor(weights)).sum().backward()
    np.testing.assert_allclose(y.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert repr(module) == repr(torch.nn.AdaptiveAvgPool2d(size))
    assert module.compute_output_shape((None, 3, 7, 5)) == (None, 3) + tuple(want.shape[2:])
