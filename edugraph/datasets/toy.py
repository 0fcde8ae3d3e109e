"""Classic toy datasets, generated (nothing is downloaded): spirals, moons, blobs, regression.

Each takes a ``seed`` so a lesson draws the same points every time, and returns ``(x, y)`` as
numpy arrays: x float32 of shape (n, features), y int64 class ids (float32 targets for
regression).
"""
import numpy as np


def make_spirals(n_samples=300, n_classes=3, noise=0.2, seed=0):
    """Interleaved spiral arms, one per class (CS231n's example: not linearly separable)."""
    rng = np.random.default_rng(seed)
    per_class = [n_samples // n_classes + (c < n_samples % n_classes) for c in range(n_classes)]
    xs, ys = [], []
    for c, n in enumerate(per_class):
        radius = np.linspace(0.0, 1.0, n)
        angle = np.linspace(c * 4.0, (c + 1) * 4.0, n) + rng.normal(0, noise, n)
        xs.append(np.c_[radius * np.sin(angle), radius * np.cos(angle)])
        ys.append(np.full(n, c))
    return np.concatenate(xs).astype(np.float32), np.concatenate(ys).astype(np.int64)


def make_moons(n_samples=200, noise=0.1, seed=0):
    """Two interleaving half circles (scikit-learn's ``make_moons``)."""
    rng = np.random.default_rng(seed)
    n_top = n_samples // 2
    n_bottom = n_samples - n_top
    t_top, t_bottom = np.linspace(0, np.pi, n_top), np.linspace(0, np.pi, n_bottom)
    top = np.c_[np.cos(t_top), np.sin(t_top)]
    bottom = np.c_[1 - np.cos(t_bottom), 0.5 - np.sin(t_bottom)]
    x = np.concatenate([top, bottom]) + rng.normal(0, noise, (n_samples, 2))
    y = np.r_[np.zeros(n_top), np.ones(n_bottom)]
    order = rng.permutation(n_samples)
    return x[order].astype(np.float32), y[order].astype(np.int64)


def make_blobs(n_samples=300, centers=3, n_features=2, cluster_std=1.0, center_box=(-10, 10),
               seed=0):
    """Gaussian clusters around random (or given) centres."""
    rng = np.random.default_rng(seed)
    if np.ndim(centers) == 0:
        centers = rng.uniform(*center_box, (int(centers), n_features))
    centers = np.asarray(centers, dtype=float)
    y = np.arange(n_samples) % len(centers)
    rng.shuffle(y)
    x = centers[y] + rng.normal(0, cluster_std, (n_samples, centers.shape[1]))
    return x.astype(np.float32), y.astype(np.int64)


def make_regression(n_samples=100, n_features=1, noise=0.1, seed=0):
    """y = x·w + b + noise with hidden true w, b; returns (x, y, (w, b)) so fits can be checked."""
    rng = np.random.default_rng(seed)
    w, b = rng.normal(0, 2, n_features), rng.normal()
    x = rng.normal(0, 1, (n_samples, n_features))
    y = x @ w + b + rng.normal(0, noise, n_samples)
    return x.astype(np.float32), y[:, None].astype(np.float32), (w, b)


def random_regression(n_samples=64, n_features=1000, n_outputs=None, seed=0):
    """The lecture slides' data: standard-normal inputs and targets, x (N, D) and y (N, D)
    (``N, D = 64, 1000``; the two-layer net there learns to fit noise)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n_samples, n_features))
    y = rng.standard_normal((n_samples, n_outputs or n_features))
    return x.astype(np.float32), y.astype(np.float32)
