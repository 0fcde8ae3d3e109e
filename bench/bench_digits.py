"""Digits (8×8, scikit-learn's bundled copy) with an MLP and a small CNN, edugraph vs PyTorch.

Same architecture, optimizer (Adam), learning rate, batch size and epochs in both frameworks;
CPU only. Prints, per run: final test accuracy, the first epoch at which test accuracy reached
the target (MLP 95 %, CNN 97 %), and the seconds of training (CPU time, on one thread: see
bench_core.py's ``compare``). Each run is a fresh Python process of its own (as a student's
kernel runs a lesson), and the frameworks take turns.

    python bench/bench_digits.py            # both models, both frameworks
    python bench/bench_digits.py --runs 3   # each run three times (medians of the seconds)
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")     # (one thread, as PyTorch below)
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import edugraph as eg  # noqa: E402
from edugraph import layers  # noqa: E402

EPOCHS, BATCH, LR = 20, 32, 0.002
TARGETS = {"mlp": 0.95, "cnn": 0.97}


def edugraph_model(kind):
    if kind == "mlp":
        return eg.Sequential([layers.Flatten(input_shape=(8, 8, 1)),
                              layers.Dense(128, activation="relu"), layers.Dense(10)])
    return eg.Sequential([
        layers.Conv2D(32, 3, padding="same", activation="relu", input_shape=(8, 8, 1)),
        layers.MaxPooling2D(),                                   # 4×4×32
        layers.Conv2D(64, 3, activation="relu"),                 # 2×2×64
        layers.Flatten(), layers.Dense(10)])


def run_edugraph(kind, data):
    (x, y), (x_test, y_test) = data
    eg.random.set_seed(0)
    model = edugraph_model(kind)
    model.compile(eg.train.AdamOptimizer(LR),
                  eg.losses.SparseCategoricalCrossentropy(from_logits=True), ["accuracy"])
    reached, seconds = None, 0.0

    class Watch(eg.models.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            nonlocal reached
            if reached is None and logs["val_accuracy"] >= TARGETS[kind]:
                reached = epoch + 1
    start = time.process_time()
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0,
                        validation_data=(x_test, y_test), callbacks=[Watch()])
    seconds = time.process_time() - start
    return history.history["val_accuracy"][-1], reached, seconds


def run_torch(kind, data):
    import torch
    from torch import nn
    torch.manual_seed(0)
    torch.set_num_threads(1)
    (x, y), (x_test, y_test) = data
    x, x_test = (torch.tensor(a.transpose(0, 3, 1, 2)) for a in (x, x_test))
    y, y_test = torch.tensor(y), torch.tensor(y_test)
    if kind == "mlp":
        model = nn.Sequential(nn.Flatten(), nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    else:
        model = nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Flatten(),
                              nn.Linear(256, 10))
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    reached, accuracy = None, 0.0
    start = time.process_time()
    for epoch in range(EPOCHS):
        model.train()
        for idx in torch.randperm(len(x)).split(BATCH):
            opt.zero_grad()
            nn.functional.cross_entropy(model(x[idx]), y[idx]).backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            accuracy = (model(x_test).argmax(1) == y_test).float().mean().item()
        if reached is None and accuracy >= TARGETS[kind]:
            reached = epoch + 1
    return accuracy, reached, time.process_time() - start


RUNS = {"edugraph": run_edugraph, "pytorch": run_torch}


def load_data():
    (x, y), (x_test, y_test) = eg.datasets.load_digits(test_size=0.2, seed=0)
    return (x[..., None], y), (x_test[..., None], y_test)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="fresh processes per model and "
                        "framework (the table gives the median seconds)")
    parser.add_argument("--one", nargs=2, metavar=("MODEL", "FRAMEWORK"),
                        help=argparse.SUPPRESS)    # (what each fresh process runs)
    args = parser.parse_args(argv)
    if args.one:
        kind, name = args.one
        print(json.dumps(RUNS[name](kind, load_data())))
        return
    names = list(RUNS)
    try:
        import torch  # noqa: F401
    except ImportError:
        names.remove("pytorch")
        print("(PyTorch not installed: edugraph only)")
    (x, _), (x_test, _) = load_data()
    print(f"digits: {len(x)} train / {len(x_test)} test images, Adam lr={LR}, batch {BATCH}, "
          f"{EPOCHS} epochs, CPU, each run in a fresh process")
    print(f"{'model':5} {'framework':9} {'test acc':>8} {'target':>7} {'epochs to target':>17} "
          f"{'seconds':>8} {'s/epoch':>8}")
    for kind in ("mlp", "cnn"):
        results = {name: [] for name in names}
        for _ in range(args.runs):
            for name in names:
                out = subprocess.run([sys.executable, __file__, "--one", kind, name],
                                     check=True, capture_output=True, text=True).stdout
                results[name].append(json.loads(out.splitlines()[-1]))
        for name in names:
            accuracy, reached, _ = results[name][0]     # (seeded: every run trains alike)
            seconds = statistics.median(r[2] for r in results[name])
            print(f"{kind:5} {name:9} {accuracy:8.4f} {TARGETS[kind]:7.2f} "
                  f"{str(reached or '-'):>17} {seconds:8.2f} {seconds / EPOCHS:8.3f}")


if __name__ == "__main__":
    main()
