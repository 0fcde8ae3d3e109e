"""numpy's functions on tensors give numpy results, outside the tape (as TF's tensors do);
numpy arrays meeting tensors in operators still give recorded tensors."""
import numpy as np
import pytest

import edugraph as eg

VALUES = np.array([[1.0, 2.0], [3.0, 5.0]], np.float32)


@pytest.mark.parametrize("function, kwargs", [
    (np.mean, {"axis": 0}), (np.sum, {}), (np.sum, {"axis": 1, "dtype": np.float64}),
    (np.std, {"axis": 1}), (np.var, {}), (np.max, {"axis": 0}), (np.min, {}),
    (np.argmax, {}), (np.argmin, {"axis": 1}), (np.cumsum, {"axis": 0}), (np.prod, {}),
    (np.round, {"decimals": 1}), (np.clip, {"a_min": 1.5, "a_max": 4}),
    (np.transpose, {}), (np.ravel, {}), (np.exp, {}),
    (np.concatenate, None), (np.stack, None)])
def test_numpy_functions_compute_on_the_values(function, kwargs):
    t = eg.tensor(VALUES, requires_grad=True)
    if kwargs is None:                              # functions of a list of arrays
        got, want = function([t, t]), function([VALUES, VALUES])
    else:
        got, want = function(t, **kwargs), function(VALUES, **kwargs)
    assert not isinstance(got, eg.Tensor)
    np.testing.assert_array_equal(got, want)
    assert np.asarray(got).dtype == np.asarray(want).dtype


def test_the_gradient_through_numpy_is_none_and_operators_stay_on_the_tape():
    x = eg.Variable(VALUES)
    with eg.GradientTape(persistent=True) as tape:
        off_tape = eg.reduce_mean(np.mean(x ** 2, axis=0))
        on_tape = eg.reduce_sum(np.ones(2, np.float32) * x)     # ndarray * tensor: __rmul__
    assert tape.gradient(off_tape, x) is None
    np.testing.assert_array_equal(tape.gradient(on_tape, x).numpy(), np.ones((2, 2)))
    assert isinstance(np.float32(2) * x, eg.Tensor) and isinstance(VALUES < x, eg.Tensor)


def test_numpy_refuses_what_it_cannot_read_or_write():
    t = eg.tensor(VALUES)
    with pytest.raises(TypeError, match=r"np\.mean\(\.\.\., out=tensor\): numpy cannot write "
                       r"into a tensor"):
        np.mean(t, axis=0, out=eg.tensor([0.0, 0.0]))
    with pytest.raises(TypeError, match="lives on sim:0; numpy cannot read it directly"):
        np.mean(t.to("sim"))
    assert np.shape(t.to("sim")) == (2, 2) and np.ndim(t) == 2 and np.size(t) == 4
    with eg.Graph().as_default():
        p = eg.placeholder(eg.float32, (None, 2))
        assert np.shape(p) == p.shape and np.ndim(p) == 2
        with pytest.raises(NotImplementedError, match="is a symbolic tensor"):
            np.exp(p)


def test_numpy_reads_scalars_that_arithmetic_made_and_np_array_copies():
    """A 0-d result of arithmetic with a number holds a numpy scalar, which numpy's __array__
    protocol refused ("object __array__ method not producing an array"): np.mean of a list of
    losses, as a plot of a training curve does. np.array(t) copies, as numpy's own does."""
    losses = [eg.reduce_mean(eg.square(eg.constant([1.0, 2.0]))) * 0.5 for _ in range(3)]
    assert np.mean(losses) == 1.25 and np.asarray(losses[0]).shape == ()
    np.testing.assert_array_equal(np.array(losses), [1.25, 1.25, 1.25])
    t = eg.tensor([1.0, 2.0])
    copied = np.array(t)
    copied[0] = 5.0
    np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    assert np.array(t, dtype=np.float64).dtype == np.float64
