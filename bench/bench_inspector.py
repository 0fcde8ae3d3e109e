"""Graph inspector speed: building it for a 300-node graph, and one slider change.

Targets (issue 5): build (view + layout + figure) < 0.5 s for 300 nodes; a slider change on
f = (w·x + b)² updates the picture in < 50 ms on the Python side.

    python -m bench.bench_inspector        (from the repository root)
"""
import time

import numpy as np

import edugraph as eg
from widgets.inspector import GraphInspector


def mlp_loss(num_layers, width=8, seed=0):
    """A tanh MLP with a squared-error loss: about 6 nodes per layer."""
    rng = np.random.default_rng(seed)
    h = eg.tensor(rng.normal(size=(4, width)))
    for _ in range(num_layers):
        w = eg.tensor(rng.normal(size=(width, width)) / width, requires_grad=True)
        b = eg.tensor(np.zeros(width), requires_grad=True)
        h = eg.tanh(h @ w + b)
    return ((h - 1.0) ** 2).mean()


def best_of(fn, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), float(np.median(times))


def main():
    GraphInspector(mlp_loss(2))                      # imports and plotly's first figure
    loss = mlp_loss(60)
    inspector = GraphInspector(loss)
    nodes = len(inspector.view.nodes)
    best, median = best_of(lambda: GraphInspector(loss), 5)
    print(f"build inspector, {nodes} nodes:  best {best * 1e3:7.1f} ms  "
          f"median {median * 1e3:7.1f} ms   (target < 500 ms)")

    def f(x, w, b):
        return (w * x + b) ** 2
    small = GraphInspector(f, x=2.0, w=-1.0, b=3.0)
    values = iter(np.linspace(-3, 1, 1000))
    best, median = best_of(lambda: setattr(small.sliders[0], "value", next(values)), 50)
    print(f"slider change, (w·x + b)²:     best {best * 1e3:7.2f} ms  "
          f"median {median * 1e3:7.2f} ms   (target < 50 ms)")


if __name__ == "__main__":
    main()
