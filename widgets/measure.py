"""How wide a text is on screen, without a browser: for laying labels out so none overlap.

The widths are DejaVu Sans's (Verdana's are within a few per cent), a little generous; the
figures ask for these fonts first, so the estimate holds where they are installed and errs on
the wide side elsewhere. The browser tests measure the real text boxes.
"""
FONT = "DejaVu Sans, Verdana, sans-serif"

_NARROW, _WIDE = set("ijlI.,:;'!|·ı()[]f t"), set("mwMW×÷=+−∇∂⊙≥≤@Σ")


def text_width(text, px, bold=False):
    """The width of ``text`` in pixels at font size ``px``."""
    width = 0.0
    for ch in text:
        if ch in _NARROW:
            width += 0.34
        elif ch in _WIDE:
            width += 0.9
        elif ch.isupper():
            width += 0.74
        else:
            width += 0.64
    return width * px * (1.1 if bold else 1.0) + 4
