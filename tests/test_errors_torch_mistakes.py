"""Students' PyTorch mistakes, answered with a fix that works for the case: swapped loss
arguments, a 1-D input to cross-entropy, a squeezed batch of one, unflattened images into
nn.Linear, ids outside an embedding table, torch.gather's argument order, float slice bounds,
indexing a scalar, PyTorch's constructor and dtype names. Where PyTorch accepts the code
(one image into nn.Conv2d), edugraph computes PyTorch's numbers; where PyTorch refuses it,
both refuse it."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import nn
from edugraph.errors import ShapeError
import edugraph.nn.functional as F

torch = pytest.importorskip("torch")

rng = np.random.default_rng(3)


def both(array, requires_grad=False):
    """The same values as an edugraph tensor and a torch tensor."""
    return (eg.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


# ------------------------------------------------------------------ cross-entropy's arguments
def test_cross_entropy_with_its_arguments_swapped_says_so():
    logits, torch_logits = both(rng.normal(size=(4, 3)).astype(np.float32))
    y, torch_y = both(np.array([0, 1, 2, 1]))
    swapped = r"arguments look swapped\. Pass the logits first: loss_fn\(logits, targets\)"
    with pytest.raises(ShapeError, match=r"the input of shape \(4,\) holds int64 values and "
                                         r"the target of shape \(4, 3\) holds floats.*"
                                         + swapped):
        nn.CrossEntropyLoss()(y, logits)
    with pytest.raises(ShapeError, match=swapped):          # (ids made floats: still swapped)
        nn.CrossEntropyLoss()(y.float(), logits)
    for ids in (torch_y, torch_y.float()):                   # torch refuses both too
        with pytest.raises((RuntimeError, NotImplementedError)):
            torch.nn.CrossEntropyLoss()(ids, torch_logits)
    np.testing.assert_allclose(nn.CrossEntropyLoss()(logits, y).item(),
                               torch.nn.CrossEntropyLoss()(torch_logits, torch_y).item(),
                               rtol=1e-6)
    with pytest.raises(ShapeError, match=r"a float target holds class probabilities.*"
                                         r"target.long\(\)"):  # float ids, right order: as before
        nn.CrossEntropyLoss()(logits, y.float())


def test_cross_entropy_of_one_output_per_example_points_to_bce_with_logits():
    x = rng.normal(size=(3, 4)).astype(np.float32)
    layer = nn.Linear(4, 1)
    out = layer(eg.tensor(x)).squeeze(1)
    y = eg.tensor([0, 1, 1])
    with pytest.raises(ShapeError, match=r"^cross_entropy: a 1-D input, here of shape \(3,\), "
                                         r"is one example's class scores \(C,\).*target has "
                                         r"shape \(3,\)\. A batch needs \(N, C\) logits.*"
                                         r"nn.BCEWithLogitsLoss\(\) with float targets: "
                                         r"loss_fn\(output, target.float\(\)\)\.$"):
        nn.CrossEntropyLoss()(out, y)
    torch_out = torch.tensor(x) @ torch.tensor(layer.weight.numpy()).T + \
        torch.tensor(layer.bias.numpy())
    with pytest.raises(RuntimeError):                        # torch refuses it too
        torch.nn.CrossEntropyLoss()(torch_out.squeeze(1), torch.tensor([0, 1, 1]))
    np.testing.assert_allclose(                              # the fix suggested works
        nn.BCEWithLogitsLoss()(out, y.float()).item(),
        torch.nn.BCEWithLogitsLoss()(torch_out.squeeze(1), torch.tensor([0., 1., 1.])).item(),
        rtol=1e-6)


def test_cross_entropy_still_suggests_float_targets_for_one_hot_ids_only():
    one_hot = eg.tensor([[0, 1, 0, 0], [1, 0, 0, 0]])
    with pytest.raises(ShapeError, match=r"target.float\(\)"):
        F.cross_entropy(eg.ones((2, 4)), one_hot)
    with pytest.raises(ShapeError) as error:                 # ids of another length: no
        F.cross_entropy(eg.ones((2, 4)), eg.tensor([0, 1, 2]))
    assert "float()" not in str(error.value)


# ------------------------------------------------------------------ one image into a conv net
def test_conv2d_and_pools_take_one_image_as_torch_does():
    image, torch_image = both(rng.normal(size=(3, 9, 8)), requires_grad=True)
    conv = nn.Conv2d(3, 4, 3, padding=1).double()
    torch_conv = torch.nn.Conv2d(3, 4, 3, padding=1).double()
    torch_conv.load_state_dict({k: torch.tensor(v.numpy()) for k, v in conv.state_dict().items()})
    for ours, theirs in ((conv, torch_conv), (nn.MaxPool2d(2), torch.nn.MaxPool2d(2)),
                         (nn.AvgPool2d(2), torch.nn.AvgPool2d(2)),
                         (nn.AdaptiveAvgPool2d((2, 3)), torch.nn.AdaptiveAvgPool2d((2, 3)))):
        image.grad, torch_image.grad = None, None
        out, torch_out = ours(image), theirs(torch_image)
        assert tuple(out.shape) == tuple(torch_out.shape) and out.ndim == 3
        np.testing.assert_allclose(out.numpy(), torch_out.detach().numpy(), rtol=1e-12,
                                   atol=1e-14)      # (sums that nearly cancel)
        (out * out).sum().backward()
        (torch_out * torch_out).sum().backward()
        np.testing.assert_allclose(image.grad.numpy(), torch_image.grad.numpy(), rtol=1e-10,
                                   atol=1e-14)
    np.testing.assert_allclose(conv.weight.grad.numpy(), torch_conv.weight.grad.numpy(),
                               rtol=1e-10, atol=1e-14)
    lazy = nn.LazyConv2d(2, 3)                               # sized by one image too
    assert lazy(eg.ones((5, 6, 6))).shape == (2, 4, 4) and lazy.weight.shape == (2, 5, 3, 3)
    with pytest.raises(ShapeError, match=r"got shape \(16, 28, 28\)\. .* a batch of grey "
                                         r"images \(N, H, W\) gets its channel axis with "
                                         r"x\.unsqueeze\(1\)"):
        nn.Conv2d(1, 8, 3)(eg.ones((16, 28, 28)))      # not one image: 16 is not its channels
    assert nn.Conv2d(1, 8, 3)(eg.ones((16, 28, 28)).unsqueeze(1)).shape == (16, 8, 26, 26)


def test_functional_conv2d_says_which_axis_to_add():
    weight = eg.ones((2, 3, 3, 3))
    with pytest.raises(ShapeError, match=r"got shape \(3, 8, 8\)\. One image \(C, H, W\) "
                                         r"becomes a batch of one with x.unsqueeze\(0\)\.$"):
        F.conv2d(eg.ones((3, 8, 8)), weight)
    assert F.conv2d(eg.ones((3, 8, 8)).unsqueeze(0), weight).shape == (1, 2, 6, 6)
    with pytest.raises(ShapeError, match=r"got shape \(5, 8, 8\)\. A batch of grey images "
                                         r"\(N, H, W\) gets its channel axis with "
                                         r"x.unsqueeze\(1\)\.$"):
        F.conv2d(eg.ones((5, 8, 8)), eg.ones((2, 1, 3, 3)))
    assert F.conv2d(eg.ones((5, 8, 8)).unsqueeze(1), eg.ones((2, 1, 3, 3))).shape == \
        (5, 2, 6, 6)
    with pytest.raises(ShapeError, match=r"x.view\(1, 1, 8, 8\)"):
        nn.Conv2d(1, 2, 3)(eg.ones((8, 8)))
    with pytest.raises(RuntimeError, match="Expected 3D"):  # torch refuses (H, W) too
        torch.nn.Conv2d(1, 2, 3)(torch.ones(8, 8))
    assert nn.Conv2d(1, 2, 3)(eg.ones((8, 8)).view(1, 1, 8, 8)).shape == (1, 2, 6, 6)


# ------------------------------------------------------------------ losses of two shapes
def test_a_batch_of_one_squeezed_to_0_d_is_explained():
    x = rng.normal(size=(1, 3)).astype(np.float32)
    model = nn.Linear(3, 1)
    target = eg.tensor([0.5])
    with pytest.raises(ShapeError, match=r"the input has shape \(\) but the target has shape "
                                         r"\(1,\).*The input is 0-D: if it came from "
                                         r"\.squeeze\(\), that removed the batch axis of a "
                                         r"batch of one too.*\.squeeze\(1\) \(or use "
                                         r"\.view\(-1\)\)"):
        nn.MSELoss()(model(eg.tensor(x)).squeeze(), target)
    with pytest.warns(UserWarning, match="different to the input size"):    # torch: a warning
        torch.nn.MSELoss()(torch.zeros(()), torch.tensor([0.5]))
    torch_out = torch.tensor(x) @ torch.tensor(model.weight.numpy()).T + \
        torch.tensor(model.bias.numpy())
    for fixed, torch_fixed in ((model(eg.tensor(x)).squeeze(1), torch_out.squeeze(1)),
                               (model(eg.tensor(x)).view(-1), torch_out.view(-1))):
        np.testing.assert_allclose(nn.MSELoss()(fixed, target).item(),
                                   torch.nn.MSELoss()(torch_fixed, torch.tensor([0.5])).item(),
                                   rtol=1e-6)


def test_loss_shape_hints_match_the_shapes():
    column, flat = eg.ones((4, 1)), eg.zeros(4)
    with pytest.raises(ShapeError, match=r"Use input.squeeze\(1\) or target.view\(-1, 1\)\.$"):
        nn.MSELoss()(column, flat)
    with pytest.raises(ShapeError, match=r"Use target.squeeze\(1\) or input.view\(-1, 1\)\.$"):
        nn.L1Loss()(flat, column)
    for fixed in ((column.squeeze(1), flat), (column, flat.view(-1, 1))):
        assert nn.MSELoss()(*fixed).item() == 1.0
    with pytest.raises(ShapeError, match=r"different numbers of values, 40 and 4: pass one "
                                         r"target per prediction\. \(Class ids for \(N, C\) "
                                         r"scores\? Use nn.CrossEntropyLoss\.\)"):
        nn.MSELoss()(eg.ones((4, 10)), eg.tensor([0., 1., 2., 3.]))
    with pytest.raises(ShapeError, match=r"target.view_as\(input\)"):
        nn.MSELoss()(eg.ones((4, 2)), eg.ones((2, 4)))
    assert nn.MSELoss()(eg.ones((4, 2)), eg.ones((2, 4)).view_as(eg.ones((4, 2)))).item() == 0


# ------------------------------------------------------------------ nn.Linear's input
def test_linear_on_unflattened_images_says_flatten():
    layer = nn.Linear(784, 10)
    images = eg.randn(8, 28, 28)
    with pytest.raises(ShapeError, match=r"input of shape \(8, 28, 28\) has 28 features.*"
                                         r"Flatten each example first \(28·28 = 784\): "
                                         r"nn.Flatten\(\) or x.view\(x.size\(0\), -1\)\.$") as e:
        layer(images)
    assert "kernel" not in str(e.value)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.nn.Linear(784, 10)(torch.randn(8, 28, 28))
    assert layer(images.view(images.size(0), -1)).shape == (8, 10)
    assert layer(nn.Flatten()(images)).shape == (8, 10)


def test_linear_on_a_vector_of_examples_says_unsqueeze():
    layer, x = nn.Linear(1, 1), eg.randn(100)
    with pytest.raises(ShapeError, match=r"A 1-D input is one example; for 100 examples of one "
                                         r"feature each, use x.unsqueeze\(1\) \(or "
                                         r"x.view\(-1, 1\)\)\.$"):
        layer(x)
    with pytest.raises(RuntimeError, match="cannot be multiplied"):
        torch.nn.Linear(1, 1)(torch.randn(100))
    assert layer(x.unsqueeze(1)).shape == layer(x.view(-1, 1)).shape == (100, 1)


def test_linear_mentions_the_transpose_only_when_it_would_fit():
    with pytest.raises(ShapeError, match=r"Its transpose would fit.*pass layer.kernel.T.*"
                                         r"nn.Linear\(784, 10\)"):
        nn.Linear(10, 784)(eg.ones((8, 784)))               # in and out swapped
    assert nn.Linear(784, 10)(eg.ones((8, 784))).shape == (8, 10)
    with pytest.raises(ShapeError, match=r"Make this layer nn.Linear\(64, 10\) to take this "
                                         r"input\.$") as e:
        nn.Linear(128, 10)(eg.ones((8, 64)))
    assert "kernel" not in str(e.value)


# ------------------------------------------------------------------ ids and indices
def test_an_id_outside_the_embedding_table_is_named():
    ids = [[1, 10], [3, 4]]
    with pytest.raises(IndexError, match=r"^nn.Embedding\(10, 4\) 'embedding\w*': id 10 is "
                                         r"out of range: the table's num_embeddings=10 rows "
                                         r"are for ids 0..9\. For ids up to 10, make it "
                                         r"nn.Embedding\(11, 4\)\.$"):
        nn.Embedding(10, 4)(eg.tensor(ids))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.Embedding(10, 4)(torch.tensor(ids))
    with pytest.raises(IndexError, match=r"id -1 is out of range.*Negative ids do not count "
                                         r"from the end"):
        nn.Embedding(10, 4)(eg.tensor([-1, 2]))
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.nn.Embedding(10, 4)(torch.tensor([-1, 2]))
    assert nn.Embedding(11, 4)(eg.tensor(ids)).shape == (2, 2, 4)


def test_gather_in_torchs_argument_order_picks_one_per_row_as_torch():
    """``q.gather(1, actions.unsqueeze(1))`` (a DQN's Q-values of the actions taken) and
    ``eg.gather(q, 1, index)`` in torch's order are torch.gather; eg.gather(params, indices,
    axis) stays TF's."""
    q, torch_q = both(rng.normal(size=(5, 3)).astype(np.float32), requires_grad=True)
    actions, torch_actions = both(np.array([0, 1, 2, 0, 1]))
    picked = q.gather(1, actions.unsqueeze(1))
    torch_picked = torch_q.gather(1, torch_actions.unsqueeze(1))
    np.testing.assert_array_equal(picked.numpy(), torch_picked.detach().numpy())
    np.testing.assert_array_equal(eg.gather(q, 1, actions.unsqueeze(1)).numpy(),
                                  torch_picked.detach().numpy())
    (picked * picked).sum().backward()
    (torch_picked * torch_picked).sum().backward()
    np.testing.assert_allclose(q.grad.numpy(), torch_q.grad.numpy(), rtol=1e-6)
    assert eg.gather(q, actions, axis=0).shape == (5, 3)         # TF's: whole rows


def test_a_float_slice_bound_says_make_it_an_int():
    X, torch_X = both(rng.normal(size=(10, 3)).astype(np.float32))
    with pytest.raises(TypeError, match=r"^x\[:8.0\]: 8.0 is a float; indices and slice bounds "
                                        r"must be integers: int\(...\) or //, e.g. "
                                        r"x\[:int\(len\(x\) \* 0.8\)\]\.$"):
        X[:len(X) * 0.8]
    with pytest.raises(TypeError, match="slice indices must be integers"):
        torch_X[:len(torch_X) * 0.8]
    with pytest.raises(ShapeError, match=r"^x\[8.0\]: 8.0 is a float.*x\[int\(i\)\]"):
        X[8.0]
    with pytest.raises(IndexError):
        torch_X[8.0]
    with pytest.raises(ShapeError, match=r"the indices are float32 values.*idx.long\(\)"):
        X[eg.tensor([0., 1.])]
    np.testing.assert_array_equal(X[:int(len(X) * 0.8)].numpy(), torch_X[:8].numpy())
    np.testing.assert_array_equal(X[:len(X) * 4 // 5].numpy(), torch_X[:8].numpy())


@pytest.mark.parametrize("index", [lambda loss: loss[0], lambda loss: loss.data[0]])
def test_indexing_a_scalar_loss_says_item(index):
    values = rng.normal(size=3).astype(np.float32)
    loss, torch_loss = ((lib.tensor(values) ** 2).mean() for lib in (eg, torch))
    with pytest.raises(ShapeError, match=r"^x\[0\]: a 0-D tensor \(a scalar, such as a loss\) "
                                         r"has no index; use \.item\(\) for its number"):
        index(loss)
    with pytest.raises(IndexError, match=r"invalid index of a 0-dim tensor. Use `tensor.item"):
        index(torch_loss)
    assert loss.item() == pytest.approx(torch_loss.item(), rel=1e-6)


# ------------------------------------------------------------------ max pooling's options
def test_max_pool_options_beyond_the_defaults_are_refused_by_name():
    with pytest.raises(NotImplementedError, match=r"^MaxPool2d: ceil_mode=True is not "
                                                  r"supported.*Pad the images"):
        nn.MaxPool2d(2, ceil_mode=True)
    with pytest.raises(NotImplementedError, match=r"^MaxPool2d: dilation=2 is not supported"
                                                  r".*Leave dilation out"):
        nn.MaxPool2d(2, dilation=2)
    with pytest.raises(NotImplementedError, match=r"^MaxPool2d: return_indices=True is not "
                                                  r"supported"):
        nn.MaxPool2d(2, return_indices=True)
    with pytest.raises(NotImplementedError, match=r"^max_pool2d: ceil_mode=True"):
        F.max_pool2d(eg.ones((1, 1, 5, 5)), 2, ceil_mode=True)
    images, torch_images = both(rng.normal(size=(2, 3, 7, 6)))
    ours = nn.MaxPool2d(3, 2, 1, dilation=1, return_indices=False, ceil_mode=False)(images)
    theirs = torch.nn.MaxPool2d(3, 2, 1, dilation=1, return_indices=False,
                                ceil_mode=False)(torch_images)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    np.testing.assert_array_equal(F.max_pool2d(images, 3, 2, 1, 1, False, False).numpy(),
                                  torch.nn.functional.max_pool2d(torch_images, 3, 2, 1, 1,
                                                                 False, False).numpy())


# ------------------------------------------------------------------ PyTorch's constructor, dtypes
def test_the_tensor_class_called_as_torch_tensor_says_make_tensors_with_eg_tensor():
    with pytest.raises(TypeError, match=r"^eg.Tensor\(\[1.0, 2.0\]\): eg.Tensor is the class; "
                                        r"make tensors with eg.tensor\(\[1.0, 2.0\], "
                                        r"dtype=eg.float32\)"):
        eg.Tensor([1., 2.])
    fixed = eg.tensor([1., 2.], dtype=eg.float32)
    assert str(fixed.dtype) == str(torch.Tensor([1., 2.]).dtype).removeprefix("torch.")
    assert eg.tensor([1, 2], dtype=eg.float32).dtype == eg.float32   # (ints too, as torch's)
    made = eg.Tensor(3, 4)
    for read in (lambda: made.shape, lambda: repr(made)):
        with pytest.raises(TypeError, match=r"^eg.Tensor\(3, 4\): eg.Tensor is the class.*"
                                            r"eg.zeros\(3, 4\) for a tensor of that shape"):
            read()
    assert eg.zeros(3, 4).shape == tuple(torch.Tensor(3, 4).shape)
    assert eg.Tensor(np.ones(2)).shape == (2,)      # (an array: as a data pipeline makes them)


def test_torchs_dtype_names_and_conversions():
    for name in ("long", "int", "double", "float", "half", "bool"):
        assert np.dtype(getattr(eg, name)).name == \
            str(getattr(torch, name)).removeprefix("torch.")
    values = np.array([1.5, -2.7, 0.0], np.float32)
    x, torch_x = both(values)
    for method in ("int", "long", "bool", "double", "float"):
        ours, theirs = getattr(x, method)(), getattr(torch_x, method)()
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch.")
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert eg.zeros(2, dtype=eg.long).dtype == eg.int64
    assert eg.ones(2, dtype=eg.half).dtype == eg.float16
