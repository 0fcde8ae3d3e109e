"""Several worker processes training one model: ``MultiWorkerMirroredStrategy`` and TF_CONFIG.

Each worker is a process that runs the same script. It learns the cluster from the ``TF_CONFIG``
environment variable, as in TensorFlow (the slide's JSON)::

    {"cluster": {"worker": ["localhost:12345", "localhost:23456"]},
     "task": {"type": "worker", "index": 0}}

Every worker has the same cluster; only ``index`` differs. Worker 0 is the chief (it would save
the checkpoints). ``eg.distribute.launch("train.py", num_workers=3)`` starts the processes with
their TF_CONFIG and a fresh secret token (``EDUGRAPH_DISTRIBUTE_TOKEN``) that they use to
recognise each other. Started by ``mpiexec`` instead, with no TF_CONFIG, the same script runs
over MPI.

Each worker holds one replica. Every worker reads the same global batches (give them the same
data and seed) and takes its own part of each, as the replicas of ``MirroredStrategy`` do;
before the first step the chief's weights are broadcast, so all start equal. The ring
all-reduce then runs between the processes, so the workers end with the weights an in-process
``MirroredStrategy`` with as many replicas computes.
"""
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections import namedtuple
from types import SimpleNamespace

from .all_reduce import broadcast
from .communicator import DistributedError
from .mpi import MPICommunicator, launched_by_mpiexec
from .sockets import SocketCommunicator, new_token
from .strategy import Strategy
from ..devices import current_device

__all__ = ["MultiWorkerMirroredStrategy", "cluster_from_tf_config", "launch", "WorkerResult",
           "WorkerFailedError", "TOKEN_VARIABLE"]

TOKEN_VARIABLE = "EDUGRAPH_DISTRIBUTE_TOKEN"


def cluster_from_tf_config(tf_config):
    """(worker addresses, this worker's index) from TF_CONFIG's JSON text, checked."""
    try:
        config = json.loads(tf_config)
    except json.JSONDecodeError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON ({error}): {tf_config!r}") from None
    example = ('{"cluster": {"worker": ["localhost:12345", "localhost:23456"]}, '
               '"task": {"type": "worker", "index": 0}}')
    cluster, task = config.get("cluster"), config.get("task")
    if not isinstance(cluster, dict) or not isinstance(task, dict):
        raise ValueError(f"TF_CONFIG needs a 'cluster' and a 'task', e.g. {example}")
    others = sorted(set(cluster) - {"worker"})
    if others:
        raise ValueError(f"TF_CONFIG's cluster has {others}: edugraph's multi-worker strategy "
                         "has workers only (worker 0 is the chief). Parameter servers are "
                         "simulated in eg.distribute.ParameterServers.")
    workers = cluster.get("worker")
    if not isinstance(workers, list) or not workers or \
            not all(isinstance(w, str) for w in workers):
        raise ValueError(f"TF_CONFIG's cluster.worker must be a list of 'host:port' strings, "
                         f"e.g. {example}")
    index = task.get("index")
    if task.get("type") != "worker" or not isinstance(index, int) or \
            not 0 <= index < len(workers):
        raise ValueError(f"TF_CONFIG's task must be {{'type': 'worker', 'index': i}} with i "
                         f"in 0..{len(workers) - 1}, got {task!r}.")
    return workers, index


def _communicator_from_environment(timeout):
    if "TF_CONFIG" in os.environ:
        workers, index = cluster_from_tf_config(os.environ["TF_CONFIG"])
        token = os.environ.get(TOKEN_VARIABLE)
        if not token:
            raise ValueError(f"TF_CONFIG is set but {TOKEN_VARIABLE} is not: the workers of a "
                             "run need a shared secret to recognise each other. "
                             "eg.distribute.launch(script, num_workers) sets both; by hand, "
                             "give every worker the same eg.distribute.new_token().")
        return SocketCommunicator(workers, index, token, timeout)
    if launched_by_mpiexec(os.environ):
        return MPICommunicator(timeout=timeout)
    raise ValueError("MultiWorkerMirroredStrategy needs to know its cluster: set TF_CONFIG "
                     "(eg.distribute.launch(script, num_workers) does), or start the script "
                     "with mpiexec -n N.")


class MultiWorkerMirroredStrategy(Strategy):
    """One replica in each worker process; the ring all-reduce between the processes.

    ``communicator``: how the workers talk; by default a ``SocketCommunicator`` from TF_CONFIG,
    or an ``MPICommunicator`` under mpiexec. ``timeout`` bounds connecting and every wait: a
    worker that dies or never comes makes the others fail with an error naming it."""

    def __init__(self, communicator=None, cross_device_ops=None, timeout=60.0):
        super().__init__([current_device()], cross_device_ops)
        self.communicator = communicator or _communicator_from_environment(timeout)
        self.num_replicas_in_sync = self.communicator.size
        self.cluster_resolver = SimpleNamespace(task_type="worker",
                                                task_id=self.communicator.rank,
                                                num_workers=self.communicator.size)

    @property
    def is_chief(self):
        return self.communicator.rank == 0

    def _local_shards(self):
        return [self.communicator.rank]

    def _make_replicas(self, model):
        """This worker's replica is the model, with the chief's weights."""
        with self._telling_the_others_on_failure():
            for var in model.variables:
                value, _ = broadcast(self.communicator, var.numpy())
                var.assign(value)
        return [model]

    def _all_reduce(self, buffers):
        with self._telling_the_others_on_failure():     # (the messages this worker sent)
            total, self.last_messages = self.all_reduce_algorithm(self.communicator,
                                                                  buffers[0])
        return [total]

    @contextlib.contextmanager
    def _telling_the_others_on_failure(self):
        """A worker that fails tells the others why, so that they name the cause (the worker
        that died) rather than this one."""
        try:
            yield
        except DistributedError as error:
            self.communicator.abort(error)
            raise

    def close(self):
        self.communicator.close()


# ----------------------------------------------------------------------------- launching workers
WorkerResult = namedtuple("WorkerResult", "index returncode stdout stderr")


class WorkerFailedError(DistributedError):
    """A launched worker exited with an error; ``results`` holds every worker's output."""

    def __init__(self, message, results):
        super().__init__(message)
        self.results = results


def _free_ports(count):
    """Ports free on 127.0.0.1 now (a program that takes one before its worker binds it makes
    that worker fail, saying so)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def launch(script, num_workers=2, args=(), timeout=120.0, env=None):
    """Run ``python script *args`` as ``num_workers`` worker processes of one cluster on
    this machine, each with its TF_CONFIG (``localhost`` ports that were free) and the run's
    token; wait for all of them (at most ``timeout`` seconds, then they are killed).

    Returns each worker's ``WorkerResult(index, returncode, stdout, stderr)``; raises
    ``WorkerFailedError`` (with every result) if any worker failed."""
    addresses = [f"localhost:{port}" for port in _free_ports(num_workers)]
    token = new_token()
    running = []
    try:
        for index in range(num_workers):
            environ = {**os.environ, **(env or {}), TOKEN_VARIABLE: token,
                       "TF_CONFIG": json.dumps({"cluster": {"worker": addresses},
                                                "task": {"type": "worker", "index": index}})}
            out, err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
            process = subprocess.Popen([sys.executable, os.fspath(script), *map(str, args)],
                                       env=environ, stdout=out, stderr=err)
            running.append((process, out, err))
        deadline, killed = time.monotonic() + timeout, set()
        for index, (process, _, _) in enumerate(running):
            try:
                process.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                killed.add(index)
    finally:
        for process, _, _ in running:           # (an interrupted launch leaves no workers)
            if process.poll() is None:
                process.kill()
                process.wait()
    results = []
    for index, (process, out, err) in enumerate(running):
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode(errors="replace"))
            f.close()
        results.append(WorkerResult(index, process.returncode, *texts))
    failed = [r for r in results if r.returncode != 0]
    if failed:
        lines = [f"worker {r.index}: " + (f"killed after {timeout:g} s" if r.index in killed
                                          else f"exit code {r.returncode}, "
                                          f"{_last_line(r.stderr)}") for r in failed]
        raise WorkerFailedError(f"{len(failed)} of {num_workers} workers failed:\n" +
                                "\n".join(lines), results)
    return results


def _last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "(no output)"
