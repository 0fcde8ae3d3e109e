"""The communicator: what an all-reduce algorithm needs from the machines it runs on.

An algorithm (``all_reduce.py``) is written as the code *one* worker runs, knowing only its
``rank`` (0, 1, ... ``size - 1``) and how to ``send`` an array to another rank and ``recv`` the
next array another rank sent it, the way MPI programs are written. Three transports implement
this interface, so the same ring all-reduce runs unchanged on each:

* ``LocalCommunicator`` (here): the ranks are threads of this process and messages go through
  queues: the replicas of ``MirroredStrategy`` and the lesson's all-reduce pictures;
* ``SocketCommunicator`` (``sockets.py``): separate processes on this machine, over 127.0.0.1;
* ``MPICommunicator`` (``mpi.py``): processes started by ``mpiexec``, on one machine or many.

``send`` returns at once (the message waits at the receiver), so a ring in which every worker
first sends and then receives cannot deadlock. Every wait is bounded: a worker that died or never
came makes the others fail with an error that names it, never hang.
"""
import queue
import threading
import time

import numpy as np

__all__ = ["Communicator", "LocalCommunicator", "run_local", "DistributedError",
           "WorkerTimeoutError", "WorkerLostError", "ProtocolError"]


class DistributedError(RuntimeError):
    """Something went wrong between workers; the message names the worker."""


class WorkerTimeoutError(DistributedError):
    """A worker did not connect, or did not send, within the time allowed."""


class WorkerLostError(DistributedError):
    """A worker's connection closed (it ended, or died) while a message was expected."""


class ProtocolError(DistributedError):
    """A message that is not an array frame of ours (malformed, oversized, a pickle...)."""


class Communicator:
    """One worker's end of a group: ``rank``, ``size``, ``send`` and ``recv`` of arrays."""

    rank = 0
    size = 1

    def send(self, array, dest):
        """Send a copy of ``array`` to rank ``dest``; returns without waiting for it."""
        raise NotImplementedError

    def recv(self, source):
        """The next array rank ``source`` sent to this rank (waits, but not forever)."""
        raise NotImplementedError

    def describe(self, rank):
        """A worker as error messages name it."""
        return f"worker {rank}"

    def abort(self, reason):
        """Stop because of ``reason``: tell the others if the transport can, then close."""
        self.close()

    def close(self):
        """Release connections (nothing to do for threads)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class LocalCommunicator(Communicator):
    """A rank that is a thread of this process; ``LocalCommunicator.group(n)`` makes n of them.

    Each ordered pair of ranks has its own queue, so messages between two ranks arrive in the
    order they were sent (as with TCP and MPI). A send puts a *copy* in the queue, as a network
    would: the sender may change its array afterwards."""

    def __init__(self, rank, mailboxes, timeout, failed):
        self.rank, self.size = rank, len(mailboxes)
        self._mailboxes, self.timeout, self._failed = mailboxes, timeout, failed

    @classmethod
    def group(cls, size, timeout=60.0):
        mailboxes = [[queue.Queue() for _ in range(size)] for _ in range(size)]  # [to][from]
        failed = threading.Event()          # set when any rank fails: the others stop waiting
        return [cls(rank, mailboxes, timeout, failed) for rank in range(size)]

    def send(self, array, dest):
        self._mailboxes[dest][self.rank].put(np.array(array, copy=True))

    def abort(self, reason):
        self._failed.set()

    def recv(self, source):
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return self._mailboxes[self.rank][source].get(timeout=0.05)
            except queue.Empty:
                if self._failed.is_set():
                    raise DistributedError(f"worker {self.rank} stopped waiting for "
                                           f"{self.describe(source)}: another worker failed.")
                if time.monotonic() > deadline:
                    raise WorkerTimeoutError(f"worker {self.rank} received nothing from "
                                             f"{self.describe(source)} within "
                                             f"{self.timeout:g} s.") from None


def run_local(program, arrays, timeout=60.0):
    """Run ``program(communicator, array)`` once per array, each in its own thread as one rank
    of a ``LocalCommunicator`` group; returns their results in rank order. The first error of
    any rank is raised here (after the others have stopped)."""
    __tracebackhide__ = True  # noqa: F841  (IPython: a rank's error shows the program's line)
    group = LocalCommunicator.group(len(arrays), timeout)
    results, errors = [None] * len(arrays), []

    def run(rank):
        __tracebackhide__ = True  # noqa: F841
        try:
            results[rank] = program(group[rank], arrays[rank])
        except BaseException as error:            # (re-raised below, in the caller's thread)
            errors.append((rank, error))
            group[rank].abort(error)

    threads = [threading.Thread(target=run, args=(rank,), daemon=True)
               for rank in range(len(arrays))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout + 1.0)
    if errors:
        raise errors[0][1]                         # the first: the others followed from it
    if any(thread.is_alive() for thread in threads):
        raise WorkerTimeoutError(f"the in-process workers did not finish within {timeout:g} s.")
    return results
