"""A custom op's ``backward`` result is checked where the engine uses it (eager ``backward()``,
``eg.gradients``, ``eg.gradcheck``): a tuple with one tensor (or None) per input. Before, a
bare tensor, arrays or a short tuple failed inside the engine (``AttributeError: ... '_value'``,
``sum_to_shape(shape=(3,)) could not be computed``) or gave an input no gradient at all."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import ShapeError
from edugraph.ops.base import Op, apply


def cube_op(backward):
    """Lesson 1's ``Cube`` node, with the given ``backward(grad, out, x)``."""
    return type("Cube", (Op,), {"name": "cube", "forward": lambda self, xp, x: x ** 3,
                                "backward": lambda self, grad, out, x: backward(grad, x)})()


def ratio_op(backward):
    """Lesson 1's two-input ``Ratio`` node, with the given ``backward(grad, out, x, y)``."""
    return type("Ratio", (Op,), {"name": "ratio", "forward": lambda self, xp, x, y: x / y,
                                 "backward": lambda self, grad, out, x, y: backward(grad, x, y)})()


FIX_ONE = r"e\.g\. `return \(grad \* 3 \* x \*\* 2,\)`"
NOT_NUMPY = r"edugraph ops \(eg\.\* or tensor operators\), not numpy arrays or numbers"
MISTAKES = [      # (op, the message's pattern)
    (cube_op(lambda g, x: (g.numpy() * 3 * x.numpy() ** 2,)),
     r"^Cube\.backward \(op 'cube'\) returned a numpy\.ndarray as the gradient of input 0\. "
     rf"Return a tuple with one gradient per input, {FIX_ONE}, .*{NOT_NUMPY}"),
    (cube_op(lambda g, x: (3.0,)), r"returned a float as the gradient of input 0\."),
    (cube_op(lambda g, x: g.numpy() * 3 * x.numpy() ** 2),
     rf"^Cube\.backward \(op 'cube'\) returned a numpy\.ndarray, not a tuple\. .*{FIX_ONE}"),
    (cube_op(lambda g, x: g * 3 * x * x),
     r"^Cube\.backward \(op 'cube'\) returned a single tensor, not a tuple \(a missing "
     rf"comma\?\)\. Return a tuple with one gradient per input, even for one input, {FIX_ONE}"),
    (cube_op(lambda g, x: None), r"returned None \(no return statement\?\)"),
    (ratio_op(lambda g, x, y: (g / y,)),
     r"^Ratio\.backward \(op 'ratio'\) returned 1 gradient\(s\), but the op has 2 input\(s\)\. "
     r"Return one per input, in the order forward takes them \(None for an input that needs "
     r"none\), e\.g\. `return grad_x, grad_y`\.$"),
    (ratio_op(lambda g, x, y: (g / y, -g * x / (y * y), g)), r"returned 3 gradient\(s\)"),
    (ratio_op(lambda g, x, y: (g / y, (-g * x / (y * y)).numpy())),
     r"returned a numpy\.ndarray as the gradient of input 1\..*`return grad_x, grad_y`"),
]


@pytest.mark.parametrize("op, says", MISTAKES)
def test_a_wrong_backward_result_is_named_eagerly_and_in_gradcheck(op, says):
    inputs = [eg.tensor([1.0, 2.0, 3.0], dtype=eg.float64, requires_grad=True) + k
              for k in range(1 if op.name == "cube" else 2)]
    with pytest.raises(TypeError, match=says):
        apply(op, *inputs).sum().backward()
    leaves = [eg.tensor(t.numpy(), requires_grad=True) for t in inputs]
    with pytest.raises(TypeError, match=says):          # what a student runs to check
        eg.gradcheck(lambda *args: apply(op, *args), tuple(leaves))


@pytest.mark.parametrize("op, says", [(op, says) for op, says in MISTAKES
                                      if "numpy" not in says])    # (see the next test)
def test_a_wrong_backward_result_is_named_by_eg_gradients(op, says):
    n = 1 if op.name == "cube" else 2
    with eg.Graph().as_default():
        xs = [eg.Variable(np.arange(1.0, 4.0) + k) for k in range(n)]
        with pytest.raises(TypeError, match=says):
            eg.gradients(eg.reduce_sum(apply(op, *xs)), xs)


def test_numpy_inside_backward_in_a_graph_says_the_tensor_has_no_value():
    """In a graph the inputs of backward are symbolic: ``.numpy()`` on them fails first."""
    with eg.Graph().as_default():
        x = eg.Variable(np.arange(1.0, 4.0))
        with pytest.raises(eg.errors.NoValueError, match="symbolic tensor"):
            eg.gradients(eg.reduce_sum(apply(MISTAKES[0][0], x)), [x])


def test_a_gradient_of_the_wrong_shape_names_the_op_and_both_shapes():
    summed = cube_op(lambda g, x: ((g * 3 * x * x).sum(),))
    says = (r"^Cube\.backward \(op 'cube'\) returned a gradient of shape \(\) for input 0 of "
            r"shape \(3,\): a gradient has its input's shape")
    x = eg.tensor([1.0, 2.0, 3.0], dtype=eg.float64, requires_grad=True)
    with pytest.raises(ShapeError, match=says):
        apply(summed, x).sum().backward()
    with pytest.raises(ShapeError, match=says):
        eg.gradcheck(lambda t: apply(summed, t), (x,))
    with eg.Graph().as_default():       # when the graph is built, not when a Session runs it
        v = eg.Variable(np.arange(1.0, 4.0))
        with pytest.raises(ShapeError, match=says):
            eg.gradients(eg.reduce_sum(apply(summed, v)), [v])


def test_right_results_pass_a_list_and_none_included():
    """A list is a sequence of gradients too; None is 'no gradient for this input'."""
    as_list = ratio_op(lambda g, x, y: [g / y, -g * x / (y * y)])
    x = eg.tensor([1.0, -2.0, 0.5], dtype=eg.float64, requires_grad=True)
    y = eg.tensor([2.0, 4.0, -1.0], dtype=eg.float64, requires_grad=True)
    assert eg.gradcheck(lambda a, b: apply(as_list, a, b), (x, y))
    only_x = ratio_op(lambda g, x, y: (g / y, None))
    apply(only_x, x, y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 1 / y.numpy())
    assert y.grad is None
    with eg.Graph().as_default():
        a, b = eg.Variable(x.numpy()), eg.Variable(y.numpy())
        ga, gb = eg.gradients(eg.reduce_sum(apply(as_list, a, b)), [a, b])
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            got_a, got_b = sess.run([ga, gb])
    np.testing.assert_allclose(got_a, 1 / y.numpy())
    np.testing.assert_allclose(got_b, -x.numpy() / y.numpy() ** 2)


def test_shape_sources_get_none_in_a_graph_of_unknown_shapes():
    """Built-in ops that take a tensor only for its shape (``like``) return None for it, so
    they keep the one-gradient-per-input rule: second derivatives through a broadcast whose
    shape is known only when fed."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float64, shape=(None, 3))
        b = eg.Variable(np.array([0.5, -1.0, 2.0]))
        y = eg.reduce_sum((x + b) ** 3)
        (g,) = eg.gradients(y, [b])
        (gg,) = eg.gradients(eg.reduce_sum(g * g), [b])
        with eg.Session() as sess:
            sess.run(eg.global_variables_initializer())
            xv = np.arange(6.0).reshape(2, 3)
            got = sess.run(gg, {x: xv})
    s = xv + [0.5, -1.0, 2.0]
    first = (3 * s ** 2).sum(axis=0)
    np.testing.assert_allclose(got, 2 * first * (6 * s).sum(axis=0))
