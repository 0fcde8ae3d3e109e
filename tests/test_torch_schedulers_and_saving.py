"""eg.optim.Adadelta and eg.optim.lr_scheduler against torch step by step; Module.state_dict /
load_state_dict, eg.save / eg.load and the optimizers' state_dict, round trips and errors;
and PyTorch's MNIST training loop (DataLoader, Adadelta, StepLR, save) on a small MLP."""
import copy
import io
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import edugraph as eg
import edugraph.nn.functional as F

torch = pytest.importorskip("torch")

rng = np.random.default_rng(11)
X, TARGET = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
W0, B0 = rng.normal(size=(3, 2)), rng.normal(size=(2,))


# ----------------------------------------------------------------------------- schedulers
def lr_history(lib, make, epochs=20):
    """Each group's learning rate after construction and after each epoch's step(), with
    ``last_epoch``, ``base_lrs`` and the groups' ``initial_lr`` at the end."""
    params = [lib.tensor([1.0], requires_grad=True) for _ in range(3)]
    optimizer = lib.optim.SGD([{"params": params[:1]},
                               {"params": params[1:2], "lr": 0.3},
                               {"params": params[2:], "lr": 0.05}], lr=0.1, momentum=0.9)
    scheduler = make(lib.optim.lr_scheduler, optimizer)
    history = [scheduler.get_last_lr()]
    for _ in range(epochs):
        optimizer.step()
        scheduler.step()
        history.append(scheduler.get_last_lr())
        assert [g["lr"] for g in optimizer.param_groups] == history[-1]
    ends = (scheduler.last_epoch, scheduler.base_lrs,
            [g["initial_lr"] for g in optimizer.param_groups])
    return np.array(history), ends


SCHEDULERS = {
    "step": lambda s, o: s.StepLR(o, step_size=3, gamma=0.5),
    "step_1": lambda s, o: s.StepLR(o, 1, 0.7),             # the MNIST example's
    "multistep": lambda s, o: s.MultiStepLR(o, milestones=[2, 5, 11], gamma=0.3),
    "multistep_repeated_unsorted": lambda s, o: s.MultiStepLR(o, [9, 4, 4, 15]),
    "exponential": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "lambda": lambda s, o: s.LambdaLR(o, lambda epoch: 0.95 ** epoch / (1 + epoch % 4)),
    "lambda_per_group": lambda s, o: s.LambdaLR(o, [lambda e: 1 / (e + 1),
                                                    lambda e: 0.9 ** e, lambda e: e % 3]),
    "cosine": lambda s, o: s.CosineAnnealingLR(o, T_max=10),
    "cosine_eta_min_past_T_max": lambda s, o: s.CosineAnnealingLR(o, T_max=7, eta_min=0.01),
}


@pytest.mark.parametrize("case", SCHEDULERS)
def test_learning_rates_match_torch_every_epoch(case):
    ours, our_ends = lr_history(eg, SCHEDULERS[case])
    theirs, their_ends = lr_history(torch, SCHEDULERS[case])
    np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15, err_msg=case)
    assert our_ends == their_ends


def test_the_optimizer_steps_with_the_scheduled_rate_as_in_torch(device):
    histories = []
    for lib in (eg, torch):
        w = lib.tensor(W0, requires_grad=True, device=device if lib is eg else "cpu")
        optimizer = lib.optim.SGD([w], lr=0.2, momentum=0.5)
        scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=2, gamma=0.1)
        history = []
        for epoch in range(6):
            for _ in range(2):
                optimizer.zero_grad()
                ((lib.tensor(X, device=w.device).mm(w) - lib.tensor(TARGET, device=w.device))
                 .tanh() ** 2).sum().backward()
                optimizer.step()
            scheduler.step()
            history.append(w.detach().cpu().numpy().copy())
        histories.append(history)
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-12)


def test_scheduler_errors_say_what_to_do():
    sgd = eg.optim.SGD([eg.zeros(2, requires_grad=True)], lr=0.1)
    schedulers = eg.optim.lr_scheduler
    with pytest.raises(TypeError, match="not a GradientDescentOptimizer"):
        schedulers.StepLR(eg.train.GradientDescentOptimizer(0.1), 2)
    with pytest.raises(ValueError, match="2 lr_lambda functions for 1 parameter groups"):
        schedulers.LambdaLR(sgd, [abs, abs])
    with pytest.raises(ValueError, match="step_size is a number of epochs, 1 or more; got 0"):
        schedulers.StepLR(sgd, 0)
    with pytest.raises(ValueError, match="T_max"):
        schedulers.CosineAnnealingLR(sgd, T_max=2.5)
    with pytest.raises(NotImplementedError, match="must define get_lr"):
        schedulers.LRScheduler(sgd)


def test_a_lambda_schedule_saves_its_state_without_its_functions():
    def make():
        optimizer = eg.optim.SGD([eg.zeros(1, requires_grad=True)], lr=0.1)
        return eg.optim.lr_scheduler.LambdaLR(optimizer, lambda epoch: 0.5 ** epoch)
    scheduler = make()
    scheduler.step()
    state = scheduler.state_dict()
    assert "lr_lambdas" not in state and "optimizer" not in state
    buffer = io.BytesIO()
    eg.save(state, buffer)
    resumed = make()
    resumed.load_state_dict(eg.load(io.BytesIO(buffer.getvalue())))
    scheduler.step()
    resumed.step()
    assert resumed.last_epoch == 2 and resumed.get_last_lr() == scheduler.get_last_lr()
    assert resumed.optimizer.param_groups[0]["lr"] == 0.1 * 0.5 ** 2


# ----------------------------------------------------------------------------- Adadelta
def adadelta_trajectory(lib, settings, device, steps=8):
    """Two parameter groups (the second with its own rho and lr), a non-quadratic loss; the
    bias joins the loss only from the second step (no gradient at the first: skipped)."""
    w = lib.tensor(W0, requires_grad=True, device=device if lib is eg else "cpu")
    b = lib.tensor(B0, requires_grad=True, device=w.device)
    optimizer = lib.optim.Adadelta([{"params": [w]}, {"params": [b], "rho": 0.5, "lr": 0.5}],
                                   **settings)
    x, target = (lib.tensor(v, device=w.device) for v in (X, TARGET))
    history = []
    for step in range(steps):
        optimizer.zero_grad()
        out = x.mm(w) + b if step else x.mm(w)
        (out.tanh() - target).pow(2).sum().backward()
        optimizer.step()
        history.append([np.array(p.detach().cpu().numpy()) for p in (w, b)])
    return history


@pytest.mark.parametrize("settings", [{}, {"weight_decay": 0.2}, {"lr": 0.3, "eps": 1e-3},
                                      {"rho": 0.99, "weight_decay": 0.05}])
def test_adadelta_matches_torch_step_by_step(settings, device):
    ours = adadelta_trajectory(eg, settings, device)
    theirs = adadelta_trajectory(torch, settings, device)
    for step, (got, want) in enumerate(zip(ours, theirs)):
        for name, g, t in zip("wb", got, want):
            np.testing.assert_allclose(g, t, rtol=1e-10, atol=1e-14,
                                       err_msg=f"{settings}: {name} after step {step + 1}")
    np.testing.assert_array_equal(ours[0][1], B0)        # no gradient at step 1: skipped
    assert not np.allclose(ours[-1][0], W0)


def test_adadelta_defaults_and_errors_are_torchs():
    w = eg.zeros(2, requires_grad=True)
    ours = eg.optim.Adadelta([w]).defaults
    theirs = torch.optim.Adadelta([torch.zeros(2, requires_grad=True)]).defaults
    assert ours == {key: theirs[key] for key in ours}
    for bad, message in (({"lr": -1}, "lr must be 0 or more"), ({"rho": 1.5}, r"rho must be"),
                         ({"eps": -1e-6}, "eps must"), ({"weight_decay": -1}, "weight_decay")):
        with pytest.raises(ValueError, match=f"eg.optim.Adadelta: {message}"):
            eg.optim.Adadelta([w], **bad)


# ----------------------------------------------------------------------------- state dicts
def small_model():
    nn = eg.nn
    return nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 2))


def trained(model, steps=3):
    """A few SGD steps in training mode: the weights and batch norm's statistics move."""
    optimizer = eg.optim.SGD(model.parameters(), lr=0.1)
    x, target = eg.tensor(X, dtype=eg.float32), eg.tensor(TARGET, dtype=eg.float32)
    for _ in range(steps):
        optimizer.zero_grad()
        F.mse_loss(model(x), target).backward()
        optimizer.step()
    return model.eval()


def test_state_dict_holds_every_variable_by_name_sharing_memory_as_torchs_does():
    model = trained(small_model())
    state = model.state_dict()
    assert type(state) is OrderedDict
    torch_model = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.BatchNorm1d(5),
                                      torch.nn.ReLU(), torch.nn.Linear(5, 2))
    assert list(state) == list(torch_model.state_dict()) == [
        "0.weight", "0.bias", "1.weight", "1.bias", "1.running_mean", "1.running_var",
        "1.num_batches_tracked", "3.weight", "3.bias"]
    for (name, var), value in zip(model.named_variables(), state.values()):
        assert isinstance(value, eg.Tensor) and not value.requires_grad, name
        np.testing.assert_array_equal(value.numpy(), var.numpy(), err_msg=name)
    # like torch's, the values follow training: a snapshot is a deep copy (the transfer-
    # learning tutorial's best_model_wts = copy.deepcopy(model.state_dict())) or clones
    best_model_wts = copy.deepcopy(model.state_dict())
    snapshot = {k: v.clone() for k, v in state.items()}
    x = eg.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=eg.float32)
    before = model.eval()(x).numpy()
    trained(model.train(), steps=1)
    assert not np.array_equal(state["0.weight"].numpy(), snapshot["0.weight"].numpy())
    np.testing.assert_array_equal(state["0.weight"].numpy(), model[0].weight.numpy())
    assert best_model_wts["0.weight"].device is model[0].weight.device
    assert state["1.num_batches_tracked"].item() == 4
    model.load_state_dict(best_model_wts)
    np.testing.assert_array_equal(model.eval()(x).numpy(), before)
    model.train()
    torch_model = torch.nn.Linear(3, 2)
    torch_state = torch_model.state_dict()
    with torch.no_grad():
        torch_model.weight.add_(1.0)
    assert torch.equal(torch_state["weight"], torch_model.weight)   # (the same aliasing)


def as_torch_model(model):
    """The PyTorch model with ``model``'s values: the names and layouts are torch's, so its
    state dict loads as it is."""
    nn = torch.nn
    twin = nn.Sequential(nn.Linear(3, 5), nn.BatchNorm1d(5), nn.ReLU(), nn.Linear(5, 2)).eval()
    twin.load_state_dict({name: torch.tensor(value.numpy())
                          for name, value in model.state_dict().items()})
    return twin


@pytest.mark.parametrize("target", ["path", "str", "file"])
def test_save_and_load_round_trip_gives_identical_predictions(tmp_path, target):
    model = trained(small_model())
    x = eg.tensor(rng.normal(size=(4, 3)), dtype=eg.float32)
    path = tmp_path / "model.pt"
    destination = {"path": path, "str": str(path), "file": io.BytesIO()}[target]
    eg.save(model.state_dict(), destination)
    if target == "file":
        destination.seek(0)
    fresh = small_model().eval()
    weight = fresh[0].weight
    assert not np.array_equal(fresh(x).numpy(), model(x).numpy())
    result = fresh.load_state_dict(eg.load(destination))
    assert result == ([], []) and result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == repr(torch.nn.Linear(1, 1).load_state_dict(
        torch.nn.Linear(1, 1).state_dict())) == "<All keys matched successfully>"
    assert fresh[0].weight is weight                # the same variables, new values
    np.testing.assert_array_equal(fresh(x).numpy(), model(x).numpy())
    np.testing.assert_allclose(fresh(x).numpy(), as_torch_model(model)(
        torch.tensor(x.numpy())).detach().numpy(), rtol=1e-5, atol=1e-6)


def test_load_state_dict_converts_dtypes_and_keeps_devices():
    model = small_model().to("sim:0")
    source = trained(small_model()).double()
    model.load_state_dict(source.state_dict())
    for (name, var), (_, want) in zip(model.named_variables(), source.named_variables()):
        assert var.device.name == "sim:0", name
        assert var.dtype == (eg.int64 if name.endswith("num_batches_tracked") else eg.float32)
        np.testing.assert_allclose(var.numpy(), want.numpy(), rtol=1e-7, err_msg=name)
    model.load_state_dict({k: v.numpy() for k, v in source.state_dict().items()})


def test_load_state_dict_errors_name_every_problem():
    model = small_model()
    state = trained(small_model()).state_dict()
    state.pop("1.running_mean")
    state["3.weight"] = state["3.weight"].T
    state["fc9.weight"] = eg.zeros(2)
    before = [v.numpy() for v in model.variables]
    with pytest.raises(RuntimeError) as error:
        model.load_state_dict(state)
    message = str(error.value)
    assert "Missing key(s) in state_dict: ['1.running_mean']" in message
    assert "Unexpected key(s) in state_dict: ['fc9.weight']" in message
    assert "size mismatch for '3.weight': the model's variable has shape (2, 5), the " \
           "state_dict has shape (5, 2)" in message
    assert "the same layers" in message
    for var, value in zip(model.variables, before):    # nothing was loaded
        np.testing.assert_array_equal(var.numpy(), value)
    with pytest.raises(RuntimeError, match="size mismatch") as error:  # even when not strict
        model.load_state_dict(state, strict=False)
    assert "Missing" not in str(error.value)
    state["3.weight"] = state["3.weight"].T
    missing, unexpected = model.load_state_dict(state, strict=False)
    assert (missing, unexpected) == (["1.running_mean"], ["fc9.weight"])
    np.testing.assert_array_equal(model[3].weight.numpy(), state["3.weight"].numpy())


def test_save_and_load_keep_nested_containers_dtypes_and_requires_grad():
    checkpoint = {
        "epoch": 3, "name": "mnist", "best": np.float32(0.25), "none": None,
        "weights": OrderedDict(w=eg.randn(2, 3), steps=eg.tensor([1, 2]),
                               mask=eg.tensor([True, False])),
        "history": [eg.tensor(0.5, dtype=eg.float64), (np.arange(3), np.zeros((0, 4)))],
        "leaf": eg.ones(2, requires_grad=True),
    }
    buffer = io.BytesIO()
    eg.save(checkpoint, buffer)
    loaded = eg.load(io.BytesIO(buffer.getvalue()))
    assert list(loaded) == list(checkpoint) and type(loaded["weights"]) is OrderedDict
    assert loaded["epoch"] == 3 and loaded["name"] == "mnist" and loaded["none"] is None
    assert type(loaded["best"]) is np.float32 and loaded["best"] == np.float32(0.25)
    assert isinstance(loaded["history"][1], tuple)
    pairs = [(loaded["weights"][k], checkpoint["weights"][k]) for k in ("w", "steps", "mask")]
    pairs += [(loaded["history"][0], checkpoint["history"][0]),
              (loaded["leaf"], checkpoint["leaf"])]
    for got, want in pairs:
        assert isinstance(got, eg.Tensor) and got.device.name == "cpu:0"
        assert got.dtype == want.dtype and got.requires_grad == want.requires_grad
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for got, want in zip(loaded["history"][1], checkpoint["history"][1]):
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
    got = loaded["weights"]["w"]
    got.numpy()[0, 0] = 5.0                          # a writable tensor of its own
    assert got.numpy()[0, 0] == 5.0
    on_sim = eg.load(io.BytesIO(buffer.getvalue()), map_location="sim:0")
    assert on_sim["weights"]["w"].device.name == "sim:0"


class Custom:
    """A class a pickle names (loading it runs its module's code)."""


def test_load_refuses_other_objects_unless_weights_only_is_false(tmp_path):
    path = tmp_path / "checkpoint.pt"
    eg.save({"model": eg.zeros(2), "args": Custom()}, path)
    with pytest.raises(pickle.UnpicklingError, match=r"holds a .*Custom.*weights_only=False"):
        eg.load(path)
    assert isinstance(eg.load(path, weights_only=False)["args"], Custom)


def test_save_and_load_errors_say_what_to_do(tmp_path):
    with pytest.raises(TypeError, match=r"Sequential is a model.*model.state_dict\(\)"):
        eg.save({"model": small_model()}, tmp_path / "model.pt")
    assert not (tmp_path / "model.pt").exists()      # no half-written file
    torch_file = tmp_path / "torch.pt"
    torch.save({"w": torch.zeros(2)}, torch_file)
    with pytest.raises(pickle.UnpicklingError, match="not written by eg.save.*torch.load"):
        eg.load(torch_file)
    with eg.Graph().as_default():
        symbolic = eg.placeholder(eg.float32, shape=(2,), name="x")
    with pytest.raises(TypeError, match="belongs to a graph"):
        eg.save([symbolic], io.BytesIO())


# ----------------------------------------------------------------------------- optimizer state
OPTIMIZERS = {
    "adam": lambda optim, groups: optim.Adam(groups, lr=0.05),
    "sgd_momentum": lambda optim, groups: optim.SGD(groups, lr=0.1, momentum=0.9,
                                                    dampening=0.1),
    "adadelta": lambda optim, groups: optim.Adadelta(groups, weight_decay=0.1),
    "sgd": lambda optim, groups: optim.SGD(groups, lr=0.1),
}


def run(lib, make, steps, resume_after=None):
    """The parameters after ``steps`` steps with a StepLR schedule; with ``resume_after``,
    a checkpoint (parameters, optimizer, scheduler) is saved after that many steps and
    loaded into new parameters, optimizer and scheduler, which do the rest."""
    def start():
        w, b = (lib.tensor(v, requires_grad=True) for v in (W0, B0))
        optimizer = make(lib.optim, [{"params": [w]}, {"params": [b], "lr": 0.02}])
        return w, b, optimizer, lib.optim.lr_scheduler.StepLR(optimizer, 2, gamma=0.5)
    w, b, optimizer, scheduler = start()
    x, target = lib.tensor(X), lib.tensor(TARGET)
    for step in range(steps):
        if step == resume_after:
            buffer = io.BytesIO()
            lib.save({"params": [w.detach(), b.detach()], "optimizer": optimizer.state_dict(),
                      "scheduler": scheduler.state_dict()}, buffer)
            checkpoint = lib.load(io.BytesIO(buffer.getvalue()))
            w, b, optimizer, scheduler = start()
            with lib.no_grad():
                w.copy_(checkpoint["params"][0])
                b.copy_(checkpoint["params"][1])
            optimizer.load_state_dict(checkpoint["optimizer"])
            scheduler.load_state_dict(checkpoint["scheduler"])
        optimizer.zero_grad()
        ((x.mm(w) + b).tanh() - target).pow(2).sum().backward()
        optimizer.step()
        scheduler.step()
    return [p.detach().numpy().copy() for p in (w, b)], optimizer


@pytest.mark.parametrize("case", OPTIMIZERS)
def test_training_resumed_from_a_checkpoint_goes_on_exactly_as_in_torch(case):
    straight, optimizer = run(eg, OPTIMIZERS[case], 7)
    resumed, _ = run(eg, OPTIMIZERS[case], 7, resume_after=3)
    theirs, torch_optimizer = run(torch, OPTIMIZERS[case], 7, resume_after=3)
    for got, same, want in zip(resumed, straight, theirs):
        np.testing.assert_array_equal(got, same)
        np.testing.assert_allclose(got, want, rtol=1e-10)
    ours, their_state = optimizer.state_dict(), torch_optimizer.state_dict()
    assert [g["params"] for g in ours["param_groups"]] == \
        [g["params"] for g in their_state["param_groups"]] == [[0], [1]]
    for group, torch_group in zip(ours["param_groups"], their_state["param_groups"]):
        assert {k: group[k] for k in group if k != "params"}.items() <= torch_group.items()
    assert sorted(ours["state"]) == sorted(their_state["state"])        # (plain SGD: none)


def test_optimizer_state_dict_holds_the_rule_slots_and_errors_on_a_different_optimizer():
    w = eg.tensor(W0, requires_grad=True)
    adam = eg.optim.Adam([w])
    (w * w).sum().backward()
    adam.step()
    state = adam.state_dict()
    assert sorted(state["state"][0]) == ["m", "step", "v"]
    assert state["state"][0]["step"].item() == 1
    adam.step()                                       # the optimizer's own tensors, as torch
    assert state["state"][0]["step"].item() == 2
    adadelta = eg.optim.Adadelta([eg.tensor(W0, requires_grad=True)])
    with pytest.raises(ValueError, match=r"groups have no \['rho'\].*another kind"):
        adadelta.load_state_dict(state)
    assert adadelta.param_groups[0]["lr"] == 1.0        # (nothing was changed)
    two = eg.optim.Adam([eg.tensor(W0, requires_grad=True), eg.tensor(B0, requires_grad=True)])
    with pytest.raises(ValueError, match=r"groups of \[1\] parameters, this one of \[2\]"):
        two.load_state_dict(state)
