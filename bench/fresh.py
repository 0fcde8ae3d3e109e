"""One contender of one ``bench_core.py`` workload, timed in this new process: the loop as a
student's fresh kernel runs it. ``bench_core.py`` starts it (its fresh table); by hand:

    python bench/fresh.py two_layer eager [repeat]

prints one line of JSON (seconds per step, page faults per step, peak memory). The process
imports what the benchmark imports (numpy, edugraph and PyTorch when installed, as a lesson that
compares them does) and builds only the contender it times: what runs before a loop in a
process, imports included, moves the C allocator's limits and with them the loop's time (see
``edugraph/allocator.py``).
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_core  # noqa: E402

workload, column = sys.argv[1], sys.argv[2]
repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 15
print(json.dumps(bench_core.fresh_child(workload, column, repeat)))
