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
    """Colours for one column as ``(levels, colourscale, legend)``.

    Plotly checks a list of 50 000 colour strings one by one, but takes a float array
    at once; so each point gets a level in [0, 1] and the colourscale maps levels to
    colours. Categories get one flat band each (repeated stops make sharp steps).
    The legend is ``[(category, colour), ...]``, or ``[(min, colour), (max, colour)]``
    for a numeric gradient.
    """
    if is_numeric(values):
        numbers = np.asarray(values, dtype=np.float64)
        low, high = numbers.min(), numbers.max()
        scale = [[i / (len(VIRIDIS) - 1), c] for i, c in enumerate(VIRIDIS)]
        legend = [(f"{low:g}", VIRIDIS[0]), (f"{high:g}", VIRIDIS[-1])]
        return ((numbers - low) / (high - low)).astype(np.float32), scale, legend
    labels = np.array([str(v) for v in values], dtype=object)
    ranked = [name for name, _ in Counter(labels).most_common()]
    if len(ranked) > len(OKABE_ITO):
        named = ranked[:len(OKABE_ITO) - 1]
        legend = [*zip(named, OKABE_ITO), (f"{len(ranked) - len(named)} others", OTHER)]
    else:
        legend = list(zip(sorted(ranked), OKABE_ITO))
    band = {name: i for i, (name, _) in enumerate(legend)}
    other = len(legend) - 1          # only used when there are more than 8 categories
    codes = np.array([band.get(label, other) for label in labels], dtype=np.float32)
    scale = [[edge / len(legend), colour] for i, (_, colour) in enumerate(legend)
             for edge in (i, i + 1)]
    return (codes + 0.5) / len(legend), scale, legend


def with_dimmed(scale):
    """Extend a colourscale with DIMMED for the level -1 (use cmin=-1, cmax=1).

    Highlighting then only changes levels, never the colourscale: the rest of the
    points get -1 and turn light grey.
    """
    return [[0, DIMMED], [0.4999, DIMMED]] + [[0.5 + p / 2, c] for p, c in scale]
