"""How the widgets fit the notebook they are in.

A widget's picture follows the notebook's theme and width by itself (``widgets/picture.py``
reports both); HTML parts are styled with JupyterLab's CSS variables
(``var(--jp-ui-font-color1)``), which follow the theme by themselves. What is left here is the
layout of rows of controls.
"""
import ipywidgets as w


def wrapping():
    """The layout of a row whose items wrap onto the next line in a narrow notebook (a new
    Layout each time: boxes sharing one would share their ``display`` too)."""
    return w.Layout(flex_flow="row wrap", align_items="center")
