"""Matrix multiplication, batched: (..., n, k) @ (..., k, m) → (..., n, m); and PyTorch's
products of fixed ranks over it: dot, mv, mm, bmm, outer."""
from .base import Op, apply, as_tensors, rank_known
from .math import multiply
from .shape import expand_dims, squeeze
from ..errors import ShapeError
from ..tensor import Tensor


class MatMul(Op):
    """``a @ b``, with TF's ``transpose_a`` / ``transpose_b``: the last two axes of an input
    are swapped as it is read (BLAS reads a transposed matrix in place: no copy, no node)."""

    name = "matmul"
    promotes_from = 0

    def __init__(self, transpose_a=False, transpose_b=False):
        self.transpose_a, self.transpose_b = transpose_a, transpose_b

    def forward(self, xp, a, b):
        # (the array method: xp.swapaxes is a Python wrapper costing ~1 µs a call)
        return xp.matmul(a.swapaxes(-1, -2) if self.transpose_a else a,
                         b.swapaxes(-1, -2) if self.transpose_b else b)

    def backward(self, grad, out, a, b):
        # dL/da = dL/dout · bᵀ and dL/db = aᵀ · dL/dout (with the transposes as read: TF's
        # _MatMulGrad); batch axes are reduced by the engine. An input that needs no gradient
        # (the data x) gets None: a whole matmul saved.
        ta, tb = self.transpose_a, self.transpose_b
        if not ta:
            grad_a = matmul(grad, b, transpose_b=not tb) if a.requires_grad else None
            grad_b = (matmul(a, grad, transpose_a=True) if not tb else
                      matmul(grad, a, transpose_a=True)) if b.requires_grad else None
        else:
            grad_a = (matmul(b, grad, transpose_b=True) if not tb else
                      matmul(b, grad, transpose_a=True, transpose_b=True)) \
                if a.requires_grad else None
            grad_b = (matmul(a, grad) if not tb else
                      matmul(grad, a, transpose_a=True, transpose_b=True)) \
                if b.requires_grad else None
        return grad_a, grad_b

    def read_shapes(self, a, b):
        """The shapes the product sees (after the transposes)."""
        swap = lambda s: tuple(s[:-2]) + (s[-1], s[-2]) if len(s) >= 2 else tuple(s)  # noqa: E731
        return (swap(a) if self.transpose_a else tuple(a),
                swap(b) if self.transpose_b else tuple(b))

    def explain_failure(self, shapes):
        a, b = self.read_shapes(*shapes)
        shown = (f"{a} @ {b}" if not (self.transpose_a or self.transpose_b) else
                 f"{a} @ {b} (as read, after transpose_a={self.transpose_a}, "
                 f"transpose_b={self.transpose_b})")
        if not a or not b:
            return (f"matmul needs inputs with at least one dimension, got shapes {a} and {b}; "
                    "multiply by a scalar with * (eg.multiply).")
        if len(a) >= 2 and len(b) >= 2 and a[-1] != b[-2]:
            return (f"matmul: inner dimensions differ: {shown} needs a's last dimension "
                    f"({a[-1]}) to equal b's second-to-last ({b[-2]}). Transpose one input "
                    "(transpose_b=True, eg.transpose / .T) or check the weight's shape.")
        return f"matmul: cannot multiply shapes {shown} (batch dimensions must broadcast)."


def matmul(a, b, transpose_a=False, transpose_b=False, name=None):
    """Matrix product ``a @ b``; 1-D inputs act as a row / column vector, like numpy.
    ``transpose_a=True`` multiplies by ``a``'s transpose (its last two axes swapped), as TF."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        a, b = as_tensors((a, b))
    a_vec, b_vec = _is_vector(a), _is_vector(b)
    if not (a_vec or b_vec):
        return apply(MatMul(transpose_a, transpose_b), a, b, name=name)
    if transpose_a or transpose_b:
        raise ValueError(f"matmul: transpose_a / transpose_b need inputs of rank 2 or more, "
                         f"got shapes {tuple(a.shape)} and {tuple(b.shape)}.")
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


def _is_vector(t):
    """1-D (a graph tensor of unknown rank is taken for a matrix, as TF's matmul needs)."""
    shape = t.shape
    return len(shape) == 1 if shape.__class__ is tuple else rank_known(shape) and len(shape) == 1


# ----------------------------------------------------------------- PyTorch's fixed-rank products
# matmul takes any ranks; these check theirs first, so that a mix-up is named, not broadcast.
def dot(a, b, name=None):
    r"""``torch.dot``: the inner product $\sum_i a_i b_i$ of two 1-D tensors of one length."""
    a, b = _checked(a, b, "dot", (1, 1), "two 1-D vectors of the same length", (0, 0),
                    "their lengths")
    return matmul(a, b, name=name)


def mv(matrix, vector, name=None):
    """``torch.mv``: a matrix (n, k) times a vector (k,), a vector (n,)."""
    matrix, vector = _checked(matrix, vector, "mv", (2, 1), "a matrix by a vector", (1, 0),
                              "the matrix's columns and the vector's length")
    return matmul(matrix, vector, name=name)


def mm(a, b, name=None):
    """``torch.mm``: the product of two matrices, (n, k) @ (k, m) → (n, m)."""
    a, b = _checked(a, b, "mm", (2, 2), "two matrices (eg.matmul also takes batches)", (1, 0),
                    "a's columns and b's rows")
    return matmul(a, b, name=name)


def bmm(a, b, name=None):
    """``torch.bmm``: a batch of matrix products, (B, n, k) @ (B, k, m) → (B, n, m)."""
    a, b = _checked(a, b, "bmm", (3, 3), "two batches of matrices", (2, 1),
                    "a's columns and b's rows")
    _check_sizes("bmm", a, b, (0, 0), "the batch sizes (bmm does not broadcast)")
    return matmul(a, b, name=name)


def outer(a, b, name=None):
    """``torch.outer``: every product $a_i b_j$ of two vectors, a matrix (n, m)."""
    a, b = _checked(a, b, "outer", (1, 1), "two 1-D vectors")
    return multiply(expand_dims(a, -1), b, name=name)      # (n, 1) * (m,) broadcasts to (n, m)


def _checked(a, b, fn, ranks, expected, axes=None, what=None):
    """``a`` and ``b`` as tensors, after checking their ranks and that sizes ``axes`` (one of
    each) agree, where a graph knows them."""
    if not (isinstance(a, Tensor) and isinstance(b, Tensor)):
        a, b = as_tensors((a, b))
    if any(rank_known(t.shape) and len(t.shape) != n for t, n in zip((a, b), ranks)):
        raise ShapeError(f"{fn} multiplies {expected}, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}. eg.matmul (or @) multiplies tensors of any rank; "
                         "otherwise reshape first.")
    if axes is not None:
        _check_sizes(fn, a, b, axes, what)
    return a, b


def _check_sizes(fn, a, b, axes, what):
    if rank_known(a.shape) and rank_known(b.shape):
        n, m = a.shape[axes[0]], b.shape[axes[1]]
        if n is not None and m is not None and n != m:
            raise ShapeError(f"{fn}: {what} differ ({n} and {m}), in shapes {tuple(a.shape)} "
                             f"and {tuple(b.shape)}.")
