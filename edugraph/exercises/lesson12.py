"""Lesson 12's exercises: the bytes each all-reduce puts on the network; the ring all-reduce
written as the code one worker runs; the gradient of a global batch split unevenly across
replicas; stale gradients as Downpour SGD applies them."""
import numpy as np

import edugraph as eg
from edugraph.distribute import DistributedError, run_local
from edugraph.distribute.communicator import Communicator

from .answers import WrongForm, array, close, describe, function, returned
from .checking import Exercise, Mistake

D = eg.distribute


def _number_from(value, what):
    """One real number that the student's function returned (else a sentence saying so)."""
    returned(value, what)
    got = array(value, what)
    if got.size != 1:
        raise WrongForm(f"{what} should return one number; it returned {describe(value)}.")
    return float(got.reshape(()))


# ------------------------------------------------------------- 12.1: the bytes on the network
_ALGORITHMS = ("all_to_all", "all_to_master", "ring")
# (workers, bytes per worker): arrays of float64 that every N here cuts into equal chunks;
# N = 2 alone could not tell the algorithms apart (all three send 2S there)
_TRAFFIC_CASES = ((2, 6720), (3, 960), (5, 6720), (8, 960))


def _measured_traffic():
    """The bytes all workers send together, measured on eg.distribute's message logs."""
    totals = {}
    for algorithm in _ALGORITHMS:
        totals[algorithm] = tuple(
            float(sum(D.bytes_sent(D.all_reduce([np.ones(nbytes // 8)] * n, algorithm)[1],
                                   n)))
            for n, nbytes in _TRAFFIC_CASES)
    return totals


def _run_traffic(answer):
    network_bytes = answer["network_bytes"]
    return {algorithm: tuple(_number_from(network_bytes(algorithm, n, nbytes),
                                          f"network_bytes({algorithm!r}, {n}, {nbytes})")
                             for n, nbytes in _TRAFFIC_CASES)
            for algorithm in _ALGORITHMS}


# the formulas, right and wrong, as functions of (N, S)
_RIGHT_TRAFFIC = {"all_to_all": lambda n, s: n * (n - 1) * s,
                  "all_to_master": lambda n, s: 2 * (n - 1) * s,
                  "ring": lambda n, s: 2 * (n - 1) * s}


def _traffic_with(**wrong):
    """A network_bytes that uses these formulas (and the right ones for the others)."""
    formulas = {**_RIGHT_TRAFFIC, **wrong}

    def network_bytes(algorithm, num_workers, nbytes):
        return formulas[algorithm](num_workers, nbytes)
    return network_bytes


def _traffic_mistake(hint, algorithm, formula):
    """A mistake in one algorithm's count, whatever the student made of the others."""
    def when(got, reference):
        return np.allclose(got[algorithm], [formula(n, s) for n, s in _TRAFFIC_CASES])
    return Mistake(hint, when=when,
                   example={"network_bytes": _traffic_with(**{algorithm: formula})})


ex12_1 = Exercise(
    "12.1",
    reads={"network_bytes": function},
    run=_run_traffic,
    reference=_measured_traffic,
    passed="all-to-all puts N(N − 1)·S on the network; all-to-master and the ring both "
           "2(N − 1)·S, but the ring spreads it evenly over every worker (checked against "
           "eg.distribute's message logs for N = 2, 3, 5 and 8).",
    expected="network_bytes(algorithm, num_workers, nbytes) returns one number, the bytes "
             "all the workers send together, for 'all_to_all', 'all_to_master' and 'ring' "
             "(checked for N = 2, 3, 5 and 8 against the measured bytes).",
    mistakes=(
        _traffic_mistake("all_to_all: (N − 1)·S is what ONE worker sends; each of the N "
                         "workers sends that much.", "all_to_all", lambda n, s: (n - 1) * s),
        _traffic_mistake("all_to_all: each pair of workers exchanges arrays both ways, so "
                         "count N(N − 1) arrays sent, not N(N − 1)/2 pairs.", "all_to_all",
                         lambda n, s: n * (n - 1) / 2 * s),
        _traffic_mistake("all_to_master: the N − 1 arrays go into the master, but the sum "
                         "must also go back out, to each of the N − 1 other workers.",
                         "all_to_master", lambda n, s: (n - 1) * s),
        _traffic_mistake("all_to_master: the master's own array never crosses the network: "
                         "N − 1 arrays go in and N − 1 sums come out.",
                         "all_to_master", lambda n, s: 2 * n * s),
        _traffic_mistake("ring: 2(N − 1)/N·S is what ONE worker sends; add up all N "
                         "workers.", "ring", lambda n, s: 2 * (n - 1) / n * s),
        _traffic_mistake("ring: that counts only the scatter-reduce; the finished chunks "
                         "still travel round the ring for N − 1 more steps (the "
                         "all-gather).", "ring", lambda n, s: (n - 1) * s),
        _traffic_mistake("ring: each phase has N − 1 steps, not N: after N − 1 steps a chunk "
                         "has been to every worker.", "ring", lambda n, s: 2 * n * s),
        _traffic_mistake("ring: that is all-to-all's total; in the ring a worker sends "
                         "chunks of S/N, never a whole array.", "ring",
                         lambda n, s: n * (n - 1) * s),
        _traffic_mistake("ring: N·S is each worker sending about one array; each sends "
                         "2(N − 1) chunks of S/N, almost two arrays. (Mind Python's //: "
                         "2 * (n - 1) // n is 1 for every n ≥ 2.)", "ring",
                         lambda n, s: n * s),
    ),
)


# --------------------------------------------------------------- 12.2: the ring, by hand
# (workers, numbers per worker): first sizes the workers divide, then sizes whose chunks
# differ in size, which a ring must handle too
_RING_CASES = ((2, 6), (3, 9), (4, 8), (4, 10), (5, 13))
_RING_TIMEOUT = 3.0            # seconds a worker waits for a message before the check says so


class _Recorder(Communicator):
    """A worker's communicator that writes down (receiver, numbers) of every send."""

    def __init__(self, inner):
        self.inner, self.rank, self.size = inner, inner.rank, inner.size
        self.sent = []

    def send(self, array, dest):
        self.sent.append((int(dest), int(np.size(array))))
        self.inner.send(array, dest)

    def recv(self, source):
        return self.inner.recv(source)

    def abort(self, reason):
        self.inner.abort(reason)


def _ring_inputs(n, size):
    rng = np.random.default_rng(10 * n + size)
    return [rng.normal(size=size) for _ in range(n)]


def _summed(value, size):
    """A worker's result: the whole summed array of ``size`` numbers."""
    what = "my_ring_all_reduce(comm, array)"
    if isinstance(value, tuple) and len(value) == 2:
        raise WrongForm(f"{what} should return only the summed array, not a pair (the "
                        "messages are counted by the check).")
    if isinstance(value, list) and value and all(isinstance(v, np.ndarray) for v in value):
        raise WrongForm(f"{what} returned a list of {len(value)} arrays: return the whole "
                        "array the chunks are views of, not the chunks.")
    returned(value, what)
    got = array(value, what)
    if got.shape != (size,):
        raise WrongForm(f"{what} should return the whole summed array, shape ({size},) "
                        f"here; it returned {describe(value)}.")
    return got


def _traffic_pattern(messages):
    """Whom each worker sent to, in order, and the sizes of all the chunks sent. Which chunk
    a worker sends at which step is its own numbering: any ring in which the N workers send
    N different chunks at each step sends these sizes, section 3's and a relabelled one."""
    return (tuple(tuple(dest for dest, _ in sent) for sent in messages),
            tuple(sorted(size for sent in messages for _, size in sent)))


def _run_ring(answer):
    """Each worker's result and the messages it sent, case by case. The run stops after the
    first case whose sums are wrong: with a wrong chunk number, chunks of unequal sizes would
    clash (a broadcasting error) and hide which mistake it is."""
    ring = answer["my_ring_all_reduce"]
    sums, sent, kept = [], [], True
    for n, size in _RING_CASES:
        inputs = _ring_inputs(n, size)
        given = [a.copy() for a in inputs]

        def worker(comm, own_array):
            recorder = _Recorder(comm)
            return ring(recorder, own_array), recorder.sent
        try:
            results = run_local(worker, given, timeout=_RING_TIMEOUT)
        except DistributedError as error:
            raise WrongForm(f"the workers waited for each other in vain: {error} Does every "
                            "worker send before it receives? A send returns at once, a recv "
                            "waits for the neighbour's send.") from None
        sums.append(np.stack([_summed(total, size) for total, _ in results]))
        sent.append(_traffic_pattern([messages for _, messages in results]))
        kept = kept and all(np.array_equal(a, b) for a, b in zip(given, inputs))
        if not np.allclose(sums[-1], np.sum(inputs, axis=0)):
            break
    return {"sums": tuple(sums), "sent": tuple(sent), "inputs kept": kept}


def _ring_with(scatter_into=lambda rank, step, n: (rank - step - 1) % n, gather=True,
               gather_adds=False, steps=lambda n: n - 1, direction=1, rebinds="", copy=True):
    """A ring all-reduce written with these choices (the right ones by default). ``rebinds``
    names the phase ("scatter", "gather") that replaces a list entry instead of writing into
    the chunk it is a view of; ``copy=False`` sums into the caller's own array."""
    def my_ring_all_reduce(comm, array):
        n, rank = comm.size, comm.rank
        right, left = (rank + direction) % n, (rank - direction) % n
        total = np.array(array, copy=True) if copy else array
        chunks = np.array_split(total, n)
        for step in range(steps(n)):
            comm.send(chunks[(rank - step) % n], right)
            into = scatter_into(rank, step, n)
            if rebinds == "scatter":
                chunks[into] = chunks[into] + comm.recv(left)
            else:
                chunks[into] += comm.recv(left)
        for step in range(steps(n) if gather else 0):
            comm.send(chunks[(rank + 1 - step) % n], right)
            into = (rank - step) % n
            if gather_adds:
                chunks[into] += comm.recv(left)
            elif rebinds == "gather":
                chunks[into] = comm.recv(left)
            else:
                chunks[into][...] = comm.recv(left)
        return total
    return my_ring_all_reduce


def _all_to_all(comm, array):
    for other in range(comm.size):
        if other != comm.rank:
            comm.send(array, other)
    return array + sum(comm.recv(other) for other in range(comm.size) if other != comm.rank)


def _ring_gives(ring):
    return lambda: _run_ring({"my_ring_all_reduce": ring})


def _sends_whole_arrays(got, reference):
    return any(size == case_size for (_, case_size), (_, sizes) in zip(_RING_CASES, got["sent"])
               for size in sizes)


def _runs_to_the_left(got, reference):
    """Right sums, but every worker sends to r − 1."""
    return close(got["sums"], reference["sums"]) and all(
        dest == (rank - 1) % n
        for (n, _), (destinations, _) in zip(_RING_CASES, got["sent"])
        for rank, sent_to in enumerate(destinations) for dest in sent_to)


def _ring_to_the_left(comm, array):
    """Section 3's ring mirrored: worker r sends to r − 1, chunk numbers mirrored too."""
    n, rank = comm.size, comm.rank
    total = np.array(array, copy=True)
    chunks = np.array_split(total, n)
    for step in range(n - 1):
        comm.send(chunks[(rank + step) % n], (rank - 1) % n)
        chunks[(rank + step + 1) % n] += comm.recv((rank + 1) % n)
    for step in range(n - 1):
        comm.send(chunks[(rank - 1 + step) % n], (rank - 1) % n)
        chunks[(rank + step) % n][...] = comm.recv((rank + 1) % n)
    return total


def _changes_its_input(got, reference):
    return not got["inputs kept"]


def _rebinds(got, reference):
    """``chunks[i] = ...`` in either phase: the sums stay partial."""
    return any(close(got, _ring_gives(_ring_with(rebinds=phase))())
               for phase in ("scatter", "gather"))


ex12_2 = Exercise(
    "12.2",
    reads={"my_ring_all_reduce": function},
    run=_run_ring,
    reference=_ring_gives(lambda comm, a: D.ring_all_reduce(comm, a)[0]),
    passed="your ring gives every worker the sum, for 2 to 5 workers and chunks of unequal "
           "sizes, sending 2(N − 1) chunks to its right neighbour, as eg.distribute's ring "
           "does.",
    expected="my_ring_all_reduce(comm, array) returns a new array, the sum of every worker's "
             "array, after the scatter-reduce and the all-gather of section 3 (the check "
             "compares the sums to 1e-6 and the chunks each worker sent to whom).",
    mistakes=(
        Mistake("your function changed the array it was given (np.array_split returns views "
                "into it): cut a copy, np.array(array, copy=True), and return that.",
                when=_changes_its_input,
                example={"my_ring_all_reduce": _ring_with(copy=False)}),
        Mistake("your workers send whole arrays: that is all-to-all, (N − 1)·S bytes from "
                "each. In the ring a worker sends one chunk of about S/N at each step, always "
                "to worker r + 1.",
                when=_sends_whole_arrays, example={"my_ring_all_reduce": _all_to_all}),
        Mistake("after the scatter-reduce each worker holds ONE finished chunk, (r + 1) mod "
                "N; the all-gather's N − 1 steps pass the finished chunks round the ring.",
                gives=_ring_gives(_ring_with(gather=False)),
                example={"my_ring_all_reduce": _ring_with(gather=False)}),
        Mistake("in the all-gather the chunk that arrives is already the full sum: keep it "
                "(chunk[...] = received) instead of adding it to yours.",
                gives=_ring_gives(_ring_with(gather_adds=True)),
                example={"my_ring_all_reduce": _ring_with(gather_adds=True)}),
        Mistake("`chunks[i] = ...` replaces an entry of the list and leaves your array as it "
                "was: write INTO the chunk, which is a view of the array "
                "(chunks[i][...] = received, or chunks[i] += received).",
                when=_rebinds, example={"my_ring_all_reduce": _ring_with(rebinds="gather")}),
        Mistake("in the scatter-reduce the chunk that arrives is not the one you sent: worker "
                "r − 1 sent its chunk (r − 1 − s) mod N, so add it to yours of that number.",
                gives=_ring_gives(_ring_with(scatter_into=lambda r, s, n: (r - s) % n)),
                example={"my_ring_all_reduce":
                         _ring_with(scatter_into=lambda r, s, n: (r - s) % n)}),
        Mistake("each phase has N − 1 steps, not N: after N − 1 steps of the scatter-reduce "
                "a chunk already holds all N workers' numbers.",
                gives=_ring_gives(_ring_with(steps=lambda n: n)),
                example={"my_ring_all_reduce": _ring_with(steps=lambda n: n)}),
        Mistake("your sums are right, but your ring runs the other way: in section 3's ring "
                "worker r sends to r + 1 and receives from r − 1. Turn it round.",
                when=_runs_to_the_left, example={"my_ring_all_reduce": _ring_to_the_left}),
        Mistake("your workers send to their left neighbour: in section 3's ring worker r "
                "sends to r + 1 and receives from r − 1 (the chunk numbers follow from that).",
                gives=_ring_gives(_ring_with(direction=-1)),
                example={"my_ring_all_reduce": _ring_with(direction=-1)}),
    ),
)


# ------------------------------------------------- 12.3: the gradient of an uneven global batch
# the parts of each global batch: uneven, with an empty part, and even (where a plain mean of
# the replicas' gradients happens to be right)
_SPLITS = ((4, 3, 3), (8, 8, 7, 7), (2, 1, 0), (5, 5))


def _mean_squared_error_gradient(x, y, w):
    """The gradient of mean((x @ w - y)²) with respect to w, by edugraph; zeros when the
    part is empty (a replica without examples adds nothing)."""
    if len(x) == 0:
        return np.zeros_like(w)
    weights = eg.tensor(w, dtype=eg.float64, requires_grad=True)
    loss = ((eg.tensor(x) @ weights - eg.tensor(y)) ** 2).mean()
    loss.backward()
    return weights.grad.numpy()


def _uneven_batches():
    """For each split: the replicas' gradients and the whole batch's, of a linear model."""
    rng = np.random.default_rng(12)
    cases = []
    for parts in _SPLITS:
        x, y = rng.normal(size=(sum(parts), 3)), rng.normal(size=(sum(parts), 2))
        w = rng.normal(size=(3, 2))
        bounds = np.cumsum((0,) + parts)
        replicas = [_mean_squared_error_gradient(x[a:b], y[a:b], w)
                    for a, b in zip(bounds[:-1], bounds[1:])]
        cases.append((replicas, list(parts), _mean_squared_error_gradient(x, y, w)))
    return cases


def _run_combine(answer):
    combine, results = answer["global_gradient"], []
    for replicas, parts, whole in _uneven_batches():
        value = combine([g.copy() for g in replicas], list(parts))
        what = f"global_gradient(replica_gradients, {parts})"
        returned(value, what)
        got = array(value, what)
        if got.shape != whole.shape:
            raise WrongForm(f"{what} should return one array of the gradients' shape "
                            f"{whole.shape}; it returned {describe(value)}. Combine the "
                            "replicas' gradients into one.")
        results.append(got)
    return {"gradients": tuple(results)}


def _gives_combined(rule):
    """What an answer computing ``rule(gradients, part_sizes)`` gives on the check's splits."""
    return lambda: {"gradients": tuple(rule(replicas, parts)
                                       for replicas, parts, _ in _uneven_batches())}


def _plain_mean(grads, parts):
    return sum(grads) / len(grads)


def _mean_of_busy(grads, parts):
    busy = [g for g, n in zip(grads, parts) if n > 0]
    return sum(busy) / len(busy)


def _averaged(got, reference):
    return any(np.allclose(got["gradients"], _gives_combined(rule)()["gradients"])
               for rule in (_plain_mean, _mean_of_busy))


def _plain_sum(grads, parts):
    return sum(grads)


def _weighted_sum(grads, parts):
    return sum(n * g for g, n in zip(grads, parts))


def _per_replica(grads, parts):
    return _weighted_sum(grads, parts) / len(parts)


ex12_3 = Exercise(
    "12.3",
    reads={"global_gradient": function},
    run=_run_combine,
    reference=lambda: {"gradients": tuple(whole for _, _, whole in _uneven_batches())},
    passed="global_gradient gives the gradient of the whole batch's mean loss for the splits "
           "4, 3, 3 / 8, 8, 7, 7 / 2, 1, 0 / 5, 5: each replica weighted by its share of the "
           "batch.",
    expected="global_gradient(replica_gradients, part_sizes) returns one array of the "
             "gradients' shape, the gradient of the mean loss over the whole global batch "
             "(checked to 1e-6 on four splits of a linear model's batch).",
    mistakes=(
        Mistake("you averaged the replicas' gradients: that is right only when every part "
                "has as many examples. A replica's gradient is a mean over its part; weight it "
                "by its share of the global batch, n_k / N.",
                when=_averaged, example={"global_gradient": _plain_mean}),
        Mistake("you added the replicas' gradients: a sum of R means is about R times the "
                "batch's mean. Weight each by its share of the global batch, n_k / N.",
                gives=_gives_combined(_plain_sum), example={"global_gradient": _plain_sum}),
        Mistake("n_k times a replica's mean is the SUM of its examples' gradients: that is "
                "the gradient of the batch's summed loss. Divide by the global batch size N.",
                gives=_gives_combined(_weighted_sum), example={"global_gradient": _weighted_sum}),
        Mistake("you divided by the number of replicas; the mean over the global batch "
                "divides by the number of examples in it, N = n_0 + n_1 + ...",
                gives=_gives_combined(_per_replica),
                example={"global_gradient": _per_replica}),
    ),
)


# --------------------------------------------------------- 12.4: stale gradients, as Downpour
# (gradient, w0, learning rate, staleness): two parabolas, staleness from 0 (plain SGD) to 5
_PARABOLAS = {"(w − 3)²/2": lambda w: w - 3, "(w + 1)²": lambda w: 2 * (w + 1)}
_STALE_CASES = (("(w − 3)²/2", 0.0, 0.3, 0), ("(w − 3)²/2", 0.0, 0.3, 1),
                ("(w − 3)²/2", 0.0, 0.3, 3), ("(w + 1)²", 2.0, 0.1, 2),
                ("(w + 1)²", 2.0, 0.1, 5))
_STALE_STEPS = 12


def _downpour_path(gradient, w0, lr, staleness, steps):
    """The weight after 0, 1, ..., steps updates of eg.distribute.downpour_sgd (one worker,
    one server, the given staleness)."""
    servers = D.ParameterServers({"w": np.array(float(w0))}, num_servers=1, learning_rate=lr)
    path = []

    def loss_and_gradient(weights, batch):
        path.append(float(servers.values()["w"]))     # the weight now, before this update
        return 0.0, {"w": np.array(gradient(float(weights["w"])))}
    D.downpour_sgd(servers, loss_and_gradient, [[None]], steps=steps, staleness=staleness)
    return path + [float(servers.values()["w"])]


def _paths(stale_sgd):
    return {"paths": tuple(np.array(stale_sgd(_PARABOLAS[name], w0, lr, k, _STALE_STEPS))
                           for name, w0, lr, k in _STALE_CASES)}


def _run_stale(answer):
    stale_sgd, paths = answer["stale_sgd"], []
    for name, w0, lr, k in _STALE_CASES:
        what = f"stale_sgd(gradient of {name}, {w0}, {lr}, {k}, {_STALE_STEPS})"
        try:
            value = stale_sgd(_PARABOLAS[name], w0, lr, k, _STALE_STEPS)
        except IndexError:
            raise WrongForm(f"{what} raised IndexError: it read a weight the list does not "
                            "hold. Update t (counting from 0) uses the weight after "
                            "max(0, t − staleness) updates: w0 while t − staleness is "
                            "negative, and never one after t updates, which is not computed "
                            "yet.") from None
        returned(value, what)
        path = array(value, what)
        if path.shape == (_STALE_STEPS,):
            raise WrongForm(f"{what} returned {_STALE_STEPS} weights; return "
                            f"{_STALE_STEPS + 1}, starting with w0 (the weight after 0 "
                            "updates).")
        if path.shape != (_STALE_STEPS + 1,):
            raise WrongForm(f"{what} should return a list of {_STALE_STEPS + 1} numbers, the "
                            f"weight after 0, 1, ..., {_STALE_STEPS} updates; it returned "
                            f"{describe(value)}.")
        paths.append(path)
    return {"paths": tuple(paths)}


def _stale_by(fetch, apply_to_fetched=False, sign=-1):
    """A stale_sgd whose update t uses the weight ``history[fetch(t, staleness)]``."""
    def stale_sgd(gradient, w0, lr, staleness, steps):
        history = [w0]
        for t in range(steps):
            fetched = history[fetch(t, staleness)]
            start = fetched if apply_to_fetched else history[-1]
            history.append(start + sign * lr * gradient(fetched))
        return history
    return stale_sgd


_newest = _stale_by(lambda t, k: t)
_onto_fetched = _stale_by(lambda t, k: max(0, t - k), apply_to_fetched=True)
_one_too_old = _stale_by(lambda t, k: max(0, t - k - 1))
_ascent = _stale_by(lambda t, k: max(0, t - k), sign=1)

ex12_4 = Exercise(
    "12.4",
    reads={"stale_sgd": function},
    run=_run_stale,
    reference=lambda: {"paths": tuple(np.array(_downpour_path(_PARABOLAS[name], w0, lr, k,
                                                              _STALE_STEPS))
                                      for name, w0, lr, k in _STALE_CASES)},
    passed="stale_sgd follows eg.distribute.downpour_sgd update for update, on two parabolas "
           "with staleness 0 to 5: gradients from old weights, applied to the current ones.",
    expected=f"stale_sgd(gradient, w0, lr, staleness, steps) returns {_STALE_STEPS + 1} "
             "numbers for steps = 12: the weight after 0, 1, ... updates, w0 first (checked to "
             "1e-6 against eg.distribute.downpour_sgd).",
    mistakes=(
        Mistake("you computed every gradient at the newest weight: that is plain SGD. A stale "
                "gradient is computed at the weight after t − staleness updates.",
                gives=lambda: _paths(_newest), example={"stale_sgd": _newest}),
        Mistake("a parameter server applies each gradient to its CURRENT weight; you applied "
                "it to the old weight the worker fetched, which throws away every update made "
                "in between.",
                gives=lambda: _paths(_onto_fetched), example={"stale_sgd": _onto_fetched}),
        Mistake("one update too old: with staleness 0 the gradient must be at the current "
                "weight (plain SGD), so update t uses the weight after t − staleness updates.",
                gives=lambda: _paths(_one_too_old), example={"stale_sgd": _one_too_old}),
        Mistake("the weight climbs: gradient descent subtracts lr · gradient.",
                gives=lambda: _paths(_ascent), example={"stale_sgd": _ascent}),
    ),
)

EXERCISES = [ex12_1, ex12_2, ex12_3, ex12_4]
