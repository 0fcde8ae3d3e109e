"""Projections from d dimensions down to the 2 or 3 that a screen can show.

Every function takes a float32 ``(n, d)`` array and returns float32 coordinates
``(n, dims)``; none of them knows about widgets.
"""
import numpy as np


def spherize(matrix):
    r"""Centre the cloud and put every point on the unit sphere.

    .. math:: x_i \leftarrow (x_i - \bar x) / \lVert x_i - \bar x \rVert

    Afterwards only directions matter, as with cosine similarity; this is
    TensorBoard's "Spherize data" checkbox.
    """
    centred = matrix - matrix.mean(axis=0)
    norms = np.linalg.norm(centred, axis=1, keepdims=True)
    return centred / np.maximum(norms, np.finfo(np.float32).tiny)


def pca(matrix, num_components=10):
    r"""Principal components: eigenvectors of the covariance matrix.

    With :math:`C = \frac{1}{n-1} (X - \bar X)^\top (X - \bar X) = V \Lambda V^\top`,
    the coordinates are :math:`(X - \bar X) V` and component :math:`k` explains the
    share :math:`\lambda_k / \sum_j \lambda_j` of the variance. ``C`` is only d x d,
    so this stays fast however many points there are.

    Returns ``(coordinates (n, num_components), variance_ratio (num_components,))``; the
    ratios are 0 when all points coincide (there is no variance to share).
    """
    centred = matrix - matrix.mean(axis=0)
    centred[:, np.ptp(matrix, axis=0) == 0] = 0     # (a mean may round: constant is 0)
    covariance = (centred.T.astype(np.float64) @ centred) / (len(matrix) - 1)
    variance, directions = np.linalg.eigh(covariance)       # ascending order
    variance, directions = variance[::-1].clip(min=0), directions[:, ::-1]
    num_components = min(num_components, len(matrix) - 1, matrix.shape[1])
    coordinates = centred @ directions[:, :num_components].astype(np.float32)
    total = variance.sum()
    ratio = variance / total if total > 0 else np.zeros_like(variance)
    return coordinates, ratio[:num_components]


def tsne(matrix, dims=2, perplexity=30.0, learning_rate="auto", iterations=500,
         progress=None, initial=None, seed=0):
    """t-SNE with openTSNE, reporting progress as it goes.

    ``progress(done, total, coordinates)`` is called every 10 iterations with the
    current picture; returning True from it stops the run early. The first 250
    iterations are openTSNE's "early exaggeration" phase, which pulls clusters apart
    before the ``iterations`` that refine them. ``initial`` (n, dims) continues from
    an earlier picture, which keeps live mode from jumping between epochs.
    """
    try:
        import openTSNE
    except ImportError:
        raise ImportError(
            "t-SNE in the projector needs openTSNE: pip install openTSNE "
            "(it is part of edugraph[lab]).") from None
    if perplexity > largest_perplexity(len(matrix)):
        raise ValueError(f"t-SNE: perplexity {perplexity:g} is too large for {len(matrix)} "
                         "points: openTSNE needs 3 x perplexity < the number of points, "
                         f"so at most {largest_perplexity(len(matrix)):.4g}.")
    exaggeration_iterations = 250 if initial is None else 0
    total = exaggeration_iterations + iterations
    done = 0

    def report(iteration, error, embedding):
        nonlocal done
        done += 10
        return progress(min(done, total), total, np.asarray(embedding, np.float32))

    model = openTSNE.TSNE(
        n_components=dims, perplexity=perplexity, learning_rate=learning_rate,
        early_exaggeration_iter=exaggeration_iterations, n_iter=iterations,
        initialization="pca" if initial is None else np.asarray(initial, np.float64),
        # Barnes-Hut for small sets (openTSNE's "auto" picks FFT here too, whose fixed
        # grid costs 20 times as long for the lessons' 200 points: 20 s, past nbgrader's
        # 30 s a cell on a busy machine) and for 3-D, where FFT does not work; FFT for
        # large sets, where its cost grows more slowly
        negative_gradient_method="fft" if dims == 2 and len(matrix) >= 10_000 else "bh",
        callbacks=report if progress else None, callbacks_every_iters=10,
        n_jobs=-1, random_state=seed)
    return np.asarray(model.fit(matrix), dtype=np.float32)


def largest_perplexity(num_points):
    """The largest perplexity t-SNE takes for ``num_points``: each point's neighbourhood
    is fitted to about 3 x perplexity neighbours, and there are only ``num_points - 1``."""
    return (num_points - 1) / 3


def umap(matrix, dims=2, neighbours=15, min_dist=0.1, seed=0):
    """UMAP with umap-learn, when it is installed (it is optional: it pulls in numba)."""
    try:
        import umap as umap_learn
    except ImportError:
        raise ImportError("UMAP in the projector needs umap-learn: pip install umap-learn") \
            from None
    reducer = umap_learn.UMAP(n_components=dims, n_neighbors=neighbours,
                              min_dist=min_dist, random_state=seed,
                              n_jobs=1)       # a seed makes UMAP serial anyway; say so, no warning
    return reducer.fit_transform(matrix).astype(np.float32)


def custom_projection(matrix, left, right, dims=2):
    r"""Project onto the direction from one group of points to another.

    The x axis is :math:`u = \bar x_{right} - \bar x_{left}` (e.g. "man" -> "woman"), so
    a point's x says how far along that direction it lies. The remaining axes are the
    principal components of what is left after removing the x direction, so they show
    the most variance that the chosen direction does not explain.
    """
    left, right = np.atleast_1d(left), np.atleast_1d(right)
    if len(left) == 0 or len(right) == 0:
        raise ValueError("a custom projection needs at least one point on each side; "
                         f"got {len(left)} on the left and {len(right)} on the right.")
    direction = matrix[right].mean(axis=0) - matrix[left].mean(axis=0)
    length = np.linalg.norm(direction)
    if length == 0:
        raise ValueError("the left and right points have the same mean, so there is no "
                         "direction between them; choose different queries.")
    direction /= length
    centred = matrix - matrix.mean(axis=0)
    along = centred @ direction
    rest, _ = pca(centred - np.outer(along, direction), dims - 1)
    return np.column_stack([along, rest]).astype(np.float32)
