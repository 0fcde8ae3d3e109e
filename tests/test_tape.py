"""GradientTape (TF2): watching, constants, persistence, structured sources, nested tapes."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import GradientError


def on(device, a, **kw):
    return eg.tensor(a, device=device, **kw)


def test_watched_tensor_gets_a_gradient(device):
    x = on(device, 3.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert tape.gradient(y, x).item() == 6.0
    assert tape.watched_variables() == (x,)


def test_unwatched_constant_gets_none(device):
    x, c = on(device, 3.0), on(device, 5.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * c
    assert tape.gradient(y, c) is None
    with eg.GradientTape() as tape:
        y = x * c
    assert tape.gradient(y, x) is None                 # nothing watched: y is a constant


def test_watching_belongs_to_the_tape_not_the_tensor(device):
    x = on(device, 3.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    assert not x.requires_grad and not (x * 2).requires_grad     # nothing records after it
    assert tape.gradient([y, x], x).item() == 6 + 1


def test_unconnected_gradients_zero(device):
    x, z = on(device, [1.0, 2.0]), on(device, [4.0, np.inf])
    with eg.GradientTape() as tape:
        tape.watch([x, z])
        y = (x * 2).sum()
    zero = tape.gradient(y, z, unconnected_gradients="zero")     # zeros_like(z): no inf * 0
    np.testing.assert_array_equal(zero.numpy(), [0, 0])
    assert zero.device.name == device


def test_variables_are_watched_automatically(device):
    with eg.device(device):
        w = eg.Variable([1.0, -2.0])
    assert w.device.name == device
    with eg.GradientTape() as tape:
        loss = (w * w).sum()
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), [2, -4])
    assert w.grad is None                               # a tape returns, it does not accumulate


def test_non_persistent_tape_can_be_asked_once(device):
    x = on(device, 2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    tape.gradient(z, x)
    with pytest.raises(GradientError, match="persistent"):
        tape.gradient(y, x)


def test_persistent_tape_can_be_asked_many_times(device):
    x = on(device, 2.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * x
    assert tape.gradient(z, x).item() == 12.0
    assert tape.gradient(y, x).item() == 4.0
    assert tape.gradient(z, y).item() == 2.0           # w.r.t. an intermediate


def test_dict_list_and_tuple_sources(device):
    a, b = eg.Variable(2.0), eg.Variable(3.0)
    with eg.GradientTape(persistent=True) as tape:
        y = a * b * b
    grads = tape.gradient(y, {"a": a, "b": b})
    assert set(grads) == {"a", "b"} and grads["a"].item() == 9 and grads["b"].item() == 12
    as_list = tape.gradient(y, [a, b])
    assert isinstance(as_list, list) and [g.item() for g in as_list] == [9, 12]
    assert isinstance(tape.gradient(y, (a, b)), tuple)


def test_several_targets_are_summed(device):
    x = on(device, 2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        y1, y2 = x * x, x * 3
    assert tape.gradient([y1, y2], x).item() == 4 + 3


def test_output_gradients(device):
    x = on(device, [1.0, 2.0])
    with eg.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    np.testing.assert_array_equal(
        tape.gradient(y, x, output_gradients=on(device, [10.0, 1.0])).numpy(), [20, 4])


def test_nested_tapes_give_the_second_derivative(device):
    """d²(x³)/dx² = 6x, the TF2 way: the inner gradient is recorded by the outer tape."""
    x = on(device, [1.0, -2.0, 0.5])
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape() as inner:
            inner.watch(x)
            y = x ** 3
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    np.testing.assert_allclose(dy.numpy(), 3 * x.numpy() ** 2, rtol=1e-6)
    np.testing.assert_allclose(d2y.numpy(), 6 * x.numpy(), rtol=1e-6)


def test_nested_tapes_may_watch_in_either_order(device):
    """The inner tape watches x first and the outer one only then: closing the inner tape
    must not stop the outer one from recording x (nor lose the second derivative)."""
    x = on(device, [1.0, -2.0])
    with eg.GradientTape(persistent=True) as outer:
        with eg.GradientTape() as inner:
            inner.watch(x)
            outer.watch(x)
            y = x ** 3
        dy = inner.gradient(y, x)
        z = x * 5.0                         # recorded after the inner tape closed
    np.testing.assert_allclose(outer.gradient(dy, x).numpy(), [6.0, -12.0])
    np.testing.assert_allclose(outer.gradient(z, x).numpy(), [5.0, 5.0])
    assert not x.requires_grad              # watching ends with the last tape


def test_nested_tapes_through_a_network(device):
    """Second derivative of tanh(w·x) w.r.t. x against its closed form."""
    w = eg.Variable([0.5, -1.5])
    x = on(device, [0.3, 0.8]).to("cpu:0")
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape() as inner:
            inner.watch(x)
            y = eg.tanh(w * x).sum()
        dy = inner.gradient(y, x)
    d2y = outer.gradient(dy, x)
    t = np.tanh(w.numpy() * x.numpy())
    np.testing.assert_allclose(d2y.numpy(), -2 * t * (1 - t ** 2) * w.numpy() ** 2, rtol=1e-5)


def test_tape_sees_only_what_it_recorded(device):
    x = on(device, 2.0, requires_grad=True)
    before = x * x                                      # recorded before the tape started
    with eg.GradientTape() as tape:
        tape.watch(before)
        y = before * 3
    assert tape.gradient(y, before).item() == 3
    assert tape.gradient is not None and tape.persistent is False


def test_tape_holds_only_what_ran_in_its_block(device):
    """As in TF, a tape records the ops run inside its ``with`` block, no others. It walked
    every op recorded since it started, so a loss computed after the block got a gradient (TF:
    None), and a persistent tape differentiated its own gradient computed after the block (TF:
    None; the outer tape, open around that call, has it)."""
    x = on(device, 3.0)
    with eg.GradientTape(persistent=True) as tape:
        tape.watch(x)
        square = x * x
    after = square * 2.0
    assert tape.gradient(after, x) is None
    assert tape.gradient(square, x).item() == 6.0
    with eg.GradientTape() as outer:
        outer.watch(x)
        with eg.GradientTape(persistent=True) as inner:
            inner.watch(x)
            y = x ** 3
            dy_inside = inner.gradient(y, x)        # recorded by the inner tape itself
        dy = inner.gradient(y, x)
    assert inner.gradient(dy, x) is None
    assert inner.gradient(dy_inside, x).item() == 18.0
    assert outer.gradient(dy, x).item() == 18.0
    tape.reset()                                    # after the block: nothing is left
    assert tape.gradient(square, x) is None


def test_stop_recording(device):
    x = on(device, 2.0)
    with eg.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            c = x * x                                   # a constant to the tape
        y = c * x
    assert tape.gradient(y, x).item() == 4.0


def test_gradient_before_recording_is_an_error():
    with pytest.raises(GradientError, match="recorded"):
        eg.GradientTape().gradient(eg.tensor(1.0), eg.tensor(1.0))


def test_watch_accessed_variables_false():
    a, b = eg.Variable(2.0), eg.Variable(3.0)
    with eg.GradientTape(watch_accessed_variables=False, persistent=True) as tape:
        tape.watch(a)
        y = a * b
    assert tape.gradient(y, a).item() == 3.0
    assert tape.gradient(y, b) is None


def test_tf_guide_introduction_to_gradients_as_written():
    """TF2's guide "Introduction to gradients and automatic differentiation", its cells in
    order with ``tf`` → ``eg``; each printed value is checked against the guide's output."""
    tf = eg
    x0 = tf.Variable(3.0, name='x0')
    x1 = tf.Variable(3.0, name='x1', trainable=False)
    x2 = tf.Variable(2.0, name='x2') + 1.0
    x3 = tf.constant(3.0, name='x3')
    with tf.GradientTape() as tape:
        y = (x0**2) + (x1**2) + (x2**2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert grad[0].numpy() == 6.0 and grad[1:] == [None, None, None]   # x2: made before the tape

    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    grad = tape.gradient(ys, {'x0': x0, 'x1': x1})
    assert grad['x0'] is None
    np.testing.assert_allclose(grad['x1'].numpy(), 1 / (1 + np.exp(-10.0)), rtol=1e-6)

    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y0 = x**2
        y1 = 1 / x
    assert tape.gradient({'y0': y0, 'y1': y1}, x).numpy() == 3.75     # a dict target: its sum

    x = tf.Variable(2.)
    with tf.GradientTape() as tape:
        y = x * [3., 4.]
    assert tape.gradient(y, x).numpy() == 7.0

    x = tf.linspace(-10.0, 10.0, 200+1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.sigmoid(x)
    dy_dx = tape.gradient(y, x)
    np.testing.assert_allclose(dy_dx.numpy(), (y * (1 - y)).numpy(), rtol=1e-6)
    assert x.shape == (201,) and x[100].item() == 0.0

    x = tf.constant(10)
    with tf.GradientTape() as g:
        with pytest.warns(UserWarning, match="dtype of the watched tensor must be floating"):
            g.watch(x)
        y = x * x
    assert g.gradient(y, x) is None

    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        x1.assign_add(x0)           # a stateful op: the gradient does not flow through it
        y = x1**2
    assert tape.gradient(y, x0) is None

    x = tf.Variable([2., 2.])
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y**2
    np.testing.assert_array_equal(
        tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO).numpy(), [0, 0])
