"""Digits (8×8, scikit-learn's bundled copy) with an MLP and a small CNN, edugraph vs PyTorch.

Same architecture, optimizer (Adam), learning rate, batch size and epochs in both frameworks;
CPU only. Prints, per run: final test accuracy, the first epoch at which test accuracy reached
the target (MLP 95 %, CNN 97 %), and wall-clock seconds of training.

    python bench/bench_digits.py            # both models, both frameworks
"""
import sys
import time
from pathlib import Path

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
    start = time.perf_counter()
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0,
                        validation_data=(x_test, y_test), callbacks=[Watch()])
    seconds = time.perf_counter() - start
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
    start = time.perf_counter()
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
    return accuracy, reached, time.perf_counter() - start


def main():
    (x, y), (x_test, y_test) = eg.datasets.load_digits(test_size=0.2, seed=0)
    data = (x[..., None], y), (x_test[..., None], y_test)
    runs = [("edugraph", run_edugraph)]
    try:
        import torch  # noqa: F401
        runs.append(("pytorch", run_torch))
    except ImportError:
        print("(PyTorch not installed: edugraph only)")
    print(f"digits: {len(x)} train / {len(x_test)} test images, Adam lr={LR}, batch {BATCH}, "
          f"{EPOCHS} epochs, CPU")
    print(f"{'model':5} {'framework':9} {'test acc':>8} {'target':>7} {'epochs to target':>17} "
          f"{'seconds':>8} {'s/epoch':>8}")
    for kind in ("mlp", "cnn"):
        for name, run in runs:
            accuracy, reached, seconds = run(kind, data)
            print(f"{kind:5} {name:9} {accuracy:8.4f} {TARGETS[kind]:7.2f} "
                  f"{str(reached or '-'):>17} {seconds:8.2f} {seconds / EPOCHS:8.3f}")


if __name__ == "__main__":
    main()
