"""The PyTorch edition of d2l.ai (Dive into Deep Learning), run as written with
``import edugraph as torch``: here ``torch.`` is spelled ``eg.``. One test per chapter: "Data
manipulation", "Linear algebra" and "Automatic differentiation" (2.1, 2.3, 2.5), "Linear
regression from scratch" and "Softmax regression from scratch" (the self-contained versions,
without the d2l package's classes), each asserting the values the book shows."""
import random

import numpy as np
import pytest

import edugraph as eg


def test_data_manipulation():
    x = eg.arange(12, dtype=eg.float32)
    assert x.tolist() == list(range(12)) and x.numel() == 12 and x.shape == (12,)
    X = x.reshape(3, 4)
    assert X.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
    assert x.reshape(-1, 4).shape == x.reshape(3, -1).shape == (3, 4)
    assert eg.zeros((2, 3, 4)).shape == eg.ones((2, 3, 4)).shape == (2, 3, 4)
    assert eg.randn(3, 4).shape == (3, 4)
    assert eg.tensor([[2, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]]).dtype == eg.int64

    # Indexing and slicing
    assert X[-1].tolist() == [8, 9, 10, 11] and X[1:3].tolist() == [[4, 5, 6, 7], [8, 9, 10, 11]]
    X[1, 2] = 17
    assert X.tolist() == [[0, 1, 2, 3], [4, 5, 17, 7], [8, 9, 10, 11]]
    X[:2, :] = 12
    assert X.tolist() == [[12, 12, 12, 12], [12, 12, 12, 12], [8, 9, 10, 11]]

    # Operations. X is a view of x, so the book's exp(x) shows e^12 eight times
    np.testing.assert_allclose(eg.exp(x).numpy()[[0, 7, 8]], np.exp([12, 12, 8]), rtol=1e-6)
    x = eg.tensor([1.0, 2, 4, 8])
    y = eg.tensor([2, 2, 2, 2])
    got = x + y, x - y, x * y, x / y, x ** y  # The ** operator is exponentiation
    assert [t.tolist() for t in got] == [[3, 4, 6, 10], [-1, 0, 2, 6], [2, 4, 8, 16],
                                         [0.5, 1, 2, 4], [1, 4, 16, 64]]
    assert all(t.dtype == eg.float32 for t in got)
    X = eg.arange(12, dtype=eg.float32).reshape((3, 4))
    Y = eg.tensor([[2.0, 1, 4, 3], [1, 2, 3, 4], [4, 3, 2, 1]])
    rows, columns = eg.cat((X, Y), dim=0), eg.cat((X, Y), dim=1)
    assert rows.shape == (6, 4) and columns.shape == (3, 8)
    assert (X == Y).tolist() == [[False, True, False, True], [False] * 4, [False] * 4]
    assert X.sum().item() == 66

    # Broadcasting
    a = eg.arange(3).reshape((3, 1))
    b = eg.arange(2).reshape((1, 2))
    assert (a + b).tolist() == [[0, 1], [1, 2], [2, 3]]

    # Saving memory
    before = id(Y)
    Y = Y + X
    assert id(Y) != before
    Z = eg.zeros_like(Y)
    before = id(Z)
    Z[:] = X + Y
    assert id(Z) == before
    assert Z.tolist() == [[2, 3, 8, 9], [9, 12, 15, 18], [20, 21, 22, 23]]  # 2X + Y
    before = id(X)
    X += Y
    assert id(X) == before and X.tolist() == Z.tolist()

    # Conversion to other Python objects
    A = X.numpy()
    B = eg.from_numpy(A)
    assert type(A) is np.ndarray and type(B) is eg.Tensor
    a = eg.tensor([3.5])
    assert (a.item(), float(a), int(a)) == (3.5, 3.5, 3)


def test_linear_algebra():
    x = eg.tensor(3.0)
    y = eg.tensor(2.0)
    assert [t.item() for t in (x + y, x * y, x / y, x ** y)] == [5, 6, 1.5, 9]
    x = eg.arange(3)
    assert x.tolist() == [0, 1, 2] and x.dtype == eg.int64
    assert x[2].item() == 2 and len(x) == 3 and x.shape == (3,)
    A = eg.arange(6).reshape(3, 2)
    assert A.T.tolist() == [[0, 2, 4], [1, 3, 5]]
    A = eg.tensor([[1, 2, 3], [2, 0, 4], [3, 4, 5]])
    assert (A == A.T).all()
    assert eg.arange(24).reshape(2, 3, 4).shape == (2, 3, 4)

    A = eg.arange(6, dtype=eg.float32).reshape(2, 3)
    B = A.clone()  # Assign a copy of A to B by allocating new memory
    assert (A + B).tolist() == [[0, 2, 4], [6, 8, 10]]
    assert (A * B).tolist() == [[0, 1, 4], [9, 16, 25]]
    a = 2
    X = eg.arange(24).reshape(2, 3, 4)
    assert (a + X)[0, 0].tolist() == [2, 3, 4, 5] and (a * X).shape == (2, 3, 4)

    # Reduction
    x = eg.arange(3, dtype=eg.float32)
    assert x.sum().item() == 3
    assert A.shape == (2, 3) and A.sum().item() == 15
    assert A.sum(axis=0).shape == (3,) and A.sum(axis=1).shape == (2,)
    assert A.sum(axis=[0, 1]) == A.sum()  # Same as A.sum()
    assert A.mean().item() == (A.sum() / A.numel()).item() == 2.5
    assert A.mean(axis=0).tolist() == (A.sum(axis=0) / A.shape[0]).tolist() == [1.5, 2.5, 3.5]
    sum_A = A.sum(axis=1, keepdims=True)
    assert sum_A.tolist() == [[3], [12]] and sum_A.shape == (2, 1)
    np.testing.assert_allclose((A / sum_A).numpy(), [[0, 1 / 3, 2 / 3], [0.25, 1 / 3, 5 / 12]],
                               rtol=1e-6)
    assert A.cumsum(axis=0).tolist() == [[0, 1, 2], [3, 5, 7]]

    # Dot products, matrix-vector and matrix-matrix products
    y = eg.ones(3, dtype=eg.float32)
    assert eg.dot(x, y).item() == 3 and eg.sum(x * y).item() == 3
    assert x.shape == (3,) and eg.mv(A, x).tolist() == (A @ x).tolist() == [5, 14]
    B = eg.ones(3, 4)
    assert eg.mm(A, B).tolist() == (A @ B).tolist() == [[3] * 4, [12] * 4]

    # Norms
    u = eg.tensor([3.0, -4.0])
    assert eg.norm(u).item() == 5
    assert eg.abs(u).sum().item() == 7
    assert eg.norm(eg.ones((4, 9))).item() == 6


def test_automatic_differentiation():
    x = eg.arange(4.0)
    # Can also create x = eg.arange(4.0, requires_grad=True)
    x.requires_grad_(True)
    assert x.grad is None  # The gradient is None by default
    y = 2 * eg.dot(x, x)
    assert y.item() == 28
    y.backward()
    assert x.grad.tolist() == [0, 4, 8, 12]
    assert (x.grad == 4 * x).all()
    x.grad.zero_()  # Reset the gradient
    y = x.sum()
    y.backward()
    assert x.grad.tolist() == [1, 1, 1, 1]

    # Backward for non-scalar variables
    x.grad.zero_()
    y = x * x
    y.backward(gradient=eg.ones(len(y)))  # Faster: y.sum().backward()
    assert x.grad.tolist() == [0, 2, 4, 6]

    # Detaching computation
    x.grad.zero_()
    y = x * x
    u = y.detach()
    z = u * x
    z.sum().backward()
    assert (x.grad == u).all()
    x.grad.zero_()
    y.sum().backward()
    assert (x.grad == 2 * x).all()

    # Gradients and Python control flow
    def f(a):
        b = a * 2
        while b.norm() < 1000:
            b = b * 2
        if b.sum() > 0:
            c = b
        else:
            c = 100 * b
        return c

    a = eg.randn(size=(), requires_grad=True)
    d = f(a)
    d.backward()
    assert a.grad == d / a


def synthetic_data(w, b, num_examples):
    """Generate y = Xw + b + noise."""
    X = eg.normal(0, 1, (num_examples, len(w)))
    y = eg.matmul(X, w) + b
    y += eg.normal(0, 0.01, y.shape)
    return X, y.reshape((-1, 1))


def data_iter(batch_size, features, labels):
    num_examples = len(features)
    indices = list(range(num_examples))
    # The examples are read at random, in no particular order
    random.shuffle(indices)
    for i in range(0, num_examples, batch_size):
        batch_indices = eg.tensor(
            indices[i: min(i + batch_size, num_examples)])
        yield features[batch_indices], labels[batch_indices]


def linreg(X, w, b):
    """The linear regression model."""
    return eg.matmul(X, w) + b


def squared_loss(y_hat, y):
    """Squared loss."""
    return (y_hat - y.reshape(y_hat.shape)) ** 2 / 2


def sgd(params, lr, batch_size):
    """Minibatch stochastic gradient descent."""
    with eg.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


def test_linear_regression_from_scratch():
    random.seed(0)
    true_w = eg.tensor([2, -3.4])
    true_b = 4.2
    features, labels = synthetic_data(true_w, true_b, 1000)
    assert features.shape == (1000, 2) and labels.shape == (1000, 1)

    batch_size = 10
    X, y = next(data_iter(batch_size, features, labels))
    assert X.shape == (10, 2) and y.shape == (10, 1)

    w = eg.normal(0, 0.01, size=(2, 1), requires_grad=True)
    b = eg.zeros(1, requires_grad=True)

    lr = 0.03
    num_epochs = 3
    net = linreg
    loss = squared_loss

    for epoch in range(num_epochs):
        for X, y in data_iter(batch_size, features, labels):
            l = loss(net(X, w, b), y)  # Minibatch loss in `X` and `y`  # noqa: E741
            # Compute gradient on `l` with respect to [`w`, `b`]
            l.sum().backward()
            sgd([w, b], lr, batch_size)  # Update parameters using their gradient
        with eg.no_grad():
            train_l = loss(net(features, w, b), labels)
    # the book: "epoch 3, loss 0.000051"; errors in estimating w and b below 1e-3
    assert float(train_l.mean()) < 1e-4
    assert (abs(true_w - w.reshape(true_w.shape)) < 2e-3).all()
    assert (abs(true_b - b) < 2e-3).all()


class Accumulator:
    """For accumulating sums over `n` variables."""
    def __init__(self, n):
        self.data = [0.0] * n

    def add(self, *args):
        self.data = [a + float(b) for a, b in zip(self.data, args)]

    def reset(self):
        self.data = [0.0] * len(self.data)

    def __getitem__(self, idx):
        return self.data[idx]


def accuracy(y_hat, y):
    """Compute the number of correct predictions."""
    if len(y_hat.shape) > 1 and y_hat.shape[1] > 1:
        y_hat = y_hat.argmax(axis=1)
    cmp = y_hat.type(y.dtype) == y
    return float(cmp.type(y.dtype).sum())


def evaluate_accuracy(net, data_iter):
    """Compute the accuracy for a model on a dataset."""
    if isinstance(net, eg.nn.Module):
        net.eval()  # Set the model to evaluation mode
    metric = Accumulator(2)  # No. of correct predictions, no. of predictions
    with eg.no_grad():
        for X, y in data_iter:
            metric.add(accuracy(net(X), y), y.numel())
    return metric[0] / metric[1]


def train_epoch_ch3(net, train_iter, loss, updater):
    """The training loop defined in Chapter 3."""
    # Set the model to training mode
    if isinstance(net, eg.nn.Module):
        net.train()
    # Sum of training loss, sum of training accuracy, no. of examples
    metric = Accumulator(3)
    for X, y in train_iter:
        # Compute gradients and update parameters
        y_hat = net(X)
        l = loss(y_hat, y)  # noqa: E741
        if isinstance(updater, eg.optim.Optimizer):
            # Using PyTorch in-built optimizer & loss criterion
            updater.zero_grad()
            l.mean().backward()
            updater.step()
        else:
            # Using custom built optimizer & loss criterion
            l.sum().backward()
            updater(X.shape[0])
        metric.add(float(l.sum()), accuracy(y_hat, y), y.numel())
    # Return training loss and training accuracy
    return metric[0] / metric[2], metric[1] / metric[2]


def train_ch3(net, train_iter, test_iter, loss, num_epochs, updater):
    """Train a model (the book's, without its animated plot)."""
    for epoch in range(num_epochs):
        train_metrics = train_epoch_ch3(net, train_iter, loss, updater)
        test_acc = evaluate_accuracy(net, test_iter)
    train_loss, train_acc = train_metrics
    assert train_loss < 0.5, train_loss
    assert train_acc <= 1 and train_acc > 0.7, train_acc
    assert test_acc <= 1 and test_acc > 0.7, test_acc
    return train_loss, train_acc, test_acc


def test_softmax_regression_from_scratch():
    """With the 8×8 digits shipped with scikit-learn in place of Fashion-MNIST (no download):
    64 inputs instead of 784, the same 10 classes; 1437 training images instead of 60 000, so
    batches of 16 instead of 256 give the ten epochs a similar number of steps."""
    pytest.importorskip("sklearn")
    (x_train, y_train), (x_test, y_test) = eg.datasets.load_digits()
    batch_size = 16
    train_iter = eg.utils.data.DataLoader(eg.utils.data.TensorDataset(
        eg.tensor(x_train), eg.tensor(y_train)), batch_size, shuffle=True)
    test_iter = eg.utils.data.DataLoader(eg.utils.data.TensorDataset(
        eg.tensor(x_test), eg.tensor(y_test)), batch_size, shuffle=False)

    num_inputs = 64
    num_outputs = 10
    W = eg.normal(0, 0.01, size=(num_inputs, num_outputs), requires_grad=True)
    b = eg.zeros(num_outputs, requires_grad=True)

    X = eg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert X.sum(0, keepdim=True).tolist() == [[5, 7, 9]]
    assert X.sum(1, keepdim=True).tolist() == [[6], [15]]

    def softmax(X):
        X_exp = eg.exp(X)
        partition = X_exp.sum(1, keepdim=True)
        return X_exp / partition  # The broadcasting mechanism is applied here

    X = eg.normal(0, 1, (2, 5))
    X_prob = softmax(X)
    assert (X_prob > 0).all()
    np.testing.assert_allclose(X_prob.sum(1).numpy(), [1, 1], rtol=1e-6)

    def net(X):
        return softmax(eg.matmul(X.reshape((-1, W.shape[0])), W) + b)

    y = eg.tensor([0, 2])
    y_hat = eg.tensor([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    np.testing.assert_allclose(y_hat[[0, 1], y].numpy(), [0.1, 0.5])

    def cross_entropy(y_hat, y):
        return - eg.log(y_hat[range(len(y_hat)), y])

    np.testing.assert_allclose(cross_entropy(y_hat, y).numpy(), [2.3026, 0.6931], atol=1e-4)
    assert accuracy(y_hat, y) / len(y) == 0.5
    assert 0 <= evaluate_accuracy(net, test_iter) <= 0.3      # about 0.1 before training

    lr = 0.1

    def updater(batch_size):
        return sgd([W, b], lr, batch_size)

    num_epochs = 10
    train_ch3(net, train_iter, test_iter, cross_entropy, num_epochs, updater)
