"""Numbers in a few characters, the same on every machine: the words of every table, wire and
rule of a view (nbval compares them with the lessons' stored outputs)."""
import numpy as np


def number(x):
    """A number in at most 4 significant digits, the same on every machine ("-0" shown as 0)."""
    x = float(x)
    if np.isnan(x) or np.isinf(x):
        return str(x)
    return f"{x + 0.0:.4g}"


def shape_text(shape):
    if shape is None:
        return "-"                      # an op without a value (a NoOp that groups others)
    return "scalar" if len(shape) == 0 else "×".join("?" if s is None else str(s) for s in shape)


def short(array):
    """A value in a few characters: a number, a short vector, or the mean of a big tensor."""
    if array is None:
        return "-"
    array = np.asarray(array)
    if array.size == 1:
        return number(array.reshape(-1)[0]) if array.dtype.kind in "fiub" else str(array)
    if array.dtype.kind not in "fiub":
        return shape_text(array.shape)
    if array.ndim == 1 and array.size <= 3:
        return "[" + ", ".join(number(v) for v in array) + "]"
    return f"{shape_text(array.shape)} μ={number(array.astype(np.float64).mean())}"
