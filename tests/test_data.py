"""eg.data.Dataset: each step's semantics, device placement, threads and error propagation."""
import threading
import time

import numpy as np
import pytest

import edugraph as eg
from edugraph.data import AUTOTUNE, Dataset


def values(ds):
    return [np.asarray(e).tolist() if not isinstance(e, tuple) else
            tuple(np.asarray(p).tolist() for p in e) for e in ds.as_numpy_iterator()]


def test_slices_of_tuples_and_dicts_on_the_current_device(device):
    x, y = np.arange(12.0).reshape(6, 2), np.arange(6)
    ds = Dataset.from_tensor_slices((x, y))
    assert ds.cardinality() == len(ds) == 6
    with eg.device(device):
        first_x, first_y = next(iter(ds))
    assert isinstance(first_x, eg.Tensor) and first_x.device.name == device
    np.testing.assert_array_equal(first_x.numpy(), [0.0, 1.0])
    assert first_y.dtype == np.int64
    element = next(iter(Dataset.from_tensor_slices({"image": x, "label": y})))
    assert set(element) == {"image", "label"}
    with pytest.raises(ValueError, match="same first dimension"):
        Dataset.from_tensor_slices((x, np.arange(5)))


def test_batch_repeat_take_skip_filter():
    ds = Dataset.range(7)
    assert values(ds.batch(3)) == [[0, 1, 2], [3, 4, 5], [6]]
    assert values(ds.batch(3, drop_remainder=True)) == [[0, 1, 2], [3, 4, 5]]
    assert ds.batch(3).cardinality() == 3 and ds.batch(3, True).cardinality() == 2
    assert values(ds.repeat(2).take(9)) == [0, 1, 2, 3, 4, 5, 6, 0, 1]
    assert ds.repeat().cardinality() == eg.data.INFINITE_CARDINALITY
    assert ds.repeat().take(4).cardinality() == 4
    assert values(ds.skip(5)) == [5, 6]
    assert values(ds.filter(lambda v: int(v) % 2 == 0)) == [0, 2, 4, 6]
    assert ds.filter(lambda v: True).cardinality() == eg.data.UNKNOWN_CARDINALITY
    pairs = Dataset.from_tensor_slices((np.arange(4), np.arange(4) * 10)).batch(2)
    assert values(pairs) == [([0, 1], [0, 10]), ([2, 3], [20, 30])]


def test_shuffle_is_a_permutation_reproducible_with_a_seed():
    ds = Dataset.range(50)
    a = values(ds.shuffle(50, seed=3))
    assert sorted(a) == list(range(50)) and a != list(range(50))
    assert values(ds.shuffle(50, seed=3)) == a                          # same seed, same order
    reshuffled = ds.shuffle(50, seed=3)
    assert values(reshuffled) != values(reshuffled)                    # new order each pass
    fixed = ds.shuffle(50, seed=3, reshuffle_each_iteration=False)
    assert values(fixed) == values(fixed)
    # A buffer of 1 cannot reorder anything; a small buffer only moves elements a little.
    assert values(ds.shuffle(1, seed=0)) == list(range(50))
    local = values(ds.shuffle(5, seed=0))
    assert all(local.index(i) >= i - 4 for i in range(50))


def test_map_unpacks_tuples_and_parallel_map_keeps_order():
    ds = Dataset.from_tensor_slices((np.arange(20.0), np.arange(20)))

    def slow(x, y):
        time.sleep(0.001 * (20 - int(y)))               # later elements finish first
        return x * 2, y
    expected = [(2.0 * i, i) for i in range(20)]
    assert values(ds.map(slow)) == expected
    assert values(ds.map(slow, num_parallel_calls=4)) == expected
    assert values(ds.map(slow, num_parallel_calls=AUTOTUNE)) == expected


def test_parallel_map_and_prefetch_overlap_waiting():
    ds = Dataset.range(8).map(lambda v: (time.sleep(0.02), v)[1], num_parallel_calls=8)
    start = time.perf_counter()
    assert values(ds) == list(range(8))
    assert time.perf_counter() - start < 8 * 0.02            # serial would take 0.16 s
    producer_threads = set()

    def record(v):
        producer_threads.add(threading.get_ident())
        return v
    assert values(Dataset.range(5).map(record).prefetch(2)) == list(range(5))
    assert threading.get_ident() not in producer_threads


def test_prefetch_reraises_errors_and_stops_its_thread_early():
    def broken(v):
        if int(v) == 3:
            raise RuntimeError("bad element 3")
        return v
    with pytest.raises(RuntimeError, match="bad element 3"):
        list(Dataset.range(5).map(broken).prefetch(1))
    before = threading.active_count()
    for _ in Dataset.range(10 ** 6).prefetch(2).take(3):
        pass
    deadline = time.time() + 2
    while threading.active_count() > before and time.time() < deadline:
        time.sleep(0.01)
    assert threading.active_count() <= before


def test_pipeline_feeds_fit_and_yields_device_tensors_in_batches(device):
    x = np.random.default_rng(0).normal(size=(40, 3)).astype(np.float32)
    ds = Dataset.from_tensor_slices((x, x.sum(1, keepdims=True))).shuffle(40, seed=0) \
        .batch(8).prefetch(2)
    with eg.device(device):
        xb, yb = next(iter(ds))
        assert xb.shape == (8, 3) and xb.device.name == device
        model = eg.Sequential([eg.layers.Dense(1, input_shape=(3,))])
        model.compile("sgd", "mse")
        history = model.fit(ds, epochs=3, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]


# ------------------------------------------------- found by comparing with tf.data's rules
def test_a_shuffle_that_does_not_reshuffle_keeps_one_order_without_a_seed():
    """Else a shuffled dataset split by take/skip would share elements between the parts."""
    base = eg.data.Dataset.range(10).shuffle(10, reshuffle_each_iteration=False)
    first = [int(x) for x in base.as_numpy_iterator()]
    assert first == [int(x) for x in base.as_numpy_iterator()]
    train = {int(x) for x in base.take(7).as_numpy_iterator()}
    test = {int(x) for x in base.skip(7).as_numpy_iterator()}
    assert not train & test and len(train | test) == 10


def test_lists_are_components_and_minus_one_counts_as_in_tf():
    ds = eg.data.Dataset
    assert [int(x) for x in ds.from_tensor_slices([1, 2, 3]).as_numpy_iterator()] == [1, 2, 3]
    names = [(str(f), int(y)) for f, y in
             ds.from_tensor_slices((["a.png", "b.png"], [0, 1])).as_numpy_iterator()]
    assert names == [("a.png", 0), ("b.png", 1)]
    forever = ds.range(3).repeat(-1)
    assert forever.cardinality() == eg.data.INFINITE_CARDINALITY
    assert [int(x) for x in forever.take(7).as_numpy_iterator()] == [0, 1, 2, 0, 1, 2, 0]
    assert [int(x) for x in ds.range(3).take(-1).as_numpy_iterator()] == [0, 1, 2]
    assert list(ds.range(3).skip(-1).as_numpy_iterator()) == []


def test_repeating_an_empty_dataset_ends():
    empty = eg.data.Dataset.range(5).filter(lambda x: x > 10)
    assert list(empty.repeat().take(3).as_numpy_iterator()) == []
    assert eg.data.Dataset.range(0).repeat().cardinality() == 0


def test_batch_matches_dict_entries_by_key_and_explains_mismatches():
    ds = eg.data.Dataset.from_generator(lambda: iter([{"a": 1, "b": 10}, {"b": 20, "a": 2}]))
    (batch,) = list(ds.batch(2).as_numpy_iterator())
    np.testing.assert_array_equal(batch["a"], [1, 2])
    np.testing.assert_array_equal(batch["b"], [10, 20])
    ragged = eg.data.Dataset.from_generator(lambda: iter([np.ones(2), np.ones(3)]))
    with pytest.raises(ValueError, match=r"different shapes \[\(2,\), \(3,\)\].*pad or crop"):
        list(ragged.batch(2))
    with pytest.raises(ValueError, match="buffer of at least 1"):
        eg.data.Dataset.range(3).shuffle(0)


def test_random_split_with_a_generator_says_to_seed_instead():
    with pytest.raises(TypeError, match=r"eg\.manual_seed\(42\)"):
        eg.utils.data.random_split(list(range(10)), [7, 3], generator=object())


def test_zip_pairs_elements_and_ends_with_the_shortest(device):
    images, labels = Dataset.range(3), Dataset.from_tensor_slices(np.arange(10.0, 15.0))
    pairs = Dataset.zip((images, labels))
    assert values(pairs) == [(0, 10.0), (1, 11.0), (2, 12.0)]
    assert values(Dataset.zip(images, labels)) == values(pairs)       # TF 2.13's spelling
    assert pairs.cardinality() == 3
    with eg.device(device):
        first = next(iter(Dataset.zip({"x": images, "y": labels}).batch(2)))
    assert set(first) == {"x", "y"} and first["y"].device.name == device
    np.testing.assert_array_equal(first["y"].numpy(), [10.0, 11.0])
    assert Dataset.zip((images, labels.repeat())).cardinality() == 3
    assert Dataset.zip((images.repeat(), labels.repeat())).cardinality() == -1
    assert Dataset.zip((images, labels.filter(lambda y: y > 0))).cardinality() == -2
    with pytest.raises(TypeError, match=r"Dataset.zip takes datasets.*Dataset.zip\(\(images"):
        Dataset.zip((np.arange(3), labels))


def test_concatenate_chains_datasets_of_one_kind():
    a, b = Dataset.range(2), Dataset.range(5, 8)
    both = a.concatenate(b)
    assert values(both) == [0, 1, 5, 6, 7] and both.cardinality() == len(both) == 5
    assert values(both) == [0, 1, 5, 6, 7]                            # re-iterable
    assert a.concatenate(b.repeat()).cardinality() == -1
    assert a.concatenate(b.filter(lambda x: x > 5)).cardinality() == -2
    with pytest.raises(TypeError, match=r"concatenate: the datasets' elements differ: int64 "
                                        r"then float64.*eg.cast"):
        list(a.concatenate(Dataset.from_tensor_slices(np.arange(2.0))))
    pairs = Dataset.from_tensor_slices((np.arange(2), np.arange(2)))
    with pytest.raises(TypeError, match="elements differ"):
        list(pairs.concatenate(a))
    with pytest.raises(TypeError, match="concatenate takes a Dataset"):
        a.concatenate([1, 2])


def test_next_in_a_traced_function_takes_a_new_element_on_every_call():
    """TF's tf.data iterator: next(iterator) in a traced step is a node that takes the next
    element each time the graph runs (the element current while tracing is not baked in)."""
    x = np.arange(12.0, dtype=np.float32).reshape(6, 2)
    iterator = iter(Dataset.from_tensor_slices((x, np.arange(6))).batch(2))
    total = eg.Variable(0.0)

    @eg.function
    def step(iterator):
        features, labels = next(iterator)
        total.assign_add(eg.reduce_sum(features))
        return labels

    seen = [step(iterator).numpy().tolist() for _ in range(3)]
    assert seen == [[0, 1], [2, 3], [4, 5]] and step.experimental_get_tracing_count() == 1
    assert total.numpy() == x.sum()
    with pytest.raises(eg.errors.OutOfRangeError, match="End of sequence"):
        step(iterator)
    with pytest.raises(StopIteration):
        next(iterator)                              # eagerly, the end is Python's


def test_a_smaller_last_batch_than_the_traced_one_is_refused_by_name():
    iterator = iter(Dataset.range(5).batch(2))
    step = eg.function(lambda it: next(it) * 2)
    assert step(iterator).numpy().tolist() == [0, 2]
    assert step(iterator).numpy().tolist() == [4, 6]
    with pytest.raises(eg.errors.InvalidArgumentError, match=r"shapes and dtypes \(1,\) int64, "
                       r"but the graph was built for \(2,\) int64.*drop_remainder=True"):
        step(iterator)


def test_an_iterator_made_while_tracing_is_read_then_and_the_next_one_in_a_tf1_graph():
    @eg.function
    def total(ds):
        result = eg.constant(0, dtype=eg.int64)
        for element in ds:                          # a loop over constants, as traced
            result = result + element
        return result

    assert total(Dataset.range(4)).item() == 6
    iterator = iter(Dataset.range(3))
    with eg.Graph().as_default():
        element = next(iterator)
        assert element.op.type == "Identity" and element.op.inputs[0].op.type == \
            "IteratorGetNext"
        with eg.Session() as sess:
            assert [sess.run(element) for _ in range(3)] == [0, 1, 2]


def test_python_lists_take_tfs_dtypes_and_arrays_keep_theirs():
    """from_tensor_slices([1.0, 2.0]) is float32 and [0, 1] int32, as in TF (they were numpy's
    float64 and int64, which then met float32 weights and were refused)."""
    x, y = next(iter(eg.data.Dataset.from_tensor_slices(([[1.0, 2.0], [3.0, 4.0]], [0, 1]))))
    assert x.dtype == eg.float32 and y.dtype == eg.int32
    element = next(iter(eg.data.Dataset.from_tensor_slices(
        {"flag": [True, False], "kept": np.arange(2.0), "rows": [np.zeros(2), np.ones(2)]})))
    assert element["flag"].dtype == eg.bool_ and element["kept"].dtype == eg.float64
    assert element["rows"].dtype == eg.float64


def test_as_numpy_iterator_gives_numbers_as_numpy_scalars_as_tf():
    """TF's Dataset.range(3).as_numpy_iterator() gives np.int64(0), 1, 2 (here 0-d arrays
    came from range, scalars from from_tensor_slices); arrays stay arrays."""
    assert list(eg.data.Dataset.range(3).as_numpy_iterator()) == [0, 1, 2]
    assert all(type(v) is np.int64 for v in eg.data.Dataset.range(3).as_numpy_iterator())
    rows = list(eg.data.Dataset.from_tensor_slices(np.arange(4).reshape(2, 2))
                .as_numpy_iterator())
    assert all(isinstance(r, np.ndarray) and r.shape == (2,) for r in rows)
