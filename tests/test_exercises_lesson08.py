"""Lesson 8's exercises: the reference answers pass, perturbed answers fail, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import numpy as np
import pytest

import edugraph as eg
from tests.exercise_lines import hint_of, line_of


# ------------------------------------------------------------------- the answers, by hand
def training_batches(ds, batch_size, num_epochs):
    return ds.shuffle(ds.cardinality(), seed=0).batch(batch_size).repeat(num_epochs)


def epoch_times(step_ms, batch_size=16, load_ms=4, workers=4, num_examples=96):
    steps = num_examples // batch_size
    batch = batch_size * load_ms
    fast = batch / workers
    return {"fast_serial_ms": steps * (batch + step_ms),
            "fast_parallel_ms": steps * (fast + step_ms),
            "fast_prefetch_ms": max(steps * batch + step_ms, batch + steps * step_ms),
            "fast_both_ms": max(steps * fast + step_ms, fast + steps * step_ms)}


def split_validation(ds, num_val):
    fixed = ds.shuffle(ds.cardinality(), seed=0, reshuffle_each_iteration=False)
    return fixed.skip(num_val).shuffle(ds.cardinality(), seed=1), fixed.take(num_val)


def prepare_batch(images, labels):
    images = eg.cast(images, "float32")
    images = images / eg.reduce_max(images, axis=(1, 2), keepdims=True)
    return eg.reshape(images, (-1, 64)), labels


SOLUTIONS = {
    "8.1": {"training_batches": training_batches},
    "8.2": {**epoch_times(step_ms=10), "fast_helps_more": "parallel map"},
    "8.3": {"split_validation": split_validation},
    "8.4": {"prepare_batch": prepare_batch},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


# ------------------------------------------------------------------------------ 8.1
def test_8_1_other_right_pipelines_pass():
    """Any buffer at least the dataset's size is the same uniform shuffle; a prefetch at the
    end changes nothing that comes out."""
    variants = [
        lambda ds, b, k: ds.shuffle(1000, seed=0).batch(b).repeat(k),
        lambda ds, b, k: ds.shuffle(len(ds), seed=0).batch(b).repeat(k).prefetch(2),
    ]
    for variant in variants:
        assert line_of("8.1", {"training_batches": variant}).startswith("✓ 8.1")


def test_8_1_another_seed_fails_and_says_which_seed():
    line = line_of("8.1", {"training_batches":
                           lambda ds, b, k: ds.shuffle(len(ds), seed=7).batch(b).repeat(k)})
    assert line.startswith("✗ 8.1: not right yet.") and "seed=0" in line


def test_8_1_batch_repeat_without_shuffle_asks_for_the_shuffle_first():
    line = line_of("8.1", {"training_batches": lambda ds, b, k: ds.repeat(k).batch(b)})
    assert line == hint_of("8.1", "the elements keep their stored order")


def test_8_1_repeat_batch_shuffle_mixes_the_epochs():
    line = line_of("8.1", {"training_batches":
                           lambda ds, b, k: ds.repeat(k).batch(b).shuffle(100, seed=0)})
    assert line == hint_of("8.1", "an element comes back")


def test_8_1_a_pipeline_that_is_not_a_dataset_gets_one_line():
    def as_a_list(ds, batch_size, num_epochs):
        return list(training_batches(ds, batch_size, num_epochs))

    assert line_of("8.1", {"training_batches": as_a_list}).startswith(
        "✗ 8.1: training_batches(ds, batch_size, num_epochs) should return a Dataset")

    def forgot_return(ds, batch_size, num_epochs):
        training_batches(ds, batch_size, num_epochs)

    assert line_of("8.1", {"training_batches": forgot_return}).endswith(
        "it returned a NoneType (None) (did you forget `return`?).")


def test_8_1_a_shuffle_of_an_endless_dataset_names_the_students_line():
    def training_batches(ds, batch_size, num_epochs):
        return ds.repeat().shuffle(ds.repeat().cardinality(), seed=0).batch(batch_size)

    line = line_of("8.1", {"training_batches": training_batches})
    assert line.startswith("✗ 8.1: running your answer raised ValueError: shuffle needs a "
                           "buffer of at least 1 element, got -1")
    assert "(in training_batches, line" in line


# ------------------------------------------------------------------------------ 8.2
def test_8_2_a_nudged_time_fails_and_the_others_are_named_right():
    for name in ("fast_serial_ms", "fast_parallel_ms", "fast_prefetch_ms", "fast_both_ms"):
        nudged = {**SOLUTIONS["8.2"], name: SOLUTIONS["8.2"][name] + 3}
        line = line_of("8.2", nudged)
        assert line.startswith("✗ 8.2: not right yet") and f"{name} is not" in line, line


def test_8_2_times_rounded_to_whole_milliseconds_pass():
    rounded = {**SOLUTIONS["8.2"], "fast_both_ms": np.float32(106.4),
               "fast_serial_ms": eg.tensor(444.0)}
    assert line_of("8.2", rounded).startswith("✓ 8.2")


def test_8_2_the_lessons_branch_of_the_max_for_prefetch_alone_is_seen():
    """prefetch with the lesson's reasoning: 'training sets the pace' (it no longer does)."""
    wrong = {**SOLUTIONS["8.2"], "fast_prefetch_ms": 16 * 4 + 6 * 10}
    assert line_of("8.2", wrong) == hint_of("8.2", "with 10 ms steps, loading a batch")


def test_8_2_summing_with_both_is_seen():
    wrong = {**SOLUTIONS["8.2"], "fast_both_ms": 6 * (16 + 10)}
    assert line_of("8.2", wrong) == hint_of("8.2", "with prefetch, loading the next batch")


def test_8_2_a_near_miss_of_the_option_gets_the_options():
    line = line_of("8.2", {**SOLUTIONS["8.2"], "fast_helps_more": "parallel"})
    assert line == ("✗ 8.2: fast_helps_more should be 'prefetch' or 'parallel map'; it is a "
                    "str ('parallel').")


# ------------------------------------------------------------------------------ 8.3
def test_8_3_other_right_splits_pass():
    def from_the_end(ds, num_val):
        size = len(ds)
        fixed = ds.shuffle(size, seed=3, reshuffle_each_iteration=False)
        return fixed.take(size - num_val).shuffle(size, seed=4), fixed.skip(size - num_val)

    def as_a_list(ds, num_val):
        return list(split_validation(ds, num_val))

    for split in (from_the_end, as_a_list):
        assert line_of("8.3", {"split_validation": split}).startswith("✓ 8.3")


def test_8_3_a_right_split_passes_whatever_its_seeds():
    """The check's 'drawn from all the data' test cannot fail a uniform shuffle by chance."""
    def split_with(seed):
        def split(ds, num_val):
            fixed = ds.shuffle(len(ds), seed=seed, reshuffle_each_iteration=False)
            return fixed.skip(num_val).shuffle(len(ds), seed=seed + 1), fixed.take(num_val)
        return split

    for seed in range(1, 11):
        assert line_of("8.3", {"split_validation": split_with(seed)}).startswith("✓ 8.3")


def test_8_3_a_training_part_shuffled_without_a_seed_passes():
    """The prompt asks for the same split on every run, not for the same training order."""
    def unseeded_training_order(ds, num_val):
        fixed = ds.shuffle(len(ds), seed=0, reshuffle_each_iteration=False)
        return fixed.skip(num_val).shuffle(len(ds)), fixed.take(num_val)

    assert line_of("8.3", {"split_validation": unseeded_training_order}).startswith("✓ 8.3")


def test_8_3_take_and_skip_with_different_counts_are_seen_both_ways():
    def skips_one_more(ds, num_val):
        fixed = ds.shuffle(len(ds), seed=0, reshuffle_each_iteration=False)
        return fixed.skip(num_val + 1).shuffle(len(ds), seed=1), fixed.take(num_val)

    def takes_one_more(ds, num_val):
        fixed = ds.shuffle(len(ds), seed=0, reshuffle_each_iteration=False)
        return fixed.skip(num_val).shuffle(len(ds), seed=1), fixed.take(num_val + 1)

    for split in (skips_one_more, takes_one_more):
        assert line_of("8.3", {"split_validation": split}) == \
            hint_of("8.3", "the parts have the wrong sizes")


def test_8_3_a_reshuffling_split_without_a_seed_is_told_about_the_overlap_first():
    def split(ds, num_val):
        shuffled = ds.shuffle(len(ds))
        return shuffled.skip(num_val), shuffled.take(num_val)

    assert line_of("8.3", {"split_validation": split}) == \
        hint_of("8.3", "the validation set changes from pass to pass")


def test_8_3_batched_parts_and_a_single_dataset_get_one_line():
    def batched(ds, num_val):
        train, validation = split_validation(ds, num_val)
        return train.batch(4), validation.batch(4)

    assert line_of("8.3", {"split_validation": batched}) == (
        "✗ 8.3: the validation part should hold single elements, as ds does (batch later, "
        "in the training pipeline).")
    assert line_of("8.3", {"split_validation": lambda ds, n: ds.skip(n)}).startswith(
        "✗ 8.3: split_validation(ds, num_val) should return a pair of datasets, "
        "(train, validation); it returned")


# ------------------------------------------------------------------------------ 8.4
def test_8_4_a_perturbed_scale_fails():
    def brighter(images, labels):
        images, labels = prepare_batch(images, labels)
        return images * 1.001, labels

    assert line_of("8.4", {"prepare_batch": brighter}).startswith("✗ 8.4: not right yet")


def test_8_4_the_unchanged_per_example_map_names_the_students_line():
    def prepare_batch(image, label):
        image = eg.cast(image, "float32")
        image = image / eg.reduce_max(image)
        return eg.reshape(image, (64,)), label

    line = line_of("8.4", {"prepare_batch": prepare_batch})
    assert line.startswith("✗ 8.4: running your answer raised ShapeError: reshape: cannot "
                           "reshape a tensor of shape (8, 8, 8)")
    assert "(in prepare_batch, line " in line
    assert line.endswith(": return eg.reshape(image, (64,)), label)")


def test_8_4_a_hard_coded_batch_size_in_another_place_is_seen():
    def prepare_batch(images, labels):
        images = eg.cast(images, "float32")
        brightest = eg.reshape(eg.reduce_max(images, axis=(1, 2)), (8, 1, 1))
        return eg.reshape(images / brightest, (-1, 64)), labels

    assert line_of("8.4", {"prepare_batch": prepare_batch}) == \
        hint_of("8.4", "prepare_batch works on the first batch")


def test_8_4_returning_the_images_alone_is_explained():
    def images_only(images, labels):
        return prepare_batch(images, labels)[0]

    assert line_of("8.4", {"prepare_batch": images_only}) == (
        "✗ 8.4: prepare_batch should return the pair (images, labels) as a tuple, `return "
        "images, labels`, as prepare does; it returned a numpy array of shape (8, 64).")


def test_the_check_inputs_are_the_ones_the_prompts_promise():
    """8.1 runs on Dataset.range(10) (the prompt says so); 8.3 on Dataset.range(200)."""
    from edugraph.exercises import lesson08
    assert [e.item() for e in lesson08._EPOCH_CASES[0][0]().as_numpy_iterator()] == \
        list(range(10))
    assert lesson08._SPLIT_CASES[0][0]().cardinality() == 200


def test_8_1_a_buffer_the_size_of_a_batch_is_a_small_buffer():
    def training_batches(ds, batch_size, num_epochs):
        return ds.shuffle(batch_size, seed=0).batch(batch_size).repeat(num_epochs)

    assert line_of("8.1", {"training_batches": training_batches}).startswith(
        "✗ 8.1: the shuffle buffer is smaller than the dataset")


def test_8_4_labels_first_or_a_list_are_told_what_to_return():
    def labels_first(images, labels):
        return labels, eg.reshape(eg.cast(images, "float32"), (-1, 64))

    assert line_of("8.4", {"prepare_batch": labels_first}) == (
        "✗ 8.4: prepare_batch returned the labels first: return the images, then the labels, "
        "`return images, labels`, as prepare does.")


@pytest.mark.parametrize("spelling", ["Parallel map", "parallel_map", " parallel-map "])
def test_8_2_the_choice_is_read_whatever_its_case_and_separator(spelling):
    assert line_of("8.2", {**SOLUTIONS["8.2"], "fast_helps_more": spelling}) == \
        line_of("8.2", SOLUTIONS["8.2"])
