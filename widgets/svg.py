"""SVG written as text: the few shapes the widgets' pictures are made of.

A picture is one ``<svg>`` string, made in Python and kept in a widget's synced state
(``widgets/picture.py``): the browser draws it as it is, a saved notebook keeps it as an image
and a test reads it back as XML. Coordinates are pixels, y growing downwards.
"""
import html
import math


def number(x):
    """A coordinate, short: 12.5, 3, -0.25 (no 12.500000001)."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def attrs(**values):
    """`` key="value"`` pairs; ``class_`` is written ``class``, ``font_size`` ``font-size``;
    None is left out."""
    out = []
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, float):
            value = number(value)
        out.append(f' {key.rstrip("_").replace("_", "-")}="{html.escape(str(value))}"')
    return "".join(out)


def document(width, height, body, font="sans-serif", label=""):
    """A whole picture, ``width`` × ``height`` px, its ``viewBox`` the same (so that it can be
    shrunk as a whole); ``label`` is what a screen reader says."""
    w, h = number(width), number(height)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            f'viewBox="0 0 {w} {h}" font-family="{html.escape(font)}"'
            f'{attrs(role="img", aria_label=label or None)}>{"".join(body)}</svg>')


def group(body, title=None, **values):
    """A ``<g>``: its ``title`` is the tooltip the browser shows on hover."""
    tip = f"<title>{html.escape(title)}</title>" if title else ""
    return f"<g{attrs(**values)}>{tip}{''.join(body)}</g>"


def polyline(points, **values):
    """One line through ``points`` [(x, y), ...]."""
    if len(points) < 2:
        return ""
    d = "M" + " L".join(f"{number(x)} {number(y)}" for x, y in points)
    return f'<path d="{d}" fill="none"{attrs(**values)}/>'


def polylines(lines, **values):
    """Several lines in one ``<path>`` (one style): fewer elements than a path each."""
    d = " ".join("M" + " L".join(f"{number(x)} {number(y)}" for x, y in points)
                 for points in lines if len(points) >= 2)
    return f'<path d="{d}" fill="none"{attrs(**values)}/>' if d else ""


def marker(shape, x, y, size, **values):
    """A filled shape of width ``size`` centred on (x, y): circle, square, diamond,
    triangle-right, triangle (pointing along ``angle`` degrees; the arrowheads) or star."""
    r = size / 2
    if shape == "circle":
        return f"<circle{attrs(cx=float(x), cy=float(y), r=float(r), **values)}/>"
    if shape == "square":
        return rect(x - r, y - r, size, size, **values)
    if shape == "diamond":
        points = [(x, y - r * 1.2), (x + r * 1.2, y), (x, y + r * 1.2), (x - r * 1.2, y)]
    elif shape == "triangle-right":
        points = [(x - r, y - r), (x + r, y), (x - r, y + r)]
    elif shape == "star":
        points = [(x + (r if k % 2 == 0 else r * 0.45) * math.sin(k * math.pi / 5),
                   y - (r if k % 2 == 0 else r * 0.45) * math.cos(k * math.pi / 5))
                  for k in range(10)]
    else:
        raise ValueError(f"svg.marker: no shape {shape!r}")
    return polygon(points, **values)


def arrowhead(x, y, angle, size, **values):
    """A triangle whose tip is at (x, y), pointing along ``angle`` (degrees)."""
    a = math.radians(angle)
    back_x, back_y = x - size * math.cos(a), y - size * math.sin(a)
    side_x, side_y = -math.sin(a) * size * 0.45, math.cos(a) * size * 0.45
    return polygon([(x, y), (back_x + side_x, back_y + side_y),
                    (back_x - side_x, back_y - side_y)], **values)


def rect(x, y, width, height, **values):
    """A rectangle, its top left corner at (x, y)."""
    corner = attrs(x=float(x), y=float(y), width=float(width), height=float(height), **values)
    return f"<rect{corner}/>"


def polygon(points, **values):
    d = " ".join(f"{number(px)},{number(py)}" for px, py in points)
    return f'<polygon points="{d}"{attrs(**values)}/>'


def text(x, y, words, size, bold=False, italic=False, anchor="middle", **values):
    """``words`` centred (``anchor``) on (x, y), vertically centred too."""
    style = attrs(x=float(x), y=float(y), font_size=float(size), text_anchor=anchor,
                  dominant_baseline="central", font_weight="bold" if bold else None,
                  font_style="italic" if italic else None, **values)
    return f"<text{style}>{html.escape(words)}</text>"
