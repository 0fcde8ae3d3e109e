r"""``eg.gradcheck``: every gradient backward computes, against central differences
(``torch.autograd.gradcheck``).

For each input element :math:`x_i` that requires a gradient and each output element
:math:`y_j`, two numbers must agree:

* numeric: :math:`(y_j(x + \varepsilon e_i) - y_j(x - \varepsilon e_i)) / 2\varepsilon`, the
  function alone, nudged to both sides;
* analytic: what the backward pass sends to :math:`x_i` when :math:`y_j`'s upstream gradient is 1
  and every other output's is 0 (one row of the Jacobian per backward pass).

They agree when :math:`|a - n| \le \mathrm{atol} + \mathrm{rtol} \cdot |n|`, PyTorch's test.
In float64 a central difference is good to about :math:`\varepsilon^2 + 10^{-16}/\varepsilon
\approx 10^{-10}` for :math:`\varepsilon = 10^{-6}`, far inside the tolerances; in float32 the
second term is :math:`10^{-7}/10^{-6} = 0.1`, which is why the inputs should be float64.

    >>> x = eg.tensor([0.5, -1.0, 2.0], dtype=eg.float64, requires_grad=True)
    >>> eg.gradcheck(eg.sin, (x,))
    True

``func`` is any function of tensors: an op's wrapper, a node of your own run with ``apply``, a
whole layer, or a ``Function.apply``.
"""
import warnings

import numpy as np

from .autodiff import grad as _grad
from .context import state
from .tensor import Tensor, float64, tensor

__all__ = ["GradcheckError", "gradcheck"]


class GradcheckError(RuntimeError):
    """A gradient that disagrees with central differences (PyTorch's name for it)."""


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True):
    """Check ``func``'s gradients with respect to ``inputs`` against central differences.

    ``inputs``: a tensor or a tuple of them (other values are passed on unchanged); those with
    ``requires_grad=True`` are checked, element by element, for every float output. Returns
    True; where a gradient disagrees raises ``GradcheckError`` naming the output, the input,
    the index, both values and the relative error (or returns False with
    ``raise_exception=False``).
    """
    # (IPython leaves this frame out of a traceback that passes through it: the student's
    # op raised, or its gradient is wrong, and this frame is neither)
    __tracebackhide__ = True  # noqa: F841
    if state.graph is not None:
        raise RuntimeError("gradcheck runs func eagerly, on values; it was called while a "
                           "graph is being built. Call it outside `with graph.as_default():` "
                           "(and with eager execution on).")
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    checked = _checked(inputs)
    outputs = _float_outputs(func(*inputs))
    try:
        analytic = _analytic_jacobians(outputs, inputs, checked)
        numeric = _numeric_jacobians(func, inputs, checked, eps)
        _compare(outputs, inputs, checked, analytic, numeric, eps, atol, rtol)
    except GradcheckError:
        if raise_exception:
            raise
        return False
    return True


def _checked(inputs):
    """The positions of the inputs whose gradients are checked: tensors that require one."""
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.graph is not None:
            raise TypeError(f"gradcheck: input {i} is the graph tensor '{t.name}', which has "
                            "no value; gradcheck needs eager tensors.")
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck checks the gradients of the inputs that require one, and "
                         "none does: create them with eg.tensor(..., dtype=eg.float64, "
                         "requires_grad=True).")
    for i in checked:
        if inputs[i].dtype != float64:
            warnings.warn(f"gradcheck: input {i} is {inputs[i].dtype}, not float64. A central "
                          "difference in a short float loses most of its digits, so the check "
                          "will likely fail; create the input with dtype=eg.float64.",
                          UserWarning, stacklevel=3)
    return checked


def _float_outputs(result):
    """func's result as a list of its float tensors (integer outputs have no gradient)."""
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    for k, out in enumerate(outputs):
        if not isinstance(out, Tensor):
            raise TypeError(f"gradcheck: func should return a tensor or a tuple of tensors; "
                            f"output {k} is a {type(out).__name__}.")
    return [out for out in outputs if out.dtype.kind == "f"]


def _analytic_jacobians(outputs, inputs, checked):
    """``[output k][position of input i]``: an array (output size × input size), row j being
    the gradients one backward pass sends to the input from a 1 at output element j."""
    __tracebackhide__ = True  # noqa: F841  (as in gradcheck)
    sources = [inputs[i] for i in checked]
    jacobians = []
    for out in outputs:
        rows = [np.zeros((out.size, t.size)) for t in sources]
        if out.requires_grad:
            for j in range(out.size):
                one_hot = np.zeros(out.size)
                one_hot[j] = 1.0
                seed = tensor(one_hot.reshape(out.shape), dtype=out.dtype, device=out.device)
                grads = _grad(out, sources, grad_outputs=seed, allow_unused=True)
                for position, (i, g) in enumerate(zip(checked, grads)):
                    if g is None:
                        continue
                    if g.shape != inputs[i].shape:
                        raise GradcheckError(
                            f"backward gave input {i} a gradient of shape {tuple(g.shape)}, "
                            f"but input {i} has shape {tuple(inputs[i].shape)}: a gradient "
                            "has the shape of what it is the gradient of.")
                    rows[position][j] = g.numpy().reshape(-1)
        jacobians.append(rows)
    return jacobians


def _numeric_jacobians(func, inputs, checked, eps):
    """Like ``_analytic_jacobians``, column by column: input element i nudged by ±eps."""
    __tracebackhide__ = True  # noqa: F841  (as in gradcheck)
    columns = {}                                    # (k, i) → list of columns
    for i in checked:
        source = inputs[i]
        values = source.numpy()
        for flat in range(values.size):
            sides = []
            for step in (eps, -eps):
                nudged = values.copy()
                nudged.reshape(-1)[flat] += step
                replacement = tensor(nudged, dtype=source.dtype, device=source.device,
                                     requires_grad=True)
                # every occurrence of this tensor moves (func(x, x) differentiates both uses)
                args = [replacement if a is source else a for a in inputs]
                sides.append([out.numpy().astype(np.float64).reshape(-1)
                              for out in _float_outputs(func(*args))])
            for k, (up, down) in enumerate(zip(*sides)):
                columns.setdefault((k, i), []).append((up - down) / (2 * eps))
    return {key: np.stack(cols, axis=1) for key, cols in columns.items()}


def _compare(outputs, inputs, checked, analytic, numeric, eps, atol, rtol):
    """Raise ``GradcheckError`` for the entry that disagrees most, if any does."""
    worst, failed, total = None, 0, 0
    for k, out in enumerate(outputs):
        for position, i in enumerate(checked):
            a, n = analytic[k][position], numeric[(k, i)]
            excess = np.abs(a - n) / (atol + rtol * np.abs(n))
            failed += int((excess > 1).sum())
            total += excess.size
            j, e = np.unravel_index(np.argmax(excess), excess.shape) if excess.size else (0, 0)
            if excess.size and excess[j, e] > 1 and (worst is None or excess[j, e] > worst[0]):
                worst = (excess[j, e], k, i, j, e, a[j, e], n[j, e])
    if worst is None:
        return
    _, k, i, j, e, a, n = worst
    at_output = "" if outputs[k].size == 1 else f"output index {_index(j, outputs[k].shape)} and "
    relative = abs(a - n) / abs(n) if n != 0 else float("inf")
    raise GradcheckError(
        f"Jacobian mismatch for output {k} with respect to input {i}, at {at_output}input "
        f"index {_index(e, inputs[i].shape)}: analytic {a:.6g} (from backward), numeric "
        f"{n:.6g} (central differences), relative error {relative:.3g}. {failed} of {total} "
        f"entries disagree; this one the most (eps={eps:g}, atol={atol:g}, rtol={rtol:g}).")


def _index(flat, shape):
    return tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()
