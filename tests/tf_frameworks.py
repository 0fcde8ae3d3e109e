"""edugraph and real TensorFlow behind the same names, for tests of code written in TF's API.

A test that takes the ``fw`` fixture built from ``FRAMEWORKS`` runs twice: with edugraph, and
(where TensorFlow and Keras 3 are installed) with TensorFlow, so that what it expects is what
TF does. It binds the names the copied code uses at its start::

    tf, tf1 = fw.tf, fw.tf1

``fw.tf1_program`` is the module a TF1 program imports as ``tf``: edugraph itself, or
``tensorflow.compat.v1`` (how TF1 code runs on TF 2). Assertions on edugraph's own words (its
messages, its refusals where TF computes on) go under ``if fw.is_eg:``.
"""
import importlib.util
import itertools
import linecache
import os
import types

import pytest

import edugraph as eg

HAVE_TF = all(importlib.util.find_spec(name) is not None for name in ("tensorflow", "keras"))

# Parameter values are plain strings (tests/conftest.py reads them); the module-scoped fixture
# that takes them imports TensorFlow before a test's capfd starts, so TF's start-up lines stay
# out of what the test reads.
FRAMEWORKS = ["eg", pytest.param("tf", marks=pytest.mark.skipif(
    not HAVE_TF, reason="TensorFlow and Keras 3 are not installed: the run that checks the "
                        "expectations against real TF is left out"))]


def framework(name):
    """The names copied code uses, bound to edugraph ("eg") or to TensorFlow ("tf")."""
    if name == "eg":
        return types.SimpleNamespace(name="eg", is_eg=True, tf=eg, tf1=eg.compat.v1,
                                     tf1_program=eg, keras=eg.keras,
                                     set_seed=eg.keras.utils.set_random_seed)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    tf = pytest.importorskip("tensorflow")
    pytest.importorskip("keras")
    # (Keras 3's initializers draw their seeds from Python's random, not from TF's global
    # seed: keras.utils.set_random_seed seeds both)
    return types.SimpleNamespace(name="tf", is_eg=False, tf=tf, tf1=tf.compat.v1,
                                 tf1_program=tf.compat.v1, keras=tf.keras,
                                 set_seed=tf.keras.utils.set_random_seed)


_CELLS = itertools.count(1)


def run_cell(source, **names):
    """Runs ``source`` as a notebook runs a cell: its functions are globals of the namespace
    it returns (``names`` are already there), and their source can be read back, as
    AutoGraph reads it (IPython keeps each cell in linecache the same way)."""
    filename = f"<cell-{next(_CELLS)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(names, __name__="__main__")
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 (the test's own cell)
    return namespace
