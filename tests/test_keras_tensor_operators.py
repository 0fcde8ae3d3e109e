"""Arithmetic on KerasTensors in a functional model (ResNet's ``x = x + shortcut``, ``0.5 * x``),
as Keras allows: each operator becomes a layer (``OpLambda``) of the model, so it runs, trains
and differentiates like a model written with layers."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import layers
from edugraph.errors import NoValueError, ShapeError

W = np.array([[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]])


def branches(dtype="float32"):
    """An input and two Dense branches on it, the same weights each time."""
    x = eg.keras.Input((3,), dtype=dtype)
    dense_a, dense_b = layers.Dense(4, dtype=dtype), layers.Dense(4, dtype=dtype)
    a, b = dense_a(x), dense_b(x)
    rng = np.random.default_rng(0)
    for layer in (dense_a, dense_b):
        layer.set_weights([rng.standard_normal((3, 4)), rng.standard_normal(4)])
    return x, a, b, dense_a, dense_b


def test_operators_wire_layers_with_the_functions_shapes_and_dtypes():
    x, a, b, *_ = branches()
    assert (a + b).layer.name.startswith("eg.add")
    assert type((a + b).layer).__name__ == "OpLambda"
    assert (a @ np.ones((4, 2), np.float32)).shape == (None, 2)
    assert (-a).shape == (None, 4)
    assert (a * np.ones((1, 4), np.float32)).shape == (None, 4)
    assert (0.5 * a).dtype == eg.float32
    m = eg.keras.Model(x, a + b)
    lines = []
    m.summary(print_fn=lines.append)
    assert any("(OpLambda)" in line and "(None, 4)" in line for line in lines)


def test_a_residual_sum_equals_the_add_layer():
    x, a, b, *_ = branches()
    with_operator = eg.keras.Model(x, a + b)
    with_layer = eg.keras.Model(x, layers.Add()([a, b]))
    batch = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    np.testing.assert_array_equal(with_operator(batch).numpy(), with_layer(batch).numpy())
    grads = []
    for model in (with_operator, with_layer):
        with eg.GradientTape() as tape:
            loss = eg.reduce_sum(model(batch) ** 2)
        grads.append([g.numpy() for g in tape.gradient(loss, model.trainable_variables)])
    for g_op, g_layer in zip(*grads):
        np.testing.assert_array_equal(g_op, g_layer)


def operator_model(dtype="float32"):
    """Every operator, numbers and arrays on either side, against the same maths written by
    hand with the same Dense layers."""
    x, a, b, dense_a, dense_b = branches(dtype)
    w = W.astype(dtype)
    out = (0.5 * a + b - a * b / 2 - (-a) ** 2 + 1 - 2 / (b * b + 1)) @ np.ones((4, 2), dtype)
    out = out + np.ones(2, dtype) @ w.T[:, :2]

    def by_hand(t):
        ha, hb = dense_a(t), dense_b(t)
        y = (0.5 * ha + hb - ha * hb / 2 - (-ha) ** 2 + 1 - 2 / (hb * hb + 1)) @ \
            eg.tensor(np.ones((4, 2), dtype))
        return y + eg.tensor(np.ones(2, dtype) @ w.T[:, :2])
    return eg.keras.Model(x, out), by_hand


def test_every_operator_computes_and_differentiates_as_written_by_hand():
    model, by_hand = operator_model()
    batch = np.random.default_rng(2).standard_normal((6, 3)).astype(np.float32)
    np.testing.assert_allclose(model(batch).numpy(), by_hand(eg.tensor(batch)).numpy(),
                               rtol=1e-6)
    grads = []
    for f in (model, by_hand):
        with eg.GradientTape() as tape:
            loss = eg.reduce_sum(f(eg.tensor(batch)) ** 2)
        grads.append(tape.gradient(loss, model.trainable_variables))
    for g_model, g_hand in zip(*grads):
        np.testing.assert_allclose(g_model.numpy(), g_hand.numpy(), rtol=1e-5)


def test_gradients_through_operators_match_central_differences():
    model, _ = operator_model("float64")
    batch = eg.tensor(np.random.default_rng(3).standard_normal((4, 3)), dtype=eg.float64,
                      requires_grad=True)
    assert eg.gradcheck(lambda t: model(t), (batch,))


def test_a_model_with_operators_fits_as_its_hand_written_twin():
    """One SGD step by ``fit`` moves the weights exactly as the gradient of the same loss,
    computed by hand, says; and more steps lower the loss."""
    model, by_hand = operator_model()
    rng = np.random.default_rng(4)
    xs = rng.standard_normal((8, 3)).astype(np.float32)
    ys = rng.standard_normal((8, 2)).astype(np.float32)
    before = [v.numpy().copy() for v in model.trainable_variables]
    with eg.GradientTape() as tape:
        loss = eg.reduce_mean((by_hand(eg.tensor(xs)) - eg.tensor(ys)) ** 2)
    expected = [w - 0.001 * g.numpy()
                for w, g in zip(before, tape.gradient(loss, model.trainable_variables))]
    model.compile(eg.keras.optimizers.SGD(learning_rate=0.001), "mse")
    model.fit(xs, ys, batch_size=8, epochs=1, verbose=0, shuffle=False)
    for v, e in zip(model.trainable_variables, expected):
        np.testing.assert_allclose(v.numpy(), e, rtol=1e-5, atol=1e-6)
    history = model.fit(xs, ys, batch_size=8, epochs=20, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


def test_what_is_not_supported_says_so():
    x, a, b, *_ = branches()
    with pytest.raises(ShapeError, match=r"shapes \(None, 4\) and \(3,\) cannot be broadcast"):
        a + np.ones(3, np.float32)          # when the model is wired, not when it runs
    with pytest.raises(TypeError, match="unsupported operand type.*'KerasTensor' and 'str'"):
        a + "1"
    with pytest.raises(NoValueError, match=r"is a placeholder in a functional model: it has no "
                       r"values, so edugraph's functions \(eg\.exp, eg\.reduce_sum\.\.\.\) "
                       r"cannot compute on it\. Use the operators \+ - \* / \*\* @ and unary -"):
        eg.exp(a)
