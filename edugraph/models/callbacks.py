"""Callbacks: code that ``fit`` runs at the start and end of epochs and batches.

``History`` records the logs (``fit`` returns it), ``EarlyStopping`` stops when a monitored
number stops improving, ``TerminateOnNaN`` stops at a loss that is not a number (``fit`` adds
one), ``LearningRateScheduler`` / ``ReduceLROnPlateau`` change the optimizer's learning rate,
and ``ProgressBar`` draws the progress line (``verbose``).
"""
import math
import sys
import time

__all__ = ["Callback", "History", "EarlyStopping", "TerminateOnNaN", "LearningRateScheduler",
           "ReduceLROnPlateau", "LambdaCallback", "ProgressBar"]


class Callback:
    """Override the hooks you need; ``self.model`` is the model being trained."""

    model = None
    params = {}

    def set_model(self, model):
        self.model = model

    def set_params(self, params):
        """Keras's hook: ``fit`` hands every callback ``{"verbose", "epochs", "steps"}``
        before training (``self.params["epochs"]``: how many epochs it will run)."""
        self.params = params

    def on_train_begin(self, logs=None): pass
    def on_train_end(self, logs=None): pass
    def on_epoch_begin(self, epoch, logs=None): pass
    def on_epoch_end(self, epoch, logs=None): pass
    def on_train_batch_begin(self, batch, logs=None): pass
    def on_train_batch_end(self, batch, logs=None): pass


class History(Callback):
    """``history.history["loss"]``: one value per epoch for every logged number."""

    def on_train_begin(self, logs=None):
        self.epoch, self.history = [], {}

    def on_epoch_end(self, epoch, logs=None):
        self.epoch.append(epoch)
        for key, value in (logs or {}).items():
            self.history.setdefault(key, []).append(value)


def _improved(mode, monitor):
    if mode == "auto":
        mode = "max" if "acc" in monitor else "min"
    if mode not in ("min", "max"):
        raise ValueError(f"mode must be 'min', 'max' or 'auto', got {mode!r}.")
    return (lambda new, best, delta: new < best - delta) if mode == "min" else \
        (lambda new, best, delta: new > best + delta)


def _monitored(logs, monitor, who):
    if monitor not in (logs or {}):
        raise KeyError(f"{who} monitors '{monitor}', but the logs only have "
                       f"{sorted(logs or {})}. (val_ numbers need validation_data.)")
    return logs[monitor]


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved by ``min_delta`` for ``patience`` epochs;
    with ``restore_best_weights`` the model ends with the weights of its best epoch."""

    def __init__(self, monitor="val_loss", min_delta=0.0, patience=0, mode="auto",
                 restore_best_weights=False, verbose=0):
        self.monitor, self.min_delta, self.patience = monitor, abs(min_delta), patience
        self.better = _improved(mode, monitor)
        self.restore_best_weights, self.verbose = restore_best_weights, verbose

    def on_train_begin(self, logs=None):
        self.wait, self.best, self.best_weights = 0, None, None
        self.stopped_epoch = self.best_epoch = None

    def on_epoch_end(self, epoch, logs=None):
        value = _monitored(logs, self.monitor, "EarlyStopping")
        if self.best is None or self.better(value, self.best, self.min_delta):
            self.best, self.best_epoch, self.wait = value, epoch, 0
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.stopped_epoch = epoch
            self.model.stop_training = True
            if self.restore_best_weights:
                self.model.set_weights(self.best_weights)
            if self.verbose:
                print(f"Epoch {epoch + 1}: early stopping (best {self.monitor} "
                      f"{self.best:.4f} at epoch {self.best_epoch + 1})")


class TerminateOnNaN(Callback):
    """Stop training at the first batch whose loss is NaN or infinite, and say why (Keras's
    callback). ``fit`` adds one unless you pass your own: after such a batch every weight
    would soon be NaN. ``Model.train_step`` does not apply that batch's update, so the model
    keeps the weights it had before it."""

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        loss = (logs or {}).get("loss")
        if loss is None or math.isfinite(loss):
            return
        self.model.stop_training = True
        print(f"Epoch {self.epoch + 1}, batch {batch + 1}: the loss is {loss}, so training "
              "stopped there (TerminateOnNaN); that batch's update was not applied. Usual "
              "causes: NaN or inf in the batch's inputs or labels (check np.isfinite(x).all()), "
              "a learning rate so large that the loss overflows (lower it), or a log of 0 or a "
              "division by 0 in the loss. eg.debugging.enable_check_numerics() names the first "
              "op that makes a NaN.", flush=True)


class LearningRateScheduler(Callback):
    """Set the learning rate at each epoch's start to ``schedule(epoch, lr)``."""

    def __init__(self, schedule, verbose=0):
        self.schedule, self.verbose = schedule, verbose

    def on_epoch_begin(self, epoch, logs=None):
        lr = float(self.schedule(epoch, self.model.learning_rate))
        self.model.learning_rate = lr
        if self.verbose:
            print(f"Epoch {epoch + 1}: learning rate {lr:.6g}")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["lr"] = self.model.learning_rate


class ReduceLROnPlateau(Callback):
    """Multiply the learning rate by ``factor`` when ``monitor`` stalls for ``patience`` epochs."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, mode="auto",
                 min_delta=1e-4, min_lr=0.0):
        if not 0 < factor < 1:
            raise ValueError(f"ReduceLROnPlateau: factor must be in (0, 1), got {factor}.")
        self.monitor, self.factor, self.patience = monitor, factor, patience
        self.better, self.min_delta, self.min_lr = _improved(mode, monitor), min_delta, min_lr

    def on_train_begin(self, logs=None):
        self.best, self.wait = None, 0

    def on_epoch_end(self, epoch, logs=None):
        value = _monitored(logs, self.monitor, "ReduceLROnPlateau")
        if self.best is None or self.better(value, self.best, self.min_delta):
            self.best, self.wait = value, 0
            return
        self.wait += 1
        if self.wait >= self.patience:
            self.model.learning_rate = max(self.model.learning_rate * self.factor, self.min_lr)
            self.wait = 0


class LambdaCallback(Callback):
    """A callback from functions: ``LambdaCallback(on_epoch_end=lambda epoch, logs: ...)``."""

    def __init__(self, **hooks):
        for name, fn in hooks.items():
            if not hasattr(Callback, name):
                raise TypeError(f"LambdaCallback: unknown hook {name!r}.")
            setattr(self, name, fn)


def in_notebook():
    """Is this code running in a Jupyter kernel (where widgets can be shown)?"""
    shell = sys.modules.get("IPython") and sys.modules["IPython"].get_ipython()
    return shell is not None and type(shell).__name__ == "ZMQInteractiveShell"


class ProgressBar(Callback):
    """``verbose=1``: a live line per epoch (in a notebook, an HTML progress bar when ipywidgets
    is installed); ``verbose=2``: one plain line per finished epoch."""

    def __init__(self, epochs, steps, verbose=1):
        self.epochs, self.steps, self.verbose = epochs, steps, verbose
        self.widget, self.finished = None, []
        if verbose == 1 and in_notebook():
            try:
                import ipywidgets
                from IPython.display import display
            except ImportError:
                return
            self.widget = ipywidgets.HTML()
            display(self.widget)

    def on_epoch_begin(self, epoch, logs=None):
        self.epoch, self.start, self.last_draw = epoch, time.perf_counter(), 0.0
        self.done = 0

    def on_train_batch_end(self, batch, logs=None):
        self.done = batch + 1
        now = time.perf_counter()
        if self.verbose == 1 and now - self.last_draw > 0.1:      # redraw at most 10× a second
            self.last_draw = now
            self._draw(self.done, logs, final=False)

    def on_epoch_end(self, epoch, logs=None):
        self._draw(self.done, logs, final=True)     # (fewer than steps if training stopped)

    def _draw(self, done, logs, final):
        steps = self.steps if self.steps is not None else done
        numbers = " - ".join(f"{k}: {v:.4f}" for k, v in (logs or {}).items()
                             if isinstance(v, (float, int)))         # (nan shows as nan)
        seconds = time.perf_counter() - self.start
        text = f"Epoch {self.epoch + 1}/{self.epochs} - {done}/{steps} - {seconds:.1f}s - {numbers}"
        if self.widget is not None:
            bar = "" if final else (f"<progress value='{done}' max='{max(steps, 1)}' "
                                    "style='width:12em'></progress> ")
            if final:
                self.finished.append(text)
            lines = self.finished + ([] if final else [text])
            self.widget.value = bar + "<pre style='margin:0'>" + "\n".join(lines) + "</pre>"
        elif self.verbose == 1:
            print("\r" + text, end="\n" if final else "", flush=True)
        elif final:
            print(text, flush=True)
