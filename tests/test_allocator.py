"""edugraph/allocator.py: on glibc, the lecture's training step stops paying page faults in
a fresh process; glibc's own environment variables still decide when a user sets them."""
import json
import os
import subprocess
import sys
import textwrap

import edugraph as eg
from edugraph import allocator

# The lecture's two-layer step in a new process, as a student's fresh kernel runs it; prints
# whether edugraph set the limits and the page faults of each of its steps.
STEP = textwrap.dedent("""
    import json, resource
    import numpy as np
    import edugraph as eg
    rng = np.random.default_rng(0)
    x = eg.tensor(rng.standard_normal((64, 1000)).astype(np.float32))
    y = eg.tensor(rng.standard_normal((64, 1000)).astype(np.float32))
    w1 = eg.tensor((rng.standard_normal((1000, 100)) * 0.01).astype(np.float32),
                   requires_grad=True)
    w2 = eg.tensor((rng.standard_normal((100, 1000)) * 0.01).astype(np.float32),
                   requires_grad=True)
    faults = []
    for _ in range(30):
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        loss = eg.reduce_mean(eg.reduce_sum((eg.nn.relu(x @ w1) @ w2 - y) ** 2, axis=1))
        loss.backward()
        with eg.no_grad():
            for w in (w1, w2):
                w -= 1e-4 * w.grad
                w.grad = None
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    print(json.dumps([eg.allocator.kept_freed_memory, faults]))
""")


def run_step(**environment):
    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    env.update(OPENBLAS_NUM_THREADS="1", **environment)
    out = subprocess.run([sys.executable, "-c", STEP], env=env, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])


def test_limits_are_set_on_glibc_only():
    assert eg.allocator is allocator
    assert allocator.kept_freed_memory == allocator._on_glibc()


def test_a_fresh_training_step_pays_no_page_faults_per_step():
    kept, faults = run_step()
    if not allocator._on_glibc():           # (elsewhere nothing is set: nothing to measure)
        assert not kept
        return
    assert kept
    # the first steps fault their arrays in once; after that a step reuses the same memory
    # (with glibc's defaults: about 360 faults a step, each step's 1.4 MB handed back)
    assert sorted(faults[10:])[10] <= 5, faults


def test_glibcs_own_environment_variables_win():
    kept, faults = run_step(MALLOC_TRIM_THRESHOLD_="131072", MALLOC_MMAP_THRESHOLD_="131072")
    assert not kept
    if allocator._on_glibc():               # (they are in force: the step faults again)
        assert sorted(faults[10:])[10] > 100, faults
