"""Workers started by ``mpiexec``, talking through MPI (the transport Horovod uses).

    pip install -e ".[dist]"                     # mpi4py and the mpich wheel (with mpiexec)
    mpiexec -n 3 python train.py                 # three workers on this machine
    mpiexec -n 8 -hosts a,b python train.py      # eight, on two machines

MPI starts the processes, tells each its rank and carries the bytes (shared memory on one
machine, the network between machines). Our ring all-reduce runs on it unchanged, through the
same ``send`` / ``recv`` as over sockets; ``MPI.COMM_WORLD.Allreduce`` is MPI's own all-reduce,
which the tests compare ours with.

Arrays travel as the same frames as over sockets (``wire.py``: a header, then raw bytes), as two
MPI messages, so nothing is pickled (mpi4py's lower-case ``send`` would pickle). MPI's own
``Recv`` waits for ever; here each wait polls with a deadline, so a missing worker is named in
a ``WorkerTimeoutError`` instead of a hang. (If a worker dies, mpiexec ends them all.)
"""
import time

import numpy as np

from . import wire
from .communicator import Communicator, ProtocolError, WorkerTimeoutError

__all__ = ["MPICommunicator", "launched_by_mpiexec"]

_HEADER, _DATA = 1, 2                   # MPI tags of the two messages of a frame


def launched_by_mpiexec(environ):
    """Was this process started by mpiexec (MPICH's or Open MPI's)?"""
    return "PMI_RANK" in environ or "OMPI_COMM_WORLD_RANK" in environ


def _mpi():
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ImportError("The MPI backend needs mpi4py and an MPI library: "
                          "pip install -e \".[dist]\" (mpi4py and the mpich wheel, which brings "
                          "mpiexec).") from error
    return MPI


class MPICommunicator(Communicator):
    """This process's rank in ``MPI.COMM_WORLD`` (or in ``comm``)."""

    def __init__(self, comm=None, timeout=60.0, max_message_bytes=1 << 30):
        self.MPI = _mpi()
        self.comm = comm or self.MPI.COMM_WORLD
        self.rank, self.size = self.comm.Get_rank(), self.comm.Get_size()
        self.timeout, self.max_message_bytes = timeout, max_message_bytes
        self._sending = []              # (request, buffer): a buffer must live until it is sent

    def describe(self, rank):
        return f"worker {rank} (MPI rank {rank})"

    def send(self, array, dest):
        header, data = wire.encode_header(array)
        for buffer, tag in ((np.frombuffer(header, np.uint8), _HEADER),
                            (data.reshape(-1).view(np.uint8), _DATA)):     # bytes, both
            self._sending.append((self.comm.Isend(buffer, dest, tag), buffer))
        self._sending = [(r, b) for r, b in self._sending if not r.Test()]

    def recv(self, source):
        who = self.describe(source)
        header = np.empty(self._wait(source, _HEADER, wire.FIXED.size + 8 * wire.MAX_NDIM),
                          np.uint8)
        self.comm.Recv(header, source, _HEADER)
        dtype, shape, nbytes = wire.parse_header(header.tobytes(), self.max_message_bytes, who)
        if self._wait(source, _DATA, self.max_message_bytes) != nbytes:
            raise ProtocolError(f"Refused a message from {who}: its data is not the {nbytes} "
                                "bytes its header announced.")
        array = np.empty(shape, dtype)
        self.comm.Recv(array.reshape(-1).view(np.uint8), source, _DATA)
        return array.astype(dtype.newbyteorder("="), copy=False)

    def _wait(self, source, tag, max_bytes):
        """Wait (bounded) for a message; return its size in bytes, refused above ``max_bytes``."""
        status = self.MPI.Status()
        deadline = time.monotonic() + self.timeout
        while not self.comm.Iprobe(source, tag, status):
            if time.monotonic() > deadline:
                raise WorkerTimeoutError(f"Worker {self.rank} received nothing from "
                                         f"{self.describe(source)} within {self.timeout:g} s.")
            time.sleep(1e-4)
        size = status.Get_count(self.MPI.BYTE)
        if size > max_bytes:
            raise ProtocolError(f"Refused a message of {size} bytes from "
                                f"{self.describe(source)}: over the {max_bytes}-byte limit.")
        return size

    def close(self):
        self.MPI.Request.Waitall([r for r, _ in self._sending])
        self._sending = []
