"""Colour rules of the inspector: sign and size of numbers, devices, warnings.

Blue is positive and red negative (a diverging scale with white at 0), so a gradient's sign
reads at a glance; the stronger the colour, the larger the number compared with the largest
one on the picture.
"""
import numpy as np

NEGATIVE, ZERO, POSITIVE = (178, 24, 43), (247, 247, 247), (33, 102, 172)
NO_NUMBER = "#D9D9D9"          # no value or gradient (yet): light grey
DEVICE = {"cpu": "#4D4D4D", "gpu": "#76B900", "sim": "#8E44AD"}
WARNING = "#D7191C"
ACTIVE = "#FF8C00"             # the node / edges of the current step
SELECTED = "#000000"


def diverging(t):
    """A colour for ``t`` in [-1, 1]: red at -1, white at 0, blue at 1."""
    t = float(np.clip(t, -1.0, 1.0))
    end = POSITIVE if t >= 0 else NEGATIVE
    r, g, b = (round(z + abs(t) * (e - z)) for z, e in zip(ZERO, end))
    return f"rgb({r},{g},{b})"


def summary_number(array):
    """One number standing for a tensor's colour: its mean (NaN/Inf ignored; None if empty)."""
    if array is None or array.size == 0 or array.dtype.kind not in "fiub":
        return None
    finite = np.asarray(array, dtype=np.float64)
    finite = finite[np.isfinite(finite)]
    return float(finite.mean()) if finite.size else None


def signed_colours(numbers):
    """Diverging colours for numbers (None → grey), scaled by the largest magnitude."""
    largest = max((abs(x) for x in numbers if x is not None), default=0.0)
    return [NO_NUMBER if x is None else diverging(x / largest if largest else 0.0)
            for x in numbers]


def device_colour(device):
    return DEVICE.get(device.split(":")[0], DEVICE["cpu"])
