"""Gradient clipping: TF's ``eg.clip_by_global_norm`` / ``clip_by_norm`` / ``global_norm``
against TF's documented formulas and torch, PyTorch's ``eg.nn.utils.clip_grad_norm_`` /
``clip_grad_value_`` against torch, and Keras's ``clipnorm`` / ``global_clipnorm`` /
``clipvalue`` in ``apply_gradients`` and ``fit``."""
import numpy as np
import pytest

import edugraph as eg
from tests.gradcheck import gradcheck

torch = pytest.importorskip("torch")

rng = np.random.default_rng(27)
GRADS = [rng.normal(size=(2, 3)), rng.normal(size=(3,)), rng.normal(size=(3, 3))]
NORM = np.sqrt(sum(np.sum(g ** 2) for g in GRADS))          # about 3.7


def tf_clip_by_global_norm(t_list, clip_norm):
    """TF's documented rule: t_list[i] * clip_norm / max(global_norm, clip_norm)."""
    norm = np.sqrt(sum(np.sum(t ** 2) for t in t_list))
    return [t * clip_norm / max(norm, clip_norm) for t in t_list], norm


def host(tensors):
    return [None if t is None else t.numpy() for t in tensors]


# ------------------------------------------------------------------- TF: clip_by_global_norm
@pytest.mark.parametrize("clip_norm", [1.0, NORM / 2, 10.0])
def test_clip_by_global_norm_follows_tfs_formula(clip_norm, device):
    with eg.device(device):
        clipped, norm = eg.clip_by_global_norm([eg.tensor(g) for g in GRADS], clip_norm)
    expected, expected_norm = tf_clip_by_global_norm(GRADS, clip_norm)
    assert norm.device.name == clipped[0].device.name == device
    np.testing.assert_allclose(norm.numpy(), expected_norm, rtol=1e-12)
    for got, want in zip(host(clipped), expected):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    after = np.sqrt(sum(np.sum(c ** 2) for c in host(clipped)))
    assert after == pytest.approx(min(clip_norm, NORM), rel=1e-12)


def test_gradients_under_the_limit_come_back_unchanged_and_in_their_dtype():
    grads = [eg.tensor(g.astype(np.float32)) for g in GRADS]
    clipped, norm = eg.clip_by_global_norm(grads, 2 * float(NORM))
    assert all(c.dtype == eg.float32 for c in clipped) and norm.dtype == eg.float32
    for got, want in zip(host(clipped), GRADS):
        np.testing.assert_array_equal(got, want.astype(np.float32))


def test_clip_by_global_norm_scales_as_torchs_clip_grad_norm_():
    params = [torch.tensor(g, requires_grad=True) for g in GRADS]
    for p, g in zip(params, GRADS):
        p.grad = torch.tensor(g)
    torch_norm = torch.nn.utils.clip_grad_norm_(params, 1.0)
    clipped, norm = eg.clip_by_global_norm([eg.tensor(g) for g in GRADS], 1.0)
    assert norm.item() == pytest.approx(torch_norm.item(), rel=1e-12)
    for got, p in zip(host(clipped), params):     # torch divides by norm + 1e-6
        np.testing.assert_allclose(got, p.grad.numpy(), rtol=1e-6)


def test_none_entries_stay_none_and_arrays_are_taken():
    clipped, norm = eg.clip_by_global_norm([GRADS[0], None, GRADS[2]], 0.5)
    assert clipped[1] is None
    expected, expected_norm = tf_clip_by_global_norm([GRADS[0], GRADS[2]], 0.5)
    assert norm.item() == pytest.approx(expected_norm, rel=1e-12)
    np.testing.assert_allclose(clipped[2].numpy(), expected[1], rtol=1e-12)


def test_use_norm_replaces_the_computed_norm():
    clipped, norm = eg.clip_by_global_norm([eg.tensor(GRADS[0])], 1.0, use_norm=4.0)
    assert float(norm) == 4.0
    np.testing.assert_allclose(clipped[0].numpy(), GRADS[0] / 4.0, rtol=1e-12)


def test_an_infinite_or_nan_norm_makes_every_entry_nan_as_in_tf():
    for bad in (np.inf, np.nan):
        clipped, norm = eg.clip_by_global_norm([eg.tensor([bad, 1.0]), eg.tensor([2.0])], 1.0)
        assert all(np.isnan(c.numpy()).all() for c in clipped)


def test_clip_by_global_norm_refuses_one_tensor_and_a_limit_of_zero():
    with pytest.raises(TypeError, match=r"list of tensors.*\[t\]"):
        eg.clip_by_global_norm(eg.tensor(GRADS[0]), 1.0)
    with pytest.raises(TypeError, match="list of tensors"):
        eg.clip_by_global_norm(GRADS[0], 1.0)
    with pytest.raises(ValueError, match="positive"):
        eg.clip_by_global_norm([eg.tensor(GRADS[0])], 0.0)
    with pytest.raises(ValueError, match="no tensors"):
        eg.global_norm([None, None])


@pytest.mark.parametrize("clip_norm", [1.0, 10.0])
def test_clip_by_global_norm_gradients_by_finite_differences(clip_norm):
    def clipped_and_norm(a, b):
        clipped, norm = eg.clip_by_global_norm([a, b], clip_norm)
        return eg.concat([eg.reshape(clipped[0], [-1]), clipped[1], eg.reshape(norm, [1])], 0)
    gradcheck(clipped_and_norm, GRADS[0], GRADS[1])


def test_in_a_graph_the_clipped_gradients_are_nodes_with_the_eager_values():
    x_value = rng.normal(size=(4, 3))
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float64, shape=(None, 3), name="x")
        w = eg.Variable(GRADS[2], name="w")
        loss = eg.reduce_sum(eg.square(eg.matmul(x, w)))
        grads = eg.gradients(loss, [w])
        clipped, norm = eg.clip_by_global_norm(grads, 1.0, name="clip")
        assert clipped[0].name.startswith("clip/")
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            got, got_norm = sess.run([clipped[0], norm], {x: x_value})
    expected_grad = 2 * x_value.T @ (x_value @ GRADS[2])
    expected, expected_norm = tf_clip_by_global_norm([expected_grad], 1.0)
    np.testing.assert_allclose(got, expected[0], rtol=1e-10)
    assert got_norm == pytest.approx(expected_norm, rel=1e-10)


# -------------------------------------------------------------- TF: clip_by_norm, global_norm
def test_global_norm_is_the_length_of_all_values_as_one_vector():
    norm = eg.global_norm([eg.tensor(g) for g in GRADS] + [None])
    assert norm.item() == pytest.approx(np.linalg.norm(np.concatenate(
        [g.ravel() for g in GRADS])), rel=1e-12)


@pytest.mark.parametrize("axes", [None, 0, [1]])
def test_clip_by_norm_follows_tfs_formula(axes, device):
    t = GRADS[0] * 3
    with eg.device(device):
        got = eg.clip_by_norm(eg.tensor(t), 1.5, axes=axes).numpy()
    axis = None if axes is None else tuple(np.atleast_1d(axes))
    norm = np.sqrt(np.sum(t ** 2, axis=axis, keepdims=True))
    np.testing.assert_allclose(got, t * 1.5 / np.maximum(norm, 1.5), rtol=1e-12)


def test_clip_by_norm_of_zeros_is_zeros_with_a_finite_gradient():
    t = eg.zeros(3, dtype=eg.float64, requires_grad=True)
    out = eg.clip_by_norm(t, 1.0)
    out.sum().backward()
    np.testing.assert_array_equal(out.numpy(), 0.0)
    np.testing.assert_array_equal(t.grad.numpy(), 1.0)      # scale 1 near 0: no NaN


def test_clip_by_norm_gradients_by_finite_differences():
    gradcheck(lambda t: eg.clip_by_norm(t, 1.0), GRADS[0])          # clipped
    gradcheck(lambda t: eg.clip_by_norm(t, 10.0), GRADS[0])         # left alone
    gradcheck(lambda t: eg.clip_by_norm(t, 1.0, axes=[1]), GRADS[0] * [[0.1], [3.0]])


# --------------------------------------------------------- PyTorch: nn.utils.clip_grad_norm_
def with_grads(lib, grads=GRADS, without_grad=False):
    """Parameters with the given .grad (and one without a gradient, if asked)."""
    make = (lambda g: torch.tensor(g, requires_grad=True)) if lib is torch else \
        (lambda g: eg.tensor(g, requires_grad=True))
    params = [make(g) for g in grads]
    for p, g in zip(params, grads):
        p.grad = torch.tensor(g) if lib is torch else eg.tensor(g)
    if without_grad:
        params.insert(1, make(np.ones(2)))
    return params


@pytest.mark.parametrize("max_norm, norm_type", [(1.0, 2.0), (100.0, 2.0), (1.0, np.inf),
                                                 (2.0, 1)])
def test_clip_grad_norm_matches_torch(max_norm, norm_type):
    theirs = with_grads(torch, without_grad=True)
    ours = with_grads(eg, without_grad=True)
    grads_before = [p.grad for p in ours if p.grad is not None]
    their_norm = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    our_norm = eg.nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    assert isinstance(our_norm, eg.Tensor)
    assert our_norm.item() == pytest.approx(their_norm.item(), rel=1e-12)
    for p, q in zip(ours, theirs):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)
    assert all(a is b for a, b in zip(grads_before, [p.grad for p in ours if p.grad is not None]))


def test_clip_grad_norm_leaves_the_gradients_on_their_device(device):
    with eg.device(device):
        ours = with_grads(eg)
        norm = eg.nn.utils.clip_grad_norm_(ours, 1.0)
    assert norm.device.name == device and all(p.grad.device.name == device for p in ours)
    expected, _ = tf_clip_by_global_norm(GRADS, 1.0)
    for p, g in zip(ours, expected):
        np.testing.assert_allclose(p.grad.numpy(), g, rtol=1e-5)


def test_clip_grad_norm_takes_one_tensor_a_generator_and_no_gradients():
    theirs, ours = with_grads(torch, GRADS[:1]), with_grads(eg, GRADS[:1])
    torch.nn.utils.clip_grad_norm_(theirs[0], 0.5)
    eg.nn.utils.clip_grad_norm_(ours[0], 0.5)
    np.testing.assert_allclose(ours[0].grad.numpy(), theirs[0].grad.numpy(), rtol=1e-12)
    net = eg.nn.Linear(3, 2)
    assert eg.nn.utils.clip_grad_norm_(net.parameters(), 1.0).item() == 0.0   # no .grad yet
    with pytest.raises(TypeError, match=r"net.parameters\(\)"):
        eg.nn.utils.clip_grad_norm_(net, 1.0)


def test_clip_grad_norm_raises_on_a_nonfinite_norm_only_when_asked():
    bad = [np.array([np.inf, 1.0])]
    with pytest.raises(RuntimeError, match="non-finite"):
        eg.nn.utils.clip_grad_norm_(with_grads(eg, bad), 1.0, error_if_nonfinite=True)
    with pytest.raises(RuntimeError, match="non-finite"):
        torch.nn.utils.clip_grad_norm_(with_grads(torch, bad), 1.0, error_if_nonfinite=True)
    assert eg.nn.utils.clip_grad_norm_(with_grads(eg, bad), 1.0).item() == np.inf


def test_clip_grad_value_matches_torch():
    theirs, ours = with_grads(torch, without_grad=True), with_grads(eg, without_grad=True)
    torch.nn.utils.clip_grad_value_(theirs, 0.3)
    eg.nn.utils.clip_grad_value_(ours, 0.3)
    for p, q in zip(ours, theirs):
        if p.grad is not None:
            np.testing.assert_array_equal(p.grad.numpy(), q.grad.numpy())


def test_a_clipped_training_loop_follows_torchs():
    """backward, clip_grad_norm_, step: three steps of SGD on a linear model, as in torch."""
    x, y = rng.normal(size=(8, 3)), rng.normal(size=(8, 2))
    eg_net, torch_net = eg.nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        torch_net.weight.copy_(torch.tensor(eg_net.weight.numpy()))
        torch_net.bias.copy_(torch.tensor(eg_net.bias.numpy()))
    nets = {eg: eg_net, torch: torch_net}
    optims = {eg: eg.optim.SGD(eg_net.parameters(), lr=0.5),
              torch: torch.optim.SGD(torch_net.parameters(), lr=0.5)}
    for _ in range(3):
        norms = {}
        for lib in (eg, torch):
            loss = ((nets[lib](lib.tensor(x)) - lib.tensor(y)) ** 2).sum()
            optims[lib].zero_grad()
            loss.backward()
            norms[lib] = lib.nn.utils.clip_grad_norm_(nets[lib].parameters(), 1.0).item()
            optims[lib].step()
        assert norms[eg] == pytest.approx(norms[torch], rel=1e-10) and norms[eg] > 1.0
    np.testing.assert_allclose(eg_net.weight.numpy(), torch_net.weight.detach().numpy(),
                               rtol=1e-10)


# ------------------------------------------------------ Keras: clipnorm, global_clipnorm, ...
def one_sgd_step(**clipping):
    """The variables after one step of Keras's SGD(0.1, **clipping) on GRADS."""
    variables = [eg.Variable(np.zeros_like(g)) for g in GRADS]
    optimizer = eg.keras.optimizers.SGD(0.1, **clipping)
    optimizer.apply_gradients(zip([eg.tensor(g) for g in GRADS], variables))
    return [v.numpy() for v in variables]


def test_keras_global_clipnorm_clips_all_gradients_together():
    expected, _ = tf_clip_by_global_norm(GRADS, 1.0)
    for got, g in zip(one_sgd_step(global_clipnorm=1.0), expected):
        np.testing.assert_allclose(got, -0.1 * g, rtol=1e-12)


def test_keras_clipnorm_clips_each_gradient_by_its_own_norm():
    for got, g in zip(one_sgd_step(clipnorm=1.0), GRADS):
        np.testing.assert_allclose(got, -0.1 * g / max(1.0, np.linalg.norm(g)), rtol=1e-12)


def test_keras_clipvalue_clips_each_entry():
    for got, g in zip(one_sgd_step(clipvalue=0.2), GRADS):
        np.testing.assert_allclose(got, -0.1 * np.clip(g, -0.2, 0.2), rtol=1e-12)


@pytest.mark.parametrize("two", [{"clipnorm": 1.0, "global_clipnorm": 1.0},
                                 {"clipnorm": 1.0, "clipvalue": 0.1},
                                 {"clipvalue": 0.1, "global_clipnorm": 1.0}])
def test_keras_refuses_two_clippings_and_a_limit_of_zero(two):
    """Keras 3 allows one clipping at a time (two given: the second was silently ignored)."""
    with pytest.raises(ValueError, match="Only one of `clipnorm`, `clipvalue` and "
                                         "`global_clipnorm`.*" + "=.*".join(two)):
        eg.keras.optimizers.Adam(**two)
    with pytest.raises(ValueError, match="global_clipnorm must be positive"):
        eg.keras.optimizers.SGD(global_clipnorm=0)


def test_fit_applies_the_optimizers_clipping():
    """One step of fit with global_clipnorm equals the step by hand with the clipped
    gradients (a loss whose gradient is much longer than 0.01)."""
    x, y = rng.normal(size=(16, 3)), 10 * rng.normal(size=(16, 1))

    def model():
        eg.random.set_seed(5)
        return eg.keras.Sequential([eg.keras.layers.Dense(1, input_shape=(3,))])
    net = model()
    net.compile(eg.keras.optimizers.SGD(0.1, global_clipnorm=0.01), loss="mse")
    net.fit(x.astype(np.float32), y.astype(np.float32), batch_size=16, epochs=1, verbose=0)

    by_hand = model()
    with eg.GradientTape() as tape:
        loss = eg.reduce_mean(eg.square(by_hand(x.astype(np.float32)) - y.astype(np.float32)))
    grads = tape.gradient(loss, by_hand.trainable_variables)
    clipped, norm = eg.clip_by_global_norm(grads, 0.01)
    assert norm.item() > 1.0
    for v, g in zip(by_hand.trainable_variables, clipped):
        v.assign_sub(0.1 * g)
    for got, want in zip(net.get_weights(), by_hand.get_weights()):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_keras_clipping_in_a_graphs_minimize():
    with eg.Graph().as_default():
        w = eg.Variable(np.array([3.0, 4.0]), name="w")
        loss = eg.reduce_sum(w * w) / 2                     # gradient w, norm 5
        step = eg.keras.optimizers.SGD(1.0, global_clipnorm=1.0).minimize(loss)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            sess.run(step)
            np.testing.assert_allclose(sess.run(w), [3.0 - 0.6, 4.0 - 0.8], rtol=1e-12)
