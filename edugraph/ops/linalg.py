"""Matrix multiplication, batched: (..., n, k) @ (..., k, m) → (..., n, m)."""
from .base import Op, apply
from .shape import expand_dims, squeeze, transpose


class MatMul(Op):
    name = "matmul"

    def forward(self, xp, a, b):
        return xp.matmul(a, b)

    def backward(self, grad, out, a, b):
        # dL/da = dL/dout · bᵀ and dL/db = aᵀ · dL/dout; batch axes are reduced by the engine.
        # An input that needs no gradient (the data x) gets None: a whole matmul saved.
        return (matmul(grad, _swap_last(b)) if a.requires_grad else None,
                matmul(_swap_last(a), grad) if b.requires_grad else None)

    def explain_failure(self, shapes):
        a, b = shapes
        if not a or not b:
            return (f"matmul needs inputs with at least one dimension, got shapes {a} and {b}; "
                    "multiply by a scalar with * (eg.multiply).")
        if len(a) >= 2 and len(b) >= 2 and a[-1] != b[-2]:
            return (f"matmul: inner dimensions differ: {a} @ {b} needs a's last dimension "
                    f"({a[-1]}) to equal b's second-to-last ({b[-2]}). Transpose one input "
                    "(eg.transpose / .T) or check the weight's shape.")
        return f"matmul: cannot multiply shapes {a} and {b} (batch dimensions must broadcast)."


def _swap_last(x):
    perm = list(range(x.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(x, perm)


def matmul(a, b, name=None):
    """Matrix product ``a @ b``; 1-D inputs act as a row / column vector, like numpy."""
    a_vec, b_vec = a.ndim == 1, b.ndim == 1
    if not (a_vec or b_vec):
        return apply(MatMul(), a, b, name=name)
    if a_vec:
        a = expand_dims(a, 0)
    if b_vec:
        b = expand_dims(b, -1)
    out = apply(MatMul(), a, b)
    if a_vec:
        out = squeeze(out, -2, name=None if b_vec else name)
    if b_vec:
        out = squeeze(out, -1, name=name)
    return out
