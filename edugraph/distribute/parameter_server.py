"""Parameter servers and Downpour SGD (DistBelief, Dean et al. 2012): asynchronous updates.

The variables live on S parameter servers, each variable on one server (its "home"), placed
by a stated rule. A worker fetches the weights, computes a gradient on its own data and pushes
it; each server applies the part that concerns its variables at once, without waiting for the
other workers. Nobody waits, so nobody is held up by a slow worker; the price is *staleness*:
by the time a worker's gradient arrives, other workers have moved the weights on, so the
gradient was computed on weights some updates old.

Here that asynchrony is simulated in one process, deterministically, with the staleness you
set: update t is computed on the weights as they were after max(0, t - staleness) updates
(the worker fetched them ``staleness`` updates ago), by worker t mod W on its own data. With
staleness 0 this is plain SGD; a lesson can plot how convergence degrades as it grows.
"""
from collections import namedtuple

import numpy as np

__all__ = ["place_variables", "ParameterServers", "downpour_sgd", "Update", "PLACEMENT_RULES"]

Update = namedtuple("Update", "step worker version staleness loss")
Update.__doc__ = """One asynchronous update: at ``step``, ``worker`` pushed a gradient it had
computed on the weights of ``version`` (after that many updates), ``staleness`` = step -
version updates old; ``loss`` is its batch's loss at those weights."""


def _round_robin(sizes, num_servers):
    """The i-th variable on server i mod S (TF1's ``replica_device_setter``)."""
    return [i % num_servers for i in range(len(sizes))]


def _greedy(sizes, num_servers):
    """Each variable, in order, on the server that holds the fewest bytes so far (TF's
    ``GreedyLoadBalancingStrategy``): big variables do not pile up on one server."""
    load, homes = [0] * num_servers, []
    for size in sizes:
        home = load.index(min(load))
        homes.append(home)
        load[home] += size
    return homes


PLACEMENT_RULES = {"round_robin": _round_robin, "greedy": _greedy}


def place_variables(variables, num_servers, rule="round_robin"):
    """``{name: server}`` for ``variables`` (``{name: array}``, in order) under ``rule``."""
    if rule not in PLACEMENT_RULES:
        raise ValueError(f"Unknown placement rule {rule!r}; use one of "
                         f"{', '.join(map(repr, PLACEMENT_RULES))}.")
    if not isinstance(num_servers, int) or num_servers < 1:
        raise ValueError(f"num_servers must be a whole number ≥ 1, got {num_servers!r}.")
    sizes = [np.asarray(v).nbytes for v in variables.values()]
    return dict(zip(variables, PLACEMENT_RULES[rule](sizes, num_servers)))


class ParameterServers:
    """S servers, each keeping its shard of the variables and applying SGD updates to it.

    ``pull()`` is what a worker fetches (every variable, from its home server); ``push(grads)``
    sends each gradient to its variable's server, which updates it at once. ``bytes_out`` and
    ``bytes_in`` count, per server, what was fetched from it and pushed to it."""

    def __init__(self, variables, num_servers=2, rule="round_robin", learning_rate=0.1):
        self.placement = place_variables(variables, num_servers, rule)
        self.shards = [{} for _ in range(num_servers)]
        for name, value in variables.items():
            self.shards[self.placement[name]][name] = np.array(value, dtype=float, copy=True)
        self.learning_rate = learning_rate
        self.version = 0                    # updates applied so far
        self.bytes_out, self.bytes_in = [0] * num_servers, [0] * num_servers

    def pull(self):
        """A copy of every variable, as a worker fetches them."""
        weights = {}
        for server, shard in enumerate(self.shards):
            for name, value in shard.items():
                weights[name] = value.copy()
                self.bytes_out[server] += value.nbytes
        return weights

    def push(self, grads):
        """Each server applies its variables' gradients: w ← w - learning_rate · g."""
        missing = set(self.placement) - set(grads)
        if missing:
            raise ValueError(f"push: no gradient for {sorted(missing)}; send one for every "
                             "variable (zeros if it does not change).")
        for name, grad in grads.items():
            server = self.placement[name]
            grad = np.asarray(grad, dtype=float)
            self.shards[server][name] -= self.learning_rate * grad
            self.bytes_in[server] += grad.nbytes
        self.version += 1

    def values(self):
        """The current weights ``{name: array}`` (without counting a fetch)."""
        return {name: shard[name].copy() for name in self.placement
                for shard in self.shards if name in shard}


def downpour_sgd(servers, gradient, worker_data, steps, staleness=0):
    """Run ``steps`` asynchronous updates on ``servers``; return the list of ``Update``s.

    ``gradient(weights, batch)`` returns ``(loss, {name: gradient})`` for a dict of weights;
    ``worker_data`` holds one iterable of batches per worker (restarted when it ends). Update
    t is worker t mod W's, computed on the weights it fetched ``staleness`` updates earlier."""
    if not isinstance(staleness, int) or staleness < 0:
        raise ValueError(f"staleness counts updates: a whole number ≥ 0, got {staleness!r}.")
    batches = [_endless(data) for data in worker_data]
    fetched, updates = {}, []
    for step in range(steps):
        fetched[step] = servers.pull()             # the newest weights, fetched now...
        version = max(0, step - staleness)         # ...are used `staleness` updates later
        worker = step % len(batches)
        loss, grads = gradient(fetched[version], next(batches[worker]))
        servers.push(grads)
        updates.append(Update(step, worker, version, step - version, float(loss)))
        if step >= staleness:
            del fetched[version]                   # no later update uses weights this old
    return updates


def _endless(data):
    """The batches of ``data`` again and again (a worker's epochs)."""
    while True:
        empty = True
        for batch in data:
            empty = False
            yield batch
        if empty:
            raise ValueError("A worker's data gave no batches. (An iterator can be read only "
                             "once: pass a list of batches or a Dataset.)")
