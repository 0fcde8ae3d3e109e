"""TFRecord files, byte for byte as TensorFlow writes them.

A TFRecord file is records one after the other, each framed so that a reader can find where
it ends and check that nothing was damaged::

    uint64  length                  (little-endian)
    uint32  masked CRC32C of those 8 length bytes
    bytes   data[length]
    uint32  masked CRC32C of the data

CRC32C is the CRC with Castagnoli's polynomial (the one in iSCSI and ext4). TF "masks" it
(rotate right by 15 bits, add a constant) because a CRC of data that itself holds CRCs is
weak. TensorBoard's event files are TFRecord files of ``Event`` messages; a training set is
usually TFRecord files of ``tf.train.Example`` messages. edugraph writes and reads the framing
only: a record is whatever bytes you give it (``array.tobytes()``), and
``eg.io.decode_raw`` turns them back into numbers.
"""
import os
import struct

import numpy as np

from ..errors import DataLossError
from ..tensor import Tensor

__all__ = ["TFRecordWriter", "tf_record_iterator", "crc32c", "masked_crc32c"]


def _crc32c_table():
    """CRC32C of each byte value: the reflected Castagnoli polynomial 0x82F63B78."""
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data):
    """The CRC32C of ``data`` (bytes), one table look-up per byte: crc32c(b"123456789") is
    0xE3069283, the standard check value."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data):
    """TF's masked CRC32C: rotated right by 15 bits, plus 0xA282EAD8 (modulo 2³²)."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def _record_bytes(record):
    """A record to write as bytes: bytes itself, or a uint8 tensor or array (a record read
    back from a TFRecordDataset)."""
    if isinstance(record, (bytes, bytearray, memoryview)):
        return bytes(record)
    array = record.numpy() if isinstance(record, Tensor) else record
    if isinstance(array, np.ndarray) and array.dtype == np.uint8 and array.ndim == 1:
        return array.tobytes()
    raise TypeError(f"TFRecordWriter.write takes a record as bytes, not {type(record).__name__}"
                    ". Turn an array into bytes first: writer.write(array.tobytes()), and read "
                    "it back with eg.io.decode_raw(record, dtype).")


class TFRecordWriter:
    """Writes records to a TFRecord file (``tf.io.TFRecordWriter``)::

        with eg.io.TFRecordWriter("train-0.tfrecord") as writer:
            writer.write(image.astype(np.float32).tobytes())
    """

    def __init__(self, path, options=None):
        if options not in (None, "", "NONE"):
            raise NotImplementedError(
                f"TFRecordWriter: compression ({options!r}) is left out; write the file "
                "uncompressed (options=None).")
        self.path = os.fspath(path)
        self._file = open(self.path, "wb")

    def write(self, record):
        data = _record_bytes(record)
        length = struct.pack("<Q", len(data))
        self._file.write(length + struct.pack("<I", masked_crc32c(length)) + data +
                         struct.pack("<I", masked_crc32c(data)))

    def flush(self):
        self._file.flush()

    def close(self):
        self._file.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tf_record_iterator(path):
    """The records of a TFRecord file as bytes, each checked against its CRCs (TF1's
    ``tf.io.tf_record_iterator``). A damaged or cut-off file raises ``DataLossError`` naming
    the file and the byte where the bad record starts."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        size, offset = os.fstat(f.fileno()).st_size, 0
        while offset < size:
            header = f.read(12)
            if len(header) < 12:
                raise _damaged(path, offset, "truncated", f"the file ends {len(header)} bytes "
                               "into the record's 12-byte header")
            length, length_crc = struct.unpack("<QI", header)
            if masked_crc32c(header[:8]) != length_crc:
                raise _damaged(path, offset, "corrupted",
                               "the CRC32C of the length field does not match")
            if offset + 16 + length > size:     # (read no more than the file holds)
                raise _damaged(path, offset, "truncated", f"the record says it holds {length} "
                               f"bytes, but the file ends {size - offset - 12} bytes after its "
                               "header")
            data, (data_crc,) = f.read(length), struct.unpack("<I", f.read(4))
            if masked_crc32c(data) != data_crc:
                raise _damaged(path, offset, "corrupted",
                               f"the CRC32C of its {length} bytes of data does not match")
            yield data
            offset += 16 + length


def _damaged(path, offset, kind, why):
    """TF's words ("corrupted record at 12"), with the file and the reason."""
    return DataLossError(f"{kind} record at byte {offset} of '{path}': {why}. The file is "
                         "damaged, or it is not a TFRecord file.")
