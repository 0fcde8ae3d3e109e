"""TF1's ``tf.train.Saver``: a Session's variables to a checkpoint and back.

A graph variable's value lives in a Session (``edugraph/graph/variables.py``), so saving asks
the Session for the values and restoring puts values into a Session::

    saver = eg.train.Saver()
    with eg.Session() as sess:
        sess.run(eg.global_variables_initializer())
        ...                                                  # train
        path = saver.save(sess, "ckpt/model", global_step=step)   # "ckpt/model-1000"
    with eg.Session() as sess:
        saver.restore(sess, eg.train.latest_checkpoint("ckpt"))   # no initializer needed

TF writes a checkpoint as ``model-1000.index`` and ``model-1000.data-00000-of-00001`` (and the
graph in ``model-1000.meta``). edugraph writes the values as one numpy ``.npz`` file,
``model-1000.npz``, an array per variable under the variable's name: ``np.load`` reads it, and
nothing in it is pickled. As TF does, it keeps a ``checkpoint`` text file in the folder that
names the latest checkpoints, which ``latest_checkpoint`` reads.
"""
import collections
import os
import re
import zipfile

import numpy as np

from ..errors import InvalidArgumentError, NotFoundError
from ..graph.core import SymbolicTensor
from ..graph.variables import GraphVariable, global_variables

__all__ = ["Saver", "latest_checkpoint", "get_checkpoint_state", "CheckpointState"]


class Saver:
    """Saves and restores the graph variables ``var_list`` (all of the default graph's, as
    they are when the Saver is made; or a list, or a dict name → variable)."""

    def __init__(self, var_list=None, max_to_keep=5):
        self.var_list = _named_variables(var_list)
        self.max_to_keep = max_to_keep
        self._kept = []                 # the checkpoints this saver wrote and keeps, oldest first

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             write_meta_graph=True, write_state=True):
        """Write the variables' values in ``sess`` to ``save_path`` (plus ``-<global_step>``)
        and return that prefix. The file is ``<prefix>.npz``; the folder's ``checkpoint`` file
        then names it as the latest. Only the ``max_to_keep`` newest are kept. (No ``.meta``
        file: edugraph does not save graphs, so ``write_meta_graph`` changes nothing.)"""
        self._check_session(sess)
        if global_step is not None:
            step = sess.run(global_step) if isinstance(global_step, SymbolicTensor) else \
                global_step
            save_path = f"{save_path}-{int(step)}"
        folder = os.path.dirname(os.path.abspath(save_path))
        if not os.path.isdir(folder):
            raise ValueError(f"Parent directory of {save_path} doesn't exist, can't save.")
        values = sess.run(self.var_list)        # (an uninitialised variable: TF's error)
        partial = save_path + ".npz.partial"    # complete or absent, never half written
        with zipfile.ZipFile(partial, "w") as archive:  # .npz: a zip of one .npy per array
            for name, value in values.items():
                with archive.open(name + ".npy", "w") as member:
                    np.lib.format.write_array(member, np.asarray(value), allow_pickle=False)
        os.replace(partial, save_path + ".npz")
        self._keep(save_path)
        if write_state:
            _write_state(folder, latest_filename or "checkpoint", self._kept)
        return save_path

    def restore(self, sess, save_path):
        """Put the values saved at ``save_path`` (a prefix that ``save`` returned) into the
        variables in ``sess``: they need no initializer afterwards."""
        self._check_session(sess)
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        values = _read(save_path)
        for name, variable in self.var_list.items():
            if name not in values:
                raise NotFoundError(f"Key {name} not found in checkpoint {save_path}.npz (it "
                                    f"holds {', '.join(sorted(values)) or 'no variables'}): "
                                    "was it saved from another model?")
            value = values[name]
            if value.shape != tuple(variable.shape) or value.dtype != variable.dtype:
                raise InvalidArgumentError(
                    f"Restoring '{name}' from {save_path}.npz: the checkpoint holds a "
                    f"{value.dtype} array of shape {value.shape}, the variable is "
                    f"{variable.dtype} of shape {tuple(variable.shape)}. Was it saved from a "
                    "model built differently?")
            variable.load(value, sess)

    def _check_session(self, sess):
        graph = next(iter(self.var_list.values())).graph
        if getattr(sess, "graph", None) is not graph:
            raise TypeError(f"The Saver's variables belong to another graph than {sess!r}'s; "
                            "pass the Session that runs the graph they were made in.")

    def _keep(self, prefix):
        """Note ``prefix`` as the newest checkpoint; delete the oldest beyond max_to_keep."""
        if prefix in self._kept:
            self._kept.remove(prefix)
        self._kept.append(prefix)
        while self.max_to_keep and len(self._kept) > self.max_to_keep:
            oldest = self._kept.pop(0)
            if os.path.exists(oldest + ".npz"):
                os.remove(oldest + ".npz")


def _named_variables(var_list):
    """``var_list`` as a dict name → graph variable (TF's checkpoint keys: the op names)."""
    if var_list is None:
        var_list = global_variables()
    if isinstance(var_list, dict):
        named = dict(var_list)
    else:
        named = {}
        for variable in var_list:
            name = getattr(getattr(variable, "op", None), "name", None)
            if name in named:
                raise ValueError(f"At least two variables have the same name: {name}")
            named[name] = variable
    if not named:
        raise ValueError("No variables to save: make the Saver after the variables (or pass "
                         "var_list).")
    for name, variable in named.items():
        if not isinstance(variable, GraphVariable):
            raise TypeError(
                f"eg.train.Saver saves the variables of a TF1 graph, whose values live in a "
                f"Session; {name or variable!r} is not one. Eager variables and models are "
                "saved with model.save_weights(path) or eg.save(model.state_dict(), path).")
    return named


def _read(save_path):
    """The arrays of checkpoint ``save_path`` (its ``.npz`` file), read without unpickling."""
    file = save_path + ".npz"
    if not os.path.isfile(file):
        hint = " (that is a TensorFlow checkpoint; edugraph reads its own .npz ones)" if \
            os.path.isfile(save_path + ".index") else \
            " (pass the prefix that saver.save returned, without .npz)" if \
            save_path.endswith(".npz") else ""
        raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}{hint}")
    try:
        with np.load(file, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (ValueError, OSError, zipfile.BadZipFile) as e:
        raise ValueError(f"{file} is not a checkpoint that edugraph can read: {e}") from None


CheckpointState = collections.namedtuple(
    "CheckpointState", ["model_checkpoint_path", "all_model_checkpoint_paths"])


def _write_state(folder, filename, prefixes):
    """The ``checkpoint`` file, in TF's text format; paths in ``folder`` are written relative
    to it (TF's ``save_relative_paths``), so the folder can be moved."""
    def quoted(path):
        if os.path.dirname(os.path.abspath(path)) == folder:
            path = os.path.basename(path)
        return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = [f"model_checkpoint_path: {quoted(prefixes[-1])}"] + \
        [f"all_model_checkpoint_paths: {quoted(p)}" for p in prefixes]
    partial = os.path.join(folder, filename + ".partial")
    with open(partial, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(partial, os.path.join(folder, filename))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """What the folder's ``checkpoint`` file says: ``model_checkpoint_path`` (the latest) and
    ``all_model_checkpoint_paths``, relative ones joined to the folder; None without one."""
    state_file = os.path.join(checkpoint_dir, latest_filename or "checkpoint")
    if not os.path.isfile(state_file):
        return None
    fields = collections.defaultdict(list)
    with open(state_file, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            match = re.fullmatch(r'\s*(\w+)\s*:\s*"((?:[^"\\]|\\.)*)"\s*', line)
            if match is None and line.strip():
                raise ValueError(f"{state_file}, line {number}: not a checkpoint state line "
                                 f"(name: \"path\"): {line.strip()!r}")
            if match:
                path = re.sub(r"\\(.)", r"\1", match[2])
                fields[match[1]].append(path if os.path.isabs(path) else
                                        os.path.join(checkpoint_dir, path))
    if not fields["model_checkpoint_path"]:
        return None
    return CheckpointState(fields["model_checkpoint_path"][-1],
                           fields["all_model_checkpoint_paths"])


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The prefix of the newest checkpoint in ``checkpoint_dir`` (what ``restore`` takes), or
    None when there is none (no ``checkpoint`` file, or the file it names is gone)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not os.path.isfile(state.model_checkpoint_path + ".npz"):
        return None
    return state.model_checkpoint_path
