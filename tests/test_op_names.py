"""``name=`` on op functions, as on the slides: ``eg.maximum(h, 0, name='h')``.

In a graph the name becomes the node's name (made unique like TF: ``h``, ``h_1``; inside name
scopes ``layer1/h``). Eager tensors have no node names: there it is accepted and ignored.
"""
import numpy as np
import pytest

import edugraph as eg

M = np.arange(6, dtype=np.float32).reshape(2, 3) + 1

# (function, arguments): every public op function, called the way a student would
CALLS = [
    (eg.add, lambda x: (x, 1.0)), (eg.subtract, lambda x: (x, 1.0)),
    (eg.multiply, lambda x: (x, 2.0)), (eg.divide, lambda x: (x, 2.0)),
    (eg.negative, lambda x: (x,)), (eg.pow, lambda x: (x, 3.0)), (eg.pow, lambda x: (x, 2)),
    (eg.square, lambda x: (x,)), (eg.sqrt, lambda x: (x,)), (eg.exp, lambda x: (x,)),
    (eg.log, lambda x: (x,)), (eg.abs, lambda x: (x,)), (eg.sign, lambda x: (x,)),
    (eg.maximum, lambda x: (x, 0)), (eg.minimum, lambda x: (x, 0)),
    (eg.where, lambda x: (x > 2, x, 0.0)), (eg.clip, lambda x: (x, 1.0, 3.0)),
    (eg.cast, lambda x: (x, eg.float64)), (eg.logical_not, lambda x: (x > 2,)),
    (eg.logical_and, lambda x: (x > 2, x < 5)), (eg.logical_or, lambda x: (x > 2, x < 1)),
    (eg.floordiv, lambda x: (x, 2.0)), (eg.floormod, lambda x: (x, 2.0)),
    (eg.less, lambda x: (x, 2.0)), (eg.greater_equal, lambda x: (x, 2.0)),
    (eg.equal, lambda x: (x, 2.0)),
    (eg.reduce_sum, lambda x: (x,)), (eg.reduce_mean, lambda x: (x, 1)),
    (eg.reduce_max, lambda x: (x,)), (eg.reduce_min, lambda x: (x,)),
    (eg.math.reduce_variance, lambda x: (x, 0)), (eg.math.reduce_std, lambda x: (x,)),
    (eg.logsumexp, lambda x: (x,)), (eg.argmax, lambda x: (x, 1)), (eg.argmin, lambda x: (x, 0)),
    (eg.cumsum, lambda x: (x, 1)), (eg.norm, lambda x: (x,)), (eg.norm, lambda x: (x, 1, 1)),
    (eg.reduce_any, lambda x: (x > 2,)), (eg.reduce_all, lambda x: (x > 2,)),
    (eg.reshape, lambda x: (x, (3, 2))), (eg.transpose, lambda x: (x,)),
    (eg.permute, lambda x: (x, (1, 0))), (eg.broadcast_to, lambda x: (x, (4, 2, 3))),
    (eg.expand_dims, lambda x: (x, 0)), (eg.squeeze, lambda x: (eg.expand_dims(x, 0),)),
    (eg.concat, lambda x: ([x, x], 0)), (eg.stack, lambda x: ([x, x],)),
    (eg.gather, lambda x: (x, eg.constant(np.array([1, 0])))),
    (eg.one_hot, lambda x: (eg.constant(np.array([0, 2])), 3)), (eg.identity, lambda x: (x,)),
    (eg.stop_gradient, lambda x: (x,)),
    (eg.matmul, lambda x: (x, eg.transpose(x))), (eg.matmul, lambda x: (x, x[0])),
    (eg.mm, lambda x: (x, eg.transpose(x))), (eg.mv, lambda x: (x, x[0])),
    (eg.dot, lambda x: (x[0], x[1])), (eg.outer, lambda x: (x[0], x[1])),
    (eg.bmm, lambda x: (eg.expand_dims(x, 0), eg.expand_dims(eg.transpose(x), 0))),
    (eg.relu, lambda x: (x,)), (eg.leaky_relu, lambda x: (x,)), (eg.sigmoid, lambda x: (x,)),
    (eg.tanh, lambda x: (x,)), (eg.softmax, lambda x: (x,)), (eg.log_softmax, lambda x: (x,)),
    (eg.dropout, lambda x: (x, 0.5)), (eg.nn.dropout, lambda x: (x, 0.5)),
    (eg.math.argmax, lambda x: (x,)),
    (eg.fill, lambda x: ((2, 3), 7.0)), (eg.zeros, lambda x: ((2, 3),)),
    (eg.ones, lambda x: ((2, 3),)), (eg.zeros_like, lambda x: (x,)),
    (eg.ones_like, lambda x: (x,)), (eg.random_normal, lambda x: ((2, 3),)),
    (eg.random_uniform, lambda x: ((2, 3),)), (eg.truncated_normal, lambda x: ((2, 3),)),
    (eg.nn.conv2d, lambda x: (eg.reshape(x, (1, 2, 3, 1)), eg.ones((2, 2, 1, 4)))),
    (eg.nn.max_pool2d, lambda x: (eg.reshape(x, (1, 2, 3, 1)), 2, 1)),
    (eg.nn.extract_patches, lambda x: (eg.reshape(x, (1, 2, 3, 1)), 2)),
]
IDS = [f"{fn.__name__}-{i}" for i, (fn, _) in enumerate(CALLS)]


@pytest.mark.parametrize("fn, args", CALLS, ids=IDS)
def test_every_op_function_names_its_graph_node(fn, args):
    with eg.Graph().as_default():
        x = eg.constant(M)
        first = fn(*args(x), name="h")
        second = fn(*args(x), name="h")
    assert (first.name, second.name) == ("h:0", "h_1:0")
    assert first.op.name == "h"


@pytest.mark.parametrize("fn, args", CALLS, ids=IDS)
def test_eager_calls_accept_the_name_and_ignore_it(fn, args):
    x = eg.tensor(M)
    eg.random.set_seed(0)
    named = fn(*args(x), name="h")
    eg.random.set_seed(0)
    plain = fn(*args(x))
    assert named.shape == plain.shape and named.dtype == plain.dtype
    np.testing.assert_array_equal(named.numpy(), plain.numpy())


def test_the_slides_two_layer_net_with_names():
    with eg.Graph().as_default() as graph:
        x = eg.placeholder(eg.float32, shape=(None, 3), name="x")
        w1, w2 = eg.Variable(np.ones((3, 4), np.float32)), eg.Variable(np.ones((4, 1), np.float32))
        with eg.name_scope("layer1"):
            h = eg.maximum(eg.matmul(x, w1, name="h"), 0, name="h")
        y_pred = eg.matmul(h, w2, name="y_pred")
        loss = eg.reduce_mean(y_pred, name="loss")
    assert [t.name for t in (h, y_pred, loss)] == ["layer1/h_1:0", "y_pred:0", "loss:0"]
    assert graph.get_tensor_by_name("layer1/h:0").op.type == "MatMul"
    with eg.Session(graph=graph) as sess:
        sess.run(eg.variables_initializer([w1, w2]))
        assert sess.run("loss:0", {"x:0": np.ones((2, 3))}) == pytest.approx(12.0)
