"""Average pooling: the NHWC op (TF's "same" divides by the real pixels of a window), PyTorch's
``F.avg_pool2d`` on NCHW images (``count_include_pad``), the Keras layer, and their errors;
against torch, central differences and by-hand numpy, in eager, Session and traced modes."""
import numpy as np
import pytest

import edugraph as eg
import edugraph.nn.functional as F
from edugraph import layers
from edugraph.ops.conv import avg_pool, avg_pool2d
from tests.gradcheck import gradcheck

torch = pytest.importorskip("torch")

IMAGES = np.random.default_rng(0).normal(size=(2, 7, 6, 3))            # NHWC


def by_hand(x, kernel, strides, pads):
    """NHWC average pooling in plain numpy: zero-pad, sum each window, divide by the number of
    real (not padding) pixels in it, which is the window sum of a zero-padded image of ones."""
    (kh, kw), (sh, sw) = kernel, strides
    pad = ((0, 0), *pads, (0, 0))
    padded, ones = np.pad(x, pad), np.pad(np.ones_like(x), pad)
    oh, ow = (padded.shape[1] - kh) // sh + 1, (padded.shape[2] - kw) // sw + 1
    out = np.empty((x.shape[0], oh, ow, x.shape[3]))
    for i in range(oh):
        for j in range(ow):
            rows, cols = slice(i * sh, i * sh + kh), slice(j * sw, j * sw + kw)
            out[:, i, j] = padded[:, rows, cols].sum((1, 2)) / ones[:, rows, cols].sum((1, 2))
    return out


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("kernel,strides,pads", [
    ((2, 2), (2, 2), ((0, 1), (0, 0))),     # 7 rows, stride 2: the extra pixel at the bottom
    ((3, 3), (1, 1), ((1, 1), (1, 1))),
    ((3, 3), (2, 2), ((1, 1), (0, 1))),
    ((2, 3), (1, 2), ((0, 1), (0, 1))),     # non-square window, different strides
])
def test_same_padding_divides_by_the_real_pixels_as_tensorflow(device, kernel, strides, pads):
    y = avg_pool2d(eg.tensor(IMAGES, device=device), kernel, strides, "same")
    assert y.shape == (2, -(-7 // strides[0]), -(-6 // strides[1]), 3)
    np.testing.assert_allclose(y.numpy(), by_hand(IMAGES, kernel, strides, pads), atol=1e-12)


def test_valid_padding_is_the_mean_of_each_window():
    y = avg_pool2d(IMAGES, 2).numpy()                  # strides default to the window
    expected = IMAGES[:, :6].reshape(2, 3, 2, 3, 2, 3).mean(axis=(2, 4))
    np.testing.assert_allclose(y, expected, atol=1e-12)
    np.testing.assert_allclose(avg_pool(IMAGES, [1, 2, 2, 1], [1, 2, 2, 1], "VALID").numpy(),
                               expected, atol=1e-12)       # TF1's spelling
    assert avg_pool2d(IMAGES.astype(np.float32), 2).dtype == eg.float32


@pytest.mark.parametrize("kernel,stride,padding", [
    (2, None, 0), (3, 1, 1), (3, 2, 1), ((3, 2), (2, 1), (1, 1)), ((2, 4), 1, (0, 2)),
    (4, 3, 2),
])
@pytest.mark.parametrize("count_include_pad", [True, False])
def test_functional_matches_torch(device, kernel, stride, padding, count_include_pad):
    x = IMAGES.transpose(0, 3, 1, 2)                                    # NCHW
    ours = eg.tensor(x, device=device, requires_grad=True)
    y = F.avg_pool2d(ours, kernel, stride, padding, count_include_pad=count_include_pad)
    (y * y).sum().backward()
    theirs = torch.tensor(x, requires_grad=True)
    expected = torch.nn.functional.avg_pool2d(theirs, kernel, stride, padding,
                                              count_include_pad=count_include_pad)
    (expected * expected).sum().backward()
    np.testing.assert_allclose(y.numpy(), expected.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), atol=1e-12)


def test_count_include_pad_divides_the_border_windows_by_the_whole_window():
    ones = np.ones((1, 1, 3, 3))
    with_pad = F.avg_pool2d(ones, 3, 1, 1).numpy()[0, 0]
    np.testing.assert_allclose(with_pad, [[4 / 9, 6 / 9, 4 / 9], [6 / 9, 1, 6 / 9],
                                          [4 / 9, 6 / 9, 4 / 9]])
    np.testing.assert_allclose(F.avg_pool2d(ones, 3, 1, 1, count_include_pad=False).numpy(), 1)


# ----------------------------------------------------------------------------- gradients
def test_backward_distributes_each_windows_gradient_evenly():
    x = eg.tensor(IMAGES[:1, :4, :4, :1], requires_grad=True)
    avg_pool2d(x, 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 0.25)
    # "same", 3x3 windows, stride 1, on a 3x3 image: each window averages its real pixels,
    # 4 in a corner window, 6 at an edge, 9 in the middle. A corner pixel lies in its corner's
    # window, two edge windows and the middle one; the middle pixel lies in all nine.
    x = eg.tensor(np.zeros((1, 3, 3, 1)), requires_grad=True)
    avg_pool2d(x, 3, 1, "same").sum().backward()
    corner, middle = 1 / 4 + 2 / 6 + 1 / 9, 4 / 4 + 4 / 6 + 1 / 9
    np.testing.assert_allclose(x.grad.numpy()[0, ::2, ::2, 0], corner)
    np.testing.assert_allclose(x.grad.numpy()[0, 1, 1, 0], middle)


def test_the_inspector_shows_a_gate_that_distributes():
    x = eg.tensor(IMAGES[:1, :2, :2, :1], requires_grad=True)         # one 2x2 window
    view = eg.graph_view(avg_pool2d(x, 2) * 4, names={"x": x})
    assert view.node("avg_pool").gate == "distributes"
    np.testing.assert_allclose(view.node("x").grad, 1.0)              # 4 / 4 to each pixel


@pytest.mark.parametrize("kernel,strides,padding,count_include_pad", [
    (2, 2, "valid", False), (3, 2, "same", False), ((2, 3), (1, 2), "same", False),
    (3, 1, 1, True), (3, 2, 1, False), ((3, 2), 1, (1, 0), True),
])
def test_gradcheck(device, kernel, strides, padding, count_include_pad):
    x = np.random.default_rng(1).normal(size=(2, 5, 4, 2))
    gradcheck(lambda t: avg_pool2d(t, kernel, strides, padding,
                                   count_include_pad=count_include_pad) ** 2,
              x, device=device, name=f"avg_pool2d {kernel} {strides} {padding}")


def test_second_order_gradients_pass_back_through_avg_pool_grad():
    """The gradient of avg_pool is avg_pool_grad, whose gradient is avg_pool again."""
    def gradient_of_squares(t):
        (g,) = eg.grad(eg.reduce_sum(avg_pool2d(t, 3, 2, "same") ** 3), t, create_graph=True)
        return g

    x = np.random.default_rng(2).normal(size=(1, 5, 5, 2))
    gradcheck(gradient_of_squares, x, name="d avg_pool")


# ----------------------------------------------------------------------------- modes
def pooled(x):
    """TF's "same" pooling and PyTorch's, padding counted, of the same images; a loss of both."""
    tf_style = avg_pool2d(x, 3, 2, "same")
    torch_style = F.avg_pool2d(eg.transpose(x, (0, 3, 1, 2)), 2, 1, 1)
    return eg.reduce_sum(tf_style ** 2) + eg.reduce_sum(torch_style ** 2), tf_style, torch_style


def test_eager_session_and_traced_function_agree():
    x = eg.tensor(IMAGES, requires_grad=True)
    loss, *pools = pooled(x)
    loss.backward()
    eager = [t.numpy() for t in (loss, *pools, x.grad)]

    with eg.Graph().as_default():
        images = eg.placeholder(eg.float64, (None, 7, 6, 3), name="images")
        loss, *pools = pooled(images)
        (grad,) = eg.gradients(loss, [images])
        assert [p.shape.as_list() for p in pools] == [[None, 4, 3, 3], [None, 3, 8, 7]]
        with eg.Session() as sess:
            in_session = sess.run([loss, *pools, grad], {images: IMAGES})

    @eg.function
    def step(x):
        with eg.GradientTape() as tape:
            tape.watch(x)
            loss, *pools = pooled(x)
        return (loss, *pools, tape.gradient(loss, x))

    traced = [t.numpy() for t in step(eg.tensor(IMAGES))]
    for mode, found in (("Session.run", in_session), ("eg.function", traced)):
        for ours, expected, what in zip(found, eager, ("loss", "TF's", "PyTorch's", "grad")):
            np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12,
                                       err_msg=f"{mode}: {what}")


def test_graph_nodes_take_their_name_and_tf_types():
    with eg.Graph().as_default() as graph:
        images = eg.placeholder(eg.float64, (None, 7, 6, 3))
        y = avg_pool2d(images, 2, name="pool")
        eg.gradients(eg.reduce_sum(y), [images])
    assert y.name == "pool:0" and y.op.type == "AvgPool" and y.op.eg_op.gate == "distributes"
    backward = [op.type for op in graph.get_operations() if op.name.startswith("gradients/")]
    assert backward.index("AvgPoolGrad") < backward.index("Col2Im")    # the adjoints, in turn


# ----------------------------------------------------------------------------- layers
def test_keras_layer_in_a_sequential_model_shape_and_summary(capsys):
    model = eg.Sequential([layers.Conv2D(4, 3, padding="same", input_shape=(8, 8, 1)),
                           layers.AveragePooling2D(),
                           layers.AveragePooling2D(3, strides=1, padding="same"),
                           layers.Flatten(), layers.Dense(2)])
    assert model.output_shape == (None, 2)
    assert [m.output_shape for m in model.layers[1:3]] == [(None, 4, 4, 4)] * 2
    model.summary()
    out = capsys.readouterr().out
    assert "(AveragePooling2D)" in out and "(None, 4, 4, 4)" in out
    pool = model.layers[2]
    x = np.random.default_rng(3).normal(size=(1, 4, 4, 4))
    np.testing.assert_allclose(pool(eg.tensor(x)).numpy(), avg_pool2d(x, 3, 1, "same").numpy())
    assert repr(layers.AveragePooling2D(3)) == "AveragePooling2D(pool_size=(3, 3), " \
                                               "strides=(3, 3))"
    assert eg.keras.layers.AveragePooling2D is eg.keras.layers.AvgPool2D is \
        layers.AveragePooling2D
    corners = layers.AveragePooling2D(2, padding=1, count_include_pad=True)   # PyTorch's
    assert corners(eg.ones((1, 2, 2, 1))).numpy().ravel().tolist() == [0.25] * 4


def test_keras_layer_learns_in_a_small_fit():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(64, 6, 6, 1)).astype(np.float32)
    y = (x[:, :3].mean(axis=(1, 2, 3)) > x[:, 3:].mean(axis=(1, 2, 3))).astype(np.int64)
    eg.random.set_seed(1)
    model = eg.Sequential([layers.AveragePooling2D(3, input_shape=(6, 6, 1)),
                           layers.Flatten(), layers.Dense(2)])
    model.compile(eg.keras.optimizers.SGD(0.5),
                  eg.losses.SparseCategoricalCrossentropy(from_logits=True), ["accuracy"])
    history = model.fit(x, y, epochs=30, batch_size=16, verbose=0).history
    assert history["loss"][-1] < 0.5 * history["loss"][0]
    assert history["accuracy"][-1] > 0.9


def test_tf1_average_pooling2d_in_a_session():
    with eg.Graph().as_default():
        images = eg.placeholder(eg.float64, (None, 7, 6, 3))
        y = eg.layers.average_pooling2d(images, 2, 2, padding="same")
        assert y.shape.as_list() == [None, 4, 3, 3]
        with eg.Session() as sess:
            value = sess.run(y, {images: IMAGES})
    np.testing.assert_allclose(value, by_hand(IMAGES, (2, 2), (2, 2), ((0, 1), (0, 0))))


def test_tf_nn_names():
    assert (eg.nn.avg_pool2d, eg.nn.avg_pool) == (avg_pool2d, avg_pool)


# ----------------------------------------------------------------------------- errors
def test_a_window_larger_than_the_padded_image_is_named():
    images = np.ones((1, 4, 5, 1))
    with pytest.raises(eg.errors.ShapeError, match=r"^avg_pool2d: a 7x7 window does not fit "
                       r"an input of height and width 4x5 \(shape \(1, 4, 5, 1\)\) with "
                       r"padding '1'"):
        avg_pool2d(images, 7, padding=1)
    with pytest.raises(eg.errors.ShapeError, match=r"^avg_pool2d: a 6x6 window"):
        F.avg_pool2d(images.transpose(0, 3, 1, 2), 6)
    assert avg_pool2d(images, 7, padding="same").shape == (1, 1, 1, 1)


def test_padding_more_than_half_the_window_is_refused_as_pytorch_does():
    with pytest.raises(eg.errors.ShapeError, match=r"^avg_pool2d: padding 2 is more than half "
                       r"the 3x3 window \(on images of height and width 7x6\)"):
        F.avg_pool2d(IMAGES.transpose(0, 3, 1, 2), 3, 1, 2)
    with pytest.raises(RuntimeError, match="at most half"):               # torch agrees
        torch.nn.functional.avg_pool2d(torch.ones(2, 3, 7, 6), 3, 1, 2)
    with pytest.raises(eg.errors.ShapeError, match=r"padding \(0, 2\) is more than half the "
                       r"2x3 window"):
        avg_pool2d(IMAGES, (2, 3), padding=(0, 2))


def test_wrong_rank_and_ceil_mode_are_named():
    with pytest.raises(eg.errors.ShapeError, match=r"^avg_pool2d expects a 4-D NHWC input .* "
                       r"got shape \(7, 6, 3\)"):
        avg_pool2d(IMAGES[0], 2)
    with pytest.raises(eg.errors.ShapeError, match=r"^avg_pool2d expects 4-D images laid out "
                       r"as PyTorch's, \(batch, channels, height, width\); got shape \(7, 6\)"):
        F.avg_pool2d(IMAGES[0, :, :, 0], 2)
    with pytest.raises(eg.errors.ShapeError, match=r"AveragePooling2D .* expects a 4-D NHWC"):
        layers.AveragePooling2D()(eg.ones((4, 8, 8)))
    with pytest.raises(NotImplementedError, match=r"^avg_pool2d: ceil_mode=True is not "
                       "supported"):
        F.avg_pool2d(IMAGES.transpose(0, 3, 1, 2), 2, ceil_mode=True)
