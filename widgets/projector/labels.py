"""Which point labels to write on the picture, and on which side, so that none overlap.

Neighbours are close by definition, so their labels written all to the right of their points
run into one blob. Each label, in order of importance (the selected point, its neighbours by
rank, the search matches), takes the first side of its point (right, left, above, below, the
corners) where it overlaps no label placed before it and no other labelled point; a label
that finds no free side is left off the picture (the neighbour list names every point).
"""
from ..measure import text_width

SIDES = ("middle right", "middle left", "top center", "bottom center",
         "top right", "bottom right", "top left", "bottom left")
PAD = 3             # px between a point and its label


def place_labels(points, texts, font_px=11, marker_px=10, area=None):
    """The side of each label (plotly's ``textposition``), or None where it does not fit.

    ``points``: screen positions ``(x, y)`` in pixels (y downwards), most important first;
    ``area``: the rectangle ``(x0, y0, x1, y1)`` labels must stay in (plotly cuts them at the
    edge of the plot)."""
    half = marker_px / 2
    markers = [(x - half, y - half, x + half, y + half) for x, y in points]
    taken, sides = [], []
    for i, ((x, y), text) in enumerate(zip(points, texts)):
        others = markers[:i] + markers[i + 1:]
        for side in SIDES:
            box = label_box(x, y, text, side, font_px, marker_px)
            if area is not None and not (area[0] <= box[0] and box[2] <= area[2] and
                                         area[1] <= box[1] and box[3] <= area[3]):
                continue
            if not any(_overlap(box, b) for b in taken + others):
                taken.append(box)
                sides.append(side)
                break
        else:
            sides.append(None)
    return sides


def label_box(x, y, text, side, font_px=11, marker_px=10):
    """The rectangle ``(x0, y0, x1, y1)`` a label takes on the given side of its point."""
    width, height = text_width(text, font_px), font_px * 1.3
    vertical, horizontal = side.split()
    reach = marker_px / 2 + PAD
    x0 = {"left": x - reach - width, "center": x - width / 2, "right": x + reach}[horizontal]
    y0 = {"top": y - reach - height, "middle": y - height / 2, "bottom": y + reach}[vertical]
    return x0, y0, x0 + width, y0 + height


def _overlap(a, b):
    return min(a[2], b[2]) > max(a[0], b[0]) and min(a[3], b[3]) > max(a[1], b[1])
