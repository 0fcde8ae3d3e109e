"""A worker of the distributed tests: the slide's model, trained a few steps with
``MultiWorkerMirroredStrategy``; it saves its weights, its losses and a ring all-reduce of its
own values (and, under MPI, MPI's own ``Allreduce`` of them) to OUT_DIR/worker_<rank>.npz.

    python tests/distribute_worker.py OUT_DIR [--timeout S] [--die-at-step K]
        (each with its TF_CONFIG: eg.distribute.launch starts them)
    mpiexec -n 3 python tests/distribute_worker.py OUT_DIR

The test compares the workers with ``MirroredStrategy`` in one process, using the same
``build_model`` and ``dataset`` (imported from here).
"""
import argparse
import os
import pathlib

import numpy as np

import edugraph as eg

BATCH_SIZE_PER_REPLICA = 4
EPOCHS = 2
NUM_EXAMPLES = 26                   # on 3 replicas: batches of 12, 12 and 2 (split 1, 1, 0)


def build_model(seed=1):
    """The slide's model (on 8×8 images), in float64 so that sums agree to rounding."""
    eg.random.set_seed(seed)
    model = eg.keras.Sequential([
        eg.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
        eg.keras.layers.MaxPooling2D(),
        eg.keras.layers.Flatten(),
        eg.keras.layers.Dense(10, activation="softmax"),
    ])
    model.to(eg.float64)
    model.compile(loss="sparse_categorical_crossentropy",
                  optimizer=eg.keras.optimizers.Adam(learning_rate=0.01),
                  metrics=["accuracy"])
    return model


def dataset(num_replicas, num_examples=NUM_EXAMPLES):
    """The same batches for every worker: the global batch is split by the strategy."""
    rng = np.random.default_rng(0)
    images = rng.normal(size=(num_examples, 8, 8, 1))
    labels = rng.integers(0, 10, num_examples)
    return eg.data.Dataset.from_tensor_slices((images, labels)).batch(
        BATCH_SIZE_PER_REPLICA * num_replicas)


class _DieAt(eg.keras.callbacks.Callback):
    """Ends the process abruptly at a step, as a crash would (no clean-up, no goodbye)."""

    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_begin(self, batch, logs=None):
        if batch == self.step:
            os._exit(3)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir", type=pathlib.Path)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--die-at-step", type=int)
    args = parser.parse_args()

    strategy = eg.distribute.MultiWorkerMirroredStrategy(timeout=args.timeout)
    rank = strategy.cluster_resolver.task_id
    with strategy.scope():
        model = build_model(seed=1 + rank)      # different starts: the chief's is broadcast
    dies = [] if args.die_at_step is None or rank != strategy.num_replicas_in_sync - 1 \
        else [_DieAt(args.die_at_step)]
    history = model.fit(dataset(strategy.num_replicas_in_sync), epochs=EPOCHS, verbose=0,
                        callbacks=dies)

    values = np.random.default_rng(100 + rank).normal(size=1001)
    ring, _ = eg.distribute.ring_all_reduce(strategy.communicator, values)
    results = {"values": values, "ring": ring, "loss": np.array(history.history["loss"])}
    if isinstance(strategy.communicator, eg.distribute.MPICommunicator):
        mpi = np.empty_like(values)
        strategy.communicator.comm.Allreduce(values, mpi)
        results["mpi"] = mpi
    results.update({f"weight_{i}": v.numpy() for i, v in enumerate(model.variables)})
    np.savez(args.out_dir / f"worker_{rank}.npz", **results)
    strategy.close()


if __name__ == "__main__":
    main()
