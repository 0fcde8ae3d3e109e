"""Activation functions and dropout: the non-linearities between layers."""
from .base import Op, apply
from .math import cast, exp, multiply, to_float, where
from .random import RandomOp
from .reduce import axis_failure, reduce_sum
from ..context import state
from ..tensor import Tensor


class Relu(Op):
    """max(x, 0). Backward routes the gradient through where x > 0 and blocks it elsewhere."""

    name, gate = "relu", "routes"

    def forward(self, xp, x):
        return xp.maximum(x, 0)

    def backward(self, grad, out, x):
        return (relu_grad(grad, out),)


class ReluGrad(Op):
    """Relu's backward as one op, as TF has it: ``grad`` where relu's output is positive, 0
    elsewhere (one node, not compare, cast and multiply: in eager mode one op call, not three)."""

    name, gate = "relu_grad", "routes"

    def forward(self, xp, grad, out):
        return grad * (out > 0)

    def backward(self, grad, out, upstream, relu_out):
        return relu_grad(grad, relu_out), None      # piecewise linear: no second derivative


class LeakyRelu(Op):
    name = "leaky_relu"

    def __init__(self, alpha):
        self.alpha = alpha

    def forward(self, xp, x):
        return xp.where(x > 0, x, x * self.alpha)

    def backward(self, grad, out, x):
        positive = cast(x > 0, grad.dtype)
        return (grad * (positive + (1 - positive) * self.alpha),)


class Sigmoid(Op):
    r"""$\sigma(x) = 1 / (1 + e^{-x})$, computed without overflow for large |x|."""

    name = "sigmoid"

    def forward(self, xp, x):
        e = xp.exp(-xp.abs(x))
        return xp.where(x >= 0, 1 / (1 + e), e / (1 + e))

    def backward(self, grad, out, x):
        return (grad * out * (1 - out),)       # σ' = σ(1 − σ)


class Tanh(Op):
    name = "tanh"

    def forward(self, xp, x):
        return xp.tanh(x)

    def backward(self, grad, out, x):
        return (grad * (1 - out * out),)


class Softplus(Op):
    r"""$\log(1 + e^x)$, a smooth relu, computed as $\max(x, 0) + \log(1 + e^{-|x|})$ so that
    large |x| neither overflows nor loses the small term. Its derivative is $\sigma(x)$."""

    name = "softplus"

    def forward(self, xp, x):
        return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))

    def backward(self, grad, out, x):
        return (grad * sigmoid(x),)


class Elu(Op):
    r"""$x$ for $x > 0$, $\alpha (e^x - 1)$ below: a relu whose negative side saturates
    smoothly at $-\alpha$ (Clevert et al., 2015)."""

    name = "elu"

    def __init__(self, alpha=1.0):
        self.alpha = alpha

    def forward(self, xp, x):
        return xp.where(x > 0, x, self.alpha * xp.expm1(xp.minimum(x, 0)))

    def backward(self, grad, out, x):           # below 0 the slope α eˣ is the output + α
        return (grad * where(x > 0, 1.0, out + self.alpha),)


class AlongAxis(Op):
    """An op that normalises along one axis (the softmax family)."""

    def __init__(self, axis=-1):
        self.axis = axis

    def explain_failure(self, shapes):
        return axis_failure(self.name, self.axis, shapes[0])


class Softmax(AlongAxis):
    r"""$e^{x_i} / \sum_j e^{x_j}$ along ``axis``, shifted by the max so nothing overflows."""

    name = "softmax"

    def forward(self, xp, x):
        if not x.size:                  # (nothing to normalise, and the max of nothing fails)
            return x.copy()
        e = xp.exp(x - x.max(axis=self.axis, keepdims=True))
        return e / e.sum(axis=self.axis, keepdims=True)

    def backward(self, grad, out, x):
        return (out * (grad - reduce_sum(grad * out, self.axis, keepdims=True)),)


class LogSoftmax(AlongAxis):
    name = "log_softmax"

    def forward(self, xp, x):
        if not x.size:
            return x.copy()
        shifted = x - x.max(axis=self.axis, keepdims=True)
        return shifted - xp.log(xp.exp(shifted).sum(axis=self.axis, keepdims=True))

    def backward(self, grad, out, x):
        return (grad - exp(out) * reduce_sum(grad, self.axis, keepdims=True),)


class DropoutMask(RandomOp):
    """Dropout's random mask, shaped like (and on the device of) its input: each element is 0
    with probability ``rate``, else 1/(1 − rate). Drawn anew on every run, like any random op.
    A rate known only when the graph runs (a placeholder) is a second input."""

    name = "dropout_mask"

    def __init__(self, rate, seed):
        self.rate, self.seed, self._own = rate, seed, None

    def forward(self, xp, x, *fed_rate):
        keep = 1 - (float(fed_rate[0]) if fed_rate else self.rate)
        if not 0 < keep <= 1:
            raise ValueError("dropout rate out of range")
        return (self.rng(xp).random(x.shape) < keep).astype(x.dtype) / keep

    def static_shape(self, x, *fed_rate):
        """Shaped like x (graphs ask this instead of a trial run, which would use up draws)."""
        return x.shape, x.dtype

    def explain_failure(self, shapes):
        return ("dropout: the rate must be a number in [0, 1) (a keep_prob in (0, 1]); check "
                "the value fed for it.")


def relu(x, name=None):
    return apply(Relu(), x, name=name)


def relu_grad(grad, out, name=None):
    """The gradient through a relu whose output was ``out`` (TF's ``ReluGrad``)."""
    return apply(ReluGrad(), grad, out, name=name)


def leaky_relu(x, alpha=0.2, name=None):
    """TF's default slope is 0.2 (PyTorch's negative_slope is 0.01: pass alpha=0.01)."""
    return apply(LeakyRelu(alpha), to_float(x), name=name)


def sigmoid(x, name=None):
    return apply(Sigmoid(), to_float(x), name=name)


def tanh(x, name=None):
    return apply(Tanh(), to_float(x), name=name)


def softplus(x, name=None):
    return apply(Softplus(), to_float(x), name=name)


def elu(x, alpha=1.0, name=None):
    return apply(Elu(alpha), to_float(x), name=name)


def softmax(x, axis=-1, name=None):
    return apply(Softmax(axis), to_float(x), name=name)


def log_softmax(x, axis=-1, name=None):
    return apply(LogSoftmax(axis), to_float(x), name=name)


def dropout(x, rate=0.5, training=True, seed=None, name=None, keep_prob=None):
    """Zero each element with probability ``rate`` and scale the rest by 1/(1 − rate)
    ("inverted" dropout, so inference needs no rescaling). Identity when not training.

    ``keep_prob`` is TF1's spelling, 1 − rate. The second argument is the rate, as in TF2,
    Keras and PyTorch (``torch.dropout(x, p, train)``); ``eg.nn.dropout`` reads it as
    keep_prob in TF1 code (``tf_dropout``). Either may be a tensor, such as a placeholder fed
    0.5 to train and 1.0 to test. So may ``training`` (TF1's ``is_training`` placeholder)."""
    if keep_prob is not None:
        rate = 1 - keep_prob
    if isinstance(training, Tensor):            # both, one picked when the graph runs
        return where(training, dropout(x, rate, True, seed), to_float(x), name=name)
    fed = isinstance(rate, Tensor)                  # a rate known when the graph runs
    if not fed and not 0 <= rate < 1:
        raise ValueError(f"dropout rate must be in [0, 1), got {rate}" +
                         (f" (keep_prob {keep_prob})." if keep_prob is not None else "."))
    if not training or (not fed and rate == 0):
        return x
    x = to_float(x)
    if fed:
        rate = rate if rate.dtype == x.dtype else cast(rate, x.dtype)
        return multiply(x, apply(DropoutMask(None, seed), x, rate), name=name)
    return multiply(x, apply(DropoutMask(rate, seed), x), name=name)    # grad · mask


def tf_dropout(x, rate_or_keep_prob=None, noise_shape=None, seed=None, name=None, *,
               rate=None, keep_prob=None, training=True):
    """TF's ``tf.nn.dropout`` (``eg.nn.dropout``), whose second argument changed meaning:
    TF1's was ``keep_prob``, TF2's is ``rate`` = 1 − keep_prob, so ``tf.nn.dropout(h, 0.9)``
    keeps 90 % of h in TF1 and 10 % in TF2. As a keyword it is clear. By position it is read
    as the code around it is written: ``keep_prob`` in a TF1 graph (Graph and Session code),
    ``rate`` eagerly and in an ``eg.function`` (TF2). Where that cannot be told (an
    ``eg.function`` inlined into a TF1 graph) the call is refused. ``training`` is edugraph's
    (a bool, or a boolean tensor such as TF1's ``is_training`` placeholder)."""
    if rate is not None and keep_prob is not None:
        raise ValueError("eg.nn.dropout: give rate (TF2) or keep_prob (TF1), not both.")
    if rate_or_keep_prob is not None:
        if rate is not None or keep_prob is not None:
            raise TypeError("eg.nn.dropout got its second argument twice, by position and as "
                            "rate= or keep_prob=. Give it once.")
        era = "tf2" if state.graph is None else state.graph.code_era
        if era is None:
            raise ValueError(
                "eg.nn.dropout(x, p): p is keep_prob in TF1 and rate (1 - keep_prob) in TF2, "
                "and here an eg.function's body (TF2 code) is inlined into a TF1 graph, so "
                "edugraph cannot tell which you mean. Write the keyword: "
                "eg.nn.dropout(x, rate=p) or eg.nn.dropout(x, keep_prob=p).")
        if era == "tf1":
            keep_prob = rate_or_keep_prob
        else:
            rate = rate_or_keep_prob
    if noise_shape is not None:
        raise NotImplementedError(
            "eg.nn.dropout: noise_shape (one mask shared along some axes) is left out. Draw "
            "the mask yourself: x * eg.cast(eg.random.uniform(noise_shape) >= rate, "
            "x.dtype) / (1 - rate).")
    return dropout(x, 0.5 if rate is None else rate, training, seed, name, keep_prob=keep_prob)
