"""Model: layers wired together, plus Keras's training loop (compile / fit / evaluate / predict).

Three ways to make one, as in Keras:

* ``Sequential([...])``: a stack of layers (see ``sequential.py``);
* functional: ``x = eg.Input((64,)); y = Dense(10)(Dense(32)(x)); Model(x, y)`` — several
  inputs and outputs and shared layers allowed; calling a layer on an ``Input`` only records
  the wiring, running the model replays it in order;
* subclassing: define ``call(self, inputs, training=False)`` (or PyTorch's ``forward``).

``fit`` is the plain loop one would write by hand: for each batch, run the model in training
mode, add the layers' regularisation ``losses``, differentiate, and let the optimizer apply the
gradients. It runs eagerly, on the current device (``with eg.device('/gpu:0'):``). A model made
or compiled inside ``strategy.scope()`` (``eg.distribute``) trains on the strategy's replicas:
``fit`` runs the strategy's step, which calls ``compute_gradients`` on each replica.
"""
import math
import numbers

import numpy as np

from . import callbacks as callbacks_module, metrics as metrics_module, optimizers
from .. import autodiff, losses as losses_module
from ..context import no_grad
from ..data import INFINITE_CARDINALITY
from ..devices import current_device
from ..distribute.strategy import current_strategy
from ..errors import ShapeError
from ..nest import map_structure
from ..nn.module import KerasTensor, Module, _flat, _is_numbers, weights_file
from ..ops import random as _random
from ..ops.reduce import reduce_mean
from ..tensor import Tensor, as_dtype, tensor

__all__ = ["Model", "Input"]


def Input(shape, dtype="float32", name=None):
    """The start of a functional model: ``eg.Input((28, 28, 1))`` (the batch axis is implicit)."""
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return KerasTensor((None,) + shape, dtype, name=name)


class Model(Module):
    """A trainable network: ``Model(inputs, outputs)`` (functional) or a subclass with ``call``."""

    distribute_strategy = None      # the eg.distribute strategy whose scope made or compiled it

    def __init__(self, inputs=None, outputs=None, name=None, **kwargs):
        super().__init__(name=name, **kwargs)
        self.optimizer = self.loss = None
        self.stop_training = False
        self.last_gradients = None          # the last train_step's (gradient, variable) pairs
        self.distribute_strategy = current_strategy()
        self._nodes = None
        if inputs is not None or outputs is not None:
            self._wire(inputs, outputs)

    # ------------------------------------------------------------------ functional wiring
    def _wire(self, inputs, outputs):
        self.inputs, self.outputs = inputs, outputs
        given = {id(t) for t in _flat([inputs])}
        order, seen = [], set()

        def visit(t):                       # depth first: a layer call after all its inputs
            if id(t) in seen:
                return
            seen.add(id(t))
            if t.layer is None:
                if id(t) not in given:
                    raise ValueError(f"Model '{self.name}': the outputs depend on an Input "
                                     f"{t} that is not among the model's inputs.")
                return
            for i in _flat(t.inputs):
                visit(i)
            order.append(t)
        for out in _flat([outputs]):
            if not isinstance(out, KerasTensor):
                raise TypeError(f"Model outputs must come from layers called on eg.Input(...), "
                                f"got {type(out).__name__}.")
            visit(out)
        self._nodes = order
        for node in order:                  # paths "0.kernel": stable across fresh copies
            if all(node.layer is not m for m in self._modules.values()):
                self._modules[str(len(self._modules))] = node.layer
        self.built = True
        self.output_shape = map_structure(lambda t: t.shape, outputs)

    def call(self, inputs, training=False):
        if self._nodes is None:
            raise NotImplementedError(f"{type(self).__name__}: define call() / forward(), or "
                                      "build the model as Model(inputs, outputs).")
        values = {}
        for t, v in zip(_flat([self.inputs]), _flat([inputs])):
            values[id(t)] = v
        for node in self._nodes:
            args = [map_structure(lambda t: values[id(t)], a) for a in node.inputs]
            values[id(node)] = node.layer(*args, training=training, **node.kwargs)
        return map_structure(lambda t: values[id(t)], self.outputs)

    @property
    def layers(self):
        return self.summary_layers()

    def get_layer(self, name):
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No layer named {name!r}; layers: {[l.name for l in self.layers]}.")

    def summary(self, print_fn=print):
        if not self.built:
            raise ValueError(f"Model '{self.name}' is not built yet, so its shapes are unknown. "
                             "Give the first layer an input_shape=..., start with eg.Input, or "
                             "call the model on a batch first.")
        super().summary(print_fn)

    # ------------------------------------------------------------------ Keras training API
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                run_eagerly=None):      # (Keras's run_eagerly: fit runs eagerly either way)
        """Choose the optimizer (name or ``eg.train`` optimizer), loss(es) and metrics."""
        self.optimizer = optimizers.get(optimizer)
        self.loss = loss
        self.distribute_strategy = current_strategy() or self.distribute_strategy
        self._loss_fns = [losses_module.get(l) for l in loss] \
            if isinstance(loss, (list, tuple)) else losses_module.get(loss) if loss else None
        self._loss_weights = loss_weights
        self._metrics = [metrics_module.get(m) for m in (metrics or [])]

    @property
    def learning_rate(self):
        return float(self.optimizer.learning_rate)

    @learning_rate.setter
    def learning_rate(self, value):
        self.optimizer.learning_rate = value

    def _total_loss(self, y_true, y_pred, where):
        if self._loss_fns is None:
            raise ValueError(f"Model '{self.name}' has no loss: call compile(loss=...) first.")
        if y_true is None:
            raise ValueError(f"Model '{self.name}': the labels y are missing, so there is no "
                             f"loss to compute; pass them: model.{where}(x, y) (or a Dataset "
                             "of (x, y) pairs).")
        outputs, targets = list(_flat([y_pred])), list(_flat([y_true]))
        if len(outputs) != len(targets):
            raise ValueError(f"Model '{self.name}' has {len(outputs)} outputs but got "
                             f"{len(targets)} label arrays.")
        fns = self._loss_fns if isinstance(self._loss_fns, list) else \
            [self._loss_fns] * len(outputs)
        weights = self._loss_weights or [1.0] * len(outputs)
        total = None
        for fn, w, t, p in zip(fns, weights, targets, outputs):
            term = fn(t, p) * w if w != 1.0 else fn(t, p)
            total = term if total is None else total + term
        return total

    def _metric_values(self, y_true, y_pred):
        outputs, targets = list(_flat([y_pred])), list(_flat([y_true]))
        logs = {}
        for i, (t, p) in enumerate(zip(targets, outputs)):
            prefix = f"output_{i}_" if len(outputs) > 1 else ""
            for name, fn in self._metrics:
                logs[prefix + name] = reduce_mean(fn(t, p)).item()    # (per example)
        return logs

    def train_step(self, x, y):
        """One optimisation step on one batch; returns the batch's loss and metrics. A batch
        whose loss is NaN or infinite changes no weight (its gradients would make them all
        NaN); ``fit`` then stops and says why (``TerminateOnNaN``). The batch's (gradient,
        variable) pairs stay in ``last_gradients`` until the next step: a callback such as
        ``widgets.GradientFlow`` reads them in ``on_train_batch_end``, without a second
        backward pass."""
        grads_and_vars, logs = self.compute_gradients(x, y)
        self.last_gradients = grads_and_vars     # what an instrument reads after the batch
        if math.isfinite(logs["loss"]):
            self.optimizer.apply_gradients([(g, v) for g, v in grads_and_vars if g is not None])
        return logs

    def compute_gradients(self, x, y):
        """The first half of ``train_step``: the batch's (gradient, variable) pairs (the
        gradient None for a variable the loss does not use) and its loss and metrics. A
        strategy runs it on each replica and combines the gradients before applying them."""
        y_pred = self(x, training=True)
        variables = self.trainable_variables        # after the call: it may build the model
        loss = self._total_loss(y, y_pred, "fit")
        for term in self.losses:
            loss = loss + term
        grads = autodiff.grad(loss, variables, allow_unused=True)
        with no_grad():
            logs = {"loss": loss.item(), **self._metric_values(y, y_pred.detach()
                                                               if isinstance(y_pred, Tensor)
                                                               else y_pred)}
        return list(zip(grads, variables)), logs

    def test_step(self, x, y):
        with no_grad():
            y_pred = self(x, training=False)
            loss = self._total_loss(y, y_pred, "evaluate")
            for term in self.losses:
                loss = loss + term
            return {"loss": loss.item(), **self._metric_values(y, y_pred)}

    def fit(self, x=None, y=None, batch_size=32, epochs=1, verbose=1, callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, initial_epoch=0):
        """Train for ``epochs`` passes over (x, y) or over a ``eg.data.Dataset`` of (x, y);
        returns a ``History`` (``history.history["loss"]``...)."""
        if self.optimizer is None:
            raise ValueError(f"Model '{self.name}' must be compiled before fit: "
                             "model.compile(optimizer='adam', loss=...).")
        x, y = _numbers_as_array(x, "x (the inputs)"), _numbers_as_array(y, "y (the labels)")
        self._check_batch_axis(x, "fit")
        if validation_split and validation_data is None:
            x, y, validation_data = _split(x, y, validation_split)
        batches = _Batches(x, y, batch_size, shuffle, self.dtype)
        history = callbacks_module.History()
        cbs = list(callbacks or []) + [history]
        if not any(isinstance(cb, callbacks_module.TerminateOnNaN) for cb in cbs):
            cbs.append(callbacks_module.TerminateOnNaN())
        if verbose:
            cbs.append(callbacks_module.ProgressBar(epochs, batches.steps, verbose))
        for cb in cbs:
            cb.set_model(self)
            cb.set_params({"verbose": verbose, "epochs": epochs, "steps": batches.steps})
        self.stop_training = False
        train_step = self.train_step if self.distribute_strategy is None else \
            self.distribute_strategy.train_step_for(self)     # data parallel: eg.distribute
        for cb in cbs:
            cb.on_train_begin()
        for epoch in range(initial_epoch, epochs):
            for cb in cbs:
                cb.on_epoch_begin(epoch)
            totals, seen = {}, 0
            for step, (xb, yb) in enumerate(batches):
                for cb in cbs:
                    cb.on_train_batch_begin(step)
                batch_logs = train_step(xb, yb)
                n = _batch_size(xb)
                seen += n
                for k, v in batch_logs.items():
                    totals[k] = totals.get(k, 0.0) + v * n
                running = {k: v / seen for k, v in totals.items()}
                for cb in cbs:
                    cb.on_train_batch_end(step, running)
                if self.stop_training:
                    break
            logs = {k: v / max(seen, 1) for k, v in totals.items()}
            if validation_data is not None:
                val = self.evaluate(*_xy(validation_data), batch_size=batch_size, verbose=0,
                                    return_dict=True)
                logs.update({f"val_{k}": v for k, v in val.items()})
            for cb in cbs:
                cb.on_epoch_end(epoch, logs)
            if self.stop_training:
                break
        for cb in cbs:
            cb.on_train_end()
        return history

    def evaluate(self, x=None, y=None, batch_size=32, verbose=0, return_dict=False):
        """The loss (and metrics) over the whole data, in inference mode."""
        x = _numbers_as_array(x, "x (the inputs)")
        self._check_batch_axis(x, "evaluate")
        totals, seen = {}, 0
        for xb, yb in _Batches(x, y, batch_size, False, self.dtype):
            n = _batch_size(xb)
            seen += n
            for k, v in self.test_step(xb, yb).items():
                totals[k] = totals.get(k, 0.0) + v * n
        logs = {k: v / max(seen, 1) for k, v in totals.items()}
        if verbose:
            print(" - ".join(f"{k}: {v:.4f}" for k, v in logs.items()))
        if return_dict:
            return logs
        values = list(logs.values())
        return values[0] if len(values) == 1 else values

    def predict(self, x, batch_size=32, verbose=0):
        """The model's outputs for ``x`` as numpy arrays (inference mode, batch by batch)."""
        x = _numbers_as_array(x, "x (the inputs)")
        self._check_batch_axis(x, "predict")
        parts = []
        with no_grad():
            for xb, _ in _Batches(x, None, batch_size, False, self.dtype):
                parts.append(map_structure(lambda t: t.numpy(), self(xb, training=False)))
        if not parts:
            raise ValueError("predict: the input is empty.")
        if isinstance(parts[0], (list, tuple)):
            return [np.concatenate(p) for p in zip(*parts)]
        return np.concatenate(parts)

    def _check_batch_axis(self, x, where):
        """``x`` shaped as one example of the model's input (``np.ones(4)`` for
        ``Input((4,))``) is refused: sliced into batches, it would reach the first layer as
        batches of single numbers. Once per call of fit/evaluate/predict."""
        expected = self.batch_input_shape or getattr(getattr(self, "inputs", None), "shape",
                                                     None)
        shape = getattr(x, "shape", None)
        if expected is None or shape is None or tuple(shape) != tuple(expected[1:]):
            return
        sizes = ", ".join(str(n) for n in shape)
        raise ShapeError(f"{where}: x has shape {tuple(shape)}, one example without the batch "
                         f"axis; model '{self.name}' takes a batch of examples, shape (N, "
                         f"{sizes}). Use x[None]" +
                         (" (or x.reshape(1, -1))." if len(shape) == 1 else "."))

    # ------------------------------------------------------------------ saving
    def save_weights(self, path):
        """Weights, and the optimizer's state when compiled, into one ``.npz`` file: loading
        both into a fresh model of the same architecture continues training exactly. As
        numpy does, ``.npz`` is added to a name without it, by ``load_weights`` too."""
        arrays = {f"weights/{n}": v.numpy() for n, v in self.named_variables()}
        if self.optimizer is not None:
            arrays.update(_optimizer_state(self.optimizer, self.named_variables()))
        np.savez(weights_file(path), **arrays)

    def load_weights(self, path):
        with np.load(weights_file(path)) as stored:
            weights = {k[len("weights/"):]: stored[k] for k in stored.files
                       if k.startswith("weights/")}
            if not weights:            # a file written by Module.save_weights
                weights = {k: stored[k] for k in stored.files}
            if not self.built:
                raise ValueError(f"Model '{self.name}' must be built before loading weights "
                                 "(give input_shape, or call it on a batch).")
            self._load_named(weights, "weights")
            if self.optimizer is not None:
                _restore_optimizer_state(self.optimizer, stored, self.named_variables())


# ----------------------------------------------------------------------------- optimizer state
# Stored beside the weights under "optimizer/", keyed by variable name (Optimizer.get_state).
def _optimizer_state(optimizer, named_variables):
    return {f"optimizer/{key}": value
            for key, value in optimizer.get_state(named_variables).items()}


def _restore_optimizer_state(optimizer, stored, named_variables):
    state = {key[len("optimizer/"):]: stored[key] for key in stored.files
             if key.startswith("optimizer/")}
    if state:
        optimizer.set_state(state, named_variables)


# ----------------------------------------------------------------------------- data helpers
def _batch_size(x):
    return len(next(_flat([x])))


def _xy(data):
    if isinstance(data, (list, tuple)) and len(data) == 2:
        return data
    return data, None


def _numbers_as_array(data, what):
    """A (nested) list of numbers is one array, as Keras 2 read it (Keras 3 wants an array):
    ``fit([[1., 2.], [3., 4.]], [0, 1])`` has two examples, not two inputs. A list of arrays or
    tensors stays a list of inputs (a model with several). ``what`` names the data in the
    error for rows of unequal lengths."""
    if not _is_numbers(data):
        return data
    try:
        return np.asarray(data)
    except ValueError:
        lengths = sorted({len(row) for row in data if isinstance(row, (list, tuple))})
        sizes = f" ({' and '.join(map(str, lengths))} values)" if len(lengths) > 1 else ""
        raise ValueError(f"{what}: the rows of this nested list differ in length{sizes}, so "
                         "they make no array. Every example needs the same number of values: "
                         "pad the shorter rows (e.g. with zeros), or leave them out.") from None


def _split(x, y, fraction):
    """The last ``fraction`` of the examples become validation data (Keras: before shuffling).
    A fraction outside [0, 1), or one that leaves no example on a side, is refused: Keras 3
    refuses only the latter, and with 1.5 "trains" on the first half and "validates" on the
    second."""
    if isinstance(fraction, bool) or not isinstance(fraction, numbers.Real) or \
            not 0 <= fraction < 1:
        raise ValueError(f"fit: validation_split is the fraction of the examples kept apart for "
                         f"validation, a number from 0 up to (not including) 1, e.g. 0.2; got "
                         f"{fraction!r}.")
    if _is_dataset(x):
        raise ValueError("fit: validation_split cannot split a Dataset (Keras refuses it too): "
                         "split it yourself, e.g. val = ds.take(k) and train = ds.skip(k) on a "
                         "shuffle with reshuffle_each_iteration=False, and pass "
                         "validation_data=val.")
    n = len(next(_flat([x])))
    cut = int(n * (1 - fraction))
    if cut == 0 or cut == n:
        raise ValueError(f"fit: validation_split={fraction} of {n} examples leaves "
                         f"{'none to train on' if cut == 0 else 'none to validate on'}. Give "
                         "more examples, or a split that keeps some on both sides.")
    def head(a):
        return a[:cut]

    def tail(a):
        return a[cut:]
    return (map_structure(head, x), map_structure(head, y),
            (map_structure(tail, x), map_structure(tail, y)))


def _is_dataset(x):
    return hasattr(x, "__iter__") and hasattr(x, "batch")


def _check_not_text(data, what):
    """A model computes on numbers: text (words, class names) must become numbers first."""
    if isinstance(data, (list, tuple)) and any(isinstance(item, str) for item in data):
        data = np.asarray(data)         # a list of class names: refused as an array of them
    for part in _flat([data]) if data is not None else ():
        dtype = getattr(part, "dtype", None)
        if dtype is not None and np.dtype(dtype).kind in "US":
            example = str(np.asarray(part).flat[0])
            raise TypeError(
                f"{what} hold text (dtype {dtype}, e.g. {example!r}), and a "
                "model computes on numbers. Turn the text into numbers first: class names "
                "into class ids (names, ids = np.unique(y, return_inverse=True)), words into "
                "word ids (a vocabulary), numbers written as text with "
                "np.asarray(x, dtype=np.float32).")


def _check_one_per_example(x, y):
    """x and y as arrays of examples (their first axis counts them), not single numbers."""
    if any(np.ndim(part) == 0 for part in _flat([x])):
        raise ValueError("x (the inputs) is a single number (shape ()), not examples: give an "
                         "array whose first axis counts the examples, e.g. shape (N, features).")
    if y is not None and any(np.ndim(part) == 0 for part in _flat([y])):
        n = len(next(_flat([x])))
        raise ValueError(f"y (the labels) has shape (), a single number, but there must be one "
                         f"label per example: shape ({n},) for the {n} examples of x.")


def _to_device(value, float_dtype):
    """Host data → a tensor on the current device; floats as the model's dtype (Keras casts)."""
    if isinstance(value, Tensor):
        if value.dtype.kind == "f" and value.dtype != float_dtype:
            return value.to(float_dtype)
        return value
    array = np.asarray(value)
    dtype = float_dtype if array.dtype.kind == "f" else None
    return tensor(array, dtype=dtype, device=current_device())


class _Batches:
    """Batches of (x, y) from arrays (shuffled each epoch if asked) or from a Dataset."""

    def __init__(self, x, y, batch_size, shuffle, float_dtype):
        self.float_dtype = as_dtype(float_dtype)
        self.dataset = x if _is_dataset(x) else None
        if self.dataset is not None:
            self.steps = self.dataset.cardinality() if hasattr(self.dataset, "cardinality") \
                else None
            if self.steps == INFINITE_CARDINALITY:
                raise ValueError("This dataset is infinite (repeat() without a count), so an "
                                 "epoch would never end. Give it an end: "
                                 "dataset.repeat(count) or dataset.take(steps).")
            return
        if x is None:
            raise ValueError("No input data: pass x (and y), or a Dataset of (x, y) pairs.")
        if batch_size is None:
            batch_size = 32                             # Keras's default
        if not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"batch_size must be a whole number of examples, 1 or more "
                             f"(e.g. 32), got {batch_size!r}.")
        x, y = _numbers_as_array(x, "x (the inputs)"), _numbers_as_array(y, "y (the labels)")
        _check_not_text(x, "x (the inputs)")
        _check_not_text(y, "y (the labels)")
        _check_one_per_example(x, y)
        self.x, self.y, self.batch_size, self.shuffle = x, y, batch_size, shuffle
        self.n = len(next(_flat([x])))
        for a in _flat([x, y] if y is not None else [x]):
            if len(a) != self.n:
                raise ValueError(f"All inputs and labels need the same number of examples; "
                                 f"got {self.n} and {len(a)}.")
        self.steps = -(-self.n // batch_size)

    def _to_device(self, value):
        return _to_device(value, self.float_dtype)

    def __iter__(self):
        if self.dataset is not None:
            for element in self.dataset:
                x, y = element if isinstance(element, (list, tuple)) else (element, None)
                yield (map_structure(self._to_device, x),
                       None if y is None else map_structure(self._to_device, y))
            return
        order = _random._generator(np).permutation(self.n) if self.shuffle else None
        for start in range(0, self.n, self.batch_size):
            index = slice(start, start + self.batch_size) if order is None else \
                order[start:start + self.batch_size]
            def pick(a):
                return self._to_device(np.asarray(a)[index])
            yield (map_structure(pick, self.x),
                   None if self.y is None else map_structure(pick, self.y))
