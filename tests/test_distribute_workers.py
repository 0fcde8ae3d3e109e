"""eg.distribute between processes: the array frames (data only, never pickle), the socket
backend's authentication and time limits, 3 real worker processes from TF_CONFIG against the
in-process MirroredStrategy, a worker that dies, torch.distributed's gloo as a reference, and
the same training under mpiexec against MPI's own Allreduce."""
import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import edugraph as eg
from edugraph.distribute import sockets, wire
from edugraph.distribute.multi_worker import _free_ports
from tests.distribute_worker import build_model, dataset

D = eg.distribute
WORKER = Path(__file__).with_name("distribute_worker.py")


# ----------------------------------------------------------------------------- frames
ARRAYS = {"float64 2-D": np.arange(6.0).reshape(2, 3), "float32 0-D": np.float32(2.5) * np.ones(()),
          "int64": np.arange(5, dtype=np.int64), "empty": np.zeros((0, 4)),
          "bytes": np.frombuffer(b"bytes", np.uint8)}


@pytest.mark.parametrize("name", ARRAYS)
def test_an_array_crosses_a_socket_as_header_and_raw_bytes(name):
    array = ARRAYS[name]
    a, b = socket.socketpair()
    with a, b:
        sockets.send_array(a, array)
        got = sockets.recv_array(b, 1 << 20, "the test")
    assert got.dtype == array.dtype and got.shape == array.shape
    np.testing.assert_array_equal(got, array)


def test_frames_refuse_pickles_truncation_oversize_and_strange_headers():
    def read(raw, max_bytes=1 << 20):
        a, b = socket.socketpair()
        with a, b:
            a.sendall(raw)
            a.shutdown(socket.SHUT_WR)
            return sockets.recv_array(b, max_bytes, "worker 1")

    with pytest.raises(D.ProtocolError, match="worker 1.*not an edugraph array frame.*pickle"):
        read(pickle.dumps(np.ones(3)))
    header, data = wire.encode_header(np.ones(1000))
    with pytest.raises(D.ProtocolError, match="Truncated frame from worker 1.*100 of 8000"):
        read(header + data.tobytes()[:100])
    with pytest.raises(D.ProtocolError, match=r"shape \(1000,\).*over the 4000-byte limit"):
        read(header, max_bytes=4000)                 # refused before reading (or allocating)
    huge = wire.FIXED.pack(wire.MAGIC, 1, 2) + (2 ** 62).to_bytes(8, "little") * 2
    with pytest.raises(D.ProtocolError, match="over the"):
        read(huge)
    with pytest.raises(D.ProtocolError, match="unknown dtype code 99"):
        read(wire.FIXED.pack(wire.MAGIC, 99, 1))
    with pytest.raises(D.ProtocolError, match="40 dimensions"):
        read(wire.FIXED.pack(wire.MAGIC, 1, 40))
    with pytest.raises(TypeError, match="cast it first"):
        wire.encode_header(np.array(["text"]))
    header, data = wire.encode_abort("worker 2 died")       # a worker's last words
    with pytest.raises(D.WorkerLostError, match="worker 1 stopped: worker 2 died"):
        read(header + data.tobytes())


# ----------------------------------------------------------------------------- the socket backend
def cluster(n):
    return [f"localhost:{port}" for port in _free_ports(n)]


def in_threads(*functions):
    """Run the functions at once; return what each returned or raised."""
    results = [None] * len(functions)

    def run(i):
        try:
            results[i] = functions[i]()
        except Exception as error:            # (what the test looks at)
            results[i] = error
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(functions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    return results


def test_a_worker_that_never_connects_is_named_within_the_timeout():
    addresses, token = cluster(3), D.new_token()
    start = time.monotonic()
    errors = in_threads(*[lambda rank=rank: D.SocketCommunicator(addresses, rank, token, 1.5)
                          for rank in (0, 1)])
    assert time.monotonic() - start < 10
    assert isinstance(errors[0], D.WorkerTimeoutError)
    assert f"worker 2 ({addresses[2]}) did not connect within 1.5 s" in str(errors[0])
    assert isinstance(errors[1], D.WorkerTimeoutError)
    assert f"worker 2 ({addresses[2]})" in str(errors[1])


def stranger(address, payload, token=None):
    """Connect to a listening worker and send ``payload`` (after proving ``token`` when
    given, as worker 1 would); return the socket, still open."""
    sock = socket.create_connection(("127.0.0.1", int(address.split(":")[1])), timeout=10)
    if token is not None:
        sockets._greet(sock, token, 1, 0, time.monotonic() + 10, "worker 0")
    sock.sendall(payload)
    return sock


def wait_for_listener(address):
    port = int(address.split(":")[1])
    for _ in range(200):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)


def test_a_listening_worker_refuses_strangers_and_waits_for_its_peer():
    addresses, token, errors = cluster(2), D.new_token(), []
    worker = threading.Thread(target=lambda: errors.append(_catch(
        lambda: D.SocketCommunicator(addresses, 0, token, 2.0))))
    worker.start()
    wait_for_listener(addresses[0])          # (the probe is refused as a stranger, too)
    pickled = stranger(addresses[0], pickle.dumps({"run": "os.system"}))
    wrong_token = socket.create_connection(("127.0.0.1", int(addresses[0].split(":")[1])))
    with pytest.raises(D.WorkerLostError, match="refused us .a different run's token"):
        sockets._greet(wrong_token, D.new_token(), 1, 0, time.monotonic() + 5, "worker 0")
    worker.join(10)
    pickled.close()
    wrong_token.close()
    message = str(errors[0])
    assert isinstance(errors[0], D.WorkerTimeoutError)
    assert f"worker 1 ({addresses[1]}) did not connect" in message
    assert "It starts like a Python pickle" in message
    assert "does not know this run's token" in message


def _catch(function):
    try:
        return function()
    except Exception as error:
        return error


BAD_FRAMES = {
    "a pickle": (pickle.dumps(np.ones(3)), "not an edugraph array frame.*pickle"),
    "a truncated frame": (wire.encode_header(np.ones(1000))[0] + b"\0" * 100,
                          "Truncated frame.*100 of 8000"),
}


@pytest.mark.parametrize("bad_frame", BAD_FRAMES)
def test_an_authenticated_peer_sending_a_bad_frame_stops_the_run(bad_frame):
    payload, refusal = BAD_FRAMES[bad_frame]
    addresses, token = cluster(2), D.new_token()
    result = []
    worker = threading.Thread(target=lambda: result.append(_catch(
        lambda: D.SocketCommunicator(addresses, 0, token, 5.0))))
    worker.start()
    wait_for_listener(addresses[0])
    peer = stranger(addresses[0], payload, token=token)
    worker.join(10)
    comm = result[0]
    try:
        peer.close()                          # (a truncated frame ends with the connection)
        with pytest.raises(D.ProtocolError, match=refusal):
            comm.recv(1)
    finally:
        comm.close()


def test_addresses_must_be_on_this_machine_and_tf_config_is_checked():
    with pytest.raises(ValueError, match="this machine only.*MPI backend"):
        D.SocketCommunicator(["10.0.0.7:2222", "localhost:2223"], 0, D.new_token())
    with pytest.raises(ValueError, match="at least 16 characters"):
        D.SocketCommunicator(["localhost:2222"], 0, "secret")
    spec = {"cluster": {"worker": ["localhost:12345", "localhost:23456"]},
            "task": {"type": "worker", "index": 1}}
    assert D.cluster_from_tf_config(json.dumps(spec)) == \
        (["localhost:12345", "localhost:23456"], 1)
    with pytest.raises(ValueError, match=r"index': i\} with i in 0..1"):
        D.cluster_from_tf_config(json.dumps({**spec, "task": {"type": "worker", "index": 2}}))
    with pytest.raises(ValueError, match=r"\['ps'\].*workers only"):
        D.cluster_from_tf_config(json.dumps({**spec, "cluster": {**spec["cluster"],
                                                                  "ps": ["localhost:1"]}}))
    with pytest.raises(ValueError, match="not valid JSON"):
        D.cluster_from_tf_config("{cluster")


def test_without_tf_config_or_token_the_strategy_says_what_is_missing(monkeypatch):
    for name in ("TF_CONFIG", D.TOKEN_VARIABLE, "PMI_RANK", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="set TF_CONFIG.*or start the script with mpiexec"):
        D.MultiWorkerMirroredStrategy()
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"worker": ["localhost:1"]},
                                                "task": {"type": "worker", "index": 0}}))
    with pytest.raises(ValueError, match=f"{D.TOKEN_VARIABLE} is not"):
        D.MultiWorkerMirroredStrategy()


# ----------------------------------------------------------------------------- real processes
def in_process_reference(num_replicas):
    strategy = D.MirroredStrategy([f"cpu:{k}" for k in range(num_replicas)])
    with strategy.scope():
        model = build_model()
    history = model.fit(dataset(num_replicas), epochs=2, verbose=0)
    return [v.numpy() for v in model.variables], history.history["loss"]


def check_workers_match_the_reference(out_dir, num_workers):
    weights, losses = in_process_reference(num_workers)
    workers = [np.load(out_dir / f"worker_{rank}.npz") for rank in range(num_workers)]
    total = np.sum([w["values"] for w in workers], axis=0)
    for worker in workers:
        for i, expected in enumerate(weights):
            np.testing.assert_allclose(worker[f"weight_{i}"], expected, rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(worker["loss"], losses, rtol=1e-12)
        np.testing.assert_allclose(worker["ring"], total, rtol=1e-13, atol=1e-14)
    return workers


@pytest.mark.timeout(180)
def test_three_worker_processes_from_tf_config_end_with_the_in_process_weights(tmp_path):
    start = time.monotonic()
    results = D.launch(WORKER, num_workers=3, args=[tmp_path, "--timeout", "60"], timeout=150)
    print(f"3 worker processes: {time.monotonic() - start:.1f} s")
    assert [r.returncode for r in results] == [0, 0, 0]
    check_workers_match_the_reference(tmp_path, 3)


@pytest.mark.timeout(180)
def test_a_worker_that_dies_makes_the_others_fail_naming_it(tmp_path):
    start = time.monotonic()
    with pytest.raises(D.WorkerFailedError) as failure:
        D.launch(WORKER, num_workers=3, timeout=150,
                 args=[tmp_path, "--timeout", "60", "--die-at-step", "1"])
    elapsed = time.monotonic() - start
    results = failure.value.results
    assert results[2].returncode == 3                          # the crash
    for survivor in results[:2]:                               # fail, naming worker 2, at once
        assert survivor.returncode == 1
        last_line = survivor.stderr.strip().splitlines()[-1]
        assert "WorkerLostError" in last_line and "worker 2 (localhost:" in last_line
    assert elapsed < 60                                        # not by waiting for the timeout
    assert not list(tmp_path.iterdir())


@pytest.mark.torch
def test_the_ring_over_sockets_sums_as_torch_distributed_gloo(monkeypatch):
    torch = pytest.importorskip("torch")
    dist = pytest.importorskip("torch.distributed")
    if not dist.is_available():
        pytest.skip("this torch has no torch.distributed")
    monkeypatch.setenv("GLOO_SOCKET_IFNAME", "lo")               # gloo on 127.0.0.1 too
    import datetime
    n, addresses, token = 3, cluster(3), D.new_token()
    values = [np.random.default_rng(rank).normal(size=1001) for rank in range(n)]
    store = dist.HashStore()

    def ours(rank):
        with D.SocketCommunicator(addresses, rank, token, 20.0) as comm:
            return D.ring_all_reduce(comm, values[rank])[0]

    def gloo(rank):
        group = dist.ProcessGroupGloo(store, rank, n, datetime.timedelta(seconds=20))
        tensor = torch.from_numpy(values[rank].copy())
        group.allreduce([tensor]).wait()
        return tensor.numpy()

    rings = in_threads(*[lambda r=r: ours(r) for r in range(n)])
    gloos = in_threads(*[lambda r=r: gloo(r) for r in range(n)])
    for ring, reference in zip(rings, gloos):
        np.testing.assert_allclose(ring, reference, rtol=1e-13, atol=1e-14)
        np.testing.assert_allclose(ring, np.sum(values, axis=0), rtol=1e-13, atol=1e-14)


@pytest.mark.timeout(180)
def test_mpiexec_trains_the_same_and_mpis_allreduce_agrees_with_our_ring(tmp_path):
    pytest.importorskip("mpi4py", reason="the MPI backend: pip install -e '.[dist]'")
    mpiexec = shutil.which("mpiexec", path=os.pathsep.join(
        [str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    if mpiexec is None:
        pytest.skip("mpi4py without mpiexec: pip install mpich")
    environ = {k: v for k, v in os.environ.items() if k not in ("TF_CONFIG", D.TOKEN_VARIABLE)}
    start = time.monotonic()
    process = subprocess.Popen([mpiexec, "-n", "3", sys.executable, str(WORKER), str(tmp_path),
                                "--timeout", "60"], env=environ, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        output, _ = process.communicate(timeout=150)
    finally:
        if process.poll() is None:                 # mpiexec and every worker it started
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    print(f"mpiexec -n 3: {time.monotonic() - start:.1f} s")
    assert process.returncode == 0, output
    for worker in check_workers_match_the_reference(tmp_path, 3):
        np.testing.assert_allclose(worker["mpi"], worker["ring"], rtol=1e-13, atol=1e-14)
