"""Point colours from a metadata column: categories or a numeric gradient.

Categories get as many colours as there are classes: up to 8 from the Okabe–Ito palette,
which people with the common forms of colour blindness can still tell apart; 9 or 10 from
Tableau's 10 (the ten digits each get their own); 11 to 20 from Tableau's 20 (its pairs of a
strong and a light shade). With more, the 18 most frequent get Tableau 20's colours that are
not grey and the rest share grey "others" (cycling colours would make two classes look like
one). Numbers use Viridis, which is also colour-blind safe and gets lighter monotonically, so
it still reads in greyscale. On a dark theme, black points would vanish: they turn light grey.
Points that are not highlighted while others are (a search, a selection) are drawn DIMMED.
"""
from collections import Counter

import numpy as np

# Yellow comes late: on a white background it is the hardest colour to see.
OKABE_ITO = ["#E69F00", "#56B4E9", "#009E73", "#0072B2",
             "#D55E00", "#CC79A7", "#F0E442", "#000000"]
TABLEAU_10 = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
              "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
TABLEAU_20 = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
              "#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2",
              "#7f7f7f", "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5"]
NOT_GREY = [c for c in TABLEAU_20 if c not in ("#7f7f7f", "#c7c7c7")]
OTHER = "#BBBBBB"
DIMMED = {"light": "#E3E3E3", "dark": "#3C3C3C"}
ON_DARK = {"#000000": "#E0E0E0"}
# Viridis sampled at 0, 1/8, ..., 1; values in between are interpolated linearly.
VIRIDIS = ["#440154", "#472D7B", "#3B528B", "#2C728E", "#21918C",
           "#28AE80", "#5EC962", "#ADDC30", "#FDE725"]
# Up to this many distinct numbers are still treated as categories (digit labels 0-9).
MAX_NUMERIC_CATEGORIES = 10


def palette(count):
    """The palette for ``count`` classes (at most 20)."""
    return OKABE_ITO if count <= len(OKABE_ITO) else \
        TABLEAU_10 if count <= len(TABLEAU_10) else TABLEAU_20


def is_numeric(values):
    """True when every value reads as a number and there are too many to be classes."""
    try:
        numbers = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.isfinite(numbers).all()) and len(np.unique(numbers)) > MAX_NUMERIC_CATEGORIES


def colour_points(values, theme="light"):
    """The colour of each point for one column, and its legend: ``(colours, legend)``.

    ``colours`` is an array of ``#rrggbb`` strings, one per value. The legend is
    ``[(category, colour), ...]``, or ``[(min, colour), (max, colour)]`` for a numeric
    gradient (each number gets the Viridis colour of its place between min and max).
    """
    if is_numeric(values):
        numbers = np.asarray(values, dtype=np.float64)
        low, high = numbers.min(), numbers.max()
        legend = [(f"{low:g}", VIRIDIS[0]), (f"{high:g}", VIRIDIS[-1])]
        return np.array([viridis(t) for t in (numbers - low) / (high - low)]), legend
    labels = [str(v) for v in values]
    ranked = [name for name, _ in Counter(labels).most_common()]
    if len(ranked) > len(TABLEAU_20):
        named = ranked[:len(NOT_GREY)]
        legend = [*zip(named, NOT_GREY), (f"{len(ranked) - len(named)} others", OTHER)]
    else:
        legend = list(zip(sorted(ranked, key=_natural), palette(len(ranked))))
    if theme == "dark":
        legend = [(name, ON_DARK.get(colour, colour)) for name, colour in legend]
    colour_of = dict(legend)
    other = legend[-1][1]            # only used when there are more than 20 categories
    return np.array([colour_of.get(label, other) for label in labels]), legend


def viridis(t):
    """The Viridis colour at ``t`` in [0, 1], between the two nearest samples."""
    place = min(max(float(t), 0.0), 1.0) * (len(VIRIDIS) - 1)
    k = min(int(place), len(VIRIDIS) - 2)
    a, b = (np.array([int(c[i:i + 2], 16) for i in (1, 3, 5)]) for c in VIRIDIS[k:k + 2])
    mixed = np.rint(a + (b - a) * (place - k)).astype(int)
    return "#" + "".join(f"{v:02X}" for v in mixed)


def _natural(name):
    """Sort key putting "2" before "10" (digit classes read in order)."""
    return (0, float(name), name) if _is_number(name) else (1, 0.0, name)


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True
