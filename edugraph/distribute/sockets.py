"""Workers in separate processes of this machine, talking over 127.0.0.1 sockets.

Each worker listens on its own address of the cluster (``localhost:port``) and connects to
every other: worker i connects to the workers before it and accepts the ones after it. What
protects a worker listening on a port:

* only 127.0.0.1: the listening socket is bound to the loopback address, so no other machine
  can reach it, and addresses that name another host are refused;
* only the cluster's workers, authenticated: each side proves it knows the run's secret token
  (a challenge and an HMAC of it; the token itself never crosses), and says which worker it is;
  a connection that fails is closed and written down, and the worker goes on waiting for its
  real peers;
* only data: every message is an array frame (``wire.py``), read with a size limit; a pickle,
  a malformed or oversized or truncated frame stops the run with an error that says so;
* every wait is bounded: a worker that never connects or stops sending is named in a
  ``WorkerTimeoutError``; one whose connection closes, in a ``WorkerLostError``.

One thread per peer reads its frames as they arrive into a queue, so ``send`` never waits for
the receiver to be ready (the ring's "everyone sends, then receives" needs that).
"""
import hashlib
import hmac
import queue
import secrets
import select
import socket
import threading
import time

import numpy as np

from . import wire
from .communicator import (Communicator, DistributedError, ProtocolError, WorkerLostError,
                           WorkerTimeoutError)

__all__ = ["SocketCommunicator", "send_array", "recv_array", "new_token", "LOCAL_HOSTS"]

LOCAL_HOSTS = ("localhost", "127.0.0.1")
_HANDSHAKE_BYTES = 1024                 # the limit for a frame before a peer is authenticated
_NONCE = 32


def new_token():
    """A fresh secret for one run: every worker of the run is given the same one."""
    return secrets.token_hex(16)


# ----------------------------------------------------------------------------- frames on a socket
def send_array(sock, array):
    """Write ``array`` as one frame (header, then raw bytes)."""
    header, data = wire.encode_header(array)
    sock.sendall(header)
    sock.sendall(data.reshape(-1).view(np.uint8))


def recv_array(sock, max_bytes, who, deadline=None):
    """Read one frame and return its array; refuse anything that is not one (``ProtocolError``).
    Returns None if the connection closes cleanly before a frame starts."""
    fixed = _read_exactly(sock, wire.FIXED.size, who, deadline, at_frame_start=True)
    if fixed is None:
        return None
    dims = _read_exactly(sock, wire.header_size(fixed, who), who, deadline)
    dtype, shape, nbytes = wire.parse_header(fixed + dims, max_bytes, who)
    array = np.empty(shape, dtype)
    into = memoryview(array.reshape(-1).view(np.uint8))        # the bytes land in the array
    _read_exactly(sock, nbytes, who, deadline, into=into)
    if fixed.startswith(wire.ABORT):
        raise WorkerLostError(f"{who} stopped: {array.tobytes().decode('utf-8', 'replace')}")
    return array.astype(dtype.newbyteorder("="), copy=False)


def _read_exactly(sock, n, who, deadline, into=None, at_frame_start=False):
    """n bytes from ``sock``, each wait bounded (by ``deadline``, else by the socket's
    timeout); None if the connection closes cleanly before a frame starts."""
    buffer = into if into is not None else memoryview(bytearray(n))
    got = 0
    while got < n:
        if deadline is not None:
            sock.settimeout(max(deadline - time.monotonic(), 1e-3))
        try:
            count = sock.recv_into(buffer[got:], n - got)
        except socket.timeout:
            raise WorkerTimeoutError(f"{who} sent {got} of {n} bytes, then nothing in "
                                     "time.") from None
        if count == 0:
            if at_frame_start and got == 0:
                return None
            raise ProtocolError(f"Truncated frame from {who}: the connection closed after {got} "
                                f"of {n} bytes.")
        got += count
    return None if into is not None else bytes(buffer)


# ----------------------------------------------------------------------------- the handshake
def _proof(token, purpose, nonce, rank):
    message = purpose + nonce + int(rank).to_bytes(8, "little")
    return hmac.new(token.encode(), message, hashlib.sha256).digest()


def _as_bytes(array, who):
    if array is None:
        raise WorkerLostError(f"{who} closed the connection during the handshake: it refused "
                              "us (a different run's token?), or it died.")
    if array.dtype != np.uint8 or array.ndim != 1:
        raise ProtocolError(f"Refused {who}: the handshake expects bytes.")
    return array.tobytes()


def _greet(sock, token, my_rank, peer_rank, deadline, who):
    """The connecting side: answer the challenge, prove our identity, check the other's."""
    challenge = _as_bytes(recv_array(sock, _HANDSHAKE_BYTES, who, deadline), who)
    mine = secrets.token_bytes(_NONCE)
    hello = int(my_rank).to_bytes(8, "little") + _proof(token, b"hello", challenge, my_rank) + mine
    send_array(sock, np.frombuffer(hello, np.uint8))
    answer = _as_bytes(recv_array(sock, _HANDSHAKE_BYTES, who, deadline), who)
    if not hmac.compare_digest(answer, _proof(token, b"welcome", mine, peer_rank)):
        raise ProtocolError(f"Refused {who}: it does not know this run's token.")


def _welcome(sock, token, my_rank, expected, deadline, who):
    """The accepting side: challenge the newcomer; return its rank if it proves it is one of
    the ``expected`` workers."""
    challenge = secrets.token_bytes(_NONCE)
    send_array(sock, np.frombuffer(challenge, np.uint8))
    hello = _as_bytes(recv_array(sock, _HANDSHAKE_BYTES, who, deadline), who)
    if len(hello) != 8 + 32 + _NONCE:
        raise ProtocolError(f"Refused {who}: a malformed hello.")
    rank = int.from_bytes(hello[:8], "little")
    if rank not in expected:
        raise ProtocolError(f"Refused {who}: it says it is worker {rank}, not one of the "
                            f"workers still expected ({sorted(expected)}).")
    if not hmac.compare_digest(hello[8:40], _proof(token, b"hello", challenge, rank)):
        raise ProtocolError(f"Refused {who}: it does not know this run's token.")
    send_array(sock, np.frombuffer(_proof(token, b"welcome", hello[40:], my_rank), np.uint8))
    return rank


def _split_address(address):
    host, _, port = address.rpartition(":")
    if host not in LOCAL_HOSTS or not port.isdigit():
        raise ValueError(f"The socket backend runs on this machine only (127.0.0.1), so each "
                         f"worker address must be 'localhost:PORT' or '127.0.0.1:PORT', not "
                         f"{address!r}. To train on several machines, use the MPI backend "
                         "(mpiexec -hosts a,b ...).")
    return "127.0.0.1", int(port)


# ----------------------------------------------------------------------------- the communicator
class _Peer:
    """A connection to one worker and the thread that reads its frames into a queue."""

    def __init__(self, sock, who, max_bytes):
        self.sock, self.who, self.inbox = sock, who, queue.Queue()
        self.failure = None                     # why the reader stopped (the peer's last words)
        self.reader = threading.Thread(target=self._read, args=(max_bytes,), daemon=True)
        self.reader.start()

    def _read(self, max_bytes):
        try:
            while True:
                select.select([self.sock], [], [])     # idle until a frame starts (or EOF)
                array = recv_array(self.sock, max_bytes, self.who)
                if array is None:
                    raise WorkerLostError(f"{self.who} closed its connection (it ended, or died)"
                                          f" while a message from it was expected.")
                self.inbox.put(array)
        except (OSError, ValueError, DistributedError) as error:
            if not isinstance(error, DistributedError):   # (ValueError: closed under select)
                error = WorkerLostError(f"The connection to {self.who} failed ({error}): did "
                                        "it die?")
            self.failure = error
            self.inbox.put(error)                 # raised by recv, in the training thread
            self.sock.close()


class SocketCommunicator(Communicator):
    """Worker ``rank`` of the cluster ``addresses`` (``["localhost:12345", ...]``), connected to
    all the others over 127.0.0.1 and authenticated with ``token``.

    ``timeout`` bounds connecting (all peers must be there within it) and every wait for a
    message; ``max_message_bytes`` bounds each message."""

    def __init__(self, addresses, rank, token, timeout=60.0, max_message_bytes=1 << 30):
        if not token or len(token) < 16:
            raise ValueError("The workers need a shared secret token of at least 16 "
                             "characters (eg.distribute.new_token() makes one).")
        self.addresses = [_split_address(a) for a in addresses]
        self.rank, self.size = rank, len(addresses)
        self.timeout, self.max_message_bytes = timeout, max_message_bytes
        self._names = list(addresses)
        self._peers, self.refused = {}, []
        deadline = time.monotonic() + timeout
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                listener.bind(self.addresses[rank])
            except OSError as error:
                raise DistributedError(f"Worker {rank} cannot listen on {addresses[rank]} "
                                       f"({error}): is another program using that port?") \
                    from None
            listener.listen(self.size)
            for peer in range(rank):
                self._connect(peer, token, deadline)
            self._accept(listener, token, deadline)
        except BaseException:
            self.close()
            raise
        finally:
            listener.close()

    def describe(self, rank):
        return f"worker {rank} ({self._names[rank]})"

    def _connect(self, peer, token, deadline):
        """Connect to an earlier worker, retrying while it starts up."""
        while True:
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                sock.connect(self.addresses[peer])
                _greet(sock, token, self.rank, peer, deadline, self.describe(peer))
                break
            except (ConnectionRefusedError, ConnectionResetError, socket.timeout,
                    WorkerTimeoutError) as error:
                sock.close()
                if time.monotonic() > deadline:
                    raise WorkerTimeoutError(
                        f"Worker {self.rank} could not reach {self.describe(peer)} within "
                        f"{self.timeout:g} s ({error}). Is it running? Every worker of the "
                        "cluster must be started.") from None
                time.sleep(0.05)
            except BaseException:
                sock.close()
                raise
        self._add_peer(peer, sock)

    def _accept(self, listener, token, deadline):
        """Accept the later workers; refuse (and note) anyone else."""
        expected = set(range(self.rank + 1, self.size))
        while expected:
            listener.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                sock, (host, port) = listener.accept()
            except socket.timeout:
                missing = ", ".join(self.describe(r) for r in sorted(expected))
                refused = f" Refused meanwhile: {' | '.join(self.refused)}" \
                    if self.refused else ""
                raise WorkerTimeoutError(f"Worker {self.rank}: {missing} did not connect "
                                         f"within {self.timeout:g} s. Is it running?"
                                         f"{refused}") from None
            who = f"a connection from {host}:{port}"
            try:
                if host != "127.0.0.1":
                    raise ProtocolError(f"Refused {who}: not from this machine.")
                # a stranger gets a few seconds, not the whole deadline, to prove itself
                rank = _welcome(sock, token, self.rank, expected,
                                min(deadline, time.monotonic() + 5.0), who)
            except (DistributedError, OSError) as error:
                self.refused.append(str(error))
                sock.close()
                continue
            expected.discard(rank)
            self._add_peer(rank, sock)

    def _add_peer(self, rank, sock):
        sock.settimeout(self.timeout)       # bounds each read inside a frame, and each send
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._peers[rank] = _Peer(sock, self.describe(rank), self.max_message_bytes)

    def send(self, array, dest):
        peer = self._peers[dest]
        try:
            send_array(peer.sock, array)
        except socket.timeout:
            raise WorkerTimeoutError(f"Worker {self.rank} could not send to {peer.who} within "
                                     f"{self.timeout:g} s: is it still running?") from None
        except OSError:
            peer.reader.join(1.0)                   # (it stops at the peer's last words)
            raise peer.failure or WorkerLostError(
                f"Worker {self.rank} could not send to {peer.who}: the connection is closed "
                "(did it die?).") from None

    def recv(self, source):
        peer = self._peers[source]
        try:
            item = peer.inbox.get(timeout=self.timeout)
        except queue.Empty:
            raise WorkerTimeoutError(f"Worker {self.rank} received nothing from {peer.who} "
                                     f"within {self.timeout:g} s: is it still running?") from None
        if isinstance(item, BaseException):
            peer.inbox.put(item)                # (every later recv from it fails the same way)
            raise item
        return item

    def abort(self, reason):
        """Tell every peer still connected why this worker stops (so that they can name the
        cause rather than this worker), then close."""
        header, data = wire.encode_abort(f"{reason}")
        for peer in self._peers.values():
            try:
                peer.sock.sendall(header + data.tobytes())
            except OSError:
                pass                            # (that peer is gone already)
        self.close()

    def close(self):
        for peer in self._peers.values():
            try:
                peer.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass                            # (already closed by the peer)
            peer.sock.close()
        for peer in self._peers.values():
            peer.reader.join(1.0)
        self._peers = {}
