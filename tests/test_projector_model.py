"""The projector's maths and data handling, without widgets."""
import re
import sys

import numpy as np
import pytest

from widgets.projector import Projector
from widgets.projector import data, neighbours, projections, sampling
from widgets.projector.colours import (DIMMED, OKABE_ITO, OTHER, TABLEAU_10, TABLEAU_20,
                                      VIRIDIS, colour_points, viridis)
from widgets.projector.images import png, to_images


def clusters(num_per_cluster=40, dims=10, seed=0):
    """Three tight, far-apart Gaussian blobs and their cluster ids."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=20, size=(3, dims))
    labels = np.repeat(np.arange(3), num_per_cluster)
    return centres[labels] + rng.normal(size=(len(labels), dims)), labels


# ---- inputs ------------------------------------------------------------------------
class FakeEmbeddingLayer:
    """Duck-typed stand-in for an Embedding layer: only ``weight`` matters."""
    def __init__(self, weight):
        self.weight = weight


def test_vectors_from_numpy_tensor_on_another_device_and_layer():
    import edugraph as eg
    matrix = np.arange(12, dtype=np.float64).reshape(4, 3)
    # sim:0 refuses np.asarray, like CuPy: the projector must go through .numpy().
    tensor = eg.tensor(matrix, device="sim:0")
    for source in (matrix, tensor, FakeEmbeddingLayer(tensor), FakeEmbeddingLayer(matrix)):
        vectors = data.to_matrix(source)
        assert vectors.dtype == np.float32
        np.testing.assert_array_equal(vectors, matrix)
    # edugraph's layers keep their tables as PyTorch's `weight` and Keras's `embeddings`.
    layer = eg.nn.Embedding(6, 3)
    np.testing.assert_array_equal(Projector(layer).vectors, layer.weight.numpy())
    keras_layer = eg.keras.layers.Embedding(6, 3)
    keras_layer.build_for((None, 2))
    np.testing.assert_array_equal(Projector(keras_layer).vectors,
                                  keras_layer.embeddings.numpy())


def test_unreadable_vectors_say_what_is_accepted():
    with pytest.raises(TypeError, match=r"cannot read vectors from a FakeEmbeddingLayer.*"
                                        r"build it"):
        data.to_matrix(FakeEmbeddingLayer(FakeEmbeddingLayer(None)))
    with pytest.raises(TypeError, match=r"vectors are None; for a layer, build it"):
        data.to_matrix(FakeEmbeddingLayer(None))


def test_metadata_from_dict_table_and_list():
    pandas = pytest.importorskip("pandas")
    table = pandas.DataFrame({"word": ["a", "b", "c"], "count": [1, 2, 3]})
    assert data.to_columns(table, 3) == {"word": ["a", "b", "c"], "count": [1, 2, 3]}
    assert data.to_columns({"w": ("a", "b", "c")}, 3) == {"w": ["a", "b", "c"]}
    assert data.to_columns(["a", "b", "c"], 3) == {"label": ["a", "b", "c"]}


def test_labels_given_as_a_list_become_the_label_column():
    projector = Projector(np.eye(4), metadata={"kind": list("xxyy")}, labels=list("abcd"))
    assert projector.label_column == "label"
    assert projector.label(2) == "c"
    assert projector.index_of("d") == 3


# ---- bad input -----------------------------------------------------------------------
def test_metadata_length_mismatch_names_both_counts():
    with pytest.raises(ValueError, match=r"'word' has 2 values but there are 4 vectors"):
        Projector(np.eye(4), metadata={"word": ["a", "b"]})


def test_nan_and_inf_rows_are_listed_or_dropped():
    matrix = np.random.default_rng(0).normal(size=(6, 3))
    matrix[1, 0] = np.nan
    matrix[4, 2] = np.inf
    with pytest.raises(ValueError, match=r"2 row\(s\) contain NaN or Inf, at indices \[1, 4\]"
                                         r".*drop_bad_rows=True"):
        Projector(matrix)
    projector = Projector(matrix, metadata={"id": list("abcdef")}, drop_bad_rows=True)
    assert projector.vectors.shape == (4, 3)
    assert projector.columns["id"] == list("acdf")
    assert "Dropped 2 row(s) with NaN/Inf: [1, 4]" in projector.notice


def test_nothing_left_to_show_is_said_not_drawn():
    """Issue 28.12: every row dropped as NaN, or max_points=0, showed 0 points silently."""
    matrix = np.full((5, 3), np.nan)
    matrix[1] = [1, 2, 3]
    with pytest.raises(ValueError, match=r"4 of the 5 rows contain NaN or Inf, and without "
                                         r"them 1 point\(s\) are left; the projector needs "
                                         r"at least 3"):
        Projector(matrix, drop_bad_rows=True)
    for bad in (0, 2, -1, 2.5, True):
        with pytest.raises(ValueError, match=rf"max_points={bad!r} would show too few points: "
                                             r"give a whole number of at least 3"):
            Projector(np.eye(5), max_points=bad)
    assert len(Projector(np.eye(5), max_points=3).indices) == 3


def test_coinciding_points_are_explained_instead_of_nan_percent():
    """Issue 28.12: all points on one spot gave axis titles "PC1 (nan%)" and no word."""
    projector = Projector(np.full((6, 4), 0.1, dtype=np.float32), metadata=list("abcdef"))
    assert projector.axis_titles == ["PC1 (no variance)", "PC2 (no variance)"]
    np.testing.assert_array_equal(projector.coordinates, 0)
    assert "All 6 points are the same vector, so every projection draws them on one " \
           "spot" in repr(projector)
    assert "nan" not in repr(projector)
    assert "same vector" in projector.widget.notice.value
    projector.refresh(np.eye(6, 4))                  # (training moved them apart)
    assert projector.view_notice == "" and "same vector" not in projector.widget.notice.value


def test_tsne_says_when_it_lowers_the_perplexity_and_records_the_value_used():
    """Issue 28.12: t-SNE lowered a too-large perplexity silently and recorded the value
    asked for."""
    matrix, _ = clusters(num_per_cluster=5)            # 15 points: at most 14 / 3
    projector = Projector(matrix)
    with pytest.warns(UserWarning, match=r"t-SNE: perplexity 30 is too large for 15 points "
                                         r"\(openTSNE needs 3 x perplexity < the number of "
                                         r"points\), so 4.667 was used"):
        projector.tsne(perplexity=30, iterations=50)
    assert projector.settings["perplexity"] == pytest.approx(14 / 3)
    assert "so 4.667 was used" in repr(projector)
    assert "4.667 was used" in projector.widget.notice.value
    assert projector.widget.perplexity.value == pytest.approx(14 / 3)
    projector.tsne(perplexity=4, iterations=50)        # small enough: no notice
    assert projector.view_notice == "" and projector.settings["perplexity"] == 4
    with pytest.raises(ValueError, match=r"perplexity 30 is too large for 15 points"):
        projections.tsne(matrix.astype(np.float32), perplexity=30)


def test_fewer_than_three_points():
    with pytest.raises(ValueError, match=r"only 2 point\(s\) given.*at least 3 points"):
        Projector(np.ones((2, 5)))


def test_one_dimensional_data():
    with pytest.raises(ValueError, match=r"2-D array .* got shape \(5,\)"):
        Projector(np.arange(5.0))
    with pytest.raises(ValueError, match=r"1 dimension\(s\) per point"):
        Projector(np.arange(5.0)[:, None])


def test_unknown_label_suggests_similar_ones():
    projector = Projector(np.eye(4), metadata={"word": ["paris", "france", "rome", "italy"]})
    with pytest.raises(KeyError, match=r"no point is labelled 'pari'.*\['paris'\]"):
        projector.index_of("pari")


# ---- TensorBoard TSV files -------------------------------------------------------------
def test_tsv_round_trip_matches_tensorboard_format(tmp_path):
    matrix = np.array([[0.1, -2.5], [3.0, 1e-7], [4.25, 5.0]], dtype=np.float32)
    projector = Projector(matrix, metadata={"word": ["a", "b", "c"], "pos": ["n", "v", "n"]})
    projector.to_tsv(tmp_path / "vectors.tsv", tmp_path / "metadata.tsv")
    # Vectors: tab-separated, no header. Several metadata columns: header row first.
    assert (tmp_path / "vectors.tsv").read_text() == "0.1\t-2.5\n3.0\t1e-07\n4.25\t5.0\n"
    assert (tmp_path / "metadata.tsv").read_text() == "word\tpos\na\tn\nb\tv\nc\tn\n"
    loaded = Projector.from_tsv(tmp_path / "vectors.tsv", tmp_path / "metadata.tsv")
    np.testing.assert_array_equal(loaded.vectors, matrix)
    assert loaded.columns == projector.columns


def test_single_metadata_column_has_no_header(tmp_path):
    Projector(np.eye(3), metadata=["x", "y", "z"]).to_tsv(tmp_path / "v.tsv", tmp_path / "m.tsv")
    assert (tmp_path / "m.tsv").read_text() == "x\ny\nz\n"
    assert data.read_metadata_tsv(tmp_path / "m.tsv") == {"label": ["x", "y", "z"]}


def test_float32_values_survive_the_round_trip_exactly(tmp_path):
    matrix = np.random.default_rng(1).normal(size=(20, 7)).astype(np.float32)
    (tmp_path / "v.tsv").write_text(data.vectors_tsv(matrix))
    np.testing.assert_array_equal(data.read_vectors_tsv(tmp_path / "v.tsv"), matrix)


def test_metadata_round_trips_exactly_numbers_and_empty_labels_included(tmp_path):
    """Issue 28.7: numbers came back as strings; an empty last label made a file that
    from_tsv could not read."""
    columns = {"word": ["the", "", "007", "nan"], "count": [9862, -3, 0, 12],
               "score": [0.1, 2.5, 1e-07, float("inf")], "mixed": [1, 2.5, 3, -0.0],
               "tag": ["a", "b", "c", ""]}
    projector = Projector(np.eye(4), metadata=columns)
    projector.to_tsv(tmp_path / "v.tsv", tmp_path / "m.tsv")
    loaded = Projector.from_tsv(tmp_path / "v.tsv", tmp_path / "m.tsv")
    assert loaded.columns == columns
    assert [type(v) for v in loaded.columns["mixed"]] == [int, float, int, float]
    assert loaded.columns["word"][2] == "007"         # text that only looks like a number
    Projector(np.eye(3), metadata=["x", "y", ""]).to_tsv(tmp_path / "v1.tsv",
                                                         tmp_path / "m1.tsv")
    assert (tmp_path / "m1.tsv").read_text() == "x\ny\n\n"
    loaded = Projector.from_tsv(tmp_path / "v1.tsv", tmp_path / "m1.tsv")
    assert loaded.columns == {"label": ["x", "y", ""]}
    (tmp_path / "m2.tsv").write_bytes(b"1\r\n2.50\r\n3\r\n")      # (Windows line ends)
    assert data.read_metadata_tsv(tmp_path / "m2.tsv") == {"label": ["1", "2.50", "3"]}


@pytest.mark.parametrize("columns, message", [
    ({"word": ["a", "tab\there", "c"]},
     r"column 'word', row 1: the value 'tab\\there' holds a tab or a line break"),
    ({"word": ["a", "b", "new\nline"], "kind": list("xyz")},
     r"column 'word', row 2: the value 'new\\nline'"),
    ({"word": list("abc"), "part\tof speech": list("nvn")},
     r"column name 'part\\tof speech' holds a tab or a line break.*Rename the column"),
])
def test_what_tsv_cannot_hold_is_refused_before_any_file_is_written(tmp_path, columns,
                                                                    message):
    """Issue 28.7: tabs and newlines inside labels became spaces; a tab in a column name
    corrupted the header."""
    with pytest.raises(ValueError, match=message):
        Projector(np.eye(3), metadata=columns).to_tsv(tmp_path / "v.tsv", tmp_path / "m.tsv")
    assert list(tmp_path.iterdir()) == []


def test_to_tsv_refuses_one_path_twice_and_replaces_files_only_when_asked(tmp_path):
    """Issue 28.7: to_tsv(p, p) overwrote the vectors with the metadata; an existing file
    was overwritten without a word."""
    projector = Projector(np.eye(3), metadata=list("xyz"))
    path = tmp_path / "both.tsv"
    with pytest.raises(ValueError, match=r"two files would be written to the same path "
                                         r".*both.tsv; give the vectors and the metadata "):
        projector.to_tsv(path, str(tmp_path / "." / "both.tsv"))
    assert not path.exists()
    notes = tmp_path / "notes.tsv"
    notes.write_text("my notes\n")
    with pytest.raises(FileExistsError, match=r"notes.tsv already exists; pass "
                                              r"overwrite=True to replace it"):
        projector.to_tsv(tmp_path / "v.tsv", notes)
    assert notes.read_text() == "my notes\n" and not (tmp_path / "v.tsv").exists()
    with pytest.raises(FileExistsError, match=r"notes.tsv already exists"):
        projector.export_coordinates(notes)
    projector.to_tsv(tmp_path / "v.tsv", notes, overwrite=True)
    assert notes.read_text() == "x\ny\nz\n"


def test_ragged_tsv_row_reports_its_line(tmp_path):
    (tmp_path / "v.tsv").write_text("1\t2\t3\n4\t5\t6\n7\t8\n")
    with pytest.raises(ValueError, match=r"line 3: 2 values, but line 1 has 3"):
        data.read_vectors_tsv(tmp_path / "v.tsv")
    (tmp_path / "m.tsv").write_text("word\tpos\na\tn\nb\n")
    with pytest.raises(ValueError, match=r"line 3: 1 values, but the header has 2 columns"):
        data.read_metadata_tsv(tmp_path / "m.tsv")


# ---- projections -----------------------------------------------------------------------
def test_pca_variance_explained_matches_the_covariance_spectrum():
    rng = np.random.default_rng(0)
    matrix = (rng.normal(size=(500, 6)) * [5, 3, 2, 1, 0.5, 0.1]).astype(np.float32)
    coordinates, ratio = projections.pca(matrix, 6)
    eigenvalues = np.sort(np.linalg.eigvalsh(np.cov(matrix.T.astype(np.float64))))[::-1]
    np.testing.assert_allclose(ratio, eigenvalues / eigenvalues.sum(), rtol=1e-4)
    # Each coordinate's variance is its eigenvalue, and the coordinates are uncorrelated.
    np.testing.assert_allclose(np.cov(coordinates.T), np.diag(eigenvalues), rtol=1e-3,
                               atol=1e-3)


def test_pca_components_choose_the_axes():
    matrix, _ = clusters()
    projector = Projector(matrix)
    all_three, ratio = projections.pca(matrix.astype(np.float32), 3)
    chosen = projector.pca(dims=2, components=[2, 0])
    np.testing.assert_allclose(np.abs(chosen), np.abs(all_three[:, [2, 0]]), rtol=1e-4,
                               atol=1e-4)
    assert projector.axis_titles[0] == f"PC3 ({100 * ratio[2]:.1f}%)"


def test_spherize_centres_and_normalises():
    matrix = np.random.default_rng(0).normal(loc=5, size=(50, 4)).astype(np.float32)
    sphere = projections.spherize(matrix)
    np.testing.assert_allclose(np.linalg.norm(sphere, axis=1), 1, rtol=1e-5)
    centred = matrix - matrix.mean(axis=0)
    np.testing.assert_allclose(sphere * np.linalg.norm(centred, axis=1, keepdims=True),
                               centred, rtol=1e-4, atol=1e-5)


def test_custom_projection_x_axis_runs_from_left_to_right():
    rng = np.random.default_rng(0)
    matrix = rng.normal(size=(30, 5)).astype(np.float32)
    matrix[0] = [0, 0, 0, 0, 0]
    matrix[1] = [0, 0, 4, 0, 0]             # "man" -> "woman" is the third axis
    coordinates = projections.custom_projection(matrix, [0], [1], dims=3)
    expected = matrix[:, 2] - matrix[:, 2].mean()
    np.testing.assert_allclose(coordinates[:, 0], expected, rtol=1e-5, atol=1e-5)
    assert coordinates[1, 0] > coordinates[0, 0]
    # The other axes ignore the chosen direction: moving points along it changes only x.
    steps = np.arange(30, dtype=np.float32)
    moved = matrix + np.outer(steps, [0, 0, 1, 0, 0]).astype(np.float32)
    shifted = projections.custom_projection(moved, [0], [1], dims=3)
    np.testing.assert_allclose(shifted[:, 0], coordinates[:, 0] + steps - steps.mean(),
                               atol=1e-4)
    np.testing.assert_allclose(np.abs(shifted[:, 1:]), np.abs(coordinates[:, 1:]), atol=1e-4)


def test_custom_projection_by_labels_and_bad_queries():
    matrix = np.eye(5, dtype=np.float32)
    projector = Projector(matrix, metadata={"word": ["man", "woman", "king", "queen", "x"]})
    coordinates = projector.custom("man", "woman")
    assert coordinates[1, 0] > coordinates[0, 0]
    assert projector.axis_titles[0] == "man → woman"
    with pytest.raises(ValueError, match="at least one point on each side"):
        projector.custom("nobody", "woman")


def test_tsne_separates_clusters_and_reports_progress():
    matrix, labels = clusters(num_per_cluster=40)
    projector = Projector(matrix)
    calls = []
    coordinates = projector.tsne(perplexity=10, iterations=100,
                                 progress=lambda done, total, xy: calls.append((done, total)))
    assert coordinates.shape == (120, 2) and projector.method == "t-SNE"
    assert len(calls) >= 10 and calls[-1] == (350, 350)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    # Every point's nearest neighbour in the picture belongs to its own cluster.
    gaps = np.linalg.norm(coordinates[:, None] - coordinates[None], axis=2)
    np.fill_diagonal(gaps, np.inf)
    assert np.all(labels[gaps.argmin(axis=1)] == labels)


def test_tsne_stops_when_progress_says_so():
    matrix, _ = clusters(num_per_cluster=20)
    calls = []

    def stop_after_three(done, total, xy):
        calls.append(done)
        return len(calls) >= 3
    projections.tsne(matrix.astype(np.float32), perplexity=5, iterations=200,
                     progress=stop_after_three)
    assert len(calls) == 3


def test_given_coordinates_are_shown_and_checked():
    matrix, _ = clusters(num_per_cluster=5)
    mine = np.random.default_rng(0).normal(size=(15, 3))
    projector = Projector(matrix, coordinates=mine)
    assert projector.method == "Given"
    np.testing.assert_allclose(projector.coordinates, mine.astype(np.float32))
    with pytest.raises(ValueError, match=r"shape \(15, 2\) or \(15, 3\), got \(14, 3\)"):
        projector.use_coordinates(mine[:14])


def test_umap_separates_clusters():
    matrix, labels = clusters(num_per_cluster=20)
    projector = Projector(matrix)
    coordinates = projector.umap(neighbours=5)
    assert coordinates.shape == (60, 2) and projector.method == "UMAP"
    gaps = np.linalg.norm(coordinates[:, None] - coordinates[None], axis=2)
    np.fill_diagonal(gaps, np.inf)
    assert np.all(labels[gaps.argmin(axis=1)] == labels)


def test_umap_without_umap_learn_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "umap", None)          # import umap → ImportError
    with pytest.raises(ImportError, match="pip install umap-learn"):
        Projector(clusters(num_per_cluster=10)[0]).umap()


# ---- neighbours and analogies ------------------------------------------------------------
@pytest.mark.parametrize("metric", ["cosine", "euclidean"])
def test_neighbours_match_brute_force(metric):
    matrix = np.random.default_rng(3).normal(size=(200, 8)).astype(np.float32)
    for index in (0, 57, 199):
        rows, dists = neighbours.neighbours(matrix, index, k=7, metric=metric)
        brute = []
        for j in range(len(matrix)):
            if j == index:
                continue
            a, b = matrix[index].astype(np.float64), matrix[j].astype(np.float64)
            d = (1 - a @ b / np.linalg.norm(a) / np.linalg.norm(b) if metric == "cosine"
                 else np.linalg.norm(a - b))
            brute.append((d, j))
        brute.sort()
        assert rows.tolist() == [j for _, j in brute[:7]]
        np.testing.assert_allclose(dists, [d for d, _ in brute[:7]], rtol=1e-4, atol=1e-5)


def test_neighbours_by_label_and_unknown_metric():
    matrix = np.array([[1, 0], [0.9, 0.1], [0, 1], [-1, 0]], dtype=np.float32)
    projector = Projector(matrix, metadata={"w": ["a", "b", "c", "d"]})
    assert [name for name, _ in projector.neighbours("a", k=3)] == ["b", "c", "d"]
    assert projector.neighbours("a", k=1, metric="euclidean")[0][1] == pytest.approx(
        np.sqrt(0.02), rel=1e-5)
    with pytest.raises(ValueError, match="unknown metric 'manhattan'"):
        projector.neighbours("a", metric="manhattan")


def test_analogy_finds_b_minus_a_plus_c():
    # Two directions: gender (axis 0) and royalty (axis 1), plus noise words.
    words = {"man": [0, 0, 1], "woman": [1, 0, 1], "king": [0, 1, 1], "queen": [1, 1, 1],
             "apple": [-1, -1, 1], "car": [0.3, -1, 2]}
    projector = Projector(np.array(list(words.values())), metadata={"word": list(words)})
    answer = projector.analogy("man", "king", "woman", k=2, metric="euclidean")
    assert answer[0] == ("queen", pytest.approx(0.0, abs=1e-6))
    assert all(name not in ("man", "king", "woman") for name, _ in answer)


# ---- sampling ------------------------------------------------------------------------------
def test_no_sampling_means_no_notice():
    indices, notice = sampling.sample(100, 100)
    assert indices.tolist() == list(range(100)) and notice == ""


def test_random_sample_is_not_the_first_rows_and_says_so():
    indices, notice = sampling.sample(1000, 100, seed=0)
    assert len(indices) == 100 and len(set(indices.tolist())) == 100
    assert indices.tolist() != list(range(100))
    assert "Showing 100 of 1,000 points (random sample, seed 0)" in notice


def test_stratified_sample_keeps_class_proportions():
    groups = ["rare"] * 100 + ["common"] * 900
    projector = Projector(np.random.default_rng(0).normal(size=(1000, 4)),
                          metadata={"kind": groups}, max_points=50, stratify="kind")
    kinds = [projector.columns["kind"][i] for i in projector.indices]
    assert kinds.count("rare") == 5 and kinds.count("common") == 45
    assert "stratified sample" in projector.notice and "Showing 50 of 1,000" in repr(projector)


def test_stratified_rounding_still_gives_the_requested_total():
    groups = ["a"] * 7 + ["b"] * 7 + ["c"] * 7
    indices, _ = sampling.sample(21, 10, groups)
    assert len(indices) == 10
    counts = np.bincount([ord(groups[i]) - ord("a") for i in indices])
    assert sorted(counts.tolist()) == [3, 3, 4]


# ---- colours, images, export, live mode ------------------------------------------------------
def test_categorical_colours_are_okabe_ito_and_numbers_get_a_gradient():
    colours, legend = colour_points(["cat", "dog", "cat"])
    assert colours[0] == colours[2] != colours[1] and set(colours) <= set(OKABE_ITO)
    assert legend == [("cat", OKABE_ITO[0]), ("dog", OKABE_ITO[1])]
    colours, legend = colour_points(list(range(20)))
    assert colours[0] == VIRIDIS[0] and colours[-1] == VIRIDIS[-1] and len(set(colours)) == 20
    assert legend == [("0", VIRIDIS[0]), ("19", VIRIDIS[-1])]
    assert viridis(0.5) == VIRIDIS[4] and viridis(1 / 16) not in VIRIDIS      # in between


def test_as_many_colours_as_classes_up_to_ten_and_twenty():
    """Issue 26: the digits projector coloured 7 classes and lumped 1, 2 and 8 as grey."""
    digits = [str(i % 10) for i in range(100)] + ["0"]
    colours, legend = colour_points(digits)
    assert legend == list(zip([str(d) for d in range(10)], TABLEAU_10))
    assert len(set(colours)) == 10 and OTHER not in colours
    assert {c for c, d in zip(colours, digits) if d == "8"} == {TABLEAU_10[8]}
    colours, legend = colour_points([f"c{i % 20}" for i in range(60)])
    assert len(set(colours)) == 20 and [c for _, c in legend] == TABLEAU_20
    colours, legend = colour_points([f"k{i % 25}" for i in range(250)] + ["k0"])
    assert legend[-1] == ("7 others", OTHER) and list(colours).count(OTHER) == 70
    assert len(set(colours)) == 19 and "#7f7f7f" not in colours     # no grey class
    _, legend = colour_points([f"{i % 12}" for i in range(24)] + ["x"])
    assert [name for name, _ in legend][-4:] == ["9", "10", "11", "x"]   # in number order


def test_dark_theme_colours_stay_visible():
    colours, legend = colour_points(list("abcdefgh"), theme="dark")
    assert "#000000" not in [c for _, c in legend] and "#000000" not in colours
    assert DIMMED["dark"] != DIMMED["light"]


def test_png_thumbnails_are_valid_pngs():
    images = to_images(np.random.default_rng(0).random((3, 784)), 3)
    assert images.shape == (3, 28, 28) and images.dtype == np.uint8
    encoded = png(images[0])
    assert encoded.startswith(b"\x89PNG\r\n\x1a\n") and b"IHDR" in encoded
    import zlib
    start = encoded.index(b"IDAT") + 4
    length = int.from_bytes(encoded[start - 8:start - 4], "big")
    raw = zlib.decompress(encoded[start:start + length])
    np.testing.assert_array_equal(np.frombuffer(raw, np.uint8).reshape(28, 29)[:, 1:],
                                  images[0])
    with pytest.raises(ValueError, match="2 images given for 3 vectors"):
        to_images(np.zeros((2, 4, 4)), 3)


def test_export_coordinates_table_and_file(tmp_path):
    matrix, labels = clusters(num_per_cluster=5)
    projector = Projector(matrix, metadata={"cluster": labels.tolist()})
    table = projector.export_coordinates(tmp_path / "xy.tsv")
    assert list(table) == ["index", "x", "y", "cluster"]
    np.testing.assert_allclose(np.column_stack([table["x"], table["y"]]),
                               projector.coordinates)
    lines = (tmp_path / "xy.tsv").read_text().splitlines()
    assert lines[0] == "index\tx\ty\tcluster" and len(lines) == 16
    assert re.fullmatch(r"0\t\S+\t\S+\t0", lines[1])


def test_refresh_reprojects_the_updated_embedding_without_flipping(monkeypatch):
    layer = FakeEmbeddingLayer(np.random.default_rng(0).normal(size=(50, 6)))
    projector = Projector(layer)
    before = projector.coordinates.copy()
    layer.weight = layer.weight * 1.01          # a small training step
    # An eigenvector's sign is arbitrary; make the SVD pick the other one this time.
    pca = projections.pca
    monkeypatch.setattr(projections, "pca", lambda m, n: (-pca(m, n)[0], pca(m, n)[1]))
    after = projector.refresh()
    np.testing.assert_allclose(after, before * 1.01, rtol=1e-3, atol=1e-4)
    with pytest.raises(ValueError, match="refresh got 10 vectors"):
        projector.refresh(np.ones((10, 6)))


def test_live_callback_follows_an_embedding_during_fit():
    import edugraph as eg
    eg.random.set_seed(0)
    embedding = eg.layers.Embedding(30, 4, input_length=1)
    model = eg.Sequential([embedding, eg.layers.Flatten(), eg.layers.Dense(1)])
    model.compile(eg.train.AdamOptimizer(0.05), "mse")
    words = np.arange(30).reshape(-1, 1)
    model(words)                                    # build the embedding's weights
    projector = Projector(embedding)
    seen = []
    projector.listeners.append(lambda final: seen.append(projector.vectors.copy()))
    model.fit(words, np.linspace(-1, 1, 30), epochs=4, verbose=0,
              callbacks=[projector.live(every=2)])
    assert len(seen) == 2                            # refreshed after epochs 2 and 4
    np.testing.assert_allclose(projector.vectors, embedding.embeddings.numpy(), rtol=1e-6)
    assert not np.allclose(seen[0], seen[-1])        # the picture followed the training
