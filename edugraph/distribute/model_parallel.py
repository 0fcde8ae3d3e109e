"""Model parallelism and data parallelism of one small network, Y = ReLU(XW)V, on two devices.

Mesh TensorFlow's example (Shazeer, 2019): X is b×d (a batch), W is d×h, V is h×o. Two ways to
share the work between devices, and what each must send:

* ``HiddenSplit`` (model parallelism, split "h"): device k keeps only its columns W_k of W and
  rows V_k of V, so the layer may be too big for one device. It needs all of X, computes
  H_k = ReLU(X W_k) and its share Y_k = H_k V_k; Y = Y_0 + Y_1. Sent each step: X out and Y_k
  back (forward), dY out and dX_k back (backward): activations, growing with the batch.
* ``BatchSplit`` (data parallelism, split "b"): every device keeps all of W and V and takes its
  rows of X. Sent: the rows of X and Y (forward) and of dY and dX (backward), and then the
  gradients of W and V, summed over devices by an all-reduce: as big as the weights.

Both compute the numbers of the unsplit layer (``unsplit_layer``), gradients included. The
transfers are real copies between devices (``sim:1`` stands in for a second accelerator), and
each is written down as it happens, the backward ones when the gradient flows back: the
gradient of a copy is a copy the other way.
"""
from collections import namedtuple

import numpy as np

from .all_reduce import all_reduce
from .strategy import shard_bounds
from ..devices import get_device
from ..ops.activation import relu
from ..ops.base import apply
from ..ops.math import add_n
from ..ops.shape import CopyTo, concat
from ..tensor import tensor
from ..variable import Variable

__all__ = ["HiddenSplit", "BatchSplit", "unsplit_layer", "Transfer"]

Transfer = namedtuple("Transfer", "direction what source target nbytes")
Transfer.__doc__ = """One copy between devices: in the ``"forward"`` or ``"backward"`` pass (or
the ``"all-reduce"`` of gradients), ``what`` went from device ``source`` to ``target``:
``nbytes`` bytes."""


class _Send(CopyTo):
    """A copy to another device that writes itself down, both ways."""

    name = "send"

    def __init__(self, source, target, transfers, what):
        super().__init__(source, target)
        self._transfers, self._what = transfers, what

    def forward(self, xp, x):
        self._transfers.append(Transfer("forward", self._what, self.source.name,
                                        self.target.name, x.nbytes))
        return super().forward(xp, x)

    def backward(self, grad, out, x):
        self._transfers.append(Transfer("backward", f"d{self._what}", self.target.name,
                                        self.source.name, grad.size * grad.dtype.itemsize))
        return super().backward(grad, out, x)


def _send(x, target, transfers, what):
    return x if x.device is target else apply(_Send(x.device, target, transfers, what), x)


def unsplit_layer(x, w, v):
    """The unsplit layer, on one device: ReLU(x @ w) @ v."""
    return relu(x @ w) @ v


class HiddenSplit:
    """Model parallelism: the hidden units split across ``devices`` (W by columns, V by rows).
    ``w`` and ``v`` are the full weights (arrays), cut here and placed on the devices."""

    def __init__(self, w, v, devices=("cpu:0", "sim:1")):
        self.devices = [get_device(d) for d in devices]
        parts = np.array_split(np.arange(np.shape(w)[1]), len(self.devices))
        self.w = [Variable(tensor(np.asarray(w)[:, p], device=d), name=f"W_{k}")
                  for k, (p, d) in enumerate(zip(parts, self.devices))]
        self.v = [Variable(tensor(np.asarray(v)[p, :], device=d), name=f"V_{k}")
                  for k, (p, d) in enumerate(zip(parts, self.devices))]
        self.transfers = []

    def __call__(self, x):
        """Y for ``x`` on the first device (where Y is returned)."""
        home, shares = self.devices[0], []
        for k, where in enumerate(self.devices):
            x_k = _send(x, where, self.transfers, "X")
            y_k = relu(x_k @ self.w[k]) @ self.v[k]             # device k's share of Y
            shares.append(_send(y_k, home, self.transfers, f"Y_{k}"))
        return add_n(shares)

    def gradients(self):
        """dW and dV, the devices' parts put together (as arrays), after ``backward()``."""
        return (np.concatenate([w.grad.numpy() for w in self.w], axis=1),
                np.concatenate([v.grad.numpy() for v in self.v], axis=0))


class BatchSplit:
    """Data parallelism: the batch's rows split across ``devices``, W and V copied to each."""

    def __init__(self, w, v, devices=("cpu:0", "sim:1")):
        self.devices = [get_device(d) for d in devices]
        self.w = [Variable(tensor(w, device=d), name=f"W_{k}")
                  for k, d in enumerate(self.devices)]
        self.v = [Variable(tensor(v, device=d), name=f"V_{k}")
                  for k, d in enumerate(self.devices)]
        self.transfers = []

    def __call__(self, x):
        home, parts = self.devices[0], []
        for k, (where, (start, stop)) in enumerate(zip(
                self.devices, shard_bounds(x.shape[0], len(self.devices)))):
            x_k = _send(x[start:stop], where, self.transfers, f"X rows {k}")
            y_k = relu(x_k @ self.w[k]) @ self.v[k]             # device k's rows of Y
            parts.append(_send(y_k, home, self.transfers, f"Y rows {k}"))
        return concat(parts, axis=0)

    def gradients(self):
        """dW and dV after ``backward()``: each device has the gradient of its rows only, so
        they are summed by a ring all-reduce (its messages join ``transfers``)."""
        flat = [np.concatenate([w.grad.numpy().ravel(), v.grad.numpy().ravel()])
                for w, v in zip(self.w, self.v)]
        sums, log = all_reduce(flat, "ring")
        names = [d.name for d in self.devices]
        self.transfers += [Transfer("all-reduce", f"dW, dV chunk {m.chunk}", names[m.sender],
                                    names[m.receiver], m.nbytes) for m in log]
        dw, dv = np.split(sums[0], [self.w[0].size])
        return dw.reshape(self.w[0].shape), dv.reshape(self.v[0].shape)
