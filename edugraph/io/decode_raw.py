"""``eg.io.decode_raw``: bytes read back as numbers (``tf.io.decode_raw``).

``writer.write(image.astype(np.float32).tobytes())`` stores an image's 4-byte floats one after
the other; ``decode_raw(record, eg.float32)`` reads them again. It is a view of the same bytes
in another dtype, so nothing is converted: the dtype must be the one the bytes were written in.
"""
import sys

import numpy as np

from ..errors import ShapeError
from ..ops.base import Op, apply
from ..tensor import Tensor, as_dtype

__all__ = ["decode_raw"]


class DecodeRaw(Op):
    """The last axis of a uint8 tensor (bytes) read as numbers of ``out_type``."""

    name, type_name, differentiable = "decode_raw", "DecodeRaw", False

    def __init__(self, out_type, little_endian):
        self.out_type, self.little_endian = out_type, little_endian

    def forward(self, xp, data):
        values = xp.ascontiguousarray(data).view(self.out_type)
        if self.little_endian != (sys.byteorder == "little"):
            values = values.byteswap()          # written in the other byte order
        return values

    def explain_failure(self, shapes):
        return (f"decode_raw: the input has {shapes[0][-1]} bytes, which is not a multiple of "
                f"{self.out_type.itemsize}, the size of {self.out_type.name}: were the bytes "
                "written in another dtype?")

    def static_shape(self, data):
        if not data.shape.rank_known or data.shape[-1] is None:
            return data.shape, self.out_type
        if data.shape[-1] % self.out_type.itemsize:
            raise ShapeError(self.explain_failure([data.shape]))
        return (*data.shape[:-1], data.shape[-1] // self.out_type.itemsize), self.out_type


def decode_raw(input_bytes, out_type, little_endian=True, name=None):
    """``input_bytes`` (bytes, or a uint8 tensor whose last axis is the bytes, such as a
    record of ``eg.data.TFRecordDataset`` or a batch of equally long ones) as a tensor of
    ``out_type``: the last axis holds n / itemsize numbers instead of n bytes."""
    if isinstance(input_bytes, (bytes, bytearray, memoryview)):
        input_bytes = Tensor(np.frombuffer(input_bytes, np.uint8).copy())
    if not isinstance(input_bytes, Tensor) or input_bytes.dtype != np.uint8 or \
            input_bytes.shape == ():
        what = f"a {input_bytes.dtype} tensor of shape {input_bytes.shape}" if \
            isinstance(input_bytes, Tensor) else type(input_bytes).__name__
        raise TypeError(f"decode_raw reads bytes: give it bytes or a uint8 tensor of them (the "
                        f"bytes along its last axis), not {what}.")
    return apply(DecodeRaw(as_dtype(out_type), little_endian), input_bytes, name=name)
