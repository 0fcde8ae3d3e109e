"""The benchmark's contenders compute the same thing: a ratio between two programs that do
different work would be meaningless. (Times are not tested: see bench/bench_core.py.)"""
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import bench_core as bench  # noqa: E402


def values(result):
    """A contender's result as a flat list of float64 arrays."""
    if isinstance(result, (list, tuple)):
        return [v for r in result for v in values(r)]
    if hasattr(result, "detach"):
        result = result.detach().numpy()
    elif hasattr(result, "numpy"):
        result = result.numpy()
    return [np.asarray(result, np.float64)]


def contenders(kind, *data):
    found = {"numpy": None, "eager": getattr(bench, f"eager_{kind}")(*data),
             "session": getattr(bench, f"session_{kind}")(*data),
             "traced": getattr(bench, f"traced_{kind}")(*data)}
    if bench.torch is not None:
        found["torch"] = getattr(bench, f"torch_{kind}")(*data)
    return found


def test_tiny_graph_contenders_agree():
    data = bench.tiny_data()
    expected = values(bench.numpy_tiny(*data))
    for name, run in contenders("tiny", *data).items():
        if run is not None:
            for got, want in zip(values(run()), expected, strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=name)


def test_chain_contenders_agree():
    expected = values(bench.numpy_chain(100)())
    for name, run in contenders("chain", 100).items():
        if run is not None:
            np.testing.assert_allclose(values(run()), expected, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("steps", [3])
def test_two_layer_step_contenders_agree(steps):
    data = bench.two_layer_data(n=8, d=20, h=6)
    fresh = [[a.copy() for a in data] for _ in range(5)]
    numpy_losses = [float(bench.numpy_two_layer_step(*fresh[0], lr=1e-3)) for _ in range(steps)]
    runs = {"eager": bench.eager_two_layer_step(*fresh[1], lr=1e-3),
            "session": bench.session_two_layer_step(*fresh[2], lr=1e-3),
            "traced": bench.traced_two_layer_step(*fresh[3], lr=1e-3)}
    if bench.torch is not None:
        runs["torch"] = bench.torch_two_layer_step(*fresh[4], lr=1e-3)
    for name, run in runs.items():
        losses = [float(values(run())[0]) for _ in range(steps)]
        np.testing.assert_allclose(losses, numpy_losses, rtol=1e-4, err_msg=name)
    assert numpy_losses[-1] < numpy_losses[0]          # the steps really train


def test_lstm_step_contenders_agree():
    data = bench.lstm_data()
    expected = values(bench.numpy_lstm(*data)())
    for name, run in contenders("lstm", *data).items():
        if run is not None:
            for got, want in zip(values(run()), expected, strict=True):
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_floor_contenders_agree():
    """bench_floor.py's minimal autograd does the same work as the others (its figures are a
    floor for them only if it computes the same numbers)."""
    import bench_floor as floor
    data = bench.tiny_data()
    for got, want in zip(values(floor.minimal_tiny(*data)()), values(bench.numpy_tiny(*data)),
                         strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(values(floor.minimal_chain(100)()),
                               values(bench.numpy_chain(100)()), rtol=1e-6)


def test_every_workload_builds_each_contender_on_its_own():
    """A fresh process builds one contender of one workload (bench/fresh.py): each maker
    must stand alone, and its step must run."""
    for key, (_, makers, _, _) in bench.WORKLOADS.items():
        if key == "large":                          # (the same makers as "tiny", larger)
            continue
        for column, make in makers().items():
            if column != "torch" or bench.torch is not None:
                assert values(make()()), (key, column)


def test_a_fresh_process_reports_its_step():
    import json
    import subprocess
    script = Path(bench.__file__).with_name("fresh.py")
    out = subprocess.run([sys.executable, str(script), "tiny", "eager", "3"], check=True,
                         capture_output=True, text=True).stdout
    report = json.loads(out.splitlines()[-1])
    assert set(report) == {"seconds", "faults", "traced_peak", "rss_rise"}
    assert 0 < report["seconds"] < 0.1 and report["faults"] >= 0
    assert report["traced_peak"] > 3 * 4 * 4       # (at least the three (3, 4) gradients)
