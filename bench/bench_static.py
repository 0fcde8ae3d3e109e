"""Static mode benchmark: Session.run on the lecture's workloads vs numpy by hand and PyTorch.

Run from the repository root: ``python bench/bench_static.py [--quick]``. Ratios are taken in
one run, on one machine (PyTorch limited to one thread, like numpy's elementwise code).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_core import (LEARNING_RATE, numpy_tiny, numpy_two_layer_step,  # noqa: E402
                        tiny_data, timed, torch, torch_tiny, torch_two_layer_step,
                        two_layer_data)  # (first: it sets up numpy with one BLAS thread)
import edugraph as eg  # noqa: E402


def session_tiny(x_val, y_val, z_val):
    """c = sum(x*y + z) and its gradients, fetched with one Session.run."""
    graph = eg.Graph()
    with graph.as_default():
        x, y, z = (eg.placeholder(eg.float32, shape=x_val.shape) for _ in range(3))
        c = eg.reduce_sum(x * y + z)
        fetches = [c] + eg.gradients(c, [x, y, z])
    sess = eg.Session(graph=graph)
    feeds = {x: x_val, y: y_val, z: z_val}
    return lambda: sess.run(fetches, feeds)


def session_two_layer_step(x_val, y_val, w1_val, w2_val, lr=LEARNING_RATE):
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, shape=x_val.shape)
        y = eg.placeholder(eg.float32, shape=y_val.shape)
        w1, w2 = eg.Variable(w1_val), eg.Variable(w2_val)
        diff = eg.matmul(eg.maximum(eg.matmul(x, w1), 0), w2) - y
        loss = eg.reduce_mean(eg.reduce_sum(diff ** 2, axis=1))
        updates = eg.train.GradientDescentOptimizer(lr).minimize(loss)
        init = eg.global_variables_initializer()
    sess = eg.Session(graph=graph)
    sess.run(init)
    feeds = {x: x_val, y: y_val}
    fetches = [loss, updates]
    return lambda: sess.run(fetches, feeds)


def report(name, numpy_s, session_s, torch_s=None):
    line = f"{name:<30}{numpy_s * 1e6:>11.1f}{session_s * 1e6:>13.1f}"
    line += f"{torch_s * 1e6:>11.1f}" if torch_s else f"{'-':>11}"
    print(line + f"{session_s / numpy_s:>12.2f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    repeat = 5 if parser.parse_args(argv).quick else 15
    print(f"{'workload':<30}{'numpy µs':>11}{'session µs':>13}{'torch µs':>11}"
          f"{'session/np':>13}")

    data = tiny_data()
    t_np, t_s, t_th = timed(lambda: numpy_tiny(*data), session_tiny(*data),
                            torch_tiny(*data) if torch else None, repeat=repeat)
    report("tiny graph (3,4) + grads", t_np, t_s, t_th)
    overhead = t_s - t_np
    print(f"  Session.run overhead on (3,4): {overhead * 1e6:.1f} µs"
          + (f"; eager PyTorch step {t_th * 1e6:.1f} µs = {t_th / overhead:.1f}x the "
             "overhead" if t_th else ""))

    data2 = two_layer_data()
    w_np = [a.copy() for a in data2]
    t_np, t_s, t_th = timed(
        lambda: numpy_two_layer_step(*w_np), session_two_layer_step(*[a.copy() for a in data2]),
        torch_two_layer_step(*[a.copy() for a in data2]) if torch else None, repeat=repeat)
    report("two-layer step 64,1000,100", t_np, t_s, t_th)

    big = tiny_data(3000, 4000)
    t_np, t_s, t_th = timed(lambda: numpy_tiny(*big), session_tiny(*big),
                            torch_tiny(*big) if torch else None, repeat=max(3, repeat // 3))
    report("tiny graph (3000,4000) + grads", t_np, t_s, t_th)

if __name__ == "__main__":
    main()
