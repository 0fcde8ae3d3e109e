"""Core benchmark: edugraph (eager, Session.run, traced function) vs hand-written numpy vs
PyTorch CPU, all in one run.

    python bench/bench_core.py            # all workloads, warm and fresh, medians and ratios
    python bench/bench_core.py --quick    # fewer repeats and fresh rounds
    python bench/bench_core.py --warm     # only warm (--fresh: only fresh; --rounds N)

Workloads (from the lecture):
1. tiny graph: x, y, z of shape (3, 4); c = sum(x*y + z); gradients wrt x, y, z
2. the lecture's two-layer ReLU net, N, D, H = 64, 1000, 100, weights at 0.01 scale, squared
   error, one SGD step with lr 1e-4 (eagerly: ``requires_grad=True`` tensors updated in place
   under ``no_grad``, as in PyTorch)
3. large graph: workload 1 with N, D = 3000, 4000 (time and peak memory)
4. per-op overhead: 1000 chained scalar adds, forward and backward
5. the slides' tf.function example: one LSTMCell(10) step on a (10, 10) input, forward only

Columns: numpy (forward plus hand-derived backward: what a student would write without a
framework), edugraph eager (``backward()``), a static graph run by ``Session.run`` (gradients
from ``eg.gradients``, the update from an optimizer's ``minimize``), the same as one traced
``eg.function`` (a GradientTape inside), and PyTorch eager. Every contender of a workload is
timed in turns in the same run (``compare``), so the ratios compare like with like; graphs are
built and traced before timing. ``tests/test_bench.py`` checks that the contenders compute the
same numbers.

Warm and fresh. The *warm* table times every contender of every workload in this one process,
one workload after the other. The *fresh* table times each contender of each workload in a new
Python process of its own (``bench/fresh.py``), as a student's new kernel runs a lesson's loop:
what ran before in a process changes how fast its next loop runs (the C allocator's limits move
the first time a large array is freed, see ``edugraph/allocator.py``). The contenders take turns
(numpy, eager, ..., PyTorch, then again) for ``--rounds`` rounds; the table gives each one's
median over the rounds, and the ratios of those medians. Fresh processes also report page
faults per step and peak memory: the bytes numpy and Python allocate during one step
(``tracemalloc``, so the same for every contender that computes with numpy; PyTorch's own
allocator is not traced) and how far the process's resident memory rose while timing.
"""
import argparse
import gc
import json
import os
import statistics
import subprocess
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

LEARNING_RATE = 1e-4


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


def two_layer_data(n=64, d=1000, h=100, seed=0, scale=0.01):
    """Data and the lecture's small initial weights (``randn(d, h) * 0.01``)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.standard_normal((n, d)).astype(np.float32)
    w1 = (rng.standard_normal((d, h)) * scale).astype(np.float32)
    w2 = (rng.standard_normal((h, d)) * scale).astype(np.float32)
    return x, y, w1, w2


def lstm_data(units=10, batch=10, seed=0):
    """Input, state [h, c] and the cell's weights (kernel, recurrent kernel, bias)."""
    rng = np.random.default_rng(seed)
    x, h, c = (rng.standard_normal((batch, units)).astype(np.float32) for _ in range(3))
    weights = [rng.standard_normal(s).astype(np.float32) * 0.3
               for s in ((units, 4 * units), (units, 4 * units), (4 * units,))]
    return x, [h, c], weights


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


def numpy_lstm(x, state, weights):
    kernel, recurrent, bias = weights
    h, c = state
    n = h.shape[1]

    def sigmoid(v):
        return 1 / (1 + np.exp(-v))

    def run():
        z = x @ kernel + h @ recurrent + bias
        c_new = sigmoid(z[:, n:2 * n]) * c + sigmoid(z[:, :n]) * np.tanh(z[:, 2 * n:3 * n])
        h_new = sigmoid(z[:, 3 * n:]) * np.tanh(c_new)
        return h_new, [h_new, c_new]
    return run


# --------------------------------------------------------------------------- edugraph eager
def eager_tiny(x, y, z):
    tx, ty, tz = (eg.tensor(a, requires_grad=True) for a in (x, y, z))

    def run():
        tx.grad = ty.grad = tz.grad = None
        c = eg.reduce_sum(tx * ty + tz)
        c.backward()
        return c, tx.grad, ty.grad, tz.grad
    return run


def eager_two_layer_step(x, y, w1, w2, lr=LEARNING_RATE):
    """The lecture's PyTorch-style loop body, written with edugraph."""
    tx, ty = eg.tensor(x), eg.tensor(y)
    tw1, tw2 = eg.tensor(w1, requires_grad=True), eg.tensor(w2, requires_grad=True)

    def run():
        y_pred = eg.matmul(eg.nn.relu(eg.matmul(tx, tw1)), tw2)
        loss = eg.reduce_mean(eg.reduce_sum((y_pred - ty) ** 2, axis=1))
        loss.backward()
        with eg.no_grad():
            for w in (tw1, tw2):
                w -= lr * w.grad
                w.grad = None
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
        return y, x.grad
    return run


def _lstm_cell(weights):
    cell = eg.layers.LSTMCell(weights[0].shape[1] // 4)
    cell.build_for((None, weights[0].shape[0]))
    cell.set_weights(weights)
    return cell


def eager_lstm(x, state, weights):
    cell, tx, tstate = _lstm_cell(weights), eg.tensor(x), [eg.tensor(s) for s in state]
    return lambda: cell(tx, tstate)


# --------------------------------------------------------------------------- static graph
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
    return lambda: sess.run(fetches, feeds)[0]


def session_chain(n_ops):
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, shape=())
        y = x
        for _ in range(n_ops):
            y = y + 1.0
        fetches = [y, eg.gradients(y, [x])[0]]
    sess = eg.Session(graph=graph)
    feeds = {x: np.float32(0.0)}
    return lambda: sess.run(fetches, feeds)


def session_lstm(x_val, state_val, weights):
    graph = eg.Graph()
    with graph.as_default():
        x = eg.placeholder(eg.float32, shape=x_val.shape)
        h, c = (eg.placeholder(eg.float32, shape=s.shape) for s in state_val)
        cell = eg.layers.LSTMCell(weights[0].shape[1] // 4)
        out, state = cell(x, [h, c])
        init = eg.global_variables_initializer()
    sess = eg.Session(graph=graph)
    sess.run(init)
    for var, value in zip(cell.variables, weights):
        var.load(value, sess)
    fetches, feeds = [out, state], {x: x_val, h: state_val[0], c: state_val[1]}
    return lambda: sess.run(fetches, feeds)


# --------------------------------------------------------------------------- traced function
def traced_tiny(x, y, z):
    """c = sum(x*y + z) and its gradients, as one traced function (a tape inside)."""
    @eg.function
    def step(x, y, z):
        with eg.GradientTape() as tape:
            tape.watch([x, y, z])
            c = eg.reduce_sum(x * y + z)
        return (c, *tape.gradient(c, [x, y, z]))
    step.get_concrete_function(x, y, z)     # trace once (tracing does not run it)
    return lambda: step(x, y, z)


def traced_two_layer_step(x, y, w1, w2, lr=LEARNING_RATE):
    """The SGD step of eager_two_layer_step, traced: forward, gradients and the in-place
    updates of the (eager) Variables are one graph."""
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
    step.get_concrete_function(tx, ty)      # trace once: no update happens
    return lambda: step(tx, ty)


def traced_chain(n_ops):
    @eg.function
    def chain(x):
        with eg.GradientTape() as tape:
            tape.watch(x)
            y = x
            for _ in range(n_ops):
                y = y + 1.0
        return y, tape.gradient(y, x)
    x = eg.tensor(0.0)
    chain.get_concrete_function(x)
    return lambda: chain(x)


def traced_lstm(x, state, weights):
    """The slide: ``fn = tf.function(lambda input, state: lstm_cell(input, state))``."""
    cell, tx, tstate = _lstm_cell(weights), eg.tensor(x), [eg.tensor(s) for s in state]
    fn = eg.function(lambda input, state: cell(input, state))
    fn.get_concrete_function(tx, tstate)
    return lambda: fn(tx, tstate)


# --------------------------------------------------------------------------- PyTorch eager
def torch_tiny(x, y, z):
    tx, ty, tz = (torch.tensor(a, requires_grad=True) for a in (x, y, z))

    def run():
        tx.grad = ty.grad = tz.grad = None
        c = torch.sum(tx * ty + tz)
        c.backward()
        return c, tx.grad, ty.grad, tz.grad
    return run


def torch_two_layer_step(x, y, w1, w2, lr=LEARNING_RATE):
    tx, ty = torch.tensor(x), torch.tensor(y)
    tw1, tw2 = torch.tensor(w1, requires_grad=True), torch.tensor(w2, requires_grad=True)

    def run():
        y_pred = torch.relu(tx @ tw1) @ tw2
        loss = ((y_pred - ty) ** 2).sum(dim=1).mean()
        loss.backward()
        with torch.no_grad():
            for w in (tw1, tw2):
                w -= lr * w.grad
                w.grad = None
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
        return y, x.grad
    return run


def torch_lstm(x, state, weights):
    cell = torch.nn.LSTMCell(x.shape[1], state[0].shape[1])
    with torch.no_grad():
        cell.weight_ih.copy_(torch.tensor(weights[0].T))
        cell.weight_hh.copy_(torch.tensor(weights[1].T))
        cell.bias_ih.copy_(torch.tensor(weights[2]))
        cell.bias_hh.zero_()
    tx, tstate = torch.tensor(x), tuple(torch.tensor(s) for s in state)

    def run():
        with torch.no_grad():
            h, c = cell(tx, tstate)
        return h, [h, c]
    return run


# --------------------------------------------------------------------------- workloads
# Each workload: its contenders' makers. A maker builds a contender (its data, graph, traced
# function) and returns the step to time; a fresh process builds only the one it times (what
# the others allocate while building would change its allocator's state).
def tiny_makers(n=3, d=4):
    data = tiny_data(n, d)
    return {"numpy": lambda: lambda: numpy_tiny(*data), "eager": lambda: eager_tiny(*data),
            "session": lambda: session_tiny(*data), "traced": lambda: traced_tiny(*data),
            "torch": lambda: torch_tiny(*data)}


def two_layer_makers():
    """Each contender makes its own data (the same numbers): it updates its own weights."""
    def numpy_step():
        data = two_layer_data()
        return lambda: numpy_two_layer_step(*data)
    return {"numpy": numpy_step, "eager": lambda: eager_two_layer_step(*two_layer_data()),
            "session": lambda: session_two_layer_step(*two_layer_data()),
            "traced": lambda: traced_two_layer_step(*two_layer_data()),
            "torch": lambda: torch_two_layer_step(*two_layer_data())}


def large_makers():
    return tiny_makers(3000, 4000)


CHAIN_OPS = 1000


def chain_makers():
    return {"numpy": lambda: numpy_chain(CHAIN_OPS), "eager": lambda: eager_chain(CHAIN_OPS),
            "session": lambda: session_chain(CHAIN_OPS),
            "traced": lambda: traced_chain(CHAIN_OPS), "torch": lambda: torch_chain(CHAIN_OPS)}


def lstm_makers():
    data = lstm_data()
    return {"numpy": lambda: numpy_lstm(*data), "eager": lambda: eager_lstm(*data),
            "session": lambda: session_lstm(*data), "traced": lambda: traced_lstm(*data),
            "torch": lambda: torch_lstm(*data)}


def tiny_notes(t):
    overhead = t["session"] - t["numpy"]
    return [f"eager: {(t['eager'] - t['numpy']) / 3 * 1e6:.2f} µs per op over numpy (3 ops)",
            f"Session.run overhead {overhead * 1e6:.1f} µs, traced call overhead "
            f"{(t['traced'] - t['numpy']) * 1e6:.1f} µs"
            + (f"; eager PyTorch takes {t['torch'] / overhead:.1f}x the Session.run overhead"
               if t.get("torch") else "")]


def chain_notes(t):
    return [f"eager: {(t['eager'] - t['numpy']) / CHAIN_OPS * 1e6:.2f} µs per op over numpy"]


def lstm_notes(t):
    return [f"the slides' tf.function example: traced {t['eager'] / t['traced']:.1f}x faster "
            "than eager"]


# key: (row label, makers, repeats divided by, notes from the medians)
WORKLOADS = {
    "tiny": ("1 tiny graph (3,4)", tiny_makers, 1, tiny_notes),
    "two_layer": ("2 two-layer step 64x1000x100", two_layer_makers, 1, None),
    "large": ("3 large graph (3000,4000)", large_makers, 3, None),
    "chain": (f"4 chain of {CHAIN_OPS} scalar adds", chain_makers, 1, chain_notes),
    "lstm": ("5 LSTMCell(10) step, forward", lstm_makers, 1, lstm_notes),
}


# --------------------------------------------------------------------------- report
COLUMNS = ["numpy", "eager", "session", "traced", "torch"]


def header():
    print(f"{'workload (µs per step)':<28}" + "".join(f"{c:>10}" for c in COLUMNS)
          + f"{'eager/np':>11}{'session/np':>11}{'traced/np':>11}{'torch/eager':>13}")


def row(name, times, extra=()):
    """One line of medians (µs) and ratios against numpy; ``extra``: notes below it."""
    numpy_s = times["numpy"]
    cols = f"{name:<28}" + "".join(f"{times[c] * 1e6:>10.1f}" if times.get(c) else f"{'-':>10}"
                                   for c in COLUMNS)
    cols += "".join(f"{times[c] / numpy_s:>10.2f}x" if times.get(c) else f"{'-':>11}"
                    for c in COLUMNS[1:4])
    cols += f"{times['torch'] / times['eager']:>12.2f}x" if times.get("torch") else f"{'-':>13}"
    print(cols)
    for line in extra:
        print("    " + line)


def present_columns():
    return [c for c in COLUMNS if c != "torch" or torch is not None]


def run_workload(contenders, repeat):
    """{column: median seconds} for the built contenders, timed in turns."""
    return dict(zip(contenders, compare(list(contenders.values()), repeat)))


def warm(repeat):
    """Every workload in this process, one after the other."""
    print("warm: all workloads in this one process")
    header()
    for key, (label, makers, divisor, notes) in WORKLOADS.items():
        made = {c: make() for c, make in makers().items() if c in present_columns()}
        t = run_workload(made, max(3, repeat // divisor))
        extra = notes(t) if notes else []
        if key == "large":
            mem_np = peak_memory(made["numpy"])
            mem_eg = peak_memory(made["eager"])
            extra = [f"eager peak memory {mem_eg / mem_np:.2f}x numpy ({mem_eg / 2**20:.0f} vs "
                     f"{mem_np / 2**20:.0f} MiB)"]
        row(label, t, extra)


def fresh(rounds, repeat):
    """Each contender of each workload in a new process (``bench/fresh.py``), in turns."""
    print(f"fresh: each contender in a new process, medians of {rounds} rounds")
    columns = present_columns()
    results = {key: {c: [] for c in columns} for key in WORKLOADS}
    script = str(Path(__file__).resolve().parent / "fresh.py")
    for _ in range(rounds):
        for key in WORKLOADS:
            for column in columns:
                out = subprocess.run([sys.executable, script, key, column, str(repeat)],
                                     check=True, capture_output=True, text=True).stdout
                results[key][column].append(json.loads(out.splitlines()[-1]))
    header()
    for key, (label, _, _, notes) in WORKLOADS.items():
        runs = results[key]
        t = {c: statistics.median(r["seconds"] for r in runs[c]) for c in columns}
        extra = notes(t) if notes else []
        faults = "  ".join(f"{c} {statistics.median(r['faults'] for r in runs[c]):.0f}"
                           for c in columns)
        extra.append(f"page faults per step: {faults}")
        if key in ("two_layer", "large"):           # (the others' arrays are a few bytes)
            mem = {c: statistics.median(r["traced_peak"] for r in runs[c])
                   for c in ("numpy", "eager")}
            rss = "  ".join(f"{c} {statistics.median(r['rss_rise'] for r in runs[c]) / 2**20:.1f}"
                            for c in columns)
            extra.append(f"peak memory: eager {mem['eager'] / mem['numpy']:.2f}x numpy "
                         f"({mem['eager'] / 2**20:.2f} vs {mem['numpy'] / 2**20:.2f} MiB traced "
                         f"in a step); resident memory rose (MiB): {rss}")
        row(label, t, extra)


def fresh_child(key, column, repeat):
    """What ``bench/fresh.py`` runs in its new process: one contender of one workload, timed
    like the warm table (``compare``) and then measured, as a dict for JSON."""
    import resource
    fn = WORKLOADS[key][1]()[column]()
    divisor = WORKLOADS[key][2]
    rss_before = _memory_status("VmRSS")
    seconds = compare([fn], max(3, repeat // divisor))[0]
    peak_rss = _memory_status("VmHWM")
    calls = max(1, int(0.1 / seconds))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(calls):
        fn()
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / calls
    return {"seconds": seconds, "faults": faults, "traced_peak": peak_memory(fn),
            "rss_rise": max(0, peak_rss - rss_before)}


def _memory_status(field):
    """This process's resident memory now (``VmRSS``) or at its peak (``VmHWM``), in bytes,
    from Linux's /proc/self/status. (Not ``ru_maxrss``: Linux carries it over from the parent
    process that started this one, here the benchmark's, with its large graph.)"""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024     # (kB)
    raise OSError(f"no {field} in /proc/self/status")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and rounds")
    parser.add_argument("--warm", action="store_true", help="only the warm table")
    parser.add_argument("--fresh", action="store_true", help="only the fresh table")
    parser.add_argument("--rounds", type=int, default=None,
                        help="fresh processes per contender and workload (default 7, quick 3)")
    args = parser.parse_args(argv)
    repeat = 5 if args.quick else 15
    rounds = args.rounds or (3 if args.quick else 7)

    print(f"numpy {np.__version__}" + (f", torch {torch.__version__} (1 thread)"
                                       if torch is not None else ", torch not installed"))
    if not args.fresh:
        warm(repeat)
    if not args.warm:
        fresh(rounds, repeat)


if __name__ == "__main__":
    main()
