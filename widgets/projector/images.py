"""Small images (e.g. MNIST digits) shown for hovered and selected points.

Images are encoded as PNG here with zlib alone, so the projector needs no imaging
library; a 28 x 28 digit is a few hundred bytes.
"""
import base64
import struct
import zlib

import numpy as np


def to_images(images, num_points):
    """Check and convert images to uint8 ``(n, height, width)`` or ``(n, height, width, 3)``.

    Floats are taken to be in [0, 1]; flat rows of a square number of pixels
    (784 -> 28 x 28) are reshaped.
    """
    if images is None:
        return None
    if hasattr(images, "numpy"):
        images = images.numpy()
    array = np.asarray(images)
    if len(array) != num_points:
        raise ValueError(f"{len(array)} images given for {num_points} vectors; "
                         "give one image per vector.")
    if array.ndim == 2:
        side = int(round(array.shape[1] ** 0.5))
        if side * side != array.shape[1]:
            raise ValueError(f"flat images of {array.shape[1]} pixels are not square; "
                             "give them as (n, height, width).")
        array = array.reshape(len(array), side, side)
    if array.ndim not in (3, 4) or (array.ndim == 4 and array.shape[3] != 3):
        raise ValueError(f"images must be (n, h, w) greyscale or (n, h, w, 3) RGB, "
                         f"got shape {array.shape}.")
    if array.dtype.kind == "f":
        array = np.rint(np.clip(array, 0, 1) * 255)
    return array.astype(np.uint8)


def png(image):
    """Encode one uint8 image (h, w) or (h, w, 3) as PNG bytes."""
    height, width = image.shape[:2]
    colour_type = 2 if image.ndim == 3 else 0          # 2 = RGB, 0 = greyscale
    # Each scanline starts with a filter byte; 0 means "no filter".
    raw = b"".join(b"\x00" + row.tobytes() for row in image)

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data)))

    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def data_uri(image):
    """The image as a ``data:`` URI for an HTML ``<img>``."""
    return "data:image/png;base64," + base64.b64encode(png(image)).decode("ascii")
