"""Optimizers: trajectories against torch.optim where the rule is the same, against the
written TF1 formula elsewhere; the same rule in a graph and eagerly."""
import numpy as np
import pytest

import edugraph as eg

W0 = np.array([[0.5, -1.5], [2.0, 0.3]])
TARGET = np.array([[1.0, 2.0], [-1.0, 0.5]])
STEPS = 5


def loss_grad(w):
    """Gradient of sum((w - TARGET)^3 + w^2): non-quadratic, so rules really differ."""
    return 3 * (w - TARGET) ** 2 + 2 * w


def graph_trajectory(make_optimizer):
    with eg.Graph().as_default():
        w = eg.Variable(W0.copy(), name="w")
        loss = eg.reduce_sum((w - TARGET) ** 3 + w * w)
        train = make_optimizer().minimize(loss)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            out = []
            for _ in range(STEPS):
                sess.run(train)
                out.append(sess.run(w))
    return np.array(out)


def eager_trajectory(make_optimizer):
    w = eg.Variable(W0.copy())
    opt = make_optimizer()
    out = []
    for _ in range(STEPS):
        opt.minimize(lambda: eg.reduce_sum((w - eg.tensor(TARGET)) ** 3 + w * w), var_list=[w])
        out.append(w.numpy().copy())
    return np.array(out)


def torch_trajectory(make_torch_optimizer):
    torch = pytest.importorskip("torch")
    w = torch.tensor(W0.copy(), requires_grad=True)
    opt = make_torch_optimizer([w])
    out = []
    for _ in range(STEPS):
        opt.zero_grad()
        torch.sum((w - torch.tensor(TARGET)) ** 3 + w * w).backward()
        opt.step()
        out.append(w.detach().numpy().copy())
    return np.array(out)


def formula_trajectory(step):
    w, state, out = W0.copy(), {}, []
    for t in range(1, STEPS + 1):
        w = step(w, loss_grad(w), state, t)
        out.append(w.copy())
    return np.array(out)


TORCH_CASES = {
    "sgd": (lambda: eg.train.GradientDescentOptimizer(0.01),
            lambda torch, p: torch.optim.SGD(p, lr=0.01)),
    "momentum": (lambda: eg.train.MomentumOptimizer(0.01, 0.9),
                 lambda torch, p: torch.optim.SGD(p, lr=0.01, momentum=0.9)),
    "nesterov": (lambda: eg.train.MomentumOptimizer(0.01, 0.9, use_nesterov=True),
                 lambda torch, p: torch.optim.SGD(p, lr=0.01, momentum=0.9, nesterov=True)),
    "adagrad": (lambda: eg.train.AdagradOptimizer(0.1, initial_accumulator_value=0.1),
                lambda torch, p: torch.optim.Adagrad(p, lr=0.1, initial_accumulator_value=0.1,
                                                     eps=0.0)),
    "adadelta": (lambda: eg.train.AdadeltaOptimizer(1.0, rho=0.95, epsilon=1e-6),
                 lambda torch, p: torch.optim.Adadelta(p, lr=1.0, rho=0.95, eps=1e-6)),
    # TF's epsilon-hat: eps_tf = eps_torch * sqrt(1 - beta2^t) is step-dependent; with eps 0
    # both are the same rule
    "adam": (lambda: eg.train.AdamOptimizer(0.05, epsilon=0.0),
             lambda torch, p: torch.optim.Adam(p, lr=0.05, eps=0.0)),
}


@pytest.mark.parametrize("case", sorted(TORCH_CASES))
def test_trajectory_matches_torch(case):
    torch = pytest.importorskip("torch")
    ours, theirs = TORCH_CASES[case]
    expected = torch_trajectory(lambda params: theirs(torch, params))
    np.testing.assert_allclose(graph_trajectory(ours), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(eager_trajectory(ours), expected, rtol=1e-6, atol=1e-9)


def rmsprop_step(w, g, s, t, lr=0.01, decay=0.9, momentum=0.5, eps=1e-10, ms=1.0):
    s["ms"] = decay * s.get("ms", np.full_like(w, ms)) + (1 - decay) * g * g
    s["mom"] = momentum * s.get("mom", 0) + lr * g / np.sqrt(s["ms"] + eps)
    return w - s["mom"]


def keras_rmsprop_step(w, g, s, t):
    """Keras's RMSprop (and its defaults): the mean square starts at 0, not 1."""
    return rmsprop_step(w, g, s, t, lr=0.001, decay=0.9, momentum=0.0, eps=1e-7, ms=0.0)


def keras_centered_rmsprop_step(w, g, s, t, lr=0.01, rho=0.9, momentum=0.5, eps=1e-7):
    """Keras 3's RMSprop(centered=True): the mean square less the squared mean gradient."""
    s["ms"] = rho * s.get("ms", 0) + (1 - rho) * g * g
    s["mg"] = rho * s.get("mg", 0) + (1 - rho) * g
    s["mom"] = momentum * s.get("mom", 0) + lr * g / np.sqrt(s["ms"] - s["mg"] ** 2 + eps)
    return w - s["mom"]


def adam_hat_step(w, g, s, t, lr=0.05, b1=0.9, b2=0.999, eps=1e-3):
    s["m"] = b1 * s.get("m", 0) + (1 - b1) * g
    s["v"] = b2 * s.get("v", 0) + (1 - b2) * g * g
    return w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * s["m"] / (np.sqrt(s["v"]) + eps)


def ftrl_step(w, g, s, t, lr=0.1, l1=0.05, l2=0.01, power=-0.5):
    n = s.get("n", np.full_like(w, 0.1))
    new_n = n + g * g
    s["z"] = s.get("z", 0) + g - (new_n ** -power - n ** -power) / lr * w
    s["n"] = new_n
    quadratic = new_n ** -power / lr + 2 * l2
    return np.where(np.abs(s["z"]) > l1, (np.sign(s["z"]) * l1 - s["z"]) / quadratic, 0.0)


def proximal_gd_step(w, g, s, t, lr=0.01, l1=0.5, l2=0.1):
    prox = w - lr * g
    return np.sign(prox) * np.maximum(np.abs(prox) - lr * l1, 0) / (1 + lr * l2)


def proximal_adagrad_step(w, g, s, t, lr=0.1, l1=0.5, l2=0.1):
    s["a"] = s.get("a", np.full_like(w, 0.1)) + g * g
    rate = lr / np.sqrt(s["a"])
    prox = w - rate * g
    return np.sign(prox) * np.maximum(np.abs(prox) - rate * l1, 0) / (1 + rate * l2)


def keras_adagrad_step(w, g, s, t, lr=0.01, eps=0.1):
    s["a"] = s.get("a", np.full_like(w, 0.1)) + g * g
    return w - lr * g / np.sqrt(s["a"] + eps)       # Keras 3: epsilon inside the root


def keras_sgd_step(w, g, s, t, nesterov=False, momentum=0.9):
    """Keras 3's SGD (keras/src/optimizers/sgd.py), with a rate that falls after step 2: the
    velocity holds the steps taken, each at the rate of its own step."""
    lr = KERAS_RATES[t - 1]
    s["m"] = momentum * s.get("m", 0) - lr * g
    return w + (momentum * s["m"] - lr * g if nesterov else s["m"])


KERAS_RATES = [0.05, 0.05, 0.005, 0.005, 0.005]


FORMULA_CASES = {
    "rmsprop": (lambda: eg.train.RMSPropOptimizer(0.01, decay=0.9, momentum=0.5),
                rmsprop_step),
    "keras_rmsprop": (eg.keras.optimizers.RMSprop, keras_rmsprop_step),
    "keras_rmsprop_centered": (lambda: eg.keras.optimizers.RMSprop(0.01, momentum=0.5,
                                                                   centered=True),
                               keras_centered_rmsprop_step),
    "keras_adagrad": (lambda: eg.keras.optimizers.Adagrad(0.01, epsilon=0.1),
                      keras_adagrad_step),
    "adam_epsilon_hat": (lambda: eg.train.AdamOptimizer(0.05, epsilon=1e-3), adam_hat_step),
    "ftrl": (lambda: eg.train.FtrlOptimizer(0.1, l1_regularization_strength=0.05,
                                            l2_regularization_strength=0.01), ftrl_step),
    "proximal_gd": (lambda: eg.train.ProximalGradientDescentOptimizer(
        0.01, l1_regularization_strength=0.5, l2_regularization_strength=0.1),
        proximal_gd_step),
    "proximal_adagrad": (lambda: eg.train.ProximalAdagradOptimizer(
        0.1, l1_regularization_strength=0.5, l2_regularization_strength=0.1),
        proximal_adagrad_step),
}


@pytest.mark.parametrize("case", sorted(FORMULA_CASES))
def test_trajectory_matches_tf1_formula(case):
    ours, step = FORMULA_CASES[case]
    expected = formula_trajectory(step)
    np.testing.assert_allclose(graph_trajectory(ours), expected, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(eager_trajectory(ours), expected, rtol=1e-6, atol=1e-9)


def eager_trajectory_with_rates(make_optimizer, rates):
    """``eager_trajectory``, with the learning rate set before each step (as Keras's
    LearningRateScheduler and ReduceLROnPlateau set it)."""
    w = eg.Variable(W0.copy())
    opt = make_optimizer()
    out = []
    for rate in rates:
        opt.learning_rate = rate
        opt.minimize(lambda: eg.reduce_sum((w - eg.tensor(TARGET)) ** 3 + w * w), var_list=[w])
        out.append(w.numpy().copy())
    return np.array(out)


@pytest.mark.parametrize("nesterov", [False, True])
def test_keras_sgd_momentum_keeps_the_rate_of_each_step_taken(nesterov):
    """Keras's momentum adds up steps (rate included), TF1's and PyTorch's add up gradients
    (scaled by the current rate): the same while the rate is fixed, different once it falls."""
    def keras_sgd():
        return eg.keras.optimizers.SGD(KERAS_RATES[0], momentum=0.9, nesterov=nesterov)
    expected = formula_trajectory(lambda w, g, s, t: keras_sgd_step(w, g, s, t, nesterov))
    np.testing.assert_allclose(eager_trajectory_with_rates(keras_sgd, KERAS_RATES), expected,
                               rtol=1e-9)

    def tf1_momentum():
        return eg.train.MomentumOptimizer(KERAS_RATES[0], 0.9, use_nesterov=nesterov)
    tf1 = eager_trajectory_with_rates(tf1_momentum, KERAS_RATES)
    np.testing.assert_allclose(tf1[:2], expected[:2], rtol=1e-9)    # the same at a fixed rate
    assert np.abs(tf1[2:] - expected[2:]).min() > 1e-3


def test_slots_are_inspectable_and_initialised_as_tf1():
    with eg.Graph().as_default():
        w = eg.Variable(np.zeros(3), name="w")
        loss = eg.reduce_sum(w * w)
        rms = eg.train.RMSPropOptimizer(0.1)
        train = rms.minimize(loss)
        assert rms.get_slot_names() == ["momentum", "rms"]
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(rms.get_slot(w, "rms")), np.ones(3))
            sess.run(train)


def test_global_step_counts_updates():
    with eg.Graph().as_default():
        w = eg.Variable(1.0)
        step = eg.train.create_global_step()
        train = eg.train.GradientDescentOptimizer(0.1).minimize(w * w, global_step=step)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for _ in range(3):
                sess.run(train)
            assert sess.run(step) == 3


def test_no_gradient_is_a_clear_error():
    with eg.Graph().as_default():
        w = eg.Variable(1.0, name="w")
        with pytest.raises(ValueError, match="No gradients provided"):
            eg.train.GradientDescentOptimizer(0.1).minimize(eg.constant(1.0) * 2, var_list=[w])


def test_state_moves_to_a_fresh_optimizer_and_continues_the_same_trajectory():
    def loss_fn(w):
        return lambda: eg.reduce_sum((w - TARGET) ** 3 + w * w)

    w = eg.Variable(W0.copy(), name="w")
    adam = eg.train.AdamOptimizer(0.1)
    for _ in range(3):
        adam.minimize(loss_fn(w), var_list=[w])
    state = adam.get_state([("w", w)])
    assert sorted(state) == ["step", "w/m", "w/v"] and state["step"] == 3.0

    w2 = eg.Variable(w.numpy(), name="w")
    fresh = eg.train.AdamOptimizer(0.1)
    fresh.set_state(state, [("w", w2)])
    adam.minimize(loss_fn(w), var_list=[w])
    fresh.minimize(loss_fn(w2), var_list=[w2])
    np.testing.assert_array_equal(w2.numpy(), w.numpy())
    np.testing.assert_array_equal(fresh.get_slot(w2, "m").numpy(), adam.get_slot(w, "m").numpy())


# ----------------------------------------------------------------------------- Adam in place
def _adam_run(dtype, epsilon_hat, in_place, learning_rate=0.01, steps=30):
    """w, m and v after ``steps`` eager Adam steps on fixed gradients, with the rule's
    in-place arrays (``update_in_place``) or, switched off, its framework ops (``update``)."""
    rng = np.random.default_rng(0)
    w = eg.Variable(rng.normal(size=(5, 7)).astype(dtype))
    grads = [rng.normal(size=(5, 7)).astype(dtype) for _ in range(steps)]
    opt = eg.train.AdamOptimizer(learning_rate, epsilon_hat=epsilon_hat)
    if not in_place:
        opt.update_in_place = None
    for g in grads:
        opt.apply_gradients([(eg.constant(g), w)])
    return [w.numpy(), opt.get_slot(w, "m").numpy(), opt.get_slot(w, "v").numpy()]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("epsilon_hat", [True, False])
def test_adam_in_place_gives_the_ops_formulas_bits(dtype, epsilon_hat):
    """The eager in-place Adam is the graph's formula, operation for operation: the lessons'
    printed losses and accuracies do not move by a rounding."""
    fast = _adam_run(dtype, epsilon_hat, in_place=True)
    ops = _adam_run(dtype, epsilon_hat, in_place=False)
    for name, a, b in zip("wmv", fast, ops):
        assert a.dtype == dtype
        assert np.array_equal(a, b), f"{name} differs by {np.abs(a - b).max()}"


@pytest.mark.parametrize("epsilon_hat", [True, False])
@pytest.mark.parametrize("rate", [np.float64(0.01), np.float32(0.01), 1])
def test_adam_in_place_reads_a_numpy_or_integer_rate_as_the_ops_do(rate, epsilon_hat):
    """A rate from numpy (``np.logspace(...)[i]``) is a number to the ops, cast to the
    variable's dtype; a float64 scalar in numpy arithmetic would instead promote the step."""
    fast = _adam_run(np.float32, epsilon_hat, in_place=True, learning_rate=rate)
    ops = _adam_run(np.float32, epsilon_hat, in_place=False, learning_rate=rate)
    for name, a, b in zip("wmv", fast, ops):
        assert np.array_equal(a, b), f"{name} differs by {np.abs(a - b).max()}"


def test_adam_takes_the_ops_where_the_arrays_cannot_be_written_as_they_are():
    """A learning rate that is a tensor, a gradient of another dtype, a numerics check that
    watches each op: the step goes through ``update`` (and still trains)."""
    rng = np.random.default_rng(2)
    w0, g0 = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    expected = _adam_steps(eg.train.AdamOptimizer(0.1), w0, g0)
    rate = eg.Variable(0.1, dtype=eg.float64, trainable=False)
    opt = eg.train.AdamOptimizer(rate)
    assert not opt._updates_in_place(eg.constant(g0), eg.Variable(w0))
    np.testing.assert_allclose(_adam_steps(opt, w0, g0), expected, rtol=1e-12)
    eg.debugging.enable_check_numerics()
    try:
        opt = eg.train.AdamOptimizer(0.1)
        assert not opt._updates_in_place(eg.constant(g0), eg.Variable(w0))
        np.testing.assert_array_equal(_adam_steps(opt, w0, g0), expected)
    finally:
        eg.debugging.disable_check_numerics()


def _adam_steps(opt, w0, g0, steps=3):
    w = eg.Variable(w0.copy())
    for _ in range(steps):
        opt.apply_gradients([(eg.constant(g0), w)])
    return w.numpy()


def test_adam_in_place_keeps_pytorchs_in_place_rules():
    """eg.optim.Adam on a plain tensor: the tensor keeps its identity and its array, and a
    graph recorded before the step refuses backward, as after any in-place change."""
    w = eg.tensor([[1.0, -2.0]], requires_grad=True)
    array = w._value
    opt = eg.optim.Adam([w], lr=0.1)
    (w * w).sum().backward()
    stale = (w * w).sum()             # (its backward reads w's values)
    opt.step()
    assert w._value is array
    np.testing.assert_allclose(w.numpy(), [[0.9, -1.9]], rtol=1e-6)
    with pytest.raises(RuntimeError, match="in ?place|inplace"):
        stale.backward()
