"""TF's file formats: TFRecord files (framing and masked CRC32C byte for byte as TF writes
them, checked against the tensorboard package's own writer), the input pipeline that reads
them (``Dataset.list_files``, ``interleave``, ``TFRecordDataset``), and TensorBoard's event
files and GraphDef, read back with TensorBoard's own ``EventAccumulator``."""
import struct

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import DataLossError, InvalidArgumentError
from edugraph.io.tfrecord import crc32c, masked_crc32c

RECORDS = [b"", b"x", bytes(range(256)) * 5, np.arange(6, dtype=np.float32).tobytes()]


def tensorboard_module(name):
    pytest.importorskip("tensorboard")
    import importlib
    return importlib.import_module(name)


def event_accumulator(logdir):
    accumulator = tensorboard_module(
        "tensorboard.backend.event_processing.event_accumulator").EventAccumulator(str(logdir))
    accumulator.Reload()
    return accumulator


def write_records(path, records):
    with eg.io.TFRecordWriter(str(path)) as writer:
        for record in records:
            writer.write(record)
    return str(path)


# ----------------------------------------------------------------------------- TFRecord files
def test_crc32c_is_the_castagnoli_crc_and_its_mask_is_tfs():
    assert crc32c(b"123456789") == 0xE3069283          # the standard check value
    assert crc32c(b"") == 0
    tensorboard_crc = tensorboard_module(
        "tensorboard.compat.tensorflow_stub.pywrap_tensorflow").masked_crc32c
    for data in RECORDS:
        assert masked_crc32c(data) == tensorboard_crc(data)


def test_writer_writes_the_bytes_tensorboards_record_writer_writes(tmp_path):
    record_writer = tensorboard_module("tensorboard.summary.writer.record_writer").RecordWriter
    with open(tmp_path / "theirs", "wb") as f:
        theirs = record_writer(f)
        for record in RECORDS:
            theirs.write(record)
    ours = write_records(tmp_path / "ours", RECORDS)
    assert open(ours, "rb").read() == (tmp_path / "theirs").read_bytes()
    assert list(eg.io.tf_record_iterator(ours)) == RECORDS


def test_reader_reads_an_event_file_that_tensorboard_wrote(tmp_path):
    writer = tensorboard_module(
        "tensorboard.summary.writer.event_file_writer").EventFileWriter(str(tmp_path))
    writer.close()
    event_pb2 = tensorboard_module("tensorboard.compat.proto.event_pb2")
    [events_file] = tmp_path.iterdir()
    [first] = [event_pb2.Event.FromString(r) for r in eg.io.tf_record_iterator(events_file)]
    assert first.file_version == "brain.Event:2"


@pytest.mark.parametrize("damage, offset, message", [
    (lambda data: data[:-3], 33, "truncated record at byte 33 .*file ends"),
    (lambda data: data[:35], 33, "truncated record at byte 33 .*12-byte header"),
    (lambda data: data[:50] + bytes([data[50] ^ 1]) + data[51:], 33, "corrupted record at "
     "byte 33 .*CRC32C of its 25 bytes of data"),
    (lambda data: data[:33] + bytes([data[33] ^ 4]) + data[34:], 33, "corrupted record at "
     "byte 33 .*CRC32C of the length"),
    (lambda data: data[:17] + b"\xff\xff\xff\x7f" + data[21:], 0, "corrupted record at byte "
     "0 .*CRC32C of its 17 bytes"),
])
def test_a_damaged_file_is_refused_naming_the_file_and_the_record(tmp_path, damage, offset,
                                                                  message):
    path = write_records(tmp_path / "data.tfrecord", [b"a" * 17, b"b" * 25])
    with open(path, "rb") as f:
        data = f.read()
    assert len(data) == 33 + 41
    with open(path, "wb") as f:
        f.write(damage(data))
    records = eg.io.tf_record_iterator(path)
    if offset:
        assert next(records) == b"a" * 17               # the good record before it
    with pytest.raises(DataLossError, match=message) as caught:
        next(records)
    assert "data.tfrecord" in str(caught.value)


def test_writer_takes_bytes_and_says_how_to_make_them(tmp_path):
    with eg.io.TFRecordWriter(str(tmp_path / "data.tfrecord")) as writer:
        with pytest.raises(TypeError, match=r"array.tobytes\(\)"):
            writer.write(np.ones(3))


def test_decode_raw_reads_the_numbers_back_eagerly_and_in_a_graph():
    values = np.array([[1.5, -2.0], [3.0, 4.25]], np.float32)
    np.testing.assert_array_equal(eg.io.decode_raw(values[0].tobytes(), eg.float32).numpy(),
                                  values[0])
    rows = eg.tensor(np.frombuffer(values.tobytes(), np.uint8).reshape(2, 8))
    np.testing.assert_array_equal(eg.io.decode_raw(rows, eg.float32).numpy(), values)
    big_endian = values[0].astype(">f4").tobytes()
    np.testing.assert_array_equal(
        eg.io.decode_raw(big_endian, eg.float32, little_endian=False).numpy(), values[0])
    with pytest.raises(ValueError, match="7 bytes, which is not a multiple of 4"):
        eg.io.decode_raw(b"1234567", eg.float32)
    with pytest.raises(TypeError, match="reads bytes"):
        eg.io.decode_raw(eg.tensor([1.0, 2.0]), eg.float32)
    with eg.Graph().as_default():
        record = eg.placeholder(eg.uint8, shape=(None, 8))
        decoded = eg.io.decode_raw(record, eg.float32)
        assert decoded.shape.as_list() == [None, 2]
        with eg.Session() as sess:
            np.testing.assert_array_equal(sess.run(decoded, {record: rows.numpy()}), values)
        with pytest.raises(ValueError, match="6 bytes, which is not a multiple of 4"):
            eg.io.decode_raw(eg.placeholder(eg.uint8, shape=(6,)), eg.float32)


# ----------------------------------------------------------------------------- the pipeline
def test_list_files_sorts_then_shuffles_each_pass(tmp_path):
    for name in ("b.tfrecord", "a.tfrecord", "c.tfrecord", "notes.txt"):
        (tmp_path / name).write_bytes(b"")
    pattern = str(tmp_path / "*.tfrecord")
    names = [str(tmp_path / n) for n in ("a.tfrecord", "b.tfrecord", "c.tfrecord")]
    in_order = eg.data.Dataset.list_files(pattern, shuffle=False)
    assert [f.numpy().item() for f in in_order] == names
    shuffled = eg.data.Dataset.list_files(pattern, seed=3)
    passes = [[f.numpy().item() for f in shuffled] for _ in range(6)]
    assert all(sorted(p) == names for p in passes) and len({tuple(p) for p in passes}) > 1
    again = eg.data.Dataset.list_files(pattern, seed=3)
    assert [[f.numpy().item() for f in again] for _ in range(6)] == passes
    with pytest.raises(InvalidArgumentError, match="No files matched pattern"):
        eg.data.Dataset.list_files(str(tmp_path / "*.csv"))


def test_interleave_takes_blocks_in_turns_in_tfs_order():
    """The example of TF's documentation of ``interleave``, and the same order when each
    open dataset is read ahead in a thread."""
    def repeated(x):
        return eg.data.Dataset.from_tensor_slices(np.full(6, x.numpy()))

    expected = [1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4,
                5, 5, 5, 5, 5, 5]
    for parallel in (None, 2):
        dataset = eg.data.Dataset.range(1, 6).interleave(
            repeated, cycle_length=2, block_length=4, num_parallel_calls=parallel)
        assert [int(x) for x in dataset] == expected
    with pytest.raises(TypeError, match="must return a Dataset"):
        list(eg.data.Dataset.range(2).interleave(lambda x: [x]))


def test_tfrecord_dataset_reads_files_one_after_the_other_or_in_turns(tmp_path):
    files = [write_records(tmp_path / f"part-{k}.tfrecord",
                           [np.array([k, i], np.int32).tobytes() for i in range(k + 2)])
             for k in range(3)]

    def numbers(dataset):
        return [eg.io.decode_raw(r, eg.int32).numpy().tolist() for r in dataset]

    sequential = [[k, i] for k in range(3) for i in range(k + 2)]
    assert numbers(eg.data.TFRecordDataset(files)) == sequential
    assert numbers(eg.data.TFRecordDataset(files[0])) == sequential[:2]
    in_turns = numbers(eg.data.TFRecordDataset(files, num_parallel_reads=2))
    assert in_turns == [[0, 0], [1, 0], [0, 1], [1, 1], [1, 2], [2, 0], [2, 1], [2, 2], [2, 3]]
    record = next(iter(eg.data.TFRecordDataset(files)))
    assert record.dtype == np.uint8 and record.shape == (8,)
    listed = eg.data.Dataset.list_files(str(tmp_path / "*.tfrecord"), shuffle=False)
    batches = eg.data.TFRecordDataset(listed, num_parallel_reads=3).batch(4)
    first = next(iter(batches))
    assert first.shape == (4, 8)                       # records of one length batch
    np.testing.assert_array_equal(eg.io.decode_raw(first, eg.int32).numpy(),
                                  [[0, 0], [1, 0], [2, 0], [0, 1]])
    stopped_early = eg.data.TFRecordDataset(files, num_parallel_reads=3).take(1)
    assert len(list(stopped_early)) == 1               # (the reading threads are stopped)


def test_tfrecord_dataset_names_a_damaged_file(tmp_path):
    path = write_records(tmp_path / "bad.tfrecord", [b"abc"])
    with open(path, "r+b") as f:
        f.seek(13)
        f.write(b"X")
    with pytest.raises(DataLossError, match=r"byte 0 of '.*bad.tfrecord'"):
        list(eg.data.TFRecordDataset([path], num_parallel_reads=2))


# ----------------------------------------------------------------------------- TensorBoard
def test_scalar_summaries_and_the_graph_read_back_with_tensorboard(tmp_path):
    pytest.importorskip("tensorboard")
    with eg.Graph().as_default() as graph:
        w = eg.Variable(1.0, name="w")
        with eg.name_scope("train"):
            loss = eg.square(w, name="loss")
            eg.summary.scalar("loss", loss)
        eg.summary.scalar("w", w)
        merged = eg.summary.merge_all()
        step = eg.train.GradientDescentOptimizer(0.1).minimize(loss)
        with eg.Session() as sess, eg.summary.FileWriter(str(tmp_path), sess.graph) as writer:
            written = [op.name for op in graph.get_operations()]    # (the graph as it is now)
            sess.run(eg.global_variables_initializer())
            for t in range(3):
                summary, _ = sess.run([merged, step])
                assert isinstance(summary, bytes)
                writer.add_summary(summary, t)
    accumulator = event_accumulator(tmp_path)
    assert sorted(accumulator.Tags()["scalars"]) == ["train/loss", "w"]
    assert [(e.step, round(e.value, 6)) for e in accumulator.Scalars("train/loss")] == \
        [(0, 1.0), (1, 0.64), (2, 0.4096)]
    drawn = {node.name: node for node in accumulator.Graph().node}
    assert list(drawn) == written and "w_1" in written     # (the scalar "w": w_1, as in TF)
    assert drawn["train/loss"].op == "Square" and list(drawn["train/loss"].input) == ["w"]


def test_graph_def_has_tfs_inputs_attributes_and_constant_values():
    pytest.importorskip("tensorboard")
    with eg.Graph().as_default() as graph:
        a = eg.constant([[1.0, 2.0]], name="a")
        x = eg.placeholder(eg.float32, shape=(None, 2), name="x")
        total = eg.reduce_sum(a * x, axis=1, name="total")
        with eg.control_dependencies([total]):
            eg.identity(x, name="after")
    nodes = {node.name: node for node in graph.as_graph_def().node}
    assert nodes["x"].op == "Placeholder"
    assert [d.size for d in nodes["x"].attr["shape"].shape.dim] == [-1, 2]
    assert nodes["a"].attr["dtype"].type == 1                               # DT_FLOAT
    value = nodes["a"].attr["value"].tensor
    np.testing.assert_array_equal(np.frombuffer(value.tensor_content, np.float32), [1.0, 2.0])
    assert [d.size for d in value.tensor_shape.dim] == [1, 2]
    assert list(nodes["total"].input) == ["Mul"] and nodes["total"].attr["axis"].i == 1
    assert [d.size for d in nodes["total"].attr["_output_shapes"].list.shape[0].dim] == [-1]
    assert list(nodes["after"].input) == ["x", "^total"]


def test_tf2_writer_and_the_summaries_refusals(tmp_path):
    pytest.importorskip("tensorboard")
    assert eg.summary.scalar("lost", 1.0, step=0) is False        # no writer: nothing (TF)
    with eg.summary.create_file_writer(str(tmp_path)).as_default():
        for epoch in range(3):
            assert eg.summary.scalar("accuracy", eg.tensor(0.25 * epoch), step=epoch)
        with pytest.raises(ValueError, match="no step"):
            eg.summary.scalar("accuracy", 1.0)
        with pytest.raises(ValueError, match="needs a scalar"):
            eg.summary.scalar("accuracy", [1.0, 2.0], step=3)
    assert [(e.step, e.value) for e in event_accumulator(tmp_path).Scalars("accuracy")] == \
        [(0, 0.0), (1, 0.25), (2, 0.5)]

    @eg.function
    def traced(x):
        eg.summary.scalar("x", x, step=0)
        return x
    with pytest.raises(NotImplementedError, match="write it after the call"):
        traced(eg.tensor(1.0))
    with eg.Graph().as_default():
        with pytest.raises(ValueError, match="needs a scalar"):
            eg.summary.scalar("v", eg.ones((3,)))
        first = eg.summary.scalar("loss", eg.constant(1.0))
        with pytest.raises(ValueError, match="Duplicate tag loss"):
            eg.summary.merge([first, eg.summary.scalar("loss", eg.constant(2.0))])
        writer = eg.summary.FileWriter(str(tmp_path / "tf1"))
        with pytest.raises(TypeError, match="add_summary takes a summary"):
            writer.add_summary(0.5, 1)      # the slide's commented-out line
        writer.close()
    with pytest.raises(AttributeError, match="scalar summaries only"):
        eg.summary.histogram
    with pytest.raises(RuntimeError, match="not compatible with eager"):
        eg.summary.merge_all()


def test_the_missing_tensorboard_package_is_named_with_its_install_command(monkeypatch):
    import sys
    monkeypatch.setitem(sys.modules, "tensorboard.compat.proto.summary_pb2", None)
    with pytest.raises(ImportError, match=r"pip install 'edugraph\[tensorboard\]'"):
        eg.summary.FileWriter("never-made")


def test_a_record_is_framed_as_tf_documents_it(tmp_path):
    """The framing spelled out: length, masked CRC of the length, data, masked CRC of data."""
    path = write_records(tmp_path / "one", [b"hello"])
    with open(path, "rb") as f:
        data = f.read()
    length, length_crc = struct.unpack("<QI", data[:12])
    assert (length, data[12:17]) == (5, b"hello") and len(data) == 21
    assert length_crc == masked_crc32c(data[:8])
    assert struct.unpack("<I", data[17:])[0] == masked_crc32c(b"hello")
