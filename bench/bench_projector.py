"""How long the projector takes to be ready, against the targets of issue 6.

    python bench/bench_projector.py

"View ready" means the Python side is done: data checked, projection computed and
the widget's figure filled in (what the browser then draws is not timed here).
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from widgets.projector import Projector  # noqa: E402


def view_ready(vectors, metadata):
    """Seconds from raw vectors to a displayed-ready widget (PCA view)."""
    start = time.perf_counter()
    Projector(vectors, metadata).widget
    return time.perf_counter() - start


def main():
    rng = np.random.default_rng(0)
    Projector(rng.normal(size=(10, 4))).widget        # first-use imports are not the point

    vectors = rng.normal(size=(10_000, 128)).astype(np.float32)
    seconds = view_ready(vectors, {"id": [str(i) for i in range(10_000)]})
    print(f"10 000 x 128 -> PCA view ready:  {seconds:6.2f} s  (target < 1 s)")

    vectors = rng.normal(size=(50_000, 64)).astype(np.float32)
    classes = {"class": [str(i % 10) for i in range(50_000)]}
    seconds = view_ready(vectors, classes)
    print(f"50 000 points -> 2-D view ready: {seconds:6.2f} s  (target < 3 s)")

    centres = rng.normal(scale=3, size=(10, 128))
    vectors = (np.repeat(centres, 500, axis=0) + rng.normal(size=(5_000, 128)))
    projector = Projector(vectors.astype(np.float32))
    projector.widget            # its figure is redrawn at every progress report
    updates = []
    start = time.perf_counter()

    def progress(done, total, coordinates):
        updates.append(time.perf_counter() - start)
        if done % 150 == 0 or done == total:
            print(f"  t-SNE {done:4d}/{total} iterations at {updates[-1]:5.1f} s")
    projector.tsne(progress=progress)
    seconds = time.perf_counter() - start
    gaps = np.diff([0.0] + updates)
    print(f"t-SNE of 5 000 points:           {seconds:6.2f} s  (target < 60 s), "
          f"{len(updates)} progress updates, longest gap {gaps.max():.1f} s "
          "(the first one includes the neighbour search)")


if __name__ == "__main__":
    main()
