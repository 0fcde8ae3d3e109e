"""Core benchmark: edugraph eager vs hand-written numpy vs PyTorch CPU, in one run.

    python bench/bench_core.py            # all workloads, medians and ratios
    python bench/bench_core.py --quick    # fewer repeats (CI smoke run)

Workloads (from the lecture):
1. tiny graph: x, y, z of shape (3, 4); c = sum(x*y + z); gradients wrt x, y, z
2. two-layer ReLU net, N, D, H = 64, 1000, 100, L2 loss, one SGD step
3. large graph: workload 1 with N, D = 3000, 4000 (time and peak memory)
4. per-op overhead: 1000 chained scalar adds, forward and backward

The numpy columns are forward passes plus hand-derived backward passes: what a student would
write without a framework. Other scripts (bench_static.py) import the reference functions.
"""
import argparse
import gc
import os
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

# One BLAS thread, like PyTorch below: on a shared machine a second BLAS thread waits for a busy
# core (a matmul then takes 100x longer now and then) and the medians measure the neighbours.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import edugraph as eg  # noqa: E402

try:
    import torch
    torch.set_num_threads(1)
except ImportError:
    torch = None

LEARNING_RATE = 1e-6


def measure(fn, repeat=15, min_time=0.02):
    """Median seconds per call of ``fn`` over ``repeat`` batches of at least ``min_time`` s."""
    return compare([fn], repeat, min_time)[0]


def compare(fns, repeat=15, min_time=0.02):
    """Median seconds per call of each of ``fns``, measured in turns (a batch of each, then
    again), so a machine that gets busier or quieter meanwhile changes all of them alike and
    the ratios between them stay fair. Time is this process's CPU time: everything runs on
    one thread, so on an idle machine it equals the wall-clock time, and on a shared one the
    time other processes hold the CPU is not counted against whoever was running."""
    numbers = []
    for fn in fns:
        fn()
        start = clock()
        fn()
        once = max(clock() - start, 1e-7)
        numbers.append(max(1, int(min_time / once)))
    samples = [[] for _ in fns]
    for _ in range(repeat):
        for fn, number, times in zip(fns, numbers, samples):
            start = clock()
            for _ in range(number):
                fn()
            times.append((clock() - start) / number)
    return [statistics.median(times) for times in samples]


clock = time.process_time


def timed(*fns, repeat=15):
    """``compare`` for the contenders of one workload; None (PyTorch missing) gives None."""
    times = iter(compare([f for f in fns if f is not None], repeat))
    return [next(times) if f is not None else None for f in fns]


def peak_memory(fn):
    """Peak bytes allocated (numpy and Python, traced by tracemalloc) while ``fn`` runs."""
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


# --------------------------------------------------------------------------- data
def tiny_data(n=3, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, d)).astype(np.float32) for _ in range(3)]


def two_layer_data(n=64, d=1000, h=100, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.standard_normal((n, d)).astype(np.float32)
    w1 = rng.standard_normal((d, h)).astype(np.float32)
    w2 = rng.standard_normal((h, d)).astype(np.float32)
    return x, y, w1, w2


# --------------------------------------------------------------------------- numpy by hand
def numpy_tiny(x, y, z):
    a = x * y
    b = a + z
    c = b.sum()
    grad_b = np.ones_like(b)            # dc/db: sum copies 1 to every element
    grad_x, grad_y, grad_z = grad_b * y, grad_b * x, grad_b
    return c, grad_x, grad_y, grad_z


def numpy_two_layer_step(x, y, w1, w2, lr=LEARNING_RATE):
    h = np.maximum(x @ w1, 0)
    y_pred = h @ w2
    diff = y_pred - y
    loss = (diff ** 2).sum(axis=1).mean()
    grad_y_pred = 2.0 * diff / x.shape[0]
    grad_w2 = h.T @ grad_y_pred
    grad_h = grad_y_pred @ w2.T
    grad_h[h <= 0] = 0
    grad_w1 = x.T @ grad_h
    w1 -= lr * grad_w1
    w2 -= lr * grad_w2
    return loss


def numpy_chain(n_ops):
    x = np.float32(0.0)
    one = np.float32(1.0)

    def run():
        y = x
        for _ in range(n_ops):
            y = np.add(y, one)
        return y, one                   # d(chain)/dx = 1: the backward of adds copies it
    return run


# --------------------------------------------------------------------------- edugraph eager
def eager_tiny(x, y, z):
    tx, ty, tz = (eg.tensor(a, requires_grad=True) for a in (x, y, z))

    def run():
        tx.grad = ty.grad = tz.grad = None
        c = eg.reduce_sum(tx * ty + tz)
        c.backward()
        return c
    return run


def eager_two_layer_step(x, y, w1, w2, lr=LEARNING_RATE):
    tx, ty = eg.tensor(x), eg.tensor(y)
    tw1, tw2 = eg.Variable(w1), eg.Variable(w2)

    def run():
        tw1.grad = tw2.grad = None
        y_pred = eg.matmul(eg.nn.relu(eg.matmul(tx, tw1)), tw2)
        loss = eg.reduce_mean(eg.reduce_sum((y_pred - ty) ** 2, axis=1))
        loss.backward()
        with eg.no_grad():
            tw1.assign_sub(tw1.grad * lr)
            tw2.assign_sub(tw2.grad * lr)
        return loss
    return run


def eager_chain(n_ops):
    x = eg.tensor(0.0, requires_grad=True)

    def run():
        x.grad = None
        y = x
        for _ in range(n_ops):
            y = y + 1.0
        y.backward()
        return y
    return run


# --------------------------------------------------------------------------- PyTorch eager
def torch_tiny(x, y, z):
    tx, ty, tz = (torch.tensor(a, requires_grad=True) for a in (x, y, z))

    def run():
        tx.grad = ty.grad = tz.grad = None
        c = torch.sum(tx * ty + tz)
        c.backward()
        return c
    return run


def torch_two_layer_step(x, y, w1, w2, lr=LEARNING_RATE):
    tx, ty = torch.tensor(x), torch.tensor(y)
    tw1, tw2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)

    def run():
        tw1.grad = tw2.grad = None
        y_pred = torch.relu(tx @ tw1) @ tw2
        loss = ((y_pred - ty) ** 2).sum(dim=1).mean()
        loss.backward()
        with torch.no_grad():
            tw1.sub_(lr * tw1.grad)
            tw2.sub_(lr * tw2.grad)
        return loss
    return run


def torch_chain(n_ops):
    x = torch.tensor(0.0, requires_grad=True)

    def run():
        x.grad = None
        y = x
        for _ in range(n_ops):
            y = y + 1.0
        y.backward()
        return y
    return run


# --------------------------------------------------------------------------- report
def row(name, numpy_s, eager_s, torch_s=None, extra=""):
    cols = f"{name:<34}{numpy_s * 1e6:>12.1f}{eager_s * 1e6:>12.1f}"
    cols += f"{torch_s * 1e6:>12.1f}" if torch_s else f"{'-':>12}"
    cols += f"{eager_s / numpy_s:>10.2f}x"
    cols += f"{torch_s / eager_s:>11.2f}x" if torch_s else f"{'-':>12}"
    print(cols + ("  " + extra if extra else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args(argv)
    repeat = 5 if args.quick else 15
    have_torch = torch is not None

    print(f"numpy {np.__version__}" + (f", torch {torch.__version__} (1 thread)"
                                       if have_torch else ", torch not installed"))
    print(f"{'workload':<34}{'numpy µs':>12}{'eager µs':>12}{'torch µs':>12}"
          f"{'eager/np':>11}{'torch/eager':>12}")

    data = tiny_data()
    t_np, t_eg, t_th = timed(lambda: numpy_tiny(*data), eager_tiny(*data),
                             torch_tiny(*data) if have_torch else None, repeat=repeat)
    row("1 tiny graph (3,4)", t_np, t_eg, t_th,
        f"per-op overhead {(t_eg - t_np) / 3 * 1e6:.2f} µs over 3 ops")

    data2 = two_layer_data()
    w_np = [a.copy() for a in data2]
    t_np, t_eg, t_th = timed(
        lambda: numpy_two_layer_step(*w_np), eager_two_layer_step(*[a.copy() for a in data2]),
        torch_two_layer_step(*[a.copy() for a in data2]) if have_torch else None,
        repeat=repeat)
    row("2 two-layer net step 64x1000x100", t_np, t_eg, t_th)

    big = tiny_data(3000, 4000)
    eager_big = eager_tiny(*big)
    t_np, t_eg, t_th = timed(lambda: numpy_tiny(*big), eager_big,
                             torch_tiny(*big) if have_torch else None, repeat=max(3, repeat // 3))
    mem_np = peak_memory(lambda: numpy_tiny(*big))
    mem_eg = peak_memory(eager_big)
    row("3 large graph (3000,4000)", t_np, t_eg, t_th,
        f"peak memory {mem_eg / mem_np:.2f}x numpy ({mem_eg / 2**20:.0f} vs "
        f"{mem_np / 2**20:.0f} MiB)")

    n_ops = 1000
    t_np, t_eg, t_th = timed(numpy_chain(n_ops), eager_chain(n_ops),
                             torch_chain(n_ops) if have_torch else None, repeat=repeat)
    row(f"4 chain of {n_ops} scalar adds", t_np, t_eg, t_th,
        f"per-op overhead {(t_eg - t_np) / n_ops * 1e6:.2f} µs")

if __name__ == "__main__":
    main()
