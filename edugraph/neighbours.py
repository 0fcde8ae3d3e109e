"""Nearest neighbours of embedding vectors, and analogies, by cosine or Euclidean distance.

The projector lists them in the ORIGINAL space, never in the projected picture: a projection
squashes d dimensions into 2 or 3, so two points can look close on screen and be far apart in
the embedding; the neighbour list tells the truth. Lesson 7's checks use them as references.
"""
import numpy as np

METRICS = ("cosine", "euclidean")


def distances(matrix, query, metric="cosine"):
    r"""Distance from ``query`` (d,) to every row of ``matrix``.

    cosine: :math:`1 - \frac{x \cdot q}{\lVert x\rVert \lVert q\rVert}`;
    euclidean: :math:`\lVert x - q \rVert`.
    """
    if metric == "cosine":
        norms = np.linalg.norm(matrix, axis=1) * np.linalg.norm(query)
        return 1 - (matrix @ query) / np.maximum(norms, np.finfo(np.float32).tiny)
    if metric == "euclidean":
        return np.linalg.norm(matrix - query, axis=1)
    raise ValueError(f"unknown metric {metric!r}; choose one of {METRICS}.")


def nearest(matrix, query, k=10, metric="cosine", exclude=()):
    """The ``k`` rows closest to ``query``, skipping ``exclude``: ``(indices, distances)``."""
    dist = distances(matrix, query, metric).astype(np.float64)
    dist[list(exclude)] = np.inf
    k = min(k, len(matrix) - len(set(exclude)))
    # argpartition finds the k smallest in O(n); only those k then need sorting.
    candidates = np.argpartition(dist, k - 1)[:k]
    order = candidates[np.argsort(dist[candidates], kind="stable")]
    return order, dist[order]


def neighbours(matrix, index, k=10, metric="cosine"):
    """The ``k`` nearest neighbours of point ``index`` (itself excluded)."""
    return nearest(matrix, matrix[index], k, metric, exclude=(index,))


def analogy(matrix, a, b, c, k=10, metric="cosine"):
    r"""Points nearest to :math:`x_b - x_a + x_c`: "a is to b as c is to ?".

    With word vectors, ``analogy(man, king, woman)`` looks for
    :math:`king - man + woman`, hoping for "queen". The three inputs are left out
    of the answer, as in word2vec's evaluation, since ``c`` itself is usually nearest.
    """
    target = matrix[b] - matrix[a] + matrix[c]
    return nearest(matrix, target, k, metric, exclude={a, b, c})
