"""A static word map: 2-D points coloured by group, a few words of each group written on it.

    >>> word_map(coordinates, vocab.words, metadata["kind"], title="t-SNE")

The picture a saved notebook keeps (the Projector needs a kernel), drawn as the projector draws
its own (``drawing.py``): each group in the colour the projector gives it (``colours.py``), its
legend at the top, and the words written after all the dots, each on the side of its dot where
it overlaps no other word and no other named dot (``labels.py``); a word that finds no free side
is left off. Its background is white, as a printed figure's, so that it reads in a dark
notebook too. (Written with plotly, "english" and "spanish" printed as one "englishpanish" and
"seoul" sat on "the".) The picture is an SVG ``width`` × ``height`` px, shown at that size.
"""
import itertools

from IPython.display import SVG

from .colours import colour_points
from .drawing import Scatter


def word_map(coordinates, words, groups, named=2, title=None, width=760, height=560):
    """``coordinates``: an (n, 2) array; ``words`` and ``groups``: n names each; ``named``:
    how many words of each group are written (all at once would pile up): the first word of
    every group, then the second of every group, and so on. Returns the picture, an
    ``IPython.display.SVG``."""
    colours, legend = colour_points(groups)
    rows = {}
    for row, group in enumerate(groups):
        rows.setdefault(group, []).append(row)
    firsts = [rows[name][:named] for name, _ in legend]
    labelled = [row for rank in itertools.zip_longest(*firsts) for row in rank
                if row is not None]
    scatter = Scatter(coordinates, colours, tips=[str(w) for w in words], labelled=labelled,
                      legend=legend, title=title or "", axis_titles=["", ""],
                      background=True)
    return SVG(data=scatter.svg(width, height))
