"""The projector widget without a browser: the picture it draws and how it reacts.

The picture is the widget's synced state (an SVG, ``widgets/picture.py``): what every view of
the widget draws, whenever it is made. The tests read it back as the browser would draw it.
"""
import re

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from tests.svg_picture import NS, Drawn  # noqa: E402
from widgets.projector import Projector  # noqa: E402
from widgets.projector.colours import DIMMED  # noqa: E402


def make_projector(num_points=60, **options):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(num_points, 8))
    metadata = {"word": [f"w{i}" for i in range(num_points)],
                "group": [["red", "green", "blue"][i % 3] for i in range(num_points)]}
    return Projector(vectors, metadata, **options)


def click(view, row):
    """What the browser sends when the point of data row ``row`` is clicked."""
    view.picture._on_message(view.picture, {"click": str(row)}, [])


class Points:
    """The points and labels a projector's picture draws: {data row: (x, y, diameter, colour,
    tooltip)} and {label: (x, y)} of the labels written on it."""

    def __init__(self, view):
        self.drawn = Drawn(view.picture.svg)
        self.dots = {int(c.get("data-id")): (float(c.get("cx")), float(c.get("cy")),
                                             2 * float(c.get("r")), c.get("fill"),
                                             c.find(NS + "title").text)
                     for c in self.drawn.elements("circle") if c.get("data-id") is not None}
        self.labels = {t.text: (float(t.get("x")), float(t.get("y")))
                       for t in self.drawn.text_elements("label")}

    def highlighted(self, theme="light"):
        return sorted(row for row, dot in self.dots.items() if dot[3] != DIMMED[theme])

    def place(self, rows):
        return np.array([self.dots[r][:2] for r in rows])


def assert_drawn_linearly(points, coordinates):
    """The picture's points are the coordinates, scaled into the plot (y upwards): each
    axis one straight line through every point (2-D)."""
    place = points.place(range(len(coordinates)))
    for axis, sign in ((0, 1), (1, -1)):
        slope, offset = np.polyfit(coordinates[:, axis], place[:, axis], 1)
        assert sign * slope > 0
        np.testing.assert_allclose(place[:, axis], slope * coordinates[:, axis] + offset,
                                   atol=0.02)


def test_the_synced_state_is_the_current_frame_after_every_update():
    """Issue 41: plotly's FigureWidget kept in its synced state the traces it was made with
    and sent every change as a message; a view made later drew bare axes. Here the state is
    the picture: after each change it is the SVG of the view as it is now, which a view made
    at any time draws."""
    projector = make_projector()
    view = projector.widget
    picture = view.picture
    assert picture.trait_metadata("svg", "sync") and picture.keys.count("svg") == 1
    assert "figure" not in vars(view)           # no plotly figure left

    def current():
        return view.scatter().svg(view.width, 520, picture.theme)

    assert picture.get_state()["svg"] == current()
    assert len(Points(view).dots) == 60
    assert_drawn_linearly(Points(view), projector.coordinates)
    steps = [lambda: projector.tsne(perplexity=10, iterations=50),
             lambda: setattr(view.search_box, "value", "w2"),
             lambda: click(view, 7),
             lambda: setattr(view.colour_by, "value", "(none)"),
             lambda: setattr(picture, "dark", True),
             lambda: setattr(picture, "room", 450),
             lambda: projector.pca(3),
             lambda: setattr(view.turn, "value", 90),
             lambda: view.clear_button.click()]
    seen = {picture.svg}
    for step in steps:
        step()
        assert picture.get_state()["svg"] == current()
        seen.add(picture.svg)
    assert len(seen) == len(steps) + 1          # every change drew a new picture
    assert Drawn(picture.svg).width == 446 and picture.theme == "dark"


def test_tsne_progress_is_drawn_while_it_runs_and_its_end_always():
    projector = make_projector()
    view = projector.widget
    frames = []
    view.picture.observe(lambda change: frames.append(change["new"]), "svg")
    projector.tsne(perplexity=10, iterations=300)
    assert frames and frames[-1] == view.picture.svg
    assert_drawn_linearly(Points(view), projector.coordinates)   # the final coordinates


def test_one_circle_per_point_coloured_by_the_last_column():
    view = make_projector().widget
    points = Points(view)
    assert sorted(points.dots) == list(range(60))
    assert [points.dots[r][4] for r in range(3)] == ["w0", "w1", "w2"]     # tooltips
    colours = {group: {points.dots[r][3] for r in range(60)
                       if view.projector.columns["group"][r] == group}
               for group in ("red", "green", "blue")}
    assert all(len(c) == 1 for c in colours.values())
    assert len(set.union(*colours.values())) == 3
    assert "blue" in view.legend.value and "#E69F00" in view.legend.value


def test_switching_to_3d_draws_the_cube_turned_as_the_sliders_say():
    view = make_projector().widget
    assert view.rotation.layout.display == "none"
    view.dims.value = 3
    assert view.rotation.layout.display == ""
    drawn = Drawn(view.picture.svg)
    assert drawn.texts("axis-title")[2].startswith("PC3")
    assert len(Points(view).dots) == 60
    before = Points(view).place(range(60))
    view.turn.value = 120
    assert not np.allclose(Points(view).place(range(60)), before)


def test_search_highlights_matches_and_dims_the_rest():
    view = make_projector().widget
    view.search_box.value = "w1"                  # w1, w10..w19
    points = Points(view)
    assert points.highlighted() == [1] + list(range(10, 20))
    assert view.match_count.value.startswith("11 match(es)")
    assert "w1" in points.labels and "w0" not in points.labels
    view.regex.value = True
    view.search_box.value = "^w1$"
    assert Points(view).highlighted() == [1]


def test_bad_regex_is_reported_in_the_status_line():
    view = make_projector().widget
    view.regex.value = True
    view.search_box.value = "w("
    assert "invalid regular expression" in view.status.value


def test_click_lists_the_nearest_neighbours_in_the_original_space():
    projector = make_projector()
    view = projector.widget
    view.k.value = 5
    click(view, 7)
    assert view.selected == 7
    expected = projector.neighbours(7, k=5)
    listed = view.neighbour_list.value
    assert listed.count("<tr>") == 6          # header + 5 neighbours
    positions = [listed.index(f">{name}<") for name, _ in expected]
    assert positions == sorted(positions)
    assert f"{expected[0][1]:.4f}" in listed
    dots = Points(view).dots
    assert dots[7][2] == max(d[2] for d in dots.values())
    # Changing the metric recomputes the list.
    view.metric.value = "euclidean"
    assert "euclidean distance" in view.neighbour_list.value
    assert projector.neighbours(7, k=5, metric="euclidean")[0][0] in view.neighbour_list.value


def test_isolate_shows_only_the_selection_and_maps_clicks_back():
    projector = make_projector()
    view = projector.widget
    view.k.value = 3
    click(view, 10)
    view.isolate_button.click()
    shown_rows = sorted(Points(view).dots)
    assert len(shown_rows) == 4 and 10 in shown_rows
    assert shown_rows == sorted([10] + view.neighbour_rows.tolist())
    view.show_all_button.click()
    assert len(Points(view).dots) == 60


def test_pca_components_and_variance_text():
    view = make_projector().widget
    view.components[0].value = 2
    assert Drawn(view.picture.svg).texts("axis-title")[0].startswith("PC3 (")
    assert view.variance.value.startswith("variance explained: PC1 ")


def test_tsne_in_the_background_updates_progress_and_figure():
    projector = make_projector()
    view = projector.widget
    view.method.value = "t-SNE"
    view.iterations.value = 50
    before = Points(view).place(range(60))
    view.run_tsne().join(timeout=60)
    assert view.progress.value == view.progress.max == 300
    assert projector.method == "t-SNE"
    assert_drawn_linearly(Points(view), projector.coordinates)
    assert not np.allclose(Points(view).place(range(60)), before)


def test_export_button_writes_the_coordinates(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    view = make_projector().widget
    view.export_button.click()
    lines = (tmp_path / "projection.tsv").read_text().splitlines()
    assert lines[0] == "index\tx\ty\tword\tgroup" and len(lines) == 61
    assert "projection.tsv" in view.status.value
    view.export_button.click()                  # a second export never replaces the first
    assert (tmp_path / "projection.tsv").read_text().splitlines() == lines
    assert (tmp_path / "projection_2.tsv").exists() and "projection_2.tsv" in view.status.value


def test_sampling_notice_is_visible():
    view = make_projector(num_points=200, max_points=50, stratify="group").widget
    assert "Showing 50 of 200 points (stratified sample" in view.notice.value
    assert len(Points(view).dots) == 50


def test_text_form_is_deterministic_for_saved_notebooks():
    bundle = make_projector()._repr_mimebundle_()
    assert re.fullmatch(r"Projector: 60 points x 8 dimensions\n"
                        r"view: PCA 2-D, axes: PC1 \(\d+\.\d%\), PC2 \(\d+\.\d%\)\n"
                        r"metadata: word, group \(labels: word\)", bundle["text/plain"])
    assert make_projector()._repr_mimebundle_()["text/plain"] == bundle["text/plain"]
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_refresh_moves_the_widget_points():
    layer = type("Layer", (), {})()
    layer.embeddings = np.random.default_rng(0).normal(size=(30, 4))
    projector = Projector(layer)
    view = projector.widget
    layer.embeddings = layer.embeddings * 2
    projector.refresh()
    assert_drawn_linearly(Points(view), projector.coordinates)


def test_images_appear_for_the_selected_point():
    images = np.random.default_rng(0).random((60, 8, 8))
    view = make_projector(images=images).widget
    click(view, 3)
    assert view.selection.value.count("data:image/png;base64,") == 1
    assert view.neighbour_list.value.count("data:image/png;base64,") == view.k.value
    assert view.picture.report_hover                 # the browser tells where the pointer is
    assert view.hover_image.layout.display == "none"
    view.picture._on_message(view.picture, {"hover": "5"}, [])
    from widgets.projector.images import png
    assert view.hover_image.value == png(view.projector.images[5])
    assert view.hover_image.layout.display == ""
    assert not make_projector().widget.picture.report_hover     # no images: no reports


def test_the_controls_show_a_projection_made_in_code():
    """Lesson 7 runs projector.tsne(...) in a cell: the menu must not say PCA over t-SNE."""
    p = make_projector()
    widget = p.widget
    p.tsne(perplexity=10, iterations=100)
    assert (widget.method.value, widget.perplexity.value, widget.iterations.value) == \
        ("t-SNE", 10, 100)
    assert p.method == "t-SNE"                 # setting the menu did not re-project
    p.pca(3, [1, 2, 0])
    assert (widget.method.value, widget.dims.value) == ("PCA", 3)
    assert [d.value for d in widget.components] == [1, 2, 0]
    assert len(Drawn(widget.picture.svg).texts("axis-title")) == 3


def label_boxes(view):
    """{label: its rectangle (x0, y0, x1, y1) in px} of every label on the picture."""
    from widgets.measure import text_width
    from widgets.projector.drawing import LABEL_PX
    return {text: (x - 2, y - LABEL_PX * 0.65, x - 2 + text_width(text, LABEL_PX),
                   y + LABEL_PX * 0.65) for text, (x, y) in Points(view).labels.items()}


def test_neighbour_labels_do_not_overlap():
    """Issue 26: the labels of a point's neighbours ran into one blob."""
    from widgets.projector.labels import place_labels
    rng = np.random.default_rng(1)
    vectors = np.concatenate([rng.normal(scale=0.05, size=(15, 8)),
                              rng.normal(loc=5, size=(45, 8))])
    projector = Projector(vectors, {"word": [f"word{i}" for i in range(60)]})
    view = projector.widget
    view.k.value = 14
    click(view, 0)
    boxes = label_boxes(view)
    assert "word0" in boxes and len(boxes) >= 5          # the selection and some neighbours
    x0, y0, x1, y1 = view.scatter().area(600, 520)
    assert all(x0 <= bx0 and bx1 <= x1 and y0 <= by0 and by1 <= y1       # inside the plot
               for bx0, by0, bx1, by1 in boxes.values())
    boxes = list(boxes.values())
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = boxes[a], boxes[b]
            assert not (min(ax1, bx1) > max(ax0, bx0) and min(ay1, by1) > max(ay0, by0))
    # two points on one spot: the second label goes to another side
    sides = place_labels([(100, 100), (100, 100), (101, 100)], ["alpha", "beta", "gamma"])
    assert sides[0] == "middle right" and sides[1] not in (None, "middle right")


def test_the_projector_follows_the_theme_and_wraps_its_side_panel():
    view = make_projector().widget
    light = Drawn(view.picture.svg)
    view.picture.dark = True                         # what the browser reports
    dark = Drawn(view.picture.svg)
    assert light.text_elements("x-tick")[0].get("fill") != \
        dark.text_elements("x-tick")[0].get("fill")
    assert "#000000" not in {c for _, _, _, c, _ in Points(view).dots.values()}
    picture_and_side = view.children[8]
    assert picture_and_side.layout.flex_flow == "row wrap"
    assert picture_and_side.children[0].children[0] is view.picture


def test_the_picture_takes_its_boxs_width_and_places_labels_inside_it():
    """The browser reports the width the picture has (``Picture.room``): the points are drawn
    in it, up to 600 px and down to 320 (below that the picture shrinks as a whole), and the
    labels stay inside."""
    rng = np.random.default_rng(1)
    projector = Projector(rng.normal(size=(40, 8)), {"word": [f"word{i}" for i in range(40)]})
    view = projector.widget
    assert Drawn(view.picture.svg).width == 600            # before a browser has said
    view.picture.room = 404
    assert view.width == Drawn(view.picture.svg).width == 400
    view.k.value = 12
    click(view, 3)
    boxes = label_boxes(view)
    assert len(boxes) >= 5
    x0, _, x1, _ = view.scatter().area(400, 520)
    assert all(x0 <= x <= x1 for x, _ in Points(view).place(range(40)))   # in 400 px
    assert all(bx1 <= x1 for _, _, bx1, _ in boxes.values())
    view.picture.room = 2000
    assert Drawn(view.picture.svg).width == 600
    view.picture.room = 100
    assert Drawn(view.picture.svg).width == 320


def test_labels_shown_when_the_notebook_narrows_are_placed_again_in_the_new_width():
    rng = np.random.default_rng(1)
    projector = Projector(rng.normal(size=(40, 8)), {"word": [f"word{i}" for i in range(40)]})
    view = projector.widget
    view.k.value = 12
    click(view, 3)                                          # labels placed in 600 px
    wide = label_boxes(view)
    view.picture.room = 404                                 # then the notebook narrows
    narrow = label_boxes(view)
    assert len(narrow) >= 5 and narrow != wide
    assert all(x1 <= 400 - 12 for _, _, x1, _ in narrow.values())


def test_the_word_map_names_words_apart_in_the_projectors_colours():
    """Lesson 7's static map printed "english" and "spanish" as "englishpanish" and "seoul" on
    "the", and coloured the capitals blue where the projector draws them orange."""
    from widgets.measure import text_width
    from widgets.projector import word_map
    from widgets.projector.colours import colour_points
    from widgets.projector.drawing import LABEL_PX
    words = ["drink", "eat", "go", "english", "spanish", "seoul", "the", "in", "paris"]
    kinds = ["verb"] * 3 + ["language"] * 2 + ["capital", "other", "other", "capital"]
    coordinates = np.array([[0, 0], [2, 0], [5.05, 5.2], [5, 5], [5.2, 5.05], [8, 1],
                            [8.1, 1.05], [0.5, 2], [8.5, 3]])
    drawn = Drawn(word_map(coordinates, words, kinds, title="t-SNE", width=700).data)
    assert drawn.width == 700
    labels = drawn.text_elements("label")
    named = [t.text for t in labels]
    assert {"english", "spanish", "seoul", "the"} <= set(named) and len(named) == 8
    boxes = [(float(t.get("x")), float(t.get("y")) - LABEL_PX * 0.65,
              float(t.get("x")) + text_width(t.text, LABEL_PX) - 4,
              float(t.get("y")) + LABEL_PX * 0.65) for t in labels]
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = boxes[a], boxes[b]
            assert not (min(ax1, bx1) > max(ax0, bx0) and min(ay1, by1) > max(ay0, by0)), \
                (named[a], named[b])
    colours, _ = colour_points(kinds)                      # as the projector colours them
    fills = {int(c.get("data-id")): c.get("fill") for c in drawn.elements("circle")
             if c.get("data-id") is not None}
    assert [fills[i] for i in range(len(words))] == list(colours)
    assert fills[5] == "#E69F00"                           # capitals orange
    assert {t.text for t in drawn.text_elements("legend")} == set(kinds)
