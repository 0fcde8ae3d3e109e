"""Students' mistakes (issue 28), tried as a new user would: each must end in a clear error,
a warning, or the right behaviour, never in a silent wrong answer.

``MISTAKES`` is the table: ``case``, ``before`` (what edugraph did when the mistake was first
tried: ``silent`` = a wrong answer without a word, ``misleading`` = an error that names another
problem, ``raw`` = Python's or numpy's own error) and ``after`` (what it does now: ``error``
with a message matching ``expect``, ``warning`` matching ``expect``, or ``right``, checked by
the case itself). Each row runs as a test; ``test_no_mistake_is_silent`` keeps the counts in
view.
"""
import collections
import contextlib
import io
import os
import re
import tempfile

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import GradientError
from tests.interrupts import pressing_ctrl_c

keras = eg.keras
Mistake = collections.namedtuple("Mistake", "case before after run expect")


def _model(activation=None, units=1):
    model = keras.Sequential([keras.layers.Dense(units, activation=activation,
                                                 input_shape=(2,))])
    model.compile("sgd", "mse")
    return model


_X = np.linspace(0, 1, 100, dtype=np.float32).reshape(50, 2)
_Y = _X.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------- the cases
def backward_twice():
    x = eg.tensor(2.0, requires_grad=True)
    y = x * x
    y.backward()
    y.backward()                                    # was: x.grad 4 → 8


def map_returning_none():
    list(eg.data.Dataset.range(3).map(lambda x: None))


def map_returning_objects():
    list(eg.data.Dataset.range(3).map(lambda x: (x, [1, None])))


def fit_with_a_nan_row():
    x = _X.copy()
    x[3, 0] = np.nan
    model = _model()
    history = model.fit(x, _Y, epochs=2, batch_size=10, shuffle=False, verbose=0)
    assert len(history.history["loss"]) == 1 and np.isnan(history.history["loss"][0])
    assert np.isfinite(model.predict(_X)).all()     # was: NaN for clean inputs too


def progress_line_at_an_inf_loss():
    x = _X.copy()
    x[0, 0] = np.inf
    with contextlib.redirect_stdout(io.StringIO()) as printed:
        _model().fit(x, _Y, epochs=2, batch_size=50, verbose=2)
    lines = printed.getvalue().splitlines()         # was: "Epoch 1/2 - 1/1 - 0.0s - "
    assert lines[0].startswith("Epoch 1, batch 1: the loss is inf, so training stopped")
    assert re.fullmatch(r"Epoch 1/2 - 1/1 - \d+\.\ds - loss: inf", lines[1])
    assert len(lines) == 2                          # (no second epoch)


def softmax_outputs_with_from_logits():
    model = keras.Sequential([keras.layers.Dense(3, activation="softmax", input_shape=(2,))])
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(_X, np.arange(50) % 3, verbose=0)


def sigmoid_outputs_with_from_logits():
    w = eg.tensor([[0.5]], requires_grad=True)
    keras.losses.binary_crossentropy(eg.zeros((2, 1)), eg.sigmoid(eg.ones((2, 1)) @ w),
                                     from_logits=True)


def weights_saved_and_loaded_by_one_name(module):
    with tempfile.TemporaryDirectory() as folder:
        for name in ("w", "w.h5", "w.npz"):
            path = os.path.join(folder, name)
            module.save_weights(path)
            module.load_weights(path)               # was: FileNotFoundError for "w", "w.h5"
        assert sorted(os.listdir(folder)) == ["w.h5.npz", "w.npz"]


def interrupted_runaway_loop():
    with eg.Graph().as_default():
        n = eg.placeholder(eg.int32, ())
        i = eg.while_loop(lambda i: i < n, lambda i: i + 1, [eg.constant(0)])
        with eg.Session() as sess:
            sess.run(i, {n: 3})                                     # (compiled first)
            with pressing_ctrl_c():
                sess.run(i, {n: 2 ** 31 - 1})                       # (practically endless)


def map_function_that_raises():
    def parse(x):
        if int(x) == 2:
            raise ValueError("bad record")
        return x
    list(eg.data.Dataset.range(4).map(parse, num_parallel_calls=2))


def _empty_history(**fit):
    return _model().fit(_X, _Y, verbose=0, **fit).history


# 7. TensorBoard's TSV files (widgets/projector)
def _projector(metadata=None, vectors=None, **options):
    from widgets.projector import Projector
    return Projector(np.eye(3) if vectors is None else vectors, metadata, **options)


def to_tsv(metadata, *names, **options):
    with tempfile.TemporaryDirectory() as folder:
        _projector(metadata).to_tsv(*(os.path.join(folder, name) for name in names),
                                    **options)


def tsv_round_trip(metadata):
    from widgets.projector import Projector
    with tempfile.TemporaryDirectory() as folder:
        paths = [os.path.join(folder, name) for name in ("v.tsv", "m.tsv")]
        _projector(metadata).to_tsv(*paths)
        assert Projector.from_tsv(*paths).columns == metadata


def tsv_over_an_existing_file():
    with tempfile.TemporaryDirectory() as folder:
        notes = os.path.join(folder, "notes.tsv")
        with open(notes, "w") as file:
            file.write("my notes\n")
        _projector(list("xyz")).to_tsv(os.path.join(folder, "v.tsv"), notes)


# 12. a projector with nothing (or one spot) to show
def coinciding_points():
    text = repr(_projector(vectors=np.ones((5, 3))))       # was: "PC1 (nan%), PC2 (nan%)"
    assert "nan" not in text and "All 5 points are the same vector" in text


def inspector_on_a_big_graph():
    from widgets.inspector import GraphInspector

    def chain(x):
        y = x
        for _ in range(1000):
            y = y * 0.5 + x
        return y

    inspector = GraphInspector(chain, x=1.0)    # 2 001 nodes (was: every one drawn, and
    assert len(inspector.view.nodes) > 2000     # at 20 000 a 10.9 MB figure, 1.5 s a step)
    assert "too many to read at once" in inspector.summary_note.value
    assert len(inspector.scene.ids) <= 40


def tsne_with_too_large_a_perplexity():
    projector = _projector(vectors=np.random.default_rng(0).normal(size=(13, 4)))
    projector.tsne(perplexity=30, iterations=50)
    assert projector.settings["perplexity"] == 4.0          # was: 30, the value asked for


MISTAKES = [
    # 1. backward twice through one graph
    Mistake("backward() twice", "silent", "error", backward_twice,
            (GradientError, r"^Trying to backward through the graph a second time: the "
                            r"gradient of mul .*retain_graph=True")),
    # 2. flags that are not bools
    Mistake("eg.tensor(requires_grad='no')", "silent", "error",
            lambda: eg.tensor([1.0], requires_grad="no"),
            (TypeError, r"eg.tensor\(\): argument 'requires_grad' must be bool .*str 'no'")),
    Mistake("x.requires_grad_('no')", "silent", "error",
            lambda: eg.tensor([1.0]).requires_grad_("no"),
            (TypeError, r"requires_grad_\(\): argument 'requires_grad' must be bool")),
    Mistake("eg.Variable(trainable='no')", "silent", "error",
            lambda: eg.Variable(1.0, trainable="no"),
            (TypeError, r"eg.Variable\(\): argument 'trainable' must be bool")),
    Mistake("nn.Parameter(requires_grad=1)", "silent", "error",
            lambda: eg.nn.Parameter(eg.zeros(2), requires_grad=1),
            (TypeError, r"nn.Parameter\(\): argument 'requires_grad' must be bool .*not int 1")),
    # 3. data numpy keeps as objects
    Mistake("eg.tensor(array of objects)", "silent", "error",
            lambda: eg.tensor(np.array([1, None], dtype=object)),
            (TypeError, r"the entry at \(1,\) is None, of type NoneType; None often marks a "
                        r"missing value")),
    Mistake("Dataset.map returning None", "silent", "error", map_returning_none,
            (TypeError, r"Dataset.map: the function .*<lambda> \(line \d+\) returned None for "
                        r"element 0, 0; .*`return` missing")),
    Mistake("Dataset.map returning [1, None]", "silent", "error", map_returning_objects,
            (TypeError, r"entry is None.*\nDataset.map: in what the function .*<lambda>.* "
                        r"returned for element 0, 0\.")),
    Mistake("from_tensor_slices(array of objects)", "raw", "error",
            lambda: list(eg.data.Dataset.from_tensor_slices(np.array([1, None], dtype=object))),
            (TypeError, r"the entry at \(1,\) is None")),
    # 4. one rule for negative learning rates
    Mistake("keras SGD(learning_rate=-0.1)", "silent", "error",
            lambda: keras.optimizers.SGD(learning_rate=-0.1),
            (ValueError, r"^SGD: learning_rate must be 0 or more \(as eg.optim's lr\), got "
                         r"-0.1")),
    Mistake("train.GradientDescentOptimizer(-0.1)", "silent", "error",
            lambda: eg.train.GradientDescentOptimizer(-0.1),
            (ValueError, r"^GradientDescent: learning_rate must be 0 or more")),
    # 5. validation splits that are not fractions, or leave a side empty
    Mistake("fit(validation_split=1.5)", "silent", "error",
            lambda: _empty_history(validation_split=1.5),
            (ValueError, r"validation_split is the fraction .* from 0 up to \(not including\) "
                         r"1, e.g. 0.2; got 1.5")),
    Mistake("fit(validation_split=-0.2)", "silent", "error",
            lambda: _empty_history(validation_split=-0.2),
            (ValueError, r"got -0.2")),
    Mistake("fit(validation_split=0.999)", "silent", "error",
            lambda: _empty_history(validation_split=0.999),
            (ValueError, r"validation_split=0.999 of 50 examples leaves none to train on")),
    Mistake("fit(Dataset, validation_split=0.2)", "raw", "error",
            lambda: _model().fit(eg.data.Dataset.from_tensor_slices((_X, _Y)).batch(10),
                                 validation_split=0.2, verbose=0),
            (ValueError, r"cannot split a Dataset .*validation_data=val")),
    # 6. probabilities given as logits
    Mistake("softmax outputs, from_logits=True", "silent", "warning",
            softmax_outputs_with_from_logits,
            r"sparse_categorical_crossentropy received from_logits=True, but its predictions "
            r"were made by a softmax"),
    Mistake("sigmoid outputs, from_logits=True", "silent", "warning",
            sigmoid_outputs_with_from_logits, r"binary_crossentropy .* made by a sigmoid"),
    # 8. one file name for saving and loading
    Mistake("Model.save_weights('w'), load_weights('w')", "misleading", "right",
            lambda: weights_saved_and_loaded_by_one_name(_model()), None),
    Mistake("nn module save_weights('w.h5'), load_weights('w.h5')", "misleading", "right",
            lambda: weights_saved_and_loaded_by_one_name(eg.nn.Linear(2, 1)), None),
    # 9. NaN and infinity in training
    Mistake("fit with a NaN row", "silent", "right", fit_with_a_nan_row, None),
    Mistake("fit's progress line at an inf loss", "silent", "right",
            progress_line_at_an_inf_loss, None),
    # 10. runaway loops
    Mistake("while_loop that never ends, interrupted", "raw", "error",
            interrupted_runaway_loop,
            (KeyboardInterrupt, r"eg.while_loop 'while' was interrupted after \d+ iterations "
                                r"with its cond still true.*maximum_iterations=N")),
    # 11. an error inside Dataset.map
    Mistake("Dataset.map function raises", "raw", "error", map_function_that_raises,
            (ValueError, r"^bad record\nDataset.map: the function .*parse raised this on "
                         r"element 2, 2\.$")),
    # 14. messages that named another problem
    Mistake("eg.tensor([1+2j])", "misleading", "error", lambda: eg.tensor([1 + 2j]),
            (TypeError, r"holds complex numbers, and edugraph's tensors hold real numbers")),
    Mistake("eg.tensor([2**70])", "misleading", "error", lambda: eg.tensor([2 ** 70]),
            (ValueError, r"1180591620717411303424 is outside the range of int64.*2.0\*\*70")),
    Mistake("eg.tensor([2**63])", "raw", "error", lambda: eg.tensor([2 ** 63]),
            (ValueError, r"9223372036854775808 is outside the range of int64")),
    Mistake("eg.tensor([1.5, 2**70])", "misleading", "right",
            lambda: np.testing.assert_allclose(eg.tensor([1.5, 2 ** 70]).numpy(),
                                               [1.5, 2.0 ** 70]), None),
    Mistake("max of an empty tensor", "misleading", "error",
            lambda: eg.reduce_max(eg.tensor([])),
            (eg.errors.ShapeError, r"^max: the tensor of shape \(0,\) has no elements, and "
                                   r"the max of nothing is undefined")),
    Mistake("x.max() of a (0, 3) tensor", "misleading", "error", lambda: eg.zeros((0, 3)).max(),
            (eg.errors.ShapeError, r"^max: the tensor of shape \(0, 3\) has no elements")),
    Mistake("fit on text", "misleading", "error",
            lambda: _model().fit(np.array([["a", "b"]] * 4), np.zeros((4, 1)), verbose=0),
            (TypeError, r"^x \(the inputs\) hold text \(dtype <U1, e.g. 'a'\)")),
    # 7. TensorBoard's TSV files
    Mistake("to_tsv: a tab inside a label", "silent", "error",
            lambda: to_tsv({"word": ["a", "b\tc", "d"]}, "v.tsv", "m.tsv"),
            (ValueError, r"column 'word', row 1: the value 'b\\tc' holds a tab or a line "
                         r"break, which TSV uses between columns and rows")),
    Mistake("from_tsv: numbers come back as strings", "silent", "right",
            lambda: tsv_round_trip({"word": ["a", "b", "c"], "count": [3, 10, 0.5]}), None),
    Mistake("to_tsv: an empty last label", "silent", "right",
            lambda: tsv_round_trip({"label": ["x", "y", ""]}), None),
    Mistake("to_tsv: a tab in a column name", "silent", "error",
            lambda: to_tsv({"word": list("abc"), "part\tof speech": list("nvn")},
                           "v.tsv", "m.tsv"),
            (ValueError, r"column name 'part\\tof speech' holds a tab .*Rename the column")),
    Mistake("to_tsv(p, p)", "silent", "error", lambda: to_tsv(list("xyz"), "p.tsv", "p.tsv"),
            (ValueError, r"two files would be written to the same path .*p.tsv")),
    Mistake("to_tsv over an unrelated file", "silent", "error", tsv_over_an_existing_file,
            (FileExistsError, r"notes.tsv already exists; pass overwrite=True to replace it")),
    # 12. a projector with nothing (or one spot) to show
    Mistake("Projector: every row NaN, drop_bad_rows=True", "silent", "error",
            lambda: _projector(vectors=np.full((4, 3), np.nan), drop_bad_rows=True),
            (ValueError, r"4 of the 4 rows contain NaN or Inf, and without them 0 point\(s\) "
                         r"are left")),
    Mistake("Projector(max_points=0)", "silent", "error",
            lambda: _projector(vectors=np.eye(5), max_points=0),
            (ValueError, r"max_points=0 would show too few points")),
    Mistake("Projector: all points coincide", "silent", "right", coinciding_points, None),
    Mistake("Projector.tsne(perplexity=30) on 13 points", "silent", "warning",
            tsne_with_too_large_a_perplexity,
            r"t-SNE: perplexity 30 is too large for 13 points .*so 4 was used"),
    # 13. the inspector on a big graph
    Mistake("GraphInspector on a 2 001-node graph", "silent", "right",
            inspector_on_a_big_graph, None),
]


def _message(error):
    """An error's message with its notes (Python 3.11's ``add_note``, shown under it)."""
    return "\n".join([str(error), *getattr(error, "__notes__", ())])


@pytest.mark.timeout(120)     # (each case takes seconds: a Ctrl-C that never lands fails fast)
@pytest.mark.parametrize("mistake", MISTAKES, ids=[m.case for m in MISTAKES])
def test_the_mistake(mistake):
    if mistake.after == "error":
        kind, pattern = mistake.expect
        with pytest.raises(kind) as info:
            mistake.run()
        assert re.search(pattern, _message(info.value), re.S), _message(info.value)
    elif mistake.after == "warning":
        with pytest.warns(UserWarning, match=mistake.expect):
            mistake.run()
    else:
        assert mistake.after == "right"
        mistake.run()                       # (each "right" case asserts what is right)


def test_no_mistake_is_silent():
    """The table's counts: every case silent before is now an error, a warning or right."""
    before = collections.Counter(m.before for m in MISTAKES)
    after = collections.Counter(m.after for m in MISTAKES)
    assert dict(before) == {"silent": 28, "misleading": 8, "raw": 5}
    assert dict(after) == {"error": 29, "warning": 3, "right": 9}
    assert after["silent"] == 0 and set(after) <= {"error", "warning", "right"}
