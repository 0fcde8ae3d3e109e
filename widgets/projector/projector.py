"""The Projector: embeddings, their metadata and the current 2-D/3-D view of them.

This class is the data model and holds no widgets; displaying it in a notebook
builds a ``ProjectorWidget`` (widget.py) on top. Everything the widget can do is
also a method here, so it can be scripted and tested without a browser.

    >>> projector = Projector(embedding_layer, metadata={"word": vocabulary})
    >>> projector.analogy("man", "king", "woman")      # king - man + woman
    >>> projector.tsne(perplexity=20)
    >>> projector                                       # shows the widget
"""
import re
import warnings

import numpy as np

from . import data, projections
from .images import to_images
from .neighbours import analogy, neighbours
from .sampling import sample


class Projector:
    """Explore embeddings like TensorBoard's Embedding Projector.

    vectors: numpy ``(n, d)``, an edugraph tensor (any device) or an Embedding layer.
    metadata: a dict of columns, a pandas-like table, or a list (one label per point).
    labels: the metadata column that names points (default: the first one), or a list.
    images: ``(n, h, w)`` or ``(n, h, w, 3)`` thumbnails shown on hover and selection.
    coordinates: your own precomputed ``(n, 2)`` or ``(n, 3)`` view instead of PCA.
    max_points: show a random sample of at most this many points (with a notice);
    stratify: a metadata column whose classes keep their shares in that sample.
    drop_bad_rows: drop rows with NaN/Inf (they are listed) instead of raising.
    """

    def __init__(self, vectors, metadata=None, labels=None, images=None, *,
                 coordinates=None, max_points=50_000, stratify=None,
                 drop_bad_rows=False, seed=0):
        self.source = vectors
        self.seed = seed
        matrix = data.to_matrix(vectors)
        self.columns = data.to_columns(metadata, len(matrix))
        if labels is not None and not isinstance(labels, str):
            self.columns = {**data.to_columns(labels, len(matrix)), **self.columns}
            labels = "label"
        self.label_column = labels or next(iter(self.columns), None)
        if self.label_column is not None and self.label_column not in self.columns:
            raise ValueError(f"labels={self.label_column!r} is not a metadata column; "
                             f"the columns are {list(self.columns)}.")
        self.images = to_images(images, len(matrix))
        self.dropped = data.bad_rows(matrix)
        if len(self.dropped) and not drop_bad_rows:
            raise ValueError(
                f"{len(self.dropped)} row(s) contain NaN or Inf, at indices "
                f"{_shorten(self.dropped)}. Fix the training run (a NaN usually means "
                "the learning rate is too high) or pass drop_bad_rows=True to leave them out.")
        if len(matrix) - len(self.dropped) < 3:
            raise ValueError(
                f"{len(self.dropped)} of the {len(matrix)} rows contain NaN or Inf, and "
                f"without them {len(matrix) - len(self.dropped)} point(s) are left; the "
                "projector needs at least 3. Fix the training run (a NaN usually means the "
                "learning rate is too high).")
        self._keep(np.setdiff1d(np.arange(len(matrix)), self.dropped), matrix)
        groups = self.columns[stratify] if stratify else None
        self.indices, self.notice = sample(len(self.vectors), max_points, groups, seed)
        if len(self.dropped):
            self.notice = (f"Dropped {len(self.dropped)} row(s) with NaN/Inf: "
                           f"{_shorten(self.dropped)}. " + self.notice).strip()
        self.view_notice = ""    # what is odd about the current view (set by each one)
        self.spherized = False
        self.given_coordinates = None
        self.variance = np.array([])   # PCA's explained variance ratios, once computed
        self.listeners = []      # called after every new view, e.g. to redraw the widget
        if coordinates is None:
            self.pca()
        else:
            self.use_coordinates(coordinates)

    def _keep(self, rows, matrix):
        """Keep only ``rows`` of the vectors, metadata and images."""
        self.vectors = matrix[rows]
        self.columns = {name: [values[i] for i in rows] for name, values in self.columns.items()}
        if self.images is not None:
            self.images = self.images[rows]

    # ---- TensorBoard files -------------------------------------------------------
    @classmethod
    def from_tsv(cls, vectors_path, metadata_path=None, **options):
        """Load TensorBoard's ``vectors.tsv`` (and ``metadata.tsv``)."""
        metadata = data.read_metadata_tsv(metadata_path) if metadata_path else None
        return cls(data.read_vectors_tsv(vectors_path), metadata, **options)

    def to_tsv(self, vectors_path, metadata_path=None, overwrite=False):
        """Write all vectors (and metadata) in TensorBoard's formats.

        ``from_tsv`` gives back the same vectors, and the same metadata where the format
        can hold it: numbers and text (a single column is called "label"). Labels with
        tabs or line breaks are refused; existing files are replaced only with
        ``overwrite=True``.
        """
        files = [(vectors_path, data.vectors_tsv(self.vectors))]
        if metadata_path and self.columns:
            files.append((metadata_path, data.metadata_tsv(self.columns)))
        data.write_files(files, overwrite)

    # ---- projections: each sets self.coordinates for the sampled points -------------
    def _projection_input(self):
        """The sampled vectors the projections see, spherized if asked for."""
        matrix = self.vectors[self.indices]
        return projections.spherize(matrix) if self.spherized else matrix

    def pca(self, dims=2, components=None):
        """Principal components ``components`` (default the first ``dims``) as axes."""
        components = list(components or range(dims))
        coordinates, ratio = projections.pca(self._projection_input(), max(components) + 1)
        if max(components) >= coordinates.shape[1]:
            raise ValueError(f"component {max(components) + 1} asked for, but the data "
                             f"has only {coordinates.shape[1]} components.")
        self.variance = ratio
        titles = [f"PC{c + 1} ({100 * ratio[c]:.1f}%)" if ratio.any() else
                  f"PC{c + 1} (no variance)" for c in components]
        return self._show(coordinates[:, components], "PCA", titles,
                          dict(dims=dims, components=components))

    def tsne(self, dims=2, perplexity=30.0, learning_rate="auto", iterations=500,
             progress=None, warm_start=False):
        """t-SNE; ``progress(done, total, coordinates)`` sees every 10th iteration.

        The view updates as t-SNE runs. ``warm_start`` continues from the current
        t-SNE picture (live mode) instead of starting afresh.
        """
        def report(done, total, coordinates):
            self._show(coordinates, "t-SNE", None, None, final=False)
            return progress(done, total, coordinates) if progress else False
        largest, lowered = projections.largest_perplexity(len(self.indices)), ""
        if perplexity > largest:
            lowered = (f"t-SNE: perplexity {perplexity:g} is too large for "
                       f"{len(self.indices)} points (openTSNE needs 3 x perplexity < the "
                       f"number of points), so {largest:.4g} was used.")
            warnings.warn(lowered, stacklevel=2)
            perplexity = largest
        warm = warm_start and self._continues("t-SNE", dims)
        previous = self.coordinates if warm else None
        coordinates = projections.tsne(self._projection_input(), dims, perplexity,
                                       learning_rate, iterations, report, previous, self.seed)
        return self._show(coordinates, "t-SNE", None, dict(
            dims=dims, perplexity=perplexity, learning_rate=learning_rate,
            iterations=iterations, progress=progress), notice=lowered)

    def umap(self, dims=2, neighbours=15, min_dist=0.1):
        """UMAP (needs umap-learn)."""
        coordinates = projections.umap(self._projection_input(), dims, neighbours,
                                       min_dist, self.seed)
        return self._show(coordinates, "UMAP", None,
                          dict(dims=dims, neighbours=neighbours, min_dist=min_dist))

    def custom(self, left, right, dims=2):
        """x axis from the points matching ``left`` to those matching ``right``.

        ``left``/``right`` are labels or regular expressions, e.g. ``"man"``/``"woman"``.
        """
        position = {row: i for i, row in enumerate(self.indices)}
        sides = [[position[row] for row in self._query(q) if row in position]
                 for q in (left, right)]
        coordinates = projections.custom_projection(self._projection_input(), *sides, dims)
        titles = [f"{left} → {right}"] + [f"rest PC{i}" for i in range(1, dims)]
        return self._show(coordinates, "Custom", titles,
                          dict(left=left, right=right, dims=dims))

    def use_coordinates(self, coordinates):
        """Show your own precomputed 2-D or 3-D coordinates (one row per point)."""
        coordinates = np.asarray(coordinates, dtype=np.float32)
        if coordinates.ndim != 2 or coordinates.shape[1] not in (2, 3) \
                or len(coordinates) != len(self.vectors):
            raise ValueError(f"coordinates must have shape ({len(self.vectors)}, 2) or "
                             f"({len(self.vectors)}, 3), got {coordinates.shape}.")
        self.given_coordinates = coordinates
        return self._show(coordinates[self.indices], "Given", None, {})

    def _continues(self, method, dims):
        """Whether the current view can seed the next one (live mode keeps its layout)."""
        return getattr(self, "method", None) == method and self.coordinates.shape[1] == dims

    def _show(self, coordinates, method, titles, settings, final=True, notice=""):
        """Make ``coordinates`` the current view and tell the listeners; ``notice``: what
        the student should know about it."""
        if final and method == "PCA" and self._continues("PCA", coordinates.shape[1]):
            # An eigenvector's sign is arbitrary; keep the old one so live views don't flip.
            signs = np.sign(np.sum(coordinates * self.coordinates, axis=0))
            coordinates = coordinates * np.where(signs == 0, 1, signs).astype(np.float32)
        self.coordinates, self.method = coordinates, method
        self.axis_titles = titles or [f"{method} {i + 1}" for i in range(coordinates.shape[1])]
        if final:
            self.settings = settings
            self.view_notice = " ".join(filter(None, [self._one_spot(), notice]))
        for listener in self.listeners:
            listener(final)
        return coordinates

    def _one_spot(self):
        """Why every point is drawn on one spot, when they all coincide ("" otherwise)."""
        if np.ptp(self.vectors[self.indices], axis=0).max() > 0:
            return ""
        return (f"All {len(self.indices)} points are the same vector, so every projection "
                "draws them on one spot and PCA finds no variance. Are the embeddings "
                "trained (an embedding initialised with zeros looks like this)?")

    def refresh(self, vectors=None):
        """Live mode: re-read the embedding (or take ``vectors``) and re-project.

        Call it at the end of each training epoch; the widget follows, and PCA and
        t-SNE continue from the previous picture so points move instead of jumping.
        """
        matrix = data.to_matrix(self.source if vectors is None else vectors)
        if len(matrix) != len(self.vectors) + len(self.dropped):
            raise ValueError(f"refresh got {len(matrix)} vectors, but the projector was "
                             f"built with {len(self.vectors) + len(self.dropped)}.")
        bad = data.bad_rows(matrix)
        if not np.array_equal(bad, self.dropped):
            raise ValueError(f"the rows with NaN/Inf changed to {_shorten(bad)}; "
                             "the embedding diverged. Lower the learning rate.")
        self.vectors = np.delete(matrix, self.dropped, axis=0)
        method = {"PCA": self.pca, "t-SNE": self.tsne, "UMAP": self.umap,
                  "Custom": self.custom}.get(self.method)
        if method is None:
            raise ValueError("refresh re-runs the projection, but this view shows given "
                             "coordinates; call pca() or tsne() first.")
        if self.method == "t-SNE":
            return method(**self.settings, warm_start=True)
        return method(**self.settings)

    def live(self, every=1):
        """Live mode as a ``fit`` callback: ``refresh()`` after every ``every`` epochs.

        >>> model.fit(x, y, epochs=20, callbacks=[projector.live()])
        """
        from edugraph.models.callbacks import LambdaCallback

        def on_epoch_end(epoch, logs=None):
            if (epoch + 1) % every == 0:
                self.refresh()
        return LambdaCallback(on_epoch_end=on_epoch_end)

    # ---- questions about points ----------------------------------------------------
    def label(self, row):
        """The name of point ``row`` (its label column value, else its index)."""
        return str(self.columns[self.label_column][row]) if self.label_column else str(row)

    def _query(self, query):
        """Rows whose label is ``query`` exactly, else whose label matches the pattern."""
        labels = [self.label(row) for row in range(len(self.vectors))]
        exact = [row for row, label in enumerate(labels) if label == query]
        if exact:
            return exact
        return self.search(query, regex=True)

    def search(self, pattern, regex=False, column=None):
        """Rows whose label (or ``column``) contains ``pattern`` (a regex if ``regex``)."""
        values = self.columns[column] if column else [self.label(r) for r in
                                                      range(len(self.vectors))]
        if regex:
            try:
                found = re.compile(pattern, re.IGNORECASE).search
            except re.error as error:
                raise ValueError(f"invalid regular expression {pattern!r}: {error}") from None
        else:
            found = lambda text: pattern.lower() in text.lower()   # noqa: E731
        return np.array([row for row, value in enumerate(values) if found(str(value))], int)

    def index_of(self, point):
        """The row of a point given by its index or its label."""
        if isinstance(point, (int, np.integer)):
            if not 0 <= point < len(self.vectors):
                raise IndexError(f"point {point} out of range: there are "
                                 f"{len(self.vectors)} points.")
            return int(point)
        rows = [row for row in range(len(self.vectors)) if self.label(row) == point]
        if not rows:
            close = self.search(str(point))[:5]
            hint = f" Similar labels: {[self.label(r) for r in close]}." if len(close) else ""
            raise KeyError(f"no point is labelled {point!r} in column "
                           f"{self.label_column!r}.{hint}")
        return rows[0]

    def neighbours(self, point, k=10, metric="cosine"):
        """The ``k`` nearest neighbours of ``point`` in the original space.

        Returns ``[(label, distance), ...]``, nearest first.
        """
        rows, dists = neighbours(self.vectors, self.index_of(point), k, metric)
        return [(self.label(r), float(d)) for r, d in zip(rows, dists)]

    def analogy(self, a, b, c, k=10, metric="cosine"):
        """"a is to b as c is to ?": the points nearest to b - a + c."""
        rows, dists = analogy(self.vectors, *map(self.index_of, (a, b, c)), k, metric)
        return [(self.label(r), float(d)) for r, d in zip(rows, dists)]

    def export_coordinates(self, path=None, overwrite=False):
        """The current view as columns ``index, x, y[, z]`` plus the metadata.

        The dict goes straight into ``pandas.DataFrame``; with ``path`` it is also
        written as a TSV file with a header row (an existing file is replaced only with
        ``overwrite=True``).
        """
        table = {"index": self.indices.tolist()}
        for axis, values in zip("xyz", self.coordinates.T):
            table[axis] = values.tolist()
        for name, values in self.columns.items():
            table.setdefault(name, [values[i] for i in self.indices])
        if path:
            data.write_files([(path, data.metadata_tsv(table))], overwrite)
        return table

    # ---- display -----------------------------------------------------------------
    def __repr__(self):
        n, d = self.vectors.shape
        lines = [f"Projector: {n:,} points x {d} dimensions",
                 f"view: {self.method} {self.coordinates.shape[1]}-D, axes: "
                 + ", ".join(self.axis_titles)]
        if self.columns:
            lines.append(f"metadata: {', '.join(self.columns)} (labels: {self.label_column})")
        lines += [notice for notice in (self.notice, self.view_notice) if notice]
        return "\n".join(lines)

    @property
    def widget(self):
        """The interactive view (built on first use)."""
        if not hasattr(self, "_widget"):
            from .widget import ProjectorWidget
            self._widget = ProjectorWidget(self)
        return self._widget

    def _repr_mimebundle_(self, **kwargs):
        # The widget for live notebooks; the text form keeps saved outputs deterministic.
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        return bundle



def _shorten(rows, limit=10):
    """A list of indices for a message, cut after ``limit``."""
    shown = ", ".join(str(r) for r in rows[:limit])
    return f"[{shown}{', ...' if len(rows) > limit else ''}]"
