"""Numbers for printing: the same digits on every machine.

The lessons store their outputs, and the tests run them again and compare. A float's last
bits differ between CPUs and BLAS libraries, so a lesson prints a few significant digits:

    >>> from edugraph.utils.printing import rounded
    >>> rounded(2 / 3)
    0.6667
    >>> rounded([37.9137, -0.00001234, 1234567.0], digits=3)
    [37.9, -1.23e-05, 1230000.0]

Significant digits keep a small number's digits (a gradient of 1.234e-05 is not 0). Where a
value is exactly 0 in theory and a rounding error of 1e-17 in practice, round to decimal places
instead, ``rounded(grad, decimals=4)``. Either way ``-0.0`` comes back as ``0.0``, so that a
sign that is only noise is never printed.
"""
import numpy as np

from ..tensor import Tensor

__all__ = ["rounded"]


def rounded(value, digits=4, *, decimals=None):
    """``value`` with ``digits`` significant digits (or ``decimals`` decimal places): a number
    as a Python float, a list or tuple as a list, an array or a tensor (copied to the host) as
    a float64 numpy array."""
    if isinstance(value, Tensor):
        value = value.numpy()
    if isinstance(value, (list, tuple)):
        return [rounded(v, digits, decimals=decimals) for v in value]
    array = np.asarray(value, dtype=np.float64)
    if decimals is not None:
        array = np.round(array, decimals)
    else:
        array = np.vectorize(lambda x: float(f"{x:.{digits}g}"), otypes=[np.float64])(array)
    array = array + 0.0                 # -0.0 + 0.0 is 0.0
    return float(array) if array.ndim == 0 else array
