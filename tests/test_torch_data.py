"""eg.utils.data against torch.utils.data: default collation (structure, values, dtypes),
DataLoader batches and lengths, TensorDataset, Subset and random_split, shuffling from the
seeded global generator, and the errors for what is not supported."""
from collections import namedtuple

import numpy as np
import pytest

import edugraph as eg
from edugraph.utils.data import (DataLoader, Dataset, Subset, TensorDataset, default_collate,
                                 random_split)

torch = pytest.importorskip("torch")
tdata = torch.utils.data

Point = namedtuple("Point", "x label")


def assert_same_batch(ours, theirs, where="batch"):
    """Same structure, container types, values and dtypes; our tensors plain CPU tensors."""
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, eg.Tensor), f"{where}: {type(ours).__name__}, not a tensor"
        assert ours.device.name == "cpu:0" and ours.is_leaf and not ours.requires_grad
        assert str(ours.dtype) == str(theirs.dtype).replace("torch.", ""), where
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy(), err_msg=where)
    elif isinstance(theirs, dict):
        assert type(ours) is dict and list(ours) == list(theirs), where
        for key in theirs:
            assert_same_batch(ours[key], theirs[key], f"{where}[{key!r}]")
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs), \
            f"{where}: {type(ours).__name__} of {len(ours)}, torch: {type(theirs).__name__}"
        for i, (o, t) in enumerate(zip(ours, theirs)):
            assert_same_batch(o, t, f"{where}[{i}]")
    else:
        assert ours == theirs, where


def as_lib(lib, value):
    """``value`` with each numpy array made a tensor of ``lib`` (the sample a dataset of eg
    or of torch tensors would give)."""
    if isinstance(value, np.ndarray):
        return lib.tensor(value)
    if isinstance(value, tuple):
        return type(value)(*(as_lib(lib, v) for v in value)) if hasattr(value, "_fields") \
            else tuple(as_lib(lib, v) for v in value)
    if isinstance(value, list):
        return [as_lib(lib, v) for v in value]
    if isinstance(value, dict):
        return {k: as_lib(lib, v) for k, v in value.items()}
    return value


rng = np.random.default_rng(7)
SAMPLES = {
    "image and int label": [(rng.normal(size=(1, 4, 4)).astype(np.float32), int(i % 3))
                            for i in range(5)],
    "float64 array and float": [(rng.normal(size=3), float(i) / 3) for i in range(4)],
    "bools and strings": [(bool(i % 2), f"s{i}") for i in range(3)],
    "numpy scalars": [(np.float32(i), np.int32(i), np.int64(-i)) for i in range(4)],
    "int arrays": [rng.integers(0, 9, size=(2, 3)).astype(np.int32) for _ in range(3)],
    "dicts": [{"x": rng.normal(size=2).astype(np.float32), "y": i, "name": "a"}
              for i in range(3)],
    "named tuples": [Point(rng.normal(size=2), i) for i in range(3)],
    "lists": [[i, [float(i), 2 * i]] for i in range(3)],
    "plain ints": list(range(6)),
}


@pytest.mark.parametrize("tensors", [False, True], ids=["numpy", "tensors"])
@pytest.mark.parametrize("case", SAMPLES)
def test_default_collate_matches_torch(case, tensors):
    samples = SAMPLES[case]
    ours = default_collate([as_lib(eg, s) if tensors else s for s in samples])
    theirs = tdata.default_collate([as_lib(torch, s) if tensors else s for s in samples])
    assert_same_batch(ours, theirs, case)


def test_collated_tensors_are_new_cpu_tensors_even_from_another_device():
    with eg.device("sim:0"):
        samples = [eg.ones(3, requires_grad=True) for _ in range(2)]
    batch = default_collate(samples)
    assert batch.device.name == "cpu:0" and not batch.requires_grad and batch.shape == (2, 3)
    batch.numpy()[0, 0] = 7                          # owns its memory: the samples stay
    assert samples[0].numpy()[0] == 1


def images_and_labels():
    """A TensorDataset of ten float32 images and their int64 labels (torch's targets)."""
    images = rng.normal(size=(10, 1, 3, 3)).astype(np.float32)
    return TensorDataset(eg.tensor(images), eg.tensor(rng.integers(0, 4, size=10)))


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True),
                                                  (5, True), (10, False), (12, False),
                                                  (12, True)])
def test_dataloader_batches_and_length_match_torch(batch_size, drop_last):
    ours_set = images_and_labels()
    theirs_set = tdata.TensorDataset(*(torch.tensor(t.numpy()) for t in ours_set.tensors))
    ours = DataLoader(ours_set, batch_size=batch_size, drop_last=drop_last)
    theirs = tdata.DataLoader(theirs_set, batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs) and ours.dataset is ours_set
    got, want = list(ours), list(theirs)
    assert len(got) == len(want) == len(ours)
    for i, (o, t) in enumerate(zip(got, want)):
        assert_same_batch(o, t, f"batch {i}")
    for i, (o, t) in enumerate(zip(ours_set[3], theirs_set[3])):   # one sample: row 3
        np.testing.assert_array_equal(o.numpy(), t.numpy(), err_msg=f"sample 3, tensor {i}")


def test_shuffle_draws_a_new_order_each_epoch_reproducibly_with_manual_seed():
    labels = np.arange(23)
    loader = DataLoader(TensorDataset(labels), batch_size=5, shuffle=True)

    def epochs(count):
        return [np.concatenate([y.numpy() for (y,) in loader]) for _ in range(count)]
    eg.manual_seed(4)
    first = epochs(3)
    for order in first:                              # each epoch: every sample once
        np.testing.assert_array_equal(np.sort(order), labels)
    assert not np.array_equal(first[0], first[1]) and not np.array_equal(first[1], first[2])
    assert not np.array_equal(first[0], labels)
    eg.manual_seed(4)
    again = epochs(3)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    eg.manual_seed(5)
    assert not np.array_equal(epochs(1)[0], first[0])
    dropping = DataLoader(TensorDataset(labels), batch_size=5, shuffle=True, drop_last=True)
    batches = [y.numpy() for (y,) in dropping]
    assert len(batches) == len(dropping) == 4 and {len(b) for b in batches} == {5}
    assert len(set(np.concatenate(batches))) == 20


def test_worker_and_pinning_options_of_the_mnist_example_give_the_same_batches():
    dataset = images_and_labels()
    plain = list(DataLoader(dataset, batch_size=4))
    options = {"num_workers": 1, "persistent_workers": True, "pin_memory": True}
    with_options = list(DataLoader(dataset, batch_size=4, **options))
    assert len(with_options) == len(plain) == 3
    for got, want in zip(with_options, plain):
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())


def test_tensor_dataset_takes_numpy_arrays_keeps_their_dtypes_and_shares_memory():
    images = np.zeros((4, 2), dtype=np.float64)
    labels = np.array([3, 1, 4, 1])
    dataset = TensorDataset(images, labels, [0.5, 1.5, 2.5, 3.5])
    assert len(dataset) == 4 and isinstance(dataset.tensors[0], eg.Tensor)
    x, y, z = next(iter(DataLoader(dataset, batch_size=4)))
    # torch: from_numpy keeps float64 and int64; a list of Python floats is float32
    want = tdata.default_collate([tuple(torch.as_tensor(t)[i] for t in (
        images, labels, torch.tensor([0.5, 1.5, 2.5, 3.5]))) for i in range(4)])
    assert_same_batch([x, y, z], want)
    images[2, 1] = 9.0                               # no copy: the dataset sees the change
    assert dataset[2][0].numpy()[1] == 9.0


def test_tensor_dataset_errors_name_the_sizes():
    with pytest.raises(ValueError, match=r"first dimensions.*\(5, 2\), \(4,\)"):
        TensorDataset(np.zeros((5, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="0-d"):
        TensorDataset(np.zeros(3), np.float64(1.0))
    with pytest.raises(ValueError, match="at least one"):
        TensorDataset()


class Squares(Dataset):
    """A map-style dataset as PyTorch tutorials write them."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        return {"x": np.full(2, index, dtype=np.float32), "y": index * index}


def test_custom_dataset_subset_and_collate_fn():
    subset = Subset(Squares(10), [7, 2, 9])
    assert len(subset) == 3 and subset[1]["y"] == 4
    (batch,) = DataLoader(subset, batch_size=3)
    assert_same_batch(batch, tdata.default_collate([Squares(10)[i] for i in (7, 2, 9)]))
    totals = DataLoader(subset, batch_size=2, collate_fn=lambda s: sum(d["y"] for d in s))
    assert list(totals) == [49 + 4, 81]
    with pytest.raises(NotImplementedError, match="__getitem__"):
        Dataset()[0]
    with pytest.raises(NotImplementedError, match="__len__"):
        len(DataLoader(Dataset()))


@pytest.mark.parametrize("lengths", [[3, 7], [0.5, 0.5], [0.3, 0.3, 0.4], [0.33, 0.33, 0.34],
                                     [0.1, 0.9], [1.0]])
def test_random_split_lengths_match_torch_and_the_subsets_partition_the_data(lengths):
    ours = random_split(Squares(10), lengths)
    theirs = tdata.random_split(range(10), lengths)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    taken = sorted(i for s in ours for i in s.indices)
    assert taken == list(range(10))
    assert all(isinstance(s, Subset) and isinstance(i, int) for s in ours for i in s.indices)


def test_random_split_is_reproducible_with_manual_seed_and_explains_bad_lengths():
    eg.manual_seed(2)
    first = [s.indices for s in random_split(range(12), [4, 8])]
    eg.manual_seed(2)
    assert [s.indices for s in random_split(range(12), [4, 8])] == first
    assert first[0] + first[1] != list(range(12))    # shuffled, not cut in order
    with pytest.raises(ValueError, match=r"add up to 11, but the dataset has 12 samples"):
        random_split(range(12), [4, 7])
    with pytest.raises(ValueError, match="between 0 and 1"):
        random_split(range(12), [1.5, -0.5])
    with pytest.warns(UserWarning, match="empty"):
        random_split(range(2), [0.9, 0.05, 0.05])


def test_dataloader_refuses_what_it_does_not_do_and_says_what_to_do():
    dataset = Squares(4)
    for option in ({"sampler": [0, 1]}, {"batch_sampler": [[0, 1]]},
                   {"generator": object()}, {"worker_init_fn": print}):
        name = next(iter(option))
        with pytest.raises(TypeError, match=f"{name} not supported.*Subset"):
            DataLoader(dataset, **option)
    for bad in (0, None, 2.5, True):
        with pytest.raises(ValueError, match="batch_size must be a whole number"):
            DataLoader(dataset, batch_size=bad)
    with pytest.raises(ValueError, match="num_workers must be 0 or more"):
        DataLoader(dataset, num_workers=-1)
    with pytest.raises(ValueError, match="persistent_workers.*num_workers > 0"):
        DataLoader(dataset, persistent_workers=True)
    with pytest.raises(TypeError, match="__getitem__ and __len__"):
        DataLoader(iter([1, 2]))


def test_default_collate_errors_name_the_problem():
    with pytest.raises(eg.errors.ShapeError, match=r"different shapes \[\(2,\), \(3,\)\]"):
        default_collate([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match=r"different numbers of items \(\[1, 2\]\)"):
        default_collate([(1, 2), (3,)])
    with pytest.raises(TypeError, match="holds a NoneType.*collate_fn"):
        default_collate([None, None])
    with pytest.raises(TypeError, match="dtype <U1"):
        default_collate([np.array(["a"]), np.array(["b"])])


def test_concat_dataset_indexes_across_its_parts_as_torch():
    first = TensorDataset(np.arange(3.0), np.arange(3))
    second = TensorDataset(np.arange(10.0, 12.0), np.arange(10, 12))
    joined = eg.utils.data.ConcatDataset([first, second])
    theirs = torch.utils.data.ConcatDataset([
        torch.utils.data.TensorDataset(torch.arange(3.0), torch.arange(3)),
        torch.utils.data.TensorDataset(torch.arange(10.0, 12.0), torch.arange(10, 12))])
    assert len(joined) == len(theirs) == 5
    assert joined.cumulative_sizes == theirs.cumulative_sizes == [3, 5]
    for i in list(range(5)) + [-1, -5]:
        assert [t.item() for t in joined[i]] == [t.item() for t in theirs[i]]
    assert len(first + second) == 5 and (first + second)[3][0].item() == 10.0
    batches = [x.tolist() for x, _ in eg.utils.data.DataLoader(joined, batch_size=2)]
    assert batches == [[0.0, 1.0], [2.0, 10.0], [11.0]]
    with pytest.raises(IndexError, match="index 5 is out of range for 5 samples"):
        joined[5]
    with pytest.raises(TypeError, match=r"item 1 \(int\) is not a map-style dataset"):
        eg.utils.data.ConcatDataset([first, 3])
