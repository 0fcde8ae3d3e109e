"""Embedding data for the projector: loading, validation and TensorBoard TSV files.

TensorBoard's projector reads two tab-separated files, and we read and write them
exactly, so files move both ways between the two tools:

- ``vectors.tsv``: one row per point, one column per dimension, no header.
- ``metadata.tsv``: one column -> no header, one value per line;
  several columns -> a header row with the column names, then one row per point.
"""
import os

import numpy as np


def to_matrix(vectors):
    """Turn numpy data, a tensor or an embedding layer into a float32 ``(n, d)`` array.

    Duck typing keeps the projector independent of the framework: a tensor is anything
    with ``.numpy()`` (edugraph tensors on any device copy to the host there), and a
    layer is anything with a ``weight`` or ``embeddings`` attribute holding such data.
    """
    for name in ("weight", "embeddings"):
        if hasattr(vectors, name) and not hasattr(vectors, "numpy"):
            vectors = getattr(vectors, name)
            break
    if vectors is None:
        raise TypeError("the vectors are None; for a layer, build it (call it once) first.")
    if hasattr(vectors, "numpy"):
        vectors = vectors.numpy()
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError):
        raise TypeError(
            f"cannot read vectors from a {type(vectors).__name__}: give a numpy array, a "
            "tensor (anything with .numpy()) or a layer with a built `weight` or "
            "`embeddings` (call the layer once, or build it, first).") from None
    if matrix.ndim != 2:
        raise ValueError(
            f"vectors must be a 2-D array (points x dimensions), got shape {matrix.shape}. "
            "For one vector per point, stack them: np.stack(list_of_vectors).")
    if matrix.shape[1] < 2:
        raise ValueError(
            f"vectors have {matrix.shape[1]} dimension(s) per point (shape {matrix.shape}); "
            "a projection needs at least 2 dimensions.")
    if matrix.shape[0] < 3:
        raise ValueError(
            f"only {matrix.shape[0]} point(s) given (shape {matrix.shape}); "
            "the projector needs at least 3 points.")
    return matrix


def bad_rows(matrix):
    """Indices of the rows that hold a NaN or an infinity."""
    return np.flatnonzero(~np.isfinite(matrix).all(axis=1))


def to_columns(metadata, num_points):
    """Turn metadata into ``{column name: list of values}`` with one value per point.

    Accepts a dict of columns, a pandas-like table (``.columns`` and ``table[name]``)
    or a plain list, which becomes the single column ``"label"``.
    """
    if metadata is None:
        return {}
    if hasattr(metadata, "columns"):
        columns = {str(name): list(metadata[name]) for name in metadata.columns}
    elif isinstance(metadata, dict):
        columns = {str(name): list(values) for name, values in metadata.items()}
    else:
        columns = {"label": list(metadata)}
    for name, values in columns.items():
        if len(values) != num_points:
            raise ValueError(
                f"metadata column {name!r} has {len(values)} values but there are "
                f"{num_points} vectors; give exactly one value per vector.")
    return columns


def read_vectors_tsv(path):
    """Read TensorBoard's ``vectors.tsv``; a ragged row is reported by its line number."""
    rows = []
    with open(path, encoding="utf-8") as file:
        for line_number, line in enumerate(file, start=1):
            line = line.rstrip("\r\n")
            if not line:
                continue
            fields = line.split("\t")
            if rows and len(fields) != len(rows[0]):
                raise ValueError(
                    f"{path}, line {line_number}: {len(fields)} values, but line 1 has "
                    f"{len(rows[0])}; every row of vectors.tsv needs the same number of "
                    "tab-separated values.")
            try:
                rows.append([float(field) for field in fields])
            except ValueError as error:
                raise ValueError(f"{path}, line {line_number}: {error}") from None
    return np.array(rows, dtype=np.float32)


def read_metadata_tsv(path):
    """Read TensorBoard's ``metadata.tsv`` into ``{column: values}``.

    A file with one column has no header (the column is called ``"label"``);
    a file with several has one. A column whose every field is a number as Python writes
    it (``7``, ``-0.25``, ``1e-07``, ``nan``) comes back as numbers, the others as text:
    the format holds no types, so this is how numbers written by ``to_tsv`` survive.
    """
    with open(path, encoding="utf-8", newline="") as file:
        text = file.read()
    # Every row ends with a newline: an empty label on the last row is a row too.
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines[-1] == "":
        lines.pop()
    if not any("\t" in line for line in lines):
        return {"label": _typed(lines)}
    header = lines[0].split("\t")
    columns = {name: [] for name in header}
    for line_number, line in enumerate(lines[1:], start=2):
        fields = line.split("\t")
        if len(fields) != len(header):
            raise ValueError(
                f"{path}, line {line_number}: {len(fields)} values, but the header has "
                f"{len(header)} columns ({', '.join(header)}).")
        for name, field in zip(header, fields):
            columns[name].append(field)
    return {name: _typed(fields) for name, fields in columns.items()}


def _typed(fields):
    """The fields as numbers when each is one, written exactly as Python writes it (so
    "007" or "1.50" stay text: reading them as 7 or 1.5 would not give them back)."""
    numbers = [_number(field) for field in fields]
    return fields if not fields or None in numbers else numbers


def _number(field):
    for kind in (int, float):
        try:
            value = kind(field)
        except ValueError:
            continue
        if str(value) == field:
            return value
    return None


def vectors_tsv(matrix):
    """TensorBoard's ``vectors.tsv`` as text: tab-separated floats, no header."""
    # str() of a float32 is its shortest exact form, so values survive a round trip.
    return "".join("\t".join(str(x) for x in row) + "\n"
                   for row in np.asarray(matrix, dtype=np.float32))


def metadata_tsv(columns):
    """TensorBoard's ``metadata.tsv`` as text: a header row only when there are 2+ columns.

    A tab or a line break inside a name or a value would split it into two fields or two
    rows, and TensorBoard's format has no way to escape them: such data is refused, with
    the place it is in, rather than written into a file that reads back different.
    """
    names = list(columns)
    for name in names:
        if _breaks_tsv(name):
            raise ValueError(
                f"metadata column name {name!r} holds a tab or a line break, which TSV "
                "uses between columns and rows, so the header could not be read back. "
                "Rename the column.")
    for name in names:
        for row, value in enumerate(columns[name]):
            if _breaks_tsv(str(value)):
                raise ValueError(
                    f"metadata column {name!r}, row {row}: the value {str(value)!r} holds a "
                    "tab or a line break, which TSV uses between columns and rows, so the "
                    "file could not be read back. Replace them first, e.g. "
                    "[' '.join(str(v).split()) for v in values].")
    lines = ["\t".join(names)] if len(names) > 1 else []
    lines += ["\t".join(str(value) for value in row)
              for row in zip(*(columns[name] for name in names))]
    return "".join(line + "\n" for line in lines)


def _breaks_tsv(text):
    return any(ch in text for ch in "\t\n\r")


def write_files(files, overwrite=False):
    """Write ``[(path, text), ...]``, after checking every path: two files on one path
    would leave only the second, and an existing file is replaced only with ``overwrite``."""
    paths = [os.path.realpath(path) for path, _ in files]
    for i, path in enumerate(paths):
        if path in paths[:i]:
            raise ValueError(f"two files would be written to the same path {path}; give "
                             "the vectors and the metadata different names.")
    existing = [path for path in paths if os.path.exists(path)]
    if existing and not overwrite:
        raise FileExistsError(
            f"{existing[0]} already exists; pass overwrite=True to replace it, or choose "
            "another name.")
    for path, text in files:
        with open(path, "w", encoding="utf-8", newline="") as file:
            file.write(text)
