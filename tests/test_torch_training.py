"""PyTorch's training API: eg.optim against torch.optim step by step, nn.Sequential, the loss
modules and nn.functional against PyTorch, Module.to, and PyTorch's tutorials run as written
with ``torch.`` replaced by ``eg.``."""
import math
import re
from collections import OrderedDict

import numpy as np
import pytest

import edugraph as eg
import edugraph.nn.functional as F

torch = pytest.importorskip("torch")
TF = torch.nn.functional

rng = np.random.default_rng(3)
X, TARGET = rng.normal(size=(5, 3)), rng.normal(size=(5, 4))
W0, B0, C0 = rng.normal(size=(3, 4)), rng.normal(size=(4,)), rng.normal(size=(2,))
STEPS = 6


# ----------------------------------------------------------------------------- optimizers
def parameters(lib, device):
    """w and c as edugraph Variables, b as a plain tensor that requires grad (both kinds of
    parameter PyTorch code passes); in torch, three leaf tensors."""
    if lib is torch:
        return [torch.tensor(v, requires_grad=True) for v in (W0, B0, C0)]
    with eg.device(device):
        w, c = eg.Variable(W0, name="w"), eg.Variable(C0, name="c")
    return [w, eg.tensor(B0, device=device, requires_grad=True), c]


def loss_at(lib, params, step, device):
    """A non-quadratic loss; c joins it only from the second step, so at the first step its
    grad is None and the optimizer must skip it (its own step count starts later)."""
    w, b, c = params
    x, target = (lib.tensor(v, device=device if lib is eg else "cpu") for v in (X, TARGET))
    loss = ((x.mm(w) + b).tanh() - target).pow(2).sum()
    return loss + (c * c * c).sum() if step > 0 else loss


def trajectory(lib, make, device, groups=None):
    """The parameters after each step; the learning rate halves after the third step."""
    params = parameters(lib, device)
    optimizer = make(lib.optim, groups(params) if groups else params)
    history = []
    for step in range(STEPS):
        optimizer.zero_grad()
        loss_at(lib, params, step, device).backward()
        optimizer.step()
        if step == 2:
            for g in optimizer.param_groups:
                g["lr"] = g["lr"] / 2
        history.append([np.array(p.detach().cpu().numpy()) for p in params])
    return history, params


OPTIMIZERS = {
    "sgd": lambda optim, p: optim.SGD(p, lr=0.1),
    "sgd_momentum": lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.9),
    "sgd_nesterov": lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
    "sgd_weight_decay": lambda optim, p: optim.SGD(p, lr=0.1, weight_decay=0.3),
    "sgd_dampening": lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.9, dampening=0.5),
    "sgd_all": lambda optim, p: optim.SGD(p, 0.1, 0.8, 0.2, 0.05),
    "adam": lambda optim, p: optim.Adam(p, lr=0.05),
    "adam_large_eps": lambda optim, p: optim.Adam(p, lr=0.05, betas=(0.8, 0.99), eps=0.1),
    "adam_weight_decay": lambda optim, p: optim.Adam(p, lr=0.05, weight_decay=0.3),
    "adamw": lambda optim, p: optim.AdamW(p, lr=0.05, weight_decay=0.3),
    "rmsprop": lambda optim, p: optim.RMSprop(p, lr=0.01),
    "rmsprop_momentum_centered": lambda optim, p: optim.RMSprop(
        p, lr=0.01, alpha=0.9, eps=0.01, momentum=0.8, centered=True),
    "rmsprop_weight_decay": lambda optim, p: optim.RMSprop(p, lr=0.01, weight_decay=0.3,
                                                           momentum=0.5),
    "adagrad": lambda optim, p: optim.Adagrad(p, lr=0.1),
    "adagrad_lr_decay": lambda optim, p: optim.Adagrad(
        p, lr=0.1, lr_decay=0.3, weight_decay=0.1, initial_accumulator_value=0.2, eps=0.01),
}


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_each_step_matches_torch_optim(case, device):
    ours, ours_params = trajectory(eg, OPTIMIZERS[case], device)
    theirs, _ = trajectory(torch, OPTIMIZERS[case], device)
    for step, (got, want) in enumerate(zip(ours, theirs)):
        for name, g, t in zip("wbc", got, want):
            np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-12,
                                       err_msg=f"{case}: {name} after step {step + 1}")
    np.testing.assert_array_equal(ours[0][2], C0)       # no gradient at step 1: skipped
    assert not np.array_equal(ours[1][2], C0)
    assert isinstance(ours_params[0], eg.Variable) and ours_params[0].device.name == device


def test_float32_adam_agrees_with_torch_to_float32_rounding():
    """PyTorch computes Adam's bias corrections 1 − βᵗ as Python floats; in float32,
    1 − 0.999 keeps only 4 digits, which would change each step by ~1e-4 of lr."""
    data = np.random.default_rng(5)
    w0 = data.uniform(-1, 1, size=200).astype(np.float32)
    grads = data.normal(size=(30, 200)).astype(np.float32)
    histories = []
    for lib in (eg, torch):
        w = lib.tensor(w0, requires_grad=True)
        optimizer = lib.optim.Adam([w], lr=1e-2)
        history = []
        for g in grads:
            w.grad = lib.tensor(g)
            optimizer.step()
            history.append(np.array(w.detach().numpy()))
        histories.append(history)
    assert histories[0][0].dtype == np.float32
    np.testing.assert_allclose(histories[0], histories[1], rtol=0, atol=3e-7)


def test_param_groups_have_their_own_settings_as_in_torch(device):
    def groups(params):
        return [{"params": params[:2]}, {"params": [params[2]], "lr": 0.01, "momentum": 0.5}]
    make = lambda optim, p: optim.SGD(p, lr=0.1, momentum=0.9)   # noqa: E731
    ours, _ = trajectory(eg, make, device, groups)
    theirs, _ = trajectory(torch, make, device, groups)
    np.testing.assert_allclose(np.concatenate([np.ravel(p) for s in ours for p in s]),
                               np.concatenate([np.ravel(p) for s in theirs for p in s]),
                               rtol=1e-10)


def test_step_with_a_closure_returns_its_loss_as_in_torch():
    results = []
    for lib in (eg, torch):
        params = parameters(lib, "cpu:0")
        optimizer = lib.optim.Adam(params, lr=0.1)

        def closure():
            optimizer.zero_grad()
            loss = loss_at(lib, params, 1, "cpu:0")
            loss.backward()
            return loss
        losses = [optimizer.step(closure).item() for _ in range(3)]
        results.append((losses, params[0].detach().numpy().copy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)


def test_the_update_is_in_place_and_a_graph_recorded_before_it_refuses_backward():
    """The model keeps its parameter objects; a backward through the old forward pass would
    use the new weights where it needs the old ones (the second layer's weight, to send the
    gradient back to the first), so it is refused, as PyTorch refuses it. (retain_graph=True
    keeps the graph for that second backward(), which would be refused as a second walk.)"""
    model = eg.nn.Sequential(eg.nn.Linear(3, 4), eg.nn.ReLU(), eg.nn.Linear(4, 2))
    plain = eg.randn(2, requires_grad=True)
    params = list(model.parameters()) + [plain]
    optimizer = eg.optim.SGD(params, lr=0.1)
    loss = (model(eg.ones((5, 3))) + plain).sum()
    loss.backward(retain_graph=True)
    before = [p.numpy().copy() for p in params]
    optimizer.step()
    assert all(a is b for a, b in zip(model.parameters(), params))
    assert model[2].weight is params[2] and isinstance(params[2], eg.nn.Parameter)
    for p, old in zip(params, before):
        np.testing.assert_allclose(p.detach().numpy(), old - 0.1 * p.grad.numpy())
    with pytest.raises(eg.errors.GradientError, match="view of variable 'linear\\w*/weight'.*"
                                                      "changed in place"):
        loss.backward()
    for p in params:                    # also when only the plain tensor changed
        p.grad = None
    loss = (plain * plain).sum()
    loss.backward(retain_graph=True)
    eg.optim.SGD([plain], lr=0.1).step()
    with pytest.raises(eg.errors.GradientError, match="changed in place"):
        loss.backward()


def test_zero_grad_sets_none_or_zeros_and_parameters_without_grad_are_skipped():
    w, v = eg.Variable([1.0, 2.0]), eg.Variable([3.0])
    optimizer = eg.optim.SGD(p for p in (w, v))         # a generator, as model.parameters()
    (w * w).sum().backward()
    optimizer.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(w.grad.numpy(), [0.0, 0.0])
    assert v.grad is None
    optimizer.step()                    # a zero gradient: no change; v has none: skipped
    np.testing.assert_array_equal(w.numpy(), [1.0, 2.0])
    optimizer.zero_grad()
    assert w.grad is None


def test_optimizer_prints_its_groups_like_torch():
    optimizer = eg.optim.SGD([eg.Variable([1.0])], lr=0.01, momentum=0.9)
    assert repr(optimizer) == ("SGD (\nParameter Group 0\n    dampening: 0\n    lr: 0.01\n"
                               "    momentum: 0.9\n    nesterov: False\n    weight_decay: 0\n)")


# ----------------------------------------------------------------------------- clear errors
def test_optimizer_errors_name_the_optimizer_and_say_what_to_do():
    with pytest.raises(ValueError, match=r"eg.optim.SGD got an empty parameter list.*call "
                                         r"the model on a batch first"):
        eg.optim.SGD([])
    with pytest.raises(ValueError, match="eg.optim.Adam got an empty parameter list"):
        eg.optim.Adam(eg.layers.Dense(3).parameters())     # (not built yet: no weights)
    with pytest.raises(TypeError, match=r"eg.optim.SGD: params must be an iterable of "
                                        r"tensors, not one tensor: write \[w\]"):
        eg.optim.SGD(eg.Variable([1.0]))
    with pytest.raises(TypeError, match=r"eg.optim.SGD: parameter 1 is a tuple, not a tensor"):
        eg.optim.SGD([eg.Variable([1.0]), ("w", eg.Variable([1.0]))])
    with pytest.raises(TypeError, match=r"eg.optim.Adam: parameter 0 \(shape \(3,\)\) has "
                                        r"dtype int64.*dtype=eg.float32"):
        eg.optim.Adam([eg.tensor([1, 2, 3])])
    w = eg.Variable([1.0, 2.0], name="w")
    with pytest.raises(ValueError, match=r"parameter 0 \(shape \(2,\)\) was computed by an "
                                         r"op \(mul\).*detach\(\).requires_grad_\(\)"):
        eg.optim.SGD([w * 2])
    with pytest.raises(ValueError, match="parameter 1 'w' .* is listed twice"):
        eg.optim.SGD([{"params": [w]}, {"params": [w], "lr": 0.1}])
    with pytest.raises(ValueError, match="eg.optim.SGD: Nesterov momentum needs a momentum"):
        eg.optim.SGD([w], lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="eg.optim.Adam: betas must be in"):
        eg.optim.Adam([w], betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="eg.optim.SGD: lr must be 0 or more, got -0.1"):
        eg.optim.SGD([w], lr=-0.1)
    with pytest.raises(TypeError, match=r"eg.optim.SGD: lr must be a number, got '0.1' \(str\)"):
        eg.optim.SGD([w], lr="0.1")                     # (read from a config file)
    with pytest.raises(TypeError, match=r"eg.optim.Adam: lr must be a number, got None"):
        eg.optim.Adam([w], lr=None)
    with pytest.raises(TypeError, match=r"eg.optim.RMSprop: momentum must be a number"):
        eg.optim.RMSprop([w], momentum="0.9")
    with pytest.raises(ValueError, match=r"eg.optim.Adam: betas must be a pair"):
        eg.optim.Adam([w], betas=0.9)
    for make in (lambda: eg.train.GradientDescentOptimizer("0.1"),
                 lambda: eg.keras.optimizers.SGD(learning_rate="0.1"),
                 lambda: eg.keras.optimizers.Adam(learning_rate=None)):
        with pytest.raises(TypeError, match=r"Optimizer: learning_rate must be a number, or a "
                                            r"tensor for a rate that changes"):
            make()
    with eg.Graph().as_default():
        v = eg.Variable([1.0], name="v")
        with pytest.raises(TypeError, match=r"belongs to a graph; eg.optim works eagerly.*"
                                            r"GradientDescentOptimizer"):
            eg.optim.SGD([v])


def test_a_gradient_that_does_not_match_its_parameter_is_refused():
    w = eg.Variable(np.ones((3, 4)), name="w")
    optimizer = eg.optim.SGD([w], lr=0.1)
    w.grad = eg.ones(4, dtype=eg.float64)       # would broadcast: a silently wrong update
    with pytest.raises(ValueError, match=r"eg.optim.SGD.step: parameter 0 'w' \(shape "
                                         r"\(3, 4\)\) is float64 on cpu:0 with shape \(3, 4\), "
                                         r"but its .grad is float64 on cpu:0 with shape \(4,\)"):
        optimizer.step()
    np.testing.assert_array_equal(w.numpy(), np.ones((3, 4)))


@pytest.mark.parametrize("change", ["dtype", "device"])
def test_step_after_a_parameter_changed_dtype_or_device_says_to_remake_the_optimizer(change):
    model = eg.nn.Linear(3, 2)
    optimizer = eg.optim.Adam(model.parameters(), lr=0.1)
    model(eg.ones((1, 3))).sum().backward()
    optimizer.step()                    # Adam's state (m, v) now exists, float32 on cpu:0
    if change == "dtype":
        model.double()
        x, layout = eg.ones((1, 3), dtype=eg.float64), "float64 on cpu:0"
    else:
        model.to("sim")
        x, layout = eg.ones((1, 3), device="sim"), "float32 on sim:0"
    model(x).sum().backward()
    with pytest.raises(ValueError, match=rf"eg.optim.Adam.step: parameter 0 .* is now {layout} "
                                         r"with shape \(2, 3\), but the optimizer's state for it "
                                         r"\(m, v\) is float32 on cpu:0.*model.to\(...\), then "
                                         r"eg.optim.Adam\(model.parameters\(\), ...\)"):
        optimizer.step()
    fresh = eg.optim.Adam(model.parameters(), lr=0.1)     # made after the move: fine
    fresh.step()
    assert model.weight.device.name == ("sim:0" if change == "device" else "cpu:0")


# ----------------------------------------------------------------------------- PyTorch's tutorials
@pytest.mark.parametrize("optimizer_name, dtype, steps, rtol", [
    ("SGD", "float32", 50, 3e-6), ("SGD", "float64", 100, 1e-10),
    # Adam's first steps are ±lr for any gradient well above eps: a weight whose gradient is
    # float32 rounding noise (one of 10^5 here) moves by lr in a direction that depends on
    # the summation order of the matrix product, in PyTorch as here
    ("Adam", "float32", 50, 3e-5), ("Adam", "float64", 100, 1e-10)])
def test_learning_pytorch_with_examples_nn_and_optim_as_written(optimizer_name, dtype, steps,
                                                                 rtol, device):
    """"Learning PyTorch with Examples", nn.Sequential + optim: eg's random starting weights
    are copied into the torch model (the same layout: weight (out, in)), so the losses must
    agree with PyTorch's step by step."""
    data = np.random.default_rng(0)
    N, D_in, H, D_out = 64, 1000, 100, 10
    x0, y0 = data.normal(size=(N, D_in)), data.normal(size=(N, D_out))
    histories, weights = [], None
    for lib, where in ((eg, device), (torch, "cpu")):
        x = lib.tensor(x0, dtype=getattr(lib, dtype), device=lib.device(where))
        y = lib.tensor(y0, dtype=getattr(lib, dtype), device=lib.device(where))
        model = lib.nn.Sequential(
            lib.nn.Linear(D_in, H),
            lib.nn.ReLU(),
            lib.nn.Linear(H, D_out),
        ).to(getattr(lib, dtype)).to(lib.device(where))
        if weights is None:
            weights = [np.array(p.detach().cpu().numpy()) for p in model.parameters()]
        else:
            with torch.no_grad():
                for p, value in zip(model.parameters(), weights):
                    p.copy_(torch.tensor(value))
        loss_fn = lib.nn.MSELoss(reduction='sum')
        learning_rate = 1e-4
        optimizer = getattr(lib.optim, optimizer_name)(model.parameters(), lr=learning_rate)
        losses = []
        for t in range(steps):
            y_pred = model(x)
            loss = loss_fn(y_pred, y)
            losses.append(loss.item())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        histories.append(losses)
    assert histories[0][-1] < histories[0][0] / 3
    np.testing.assert_allclose(histories[0], histories[1], rtol=rtol)


def quickstart(torch, X_train, y_train, X_test, y_test, weights=None):
    """PyTorch's Quickstart (model, train and test loops) as written, on small images; the
    DataLoader is a few lines here. Returns the model, the test (loss, accuracy) before and
    after each epoch, and the starting weights (``weights``: start from these instead)."""
    nn = torch.nn                       # (the tutorial: from torch import nn)

    class DataLoader:
        def __init__(self, images, labels, batch_size):
            self.dataset, self.labels, self.batch_size = images, labels, batch_size

        def __len__(self):
            return math.ceil(len(self.dataset) / self.batch_size)

        def __iter__(self):
            for i in range(0, len(self.dataset), self.batch_size):
                yield (torch.tensor(self.dataset[i:i + self.batch_size]),
                       torch.tensor(self.labels[i:i + self.batch_size]))

    train_dataloader = DataLoader(X_train, y_train, batch_size=16)
    test_dataloader = DataLoader(X_test, y_test, batch_size=16)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(6*6, 32),
                nn.ReLU(),
                nn.Linear(32, 32),
                nn.ReLU(),
                nn.Linear(32, 3)
            )

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork().to(device)
    start = [np.array(p.detach().cpu().numpy()) for p in model.parameters()]
    if weights is not None:
        with torch.no_grad():
            for p, value in zip(model.parameters(), weights):
                p.copy_(torch.tensor(value))
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)

    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)

            # Compute prediction error
            pred = model(X)
            loss = loss_fn(pred, y)

            # Backpropagation
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

            if batch % 4 == 0:
                loss, current = loss.item(), (batch + 1) * len(X)
                print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
        return test_loss, correct

    results = [test(test_dataloader, model, loss_fn)]
    epochs = 4
    for t in range(epochs):
        print(f"Epoch {t+1}\n-------------------------------")
        train(train_dataloader, model, loss_fn, optimizer)
        assert model.training and model.linear_relu_stack[1].training
        results.append(test(test_dataloader, model, loss_fn))
        assert not model.training and not model.linear_relu_stack[1].training
    print("Done!")
    return model, results, start


def test_quickstart_classifier_as_written_learns_and_matches_torch(capsys):
    data = np.random.default_rng(1)
    patterns = data.normal(size=(3, 1, 6, 6))
    labels = data.integers(0, 3, size=160)
    images = (patterns[labels] + data.normal(size=(160, 1, 6, 6))).astype(np.float32)
    split = (images[:128], labels[:128], images[128:], labels[128:])
    model, ours, start = quickstart(eg, *split)
    assert "Accuracy:" in capsys.readouterr().out
    assert ours[-1][0] < ours[0][0] / 3 and ours[-1][1] > 0.9
    torch_model, theirs, _ = quickstart(torch, *split, weights=start)
    np.testing.assert_allclose(np.array(ours), np.array(theirs), rtol=2e-5)
    assert str(model) == str(torch_model)       # printed as PyTorch prints it


# ----------------------------------------------------------------------------- nn.Sequential
def test_sequential_indexing_names_modes_and_parameters_follow_torch():
    nn = eg.nn
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
    assert isinstance(model[0], nn.Linear) and isinstance(model[-1], nn.Linear)
    assert len(model) == 4 and [type(m).__name__ for m in model] == \
        ["Linear", "ReLU", "Dropout", "Linear"]
    tail = model[1:]
    assert isinstance(tail, nn.Sequential) and tail[2] is model[3]
    assert [n for n, _ in tail.named_parameters()] == ["3.weight", "3.bias"]   # names kept
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    assert [tuple(p.shape) for p in model.parameters()] == \
        [tuple(p.shape) for p in theirs.parameters()]
    x = eg.ones((200, 4))
    assert model.training and model[2].training                     # PyTorch's default
    assert (model[:3](x).numpy() == 0).mean() > 0.5                 # dropout drops...
    model.eval()
    assert not model[2].training and not model.training
    np.testing.assert_array_equal(model(x).numpy(), model(x).numpy())   # ...and stops
    model.train()
    assert model[2].training


def test_sequential_from_an_ordered_dict_prints_like_torch():
    layers = lambda nn: OrderedDict([("fc1", nn.Linear(3, 5)), ("act", nn.ReLU()),  # noqa: E731
                                     ("flat", nn.Flatten()), ("fc2", nn.Linear(5, 1))])
    ours, theirs = eg.nn.Sequential(layers(eg.nn)), torch.nn.Sequential(layers(torch.nn))
    assert str(ours) == str(theirs)
    assert ours.fc1 is ours[0] and [n for n, _ in ours.named_parameters()] == \
        ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert ours(eg.ones((2, 3))).shape == (2, 1)
    with pytest.raises(ValueError, match=r"\['train'\] cannot name modules"):
        eg.nn.Sequential(OrderedDict(train=eg.nn.ReLU()))
    with pytest.raises(ValueError, match="would be named '2', which names another module"):
        eg.nn.Sequential(eg.nn.ReLU(), eg.nn.ReLU(), eg.nn.ReLU())[1:].append(eg.nn.ReLU())
    assert ours.append(eg.nn.ReLU())[-1] is not None and len(ours) == 5


# ----------------------------------------------------------------------------- losses, F
A = rng.normal(size=(3, 4))
LOGITS, LOGITS_4D = rng.normal(size=(6, 4)), rng.normal(size=(2, 3, 2, 2))
CLASSES, CLASSES_3D = np.array([0, 3, 1, 1, 2, 3]), np.array([[[0, 2], [1, 1]], [[2, 0], [0, 1]]])
PROBABILITIES = rng.dirichlet(np.ones(4), size=6)
CLASS_WEIGHTS = np.array([0.5, 2.0, 1.0, 3.0])
PRED, TRUE = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
LINEAR_W, LINEAR_B = rng.normal(size=(2, 3)), rng.normal(size=(2,))
IMAGES, CONV_W, CONV_B = rng.normal(size=(2, 3, 7, 6)), rng.normal(size=(4, 3, 3, 2)), \
    rng.normal(size=(4,))


def fixed(values):
    """A class-id (or other constant) argument: not differentiated."""
    return lambda lib: lib.tensor(values)


FUNCTIONAL = {     # name: (inputs: arrays to differentiate or fixed(...), call with (F, *args))
    "relu": ([A], lambda F, x: F.relu(x)),
    "leaky_relu": ([A], lambda F, x: F.leaky_relu(x)),
    "leaky_relu_slope": ([A], lambda F, x: F.leaky_relu(x, negative_slope=0.3)),
    "sigmoid": ([A], lambda F, x: F.sigmoid(x)),
    "tanh": ([A], lambda F, x: F.tanh(x)),
    "softmax_dim0": ([A], lambda F, x: F.softmax(x, dim=0)),
    "softmax_dim1": ([A], lambda F, x: F.softmax(x, 1)),
    "log_softmax": ([A], lambda F, x: F.log_softmax(x, dim=-1)),
    "linear": ([PRED, LINEAR_W, LINEAR_B], lambda F, x, w, b: F.linear(x, w, b)),
    "linear_no_bias": ([PRED, LINEAR_W], lambda F, x, w: F.linear(x, w)),
    "linear_vector": ([PRED[0], LINEAR_W], lambda F, x, w: F.linear(x, w)),
    "dropout_eval": ([A], lambda F, x: F.dropout(x, 0.5, training=False)),
    "dropout_p0": ([A], lambda F, x: F.dropout(x, p=0.0)),
    "cross_entropy": ([LOGITS, fixed(CLASSES)], lambda F, x, y: F.cross_entropy(x, y)),
    "cross_entropy_sum": ([LOGITS, fixed(CLASSES)],
                          lambda F, x, y: F.cross_entropy(x, y, reduction="sum")),
    "cross_entropy_none": ([LOGITS, fixed(CLASSES)],
                           lambda F, x, y: F.cross_entropy(x, y, reduction="none")),
    "cross_entropy_weight": ([LOGITS, fixed(CLASSES), fixed(CLASS_WEIGHTS)],
                             lambda F, x, y, w: F.cross_entropy(x, y, weight=w)),
    "cross_entropy_weight_none": ([LOGITS, fixed(CLASSES), fixed(CLASS_WEIGHTS)],
                                  lambda F, x, y, w: F.cross_entropy(x, y, w,
                                                                     reduction="none")),
    "cross_entropy_smoothing": ([LOGITS, fixed(CLASSES)],
                                lambda F, x, y: F.cross_entropy(x, y, label_smoothing=0.2)),
    "cross_entropy_weight_smoothing": ([LOGITS, fixed(CLASSES), fixed(CLASS_WEIGHTS)],
                                       lambda F, x, y, w: F.cross_entropy(
                                           x, y, weight=w, label_smoothing=0.1)),
    "cross_entropy_probabilities": ([LOGITS, PROBABILITIES],
                                    lambda F, x, p: F.cross_entropy(x, p)),
    "cross_entropy_probabilities_weight_smoothing": (
        [LOGITS, PROBABILITIES, fixed(CLASS_WEIGHTS)],
        lambda F, x, p, w: F.cross_entropy(x, p, weight=w, label_smoothing=0.3)),
    "cross_entropy_classes_in_dim_1": ([LOGITS_4D, fixed(CLASSES_3D)],
                                       lambda F, x, y: F.cross_entropy(x, y)),
    "cross_entropy_4d_weight_none": ([LOGITS_4D, fixed(CLASSES_3D), fixed(CLASS_WEIGHTS[:3])],
                                     lambda F, x, y, w: F.cross_entropy(x, y, w,
                                                                        reduction="none")),
    "nll_loss": ([LOGITS, fixed(CLASSES)], lambda F, x, y: F.nll_loss(x, y)),
    "nll_loss_of_log_softmax": ([LOGITS, fixed(CLASSES)],
                                lambda F, x, y: F.nll_loss(F.log_softmax(x, dim=1), y)),
    "nll_loss_weight": ([LOGITS, fixed(CLASSES), fixed(CLASS_WEIGHTS)],
                        lambda F, x, y, w: F.nll_loss(x, y, weight=w)),
    "nll_loss_weight_sum": ([LOGITS, fixed(CLASSES), fixed(CLASS_WEIGHTS)],
                            lambda F, x, y, w: F.nll_loss(x, y, w, reduction="sum")),
    "nll_loss_classes_in_dim_1_none": ([LOGITS_4D, fixed(CLASSES_3D)],
                                       lambda F, x, y: F.nll_loss(x, y, reduction="none")),
    "conv2d": ([IMAGES, CONV_W, CONV_B], lambda F, x, w, b: F.conv2d(x, w, b)),
    "conv2d_stride_padding": ([IMAGES, CONV_W],
                              lambda F, x, w: F.conv2d(x, w, stride=2, padding=1)),
    "conv2d_pairs": ([IMAGES, CONV_W, CONV_B],
                     lambda F, x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=(0, 2))),
    "conv2d_same": ([IMAGES, CONV_W[:, :, :, :1]],
                    lambda F, x, w: F.conv2d(x, w, padding="same")),
    "max_pool2d": ([IMAGES], lambda F, x: F.max_pool2d(x, 2)),
    "max_pool2d_stride_padding": ([IMAGES], lambda F, x: F.max_pool2d(x, 3, stride=2,
                                                                      padding=1)),
    "mse_loss": ([PRED, TRUE], lambda F, x, y: F.mse_loss(x, y)),
    "mse_loss_sum": ([PRED, TRUE], lambda F, x, y: F.mse_loss(x, y, reduction="sum")),
    "mse_loss_none": ([PRED, TRUE], lambda F, x, y: F.mse_loss(x, y, reduction="none")),
    "l1_loss": ([PRED, TRUE], lambda F, x, y: F.l1_loss(x, y)),
    "l1_loss_sum": ([PRED, TRUE], lambda F, x, y: F.l1_loss(x, y, reduction="sum")),
}


def values_and_gradients(lib, functional, inputs, call):
    args = [value(lib) if callable(value) else lib.tensor(value, requires_grad=True)
            for value in inputs]
    out = call(functional, *args)
    cotangent = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape))
    (out * lib.tensor(cotangent)).sum().backward()
    return [out.detach().numpy()] + [a.grad.numpy() for a, v in zip(args, inputs)
                                     if not callable(v)]


@pytest.mark.parametrize("case", FUNCTIONAL)
def test_functional_matches_torch_values_and_gradients(case):
    inputs, call = FUNCTIONAL[case]
    ours = values_and_gradients(eg, F, inputs, call)
    theirs = values_and_gradients(torch, TF, inputs, call)
    for i, (got, want) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14,
                                   err_msg=f"{case}: " + ("value" if i == 0 else f"grad {i}"))


def test_dropout_drops_with_probability_p_and_scales_the_rest():
    x = eg.ones((100, 100), dtype=eg.float64)
    y = F.dropout(x, p=0.3).numpy()
    assert set(np.unique(y)) == {0.0, 1 / 0.7} and abs((y == 0).mean() - 0.3) < 0.02


LOSS_MODULES = {
    "CrossEntropyLoss": (lambda nn: nn.CrossEntropyLoss(), LOGITS, CLASSES),
    "CrossEntropyLoss_sum_smoothing": (lambda nn: nn.CrossEntropyLoss(
        reduction="sum", label_smoothing=0.1), LOGITS, CLASSES),
    "NLLLoss": (lambda nn: nn.NLLLoss(), LOGITS, CLASSES),
    "NLLLoss_sum": (lambda nn: nn.NLLLoss(reduction="sum"), LOGITS_4D, CLASSES_3D),
    "MSELoss": (lambda nn: nn.MSELoss(), PRED, TRUE),
    "MSELoss_sum": (lambda nn: nn.MSELoss(reduction="sum"), PRED, TRUE),
    "L1Loss_none": (lambda nn: nn.L1Loss(reduction="none"), PRED, TRUE),
}


@pytest.mark.parametrize("case", LOSS_MODULES)
def test_loss_modules_match_torch_and_print_like_it(case, device):
    make, prediction, target = LOSS_MODULES[case]
    results = []
    for lib, where in ((eg, device), (torch, "cpu")):
        loss_fn = make(lib.nn)
        x = lib.tensor(prediction, requires_grad=True, device=lib.device(where))
        loss = loss_fn(x, lib.tensor(target, device=lib.device(where)))
        loss.sum().backward()
        results.append((repr(loss_fn), loss.detach().cpu().numpy(), x.grad.cpu().numpy()))
    assert results[0][0] == results[1][0]
    for got, want in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def test_loss_and_functional_errors_say_what_to_do():
    with pytest.raises(eg.errors.ShapeError, match=r"mse_loss: the input has shape \(4, 1\) "
                                                   r"but the target has shape \(4,\).*"
                                                   r"target.view\(-1, 1\)"):
        eg.nn.MSELoss()(eg.ones((4, 1)), eg.ones(4))     # PyTorch: broadcast to (4, 4), a warning
    with pytest.raises(eg.errors.ShapeError, match=r"labels must be class ids in \[0, 4\).*"
                                                   r"range over \[0, 4\]"):
        F.cross_entropy(eg.ones((2, 4)), eg.tensor([0, 4]))
    with pytest.raises(eg.errors.ShapeError, match=r"the target of shape \(2, 4\) should hold "
                                                   r"one class id for each example.*\(2,\)"):
        F.cross_entropy(eg.ones((2, 4)), eg.tensor([[0, 1, 0, 0], [1, 0, 0, 0]]))
    with pytest.raises(eg.errors.ShapeError, match=r"a float target holds class probabilities"
                                                   r".*target.long\(\)"):
        F.cross_entropy(eg.ones((2, 4)), eg.tensor([0.0, 1.0]))
    with pytest.raises(eg.errors.ShapeError, match=r"weight must hold one number per class, "
                                                   r"shape \(4,\)"):
        F.cross_entropy(eg.ones((2, 4)), eg.tensor([0, 1]), weight=eg.ones(3))
    with pytest.raises(ValueError, match="CrossEntropyLoss: reduction must be 'mean', 'sum' "
                                         "or 'none', got 'avg'"):
        eg.nn.CrossEntropyLoss(reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        F.cross_entropy(eg.ones((2, 4)), eg.tensor([0, 1]), label_smoothing=1.5)
    with pytest.raises(eg.errors.ShapeError, match=r"linear: the input of shape \(5, 2\) has "
                                                   r"2 features, but the weight of shape "
                                                   r"\(2, 3\).*Dense kernel is the "
                                                   r"transpose.*pass layer.kernel.T"):
        F.linear(eg.ones((5, 2)), eg.ones((2, 3)))
    layer = eg.nn.Linear(3, 2)
    np.testing.assert_allclose(F.linear(eg.ones((1, 3)), layer.weight, layer.bias).numpy(),
                               layer(eg.ones((1, 3))).numpy(), rtol=1e-6)


# ----------------------------------------------------------------------------- PyTorch's CNN layers
def test_conv2d_maxpool2d_and_flatten_modules_match_torch_with_the_same_weights(device):
    """nn.Conv2d, nn.MaxPool2d and nn.Flatten on NCHW images: with edugraph's starting weights
    loaded into torch's modules (the same names and layouts, so its state dict loads as it
    is), outputs and gradients match torch's; the modules print as torch's."""
    results = []
    for lib, where in ((eg, device), (torch, "cpu")):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Conv2d(3, 4, (3, 2), padding=1), lib.nn.ReLU(),
                                  lib.nn.MaxPool2d(2), lib.nn.Flatten(),
                                  lib.nn.Linear(4 * 3 * 3, 2)).double()
        if lib is eg:
            model = model.to(device)
            weights = {name: np.array(t.numpy()) for name, t in model.state_dict().items()}
        else:
            model.load_state_dict({name: torch.tensor(a) for name, a in weights.items()})
        x = lib.tensor(IMAGES, requires_grad=True, device=lib.device(where))
        out = model(x)
        (out * lib.tensor(np.array([[1.0, -2.0]]), device=lib.device(where))).sum().backward()
        results.append((out.detach().cpu().numpy(), x.grad.cpu().numpy(),
                        [repr(m) for m in (model[0], model[3])]))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12, atol=1e-14)
    assert results[0][2] == results[1][2] == [
        "Conv2d(3, 4, kernel_size=(3, 2), stride=(1, 1), padding=(1, 1))",
        "Flatten(start_dim=1, end_dim=-1)"]
    assert repr(eg.nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=(2, 2), stride=(2, 2), " \
                                       "padding=(0, 0))"


def test_linear_and_conv2d_start_from_torchs_initial_weight_distribution():
    """Uniform in ±1/√fan_in, weights and biases (Keras's layers start from Glorot weights and
    zero biases instead)."""
    eg.manual_seed(1)
    for layer, fan_in in ((eg.nn.Linear(400, 300), 400), (eg.nn.Conv2d(16, 300, 5), 400)):
        bound = 1 / math.sqrt(fan_in)
        for p in (layer.weight.numpy(), layer.bias.numpy()):
            assert np.abs(p).max() <= bound and np.abs(p).max() > 0.95 * bound
        assert layer.weight.numpy().std() == pytest.approx(bound / math.sqrt(3), rel=0.02)
    dense = eg.layers.Dense(300)
    dense.build_for((None, 400))
    assert not dense.bias.numpy().any()


@pytest.mark.parametrize("shape, dims", [((2, 3, 4, 5), ()), ((2, 3, 4, 5), (1,)),
                                         ((2, 3, 4, 5), (1, 2)), ((2, 3, 4, 5), (-3, -2)),
                                         ((2, 3), (0, 0)), ((), ())])
def test_flatten_matches_torch(shape, dims):
    x = np.arange(math.prod(shape), dtype=float).reshape(shape)
    want = torch.flatten(torch.tensor(x), *dims).numpy()
    for got in (eg.flatten(eg.tensor(x), *dims), eg.tensor(x).flatten(*dims)):
        np.testing.assert_array_equal(got.numpy(), want)


def test_argmax_keepdim_view_as_and_eq_count_correct_predictions_as_in_torch():
    output, target = LOGITS, np.array([0, 3, 2, 1, 2, 0])
    counts = []
    for lib in (eg, torch):
        pred = lib.tensor(output).argmax(dim=1, keepdim=True)
        assert tuple(pred.shape) == (6, 1)
        counts.append(pred.eq(lib.tensor(target).view_as(pred)).sum().item())
    assert counts[0] == counts[1] == int((output.argmax(1) == target).sum())
    assert eg.tensor(output).argmin(0, keepdim=True).shape == (1, 4)
    np.testing.assert_array_equal(eg.argmax(eg.tensor(output), dim=1, keepdim=True).numpy(),
                                  torch.argmax(torch.tensor(output), dim=1, keepdim=True))


def test_cnn_errors_say_what_to_do():
    with pytest.raises(eg.errors.ShapeError, match=r"Conv2d 'conv2d\w*' expects 4-D images laid "
                                                   r"out as PyTorch's.*got shape \(8, 8\).*"
                                                   r"x.view\(1, 1, 8, 8\)"):
        eg.nn.Conv2d(1, 2, 3)(eg.ones((8, 8)))
    with pytest.raises(eg.errors.ShapeError, match=r"conv2d: the input of shape \(2, 3, 7, 6\) "
                                                   r"has 3 channels.*weight of shape "
                                                   r"\(4, 2, 3, 3\) takes 2"):
        F.conv2d(eg.tensor(IMAGES), eg.ones((4, 2, 3, 3), dtype=eg.float64))
    with pytest.raises(ValueError, match=r"padding must be an int, 0 or more, or a pair"):
        eg.nn.Conv2d(1, 2, 3, padding=-1)
    with pytest.raises(ValueError, match=r"padding must be 'valid', 'same' or a number"):
        F.max_pool2d(eg.tensor(IMAGES), 2, padding="full")
    with pytest.raises(TypeError, match=r"nll_loss: the target must hold integer class ids"):
        F.nll_loss(eg.tensor(LOGITS), eg.tensor(PROBABILITIES))
    with pytest.raises(eg.errors.ShapeError, match=r"nll_loss: weight must hold one number"):
        F.nll_loss(eg.tensor(LOGITS), eg.tensor(CLASSES), weight=eg.ones(3))
    with pytest.raises(eg.errors.ShapeError, match=r"flatten\(start_dim=2, end_dim=-1\): a "
                                                   r"tensor of shape \(2, 3\) has dimensions"):
        eg.ones((2, 3)).flatten(2)


def test_flatten_in_a_graph_whose_sizes_are_unknown_until_it_runs():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float64, shape=(None, None, None))
        y = eg.flatten(x, 1)
        assert str(y.shape) == "(?, ?)"
        (g,) = eg.gradients(eg.reduce_sum(y * y), [x])
        with eg.Session() as sess:
            value = np.arange(24.0).reshape(2, 3, 4)
            out, grad = sess.run([y, g], {x: value})
    np.testing.assert_array_equal(out, value.reshape(2, 12))
    np.testing.assert_array_equal(grad, 2 * value)


def test_pytorch_cnn_layers_build_a_graph_with_an_unknown_batch():
    """The same modules inside a TF1 graph: NCHW placeholders of unknown batch size."""
    eg.manual_seed(0)
    model = eg.nn.Sequential(eg.nn.Conv2d(1, 2, 3), eg.nn.MaxPool2d(2), eg.nn.Flatten())
    images = np.random.default_rng(0).normal(size=(5, 1, 6, 6)).astype(np.float32)
    want = model(eg.tensor(images)).numpy()
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, shape=(None, 1, 6, 6))
        y = model(x)
        assert tuple(y.shape) == (None, 8)
        with eg.Session() as sess:
            np.testing.assert_allclose(sess.run(y, {x: images}), want, rtol=1e-6)


# ----------------------------------------------------------------------------- devices, tensors
def test_module_to_moves_variables_in_place_with_their_gradients():
    model = eg.nn.Sequential(eg.nn.Linear(3, 4), eg.nn.ReLU(), eg.nn.Linear(4, 2))
    params = list(model.parameters())
    model(eg.ones((2, 3))).sum().backward()
    values = [p.numpy() for p in params]
    assert model.to("sim") is model
    assert all(a is b for a, b in zip(model.parameters(), params))
    assert all(p.device.name == "sim:0" and p.grad.device.name == "sim:0" for p in params)
    assert all(isinstance(p, eg.Variable) for p in params)
    for p, value in zip(params, values):
        np.testing.assert_array_equal(p.numpy(), value)
    optimizer = eg.optim.SGD(model.parameters(), lr=0.1)     # made after the move
    model(eg.ones((2, 3), device="sim")).sum().backward()
    optimizer.step()
    model.cpu().double()
    assert all(p.device.name == "cpu:0" and p.dtype == eg.float64 for p in params)
    assert model(eg.ones((2, 3), dtype=eg.float64)).dtype == eg.float64
    with pytest.raises(TypeError, match=r"sequential(_\d+)?.to\('banana'\): that is neither a "
                                        r"device"):
        model.to("banana")
    with pytest.raises(TypeError, match="converts only to a floating-point dtype"):
        model.to(eg.int64)
    assert model[0].weight.dtype == eg.float64


def test_cuda_is_available_answers_as_torch_cuda_does():
    has_gpu = any(d.kind == "gpu" for d in eg.list_devices())
    assert eg.cuda.is_available() is has_gpu
    assert eg.cuda.device_count() == sum(d.kind == "gpu" for d in eg.list_devices())
    device = "cuda" if eg.cuda.is_available() else "cpu"
    assert eg.ones(2).to(device).device.kind == ("gpu" if has_gpu else "cpu")


def test_tensor_copy_type_and_data_as_in_torch(device):
    w = eg.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    with pytest.raises(eg.errors.GradientError, match="copy_ would change"):
        w.copy_(eg.zeros(3, device=device))
    with eg.no_grad():
        assert w.copy_(eg.tensor([4, 5, 6])) is w       # another device and dtype: copied
        np.testing.assert_array_equal(w.numpy(), [4.0, 5.0, 6.0])
        w.copy_(eg.tensor(7.0, device=device))          # broadcast
    np.testing.assert_array_equal(w.numpy(), [7.0, 7.0, 7.0])
    pred, y = eg.tensor([[0.1, 0.9], [0.8, 0.2]]), eg.tensor([1, 1])
    correct = (pred.argmax(1) == y).type(eg.float)
    assert correct.dtype == eg.float32 and correct.sum().item() == 1.0
    w.data = w.data.to("cpu").double()              # a tensor brings its device and dtype
    assert w.device.name == "cpu:0" and w.dtype == eg.float64 and w.requires_grad


# ----------------------------------------------------------------------------- PyTorch's MNIST
def pytorch_mnist_example(torch, datasets, tmp_path, epochs=3, log_interval=10,
                          replacement_net=None, start=None):
    """pytorch/examples mnist/main.py as written, on the 8x8 digits: the only changes are the
    data (the digits, normalised as the example's transform does) and fc1's input size, 9216
    for 28x28 images, 64·2·2 = 256 here. ``replacement_net(torch)``: a class to train instead
    of the example's CNN, from the float64 weights ``start`` (Keras's layouts), so that two
    libraries' runs can agree to rounding. Returns the printed lines, the test accuracy and
    learning rate after each epoch, the model and its class."""
    nn, F, optim = torch.nn, torch.nn.functional, torch.optim
    StepLR = optim.lr_scheduler.StepLR        # (from torch.optim.lr_scheduler import StepLR)
    lines = []

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.dropout2 = nn.Dropout(0.5)
            self.fc1 = nn.Linear(256, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.dropout2(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def train(args, model, device, train_loader, optimizer, epoch):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            output = model(data)
            loss = F.nll_loss(output, target)
            loss.backward()
            optimizer.step()
            if batch_idx % args.log_interval == 0:
                lines.append('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                    epoch, batch_idx * len(data), len(train_loader.dataset),
                    100. * batch_idx / len(train_loader), loss.item()))

    def test(model, device, test_loader):
        model.eval()
        test_loss = 0
        correct = 0
        with torch.no_grad():
            for data, target in test_loader:
                data, target = data.to(device), target.to(device)
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction='sum').item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()
        test_loss /= len(test_loader.dataset)
        lines.append('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
            test_loss, correct, len(test_loader.dataset),
            100. * correct / len(test_loader.dataset)))
        return correct / len(test_loader.dataset)

    class args:
        batch_size, test_batch_size, lr, gamma, seed = 64, 1000, 1.0, 0.7, 1
        no_cuda, save_model = False, True
    args.log_interval = log_interval
    if replacement_net is not None:
        Net = replacement_net(torch)

    use_cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if use_cuda else "cpu")
    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_cuda:
        cuda_kwargs = {'num_workers': 1,
                       'pin_memory': True,
                       'shuffle': True}
        train_kwargs.update(cuda_kwargs)
        test_kwargs.update(cuda_kwargs)
    dataset1, dataset2 = datasets
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)
    model = Net().to(device)
    if start is not None:
        model = model.double()
        with torch.no_grad():
            for p, value in zip(model.parameters(), start):
                p.copy_(torch.tensor(value))
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    accuracies, rates = [], []
    for epoch in range(1, epochs + 1):
        train(args, model, device, train_loader, optimizer, epoch)
        accuracies.append(test(model, device, test_loader))
        scheduler.step()
        rates.append(scheduler.get_last_lr()[0])
    if args.save_model:
        torch.save(model.state_dict(), tmp_path / "mnist_cnn.pt")
    return lines, accuracies, rates, model, Net


def test_pytorch_mnist_example_as_written_learns_as_torch_does(tmp_path):
    """The CNN example trains to the accuracy PyTorch's own run reaches on the same data, prints
    its log lines, steps the learning rate down and saves a state dict that loads back into a
    fresh Net with the same predictions."""
    (x_train, y_train), (x_test, y_test) = eg.datasets.load_digits()
    mean, std = x_train.mean(), x_train.std()       # (the example's Normalize((0.1307,), ...))
    runs = {}
    for lib in (eg, torch):
        def dataset(x, y):
            return lib.utils.data.TensorDataset(lib.tensor((x[:, None] - mean) / std),
                                                lib.tensor(y))
        (tmp_path / lib.__name__).mkdir()
        runs[lib] = pytorch_mnist_example(lib, (dataset(x_train, y_train),
                                                dataset(x_test, y_test)), tmp_path / lib.__name__)
    (lines, accuracies, rates, model, Net), torch_accuracies = runs[eg], runs[torch][1]
    assert accuracies[-1] > 0.9 and accuracies[-1] > torch_accuracies[-1] - 0.03
    assert rates == pytest.approx(runs[torch][2]) and rates == pytest.approx([0.7, 0.49, 0.343])
    assert re.fullmatch(r"Train Epoch: 1 \[0/1438 \(0%\)\]\tLoss: 2\.\d{6}", lines[0])
    assert re.fullmatch(r"Train Epoch: 1 \[640/1438 \(43%\)\]\tLoss: \d\.\d{6}", lines[1])
    assert re.fullmatch(r"\nTest set: Average loss: 0\.\d{4}, Accuracy: \d+/359 \(\d+%\)\n",
                        lines[-1])
    reloaded = Net()
    reloaded.load_state_dict(eg.load(tmp_path / "edugraph" / "mnist_cnn.pt"))
    reloaded.eval(), model.eval()
    images = eg.tensor((x_test[:, None] - mean) / std)
    np.testing.assert_array_equal(reloaded(images).numpy(), model(images).numpy())


def mlp_net(torch):
    """An MLP in the example's style: no dropout, whose random draws differ between libraries."""
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.fc1 = nn.Linear(16, 12)
            self.fc2 = nn.Linear(12, 3)

        def forward(self, x):
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output
    return Net


def test_pytorch_mnist_example_prints_torchs_lines_exactly_from_the_same_weights(tmp_path):
    """The example's loop with an MLP in float64 from the same starting weights: every
    printed loss and accuracy equals torch's, and so do the reloaded model's predictions."""
    data = np.random.default_rng(2)
    patterns = 2 * data.normal(size=(3, 1, 4, 4))
    labels = data.integers(0, 3, size=700)
    images = patterns[labels] + data.normal(size=(700, 1, 4, 4))
    start = [data.normal(size=s) * 0.3 for s in ((12, 16), (12,), (3, 12), (3,))]
    runs = {}
    for lib in (eg, torch):
        (tmp_path / lib.__name__).mkdir()
        datasets = [lib.utils.data.TensorDataset(lib.tensor(x), lib.tensor(y))
                    for x, y in ((images[:600], labels[:600]), (images[600:], labels[600:]))]
        lines, _, _, model, Net = pytorch_mnist_example(
            lib, datasets, tmp_path / lib.__name__, log_interval=2,
            replacement_net=mlp_net, start=start)
        fresh = Net().double()
        fresh.load_state_dict(lib.load(tmp_path / lib.__name__ / "mnist_cnn.pt"))
        fresh.eval()
        runs[lib] = lines, fresh(lib.tensor(images[600:])).detach().numpy()
    (ours, our_predictions), (theirs, their_predictions) = runs[eg], runs[torch]
    assert ours == theirs and len(ours) == 3 * (5 + 1)  # 10 batches an epoch, every 2nd logged
    tests = [re.search(r"loss: ([\d.]+), Accuracy: (\d+)/", line).groups() for line in ours[5::6]]
    losses, accuracies = zip(*((float(loss), int(right)) for loss, right in tests))
    assert losses[0] > losses[1] > losses[2] and accuracies[0] < accuracies[2] and \
        accuracies[2] > 40
    np.testing.assert_allclose(our_predictions, their_predictions, rtol=1e-10)


ACTIVATION_MODULES = [("ReLU", ()), ("Sigmoid", ()), ("Tanh", ()), ("Identity", ()),
                      ("LeakyReLU", (0.2,)), ("ELU", (0.5,)), ("Softmax", (1,)),
                      ("LogSoftmax", (0,)), ("Softplus", ())]


@pytest.mark.parametrize("name, args", ACTIVATION_MODULES)
def test_activation_modules_match_torch_and_print_like_it(name, args):
    results = []
    for lib in (eg, torch):
        module = getattr(lib.nn, name)(*args)
        x = lib.tensor(A, requires_grad=True)
        out = lib.nn.Sequential(module)(x)
        (out * lib.tensor(np.linspace(0.5, 1.5, 12).reshape(3, 4))).sum().backward()
        results.append((repr(module), out.detach().numpy(), x.grad.numpy()))
    if name != "Softplus":                      # (PyTorch's prints beta and threshold)
        assert results[0][0] == results[1][0]
    for got, want in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(ValueError, match=r"nn.Softmax needs the dimension of the classes"):
        eg.nn.Softmax()
