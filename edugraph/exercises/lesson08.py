"""Lesson 8's exercises: the order of shuffle, batch and repeat; an epoch's time predicted with
the overlap formulas; a validation split that cannot overlap the training set; a map
vectorised over a batch."""
import itertools

import numpy as np

import edugraph as eg
from edugraph.data import Dataset

from .answers import WrongForm, choice, describe, function, number
from .checking import Exercise, Mistake


def _a_dataset(value, what):
    if not isinstance(value, Dataset):
        hint = " (did you forget `return`?)" if value is None else ""
        raise WrongForm(f"{what} should return a Dataset (the pipeline itself, not its "
                        f"elements); it returned {describe(value)}{hint}.")
    return value


def _elements(dataset, limit):
    """At most ``limit`` elements of ``dataset`` as numpy arrays: an endless pipeline is cut
    off instead of iterated forever."""
    return list(itertools.islice(dataset.as_numpy_iterator(), limit))


def _values(make_dataset):
    """The elements of a small dataset of scalars, as plain numbers."""
    return [np.asarray(e).item() for e in make_dataset().as_numpy_iterator()]


# ------------------------------------------------- 8.1: shuffle, batch, repeat in the right order
# (dataset, batch_size, num_epochs): sizes that batch_size does not divide, so that a batch
# straddling two epochs shows in the batch sizes
_EPOCH_CASES = ((lambda: Dataset.range(10), 4, 3),
                (lambda: Dataset.from_tensor_slices(np.arange(20, 27)), 3, 2))


def _built(pipeline_fn, make_dataset, batch_size, num_epochs):
    """The batches the student's pipeline yields, each a tuple of numbers (a bare number when
    an element is not a batch); at most one more batch than the right pipeline has."""
    name = "training_batches(ds, batch_size, num_epochs)"
    dataset = _a_dataset(pipeline_fn(make_dataset(), batch_size, num_epochs), name)
    limit = len(_values(make_dataset)) * num_epochs + 1
    batches = []
    for element in _elements(dataset, limit):
        if isinstance(element, (tuple, dict)) or np.ndim(element) > 1:
            raise WrongForm(f"{name} should yield batches of single numbers (the pipeline "
                            "of ds's elements); it yields other elements.")
        element = np.asarray(element)
        batches.append(element.item() if element.ndim == 0 else tuple(element.tolist()))
    return tuple(batches)


def _run_batches(answer):
    build = answer["training_batches"]
    first, again = ([_built(build, *case) for case in _EPOCH_CASES] for _ in range(2))
    return {"batches": tuple(first), "reproducible": first == again}


def _pipeline(*order, buffer=None, seed=0, reshuffle=True, drop_remainder=False,
              forever=False):
    """A training_batches with the steps in ``order`` (shuffle, batch, repeat by default);
    the other arguments make it go wrong in known ways."""
    def training_batches(ds, batch_size, num_epochs):
        steps = {"shuffle": lambda d: d.shuffle(buffer or ds.cardinality(), seed=seed,
                                                reshuffle_each_iteration=reshuffle),
                 "batch": lambda d: d.batch(batch_size, drop_remainder=drop_remainder),
                 "repeat": lambda d: d.repeat(None if forever else num_epochs)}
        for step in order or ("shuffle", "batch", "repeat"):
            ds = steps[step](ds)
        return ds
    return training_batches


def _cases(got):
    """(batches, values, batch_size, num_epochs) for each test case."""
    return [(batches, _values(make), batch_size, num_epochs)
            for batches, (make, batch_size, num_epochs) in zip(got["batches"], _EPOCH_CASES)]


def _epochs(batches, values):
    """The elements in the order they come, cut into epochs of len(values)."""
    flat = [v for batch in batches for v in batch]
    n = len(values)
    return [flat[i:i + n] for i in range(0, len(flat), n)]


def _count_is(size):
    """A predicate: in some case the pipeline yields size(n, batch_size, num_epochs)
    elements instead of n · num_epochs."""
    def when(got, reference):
        return any(sum(map(len, batches)) == size(len(values), batch_size, num_epochs)
                   for batches, values, batch_size, num_epochs in _cases(got))
    return when


def _epochs_mix(got, reference):
    return any(sorted(epoch) != sorted(values)
               for batches, values, _, _ in _cases(got) for epoch in _epochs(batches, values))


def _batches_fixed(got, reference):
    """Every batch is one of the batches of the unshuffled data: shuffle came after batch."""
    return all(set(batches) <= {tuple(values[i:i + batch_size])
                                for i in range(0, len(values), batch_size)}
               for batches, values, batch_size, _ in _cases(got))


def _straddles(got, reference):
    def sizes(n, batch_size):
        return [batch_size] * (n // batch_size) + ([n % batch_size] if n % batch_size else [])
    return any([len(b) for b in batches] != sizes(len(values), batch_size) * num_epochs
               for batches, values, batch_size, num_epochs in _cases(got))


def _in_stored_order(got, reference):
    return all(epoch == values
               for batches, values, _, _ in _cases(got) for epoch in _epochs(batches, values))


def _a_small_buffer(got, reference):
    """In every case the answer equals the seed-0 pipeline with some buffer smaller than that
    case's dataset (a fixed size, or one that follows batch_size)."""
    return all(any(_built(_pipeline(buffer=size), *case) == batches
                   for size in range(2, len(values)))
               for (batches, values, _, _), case in zip(_cases(got), _EPOCH_CASES))


def _same_order_each_epoch(got, reference):
    return all(epoch == epochs[0]
               for batches, values, _, _ in _cases(got)
               for epochs in [_epochs(batches, values)] for epoch in epochs)


def _shuffle_after_batch(ds, batch_size, num_epochs):
    return ds.batch(batch_size).shuffle(3, seed=0).repeat(num_epochs)


ex8_1 = Exercise(
    "8.1",
    reads={"training_batches": function},
    run=_run_batches,
    reference=lambda: _run_batches({"training_batches": _pipeline()}),
    passed="shuffle, batch, repeat: every epoch a new shuffle of all the elements, in "
           "batches that never mix two epochs (the last of each smaller), the same each run.",
    expected="training_batches(ds, batch_size, num_epochs) returns a Dataset of batches: "
             "num_epochs epochs, each a shuffle of all of ds with shuffle(buffer, seed=0), "
             "in batches of batch_size.",
    mistakes=(
        Mistake("the batches hold elements that are not ds's: build the pipeline from the "
                "dataset `ds` that training_batches gets, not from a dataset of your own.",
                when=lambda got, reference: any(
                    not set(v for batch in batches for v in batch) <= set(values)
                    for batches, values, _, _ in _cases(got)),
                example={"training_batches":
                         lambda ds, batch_size, num_epochs: _pipeline()(
                             Dataset.range(10), batch_size, num_epochs)}),
        Mistake("the elements come out one by one: batch(batch_size) stacks them into "
                "batches.",
                when=lambda got, reference: any(not isinstance(batch, tuple)
                                                for batches in got["batches"]
                                                for batch in batches),
                example={"training_batches": _pipeline("shuffle", "repeat")}),
        Mistake("the pipeline yields one epoch only: num_epochs of them are asked for, which "
                "repeat(num_epochs) makes.",
                when=_count_is(lambda n, batch_size, num_epochs: n),
                example={"training_batches": _pipeline("shuffle", "batch")}),
        Mistake("the pipeline yields more than num_epochs epochs: repeat(num_epochs) makes "
                "exactly that many (repeat() without a count never stops).",
                when=lambda got, reference: any(sum(map(len, batches)) > len(values) * k
                                                for batches, values, _, k in _cases(got)),
                example={"training_batches": _pipeline(forever=True)}),
        Mistake("each epoch lost its last, smaller batch, and with it some examples: keep it "
                "(drop_remainder=False, the default).",
                when=_count_is(lambda n, batch_size, num_epochs:
                               (n - n % batch_size) * num_epochs),
                example={"training_batches": _pipeline(drop_remainder=True)}),
        Mistake("an element comes back before its epoch has shown every element once: the "
                "epochs mix. Shuffle before repeat, so that each pass is shuffled on its own.",
                when=_epochs_mix,
                example={"training_batches": _pipeline("repeat", "shuffle", "batch")}),
        Mistake("the elements keep their stored order: shuffle them, with a buffer as large as "
                "the dataset (a buffer of 1 reorders nothing).",
                when=_in_stored_order,
                example={"training_batches": _pipeline(buffer=1)}),
        Mistake("every epoch has the same order: the shuffle should reshuffle on each pass "
                "(reshuffle_each_iteration=True, the default), so that each epoch is new.",
                when=_same_order_each_epoch,
                example={"training_batches": _pipeline(reshuffle=False)}),
        Mistake("the same elements always share a batch: shuffling after batch only reorders "
                "whole batches. Shuffle the elements, then batch them.",
                when=_batches_fixed,
                example={"training_batches": _shuffle_after_batch}),
        Mistake("a batch holds the end of one epoch and the start of the next (look at the "
                "batch sizes): batch each epoch before repeat joins the epochs.",
                when=_straddles,
                example={"training_batches": _pipeline("shuffle", "repeat", "batch")}),
        Mistake("two calls give different batches: give shuffle a seed (seed=0), so that the "
                "notebook gives the same batches every time it runs.",
                when=lambda got, reference: not got["reproducible"],
                example={"training_batches": _pipeline(seed=None)}),
        Mistake("the shuffle buffer is smaller than the dataset, so elements move only a few "
                "places: a uniform shuffle needs buffer_size ≥ the number of elements "
                "(ds.cardinality()).",
                when=_a_small_buffer,
                example={"training_batches": _pipeline(buffer=3)}),
    ),
)


# --------------------------------------------------- 8.2: an epoch's time, predicted
# section 4's pipeline with a fast accelerator: 10 ms a step instead of 50
NUM_EXAMPLES, BATCH_SIZE, LOAD_MS, WORKERS = 96, 16, 4, 4
FAST_STEP_MS, LESSON_STEP_MS = 10, 50
_TIMES = ("fast_serial_ms", "fast_parallel_ms", "fast_prefetch_ms", "fast_both_ms")


def _epoch_ms(step_ms=FAST_STEP_MS, load_ms=LOAD_MS, workers=WORKERS,
              num_steps=NUM_EXAMPLES // BATCH_SIZE, overlap=max, one_batch_apart=True):
    """Section 4's formulas: the milliseconds of one epoch of each pipeline. With prefetch,
    loading and training overlap and the slower of the two sets the pace; the other adds
    the one batch that cannot overlap (the first load, or the last step)."""
    batch_load = BATCH_SIZE * load_ms
    parallel_load = batch_load / workers
    step_apart, load_apart, parallel_apart = (
        (step_ms, batch_load, parallel_load) if one_batch_apart else (0, 0, 0))
    times = (num_steps * (batch_load + step_ms),
             num_steps * (parallel_load + step_ms),
             overlap(num_steps * batch_load + step_apart, load_apart + num_steps * step_ms),
             overlap(num_steps * parallel_load + step_apart,
                     parallel_apart + num_steps * step_ms))
    return dict(zip(_TIMES, times))


def _predictions():
    times = _epoch_ms()
    faster = "parallel map" if times["fast_parallel_ms"] < times["fast_prefetch_ms"] \
        else "prefetch"
    return {**times, "fast_helps_more": faster}


def _time_is(wrong, names=_TIMES):
    """A predicate: one of ``names`` is the time that ``wrong`` (a dict) gives, where that
    differs from the right time."""
    def when(got, reference):
        return any(np.isclose(got[n], wrong[n], rtol=0, atol=0.5)
                   and not np.isclose(wrong[n], reference[n], rtol=0, atol=0.5)
                   for n in names)
    return when


def _with(times):
    """A whole answer: the right one with these times instead."""
    return lambda: {**_predictions(), **times}


# the times that the known mistakes give
_IN_SECONDS = {n: t / 1000 for n, t in _epoch_ms().items()}
_LESSONS_STEPS = _epoch_ms(step_ms=LESSON_STEP_MS)
_PER_EXAMPLE = _epoch_ms(load_ms=LOAD_MS / BATCH_SIZE)
_STEP_PER_EXAMPLE = _epoch_ms(num_steps=NUM_EXAMPLES)
_ONE_WORKER = _epoch_ms(workers=1)
_WORKERS_SHARE_THE_STEP = {"fast_parallel_ms": _epoch_ms()["fast_serial_ms"] / WORKERS}
_SUMMED = {"fast_prefetch_ms": _epoch_ms()["fast_serial_ms"],
           "fast_both_ms": _epoch_ms()["fast_parallel_ms"]}
_NOTHING_APART = _epoch_ms(one_batch_apart=False)
_TRAINING_SETS_THE_PACE = _epoch_ms(overlap=min)
_OVERLAPPED = ("fast_prefetch_ms", "fast_both_ms")

ex8_2 = Exercise(
    "8.2",
    reads={**{name: number for name in _TIMES},
           "fast_helps_more": choice("prefetch", "parallel map")},
    reference=_predictions,
    passed="serial {fast_serial_ms:.0f} ms, parallel map {fast_parallel_ms:.0f} ms, prefetch "
           "{fast_prefetch_ms:.0f} ms, both {fast_both_ms:.0f} ms: with fast steps loading "
           "is the bottleneck, and only the parallel map makes loading itself faster.",
    expected="The four times are numbers of milliseconds (checked to 0.5 ms), and "
             "fast_helps_more is 'prefetch' or 'parallel map'.",
    rtol=0, atol=0.5,
    mistakes=(
        Mistake("these look like seconds: give the times in milliseconds.",
                when=lambda got, reference: all(
                    np.isclose(got[n], _IN_SECONDS[n], rtol=1e-2) for n in _TIMES),
                example=_with(_IN_SECONDS)),
        Mistake("these are the lesson's times, for 50 ms steps: the question is about a fast "
                "accelerator, 10 ms a step.",
                when=_time_is(_LESSONS_STEPS),
                example=_with(_LESSONS_STEPS)),
        Mistake("loading a BATCH takes batch_size × load_ms: a training step waits for a "
                "whole batch, not one example.",
                when=_time_is(_PER_EXAMPLE),
                example=_with({"fast_serial_ms": _PER_EXAMPLE["fast_serial_ms"]})),
        Mistake("an epoch has one training step per batch (num_examples / batch_size of "
                "them), not one per example.",
                when=_time_is(_STEP_PER_EXAMPLE),
                example=_with({"fast_serial_ms": _STEP_PER_EXAMPLE["fast_serial_ms"]})),
        Mistake("the parallel map loads `workers` examples at once, so a batch takes "
                "batch_size × load_ms / workers to load.",
                when=_time_is(_ONE_WORKER, ("fast_parallel_ms", "fast_both_ms")),
                example=_with({"fast_parallel_ms": _ONE_WORKER["fast_parallel_ms"]})),
        Mistake("the workers share the loading only: each training step still takes "
                "step_ms, on the accelerator.",
                when=_time_is(_WORKERS_SHARE_THE_STEP, ("fast_parallel_ms",)),
                example=_with(_WORKERS_SHARE_THE_STEP)),
        Mistake("with prefetch, loading the next batch and training on this one happen at "
                "the same time: the epoch takes as long as the slower of the two (plus one "
                "batch of the other), not their sum.",
                when=_time_is(_SUMMED, _OVERLAPPED),
                example=_with({"fast_prefetch_ms": _SUMMED["fast_prefetch_ms"]})),
        Mistake("one batch cannot overlap: the first batch is loaded before any training, "
                "and the last step runs after all loading. Add it to the slower side's time.",
                when=_time_is(_NOTHING_APART, _OVERLAPPED),
                example=_with({name: _NOTHING_APART[name] for name in _OVERLAPPED})),
        Mistake("with 10 ms steps, loading a batch takes longer than training on it, so "
                "loading sets the pace now and the model waits: take the larger of the two "
                "formulas, as the lesson's `expected` cell does.",
                when=_time_is(_TRAINING_SETS_THE_PACE, _OVERLAPPED),
                example=_with({"fast_both_ms": _TRAINING_SETS_THE_PACE["fast_both_ms"]})),
        Mistake("compare your own times: prefetch can hide at most one step per batch behind "
                "the loading, while the parallel map makes the loading itself shorter.",
                when=lambda got, reference: got["fast_helps_more"] != reference[
                    "fast_helps_more"],
                example=_with({"fast_helps_more": "prefetch"})),
    ),
)


# ------------------------------------------- 8.3: a validation split that does not overlap
# (dataset, num_val): large enough that a right split, whatever its seed, has validation
# elements from the second half of the data (all from the first half: odds below 1e-11),
# which a small shuffle buffer cannot reach
_SPLIT_CASES = ((lambda: Dataset.range(200), 40),
                (lambda: Dataset.from_tensor_slices(np.arange(500, 620)), 30))


def _one_pass(dataset, limit, what):
    numbers = []
    for element in _elements(dataset, limit):
        if isinstance(element, (tuple, dict)) or np.ndim(element) != 0:
            raise WrongForm(f"{what} should hold single elements, as ds does (batch later, "
                            "in the training pipeline).")
        numbers.append(np.asarray(element).item())
    return numbers


def _passes(split_fn, make_dataset, num_val):
    """Two passes over each part, in the order training would make them."""
    values = _values(make_dataset)
    parts = split_fn(make_dataset(), num_val)
    name = "split_validation(ds, num_val)"
    if not isinstance(parts, (tuple, list)) or len(parts) != 2:
        raise WrongForm(f"{name} should return a pair of datasets, (train, validation); it "
                        f"returned {describe(parts)}.")
    train, validation = (_a_dataset(part, name) for part in parts)
    limit = len(values) + 1
    val_1, train_1, val_2, train_2 = (
        _one_pass(part, limit, f"the {what} part")
        for part, what in ((validation, "validation"), (train, "training")) * 2)
    return values, val_1, train_1, val_2, train_2


def _split_properties(split_fn):
    """What a split does: its sizes in each case, whether each property of a right split
    holds in every case, and whether some validation part is the data's first elements."""
    sizes, holds, stored_order, block, every_kth = [], [], False, False, False
    for make_dataset, num_val in _SPLIT_CASES:
        values, *passes = _passes(split_fn, make_dataset, num_val)
        val_1, train_1, val_2, train_2 = passes
        sizes.append((len(train_1), len(val_1)))
        holds.append({
            "disjoint": not set(val_1) & set(train_1) and not set(val_2) & set(train_2),
            "stable": sorted(val_1) == sorted(val_2),
            "covers": sorted(val_1 + train_1) == sorted(values),
            # a uniform shuffle picks validation elements from both halves of the data
            "everywhere": bool(set(val_1) & set(values[len(values) // 2:])),
            "reshuffled": train_1 != train_2,
            # the same split on every run; the training part's order may follow the global
            # seed (an unseeded shuffle after skip), as the prompt asks only for the split
            "reproducible": sorted(_passes(split_fn, make_dataset, num_val)[1]) == sorted(val_1)})
        stored_order |= val_1 == values[:num_val]
        # a pattern of the stored order, which a random sample almost never is (odds below
        # 1e-30 here): one run of consecutive elements, or every k-th
        places = sorted(values.index(v) for v in val_1 if v in values)
        gaps = set(np.diff(places).tolist())
        block |= gaps == {1}
        every_kth |= len(gaps) == 1 and gaps != {1}
    return {"sizes": tuple(sizes), **{p: all(h[p] for h in holds) for p in holds[0]},
            "stored order": stored_order, "a block": block, "every k-th": every_kth}


def _split(shuffle_first=True, fixed=True, train_count=0, buffer=None, seed=0,
           reshuffle_train=True, swapped=False, train_from_stored=False):
    """take and skip on a shuffled dataset; the arguments make it go wrong in known ways."""
    def split(ds, num_val):
        n = ds.cardinality()
        shuffled = ds.shuffle(buffer or n, seed=seed, reshuffle_each_iteration=not fixed) \
            if shuffle_first else ds
        validation = shuffled.take(num_val)
        train = (ds if train_from_stored else shuffled).skip(num_val + train_count)
        if reshuffle_train:
            train = train.shuffle(n, seed=None if seed is None else seed + 1)
        return (validation, train) if swapped else (train, validation)
    return split


def _last_elements(ds, num_val):
    n = ds.cardinality()
    return ds.take(n - num_val).shuffle(n, seed=1), ds.skip(n - num_val)


def _every_kth(ds, num_val):
    elements = list(ds.as_numpy_iterator())
    k = len(elements) // num_val
    kept = [e for i, e in enumerate(elements) if i % k != 0]
    return (Dataset.from_tensor_slices(np.array(kept)).shuffle(len(kept), seed=1),
            Dataset.from_tensor_slices(np.array(elements[::k])))


ex8_3 = Exercise(
    "8.3",
    reads={"split_validation": function},
    run=lambda answer: _split_properties(answer["split_validation"]),
    reference=lambda: _split_properties(_split()),
    passed="validation is num_val elements from all over the data, in no pattern of the "
           "stored order (as a shuffle picks them), the same every pass; training holds all "
           "the others, reshuffled every epoch; the split is the same on every run.",
    expected="split_validation(ds, num_val) returns (train, validation), two datasets of "
             "single elements: num_val random elements of ds, and all the others.",
    mistakes=(
        Mistake("you returned (validation, training); return them the other way round: "
                "(train, validation).",
                when=lambda got, ref: got["sizes"] == tuple(s[::-1] for s in ref["sizes"]),
                example={"split_validation": _split(swapped=True)}),
        Mistake("the parts have the wrong sizes: cut with take(num_val) and skip(num_val), "
                "the same count, so that no element is lost or used twice.",
                when=lambda got, reference: got["sizes"] != reference["sizes"],
                example={"split_validation": _split(train_count=-1)}),
        Mistake("the validation set changes from pass to pass and shares examples with the "
                "training set: take and skip each go through the shuffle again, and it "
                "reshuffles every time. shuffle(..., reshuffle_each_iteration=False) keeps "
                "one order for both.",
                when=lambda got, reference: not got["stable"],
                example={"split_validation": _split(fixed=False)}),
        Mistake("the two parts share examples: cut ONE shuffled dataset, taking the "
                "validation part and skipping it for the training part.",
                when=lambda got, reference: not (got["disjoint"] and got["covers"]),
                example={"split_validation": _split(train_from_stored=True)}),
        Mistake("the validation set is the first num_val elements as they are stored: if "
                "the data are sorted (by class, by date) it sees only one kind. Shuffle "
                "before take and skip.",
                when=lambda got, reference: got["stored order"],
                example={"split_validation": _split(shuffle_first=False)}),
        Mistake("the validation set is one run of consecutive elements in stored order (the "
                "last num_val, say): if the data are sorted (by class, by date) it sees only "
                "one kind. Shuffle first, then cut the shuffled dataset with take and skip.",
                when=lambda got, reference: got["a block"],
                example={"split_validation": _last_elements}),
        Mistake("the validation set is every k-th element in stored order, a pattern, not a "
                "random sample: data that repeat with a period (a class cycle, the days of a "
                "week) put one kind in it. Shuffle first, then cut with take and skip.",
                when=lambda got, reference: got["every k-th"],
                example={"split_validation": _every_kth}),
        Mistake("the validation elements all come from the start of the data: a shuffle "
                "buffer smaller than the dataset moves elements only a few places. Use "
                "buffer_size ≥ ds.cardinality().",
                when=lambda got, ref: not got["everywhere"],
                example={"split_validation": _split(buffer=5)}),
        Mistake("the training part comes in the same order every epoch: shuffle it again "
                "after skip (that shuffle may reshuffle on each pass).",
                when=lambda got, reference: not got["reshuffled"],
                example={"split_validation": _split(reshuffle_train=False)}),
        Mistake("two calls give different parts: give the shuffle that take and skip cut a "
                "seed, so that the notebook splits the same way every time it runs.",
                when=lambda got, reference: not got["reproducible"],
                example={"split_validation": _split(seed=None)}),
    ),
)


# ------------------------------------------------------------ 8.4: a map vectorised over a batch
def prepare(image, label):
    """The per-example map of exercise 8.4: each image scaled by its own brightest pixel,
    then flattened for a Dense layer."""
    image = eg.cast(image, "float32")
    image = image / eg.reduce_max(image)
    return eg.reshape(image, (64,)), label


# 14 images in batches of 8: the first batch is as wide as an image, so that a maximum
# left without keepdims, of shape (8,), broadcasts silently (and wrongly) and can be
# diagnosed; the last batch, of 6, catches a function that assumes the batch size
_MAP_BATCH = 8


def _scanned_digits():
    """Small uint8 images, each with its own brightest pixel (no zeros: no 0/0 anywhere)."""
    rng = np.random.default_rng(8)
    brightest = rng.integers(4, 17, size=14)
    images = rng.integers(1, brightest[:, None, None], size=(14, 8, 8), endpoint=True)
    return images.astype(np.uint8), rng.integers(0, 10, size=14)


def _pair(element):
    if not isinstance(element, tuple) or len(element) != 2:
        raise WrongForm("prepare_batch should return the pair (images, labels) as a tuple, "
                        f"`return images, labels`, as prepare does; it returned "
                        f"{describe(element)}.")
    images, labels = element
    if np.ndim(images) == 1 and np.ndim(labels) > 1:
        raise WrongForm("prepare_batch returned the labels first: return the images, then "
                        "the labels, `return images, labels`, as prepare does.")
    return element


def _batches(dataset):
    """The batches' images and labels. An error in the first batch is the student's to see
    (with their line); one in a later, smaller batch is recorded: the function assumed the
    batch size, or a shape that only the first batch has."""
    batches = dataset.as_numpy_iterator()
    found = [_pair(next(batches))]
    later_error = None
    try:
        found += [_pair(element) for element in batches]
    except WrongForm:
        raise
    except Exception as error:      # any error: that it comes only now is the diagnosis
        later_error = type(error).__name__
    return {"images": tuple(images for images, _ in found),
            "labels": tuple(labels for _, labels in found),
            "error on the last batch": later_error}


def _per_batch(map_fn):
    return _batches(Dataset.from_tensor_slices(_scanned_digits())
                    .batch(_MAP_BATCH).map(map_fn))


def _scaled_over(axis, keepdims=True):
    """A per-batch map that divides by the maximum over ``axis`` of the batch."""
    def prepare_batch(images, labels):
        images = eg.cast(images, "float32")
        images = images / eg.reduce_max(images, axis=axis, keepdims=keepdims)
        return eg.reshape(images, (-1, 64)), labels
    return prepare_batch


def _flattened_as(shape):
    """A per-batch map that scales right, then reshapes to ``shape``."""
    def prepare_batch(images, labels):
        images = eg.cast(images, "float32")
        images = images / eg.reduce_max(images, axis=(1, 2), keepdims=True)
        return eg.reshape(images, shape), labels
    return prepare_batch


def _by_sixteen(images, labels):
    """Section 3's decode: every image divided by 16, whatever its brightest pixel."""
    return eg.reshape(eg.cast(images, "float32") / 16.0, (-1, 64)), labels


def _first_batch_is(wrong_maps):
    """A predicate: the first batch's images are those of one of ``wrong_maps()``."""
    def when(got, reference):
        first = got["images"][0]
        return any(first.shape == images.shape and np.allclose(first, images, rtol=1e-5)
                   for images in (_per_batch(m)["images"][0] for m in wrong_maps()))
    return when


ex8_4 = Exercise(
    "8.4",
    reads={"prepare_batch": function},
    run=lambda answer: _per_batch(answer["prepare_batch"]),
    reference=lambda: _batches(Dataset.from_tensor_slices(_scanned_digits())
                               .map(prepare).batch(_MAP_BATCH)),
    passed="batch, then map(prepare_batch) gives the same batches as map(prepare), then "
           "batch: one call per batch instead of one per image.",
    expected=f"ds.batch({_MAP_BATCH}).map(prepare_batch) should give the batches of "
             f"ds.map(prepare).batch({_MAP_BATCH}): images of shape (batch, 64) (checked to "
             "1e-5), and the labels.",
    rtol=1e-5,
    mistakes=(
        # before the whole batch's maximum: the first batch's brightest pixel is 16 too
        Mistake("you divided by 16, as decode does; prepare divides each image by its own "
                "brightest pixel: reduce_max over that image's pixels.",
                gives=lambda: _per_batch(_by_sixteen), example={"prepare_batch": _by_sixteen}),
        Mistake("every image is divided by the brightest pixel of the whole batch: reduce "
                "over each image's own pixels only (the axes after the batch axis).",
                when=_first_batch_is(lambda: [_scaled_over(None, keepdims=False)]),
                example={"prepare_batch": _scaled_over(None, keepdims=False)}),
        Mistake("the maximum has the shape (batch,), which lines up with the LAST axis of "
                "the images (batch, 8, 8): keepdims=True keeps the reduced axes as size 1, "
                "so that each image is divided by its own maximum.",
                when=_first_batch_is(lambda: [_scaled_over((1, 2), keepdims=False)]),
                example={"prepare_batch": _scaled_over((1, 2), keepdims=False)}),
        Mistake("the maximum is taken over the wrong axes: in a batch of shape (batch, 8, "
                "8), one image's pixels are axes 1 and 2, both of them (axis 0 runs across "
                "the images).",
                when=_first_batch_is(lambda: [_scaled_over(axis) for axis in (
                    (0,), (1,), (2,), (0, 1), (0, 2))]),
                example={"prepare_batch": _scaled_over((0,))}),
        Mistake("the whole batch is flattened into one vector: keep the batch axis and "
                "flatten each image, reshape(images, (-1, 64)).",
                when=lambda got, reference: got["images"][0].ndim == 1,
                example={"prepare_batch": _flattened_as((-1,))}),
        Mistake("the batch axis must come first, (batch, 64): reshape(images, (-1, 64)), "
                "not (64, -1).",
                when=lambda got, reference: got["images"][0].shape[0] == 64,
                example={"prepare_batch": _flattened_as((64, -1))}),
        Mistake("prepare_batch works on the first batch, of 8, but raises an error on the "
                "last one, of 6: does it assume the batch size? Let -1 stand for it, as in "
                "reshape(images, (-1, 64)).",
                when=lambda got, reference: got["error on the last batch"] is not None,
                example={"prepare_batch": _flattened_as((8, 64))}),
    ),
)

EXERCISES = [ex8_1, ex8_2, ex8_3, ex8_4]
