"""Colours of the inspector: the shades of a colour scale, the words on the wires, the themes.

A colour scale (``edugraph.view.frame.ColourScale``) gives each number a shade from -4 to 4;
here each shade gets a colour of ColorBrewer's red-blue palette (colour-blind safe): blue is
positive, red negative, white about 0, one shade stronger per power of ten. The same shades
colour the nodes and the wires (by the gradient they carry).
"""
import numpy as np

# ColorBrewer RdBu, 9 classes: shade -4 … 4
SHADES = ["#b2182b", "#d6604d", "#f4a582", "#fddbc7", "#f7f7f7",
          "#d1e5f0", "#92c5de", "#4393c3", "#2166ac"]
DEVICE = {"cpu": "#4D4D4D", "gpu": "#76B900", "sim": "#8E44AD"}
WARNING = "#D7191C"

# What changes with JupyterLab's theme: words, lines and the rings drawn on the picture.
THEMES = {
    "light": dict(text="#1f1f1f", muted="#5f5f5f", value="#1b7837", grad="#b2182b",
                  gate="#7b3294", rule="#b84c00", active="#e66100", wire="#8c8c8c",
                  casing="#d0d0d0", no_number="#d9d9d9", box="#f2f2f2", box_line="#7f7f7f",
                  selected="#000000"),
    "dark": dict(text="#e8e8e8", muted="#b0b0b0", value="#8fd18f", grad="#ff8f80",
                 gate="#c9a0dc", rule="#ffb000", active="#ffb000", wire="#9a9a9a",
                 casing="#4a4a4a", no_number="#5a5a5a", box="#2e2e2e", box_line="#a0a0a0",
                 selected="#ffffff"),
}


def shade(level, theme):
    """The fill colour of a shade (None: no number yet, grey)."""
    if level is None:
        return THEMES[theme]["no_number"]
    return SHADES[int(np.clip(level, -4, 4)) + 4]


def ink_on(level):
    """Text colour readable on a shade: white on the two strongest shades, else black."""
    return "#ffffff" if level is not None and abs(level) >= 3 else "#000000"


def device_colour(device):
    return DEVICE.get(device.split(":")[0], DEVICE["cpu"])
