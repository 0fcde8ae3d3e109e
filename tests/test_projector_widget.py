"""The projector widget without a browser: the figure it builds and how it reacts."""
import re

import numpy as np
import pytest

pytest.importorskip("plotly")
pytest.importorskip("ipywidgets")

from widgets.projector import Projector  # noqa: E402


def make_projector(num_points=60, **options):
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(num_points, 8))
    metadata = {"word": [f"w{i}" for i in range(num_points)],
                "group": [["red", "green", "blue"][i % 3] for i in range(num_points)]}
    return Projector(vectors, metadata, **options)


def click(figure, point_index):
    """What the browser sends when a point is clicked."""
    figure._js2py_pointsCallback = {
        "event_type": "plotly_click",
        "points": {"xs": [0.0], "ys": [0.0], "point_indexes": [point_index],
                   "trace_indexes": [0]}}


def test_one_trace_with_per_point_colour_arrays():
    view = make_projector().widget
    assert len(view.figure.data) == 1
    trace = view.figure.data[0]
    assert trace.type == "scattergl"
    assert len(trace.x) == len(trace.marker.color) == len(trace.hovertext) == 60
    assert np.asarray(trace.x).dtype == np.float32
    # Coloured by the last column, "group": one colour level per group.
    levels = np.asarray(trace.marker.color)
    groups = np.array(view.projector.columns["group"])
    assert len(set(levels)) == 3
    for group in ("red", "green", "blue"):
        assert len(set(levels[groups == group])) == 1
    assert "blue" in view.legend.value and "#E69F00" in view.legend.value


def highlighted(trace):
    """Indices of the points that are not dimmed (dimmed points have level -1)."""
    return np.flatnonzero(np.asarray(trace.marker.color) >= 0).tolist()


def test_switching_to_3d_still_uses_one_trace():
    view = make_projector().widget
    view.dims.value = 3
    assert [t.type for t in view.figure.data] == ["scatter3d"]
    assert view.figure.layout.scene.zaxis.title.text.startswith("PC3")


def test_search_highlights_matches_and_dims_the_rest():
    view = make_projector().widget
    view.search_box.value = "w1"                  # w1, w10..w19
    trace = view.figure.data[0]
    assert highlighted(trace) == [1] + list(range(10, 20))
    assert view.match_count.value.startswith("11 match(es)")
    assert trace.mode == "markers+text" and trace.text[1] == "w1" and trace.text[0] == ""
    view.regex.value = True
    view.search_box.value = "^w1$"
    assert highlighted(trace) == [1]


def test_bad_regex_is_reported_in_the_status_line():
    view = make_projector().widget
    view.regex.value = True
    view.search_box.value = "w("
    assert "invalid regular expression" in view.status.value


def test_click_lists_the_nearest_neighbours_in_the_original_space():
    projector = make_projector()
    view = projector.widget
    view.k.value = 5
    click(view.figure, 7)
    assert view.selected == 7
    expected = projector.neighbours(7, k=5)
    listed = view.neighbour_list.value
    assert listed.count("<tr>") == 6          # header + 5 neighbours
    positions = [listed.index(f">{name}<") for name, _ in expected]
    assert positions == sorted(positions)
    assert f"{expected[0][1]:.4f}" in listed
    sizes = view.figure.data[0].marker.size
    assert sizes[7] == max(sizes)
    # Changing the metric recomputes the list.
    view.metric.value = "euclidean"
    assert "euclidean distance" in view.neighbour_list.value
    assert projector.neighbours(7, k=5, metric="euclidean")[0][0] in view.neighbour_list.value


def test_isolate_shows_only_the_selection_and_maps_clicks_back():
    projector = make_projector()
    view = projector.widget
    view.k.value = 3
    click(view.figure, 10)
    view.isolate_button.click()
    trace = view.figure.data[0]
    assert len(trace.x) == 4
    shown_rows = view._rows().tolist()
    assert 10 in shown_rows
    # A click on the isolated picture still names the right data row.
    click(view.figure, shown_rows.index(10))
    assert view.selected == 10
    view.show_all_button.click()
    assert len(view.figure.data[0].x) == 60


def test_pca_components_and_variance_text():
    view = make_projector().widget
    view.components[0].value = 2
    assert view.figure.layout.xaxis.title.text.startswith("PC3 (")
    assert view.variance.value.startswith("variance explained: PC1 ")


def test_tsne_in_the_background_updates_progress_and_figure():
    projector = make_projector()
    view = projector.widget
    view.method.value = "t-SNE"
    view.iterations.value = 50
    before = np.array(view.figure.data[0].x)
    view.run_tsne().join(timeout=60)
    assert view.progress.value == view.progress.max == 300
    assert projector.method == "t-SNE"
    np.testing.assert_allclose(view.figure.data[0].x, projector.coordinates[:, 0])
    assert not np.allclose(view.figure.data[0].x, before)


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
    assert len(view.figure.data[0].x) == 50


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
    np.testing.assert_allclose(view.figure.data[0].x, projector.coordinates[:, 0])


def test_images_appear_for_the_selected_point():
    images = np.random.default_rng(0).random((60, 8, 8))
    view = make_projector(images=images).widget
    click(view.figure, 3)
    assert view.selection.value.count("data:image/png;base64,") == 1
    assert view.neighbour_list.value.count("data:image/png;base64,") == view.k.value


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
    assert widget.figure.data[0].type == "scatter3d"


def test_neighbour_labels_do_not_overlap():
    """Issue 26: the labels of a point's neighbours ran into one blob."""
    from widgets.projector.labels import label_box, place_labels
    rng = np.random.default_rng(1)
    vectors = np.concatenate([rng.normal(scale=0.05, size=(15, 8)),
                              rng.normal(loc=5, size=(45, 8))])
    projector = Projector(vectors, {"word": [f"word{i}" for i in range(60)]})
    view = projector.widget
    view.k.value = 14
    click(view.figure, 0)
    trace = view.figure.data[0]
    shown = [i for i, t in enumerate(trace.text) if t]
    assert 0 in shown and len(shown) >= 5          # the selection and some neighbours
    points = view._on_screen(np.column_stack([trace.x, trace.y])[shown])
    boxes = [label_box(x, y, trace.text[i], trace.textposition[i])
             for (x, y), i in zip(points, shown)]
    assert all(50 <= x0 and x1 <= 590 and 10 <= y0 and y1 <= 480      # inside the plot
               for x0, y0, x1, y1 in boxes)
    for a in range(len(boxes)):
        for b in range(a + 1, len(boxes)):
            (ax0, ay0, ax1, ay1), (bx0, by0, bx1, by1) = boxes[a], boxes[b]
            assert not (min(ax1, bx1) > max(ax0, bx0) and min(ay1, by1) > max(ay0, by0))
    # two points on one spot: the second label goes to another side
    sides = place_labels([(100, 100), (100, 100), (101, 100)], ["alpha", "beta", "gamma"])
    assert sides[0] == "middle right" and sides[1] not in (None, "middle right")


def test_the_projector_follows_the_theme_and_wraps_its_side_panel():
    view = make_projector().widget
    assert view.figure.layout.paper_bgcolor == "rgba(0,0,0,0)"
    view.theme.dark = True
    assert view.figure.layout.template.layout.paper_bgcolor == "rgb(17,17,17)"
    picture_and_side = view.children[7]
    assert picture_and_side.layout.flex_flow == "row wrap"
    assert picture_and_side.children[0].layout.overflow == "auto"


def test_the_figure_takes_the_output_areas_width_and_places_labels_inside_it():
    """The browser reports the output area's width (``ThemeProbe.width``): the figure takes it,
    up to 600 px and down to 320 (below that it scrolls), and the labels stay inside."""
    rng = np.random.default_rng(1)
    projector = Projector(rng.normal(size=(40, 8)), {"word": [f"word{i}" for i in range(40)]})
    view = projector.widget
    assert view.figure.layout.width == 600                  # before a browser has said
    view.theme.width = 404
    assert view.width == view.figure.layout.width == 400
    view.k.value = 12
    click(view.figure, 3)
    trace = view.figure.data[0]
    shown = [i for i, t in enumerate(trace.text) if t]
    assert len(shown) >= 5
    from widgets.projector.labels import label_box
    points = view._on_screen(np.column_stack([trace.x, trace.y])[shown])
    assert all(50 <= x and x <= 390 for x, _ in points)      # the points in 400 px
    assert all(x1 <= 390 for x0, y0, x1, y1 in (label_box(x, y, trace.text[i],
                                                           trace.textposition[i])
                                                 for (x, y), i in zip(points, shown)))
    view.theme.width = 2000
    assert view.figure.layout.width == 600
    view.theme.width = 100
    assert view.figure.layout.width == 320


def test_labels_shown_when_the_notebook_narrows_are_placed_again_in_the_new_width(monkeypatch):
    from widgets.projector import widget as module
    rng = np.random.default_rng(1)
    projector = Projector(rng.normal(size=(40, 8)), {"word": [f"word{i}" for i in range(40)]})
    view = projector.widget
    view.k.value = 12
    click(view.figure, 3)                                   # labels placed in 600 px
    areas = []
    place = module.place_labels
    monkeypatch.setattr(module, "place_labels",
                        lambda points, texts, *rest: areas.append(rest[-1]) or
                        place(points, texts, *rest))
    view.theme.width = 404                                  # then the notebook narrows
    assert areas and areas[-1][2] == 390                    # placed again, in 400 px
    trace = view.figure.data[0]
    shown = [i for i, t in enumerate(trace.text) if t]
    assert len(shown) >= 5
