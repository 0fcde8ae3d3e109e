"""Point colours from a metadata column: categories or a numeric gradient.

Categories use the Okabe–Ito palette, which people with the common forms of colour
blindness can still tell apart. It has 8 colours, so with more categories the 7 most
frequent get colours and the rest share grey "other" (cycling colours would make two
categories look like one). Numbers use Viridis, which is also colour-blind safe and
gets lighter monotonically, so it still reads in greyscale.
"""
from collections import Counter

import numpy as np

# Yellow comes late: on a white background it is the hardest colour to see.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#0072B2",
             "#D55E00", "#CC79A7", "#F0E442", "#000000"]
OTHER = "#BBBBBB"
DIMMED = "#E3E3E3"
# Viridis sampled at 0, 1/8, ..., 1; values in between are interpolated linearly.
VIRIDIS = ["#440154", "#472D7B", "#3B528B", "#2C728E", "#21918C",
           "#28AE80", "#5EC962", "#ADDC30", "#FDE725"]
# Up to this many distinct numbers are still treated as categories (digit labels 0-9).
MAX_NUMERIC_CATEGORIES = 10


def is_numeric(values):
    """True when every value reads as a number and there are too many to be classes."""
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.isfinite(numbers).all()) and len(np.unique(numbers)) > MAX_NUMERIC_CATEGORIES


def colour_points(values):
    """Colours for one column: ``(hex colour per point, legend)``.

    The legend is ``[(category, colour), ...]`` for categories, or
    ``[(min, first colour), (max, last colour)]`` for a numeric gradient.
    """
    if is_numeric(values):
        numbers = np.asarray(values, dtype=np.float64)
        low, high = numbers.min(), numbers.max()
        colours = _viridis((numbers - low) / (high - low))
        return colours, [(f"{low:g}", VIRIDIS[0]), (f"{high:g}", VIRIDIS[-1])]
    labels = [str(v) for v in values]
    ranked = [name for name, _ in Counter(labels).most_common()]
    if len(ranked) > len(OKABE_ITO):
        palette = dict(zip(ranked[:len(OKABE_ITO) - 1], OKABE_ITO))
        legend = list(palette.items()) + [(f"{len(ranked) - len(palette)} others", OTHER)]
    else:
        palette = dict(zip(sorted(ranked), OKABE_ITO))
        legend = list(palette.items())
    return [palette.get(label, OTHER) for label in labels], legend


def _viridis(fractions):
    """Hex colours for numbers in [0, 1], interpolated between the Viridis anchors."""
    anchors = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for c in VIRIDIS], float)
    position = np.clip(fractions, 0, 1) * (len(VIRIDIS) - 1)
    grid = np.arange(len(VIRIDIS))
    rgb = np.column_stack([np.interp(position, grid, anchors[:, i]) for i in range(3)])
    return [f"#{r:02X}{g:02X}{b:02X}" for r, g, b in np.rint(rgb).astype(int)]
