"""MirroredStrategy: synchronous data parallelism, as ``tf.distribute`` does it.

The slide's code runs as written (``tf.`` → ``eg.``)::

    strategy = eg.distribute.MirroredStrategy(["cpu:0", "sim:1", "sim:2"])
    BATCH_SIZE = BATCH_SIZE_PER_REPLICA * strategy.num_replicas_in_sync
    with strategy.scope():
        model = eg.keras.Sequential([...])
        model.compile(loss="sparse_categorical_crossentropy", optimizer="adam")
    model.fit(train_dataset, epochs=10)

A model built or compiled inside ``strategy.scope()`` remembers the strategy (and its variables
are made on the first device). ``fit`` then trains it on every replica at once. Each step:

1. the global batch is split across the replicas as evenly as possible (10 examples on 3
   replicas: 4, 3, 3, as ``np.array_split`` cuts, where TF cuts 4, 4, 2; the weighting of step
   2 makes the gradient the same either way; a last batch smaller than the number of replicas
   leaves some empty, as in TF);
2. each replica, on its own device, computes the gradients of its part's mean loss and weights
   them by its share of the global batch (4/10, 3/10, 3/10);
3. an all-reduce (the ring, unless ``cross_device_ops`` names another) sums the weighted
   gradients, so every replica gets the gradient of the *global* batch's mean loss;
4. every replica applies that same update to its own copy of the weights with its own copy of
   the optimizer, so the copies stay equal without ever being sent.

So the weights after k steps are those of one device training on the global batch (to
rounding), for any number of replicas and even when the batch does not split evenly. (Keras
under TF divides each replica's *mean* loss by the number of replicas instead, which weights
the examples of a smaller part more; weighting by share is TF's advice for custom loops,
``tf.nn.compute_average_loss``.) Replicas on different kinds of device (a CPU and a GPU) may
round differently in the last bit.

The replicas are copies of the model made when ``fit`` starts (replica 0 *is* the model), so a
change to the weights between two ``fit`` calls reaches them. ``evaluate`` and ``predict`` run
on the model itself: its weights are every replica's. Left out: synchronised batch norm (each
replica normalises with its own part's statistics, as TF does unless ``synchronized=True``, and
the model's moving statistics are replica 0's, where TF averages the replicas' when read);
dropout masks are each replica's; and custom training loops (``strategy.run``,
``experimental_distribute_dataset``).
"""
import contextlib
import copy
import threading
import weakref

import numpy as np

from .all_reduce import all_reduce, algorithm_named
from ..context import no_grad
from ..devices import current_device, device, get_device, list_devices
from ..nest import flatten, map_structure
from ..tensor import Tensor, tensor

__all__ = ["Strategy", "MirroredStrategy", "get_strategy", "has_strategy", "current_strategy",
           "shard_bounds"]


class _Scopes(threading.local):
    def __init__(self):
        self.stack = []


_scopes = _Scopes()


def current_strategy():
    """The strategy of the innermost ``strategy.scope()``, or None outside every scope."""
    return _scopes.stack[-1] if _scopes.stack else None


def has_strategy():
    """``tf.distribute.has_strategy()``: is a strategy's scope open?"""
    return current_strategy() is not None


def get_strategy():
    """The strategy of the open scope; outside every scope, a one-replica strategy on the
    current device (TF's default strategy: training as usual)."""
    return current_strategy() or MirroredStrategy([current_device()])


def shard_bounds(batch_size, num_replicas):
    """(start, stop) of each replica's part of a batch, as even as can be (``np.array_split``):
    10 examples on 3 replicas → (0, 4), (4, 7), (7, 10)."""
    sizes = [len(part) for part in np.array_split(np.arange(batch_size), num_replicas)]
    stops = np.cumsum(sizes).tolist()
    return list(zip([0] + stops[:-1], stops))


class Strategy:
    """What every data-parallel strategy shares: the scope, and ``fit``'s step on replicas.

    A subclass says where its replicas are: ``_make_replicas`` (the models this process
    trains, one per local device), ``_local_shards`` (which parts of the global batch they
    take) and ``_all_reduce`` (summing their buffers with the replicas elsewhere)."""

    num_replicas_in_sync = 1

    def __init__(self, devices, cross_device_ops=None):
        self.devices = devices
        self.all_reduce_algorithm = algorithm_named(cross_device_ops or "ring")
        self.last_messages = []             # the last step's all-reduce log (to count bytes)
        self._replicas = weakref.WeakKeyDictionary()

    @contextlib.contextmanager
    def scope(self):
        """Models made or compiled inside train with this strategy; their variables are made
        on the first device."""
        if current_strategy() not in (None, self):
            raise ValueError("A strategy's scope is already open; models cannot mix two "
                             "strategies (TF refuses too). Close the other scope first.")
        _scopes.stack.append(self)
        try:
            with device(self.devices[0]):
                yield self
        finally:
            _scopes.stack.pop()

    def replicas_of(self, model):
        """The replicas that trained ``model`` in its last ``fit`` (replica 0 is the model)."""
        return list(self._replicas.get(model, [model]))

    def train_step_for(self, model):
        """The step ``fit`` runs for ``model``: replicas are made at its first call."""
        return _ReplicatedStep(self, model)

    # ------------------------------------------------------------------ what subclasses say
    def _make_replicas(self, model):
        raise NotImplementedError

    def _local_shards(self):
        raise NotImplementedError

    def _all_reduce(self, buffers):
        raise NotImplementedError

    def __deepcopy__(self, memo):
        """A copy of a model trains with the same strategy (its devices and connections)."""
        return self

    def __repr__(self):
        return (f"{type(self).__name__}(num_replicas_in_sync={self.num_replicas_in_sync}, "
                f"devices={[d.name for d in self.devices]})")


class MirroredStrategy(Strategy):
    """One replica per device of this process (``"cpu:0"``, ``"sim:1"``, ``"gpu:0"``...); by
    default every GPU CuPy sees, else the CPU alone (as TF). ``cross_device_ops`` chooses the
    all-reduce: ``"ring"`` (the default), ``"all_to_all"``, ``"all_to_master"`` or one of
    the functions of ``eg.distribute``. CPU replicas beyond ``cpu:0`` (``cpu:1``...) are
    separate devices too: mixing them without a copy is an error, as between two GPUs."""

    def __init__(self, devices=None, cross_device_ops=None):
        if devices is None:
            devices = [d for d in list_devices() if d.kind == "gpu"] or [get_device("cpu:0")]
        elif isinstance(devices, (str, Tensor)) or not hasattr(devices, "__iter__"):
            raise TypeError(f"MirroredStrategy(devices=...) takes a list of devices, e.g. "
                            f"['cpu:0', 'sim:1'], not {devices!r}.")
        devices = [get_device(d) for d in devices]
        if not devices:
            raise ValueError("MirroredStrategy needs at least one device.")
        names = [d.name for d in devices]
        if len(set(names)) != len(names):
            raise ValueError(f"MirroredStrategy: each replica needs its own device; {names} "
                             "names one twice. For several CPU replicas, name cpu:0, cpu:1...")
        super().__init__(devices, cross_device_ops)
        self.num_replicas_in_sync = len(devices)

    def _local_shards(self):
        return range(self.num_replicas_in_sync)

    def _make_replicas(self, model):
        """The model itself on the first device, and a copy of it (weights and optimizer
        state) on each other device."""
        misplaced = [v.name for v in model.variables if v.device is not self.devices[0]]
        if misplaced:
            raise ValueError(f"MirroredStrategy: replica 0 runs on {self.devices[0].name} but "
                             f"the model's variables {misplaced[:3]} live elsewhere. Build the "
                             "model inside `with strategy.scope():`, which places it there.")
        state = model.optimizer.get_state(model.named_variables())
        replicas = [model]
        for replica_device in self.devices[1:]:
            # the weights are copied, the optimizer is not: each replica gets its own below
            replica = copy.deepcopy(model, {id(model.optimizer): None})
            replica.to(replica_device)
            replica.optimizer = _fresh_copy(model.optimizer)
            replica.optimizer.set_state(state, replica.named_variables())
            replicas.append(replica)
        return replicas

    def _all_reduce(self, buffers):
        sums, self.last_messages = all_reduce(buffers, self.all_reduce_algorithm)
        return sums


def _fresh_copy(optimizer):
    """The same update rule and settings with no state yet: its slots are made beside the
    replica's variables (on the replica's device) when ``set_state`` or an update needs them."""
    fresh = copy.copy(optimizer)
    fresh._slots, fresh._step = {}, None
    return fresh


class _ReplicatedStep:
    """``fit``'s step under a strategy: split, compute on each replica, all-reduce, apply."""

    def __init__(self, strategy, model):
        self.strategy, self.model = strategy, model
        self.replicas = None
        self.log_names = self.has_gradient = None   # learnt from the first replica that computes

    def __call__(self, x, y):
        strategy = self.strategy
        batch_size = len(flatten(x)[0])
        bounds = shard_bounds(batch_size, strategy.num_replicas_in_sync)
        if self.replicas is None:
            _build(self.model, x, strategy.devices[0])
            self.replicas = strategy._make_replicas(self.model)
            strategy._replicas[self.model] = self.replicas
        buffers = [self._weighted_gradients(replica, x, y, bounds[index], batch_size)
                   for replica, index in zip(self.replicas, strategy._local_shards())]
        summed = strategy._all_reduce(buffers)
        for replica, buffer in zip(self.replicas, summed):
            logs = self._apply(replica, buffer)         # (the same logs in every buffer)
        return logs

    def _weighted_gradients(self, replica, x, y, bounds, batch_size):
        """One flat buffer: this replica's gradients and logs, times its share of the batch
        (the layout: each variable's gradient, flattened, then the loss and metrics)."""
        start, stop = bounds
        variables = replica.trainable_variables
        if start == stop:                       # an empty part: it adds nothing to the sums
            if self.log_names is None:
                raise ValueError(f"The first batch has {batch_size} examples, fewer than the "
                                 f"{self.strategy.num_replicas_in_sync} replicas. Use a larger "
                                 "batch: BATCH_SIZE_PER_REPLICA * num_replicas_in_sync.")
            return np.zeros(sum(v.size for v in variables) + len(self.log_names),
                            variables[0].dtype)
        where = replica.variables[0].device
        with device(where):
            def part(t):
                return t[start:stop].to(where)
            pairs, logs = replica.compute_gradients(map_structure(part, x),
                                                    map_structure(part, y))
        self.log_names = list(logs)
        self.has_gradient = [g is not None for g, _ in pairs]
        share = (stop - start) / batch_size
        flat = [(np.zeros(v.size) if g is None else g.numpy().reshape(-1)) * share
                for g, v in pairs]
        flat.append(np.array(list(logs.values())) * share)
        return np.concatenate(flat).astype(variables[0].dtype, copy=False)

    def _apply(self, replica, buffer):
        """Apply the summed gradients to this replica's variables; return the batch's logs."""
        pairs, offset = [], 0
        for var, has_gradient in zip(replica.trainable_variables, self.has_gradient):
            part = buffer[offset:offset + var.size].reshape(var.shape)
            offset += var.size
            if has_gradient:
                pairs.append((tensor(part, device=var.device), var))
        if replica is not self.model:           # a rate changed by a callback reaches copies
            rate = self.model.optimizer.learning_rate
            replica.optimizer.learning_rate = rate.item() if isinstance(rate, Tensor) else rate
        with device(replica.variables[0].device):
            replica.optimizer.apply_gradients(pairs)
        return dict(zip(self.log_names, buffer[offset:].tolist()))


def _build(model, x, where):
    """Build a model whose layers wait for their first input (no ``input_shape``), on the
    strategy's first device, so that there are weights to copy."""
    if model.built and model.variables:
        return
    with no_grad(), device(where):
        model(map_structure(lambda t: t[:1].to(where), x), training=False)
