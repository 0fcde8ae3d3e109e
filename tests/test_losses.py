"""Losses against PyTorch CPU and central differences; stability; clear errors; regularisers."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import losses
from tests.gradcheck import gradcheck

torch = pytest.importorskip("torch")
F = torch.nn.functional


def both(a, device):
    return eg.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)


def check_against_torch(ours_fn, theirs_fn, logits, device):
    ours, theirs = both(logits, device)
    value, expected = ours_fn(ours), theirs_fn(theirs)
    value.backward()
    expected.backward()
    np.testing.assert_allclose(value.item(), expected.item(), rtol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_sparse_softmax_cross_entropy(device):
    rng = np.random.default_rng(0)
    logits, labels = rng.normal(size=(6, 4)), rng.integers(0, 4, 6)
    check_against_torch(lambda z: losses.sparse_softmax_cross_entropy(labels, z),
                        lambda z: F.cross_entropy(z, torch.tensor(labels)), logits, device)
    gradcheck(lambda z: losses.sparse_softmax_cross_entropy_with_logits(labels, z), logits,
              device=device)


def test_sparse_softmax_cross_entropy_is_one_node_and_differentiates_twice(device):
    """Fused as TF's SparseSoftmaxCrossEntropyWithLogits: one node in a graph (no one-hot rows
    made); its gradient softmax(z) − onehot(y) is built of ops, so it has a gradient too,
    which PyTorch's double backward gives."""
    rng = np.random.default_rng(1)
    logits, labels = rng.normal(size=(5, 4)), rng.integers(0, 4, 5)
    ours, theirs = both(logits, device)
    loss = eg.reduce_sum(eg.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                         logits=ours))
    (g,) = eg.grad(loss, [ours], create_graph=True)
    eg.reduce_sum(g ** 3).backward()
    (tg,) = torch.autograd.grad(F.cross_entropy(theirs, torch.tensor(labels), reduction="sum"),
                                theirs, create_graph=True)
    (tg ** 3).sum().backward()
    np.testing.assert_allclose(g.detach().numpy(), tg.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)
    with eg.Graph().as_default() as graph:
        z = eg.placeholder(eg.float32, (None, 4))
        eg.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 1], logits=z)
        types = [op.type for op in graph.get_operations()]
    assert types.count("SparseSoftmaxCrossEntropyWithLogits") == 1 and "OneHot" not in types


def test_softmax_cross_entropy_one_hot_and_soft_labels(device):
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(5, 3))
    soft = rng.dirichlet(np.ones(3), 5)
    check_against_torch(lambda z: losses.softmax_cross_entropy(soft, z),
                        lambda z: F.cross_entropy(z, torch.tensor(soft)), logits, device)
    gradcheck(lambda z: losses.softmax_cross_entropy_with_logits(soft, z), logits, device=device)


def test_tf1s_softmax_cross_entropy_stops_the_labels_gradient_tf2s_does_not(device):
    """TF1's tf.losses.softmax_cross_entropy and tf.nn.softmax_cross_entropy_with_logits put
    a stop_gradient on the labels; the _v2 function (TF2's tf.nn, Keras) does not."""
    rng = np.random.default_rng(3)
    soft = eg.tensor(rng.dirichlet(np.ones(3), 4), device=device, requires_grad=True)
    logits = eg.tensor(rng.normal(size=(4, 3)), device=device, requires_grad=True)
    v1 = eg.compat.v1.nn
    for tf1_loss in (losses.softmax_cross_entropy(soft, logits),
                     eg.reduce_mean(v1.softmax_cross_entropy_with_logits(labels=soft,
                                                                         logits=logits))):
        labels_grad, logits_grad = eg.grad(tf1_loss, [soft, logits], allow_unused=True)
        assert labels_grad is None and logits_grad is not None
    for tf2_loss in (eg.nn.softmax_cross_entropy_with_logits(soft, logits),
                     v1.softmax_cross_entropy_with_logits_v2(labels=soft, logits=logits)):
        # d/dy of -Σ y log softmax(z) is -log softmax(z)
        np.testing.assert_allclose(eg.grad(eg.reduce_sum(tf2_loss), soft)[0].numpy(),
                                   -eg.nn.log_softmax(logits).numpy(), rtol=1e-12)


def test_labels_gradient_flows_also_where_a_label_is_zero(device):
    """One-hot labels: d/dy is -log softmax(z) in every class, as in TF2 (it was 0 where y = 0);
    a class masked with a logit of -inf still adds 0, not nan, to the loss."""
    one_hot = eg.tensor(np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]), device=device,
                        requires_grad=True)
    logits = eg.tensor(np.array([[1.0, 2.0, 3.0], [0.5, -np.inf, 1.0]]), device=device)
    loss = eg.reduce_sum(eg.nn.softmax_cross_entropy_with_logits(one_hot, logits))
    assert np.isfinite(loss.item())
    grad = eg.grad(loss, one_hot)[0].numpy()
    np.testing.assert_allclose(grad[0], -eg.nn.log_softmax(logits).numpy()[0], rtol=1e-12)
    np.testing.assert_allclose(grad[1, [0, 2]], -eg.nn.log_softmax(logits).numpy()[1, [0, 2]],
                               rtol=1e-12)
    assert grad[1, 1] == 0          # (TF: inf there)
    gradcheck(lambda y: eg.nn.softmax_cross_entropy_with_logits(y, logits[:1]),
              one_hot.numpy()[:1], device=device)


@pytest.mark.parametrize("activation, loss_name, labels", [
    ("sigmoid", "binary_crossentropy", [[0.0], [1.0], [1.0], [0.0]]),
    ("softmax", "categorical_crossentropy", [[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]),
    ("softmax", "sparse_categorical_crossentropy", [1, 0, 0, 1])])
def test_keras_cross_entropy_of_a_keras_activation_computes_from_its_logits(
        activation, loss_name, labels):
    """Keras keeps a sigmoid's or softmax's logits on its output and its cross-entropies use
    them: a saturated output (|z| = 40) has its true loss and a gradient, where clipped
    probabilities stop the loss near 16 with a gradient of 0. Without, and with eg.nn's own
    sigmoid, the probabilities are clipped as before."""
    columns = 1 if activation == "sigmoid" else 2
    z = eg.tensor(np.array([[20.0], [-20.0], [0.3], [40.0]]) * [[1.0, -1.0][:columns]],
                  requires_grad=True)
    keras_loss = getattr(eg.keras.losses, loss_name)
    layer = eg.keras.layers.Activation(activation)
    by_logits = eg.reduce_sum(keras_loss(labels, z, from_logits=True))
    by_output = eg.reduce_sum(keras_loss(labels, layer(z)))
    np.testing.assert_allclose(by_output.item(), by_logits.item(), rtol=1e-12)
    assert by_output.item() > 50
    np.testing.assert_allclose(eg.grad(by_output, z)[0].numpy(), eg.grad(by_logits, z)[0].numpy(),
                               rtol=1e-12, atol=1e-300)
    with eg.no_grad():                  # (evaluate: no op recorded, the logits still kept)
        np.testing.assert_allclose(eg.reduce_sum(keras_loss(labels, layer(z))).item(),
                                   by_logits.item(), rtol=1e-12)
    plain = eg.nn.sigmoid(z) if activation == "sigmoid" else eg.nn.softmax(z)
    assert eg.reduce_sum(keras_loss(labels, plain)).item() < by_logits.item() - 10


def test_fit_learns_from_unscaled_inputs_through_a_saturated_sigmoid():
    """Pixels 0..255 into Dense(1, "sigmoid"): every |z| is large, and with clipped
    probabilities no gradient reached the kernel, so the loss stayed at its first value."""
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (8, 6)).astype(np.float32)
    y = (rng.random(8) > 0.5).astype(np.float32)
    model = eg.keras.Sequential([eg.keras.layers.Dense(1, activation="sigmoid",
                                                       input_shape=(6,))])
    model.set_weights([np.full((6, 1), 0.05, np.float32) * [[1], [-1], [1], [-1], [1], [-1]],
                       np.zeros(1, np.float32)])
    model.compile(optimizer=eg.keras.optimizers.SGD(0.01), loss="binary_crossentropy")
    losses_ = model.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0).history["loss"]
    assert losses_[0] > 16 and losses_[-1] < losses_[0] / 2


def test_cross_entropy_is_stable_for_huge_logits(device):
    logits = np.array([[1000.0, -1000.0, 0.0], [-800.0, 800.0, 0.0]])
    z = eg.tensor(logits, device=device, requires_grad=True)
    loss = losses.sparse_softmax_cross_entropy([1, 1], z)
    loss.backward()
    np.testing.assert_allclose(loss.item(), 1000.0)                 # (2000 + 0) / 2
    assert np.isfinite(z.grad.numpy()).all()
    np.testing.assert_allclose(z.grad.numpy(), [[0.5, -0.5, 0], [0, 0, 0]], atol=1e-12)


def test_sigmoid_cross_entropy(device):
    rng = np.random.default_rng(2)
    logits, labels = rng.normal(0, 5, size=(4, 3)), rng.integers(0, 2, (4, 3)).astype(float)
    check_against_torch(lambda z: losses.sigmoid_cross_entropy(labels, z),
                        lambda z: F.binary_cross_entropy_with_logits(z, torch.tensor(labels)),
                        logits, device)
    big = eg.tensor([[500.0, -500.0]], device=device)
    np.testing.assert_allclose(losses.sigmoid_cross_entropy([[0.0, 1.0]], big).item(), 500.0)
    gradcheck(lambda z: losses.sigmoid_cross_entropy_with_logits(labels, z), logits,
              device=device)


def test_keras_probability_losses(device):
    rng = np.random.default_rng(3)
    p = rng.uniform(0.05, 0.95, size=(6, 1))
    y = rng.integers(0, 2, (6, 1)).astype(float)
    check_against_torch(lambda q: losses.BinaryCrossentropy()(y, q),
                        lambda q: F.binary_cross_entropy(q, torch.tensor(y)), p, device)
    probs = rng.dirichlet(np.ones(4), 6)
    ids = rng.integers(0, 4, 6)

    def renormalised(q):        # Keras divides by the sum: the gradient has those terms too
        return torch.log(q / q.sum(-1, keepdim=True))
    check_against_torch(lambda q: losses.SparseCategoricalCrossentropy()(ids, q),
                        lambda q: F.nll_loss(renormalised(q), torch.tensor(ids)), probs, device)
    check_against_torch(lambda q: losses.get("categorical_crossentropy")(np.eye(4)[ids], q),
                        lambda q: F.nll_loss(renormalised(q), torch.tensor(ids)), probs, device)
    per_example = losses.sparse_categorical_crossentropy(ids[:, None], eg.tensor(probs))
    assert per_example.shape == (6,)
    logits = rng.normal(size=(6, 4))
    check_against_torch(lambda z: losses.SparseCategoricalCrossentropy(from_logits=True)(ids, z),
                        lambda z: F.cross_entropy(z, torch.tensor(ids)), logits, device)


def test_mean_squared_error_argument_order_from_the_slides(device):
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    check_against_torch(lambda p: losses.mean_squared_error(b, p),
                        lambda p: F.mse_loss(p, torch.tensor(b)), a, device)
    check_against_torch(lambda p: losses.mean_squared_error(p, b),      # tf.losses.mse(y_pred, y)
                        lambda p: F.mse_loss(p, torch.tensor(b)), a, device)
    check_against_torch(lambda p: losses.get("mae")(b, p),
                        lambda p: F.l1_loss(p, torch.tensor(b)), a, device)


def test_errors_say_what_is_wrong():
    z = eg.tensor(np.zeros((3, 4)))
    with pytest.raises(eg.errors.ShapeError, match=r"class ids in \[0, 4\).*\[0, 7\]"):
        losses.sparse_softmax_cross_entropy([0, 7, 1], z)
    with pytest.raises(eg.errors.ShapeError, match=r"shape \(3,\)"):
        losses.sparse_softmax_cross_entropy([[0, 1, 1]], z)
    with pytest.raises(eg.errors.ShapeError, match="must match"):
        losses.mean_squared_error(np.zeros((3, 1)), z)
    with pytest.raises(ValueError, match="Unknown loss 'crossentropy'"):
        losses.get("crossentropy")
    for sparse in (eg.nn.sparse_softmax_cross_entropy_with_logits,
                   losses.sparse_categorical_crossentropy):
        with pytest.raises(eg.errors.ShapeError, match=r"predictions of shape \(\) have no known "
                           r"class axis; they need shape \(\.\.\., num_classes\)"):
            sparse(0, 2.0)
    # one label for three rows of probabilities broadcast silently before
    with pytest.raises(eg.errors.ShapeError, match=r"^sparse_categorical_crossentropy: labels of "
                       r"shape \(1,\) should hold one class id per row of predictions \(3, 4\)"):
        losses.sparse_categorical_crossentropy([1], eg.nn.softmax(z))


def test_predictions_may_be_lists_as_in_tf(device):
    """The slides' softmax example, ``logits = [2.0, 1.0, 0.1]``, written as plain lists."""
    logits, ids = [[2.0, 1.0, 0.1]], [0]
    expected = F.cross_entropy(torch.tensor(logits), torch.tensor(ids), reduction="none")
    for loss in (eg.nn.sparse_softmax_cross_entropy_with_logits(ids, logits),
                 eg.nn.softmax_cross_entropy_with_logits([[1.0, 0.0, 0.0]], logits),
                 losses.SparseCategoricalCrossentropy(from_logits=True)(ids, logits)):
        np.testing.assert_allclose(np.ravel(loss.numpy()), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(losses.MeanSquaredError()([1.0, 2.0], [1.5, 3.0]).item(), 0.625)
    np.testing.assert_allclose(losses.binary_crossentropy([1.0, 0.0], [0.9, 0.2]).item(),
                               -(np.log(0.9) + np.log(0.8)) / 2, rtol=1e-6)
    labels = eg.tensor([[0.0, 1.0]], device=device)     # a list next to labels on a device
    loss = losses.mean_squared_error(labels, [[1, 1]])  # (integers: floats, as in a float op)
    assert loss.device.name == device and loss.dtype == eg.float32 and loss.item() == 0.5


def test_labels_follow_the_predictions_dtype_and_device(device):
    z = eg.tensor(np.zeros((2, 2), np.float32), device=device)
    loss = losses.mean_squared_error(np.ones((2, 2)), z)         # float64 labels, float32 preds
    assert loss.dtype == np.float32 and loss.device.name == device


def test_regularisers_are_graph_nodes_with_the_right_gradient(device):
    rng = np.random.default_rng(5)
    w = eg.tensor(rng.normal(size=(3, 2)), device=device, requires_grad=True)
    np.testing.assert_allclose(losses.l2_loss(w).item(), (w.numpy() ** 2).sum() / 2)
    np.testing.assert_allclose(losses.l1_loss(w).item(), np.abs(w.numpy()).sum())
    penalty = losses.l1_l2(0.1, 0.01)(w)
    assert penalty.grad_fn is not None
    penalty.backward()
    np.testing.assert_allclose(w.grad.numpy(), 0.1 * np.sign(w.numpy()) + 0.02 * w.numpy())
    layer = eg.layers.Dense(2, kernel_regularizer=losses.l2(0.5), dtype="float64")
    layer(eg.tensor(np.ones((1, 3))))
    (term,) = layer.losses
    np.testing.assert_allclose(term.item(), 0.5 * (layer.kernel.numpy() ** 2).sum())
    gradcheck(losses.l2_loss, rng.normal(size=(2, 2)), device=device)


def test_tf1_losses_scope_their_ops_and_accept_an_unknown_batch():
    with eg.Graph().as_default() as g:
        logits = eg.placeholder(eg.float32, shape=(None, 3), name="logits")
        loss = losses.softmax_cross_entropy(np.eye(3, dtype=np.float32), logits, name="xent")
        mse = losses.mean_squared_error(np.zeros((3, 3), np.float32), logits)
        with pytest.raises(eg.errors.ShapeError, match=r"\(2, 4\).*\(\?, 3\)"):
            losses.mean_squared_error(np.zeros((2, 4), np.float32), logits)
        with eg.Session() as sess:
            z = np.array([[2.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]], np.float32)
            values = sess.run([loss, mse], feed_dict={logits: z})
    names = [op.name for op in g.get_operations()]
    assert all(n.startswith(("logits", "xent/", "mean_squared_error")) for n in names), names
    log_p = z - np.log(np.exp(z).sum(1, keepdims=True))
    np.testing.assert_allclose(values[0], -np.mean(np.diag(log_p)), rtol=1e-6)
    np.testing.assert_allclose(values[1], np.mean(z ** 2), rtol=1e-6)


def test_keras_loss_objects_take_flat_labels_for_one_output_column():
    """Dense(1, sigmoid) with labels of shape (N,): Keras treats them as (N, 1), and so does
    fit; the raw functions keep asking for equal shapes."""
    y = np.array([1.0, 0.0, 1.0, 1.0], np.float32)
    p = np.array([[0.9], [0.2], [0.6], [0.3]], np.float32)
    bce = -(y * np.log(p[:, 0]) + (1 - y) * np.log(1 - p[:, 0])).mean()
    np.testing.assert_allclose(losses.BinaryCrossentropy()(y, eg.tensor(p)).item(), bce, rtol=1e-5)
    np.testing.assert_allclose(losses.get("mse")(y, eg.tensor(p)).item(),
                               ((y - p[:, 0]) ** 2).mean(), rtol=1e-6)
    with pytest.raises(eg.errors.ShapeError, match="binary_crossentropy"):
        losses.binary_crossentropy(y, eg.tensor(p))
    x = np.random.default_rng(0).standard_normal((200, 2)).astype(np.float32)
    y = (x[:, 0] + x[:, 1] > 0).astype(np.float32)
    histories = []
    for labels in (y, y[:, None]):
        eg.random.set_seed(0)
        model = eg.Sequential([eg.layers.Dense(1, activation="sigmoid", input_shape=(2,))])
        model.compile(eg.train.AdamOptimizer(0.1), "binary_crossentropy", ["accuracy", "mse"])
        histories.append(model.fit(x, labels, epochs=5, batch_size=32, verbose=0).history)
        predicted = model.predict(x)[:, 0] > 0.5
        np.testing.assert_allclose(model.evaluate(x, labels, verbose=0)[1],
                                   (predicted == y).mean(), rtol=1e-6)
    assert histories[0] == histories[1] and histories[0]["accuracy"][-1] > 0.9
    with pytest.raises(eg.errors.ShapeError, match="binary_accuracy"):
        eg.models.metrics.binary_accuracy(np.ones((3, 2)), eg.tensor(p[:3]))


def test_sigmoid_cross_entropy_gradient_at_a_zero_logit(device):
    """σ(0) − y: logistic regression from zero weights starts here (TF's relu/abs form gave
    the one-sided slopes of its kinks, −y)."""
    logits = np.array([0.0, 0.0, 3.0, -40.0, 40.0])
    labels = np.array([0.0, 1.0, 0.3, 1.0, 0.0])
    check_against_torch(
        lambda z: eg.reduce_sum(eg.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=z)),
        lambda z: F.binary_cross_entropy_with_logits(z, torch.tensor(labels), reduction="sum"),
        logits, device)


def test_class_id_cross_entropy_with_a_masked_class_is_finite(device):
    """A logit of −inf masks a class (attention, beam search): 0 · log 0 counts as 0, as in
    PyTorch and TF, not nan."""
    logits = np.array([[1.0, -np.inf, 0.0], [-np.inf, 2.0, 0.5]])
    labels = np.array([0, 2])
    eg_functional = eg.nn.functional
    ids = eg.tensor(labels, device=device)
    check_against_torch(lambda z: eg_functional.cross_entropy(z, ids),
                        lambda z: F.cross_entropy(z, torch.tensor(labels)), logits, device)
    check_against_torch(lambda z: eg_functional.nll_loss(eg.nn.log_softmax(z), ids),
                        lambda z: F.nll_loss(F.log_softmax(z, 1), torch.tensor(labels)),
                        logits, device)
    check_against_torch(lambda z: eg.reduce_mean(eg.nn.sparse_softmax_cross_entropy_with_logits(
                            labels=ids, logits=z)),
                        lambda z: F.cross_entropy(z, torch.tensor(labels)), logits, device)


def test_keras_3_mean_reductions():
    """Keras 3's "mean" is "sum_over_batch_size"; "mean_with_sample_weight" divides the
    weighted sum by the weights' sum (a weighted mean)."""
    y, p, w = [[0.0], [1.0], [1.0]], [[0.5], [0.0], [1.0]], np.array([1.0, 2.0, 5.0])
    squared = np.array([0.25, 1.0, 0.0])
    mse = eg.keras.losses.MeanSquaredError
    np.testing.assert_allclose(mse(reduction="mean")(y, p).numpy(), squared.mean(), rtol=1e-6)
    np.testing.assert_allclose(mse(reduction="mean")(y, p, sample_weight=w).numpy(),
                               (squared * w).sum() / 3, rtol=1e-6)
    np.testing.assert_allclose(mse(reduction="mean_with_sample_weight")(
        y, p, sample_weight=w).numpy(), (squared * w).sum() / w.sum(), rtol=1e-6)


def test_keras_loss_options_refused_with_the_fix():
    with pytest.raises(ValueError, match="reduction='mean_over_batch' is not one of Keras's"):
        eg.keras.losses.MeanSquaredError(reduction="mean_over_batch")
    with pytest.raises(TypeError, match="SparseCategoricalCrossentropy has no label_smoothing"):
        eg.keras.losses.SparseCategoricalCrossentropy(label_smoothing=0.1)
    with pytest.raises(eg.errors.ShapeError, match=r"sample_weight of shape \(2,\) does not fit "
                                                   r"the per-example losses of shape \(3,\)"):
        eg.keras.losses.MeanSquaredError()(np.zeros((3, 2)), np.ones((3, 2)),
                                           sample_weight=[1.0, 2.0])
    weighted = eg.keras.losses.MeanSquaredError()(np.zeros((3, 2)), np.ones((3, 2)),
                                                  sample_weight=[1.0, 2.0, 0.0])
    assert weighted.item() == pytest.approx(1.0)        # (1 + 2 + 0) / 3 examples


def test_keras_loss_over_an_unknown_batch_in_a_graph():
    """sum_over_batch_size with weights divides by the number of losses, known at run time."""
    with eg.Graph().as_default():
        y = eg.placeholder(eg.float32, (None, 2))
        w = eg.placeholder(eg.float32, (None,))
        loss = eg.keras.losses.MeanSquaredError()(y, eg.ones_like(y), sample_weight=w)
        with eg.Session() as sess:
            assert sess.run(loss, {y: np.zeros((4, 2)), w: [1, 1, 2, 0]}) == pytest.approx(1.0)
