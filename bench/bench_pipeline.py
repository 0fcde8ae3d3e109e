"""The input-pipeline lecture in numbers: a slow producer and a slow consumer.

Each example takes ``LOAD_MS`` to "load" (a sleep, like waiting for disk or network: it frees
the CPU, as real I/O does), and each batch takes ``STEP_MS`` to "train" on (a sleep standing
for a GPU step, plus a real edugraph op). Serially the two costs add up; parallel ``map``
divides the loading time by the number of workers, and ``prefetch`` overlaps loading with
training, so an epoch takes about max(load, train) instead of load + train.

    python bench/bench_pipeline.py
"""
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import edugraph as eg  # noqa: E402

N, BATCH, LOAD_MS, STEP_MS, WORKERS = 256, 32, 2.0, 40.0, 8


def load(index):
    time.sleep(LOAD_MS / 1000)                    # reading and decoding one example
    return np.full(16, float(index), np.float32), index


def pipeline(parallel, prefetch):
    ds = eg.data.Dataset.range(N).map(lambda i: load(int(i)),
                                      num_parallel_calls=WORKERS if parallel else None)
    ds = ds.batch(BATCH)
    return ds.prefetch(2) if prefetch else ds


def epoch_seconds(ds):
    start = time.perf_counter()
    seen = 0
    for x, y in ds:
        eg.reduce_sum(x * x)                      # the model's work...
        time.sleep(STEP_MS / 1000)                # ...and the accelerator's
        seen += len(y)
    assert seen == N
    return time.perf_counter() - start


def main():
    steps = N // BATCH
    print(f"{N} examples, {LOAD_MS} ms to load each, batches of {BATCH}, {STEP_MS} ms per "
          f"training step ({steps} steps); parallel map uses {WORKERS} threads")
    print(f"expected serial: {N * LOAD_MS + steps * STEP_MS:.0f} ms = "
          f"{N * LOAD_MS:.0f} ms loading + {steps * STEP_MS:.0f} ms training")
    baseline = None
    print(f"{'pipeline':36} {'epoch (ms)':>10} {'speed-up':>9}")
    for label, parallel, prefetch in [("map, batch (serial)", False, False),
                                      ("map(num_parallel_calls=8), batch", True, False),
                                      ("map, batch, prefetch(2)", False, True),
                                      ("parallel map, batch, prefetch(2)", True, True)]:
        seconds = min(epoch_seconds(pipeline(parallel, prefetch)) for _ in range(3))
        baseline = baseline or seconds
        print(f"{label:36} {seconds * 1000:10.0f} {baseline / seconds:8.2f}x")


if __name__ == "__main__":
    main()
