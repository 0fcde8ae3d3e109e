"""Embedding data for the projector: loading, validation and TensorBoard TSV files.

TensorBoard's projector reads two tab-separated files, and we read and write them
exactly, so files move both ways between the two tools:

- ``vectors.tsv``: one row per point, one column per dimension, no header.
- ``metadata.tsv``: one column -> no header, one value per line;
  several columns -> a header row with the column names, then one row per point.
"""
import re

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
    a file with several has one.
    """
    with open(path, encoding="utf-8") as file:
        lines = [line.rstrip("\r\n") for line in file]
    while lines and not lines[-1]:
        lines.pop()
    if not any("\t" in line for line in lines):
        return {"label": lines}
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
    return columns


def write_vectors_tsv(path, matrix):
    """Write TensorBoard's ``vectors.tsv``: tab-separated floats, no header."""
    matrix = np.asarray(matrix, dtype=np.float32)
    with open(path, "w", encoding="utf-8") as file:
        for row in matrix:
            # str() of a float32 is its shortest exact form, so values survive a round trip.
            file.write("\t".join(str(x) for x in row) + "\n")


def write_metadata_tsv(path, columns):
    """Write TensorBoard's ``metadata.tsv``: a header row only when there are 2+ columns."""
    names = list(columns)
    rows = zip(*(columns[name] for name in names))
    with open(path, "w", encoding="utf-8") as file:
        if len(names) > 1:
            file.write("\t".join(names) + "\n")
        for row in rows:
            file.write("\t".join(_tsv_field(value) for value in row) + "\n")


def _tsv_field(value):
    """A value as one TSV field; tabs and newlines would break the row structure."""
    return re.sub(r"[\t\r\n]", " ", str(value))
