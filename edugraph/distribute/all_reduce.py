"""All-reduce: every worker starts with its own array (its gradients) and ends with the sum.

Each algorithm is the code *one* worker runs (``rank`` of ``size``, over a ``Communicator``),
and returns the sum and the log of the messages this worker sent. ``all_reduce(arrays, ...)``
runs it on every replica's array at once (in threads) and returns every worker's result with
the whole log, to count and to draw. With S the bytes of one array and N workers:

=================  ==========================================  ==============
algorithm          what moves                                  bytes sent
=================  ==========================================  ==============
all-to-all         every worker sends its array to every       (N-1)·S by each
                   other worker, and each adds what it got
all-to-master      the workers send to one master (a           (N-1)·S into the
                   parameter server), which adds and sends     master, and out
                   the sum back
ring               the array is cut into N chunks; N-1         2(N-1)/N·S by each
                   scatter-reduce steps pass partial sums to
                   the right neighbour, then N-1 all-gather
                   steps pass the finished sums round
=================  ==========================================  ==============

The ring's total does not grow with N: each worker sends just under 2S, however many there are
(Patarasuk and Yuan, 2009; Horovod, 2017). When N does not divide the array, the chunks differ
by one element (``np.array_split``) and worker r sends 2S - |chunk r+1| - |chunk r+2|.

Every worker adds the same numbers in the same order, so all end with identical sums (bit for
bit): the replicas of a model stay in sync.
"""
import itertools
from collections import namedtuple

import numpy as np

from .communicator import run_local

__all__ = ["Message", "ring_all_reduce", "all_to_all_reduce", "all_to_master_reduce",
           "broadcast", "all_reduce", "bytes_sent", "bytes_received", "replay", "ALGORITHMS"]

Message = namedtuple("Message", "step phase sender receiver chunk nbytes")
Message.__doc__ = """One array sent: at ``step`` (0, 1, ...: messages of one step travel at the
same time) of ``phase``, ``sender`` sent ``chunk`` (its index, or None for the whole array) to
``receiver``: ``nbytes`` bytes of data."""

# Does the receiver add what it gets (a reduce) or keep it (a copy of a finished sum)?
ADDS = {"scatter-reduce": True, "all-gather": False, "reduce": True, "broadcast": False,
        "all-to-all": True}


def _send(comm, array, dest, step, phase, chunk=None):
    comm.send(array, dest)
    return Message(step, phase, comm.rank, dest, chunk, array.nbytes)


def ring_all_reduce(comm, array):
    """The ring: scatter-reduce, then all-gather, each N-1 steps, each worker talking only to its
    neighbours. Returns (the sum, this worker's sent messages).

    Scatter-reduce step s: worker r sends chunk (r - s) mod N to the right and adds the chunk
    (r - s - 1) mod N that arrives from the left; after N-1 steps worker r holds the finished
    sum of chunk (r + 1) mod N. All-gather step s: worker r passes chunk (r + 1 - s) mod N on
    and keeps the chunk (r - s) mod N that arrives."""
    n, rank = comm.size, comm.rank
    right, left = (rank + 1) % n, (rank - 1) % n
    total = np.array(array, copy=True)
    chunks = np.array_split(total.reshape(-1), n)        # views: writing them fills total
    log = []
    for step in range(n - 1):
        out, into = (rank - step) % n, (rank - step - 1) % n
        log.append(_send(comm, chunks[out], right, step, "scatter-reduce", out))
        chunks[into] += comm.recv(left)
    for step in range(n - 1):
        out, into = (rank + 1 - step) % n, (rank - step) % n
        log.append(_send(comm, chunks[out], right, n - 1 + step, "all-gather", out))
        chunks[into][...] = comm.recv(left)
    return total, log


def all_to_all_reduce(comm, array):
    """Every worker sends its whole array to every other and adds all N (in rank order, so
    that every worker gets the same rounding). Returns (the sum, this worker's messages)."""
    others = [r for r in range(comm.size) if r != comm.rank]
    log = [_send(comm, array, other, 0, "all-to-all") for other in others]
    parts = {other: comm.recv(other) for other in others}
    parts[comm.rank] = array
    return _sum_in_rank_order(parts), log


def all_to_master_reduce(comm, array, master=0):
    """The workers send their arrays to the master, which adds them and sends the sum back
    (a parameter server's pattern). Returns (the sum, this worker's messages)."""
    if comm.rank != master:
        log = [_send(comm, array, master, 0, "reduce")]
        return comm.recv(master), log
    parts = {r: comm.recv(r) for r in range(comm.size) if r != master}
    parts[master] = array
    total = _sum_in_rank_order(parts)
    return total, [_send(comm, total, r, 1, "broadcast") for r in range(comm.size)
                   if r != master]


def broadcast(comm, array, root=0):
    """``root``'s array to every worker (the chief's initial weights, before training).
    Returns (root's array, this worker's messages)."""
    if comm.rank != root:
        return comm.recv(root), []
    return np.array(array, copy=True), [_send(comm, array, r, 0, "broadcast")
                                        for r in range(comm.size) if r != root]


def _sum_in_rank_order(parts):
    total = np.array(parts[0], copy=True)
    for rank in range(1, len(parts)):
        total += parts[rank]
    return total


ALGORITHMS = {"ring": ring_all_reduce, "all_to_all": all_to_all_reduce,
              "all_to_master": all_to_master_reduce}


def algorithm_named(algorithm):
    """An algorithm from its name (``"ring"``...) or the function itself."""
    if callable(algorithm):
        return algorithm
    if algorithm not in ALGORITHMS:
        raise ValueError(f"Unknown all-reduce algorithm {algorithm!r}: use one of "
                         f"{', '.join(map(repr, ALGORITHMS))} or one of the functions "
                         "(eg.distribute.ring_all_reduce...).")
    return ALGORITHMS[algorithm]


def all_reduce(arrays, algorithm="ring", timeout=60.0):
    """Run an all-reduce over the replicas' ``arrays`` (one per worker, same shape and dtype),
    each worker a thread of this process. Returns (each worker's sum, every message sent,
    in order of step and sender).

        sums, log = all_reduce([np.ones(4), 2 * np.ones(4)], "ring")
        sums[1]     # array([3., 3., 3., 3.]): every worker has the sum
        log[0]      # Message(step=0, phase='scatter-reduce', sender=0, receiver=1, chunk=0,
                    #         nbytes=16): worker 0 sent its first half to worker 1
    """
    program = algorithm_named(algorithm)
    arrays = [np.asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("all_reduce needs at least one array (one per worker).")
    for rank, a in enumerate(arrays):
        if a.shape != arrays[0].shape or a.dtype != arrays[0].dtype:
            raise ValueError(f"all_reduce: every worker's array must have the same shape and "
                             f"dtype; worker 0 has {arrays[0].shape} {arrays[0].dtype}, worker "
                             f"{rank} has {a.shape} {a.dtype}.")
    results = run_local(program, arrays, timeout)
    sums = [total for total, _ in results]
    log = sorted(itertools.chain.from_iterable(sent for _, sent in results),
                 key=lambda m: (m.step, m.sender, m.receiver))
    return sums, log


def bytes_sent(log, num_workers):
    """Bytes each worker sent, from a log: ``[worker 0's, worker 1's, ...]``."""
    totals = [0] * num_workers
    for m in log:
        totals[m.sender] += m.nbytes
    return totals


def bytes_received(log, num_workers):
    """Bytes each worker received, from a log."""
    totals = [0] * num_workers
    for m in log:
        totals[m.receiver] += m.nbytes
    return totals


def replay(log, num_workers):
    """What each worker holds after each step, for a figure with a step slider.

    Returns one snapshot before the first step and one after each step; a snapshot is
    ``holds[worker][chunk]``, the workers whose numbers are summed in that chunk (a sorted
    tuple). The array is cut into ``num_workers`` chunks, as the ring cuts it; a message of
    the whole array (``chunk`` None) moves every chunk. At the end of an all-reduce every
    chunk of every worker holds all of them."""
    holds = [[(worker,)] * num_workers for worker in range(num_workers)]
    snapshots = [holds]
    for _, messages in itertools.groupby(sorted(log, key=lambda m: m.step),
                                         key=lambda m: m.step):
        before, holds = holds, [list(chunks) for chunks in holds]
        for m in messages:                           # all sent at once, from the old state
            for chunk in range(num_workers) if m.chunk is None else [m.chunk]:
                arriving = before[m.sender][chunk]
                holds[m.receiver][chunk] = tuple(sorted(set(holds[m.receiver][chunk])
                                                        | set(arriving))) \
                    if ADDS[m.phase] else arriving
        snapshots.append(holds)
    return snapshots
