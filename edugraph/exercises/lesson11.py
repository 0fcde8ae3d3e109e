"""Lesson 11's exercises: count the trainable and the frozen parameters of a model with a frozen
table; load a pretrained table into a frozen Keras ``Embedding``; freeze a table the PyTorch way;
which rows of a table a step changes with SGD and with Adam.

The checks build small models of their own (a 12-word table of 5 numbers per word), run the
student's code on them and report what happened to the table and to the head, so that each way
of freezing wrongly shows as what it does.
"""
import numbers

import numpy as np

import edugraph as eg
import edugraph.nn.functional as F
from edugraph import layers, nn
from edugraph.tensor import Tensor

from .answers import WrongForm, array, describe, function, whole_number
from .checking import Exercise, Mistake


def _said(value):
    """describe(value) on one line (a model's repr runs over several)."""
    return " ".join(describe(value).split())


def _returned(value, call):
    """What the student's function returned; None means a forgotten `return`."""
    if value is None:
        raise WrongForm(f"{call} returned None: did you forget the `return`?")
    return value


# ------------------------------------------ 11.1: trainable and frozen parameters, counted
VOCAB_11, DIM_11, HIDDEN_11, CLASSES_11 = 500, 32, 64, 4


def _layers_11(table_trainable=False):
    return [layers.Embedding(VOCAB_11, DIM_11, trainable=table_trainable, input_shape=()),
            layers.Dense(HIDDEN_11, activation="relu"),
            layers.Dense(CLASSES_11, activation="softmax")]


def _counts_11():
    """What edugraph's summary() reports for the prompt's model."""
    model = eg.Sequential(_layers_11())
    trainable = sum(v.size for v in model.trainable_weights)
    frozen = sum(v.size for v in model.non_trainable_weights)
    return {"trainable_count": trainable, "frozen_count": frozen}


def _with_counts(trainable=None, frozen=None):
    right = _counts_11()
    return {"trainable_count": right["trainable_count"] if trainable is None else trainable,
            "frozen_count": right["frozen_count"] if frozen is None else frozen}


_TABLE_SIZE = VOCAB_11 * DIM_11
_NO_BIASES = DIM_11 * HIDDEN_11 + HIDDEN_11 * CLASSES_11
_ONE_LAYER = (DIM_11 * HIDDEN_11 + HIDDEN_11, DIM_11 * HIDDEN_11,      # the hidden layer
              HIDDEN_11 * CLASSES_11 + CLASSES_11, HIDDEN_11 * CLASSES_11)  # the last one

ex11_1 = Exercise(
    "11.1",
    reads={"trainable_count": whole_number, "frozen_count": whole_number},
    reference=_counts_11,
    passed="{trainable_count:,} trainable (both Dense layers, weights and biases) and "
           "{frozen_count:,} frozen (the 500 × 32 table): summary()'s Trainable and "
           "Non-trainable params.",
    expected="trainable_count and frozen_count are two whole numbers of parameters.",
    mistakes=(
        Mistake("the two counts are swapped: the table is the frozen part, the Dense layers "
                "are what trains.",
                gives=lambda: {"trainable_count": _counts_11()["frozen_count"],
                               "frozen_count": _counts_11()["trainable_count"]}),
        Mistake("trainable_count includes the table: trainable=False takes its 500 × 32 "
                "entries out of the trainable parameters.",
                when=lambda got, ref: got["trainable_count"] in (
                    ref["trainable_count"] + ref["frozen_count"],
                    ref["trainable_count"] + VOCAB_11 + DIM_11),
                example=_with_counts(trainable=_TABLE_SIZE + _counts_11()["trainable_count"])),
        Mistake("trainable_count leaves out the biases: a Dense layer with n outputs has n of "
                "them, on top of its weights.",
                when=lambda got, ref: got["trainable_count"] == _NO_BIASES,
                example=_with_counts(trainable=_NO_BIASES)),
        Mistake("trainable_count counts only one Dense layer: every layer after the table "
                "trains, both Dense layers.",
                when=lambda got, ref: got["trainable_count"] in _ONE_LAYER,
                example=_with_counts(trainable=_ONE_LAYER[2])),
        Mistake("frozen_count is not the table's size: an Embedding holds one row of "
                "output_dim numbers for each of its input_dim words.",
                when=lambda got, ref: got["frozen_count"] in (
                    VOCAB_11, DIM_11, VOCAB_11 + DIM_11, 0),
                example=_with_counts(frozen=VOCAB_11)),
    ),
)


# ------------------------------------------------------- the small task the checks train on
VOCAB, DIM, CLASSES = 12, 5, 3
_TABLE = np.random.default_rng(11).normal(size=(VOCAB, DIM)).astype(np.float32)
_TABLE.flags.writeable = False
_IDS = np.array([0, 3, 7, 11, 3, 5])        # word 3 twice; words 1, 2, 4, 6, 8... never
_LABELS = np.array([0, 1, 2, 0, 1, 2])


# ----------------------------------------------- 11.2: a pretrained table, frozen, in Keras
def _keras_model(value, call):
    model = _returned(value, call)
    if isinstance(model, eg.Model) and callable(getattr(model, "fit", None)) and \
            not isinstance(model, nn.Module):       # (nn.Sequential is both)
        return model
    what = f"a {type(model).__name__}, a PyTorch-style module" \
        if isinstance(model, nn.Module) else _said(model)
    raise WrongForm(f"{call} should return a Keras model (eg.Sequential([...]) or "
                    f"eg.Model(...)), which compile and fit train; it returned {what}.")


def _probabilities(model, call):
    try:
        out = model(eg.tensor(_IDS))
    except Exception:
        if any(tuple(v.shape) == _TABLE.shape[::-1] for v in model.variables):
            raise WrongForm("the Embedding's table is transposed: Embedding(input_dim, "
                            "output_dim) takes the number of words (table.shape[0]) first, "
                            "then the numbers per word (table.shape[1]).") from None
        raise
    if not isinstance(out, Tensor):
        raise WrongForm(f"the model of {call} returns {_said(out)} for a batch of ids; "
                        "it should return one tensor of probabilities.")
    out = array(out, "the model's output")
    if out.shape != (len(_IDS), CLASSES):
        raise WrongForm(f"the model of {call} turns {len(_IDS)} word ids into outputs of shape "
                        f"{out.shape}; expected ({len(_IDS)}, {CLASSES}): one output per class "
                        "(num_classes), sized from the arguments, not from the lesson.")
    return bool((out >= 0).all() and np.allclose(out.sum(axis=1), 1.0, atol=1e-4))


def _table_variable(model, call):
    found = [v for v in model.variables if tuple(v.shape) == _TABLE.shape]
    if not found:
        raise WrongForm(f"no variable of the model of {call} has the table's shape "
                        f"{_TABLE.shape}: the Embedding needs table.shape[0] rows (words) of "
                        "table.shape[1] numbers.")
    return found[0]


def _frozen_model_results(build):
    """What a model made by ``build(table, num_classes)`` does: are its outputs probabilities,
    does it start from the table, is the table out of its trainable weights, and after a few
    steps of fit, has the head learnt and is the table still the same?"""
    call = f"frozen_word_model(table, {CLASSES})"
    try:
        value = build(_TABLE.copy(), CLASSES)
    except ValueError as error:
        if "set_weights: got 1 arrays for 0 variables" in str(error):
            raise WrongForm("set_weights was called before the Embedding had its table: a "
                            "layer makes its weights when it is built (give it input_shape, "
                            "or call the model once), or load the table with "
                            "embeddings_initializer=eg.initializers.Constant(table).") from None
        raise
    model = _keras_model(value, call)
    probabilities = _probabilities(model, call)
    table = _table_variable(model, call)
    trainable = model.trainable_weights
    results = {"probabilities": probabilities,
               "table loaded": bool(np.allclose(table.numpy(), _TABLE)),
               "table frozen": all(v is not table for v in trainable),
               "requires_grad left alone": table.requires_grad,
               "head trains": False, "table unchanged by fit": True}
    head = [v for v in trainable if v is not table]
    if probabilities and head:
        before = {id(v): v.numpy() for v in model.variables}
        model.compile(optimizer=eg.keras.optimizers.Adam(learning_rate=0.05),
                      loss="sparse_categorical_crossentropy")
        model.fit(_IDS, _LABELS, batch_size=len(_IDS), epochs=5, verbose=0)
        results["head trains"] = any(not np.array_equal(v.numpy(), before[id(v)])
                                     for v in head)
        results["table unchanged by fit"] = bool(np.array_equal(table.numpy(),
                                                                before[id(table)]))
    return results


def _run_frozen_model(answer):
    return _frozen_model_results(answer["frozen_word_model"])


def _frozen_model(table_init="table", table_trainable=False, softmax=True,
                  model_trainable=True, head_trainable=True):
    """frozen_word_model, right or with one of the known mistakes."""
    def build(table, num_classes):
        vocab_size, dim = table.shape
        initializer = eg.initializers.Constant(table) if table_init == "table" else "uniform"
        model = eg.Sequential([
            layers.Embedding(vocab_size, dim, embeddings_initializer=initializer,
                             trainable=table_trainable, input_shape=()),
            layers.Dense(num_classes, activation="softmax" if softmax else None,
                         trainable=head_trainable)])
        model.trainable = model_trainable
        return model
    return build


def _frozen_with_requires_grad(table, num_classes):
    """PyTorch's spelling in a Keras model: edugraph honours it, Keras has no such method."""
    model = _frozen_model(table_trainable=True)(table, num_classes)
    model.layers[0].embeddings.requires_grad_(False)
    return model


def _right_model_results():
    """What the reference frozen_word_model gives (the keys a right answer must match)."""
    return _frozen_model_results(_frozen_model())


ex11_2 = Exercise(
    "11.2",
    reads={"frozen_word_model": function},
    run=_run_frozen_model,
    reference=_right_model_results,
    passed="the model starts from `table`, keeps it out of trainable_weights, and fit trains "
           "the head while the table stays bit for bit the same.",
    expected="frozen_word_model(table, num_classes) returns a Keras model whose Embedding "
             "starts from `table` and is not trainable, followed by a Dense layer with a "
             "softmax; the check calls it on one word id per example.",
    mistakes=(
        Mistake("the model's outputs are not probabilities: with "
                "sparse_categorical_crossentropy the last Dense layer needs "
                "activation=\"softmax\".",
                when=lambda got, ref: not got["probabilities"],
                example={"frozen_word_model": _frozen_model(softmax=False)}),
        Mistake("the Embedding does not start from `table`: pass "
                "embeddings_initializer=eg.initializers.Constant(table) (or call "
                "set_weights([table]) on the built layer).",
                when=lambda got, ref: not got["table loaded"],
                example={"frozen_word_model": _frozen_model(table_init="random")}),
        Mistake("nothing in the model trains: freeze the Embedding alone (trainable=False on "
                "that layer), not the whole model or the Dense layer.",
                when=lambda got, ref: got["table frozen"] and not got["head trains"],
                example={"frozen_word_model": _frozen_model(model_trainable=False)}),
        Mistake("the table is frozen with PyTorch's requires_grad_(False): edugraph's layers "
                "honour it, but a Keras variable has no requires_grad_, so the model would "
                "not run in Keras. Freeze it Keras's way: trainable=False on the Embedding.",
                when=lambda got, ref: not got["requires_grad left alone"],
                example={"frozen_word_model": _frozen_with_requires_grad}),
        Mistake("the Dense layer is frozen and the table trains: it is the other way round "
                "(trainable=False on the Embedding).",
                when=lambda got, ref: not got["table frozen"] and not got["head trains"],
                example={"frozen_word_model": _frozen_model(table_trainable=True,
                                                            head_trainable=False)}),
        Mistake("the table is among the model's trainable_weights, so fit changes it: give "
                "the Embedding trainable=False.",
                when=lambda got, ref: not got["table frozen"],
                example={"frozen_word_model": _frozen_model(table_trainable=True)}),
    ),
)


# -------------------------------------------------- 11.3: freezing the PyTorch way, checked
class WordNet(nn.Module):
    """The lesson's WordClassifier: a table (``embedding``), then a linear head (``fc``)."""

    def __init__(self, vocab_size=VOCAB, embed_dim=DIM, num_classes=CLASSES):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.fc = nn.Linear(embed_dim, num_classes)

    def forward(self, ids):
        return self.fc(self.embedding(ids))


def _optimizer(value, call):
    optimizer = _returned(value, call)
    if isinstance(optimizer, eg.optim.Adam):
        return optimizer
    if isinstance(optimizer, eg.optim.Optimizer):
        raise WrongForm(f"{call} returned an eg.optim.{type(optimizer).__name__} optimizer; "
                        "the exercise asks for Adam, eg.optim.Adam(params, lr=lr).")
    if hasattr(optimizer, "apply_gradients"):
        raise WrongForm(f"{call} returned a TF-style optimizer ({type(optimizer).__name__}), "
                        "which has no step(): the PyTorch loop needs an eg.optim optimizer, "
                        "e.g. eg.optim.Adam(params, lr=lr).")
    raise WrongForm(f"{call} should return an optimizer such as eg.optim.Adam(params, lr=lr); "
                    f"it returned {_said(optimizer)}.")


def _training_results(make_optimizer, steps=3):
    """Three steps of the PyTorch loop with the optimizer ``make_optimizer(net, lr)`` returns:
    did the table keep its values, did backward leave it without a gradient, did the head
    learn, at the learning rate lr? (And, for hints: did the student set Keras's flag on the
    embedding module, or put it in eval mode?)"""
    net = WordNet()
    with eg.no_grad():
        net.embedding.weight.copy_(eg.tensor(_TABLE))
    lr = 0.05
    optimizer = _optimizer(make_optimizer(net, lr), f"head_only_optimizer(net, {lr})")
    head = {id(p) for p in net.fc.parameters()}
    head_before = net.fc.weight.numpy()
    table_had_gradient = False
    for _ in range(steps):
        loss = F.cross_entropy(net(eg.tensor(_IDS)), eg.tensor(_LABELS))
        optimizer.zero_grad()
        loss.backward()
        table_had_gradient |= net.embedding.weight.grad is not None
        optimizer.step()
    return {"table unchanged": bool(np.array_equal(net.embedding.weight.numpy(), _TABLE)),
            "no table gradient": not table_had_gradient,
            "head trained": not np.array_equal(net.fc.weight.numpy(), head_before),
            "head's learning rate is lr": all(
                group["lr"] == lr for group in optimizer.param_groups
                if any(id(p) in head for p in group["params"])),
            "keras flag": getattr(net.embedding, "trainable", True) is False,
            "eval mode": not net.embedding.training}


def _run_head_only(answer):
    return _training_results(answer["head_only_optimizer"])


def _default_rate(net, lr):
    net.embedding.weight.requires_grad_(False)
    return eg.optim.Adam(net.fc.parameters())


def _right_optimizer(net, lr):
    net.embedding.weight.requires_grad_(False)
    return eg.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=lr)


def _nothing_frozen(net, lr):
    return eg.optim.Adam(net.parameters(), lr=lr)


def _head_frozen(net, lr):
    for p in net.fc.parameters():
        p.requires_grad_(False)
    return eg.optim.Adam(net.parameters(), lr=lr)


def _keras_flag(net, lr):
    net.embedding.trainable = False        # Keras's flag: PyTorch's parameters() ignores it
    return eg.optim.Adam(net.parameters(), lr=lr)


def _head_params_only(net, lr):
    return eg.optim.Adam(net.fc.parameters(), lr=lr)


def _eval_mode(net, lr):
    net.embedding.eval()
    return eg.optim.Adam(net.parameters(), lr=lr)


def _table_params_only(net, lr):
    net.embedding.weight.requires_grad_(False)
    return eg.optim.Adam(net.embedding.parameters(), lr=lr)


def _right_training_results():
    """What the reference head_only_optimizer gives (the keys a right answer must match)."""
    results = _training_results(_right_optimizer)
    del results["keras flag"], results["eval mode"]     # (for hints only)
    return results


def _table_moved(got):
    return not got["table unchanged"]


ex11_3 = Exercise(
    "11.3",
    reads={"head_only_optimizer": function},
    run=_run_head_only,
    reference=_right_training_results,
    passed="after 3 steps of the PyTorch loop the table has no gradient and has not moved, "
           "and the head has learnt.",
    expected="head_only_optimizer(net, lr) freezes the table with requires_grad_(False) "
             "(on net.embedding.weight, or on the module net.embedding) and returns an "
             "eg.optim optimizer for the head, with learning rate lr.",
    mistakes=(
        Mistake("the head is frozen and the table trains: it is the other way round. Call "
                "requires_grad_(False) on net.embedding.weight, not on net.fc's parameters.",
                when=lambda got, ref: _table_moved(got) and not got["head trained"],
                example={"head_only_optimizer": _head_frozen}),
        Mistake("eval() switches dropout and batch norm to inference; it does not stop "
                "gradients, so the table moved. Freeze it with requires_grad_(False).",
                when=lambda got, ref: _table_moved(got) and got["eval mode"],
                example={"head_only_optimizer": _eval_mode}),
        Mistake("`trainable = False` is Keras's switch; PyTorch ignores it on a module, so "
                "backward still computed the table's gradient and the optimizer moved the "
                "table. Use net.embedding.weight.requires_grad_(False).",
                when=lambda got, ref: not got["no table gradient"] and got["keras flag"],
                example={"head_only_optimizer": _keras_flag}),
        Mistake("the table moved: backward gave it a gradient and the optimizer used it. "
                "Freeze it first: net.embedding.weight.requires_grad_(False).",
                when=lambda got, ref: _table_moved(got),
                example={"head_only_optimizer": _nothing_frozen}),
        Mistake("the head did not learn: the optimizer must get the head's parameters "
                "(net.fc.parameters(), or every parameter that requires grad).",
                when=lambda got, ref: not got["head trained"],
                example={"head_only_optimizer": _table_params_only}),
        Mistake("the table is frozen and the head learns, but not at the learning rate lr: "
                "pass it, eg.optim.Adam(params, lr=lr).",
                when=lambda got, ref: not got["head's learning rate is lr"],
                example={"head_only_optimizer": _default_rate}),
        Mistake("the table stays, because the optimizer does not hold it, but backward still "
                "computes its gradient at every step (and zero_grad, which clears only the "
                "optimizer's parameters, lets it pile up in .grad). Freeze it: "
                "requires_grad_(False).",
                when=lambda got, ref: not got["no table gradient"],
                example={"head_only_optimizer": _head_params_only}),
    ),
)


# --------------------------------------------- 11.4: the rows a step changes, SGD and Adam
ROWS_11 = 10
BATCHES_11 = ([4, 1, 4], [6, 0], [1, 8])
_WEIGHTS_11 = np.array([1.0, -2.0, 3.0], dtype=np.float32)   # no row's gradient is zero


def _changed_by_last_step(make_optimizer):
    """The rows of a 10-row table that the third step changes, as edugraph computes them."""
    table = nn.Embedding(ROWS_11, len(_WEIGHTS_11))
    optimizer = make_optimizer(table.parameters())
    for ids in BATCHES_11:
        before = table.weight.numpy()
        loss = (table(eg.tensor(np.array(ids))) * eg.tensor(_WEIGHTS_11)).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return tuple(int(i) for i in np.flatnonzero((table.weight.numpy() != before).any(axis=1)))


def _rows_reference():
    return {"sgd_rows": _changed_by_last_step(lambda p: eg.optim.SGD(p, lr=0.1)),
            "adam_rows": _changed_by_last_step(lambda p: eg.optim.Adam(p, lr=0.1))}


def row_numbers(value, name):
    """A set of table rows: a set, list, tuple, range or 1-D array of whole numbers from 0 to
    9, read as a sorted tuple (the order and repeats do not matter)."""
    if isinstance(value, (set, frozenset, list, tuple, range)):
        items = list(value)
    elif isinstance(value, (np.ndarray, Tensor)):
        items = array(value, name)
        if items.ndim != 1:
            raise WrongForm(f"{name} should be a set of row numbers such as {{0, 4}}; it is "
                            f"{_said(value)}.")
        items = list(items)
    else:
        raise WrongForm(f"{name} should be a set of row numbers such as {{0, 4}} (a set, list "
                        f"or tuple; one row is {{5}}); it is {_said(value)}.")
    for item in items:
        if isinstance(item, (bool, np.bool_)) or not isinstance(item, numbers.Real) \
                or not np.isfinite(item) or item != round(item):
            raise WrongForm(f"{name} should hold whole row numbers such as 0 or 4; it holds "
                            f"{_said(item)}.")
        if not 0 <= item < ROWS_11:
            raise WrongForm(f"{name} holds {int(item)}, but the table's rows are 0 to "
                            f"{ROWS_11 - 1}.")
    return tuple(sorted({int(item) for item in items}))


def _rows(*batches):
    return tuple(sorted({i for batch in batches for i in batch}))


def _as_set(rows):
    return "{" + ", ".join(str(i) for i in rows) + "}"


_LAST_BATCH = _rows(BATCHES_11[-1])
_EVER_SEEN = _rows(*BATCHES_11)

ex11_4 = Exercise(
    "11.4",
    reads={"sgd_rows": row_numbers, "adam_rows": row_numbers},
    reference=_rows_reference,
    passed=lambda got: f"the third step changes rows {_as_set(got['sgd_rows'])} with SGD (the "
                       f"batch's rows only) and rows {_as_set(got['adam_rows'])} with Adam "
                       "(every row whose running averages are not zero).",
    expected="sgd_rows and adam_rows are sets of row numbers, 0 to 9.",
    mistakes=(
        Mistake("sgd_rows and adam_rows are swapped: which of the two optimizers remembers "
                "earlier gradients?",
                gives=lambda: {"sgd_rows": _EVER_SEEN, "adam_rows": _LAST_BATCH}),
        Mistake("adam_rows: Adam steps along running averages of each row's past gradients, "
                "so rows from earlier batches move too, not only the batch's.",
                when=lambda got, ref: got["adam_rows"] == _LAST_BATCH,
                example={"sgd_rows": _LAST_BATCH, "adam_rows": _LAST_BATCH}),
        Mistake("adam_rows leaves out rows of earlier batches: a row's running average "
                "shrinks by β₁ each step but never reaches zero, so every row looked up "
                "before still moves in the third step.",
                when=lambda got, ref: set(_LAST_BATCH) <= set(got["adam_rows"])
                < set(_EVER_SEEN),
                example={"sgd_rows": _LAST_BATCH, "adam_rows": _rows(*BATCHES_11[1:])}),
        Mistake("adam_rows leaves out the third batch's own rows: they have a gradient in "
                "this step, so Adam moves them too.",
                when=lambda got, ref: set(got["adam_rows"]) == set(_EVER_SEEN) -
                set(_LAST_BATCH),
                example={"sgd_rows": _LAST_BATCH,
                         "adam_rows": tuple(sorted(set(_EVER_SEEN) - set(_LAST_BATCH)))}),
        Mistake("adam_rows holds rows that were never looked up: their averages are zero, "
                "so their Adam step is zero too.",
                when=lambda got, ref: set(got["adam_rows"]) > set(_EVER_SEEN),
                example={"sgd_rows": _LAST_BATCH, "adam_rows": tuple(range(ROWS_11))}),
        Mistake("sgd_rows: plain SGD has no memory; a step moves a row by −lr times its "
                "current gradient, which is zero for rows outside the batch.",
                when=lambda got, ref: set(got["sgd_rows"]) > set(_LAST_BATCH),
                example={"sgd_rows": _EVER_SEEN, "adam_rows": _EVER_SEEN}),
    ),
)

EXERCISES = [ex11_1, ex11_2, ex11_3, ex11_4]
