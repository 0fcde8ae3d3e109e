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
