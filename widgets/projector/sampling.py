"""Choosing which points to show when there are too many, and saying so.

TensorBoard silently shows a subset; here the choice is random (or stratified by a
column, so that every class keeps its share) and always comes with a notice.
"""
import numpy as np


def sample(num_points, max_points, groups=None, seed=0):
    """Pick at most ``max_points`` of ``num_points`` rows.

    Returns ``(sorted indices, notice)``; the notice is ``""`` when every point is shown.
    With ``groups`` (one label per point) each group keeps its proportion, rounded so
    that the total is exactly ``max_points``.
    """
    if not isinstance(max_points, (int, np.integer)) or isinstance(max_points, bool) \
            or max_points < 3:
        raise ValueError(f"max_points={max_points!r} would show too few points: give a whole "
                         "number of at least 3 (the default, 50 000, shows all of most "
                         "data sets).")
    if num_points <= max_points:
        return np.arange(num_points), ""
    rng = np.random.default_rng(seed)
    if groups is None:
        chosen = rng.choice(num_points, size=max_points, replace=False)
        how = "random"
    else:
        chosen = _stratified(np.asarray(groups, dtype=object), max_points, rng)
        how = "stratified"
    notice = (f"Showing {max_points:,} of {num_points:,} points ({how} sample, "
              f"seed {seed}). Pass max_points={num_points} to show all.")
    return np.sort(chosen), notice


def _stratified(groups, max_points, rng):
    """Sample each group in proportion to its size (largest remainders get the spare)."""
    names, inverse, counts = np.unique(groups.astype(str), return_inverse=True,
                                       return_counts=True)
    shares = counts * max_points / len(groups)
    quota = np.floor(shares).astype(int)
    spare = max_points - quota.sum()
    quota[np.argsort(quota - shares, kind="stable")[:spare]] += 1
    return np.concatenate([
        rng.choice(np.flatnonzero(inverse == g), size=quota[g], replace=False)
        for g in range(len(names))])
