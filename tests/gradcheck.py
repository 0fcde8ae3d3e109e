"""A gradient checker in the style of minitorch: analytic gradients against central differences.

``gradcheck(fn, *args)`` runs ``fn`` on float64 tensors, backpropagates a fixed random weighting
of its output (so every output element matters with a different weight), then nudges every
element of every float input by ±eps and compares

    numeric = (L(x + eps) - L(x - eps)) / (2 eps)

with the analytic gradient. A failure names the op, the argument, the element and both values.
"""
import numpy as np

import edugraph as eg


def gradcheck(fn, *args, device="cpu:0", name=None, eps=1e-6, atol=1e-6, rtol=1e-5):
    """Check ``fn(*tensors)``'s gradients w.r.t. every float argument; returns them (host arrays).

    Float numpy arrays in ``args`` become float64 tensors that require grad; integer arrays
    become integer tensors (indices); anything else is passed through unchanged.
    """
    name = name or getattr(fn, "__name__", "fn")
    hosts = [np.array(a, dtype=np.float64) if _is_float(a) else a for a in args]

    def loss(values, weights=None):
        # inputs require grad in the numeric runs too: fn may itself differentiate (eg.grad)
        tensors = [_to_tensor(v, device, requires_grad=_is_float(v)) for v in values]
        out = fn(*tensors)
        if weights is None:
            return out, tensors
        return float((out * weights).sum().item())

    out, tensors = loss(hosts)
    if out.dtype != np.float64:
        raise AssertionError(f"{name}: output dtype is {out.dtype}, expected float64 "
                             "for float64 inputs")
    rng = np.random.default_rng(1)
    weights = eg.tensor(rng.uniform(0.5, 1.5, out.shape), dtype=eg.float64, device=device)
    (out * weights).sum().backward()

    analytic = []
    for i, (host, t) in enumerate(zip(hosts, tensors)):
        if not _is_float(host):
            continue
        grad = np.zeros_like(host) if t.grad is None else t.grad.numpy()
        if grad.shape != host.shape:
            raise AssertionError(f"{name}: gradient of argument {i} has shape {grad.shape}, "
                                 f"but the argument has shape {host.shape}")
        for index in np.ndindex(host.shape):
            numeric = _central_difference(loss, hosts, i, index, weights, eps)
            if not np.isclose(grad[index], numeric, atol=atol, rtol=rtol):
                raise AssertionError(
                    f"gradcheck failed for {name} on {device}: argument {i} "
                    f"(shape {host.shape}) at index {index}: analytic {float(grad[index])!r}, "
                    f"numeric {numeric!r}")
        analytic.append(grad)
    return analytic


def _central_difference(loss, hosts, i, index, weights, eps):
    x = hosts[i]
    original = x[index]
    try:
        x[index] = original + eps
        up = loss(hosts, weights)
        x[index] = original - eps
        down = loss(hosts, weights)
    finally:
        x[index] = original
    return (up - down) / (2 * eps)


def _is_float(a):
    return isinstance(a, (float, np.floating)) or (
        isinstance(a, np.ndarray) and a.dtype.kind == "f")


def _to_tensor(value, device, requires_grad):
    if isinstance(value, np.ndarray) or isinstance(value, (float, np.floating)):
        return eg.tensor(value, device=device, requires_grad=requires_grad)
    if isinstance(value, np.integer):
        return eg.tensor(value, device=device)
    return value
