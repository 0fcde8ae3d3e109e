"""A static word map: 2-D points coloured by group, a few words of each group written on it.

    >>> word_map(coordinates, vocab.words, metadata["kind"], title="t-SNE").show()

The picture a saved notebook keeps (the Projector needs a kernel). The dots are drawn a trace
per group (one legend entry and colour each), and every word after all of them in one text
trace: written with its own group's dots, a word was covered by the dots of the groups drawn
later (lesson 7's "drink" under the verbs).
"""
import plotly.graph_objects as go


def word_map(coordinates, words, groups, named=2, title=None, width=760, height=560):
    """``coordinates``: an (n, 2) array; ``words`` and ``groups``: n names each; ``named``:
    how many words of each group are written (all at once would pile up), the first above
    its dot, the second below, and so on. Point at a dot for its word."""
    figure = go.Figure()
    written, sides = [], []
    for group in sorted(set(groups)):
        rows = [i for i, g in enumerate(groups) if g == group]
        figure.add_scatter(x=coordinates[rows, 0].round(2), y=coordinates[rows, 1].round(2),
                           mode="markers", name=group, hovertext=[words[i] for i in rows])
        written += rows[:named]
        sides += [("top center", "bottom center")[k % 2] for k in range(len(rows[:named]))]
    figure.add_scatter(x=coordinates[written, 0].round(2), y=coordinates[written, 1].round(2),
                       mode="text", text=[words[i] for i in written], showlegend=False,
                       hoverinfo="skip", name="words", textposition=sides,
                       # a halo in the background's colour: a word over a cluster still reads
                       textfont=dict(shadow="auto"))
    figure.update_layout(template="none", width=width, height=height, title=title)
    return figure
