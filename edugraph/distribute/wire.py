"""How an array crosses a connection: data, never code.

A frame is a small header, then the array's raw bytes::

    b"EGDA"   dtype code   ndim   ndim × dimension      data
    4 bytes   1 byte       1 byte 8 bytes each (little)  prod(shape) × itemsize bytes

A worker that stops because of an error sends its last words first, so that the others can
name the cause: the same frame of uint8 text (at most ``MAX_ABORT`` bytes) under the magic
``b"EGDX"``.

Nothing is unpickled, ever: Python's pickle can run any code its sender wrote, so a worker that
unpickled what arrives on its port would run a stranger's program. The reader checks each part
before it reads the next (the magic, a known dtype, at most ``MAX_NDIM`` dimensions, a data size
below the limit) and refuses anything else with an error that says what arrived.
"""
import struct

import numpy as np

from .communicator import ProtocolError

__all__ = ["MAGIC", "ABORT", "MAX_NDIM", "MAX_ABORT", "encode_header", "encode_abort",
           "parse_header", "header_size", "FIXED"]

MAGIC = b"EGDA"
ABORT = b"EGDX"                         # a worker's last words: why it stops
MAX_NDIM = 8
MAX_ABORT = 1024
FIXED = struct.Struct("<4sBB")          # magic, dtype code, ndim
_DIM = struct.Struct("<Q")
# The dtypes that may cross, little-endian on the wire whatever the machine.
_DTYPES = {1: np.dtype("<f8"), 2: np.dtype("<f4"), 3: np.dtype("<f2"), 4: np.dtype("<i8"),
           5: np.dtype("<i4"), 6: np.dtype("u1")}
_CODES = {dtype: code for code, dtype in _DTYPES.items()}
_PICKLE = 0x80                          # the first byte of a pickle (protocol 2 and later)


def encode_header(array):
    """The header of ``array``'s frame, and the array as contiguous little-endian data."""
    array = np.asarray(array)
    wire_dtype = array.dtype.newbyteorder("<") if array.dtype.itemsize > 1 else array.dtype
    if wire_dtype not in _CODES:
        raise TypeError(f"Only arrays of {', '.join(str(d) for d in _CODES)} cross between "
                        f"workers, not {array.dtype}; cast it first.")
    if array.ndim > MAX_NDIM:
        raise ValueError(f"An array sent between workers has at most {MAX_NDIM} dimensions, "
                         f"not {array.ndim}; reshape it first.")
    data = np.ascontiguousarray(array, dtype=wire_dtype)
    header = FIXED.pack(MAGIC, _CODES[wire_dtype], array.ndim) + \
        b"".join(_DIM.pack(d) for d in array.shape)
    return header, data


def encode_abort(reason):
    """The header and data of an abort frame carrying ``reason`` (shortened to fit)."""
    text = np.frombuffer(reason.encode("utf-8", "replace")[:MAX_ABORT], np.uint8)
    header, data = encode_header(text)
    return ABORT + header[len(ABORT):], data


def header_size(fixed, who):
    """Check the fixed part of a header (magic, dtype, ndim); return the size of the rest."""
    if len(fixed) < FIXED.size:
        raise ProtocolError(f"Refused a message from {who}: a frame header needs {FIXED.size} "
                            f"bytes, got {len(fixed)}.")
    magic, code, ndim = FIXED.unpack(fixed[:FIXED.size])
    if magic not in (MAGIC, ABORT):
        looks = " It starts like a Python pickle, which edugraph never loads from a " \
            "connection (unpickling runs code the sender chose)." if fixed[0] == _PICKLE else ""
        raise ProtocolError(f"Refused a message from {who}: it is not an edugraph array frame "
                            f"(it starts with {bytes(fixed[:4])!r}, not {MAGIC!r}).{looks}")
    if code not in _DTYPES:
        raise ProtocolError(f"Refused a message from {who}: unknown dtype code {code}.")
    if ndim > MAX_NDIM:
        raise ProtocolError(f"Refused a message from {who}: {ndim} dimensions (at most "
                            f"{MAX_NDIM}).")
    return ndim * _DIM.size


def parse_header(header, max_bytes, who):
    """(dtype, shape, data size in bytes) of a complete header, checked against ``max_bytes``."""
    ndim_bytes = header_size(header[:FIXED.size], who)
    if len(header) != FIXED.size + ndim_bytes:
        raise ProtocolError(f"Refused a message from {who}: its header has {len(header)} bytes, "
                            f"its dimensions need {FIXED.size + ndim_bytes}.")
    magic, code, ndim = FIXED.unpack(header[:FIXED.size])
    if magic == ABORT:
        max_bytes = min(max_bytes, MAX_ABORT)
    shape = tuple(_DIM.unpack_from(header, FIXED.size + i * _DIM.size)[0] for i in range(ndim))
    dtype = _DTYPES[code]
    nbytes = dtype.itemsize
    for d in shape:
        nbytes *= d
        if nbytes > max_bytes:            # (checked as it grows: no overflow, no allocation)
            raise ProtocolError(f"Refused a message from {who}: an array of shape {shape} "
                                f"({dtype}) is over the {max_bytes}-byte limit per message.")
    return dtype, shape, nbytes
