"""Layers against PyTorch CPU (NHWC ↔ NCHW transposed) and against central differences."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import layers
from edugraph.errors import ShapeError
from tests.gradcheck import gradcheck

torch = pytest.importorskip("torch")
F = torch.nn.functional


def nchw(a):
    return torch.tensor(np.ascontiguousarray(a.transpose(0, 3, 1, 2)), requires_grad=True)


def nhwc(t):
    return t.detach().numpy().transpose(0, 2, 3, 1)


@pytest.mark.parametrize("padding,strides", [("valid", 1), ("valid", 2), ("same", 1)])
def test_conv2d_matches_torch(device, padding, strides):
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(2, 7, 6, 3)), rng.normal(size=(3, 3, 3, 4))
    ex, ew = (eg.tensor(a, device=device, requires_grad=True) for a in (x, w))
    y = eg.nn.conv2d(ex, ew, strides, padding)
    upstream = rng.normal(size=y.shape)
    y.backward(eg.tensor(upstream, device=device))
    tx, tw = nchw(x), torch.tensor(w.transpose(3, 2, 0, 1).copy(), requires_grad=True)
    ty = F.conv2d(tx, tw, stride=strides, padding=1 if padding == "same" else 0)
    ty.backward(torch.tensor(upstream.transpose(0, 3, 1, 2).copy()))
    np.testing.assert_allclose(y.numpy(), nhwc(ty), atol=1e-10)
    np.testing.assert_allclose(ex.grad.numpy(), nhwc(tx.grad), atol=1e-10)
    np.testing.assert_allclose(ew.grad.numpy(), tw.grad.numpy().transpose(2, 3, 1, 0), atol=1e-10)


def test_conv2d_same_with_stride_pads_like_tensorflow():
    # TF puts the odd extra padding pixel at the bottom/right: 6 wide, k=3, s=2 → pad (0, 1).
    x = np.arange(36.0).reshape(1, 6, 6, 1)
    w = np.ones((3, 3, 1, 1))
    y = eg.nn.conv2d(eg.tensor(x), eg.tensor(w), 2, "same").numpy()
    padded = np.pad(x[0, :, :, 0], ((0, 1), (0, 1)))
    expected = [[padded[i:i + 3, j:j + 3].sum() for j in (0, 2, 4)] for i in (0, 2, 4)]
    np.testing.assert_allclose(y[0, :, :, 0], expected)


@pytest.mark.parametrize("padding,strides", [("valid", 1), ("same", 2)])
def test_conv2d_gradcheck(device, padding, strides):
    rng = np.random.default_rng(1)
    gradcheck(lambda x, w: eg.nn.conv2d(x, w, strides, padding),
              rng.normal(size=(2, 5, 4, 2)), rng.normal(size=(3, 2, 2, 3)),
              device=device, name=f"conv2d {padding}")


@pytest.mark.parametrize("pool,strides", [(2, 2), (3, 1), (2, 1)])
def test_max_pool_matches_torch(device, pool, strides):
    x = np.random.default_rng(2).normal(size=(2, 6, 7, 3))
    ex = eg.tensor(x, device=device, requires_grad=True)
    y = eg.nn.max_pool2d(ex, pool, strides)
    (y * y).sum().backward()
    tx = nchw(x)
    ty = F.max_pool2d(tx, pool, strides)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.numpy(), nhwc(ty), atol=1e-12)
    np.testing.assert_allclose(ex.grad.numpy(), nhwc(tx.grad), atol=1e-12)


def test_max_pool_routes_gradient_to_the_winner_only():
    x = eg.tensor([[[[1.0], [5.0]], [[2.0], [3.0]]]], requires_grad=True)   # one 2×2 window
    eg.nn.max_pool2d(x, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy()[0, :, :, 0], [[0, 1], [0, 0]])


def test_max_pool_same_padding_never_picks_the_padding(device):
    x = -np.random.default_rng(3).uniform(1, 2, size=(1, 5, 5, 2))    # all negative
    y = eg.nn.max_pool2d(eg.tensor(x, device=device), 2, 2, "same").numpy()
    assert y.shape == (1, 3, 3, 2) and (y < 0).all()
    np.testing.assert_allclose(y[0, 2, 2], x[0, 4, 4])
    gradcheck(lambda t: eg.nn.max_pool2d(t, 2, 2, "same"), x, device=device, name="max_pool")


def test_conv_layer_shapes_and_errors():
    layer = layers.Conv2D(4, 3, padding="same", activation="relu")
    y = layer(eg.zeros((2, 8, 8, 3)))
    assert y.shape == (2, 8, 8, 4) and layer.kernel.shape == (3, 3, 3, 4)
    assert layer.compute_output_shape((None, 8, 8, 3)) == (None, 8, 8, 4)
    with pytest.raises(eg.errors.ShapeError, match="4-D NHWC"):
        layer(eg.zeros((8, 8, 3)))
    with pytest.raises(eg.errors.ShapeError, match="5 channels"):
        layer(eg.zeros((2, 8, 8, 5)))
    pool = layers.MaxPooling2D()
    assert pool(y).shape == (2, 4, 4, 4)
    assert pool.compute_output_shape((None, 7, 7, 4)) == (None, 3, 3, 4)


def _bn_pair(momentum_keras, eps, channels, dtype="float64"):
    ours = layers.BatchNormalization(momentum=momentum_keras, epsilon=eps, dtype=dtype)
    theirs = torch.nn.BatchNorm2d(channels, eps=eps, momentum=1 - momentum_keras).double()
    return ours, theirs


def test_batch_norm_training_matches_torch(device):
    rng = np.random.default_rng(4)
    x = rng.normal(2.0, 3.0, size=(8, 3, 3, 4))
    with eg.device(device):
        ours, theirs = _bn_pair(0.9, 1e-5, 4)
        gamma, beta = rng.normal(size=4), rng.normal(size=4)
        ours.build_for((None, 3, 3, 4))
        ours.gamma.assign(gamma), ours.beta.assign(beta)
        ex = eg.tensor(x, requires_grad=True)
        y = ours(ex, training=True)
        upstream = rng.normal(size=y.shape)
        y.backward(eg.tensor(upstream))
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(gamma)), theirs.bias.copy_(torch.tensor(beta))
    tx = nchw(x)
    ty = theirs.train()(tx)
    ty.backward(torch.tensor(upstream.transpose(0, 3, 1, 2).copy()))
    np.testing.assert_allclose(y.numpy(), nhwc(ty), atol=1e-10)
    np.testing.assert_allclose(ex.grad.numpy(), nhwc(tx.grad), atol=1e-10)
    np.testing.assert_allclose(ours.gamma.grad.numpy(), theirs.weight.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(ours.beta.grad.numpy(), theirs.bias.grad.numpy(), atol=1e-10)
    # Moving mean: same rule. Moving variance: Keras keeps the biased batch variance, PyTorch
    # the unbiased one (n / (n − 1) larger), so undo Bessel's correction before comparing.
    n = x.size // 4
    np.testing.assert_allclose(ours.moving_mean.numpy(), theirs.running_mean.numpy(), atol=1e-12)
    batch_var_unbiased = (theirs.running_var.numpy() - 0.9) / 0.1
    np.testing.assert_allclose(ours.moving_variance.numpy(),
                               0.9 + 0.1 * batch_var_unbiased * (n - 1) / n, atol=1e-12)


def test_batch_norm_inference_uses_moving_averages_like_torch(device):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(5, 2, 2, 3))
    mean, var = rng.normal(size=3), rng.uniform(0.5, 2, size=3)
    with eg.device(device):
        ours, theirs = _bn_pair(0.99, 1e-3, 3)
        ours.build_for((None, 2, 2, 3))
        ours.moving_mean.assign(mean), ours.moving_variance.assign(var)
        before = ours.moving_mean.numpy().copy()
        y = ours(eg.tensor(x))                 # Keras layers default to inference
    with torch.no_grad():
        theirs.running_mean.copy_(torch.tensor(mean)), theirs.running_var.copy_(torch.tensor(var))
    np.testing.assert_allclose(y.numpy(), nhwc(theirs.eval()(nchw(x))), atol=1e-10)
    np.testing.assert_array_equal(ours.moving_mean.numpy(), before)    # not updated


def test_batch_norm_gradcheck(device):
    x = np.random.default_rng(6).normal(size=(6, 3))
    with eg.device(device):
        layer = layers.BatchNormalization(dtype="float64")
        gradcheck(lambda t: layer(t, training=True), x, device=device, name="batch_norm")


def test_layer_norm_matches_torch(device):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 5, 6))
    with eg.device(device):
        ours = eg.nn.LayerNorm(6, dtype="float64")
        gamma, beta = rng.normal(size=6), rng.normal(size=6)
        ours.weight.assign(gamma), ours.bias.assign(beta)
        ex = eg.tensor(x, requires_grad=True)
        y = ours(ex)
        (y * y).sum().backward()
    theirs = torch.nn.LayerNorm(6, eps=1e-5).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(gamma)), theirs.bias.copy_(torch.tensor(beta))
    tx = torch.tensor(x, requires_grad=True)
    ty = theirs(tx)
    (ty * ty).sum().backward()
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), atol=1e-10)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), atol=1e-10)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), atol=1e-10)
    gradcheck(lambda t: ours(t), x[:2, :2], device=device, name="layer_norm")


def test_layer_norm_over_several_dimensions_takes_torchs_state_dict():
    rng = np.random.default_rng(9)
    x = rng.normal(size=(2, 4, 5))
    theirs = torch.nn.LayerNorm([4, 5]).double()
    with torch.no_grad():
        theirs.weight.normal_(), theirs.bias.normal_()
    ours = eg.nn.LayerNorm([4, 5]).double()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ex, tx = eg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ours(ex) ** 3).sum().backward()
    (theirs(tx) ** 3).sum().backward()
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-10)
    assert repr(ours) == repr(theirs)
    with pytest.raises(ShapeError, match=r"last dimensions \(4, 5\).*shape \(2, 5, 4\)"):
        ours(eg.tensor(x.transpose(0, 2, 1)))


def test_pytorch_embedding_has_torchs_weight_and_initial_spread():
    theirs = torch.nn.Embedding(10, 4).double()
    ours = eg.nn.Embedding(10, 4).double()
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    ids = np.array([[1, 3, 1], [7, 1, 0]])
    np.testing.assert_array_equal(ours(eg.tensor(ids)).numpy(),
                                  theirs(torch.tensor(ids)).detach().numpy())
    assert abs(eg.nn.Embedding(1000, 64).weight.numpy().std() - 1) < 0.02     # N(0, 1)


def test_embedding_matches_torch_and_scatters_into_used_rows(device):
    rng = np.random.default_rng(8)
    table = rng.normal(size=(10, 4))
    ids = np.array([[1, 3, 1], [7, 1, 0]])
    with eg.device(device):
        ours = layers.Embedding(10, 4, dtype="float64")
        ours.build_for((None, 3))
        ours.embeddings.assign(table)
        y = ours(eg.tensor(ids))
        upstream = rng.normal(size=y.shape)
        y.backward(eg.tensor(upstream))
    theirs = torch.nn.Embedding(10, 4).double()
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(table))
    ty = theirs(torch.tensor(ids))
    ty.backward(torch.tensor(upstream))
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy())
    grad = ours.embeddings.grad.numpy()
    np.testing.assert_allclose(grad, theirs.weight.grad.numpy(), atol=1e-12)
    unused = [i for i in range(10) if i not in ids]
    assert not grad[unused].any()


def test_embedding_bad_ids_name_the_layer():
    layer = layers.Embedding(5, 2)
    with pytest.raises(eg.errors.ShapeError, match="gather"):
        layer(eg.tensor([[1, 9]]))
    with pytest.raises(eg.errors.ShapeError, match="integers"):
        layer(eg.tensor([[True, False]]))


def test_dense_gradcheck_and_activation_names(device):
    rng = np.random.default_rng(9)
    with eg.device(device):
        layer = layers.Dense(3, activation="tanh", dtype="float64")
        layer.build_for((None, 4))
        kernel, bias = layer.kernel, layer.bias
        y = layer(eg.tensor(rng.normal(size=(2, 4))))
        assert y.shape == (2, 3)
    gradcheck(lambda x, w, b: eg.tanh(x @ w + b), rng.normal(size=(2, 4)), kernel.numpy(),
              bias.numpy(), device=device)
    with pytest.raises(ValueError, match="Unknown activation 'rellu'"):
        layers.Dense(3, activation="rellu")
    with pytest.raises(eg.errors.ShapeError, match="built for inputs with 4 features"):
        layer(eg.tensor(np.ones((2, 5)), device=device))


def test_dropout_is_inverted_and_off_at_inference(device):
    with eg.device(device):
        drop = layers.Dropout(0.25)
        x = eg.ones((200, 50))
        assert drop(x) is x                                   # Keras: inference by default
        y = drop(x, training=True).numpy()
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.75)
    assert abs(kept.mean() - 0.75) < 0.02
    torch_style = eg.nn.Dropout(0.25)
    assert (torch_style(eg.ones((10, 10))).numpy() == 0).any()     # PyTorch: training default
    assert (torch_style.eval()(eg.ones((10, 10))).numpy() == 1).all()


def test_a_seeded_dropout_draws_a_new_mask_at_each_call():
    """Keras's Dropout(rate, seed=s) draws a new mask at every call; the seed makes the
    sequence of masks reproducible. It repeated its first mask, so in fit it dropped the same
    units at every step."""
    drop = layers.Dropout(0.5, seed=1)
    x = eg.ones((4, 10))
    first, second = (drop(x, training=True).numpy() for _ in range(2))
    assert not np.array_equal(first, second)
    eg.random.set_seed(0)
    np.testing.assert_array_equal(drop(x, training=True).numpy(), first)


def test_embedding_starts_from_weights_as_in_keras():
    """Keras 2's Embedding(..., weights=[table]) (Keras 3 also takes the table alone)."""
    table = np.arange(6, dtype=np.float32).reshape(3, 2)
    for weights in ([table], table):
        lookup = layers.Embedding(3, 2, weights=weights, trainable=False)
        np.testing.assert_array_equal(lookup(eg.tensor([2, 0])).numpy(), table[[2, 0]])
        assert lookup.trainable_variables == []
    with pytest.raises(ValueError, match=r"has shape \(3, 3\), but the array has shape"):
        layers.Embedding(3, 3, weights=[table])


def test_flatten_reshape_add_concatenate():
    x = eg.ones((2, 3, 4))
    assert layers.Flatten()(x).shape == (2, 12)
    assert layers.Reshape((4, 3))(x).shape == (2, 4, 3)
    assert layers.Add()([x, x]).numpy().max() == 2
    assert layers.Concatenate()([x, x]).shape == (2, 3, 8)
    assert layers.Concatenate(axis=1).compute_output_shape([(None, 3, 4), (None, 2, 4)]) == \
        (None, 5, 4)


def test_functional_dense_from_the_slides():
    x = eg.tensor(np.random.default_rng(0).normal(size=(5, 7)).astype(np.float32))
    init = eg.initializers.variance_scaling(2.0)              # He init, as on the slide
    y = layers.dense(inputs=x, units=3, activation=eg.nn.relu, kernel_initializer=init)
    assert y.shape == (5, 3) and (y.numpy() >= 0).all()
    loss = eg.losses.mean_squared_error(y, eg.zeros((5, 3)))
    loss.backward()
    assert loss.item() >= 0


def test_layer_ops_are_named_under_the_layer_in_a_graph():
    with eg.Graph().as_default() as g:
        x = eg.placeholder(eg.float32, shape=(None, 4), name="x")
        h = layers.dense(x, 3, activation=eg.nn.relu, name="hidden")
        layers.dense(h, 2, name="out")
    names = [op.name for op in g.get_operations()]
    assert {"hidden/MatMul", "hidden/Relu", "out/MatMul"} <= set(names), names
    assert "hidden/kernel" in names and "out/bias" in names


def test_each_graph_numbers_its_layers_from_the_start():
    names = []
    for _ in range(2):
        with eg.Graph().as_default() as g:
            x = eg.placeholder(eg.float32, shape=(None, 4), name="x")
            layers.dense(layers.dense(x, 3), 2)
        names.append([op.name for op in g.get_operations() if op.type == "MatMul"])
    assert names == [["dense/MatMul", "dense_1/MatMul"]] * 2


# ----------------------------------------------------------------------------- recurrent
def _lstm_and_torch(units=5, n_in=6):
    eg.random.set_seed(3)
    cell = layers.LSTMCell(units, dtype="float64")
    cell.build_for((None, n_in))
    reference = torch.nn.LSTMCell(n_in, units).double()
    with torch.no_grad():             # Keras's (in, 4·units) weights are torch's transposed
        reference.weight_ih.copy_(torch.tensor(cell.kernel.numpy().T))
        reference.weight_hh.copy_(torch.tensor(cell.recurrent_kernel.numpy().T))
        reference.bias_ih.copy_(torch.tensor(cell.bias.numpy()))
        reference.bias_hh.zero_()
    return cell, reference


def test_lstm_cell_matches_torch_values_and_gradients():
    cell, reference = _lstm_and_torch()
    rng = np.random.default_rng(0)
    x, h, c = rng.normal(size=(4, 6)), rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    ex, eh, ec = (eg.tensor(a, requires_grad=True) for a in (x, h, c))
    out, (h_new, c_new) = cell(ex, [eh, ec])
    assert out is h_new
    eg.reduce_sum(out * out + 2 * c_new).backward()
    tx, th, tc = (torch.tensor(a, requires_grad=True) for a in (x, h, c))
    t_h, t_c = reference(tx, (th, tc))
    (t_h * t_h + 2 * t_c).sum().backward()
    np.testing.assert_allclose(out.numpy(), t_h.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(c_new.numpy(), t_c.detach().numpy(), rtol=1e-12, atol=1e-12)
    for mine, theirs in ((ex, tx), (eh, th), (ec, tc)):
        np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-10,
                                   atol=1e-12)
    np.testing.assert_allclose(cell.kernel.grad.numpy(), reference.weight_ih.grad.numpy().T,
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(cell.bias.grad.numpy(), reference.bias_ih.grad.numpy(),
                               rtol=1e-10, atol=1e-12)


def test_lstm_cell_gradcheck_and_initial_weights(device):
    rng = np.random.default_rng(1)
    x, h, c = rng.normal(size=(3, 6)), rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    with eg.device(device):
        cell = layers.LSTMCell(5, dtype="float64")
        cell.build_for((None, 6))
    gradcheck(lambda x, h, c: eg.concat(list(cell(x, [h, c])[1]), axis=1), x, h, c,
              device=device, name="lstm_cell")
    bias = cell.bias.numpy()
    np.testing.assert_array_equal(bias[5:10], 1.0)        # unit_forget_bias
    np.testing.assert_array_equal(np.delete(bias, np.s_[5:10]), 0.0)
    r = cell.recurrent_kernel.numpy()
    np.testing.assert_allclose(r @ r.T, np.eye(5), atol=1e-12)   # orthogonal rows
    assert [v.shape for v in cell.trainable_variables] == [(6, 20), (5, 20), (20,)]


def test_lstm_cell_in_a_session_graph_and_a_traced_function():
    rng = np.random.default_rng(2)
    x, h, c = (rng.normal(size=(3, 4)).astype(np.float32) for _ in range(3))
    eg.random.set_seed(5)
    cell = layers.LSTMCell(4)
    out, (_, c_new) = cell(eg.tensor(x), [eg.tensor(h), eg.tensor(c)])
    expected = [out.numpy(), c_new.numpy()]
    traced = eg.function(lambda x, state: cell(x, state))
    got = traced(eg.tensor(x), [eg.tensor(h), eg.tensor(c)])
    np.testing.assert_allclose(got[0].numpy(), expected[0], rtol=1e-5)
    with eg.Graph().as_default():
        px, ph, pc = (eg.placeholder(eg.float32, shape=(None, 4)) for _ in range(3))
        graph_cell = layers.LSTMCell(4)
        g_out, (_, g_c) = graph_cell(px, [ph, pc])
        grads = eg.gradients(eg.reduce_sum(g_out), graph_cell.trainable_variables)
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            for var, value in zip(graph_cell.variables, cell.get_weights()):
                var.load(value, sess)
            values = sess.run([g_out, g_c] + grads, {px: x, ph: h, pc: c})
    np.testing.assert_allclose(values[0], expected[0], rtol=1e-5)
    np.testing.assert_allclose(values[1], expected[1], rtol=1e-5)
    with eg.GradientTape() as tape:
        loss = eg.reduce_sum(cell(eg.tensor(x), [eg.tensor(h), eg.tensor(c)])[0])
    for g_graph, g_eager in zip(values[2:], tape.gradient(loss, cell.trainable_variables)):
        np.testing.assert_allclose(g_graph, g_eager.numpy(), rtol=1e-4, atol=1e-6)
