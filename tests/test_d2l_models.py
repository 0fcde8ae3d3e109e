"""The PyTorch edition of d2l.ai, chapters "Builders' guide" (6) and "Convolutional neural
networks" (7, 8), run as written with ``import edugraph as torch``: ``torch.`` is spelled
``eg.`` and ``nn`` is ``eg.nn``. Lazy modules, parameter access and tying, ``net.apply``
with ``nn.init``, custom layers, saving, the convolution written out by hand (with item
assignment, also while a kernel is learnt), LeNet, batch norm from scratch and PyTorch's, and
a ResNet block (``Y += X``). Each test asserts the values and shapes the book shows, and where
a number can be compared, torch's."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import nn
from edugraph.nn import functional as F

torch = pytest.importorskip("torch")


# ----------------------------------------------------------------------------- 6 builders' guide
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.LazyLinear(256)
        self.output = nn.LazyLinear(10)

    def forward(self, X):
        return self.output(F.relu(self.hidden(X)))


class MySequential(nn.Module):
    def __init__(self, *args):
        super().__init__()
        for idx, module in enumerate(args):
            self.add_module(str(idx), module)

    def forward(self, X):
        for module in self.children():
            X = module(X)
        return X


class FixedHiddenMLP(nn.Module):
    def __init__(self):
        super().__init__()
        # Random weight parameters that will not compute gradients and
        # therefore keep constant during training
        self.rand_weight = eg.rand((20, 20))
        self.linear = nn.LazyLinear(20)

    def forward(self, X):
        X = self.linear(X)
        X = F.relu(X @ self.rand_weight + 1)
        # Reuse the fully connected layer. This is equivalent to sharing
        # parameters with two fully connected layers
        X = self.linear(X)
        # Control flow
        while X.abs().sum() > 1:
            X /= 2
        return X.sum()


class NestMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.LazyLinear(64), nn.ReLU(),
                                 nn.LazyLinear(32), nn.ReLU())
        self.linear = nn.LazyLinear(16)

    def forward(self, X):
        return self.linear(self.net(X))


def test_layers_and_modules():
    X = eg.rand(2, 20)
    net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
    assert net(X).shape == (2, 10)
    assert MLP()(X).shape == (2, 10)
    net = MySequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
    assert net(X).shape == (2, 10) and [n for n, _ in net.named_children()] == ["0", "1", "2"]
    net = FixedHiddenMLP()
    out = net(X)
    assert out.shape == () and abs(out.item()) <= 1
    out.backward()                          # through the in-place halvings
    assert net.linear.weight.grad.shape == (20, 20)
    chimera = nn.Sequential(NestMLP(), nn.ReLU(), nn.LazyLinear(20), FixedHiddenMLP())
    assert chimera(X).shape == ()           # (NestMLP's 16 outputs size the next layer)
    assert chimera[2].weight.shape == (20, 16)


def test_parameter_management_and_tying():
    net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
    X = eg.rand(size=(2, 4))
    assert net(X).shape == (2, 1)
    assert list(net[2].state_dict()) == ["weight", "bias"]
    assert type(net[2].bias) is nn.Parameter and net[2].bias.data.shape == (1,)
    assert net[2].weight.grad is None
    assert [(name, param.shape) for name, param in net.named_parameters()] == [
        ("0.weight", (8, 4)), ("0.bias", (8,)), ("2.weight", (1, 8)), ("2.bias", (1,))]
    # We need to give the shared layer a name so that we can refer to its parameters
    shared = nn.LazyLinear(8)
    net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), shared, nn.ReLU(), shared, nn.ReLU(),
                        nn.LazyLinear(1))
    net(X)
    assert bool((net[2].weight.data[0] == net[4].weight.data[0]).all())
    net[2].weight.data[0, 0] = 100
    # Make sure that they are actually the same object rather than just having the same value
    assert bool((net[2].weight.data[0] == net[4].weight.data[0]).all())
    assert net[4].weight[0, 0].item() == 100
    net(X).sum().backward()                 # the tied weight's gradient sums both uses
    assert net[2].weight.grad is net[4].weight.grad


def test_parameter_initialization():
    net = nn.Sequential(nn.LazyLinear(8), nn.ReLU(), nn.LazyLinear(1))
    net(eg.rand(size=(2, 4)))

    def init_normal(module):
        if type(module) == nn.Linear:
            nn.init.normal_(module.weight, mean=0, std=0.01)
            nn.init.zeros_(module.bias)
    net.apply(init_normal)
    assert np.abs(net[0].weight.data[0].numpy()).max() < 0.05 and net[0].bias.data[0] == 0

    def init_constant(module):
        if type(module) == nn.Linear:
            nn.init.constant_(module.weight, 1)
            nn.init.zeros_(module.bias)
    net.apply(init_constant)
    assert net[0].weight.data[0].tolist() == [1, 1, 1, 1]

    def init_xavier(module):
        if type(module) == nn.Linear:
            nn.init.xavier_uniform_(module.weight)

    def init_42(module):
        if type(module) == nn.Linear:
            nn.init.constant_(module.weight, 42)
    net[0].apply(init_xavier)
    net[2].apply(init_42)
    assert np.abs(net[0].weight.numpy()).max() <= np.sqrt(6 / 12)
    assert net[2].weight.data.tolist() == [[42] * 8]

    def my_init(module):
        if type(module) == nn.Linear:
            nn.init.uniform_(module.weight, -10, 10)
            module.weight.data *= module.weight.data.abs() >= 5
    net.apply(my_init)
    kept = np.abs(net[0].weight.numpy())
    assert ((kept == 0) | (kept >= 5)).all() and (kept == 0).any()
    net[0].weight.data[:] += 1
    net[0].weight.data[0, 0] = 42
    assert net[0].weight.data[0, 0].item() == 42


def test_custom_layers():
    class CenteredLayer(nn.Module):
        def __init__(self):
            super().__init__()

        def forward(self, X):
            return X - X.mean()
    assert CenteredLayer()(eg.tensor([1.0, 2, 3, 4, 5])).tolist() == [-2, -1, 0, 1, 2]
    net = nn.Sequential(nn.LazyLinear(128), CenteredLayer())
    assert abs(net(eg.rand(4, 8)).mean().item()) < 1e-6

    class MyLinear(nn.Module):
        def __init__(self, in_units, units):
            super().__init__()
            self.weight = nn.Parameter(eg.randn(in_units, units))
            self.bias = nn.Parameter(eg.randn(units,))

        def forward(self, X):
            linear = eg.matmul(X, self.weight.data) + self.bias.data
            return F.relu(linear)
    linear = MyLinear(5, 3)
    assert repr(linear.weight).startswith("Parameter containing:\ntensor([[")
    assert linear(eg.rand(2, 5)).shape == (2, 3)
    net = nn.Sequential(MyLinear(64, 8), MyLinear(8, 1))
    assert net(eg.rand(2, 64)).shape == (2, 1)


def test_file_io(tmp_path):
    x = eg.arange(4)
    eg.save(x, tmp_path / "x-file")
    assert eg.load(tmp_path / "x-file").tolist() == [0, 1, 2, 3]
    y = eg.zeros(4)
    eg.save([x, y], tmp_path / "x-files")
    x2, y2 = eg.load(tmp_path / "x-files")
    assert x2.tolist() == [0, 1, 2, 3] and y2.tolist() == [0, 0, 0, 0]
    eg.save({"x": x, "y": y}, tmp_path / "mydict")
    assert sorted(eg.load(tmp_path / "mydict")) == ["x", "y"]
    net = MLP()
    X = eg.randn(size=(2, 20))
    Y = net(X)
    eg.save(net.state_dict(), tmp_path / "mlp.params")
    clone = MLP()                           # lazy: its parameters come from the file
    clone.load_state_dict(eg.load(tmp_path / "mlp.params"))
    clone.eval()
    Y_clone = clone(X)
    assert bool((Y_clone == Y).all())


def test_gpus_fall_back_to_the_cpu():
    def cpu():
        return eg.device("cpu")

    def gpu(i=0):
        return eg.device(f"cuda:{i}")

    def num_gpus():
        return eg.cuda.device_count()

    def try_gpu(i=0):
        if num_gpus() >= i + 1:
            return gpu(i)
        return cpu()
    eg.device("cpu"), eg.device("cuda"), eg.device("cuda:1")    # naming one is fine
    X = eg.ones(2, 3, device=try_gpu())
    net = nn.Sequential(nn.LazyLinear(1))
    net = net.to(device=try_gpu())
    assert net(X).shape == (2, 1) and net[0].weight.data.device.name == str(try_gpu())
    assert str(try_gpu(10)) == "cpu:0"


# ----------------------------------------------------------------------------- 7 CNNs
def corr2d(X, K):
    """Compute 2D cross-correlation."""
    h, w = K.shape
    Y = eg.zeros((X.shape[0] - h + 1, X.shape[1] - w + 1))
    for i in range(Y.shape[0]):
        for j in range(Y.shape[1]):
            Y[i, j] = (X[i:i + h, j:j + w] * K).sum()
    return Y


def test_convolutions_for_images():
    X = eg.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    K = eg.tensor([[0.0, 1.0], [2.0, 3.0]])
    assert corr2d(X, K).tolist() == [[19, 25], [37, 43]]

    class Conv2D(nn.Module):
        def __init__(self, kernel_size):
            super().__init__()
            self.weight = nn.Parameter(eg.rand(kernel_size))
            self.bias = nn.Parameter(eg.zeros(1))

        def forward(self, x):
            return corr2d(x, self.weight) + self.bias
    X = eg.ones((6, 8))
    X[:, 2:6] = 0
    K = eg.tensor([[1.0, -1.0]])
    Y = corr2d(X, K)
    assert Y[:, 1].tolist() == [1] * 6 and Y[:, 5].tolist() == [-1] * 6 and Y.abs().sum() == 12
    assert not corr2d(X.t(), K).abs().sum().item()
    # The hand-written layer learns too: the gradient flows through each Y[i, j] = ...
    layer = Conv2D((1, 2))
    for _ in range(100):
        loss = ((layer(X) - Y) ** 2).sum()
        layer.zero_grad()
        loss.backward()
        with eg.no_grad():
            layer.weight -= 1e-2 * layer.weight.grad
            layer.bias -= 1e-2 * layer.bias.grad
    assert np.abs(layer.weight.numpy() - [[1, -1]]).max() < 0.1
    # Construct a two-dimensional convolutional layer with 1 output channel and a
    # kernel of shape (1, 2). For the sake of simplicity, we ignore the bias here
    conv2d = nn.LazyConv2d(1, kernel_size=(1, 2), bias=False)
    # The two-dimensional convolutional layer uses four-dimensional input and
    # output in the format of (example, channel, height, width), where the batch
    # size (number of examples in the batch) and the number of channels are both 1
    X = X.reshape((1, 1, 6, 8))
    Y = Y.reshape((1, 1, 6, 7))
    lr = 3e-2  # Learning rate
    losses = []
    for i in range(10):
        Y_hat = conv2d(X)
        l = (Y_hat - Y) ** 2  # noqa: E741
        conv2d.zero_grad()
        l.sum().backward()
        # Update the kernel
        conv2d.weight.data[:] -= lr * conv2d.weight.grad
        losses.append(float(l.sum()))
    assert losses[-1] < 0.1 * losses[0]
    assert np.abs(conv2d.weight.data.reshape((1, 2)).numpy() - [[1, -1]]).max() < 0.15


def test_padding_stride_and_channels():
    def comp_conv2d(conv2d, X):
        X = X.reshape((1, 1) + X.shape)
        Y = conv2d(X)
        return Y.reshape(Y.shape[2:])
    X = eg.rand(size=(8, 8))
    assert comp_conv2d(nn.LazyConv2d(1, kernel_size=3, padding=1), X).shape == (8, 8)
    assert comp_conv2d(nn.LazyConv2d(1, kernel_size=(5, 3), padding=(2, 1)), X).shape == (8, 8)
    assert comp_conv2d(nn.LazyConv2d(1, kernel_size=3, padding=1, stride=2), X).shape == (4, 4)
    assert comp_conv2d(nn.LazyConv2d(1, kernel_size=(3, 5), padding=(0, 1), stride=(3, 4)),
                       X).shape == (2, 2)

    def corr2d_multi_in(X, K):
        return sum(corr2d(x, k) for x, k in zip(X, K))
    X = eg.tensor([[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]],
                   [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]])
    K = eg.tensor([[[0.0, 1.0], [2.0, 3.0]], [[1.0, 2.0], [3.0, 4.0]]])
    assert corr2d_multi_in(X, K).tolist() == [[56, 72], [104, 120]]

    def corr2d_multi_in_out(X, K):
        return eg.stack([corr2d_multi_in(X, k) for k in K], 0)
    K = eg.stack((K, K + 1, K + 2), 0)
    assert K.shape == (3, 2, 2, 2)
    assert corr2d_multi_in_out(X, K).tolist() == [[[56, 72], [104, 120]],
                                                  [[76, 100], [148, 172]],
                                                  [[96, 128], [192, 224]]]

    def corr2d_multi_in_out_1x1(X, K):
        c_i, h, w = X.shape
        c_o = K.shape[0]
        X = X.reshape((c_i, h * w))
        K = K.reshape((c_o, c_i))
        Y = eg.matmul(K, X)
        return Y.reshape((c_o, h, w))
    X = eg.normal(0, 1, (3, 3, 3))
    K = eg.normal(0, 1, (2, 3, 1, 1))
    Y1 = corr2d_multi_in_out_1x1(X, K)
    Y2 = corr2d_multi_in_out(X, K)
    assert float(eg.abs(Y1 - Y2).sum()) < 1e-5


def test_pooling():
    def pool2d(X, pool_size, mode='max'):
        p_h, p_w = pool_size
        Y = eg.zeros((X.shape[0] - p_h + 1, X.shape[1] - p_w + 1))
        for i in range(Y.shape[0]):
            for j in range(Y.shape[1]):
                if mode == 'max':
                    Y[i, j] = X[i: i + p_h, j: j + p_w].max()
                elif mode == 'avg':
                    Y[i, j] = X[i: i + p_h, j: j + p_w].mean()
        return Y
    X = eg.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0]])
    assert pool2d(X, (2, 2)).tolist() == [[4, 5], [7, 8]]
    assert pool2d(X, (2, 2), 'avg').tolist() == [[2, 3], [5, 6]]
    X = eg.arange(16, dtype=eg.float32).reshape((1, 1, 4, 4))
    assert nn.MaxPool2d(3)(X).tolist() == [[[[10]]]]
    assert nn.MaxPool2d(3, padding=1, stride=2)(X).tolist() == [[[[5, 7], [13, 15]]]]
    assert nn.MaxPool2d((2, 3), stride=(2, 3), padding=(0, 1))(X).tolist() == \
        [[[[5, 7], [13, 15]]]]
    X = eg.cat((X, X + 1), 1)
    assert nn.MaxPool2d(3, padding=1, stride=2)(X).tolist() == [[[[5, 7], [13, 15]],
                                                                 [[6, 8], [14, 16]]]]


def lenet(lib):
    nn = lib.nn
    return nn.Sequential(
        nn.LazyConv2d(6, kernel_size=5, padding=2), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.LazyConv2d(16, kernel_size=5), nn.Sigmoid(),
        nn.AvgPool2d(kernel_size=2, stride=2),
        nn.Flatten(),
        nn.LazyLinear(120), nn.Sigmoid(),
        nn.LazyLinear(84), nn.Sigmoid(),
        nn.LazyLinear(10))


def test_lenet_shapes_and_training_match_torch():
    """The book's layer-by-layer shapes; then one model in both libraries from the same
    (xavier) weights: three SGD steps give torch's losses."""
    X = eg.randn(1, 1, 28, 28)
    shapes = []
    net = lenet(eg)
    for layer in net:
        X = layer(X)
        shapes.append((layer.__class__.__name__, tuple(X.shape)))
    assert shapes == [("Conv2d", (1, 6, 28, 28)), ("Sigmoid", (1, 6, 28, 28)),
                      ("AvgPool2d", (1, 6, 14, 14)), ("Conv2d", (1, 16, 10, 10)),
                      ("Sigmoid", (1, 16, 10, 10)), ("AvgPool2d", (1, 16, 5, 5)),
                      ("Flatten", (1, 400)), ("Linear", (1, 120)), ("Sigmoid", (1, 120)),
                      ("Linear", (1, 84)), ("Sigmoid", (1, 84)), ("Linear", (1, 10))]

    def init_cnn(module):
        if type(module) == nn.Linear or type(module) == nn.Conv2d:
            nn.init.xavier_uniform_(module.weight)
    net.apply(init_cnn).double()
    theirs = lenet(torch).double()
    theirs(torch.zeros(1, 1, 28, 28, dtype=torch.float64))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in net.state_dict().items()})
    data = np.random.default_rng(0)
    x, y = data.normal(size=(8, 1, 28, 28)), data.integers(0, 10, size=8)
    losses = []
    for lib, model in ((eg, net), (torch, theirs)):
        optimizer = lib.optim.SGD(model.parameters(), lr=0.9)
        history = []
        for _ in range(3):
            loss = lib.nn.CrossEntropyLoss()(model(lib.tensor(x)), lib.tensor(y))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            history.append(loss.item())
        losses.append(history)
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-10)


def batch_norm(X, gamma, beta, moving_mean, moving_var, eps, momentum):
    # Use is_grad_enabled to determine whether we are in training mode
    if not eg.is_grad_enabled():
        # In prediction mode, use mean and variance obtained by moving average
        X_hat = (X - moving_mean) / eg.sqrt(moving_var + eps)
    else:
        assert len(X.shape) in (2, 4)
        if len(X.shape) == 2:
            # When using a fully connected layer, calculate the mean and
            # variance on the feature dimension
            mean = X.mean(dim=0)
            var = ((X - mean) ** 2).mean(dim=0)
        else:
            # When using a two-dimensional convolutional layer, calculate the
            # mean and variance on the channel dimension (axis=1). Here we
            # need to maintain the shape of X, so that the broadcasting
            # operation can be carried out later
            mean = X.mean(dim=(0, 2, 3), keepdim=True)
            var = ((X - mean) ** 2).mean(dim=(0, 2, 3), keepdim=True)
        # In training mode, the current mean and variance are used
        X_hat = (X - mean) / eg.sqrt(var + eps)
        # Update the mean and variance using moving average
        moving_mean = (1.0 - momentum) * moving_mean + momentum * mean
        moving_var = (1.0 - momentum) * moving_var + momentum * var
    Y = gamma * X_hat + beta  # Scale and shift
    return Y, moving_mean.data, moving_var.data


class BatchNorm(nn.Module):
    # num_features: the number of outputs for a fully connected layer or the
    # number of output channels for a convolutional layer. num_dims: 2 for a
    # fully connected layer and 4 for a convolutional layer
    def __init__(self, num_features, num_dims):
        super().__init__()
        if num_dims == 2:
            shape = (1, num_features)
        else:
            shape = (1, num_features, 1, 1)
        # The scale parameter and the shift parameter (model parameters) are
        # initialized to 1 and 0, respectively
        self.gamma = nn.Parameter(eg.ones(shape))
        self.beta = nn.Parameter(eg.zeros(shape))
        # The variables that are not model parameters are initialized to 0 and
        # 1
        self.moving_mean = eg.zeros(shape)
        self.moving_var = eg.ones(shape)

    def forward(self, X):
        # If X is not on the main memory, copy moving_mean and moving_var to
        # the device where X is located
        if self.moving_mean.device != X.device:
            self.moving_mean = self.moving_mean.to(X.device)
            self.moving_var = self.moving_var.to(X.device)
        # Save the updated moving_mean and moving_var
        Y, self.moving_mean, self.moving_var = batch_norm(
            X, self.gamma, self.beta, self.moving_mean,
            self.moving_var, eps=1e-5, momentum=0.1)
        return Y


def test_batch_normalization_from_scratch_and_concise():
    """The scratch layer normalises as PyTorch's BatchNorm2d does in training (its running
    variance differs: the book keeps the biased one), and both LeNets with batch norm run."""
    X = eg.randn(4, 6, 5, 5)
    ours, theirs = BatchNorm(6, num_dims=4), nn.BatchNorm2d(6)
    np.testing.assert_allclose(ours(X).numpy(), theirs(X).numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.moving_mean.reshape(-1).numpy(),
                               theirs.running_mean.numpy(), rtol=1e-5, atol=1e-7)
    for norm in (lambda c, d: BatchNorm(c, num_dims=d),
                 lambda c, d: nn.LazyBatchNorm2d() if d == 4 else nn.LazyBatchNorm1d()):
        net = nn.Sequential(
            nn.LazyConv2d(6, kernel_size=5), norm(6, 4), nn.Sigmoid(),
            nn.AvgPool2d(kernel_size=2, stride=2),
            nn.LazyConv2d(16, kernel_size=5), norm(16, 4), nn.Sigmoid(),
            nn.AvgPool2d(kernel_size=2, stride=2), nn.Flatten(),
            nn.LazyLinear(120), norm(120, 2), nn.Sigmoid(),
            nn.LazyLinear(84), norm(84, 2), nn.Sigmoid(),
            nn.LazyLinear(10))
        out = net(eg.randn(4, 1, 28, 28))
        out.sum().backward()
        assert out.shape == (4, 10) and net[0].weight.grad.shape == (6, 1, 5, 5)


class Residual(nn.Module):
    """The Residual block of ResNet models."""
    def __init__(self, num_channels, use_1x1conv=False, strides=1):
        super().__init__()
        self.conv1 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1,
                                   stride=strides)
        self.conv2 = nn.LazyConv2d(num_channels, kernel_size=3, padding=1)
        if use_1x1conv:
            self.conv3 = nn.LazyConv2d(num_channels, kernel_size=1,
                                       stride=strides)
        else:
            self.conv3 = None
        self.bn1 = nn.LazyBatchNorm2d()
        self.bn2 = nn.LazyBatchNorm2d()

    def forward(self, X):
        Y = F.relu(self.bn1(self.conv1(X)))
        Y = self.bn2(self.conv2(Y))
        if self.conv3:
            X = self.conv3(X)
        Y += X
        return F.relu(Y)


def test_resnet_block_and_head_match_torch():
    """The block's ``Y += X`` is recorded as in PyTorch: with the same weights, outputs and
    input gradients equal torch's (the torch block is the same code)."""
    blk = Residual(3)
    X = eg.randn(4, 3, 6, 6)
    assert blk(X).shape == (4, 3, 6, 6)
    blk = Residual(6, use_1x1conv=True, strides=2)
    assert blk(X).shape == (4, 6, 3, 3)
    head = nn.Sequential(blk, nn.AdaptiveAvgPool2d((1, 1)), nn.Flatten(), nn.LazyLinear(10))
    head(X)
    head.double()
    twin = nn_block_in_torch()
    twin.load_state_dict({k: torch.tensor(v.numpy()) for k, v in head.state_dict().items()})
    x = np.random.default_rng(1).normal(size=(4, 3, 6, 6))
    ex, tx = eg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ey, ty = head(ex), twin(tx)
    (ey ** 2).sum().backward()
    (ty ** 2).sum().backward()
    np.testing.assert_allclose(ey.numpy(), ty.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-9, atol=1e-12)


def nn_block_in_torch():
    tnn, TF = torch.nn, torch.nn.functional

    class TorchResidual(tnn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = tnn.Conv2d(3, 6, kernel_size=3, padding=1, stride=2)
            self.conv2 = tnn.Conv2d(6, 6, kernel_size=3, padding=1)
            self.conv3 = tnn.Conv2d(3, 6, kernel_size=1, stride=2)
            self.bn1, self.bn2 = tnn.BatchNorm2d(6), tnn.BatchNorm2d(6)

        def forward(self, X):
            Y = TF.relu(self.bn1(self.conv1(X)))
            Y = self.bn2(self.conv2(Y))
            Y += self.conv3(X)
            return TF.relu(Y)
    return tnn.Sequential(TorchResidual(), tnn.AdaptiveAvgPool2d((1, 1)), tnn.Flatten(),
                          tnn.Linear(6, 10)).double()
