"""Lesson 12's exercises: the reference answers pass, perturbed answers fail, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import time

import numpy as np
import pytest

import edugraph as eg
from edugraph.exercises.checking import find
from tests.exercise_lines import hint_of, line_of


# ------------------------------------------------------------------- the answers, by hand
def network_bytes(algorithm, num_workers, nbytes):
    n, s = num_workers, nbytes
    return {"all_to_all": n * (n - 1) * s,              # n workers, n - 1 arrays each
            "all_to_master": (n - 1) * s + (n - 1) * s,  # in, then the sums out
            "ring": n * (2 * (n - 1)) * (s / n)}[algorithm]   # 2(n-1) chunks of s/n


def my_ring_all_reduce(comm, array):
    n, r = comm.size, comm.rank
    out = np.array(array, dtype=float)
    pieces = np.array_split(out, n)
    for s in range(n - 1):
        comm.send(pieces[(r - s) % n], (r + 1) % n)
        pieces[(r - s - 1) % n] += comm.recv((r - 1) % n)
    for s in range(n - 1):
        comm.send(pieces[(r + 1 - s) % n], (r + 1) % n)
        pieces[(r - s) % n][:] = comm.recv((r - 1) % n)
    return out


def global_gradient(replica_gradients, part_sizes):
    weights = np.array(part_sizes, dtype=float) / np.sum(part_sizes)
    return np.tensordot(weights, np.array(replica_gradients), axes=1)


def stale_sgd(gradient, w0, lr, staleness, steps):
    w = np.empty(steps + 1)
    w[0] = w0
    for t in range(steps):
        w[t + 1] = w[t] - lr * gradient(w[max(t - staleness, 0)])
    return w


SOLUTIONS = {
    "12.1": {"network_bytes": network_bytes},
    "12.2": {"my_ring_all_reduce": my_ring_all_reduce},
    "12.3": {"global_gradient": global_gradient},
    "12.4": {"stale_sgd": stale_sgd},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


def test_the_exercises_are_cheap():
    start = time.perf_counter()
    for exercise_id, answer in SOLUTIONS.items():
        find(exercise_id).verify(answer)
    assert time.perf_counter() - start < 5


# ------------------------------------------------------------------------------------- 12.1
def test_12_1_a_nudged_count_fails_and_each_algorithm_is_diagnosed_on_its_own():
    def nudged(algorithm, num_workers, nbytes):
        return network_bytes(algorithm, num_workers, nbytes) * 1.01
    assert line_of("12.1", {"network_bytes": nudged}).startswith("✗ 12.1: not right yet")

    def two_wrong(algorithm, num_workers, nbytes):        # one worker's share, twice
        if algorithm == "ring":
            return 2 * (num_workers - 1) / num_workers * nbytes
        return network_bytes(algorithm, num_workers, nbytes) / num_workers \
            if algorithm == "all_to_all" else network_bytes(algorithm, num_workers, nbytes)
    assert line_of("12.1", {"network_bytes": two_wrong}) == \
        hint_of("12.1", "all_to_all: (N − 1)·S is what ONE worker")


def test_12_1_odd_returns_and_errors_in_the_students_code_get_one_line():
    def words(algorithm, num_workers, nbytes):
        return "2(N-1)S"
    assert line_of("12.1", {"network_bytes": words}).startswith(
        "✗ 12.1: network_bytes('all_to_all', 2, 6720) is text")

    def no_return(algorithm, num_workers, nbytes):
        2 * (num_workers - 1) * nbytes
    assert line_of("12.1", {"network_bytes": no_return}) == (
        "✗ 12.1: network_bytes('all_to_all', 2, 6720) returned None: no `return` line ran "
        "(is it missing, or does an `if` leave this case out?).")

    def only_ring(algorithm, num_workers, nbytes):
        if algorithm == "ring":
            return 2 * (num_workers - 1) * nbytes
        raise ValueError(f"unknown algorithm {algorithm!r}")
    line = line_of("12.1", {"network_bytes": only_ring})
    assert line.startswith("✗ 12.1: running your answer raised ValueError: unknown algorithm "
                           "'all_to_all' (in only_ring, line")


# ------------------------------------------------------------------------------------- 12.2
def test_12_2_a_slightly_wrong_sum_fails():
    def off(comm, array):
        return my_ring_all_reduce(comm, array) + 1e-3
    assert line_of("12.2", {"my_ring_all_reduce": off}).startswith("✗ 12.2: not right yet")


def test_12_2_the_frameworks_ring_passes_and_sends_what_ours_sends():
    def framework(comm, array):
        return eg.distribute.ring_all_reduce(comm, array)[0]
    assert line_of("12.2", {"my_ring_all_reduce": framework}).startswith("✓ 12.2")


def test_12_2_a_ring_that_numbers_its_chunks_otherwise_passes():
    """Which chunk a worker sends first is a numbering: shifted by one, it is still a ring."""
    def shifted(comm, array):
        n, r = comm.size, comm.rank
        total = np.array(array, copy=True)
        chunks = np.array_split(total, n)
        for s in range(n - 1):
            comm.send(chunks[(r - s - 1) % n], (r + 1) % n)
            chunks[(r - s - 2) % n] += comm.recv((r - 1) % n)
        for s in range(n - 1):
            comm.send(chunks[(r - s) % n], (r + 1) % n)
            chunks[(r - s - 1) % n][...] = comm.recv((r - 1) % n)
        return total

    assert line_of("12.2", {"my_ring_all_reduce": shifted}).startswith("✓ 12.2")


def test_12_2_workers_that_receive_first_are_stopped_and_told_why():
    def receives_first(comm, array):
        n, r = comm.size, comm.rank
        total = np.array(array, copy=True)
        chunks = np.array_split(total, n)
        for s in range(n - 1):
            chunks[(r - s - 1) % n] += comm.recv((r - 1) % n)    # everyone waits...
            comm.send(chunks[(r - s) % n], (r + 1) % n)          # ...for nobody
        return total

    start = time.perf_counter()
    line = line_of("12.2", {"my_ring_all_reduce": receives_first})
    assert time.perf_counter() - start < 15
    assert line.startswith("✗ 12.2: the workers waited for each other in vain: worker ")
    assert "received nothing from worker" in line
    assert line.endswith("Does every worker send before it receives? A send returns at once, "
                         "a recv waits for the neighbour's send.")


def test_12_2_returning_a_pair_or_the_chunks_is_explained():
    def pair(comm, array):
        return eg.distribute.ring_all_reduce(comm, array)
    assert line_of("12.2", {"my_ring_all_reduce": pair}) == (
        "✗ 12.2: my_ring_all_reduce(comm, array) should return only the summed array, not a "
        "pair (the messages are counted by the check).")

    def chunks(comm, array):
        total = eg.distribute.ring_all_reduce(comm, array)[0]
        return np.array_split(total, comm.size)
    assert line_of("12.2", {"my_ring_all_reduce": chunks}) == (
        "✗ 12.2: my_ring_all_reduce(comm, array) returned a list of 2 arrays: return the whole "
        "array the chunks are views of, not the chunks.")

    def one_chunk(comm, array):
        total = eg.distribute.ring_all_reduce(comm, array)[0]
        return np.array_split(total, comm.size)[(comm.rank + 1) % comm.size]
    assert line_of("12.2", {"my_ring_all_reduce": one_chunk}).startswith(
        "✗ 12.2: my_ring_all_reduce(comm, array) should return the whole summed array, shape "
        "(6,) here; it returned a numpy array of shape (3,).")


def test_12_2_rebinding_a_chunk_in_the_scatter_reduce_is_seen_too():
    def rebinds(comm, array):
        n, r = comm.size, comm.rank
        total = np.array(array, copy=True)
        chunks = np.array_split(total, n)
        for s in range(n - 1):
            comm.send(chunks[(r - s) % n], (r + 1) % n)
            i = (r - s - 1) % n
            chunks[i] = chunks[i] + comm.recv((r - 1) % n)     # a new array
        for s in range(n - 1):
            comm.send(chunks[(r + 1 - s) % n], (r + 1) % n)
            chunks[(r - s) % n][...] = comm.recv((r - 1) % n)
        return total
    assert line_of("12.2", {"my_ring_all_reduce": rebinds}) == \
        hint_of("12.2", "`chunks[i] = ...` replaces an entry")


def test_12_2_an_error_in_one_worker_names_the_students_line():
    def typo(comm, array):
        comm.send(array, comm.rank + 1)        # the last worker has no rank + 1
        return array
    line = line_of("12.2", {"my_ring_all_reduce": typo})
    assert line.startswith("✗ 12.2: running your answer raised IndexError")
    assert "(in typo, line" in line


# ------------------------------------------------------------------------------------- 12.3
def test_12_3_a_nudged_gradient_fails_and_the_mean_of_busy_replicas_is_averaging():
    def nudged(replica_gradients, part_sizes):
        return global_gradient(replica_gradients, part_sizes) * 1.01
    assert line_of("12.3", {"global_gradient": nudged}).startswith("✗ 12.3: not right yet")

    def mean_of_busy(replica_gradients, part_sizes):
        busy = [g for g, n in zip(replica_gradients, part_sizes) if n]
        return np.mean(busy, axis=0)
    assert line_of("12.3", {"global_gradient": mean_of_busy}) == \
        hint_of("12.3", "you averaged the replicas' gradients")


def test_12_3_weighted_but_not_summed_is_a_shape_hint():
    def not_summed(replica_gradients, part_sizes):
        total = sum(part_sizes)
        return [n / total * g for n, g in zip(part_sizes, replica_gradients)]
    assert line_of("12.3", {"global_gradient": not_summed}) == (
        "✗ 12.3: global_gradient(replica_gradients, [4, 3, 3]) should return one array of the "
        "gradients' shape (3, 2); it returned a list of 3 items. Combine the replicas' "
        "gradients into one.")


def test_12_3_an_answer_that_changes_the_replicas_arrays_still_passes_on_fresh_copies():
    def in_place(replica_gradients, part_sizes):
        total = sum(part_sizes)
        for g, n in zip(replica_gradients, part_sizes):
            g *= n / total
        return sum(replica_gradients)
    assert line_of("12.3", {"global_gradient": in_place}).startswith("✓ 12.3")


# ------------------------------------------------------------------------------------- 12.4
def test_12_4_a_nudged_rate_fails():
    def nudged(gradient, w0, lr, staleness, steps):
        return stale_sgd(gradient, w0, lr * 1.01, staleness, steps)
    assert line_of("12.4", {"stale_sgd": nudged}).startswith("✗ 12.4: not right yet")


def test_12_4_a_negative_index_and_a_missing_w0_are_explained():
    def negative_index(gradient, w0, lr, staleness, steps):
        history = [w0]
        for t in range(steps):
            history.append(history[-1] - lr * gradient(history[t - staleness]))
        return history
    hint = ("raised IndexError: it read a weight the list does not hold. Update t (counting "
            "from 0) uses the weight after max(0, t − staleness) updates: w0 while t − "
            "staleness is negative, and never one after t updates, which is not computed yet.")
    assert line_of("12.4", {"stale_sgd": negative_index}) == (
        "✗ 12.4: stale_sgd(gradient of (w − 3)²/2, 0.0, 0.3, 3, 12) " + hint)

    def index_past_t(gradient, w0, lr, staleness, steps):      # max(0, ...) right, + 1 wrong
        history = [w0]
        for t in range(steps):
            history.append(history[-1] - lr * gradient(history[max(0, t - staleness + 1)]))
        return history
    assert line_of("12.4", {"stale_sgd": index_past_t}).endswith(hint)

    def without_w0(gradient, w0, lr, staleness, steps):
        return list(stale_sgd(gradient, w0, lr, staleness, steps))[1:]
    assert line_of("12.4", {"stale_sgd": without_w0}) == (
        "✗ 12.4: stale_sgd(gradient of (w − 3)²/2, 0.0, 0.3, 0, 12) returned 12 weights; "
        "return 13, starting with w0 (the weight after 0 updates).")


def test_12_4_only_the_last_weight_is_a_form_hint():
    def last_only(gradient, w0, lr, staleness, steps):
        return stale_sgd(gradient, w0, lr, staleness, steps)[-1]
    assert line_of("12.4", {"stale_sgd": last_only}).startswith(
        "✗ 12.4: stale_sgd(gradient of (w − 3)²/2, 0.0, 0.3, 0, 12) should return a list of "
        "13 numbers")
