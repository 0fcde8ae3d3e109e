"""Traced functions benchmark: @eg.function against numpy by hand, eager mode and Session.run.

    python bench/bench_function.py            # medians and ratios against numpy
    python bench/bench_function.py --quick    # fewer repeats (CI smoke run)

Workloads (from the lecture, the same as bench_core.py / bench_static.py):
1. tiny graph: c = sum(x*y + z) on (3, 4) and its gradients: numpy by hand, eager
   (backward), Session.run (eg.gradients), traced function (GradientTape inside);
2. two-layer ReLU net, N, D, H = 64, 1000, 100, one SGD step: numpy by hand, eager, traced.

All contenders of a workload are timed in turns in one run (bench_core.compare), so the
ratios compare like with like. The traced function is traced once before timing.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_core import (LEARNING_RATE, eager_tiny, eager_two_layer_step,  # noqa: E402
                        numpy_tiny, numpy_two_layer_step, tiny_data, timed, two_layer_data)
from bench_static import session_tiny  # noqa: E402
import edugraph as eg  # noqa: E402


def traced_tiny(x, y, z):
    """c = sum(x*y + z) and its gradients, as one traced function (a tape inside)."""
    @eg.function
    def step(x, y, z):
        with eg.GradientTape() as tape:
            tape.watch([x, y, z])
            c = eg.reduce_sum(x * y + z)
        return c, tape.gradient(c, [x, y, z])
    step(x, y, z)                           # trace once
    return lambda: step(x, y, z)


def traced_two_layer_step(x, y, w1, w2, lr=LEARNING_RATE):
    """The SGD step of bench_core.eager_two_layer_step, traced: forward, gradients and the
    in-place updates of the (eager) Variables are one graph."""
    tw1, tw2 = eg.Variable(w1), eg.Variable(w2)

    @eg.function
    def step(x, y):
        with eg.GradientTape() as tape:
            y_pred = eg.matmul(eg.nn.relu(eg.matmul(x, tw1)), tw2)
            loss = eg.reduce_mean(eg.reduce_sum((y_pred - y) ** 2, axis=1))
        g1, g2 = tape.gradient(loss, [tw1, tw2])
        tw1.assign_sub(g1 * lr)
        tw2.assign_sub(g2 * lr)
        return loss
    tx, ty = eg.tensor(x), eg.tensor(y)
    step(tx, ty)
    return lambda: step(tx, ty)


def report(name, numpy_s, columns):
    line = f"{name:<28}{numpy_s * 1e6:>10.1f}"
    for seconds in columns:
        line += f"{seconds * 1e6:>11.1f}" if seconds is not None else f"{'-':>11}"
    ratios = "  ".join(f"{s / numpy_s:.2f}x" if s is not None else "-" for s in columns)
    print(line + "   " + ratios)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeat = 5 if parser.parse_args(argv).quick else 15
    print(f"{'workload':<28}{'numpy µs':>10}{'eager µs':>11}{'session µs':>11}"
          f"{'traced µs':>11}   ratios vs numpy (eager, session, traced)")

    data = tiny_data()
    t_np, t_e, t_s, t_f = timed(lambda: numpy_tiny(*data), eager_tiny(*data),
                                session_tiny(*data), traced_tiny(*data), repeat=repeat)
    report("tiny (3,4) + grads", t_np, [t_e, t_s, t_f])
    print(f"  per-call overhead over numpy: session {(t_s - t_np) * 1e6:.1f} µs, traced "
          f"{(t_f - t_np) * 1e6:.1f} µs")

    data2 = two_layer_data()
    w_np = [a.copy() for a in data2]
    t_np, t_e, t_f = timed(lambda: numpy_two_layer_step(*w_np),
                           eager_two_layer_step(*[a.copy() for a in data2]),
                           traced_two_layer_step(*[a.copy() for a in data2]), repeat=repeat)
    report("two-layer step 64,1000,100", t_np, [t_e, None, t_f])


if __name__ == "__main__":
    main()
