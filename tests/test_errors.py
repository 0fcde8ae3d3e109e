"""Bad input gets a clear error that names the op, the shapes and what to do next."""
import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import DeviceError, GradientError, ShapeError
from edugraph.ops.base import Op, apply


def on(device, a, **kw):
    return eg.tensor(a, device=device, **kw)


def test_broadcast_mismatch_names_op_shapes_and_dimension(device):
    with pytest.raises(ShapeError) as info:
        on(device, np.ones((2, 3))) + on(device, np.ones((4, 3)))
    message = str(info.value)
    assert message.startswith("add:")
    assert "(2, 3)" in message and "(4, 3)" in message
    assert "dimension -2" in message and "[2, 4]" in message
    assert "equal or one of them 1" in message
    with pytest.raises(ShapeError, match=r"^mul: .*\(5,\).*\(2, 4\).*dimension -1"):
        on(device, np.ones(5)) * on(device, np.ones((2, 4)))
    with pytest.raises(ShapeError, match="^maximum:"):
        eg.maximum(on(device, np.ones(2)), on(device, np.ones(3)))


def test_matmul_inner_dimension_message(device):
    with pytest.raises(ShapeError) as info:
        eg.matmul(on(device, np.ones((2, 3))), on(device, np.ones((4, 5))))
    message = str(info.value)
    assert message.startswith("matmul: inner dimensions differ")
    assert "(2, 3)" in message and "(4, 5)" in message and "(3)" in message and "(4)" in message
    assert "Transpose" in message
    with pytest.raises(ShapeError, match="batch dimensions"):
        eg.matmul(on(device, np.ones((2, 2, 3))), on(device, np.ones((3, 3, 4))))
    with pytest.raises(ShapeError, match="^matmul:"):
        eg.matmul(on(device, np.ones(3)), on(device, np.ones(4)))


def test_shape_op_messages(device):
    with pytest.raises(ShapeError, match=r"reshape: .*\(2, 3\).*6 elements.*\(4,\)"):
        eg.reshape(on(device, np.ones((2, 3))), (4,))
    with pytest.raises(ShapeError, match=r"broadcast_to: .*\(3,\).*\(2, 4\)"):
        eg.broadcast_to(on(device, np.ones(3)), (2, 4))
    with pytest.raises(ShapeError, match="concat along axis 0"):
        eg.concat([on(device, np.ones((2, 3))), on(device, np.ones((2, 4)))], 0)
    with pytest.raises(ShapeError, match="stack"):
        eg.stack([on(device, np.ones(2)), on(device, np.ones(3))])
    with pytest.raises(ShapeError, match=r"indexing a tensor of shape \(3,\)"):
        on(device, np.ones(3))[5]


def test_mixing_devices_names_both():
    with pytest.raises(DeviceError) as info:
        eg.tensor([1.0, 2.0]) + eg.tensor([1.0, 2.0], device="sim:0")
    message = str(info.value)
    assert message.startswith("add:") and "cpu:0" in message and "sim:0" in message
    assert ".to(" in message
    with pytest.raises(DeviceError, match="matmul.*sim:0.*cpu:0"):
        eg.matmul(eg.tensor(np.ones((2, 2)), device="sim:0"), eg.tensor(np.ones((2, 2))))


def test_mixing_float32_and_float64_is_a_clear_type_error(device):
    with pytest.raises(TypeError) as info:
        on(device, [1.0]) * on(device, [1.0], dtype=eg.float64)
    message = str(info.value)
    assert message.startswith("mul:") and "float32" in message and "float64" in message
    assert "cast" in message


def test_non_scalar_backward_needs_a_gradient(device):
    y = on(device, [1.0, 2.0], requires_grad=True) * 2
    with pytest.raises(GradientError, match=r"shape \(2,\).*scalar.*sum\(\)"):
        y.backward()
    with pytest.raises(GradientError, match=r"\(3,\).*\(2,\)"):
        y.backward(on(device, [1.0, 1.0, 1.0]))
    with pytest.raises(GradientError, match=r"dtype float64.*dtype float32"):
        y.backward(on(device, [1.0, 1.0], dtype=eg.float64))
    if device != "cpu:0":
        with pytest.raises(GradientError, match=f"on cpu:0.*on {device}"):
            y.backward(eg.tensor([1.0, 1.0]))


def test_backward_on_a_constant(device):
    with pytest.raises(GradientError, match="requires_grad=True"):
        (on(device, [1.0]) * 2).sum().backward()


class NoGradient(Op):
    """A user-defined op that forgot its backward."""

    name = "my_op"

    def forward(self, xp, x):
        return x * 2


def test_backward_through_an_op_without_gradient_names_it(device):
    x = on(device, [1.0, 2.0], requires_grad=True)
    y = apply(NoGradient(), x).sum()
    with pytest.raises(GradientError, match="'my_op' has no gradient"):
        y.backward()


class CubeWith:
    """A user-defined op whose ``forward`` returns what ``compute`` gives for its array."""

    def __new__(cls, compute):
        class Cube(Op):
            name = "cube"

            def forward(self, xp, x):
                return compute(x)

            def backward(self, grad, out, x):
                return (grad * 3 * x * x,)
        return Cube()


@pytest.mark.parametrize("compute, says", [
    (lambda x: eg.pow(x, 3), r"Cube.forward \(op 'cube'\) returned a tensor; .* `return x \*\* 3`"
                             r".*eg.pow, eg.exp...\) make tensors: they belong in backward"),
    (lambda x: None, r"Cube.forward \(op 'cube'\) returned None \(no return statement\?\), not an "
                     "array"),
    (lambda x: (x ** 3).tolist(), "returned a list, not an array"),
])
def test_a_custom_forward_that_returns_no_array_is_named_where_it_runs(compute, says):
    """The mistake is caught where forward returns, eagerly and while a graph (or a traced
    function) is built, not in the next op: that said 'sum cannot compute on float32 inputs'
    (a tensor) or raised a bare AttributeError (None, a list)."""
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(TypeError, match=says):
        apply(CubeWith(compute), x)
    with eg.Graph().as_default():
        with pytest.raises(TypeError, match=says):
            apply(CubeWith(compute), eg.placeholder(eg.float32, shape=(2,)))
        with pytest.raises(TypeError, match=says):      # (rank unknown: shapes by another trial)
            apply(CubeWith(compute), eg.placeholder(eg.float32))

    @eg.function
    def traced(t):
        return apply(CubeWith(compute), t)
    with pytest.raises(TypeError, match=says):
        traced(eg.constant([1.0, 2.0]))

def test_item_of_many_values(device):
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        on(device, [1.0, 2.0]).item()
    with pytest.raises(ValueError, match="ambiguous"):
        bool(on(device, [1.0, 2.0]) > 0)


def test_unknown_device_and_dtype():
    with pytest.raises(DeviceError, match="Unknown device"):
        eg.tensor([1.0], device="tpu:0")
    with pytest.raises(TypeError, match=r"Unknown data type 'float33'\. Use eg\.float32"):
        eg.tensor([1.0], dtype="float33")


def test_axis_out_of_range_names_the_axes(device):
    x = on(device, np.ones((2, 3)))
    with pytest.raises(ShapeError, match=r"^sum over axis 5: .*\(2, 3\) has axes -2\.\.1"):
        eg.reduce_sum(x, 5)
    with pytest.raises(ShapeError, match=r"^max over axis \(0, 4\)"):
        eg.reduce_max(x, (0, 4))
    with pytest.raises(ShapeError, match=r"^log_softmax over axis 2"):
        eg.log_softmax(x, 2)
    with pytest.raises(ShapeError, match=r"^expand_dims\(axis=3\): .*\(2, 3\) has 3 axes, "
                                         r"so axis must be in -3\.\.2"):
        eg.expand_dims(x, 3)
    with pytest.raises(ShapeError, match=r"axis must be in -3\.\.2"):
        eg.expand_dims(x, -4)


def test_indices_must_be_integers(device):
    x = on(device, np.ones((2, 3)))
    for call in (lambda: eg.gather(x, on(device, [0.0, 1.0])),
                 lambda: eg.one_hot(on(device, [0.5]), 3)):
        with pytest.raises(TypeError, match="indices must be integers, got float32.*cast"):
            call()
    with pytest.raises(ShapeError, match="must be integers"):
        x[on(device, [0.5])]


def test_messages_never_blame_broadcasting_for_other_failures(device):
    with pytest.raises(ShapeError) as info:
        on(device, [2]) ** -1                    # integers to negative powers
    assert "broadcast" not in str(info.value) and str(info.value).startswith("pow")
    with pytest.raises(ShapeError, match=r"^matmul needs inputs with at least one dimension"):
        eg.matmul(on(device, 2.0), on(device, np.ones((2, 2), dtype=np.float32)))
    with pytest.raises(ShapeError, match=r"^transpose\(perm=\(0,\)\)"):
        eg.transpose(on(device, np.ones((2, 3))), (0,))


def test_more_shape_op_messages(device):
    x = on(device, np.ones((2, 3)))
    with pytest.raises(ShapeError, match=r"transpose\(perm=\(0, 0\)\): a tensor of shape \(2, 3\) "
                       r"has 2 axes, so perm must name each of 0\.\.1 exactly once"):
        eg.transpose(x, (0, 0))
    with pytest.raises(ShapeError, match=r"transpose\(perm=\(1, 2\)\)"):
        x.permute(1, 2)
    with pytest.raises(ShapeError, match=r"^transpose\(0, 2\) swaps two dimensions, but a "
                       r"tensor of shape \(2, 3\) has dimensions -2\.\.1"):
        x.transpose(0, 2)                       # (PyTorch's: was a raw IndexError)
    with pytest.raises(ShapeError, match=r"squeeze\(axis=0\): axis 0 of a tensor of shape "
                       r"\(2, 3\) has size 2, and squeeze removes only axes of size 1"):
        eg.squeeze(x, 0)
    with pytest.raises(ShapeError, match=r"squeeze\(axis=5\): a tensor of shape \(2, 3\) has "
                       r"axes -2\.\.1"):
        eg.squeeze(x, 5)
    with pytest.raises(ShapeError, match=r"^argmax over axis 4: a tensor of shape \(2, 3\) has "
                       r"axes -2\.\.1"):
        eg.argmax(x, 4)


def test_data_that_is_not_a_tensor():
    with pytest.raises(TypeError, match=r"^Cannot make a tensor from \['a', 'b'\]: its "
                       "entries are not all numbers"):
        eg.tensor(["a", "b"])
    ragged = r"^Cannot make a tensor from \[\[1, 2\], \[3\]\]: its nested lists have " \
             "different lengths.*Pad the short rows"
    with pytest.raises(ValueError, match=ragged):
        eg.tensor([[1, 2], [3]])
    x = eg.tensor([[1.0, 2.0], [3.0, 4.0]])     # a list next to a tensor, an op's argument
    for make in (lambda: x + [[1, 2], [3]], lambda: eg.where([[1, 2], [3]], x, x),
                 lambda: eg.nn.softmax([[1, 2], [3]])):
        with pytest.raises(ValueError, match=ragged):
            make()
    with pytest.raises(TypeError, match=r"^Cannot make a tensor from array\(\['a'\].*not all "
                       "numbers"):
        eg.tensor(np.array(["a"]), dtype=eg.float32)
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (2,), name="x")
        for make in (lambda: eg.constant([[1, 2], [3]]), lambda: x * [[1, 2], [3]]):
            with pytest.raises(ValueError, match=ragged):
                make()
        with pytest.raises(TypeError, match=r"^constant: 'x:0' is a graph tensor; its value "
                           r"exists only when sess.run computes it.*eg.identity\(x\)"):
            eg.constant(x)
    with pytest.raises(TypeError, match=r"Unknown data type 'foo'\. Use eg\.float32"):
        eg.cast(eg.tensor([1.0]), "foo")
    with pytest.raises(TypeError, match=r"x\.to\('/tpu:0'\): that is neither a device "
                       r"\('/cpu:0', '/gpu:0', 'cuda', 'sim'\) nor a data type"):
        eg.tensor([1.0]).to("/tpu:0")


def test_lists_are_tensors_too(device):
    """Ops that read their arguments' shapes take lists and arrays as TF does, instead of
    failing on a missing attribute; a list next to a tensor takes its dtype and device."""
    x = eg.tensor([[1.0, -2.0], [3.0, 4.0]], device=device, dtype=eg.float64)
    for got, expected in [(x @ [[1.0], [2.0]], [[-3.0], [11.0]]),
                          (eg.matmul([1.0, 2.0], x), [7.0, 6.0]),
                          (eg.matmul([[2.0]], [[3.0]]), [[6.0]]),
                          (eg.zeros_like([[1, 2]]), [[0, 0]])]:
        np.testing.assert_array_equal(got.numpy(), expected)
    assert (x @ [[1.0], [2.0]]).dtype == eg.float64 and (x @ [[1.0], [2.0]]).device is x.device
    images, filters = np.ones((1, 3, 3, 1)).tolist(), np.ones((2, 2, 1, 1)).tolist()
    np.testing.assert_array_equal(eg.nn.conv2d(images, filters).numpy(), np.full((1, 2, 2, 1), 4))
    assert eg.nn.max_pool2d(images, 2).shape == (1, 1, 1, 1)
    with pytest.raises(eg.errors.ShapeError, match=r"conv2d: filters must be 4-D \(height, "
                       r"width, in channels, out channels\), got shape \(2, 2, 1\)"):
        eg.nn.conv2d(images, np.ones((2, 2, 1)))


def test_reshape_sizes_and_one_hot_depth(device):
    x = on(device, np.ones((2, 3)))
    for bad in [(-2, 3), (-1, -1)]:
        with pytest.raises(ShapeError, match=r"reshape into \(.*\): sizes must be whole numbers, "
                           "0 or more, except one that may be -1"):
            x.reshape(*bad)
    assert x.reshape(6).shape == (6,) and eg.reshape(x, [3, -1]).shape == (3, 2)
    with pytest.raises(ValueError, match="one_hot: depth must be 0 or more"):
        eg.one_hot(on(device, [1]), -1)
    assert x[0].broadcast_to(3).shape == (3,) and x.expand(2, 2, 3).shape == (2, 2, 3)
    for bad in [(2, -1), "ab", (2.5,)]:        # (a raw "not iterable" TypeError for 3)
        with pytest.raises(ShapeError, match=r"broadcast_to .*: the target shape must be whole"):
            x.broadcast_to(bad)
    with pytest.raises(TypeError, match="expand_as needs a tensor.*got int.*expand"):
        x.expand_as(3)


def test_graph_shape_rules_give_the_eager_messages():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (2, 3))
        with pytest.raises(ShapeError, match="matmul needs inputs with at least one dimension"):
            x @ 1                               # (a raw AttributeError, then IndexError)
        with pytest.raises(ShapeError, match="at least one dimension"):
            eg.matmul(2.0, x)
        batch = eg.placeholder(eg.float32, (None, 2, 3))
        stretched = x.expand_as(batch)          # a size known only when fed
        (grad,) = eg.gradients(eg.reduce_sum(stretched), [x])
        with eg.Session() as sess:
            value, g = sess.run([stretched, grad], {x: np.ones((2, 3)),
                                                    batch: np.zeros((4, 2, 3))})
    assert value.shape == (4, 2, 3) and (g == 4).all()


@pytest.mark.parametrize("cut", ["argmax", "comparison", "integer cast", "no_grad"])
def test_no_gradient_path_names_the_possible_causes(cut):
    x = eg.tensor([1.0, 2.0], requires_grad=True)
    if cut == "no_grad":
        with eg.no_grad():
            y = (x * 2).sum()
    else:
        z = {"argmax": lambda: eg.argmax(x), "comparison": lambda: x > 1,
             "integer cast": lambda: eg.cast(x, eg.int64)}[cut]()
        y = eg.reduce_sum(eg.cast(z, eg.float32))
    with pytest.raises(GradientError, match=r"^backward\(\) on a tensor that does not require "
                       r"grad\..*eg\.no_grad\(\).*an op that has no gradient \(argmax, a "
                       r"comparison, a cast to an integer dtype\)"):
        y.backward()
    with pytest.raises(GradientError, match=r"^grad\(\) of an output that does not require"):
        eg.grad(y, [x])
    assert eg.grad(y, [x], allow_unused=True) == (None,)


# ------------------------------------------------ found by an audit of students' mistakes
def test_numpy_refusing_dtypes_is_a_dtype_error_naming_them():
    mask = eg.ones((2, 3)) > 0
    with pytest.raises(TypeError, match=r"sub cannot compute on bool and bool inputs.*cast"):
        mask - mask
    with pytest.raises(TypeError, match=r"neg cannot compute on bool inputs"):
        -mask


def test_creating_a_tensor_of_negative_size_says_why():
    with pytest.raises(ShapeError, match=r"fill\(shape=\(-1, 3\).*negative dimensions"):
        eg.zeros((-1, 3))


def test_concat_of_tensors_not_in_a_list_says_to_list_them():
    a = eg.ones((2, 3))
    with pytest.raises(TypeError, match=r"axis must be an int, got Tensor.*concat\(\[a, b\]"):
        eg.concat(a, a)
    with pytest.raises(ValueError, match="at least one tensor"):
        eg.concat([])
    with pytest.raises(ValueError, match="at least one tensor"):
        eg.stack([])


def test_join_axis_out_of_range_is_named_as_such():
    a = eg.ones((2, 3))
    with pytest.raises(ShapeError, match=r"have axes -2\.\.1\. To join along a new axis, use "
                                         r"eg\.stack"):
        eg.concat([a, a], axis=2)
    with pytest.raises(ShapeError, match=r"gives 3 axes, so axis must be in -3\.\.2"):
        eg.stack([a, a], axis=4)
    with pytest.raises(ShapeError, match="same number of dimensions"):
        eg.concat([a, eg.ones(3)])


def test_reduction_axis_named_twice_or_empty_is_explained():
    with pytest.raises(ShapeError, match="an axis is named twice"):
        eg.reduce_sum(eg.ones((2, 3)), axis=[1, 1])
    with pytest.raises(ShapeError, match=r"no elements along it, and the max of nothing"):
        eg.reduce_max(eg.zeros((0, 3)), 0)


def test_optimizer_given_the_model_asks_for_its_parameters():
    with pytest.raises(TypeError, match=r"got the model itself \(Linear\).*model\.parameters"):
        eg.optim.SGD(eg.nn.Linear(2, 2), lr=0.1)
    with pytest.raises(TypeError, match=r"got the method model\.parameters, not what it "
                                        r"gives: call it, eg\.optim\.SGD\(model\.parameters\(\)"):
        eg.optim.SGD(eg.nn.Linear(2, 2).parameters, lr=0.1)


def test_a_loss_module_given_the_tensors_says_to_make_it_then_call_it():
    out, target = eg.randn(4, 3), eg.tensor([0, 1, 2, 0])
    with pytest.raises(TypeError, match=r"^nn\.CrossEntropyLoss is a module: make it, then call "
                                        r"it .* loss_fn = nn\.CrossEntropyLoss\(\), then loss = "
                                        r"loss_fn\(output, target\)"):
        eg.nn.CrossEntropyLoss(out, target)
    with pytest.raises(TypeError, match=r"^nn\.MSELoss is a module"):
        eg.nn.MSELoss(out, out)
    weighted = eg.nn.CrossEntropyLoss(eg.ones(3))       # one tensor: the class weights
    assert float(weighted(out, target)) == pytest.approx(float(eg.nn.CrossEntropyLoss()(out, target)))


def test_sequential_given_a_class_or_a_list_says_how_to_write_it():
    with pytest.raises(TypeError, match=r"got the class ReLU, not a module: make one, "
                                        r"nn\.ReLU\(\.\.\.\)"):
        eg.nn.Sequential(eg.nn.Linear(4, 8), eg.nn.ReLU)
    with pytest.raises(TypeError, match=r"nn\.Sequential\(\*layers\)"):
        eg.nn.Sequential([eg.nn.Linear(4, 8), eg.nn.ReLU()])


def test_a_layer_reads_a_list_of_numbers_and_refuses_none():
    linear = eg.nn.Linear(2, 1)
    np.testing.assert_allclose(linear([[1.0, 2.0]]).numpy(),
                               linear(eg.tensor([[1.0, 2.0]])).numpy())
    assert eg.keras.layers.Dense(3)([[1.0, 2.0]]).shape == (1, 3)
    with pytest.raises(TypeError, match=r"Linear '.*' was called on None; it needs a tensor"):
        linear(None)


def test_linear_sizes_must_be_whole_numbers():
    with pytest.raises(ValueError, match=r"in_features must be a whole number, 0 or more, "
                                         r"got -4"):
        eg.nn.Linear(-4, 3)
    with pytest.raises(ValueError, match=r"got \(4,\)"):
        eg.nn.Linear((4,), 3)
    assert eg.nn.Linear(0, 3)(eg.ones((2, 0))).shape == (2, 3)  # as in PyTorch: bias only


def test_batch_norm_with_the_wrong_channels_names_the_layer():
    with pytest.raises(ShapeError, match=r"BatchNorm1d '.*' normalises 4 channels \(dimension "
                                         r"1\), but the input of shape \(2, 5\) has 5"):
        eg.nn.BatchNorm1d(4)(eg.ones((2, 5)))
    with pytest.raises(ShapeError, match=r"BatchNorm2d\(5\)"):
        eg.nn.BatchNorm2d(4)(eg.ones((2, 5, 3, 3)))


def test_pytorch_embedding_refuses_float_ids():
    with pytest.raises(TypeError, match=r"ids must be integers, as in PyTorch.*ids\.long\(\)"):
        eg.nn.Embedding(10, 3)(eg.tensor([1.7, 2.2]))


def test_pytorch_one_hot_is_int64_and_refuses_ids_out_of_range():
    import edugraph.nn.functional as F
    rows = F.one_hot(eg.tensor([0, 2, 1]))
    assert rows.dtype == eg.int64
    np.testing.assert_array_equal(rows.numpy(), np.eye(3, dtype=np.int64)[[0, 2, 1]])
    assert F.one_hot(eg.tensor([0, 2]), 4).shape == (2, 4)
    with pytest.raises(ValueError, match=r"class ids must be in \[0, 3\), but they range over "
                                         r"\[0, 5\]"):
        F.one_hot(eg.tensor([0, 5]), 3)


def test_dataloader_given_a_tuple_of_tensors_asks_for_a_dataset():
    with pytest.raises(TypeError, match=r"TensorDataset\(X, y\)"):
        eg.utils.data.DataLoader((eg.ones((10,)), eg.ones((10, 3))), batch_size=4)


def test_arange_with_step_zero_says_so():
    with pytest.raises(ValueError, match="the step must not be 0"):
        eg.arange(0, 1, 0)


def test_backward_on_a_graph_tensor_points_to_gradients():
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (2,))
        with pytest.raises(GradientError, match=r"graph tensor 'Sum:0'.*eg\.gradients"):
            eg.reduce_sum(x * x).backward()


def test_autograd_backward_takes_several_outputs_as_in_pytorch():
    x = eg.ones(2, requires_grad=True)
    eg.autograd.backward([x * 2, x * 3], [eg.ones(2), eg.ones(2) * 2])
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 8.0])
    with pytest.raises(TypeError, match="backward\\(\\) needs a tensor"):
        eg.autograd.backward([3.0])


def test_tape_arguments_that_are_not_tensors_are_named():
    x = eg.Variable([1.0, 2.0])
    with eg.GradientTape(persistent=True) as tape:
        y = eg.reduce_sum(x * x)
        with pytest.raises(TypeError, match=r"watch: the watched values must be tensors, got "
                                            r"float\. Make a tensor first"):
            tape.watch(3.0)
    with pytest.raises(TypeError, match=r"the sources .* must be tensors, got float \(item 1\)"):
        tape.gradient(y, [x, 3.0])
    with pytest.raises(TypeError, match=r"the target .* must be tensors, got NoneType"):
        tape.gradient(None, x)
    with eg.GradientTape() as once:
        z = eg.reduce_sum(x * x)
    with pytest.raises(TypeError):
        once.gradient(z, "x")
    np.testing.assert_array_equal(once.gradient(z, x).numpy(), [2.0, 4.0])   # not used up


def test_graph_reduction_over_a_missing_axis_fails_when_built():
    """Not later in Session.run, and not with a wrong static shape (axis 2 wrapped round)."""
    with eg.Graph().as_default():
        x = eg.placeholder(eg.float32, (None, 3))
        with pytest.raises(ShapeError, match=r"sum over axis 2: a tensor of shape .* has axes "
                                             r"-2\.\.1"):
            eg.reduce_sum(x, axis=2)
        with pytest.raises(ShapeError, match="named twice"):
            eg.reduce_max(x, axis=[1, -1])


def test_errors_are_also_the_classes_tfs_guides_catch():
    """An input_signature mismatch and a leaked tensor are TypeError in TF (and ValueError in
    newer guides), .numpy() of a graph tensor is AttributeError: each is both, with edugraph's
    message. int() and np.array() of a graph tensor stay NotImplementedError, as TF's."""
    @eg.function(input_signature=[eg.TensorSpec((None,), eg.float32)])
    def f(x):
        return x * 2

    for error_class in (TypeError, ValueError):
        with pytest.raises(error_class, match=r"do not match its input_signature"):
            f(np.ones((2, 2), np.float32))
    leaked = []
    eg.function(lambda a: leaked.append(a + 1) or a)(eg.tensor(1.0))
    for error_class in (TypeError, ValueError):
        with pytest.raises(error_class, match=r"Tensor Add:0 belongs to another graph and "
                           r"cannot be used in '<lambda>': it was made in the traced function "
                           r"'<lambda>' \(it leaked out of that trace: return it instead\)"):
            eg.function(lambda b: b + leaked[0])(eg.tensor(2.0))
    for error_class in (AttributeError, NotImplementedError):
        with pytest.raises(error_class, match=r"Add:0 is a symbolic tensor: it has no value "
                           r"until the traced function runs"):
            leaked[0].numpy()
    for use in (int, float, np.array, np.mean):
        with pytest.raises(NotImplementedError, match="is a symbolic tensor") as info:
            use(leaked[0])
        assert not isinstance(info.value, AttributeError)
