"""Lesson 11's exercises: right answers, written here by hand and in several styles, pass; nudged
ones fail; the mistakes that need more than their example (tests/test_exercises.py feeds every
example) get the right hint, and the checks' own references demand what the prompts ask."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import layers, nn
from edugraph.exercises.checking import find
from tests.exercise_lines import line_of


# ------------------------------------------------------------------ right answers, by hand
def keras_frozen(table, num_classes):
    """Section 3's pattern: Constant(table) and trainable=False."""
    return eg.Sequential([
        layers.Embedding(table.shape[0], table.shape[1],
                         embeddings_initializer=eg.initializers.Constant(table),
                         trainable=False, input_shape=()),
        layers.Dense(num_classes, activation="softmax")])


def keras_frozen_later(table, num_classes):
    """The functional API, the table set and frozen after the layer is built."""
    ids = eg.Input(shape=())
    lookup = layers.Embedding(*table.shape)
    model = eg.Model(ids, layers.Dense(num_classes, activation="softmax")(lookup(ids)))
    lookup.set_weights([table])
    lookup.trainable = False
    return model


def keras_2_weights(table, num_classes):
    """Keras 2's weights=[table] (Keras 3 also takes weights=table)."""
    return eg.Sequential([layers.Embedding(*table.shape, weights=[table], trainable=False,
                                           input_shape=()),
                          layers.Dense(num_classes, activation="softmax")])


def keras_frozen_flattened(table, num_classes):
    """Ids of shape (n, 1), as many Keras examples have them, then Flatten."""
    return eg.Sequential([
        layers.Embedding(*table.shape, embeddings_initializer=eg.initializers.Constant(table),
                         trainable=False, input_shape=(1,)),
        layers.Flatten(),
        layers.Dense(num_classes, activation="softmax")])


def freeze_then_filter(net, lr):
    net.embedding.weight.requires_grad_(False)
    return eg.optim.Adam([p for p in net.parameters() if p.requires_grad], lr=lr)


def freeze_the_module(net, lr):
    """PyTorch's module-level requires_grad_: every parameter of the table's module."""
    net.embedding.requires_grad_(False)
    return eg.optim.Adam(net.parameters(), lr=lr)


def optimizer_first_then_freeze(net, lr):
    """PyTorch's order does not matter: the optimizer skips a parameter whose .grad is None."""
    optimizer = eg.optim.Adam(net.parameters(), lr=lr)
    net.embedding.weight.requires_grad = False
    return optimizer


SOLUTIONS = {
    "11.1": [{"trainable_count": (32 * 64 + 64) + (64 * 4 + 4), "frozen_count": 500 * 32}],
    "11.2": [{"frozen_word_model": f}
             for f in (keras_frozen, keras_frozen_later, keras_frozen_flattened,
                       keras_2_weights)],
    "11.3": [{"head_only_optimizer": f}
             for f in (freeze_then_filter, optimizer_first_then_freeze, freeze_the_module)],
    "11.4": [{"sgd_rows": {1, 8}, "adam_rows": {0, 1, 4, 6, 8}},
             {"sgd_rows": [8, 1, 8], "adam_rows": np.array([8, 6, 4, 1, 0])},
             {"sgd_rows": (1.0, 8.0), "adam_rows": eg.tensor([0, 1, 4, 6, 8])}],
}


@pytest.mark.parametrize("exercise_id, index",
                         [(e, i) for e, answers in SOLUTIONS.items() for i in range(len(answers))])
def test_a_right_answer_passes(exercise_id, index):
    assert line_of(exercise_id, SOLUTIONS[exercise_id][index]).startswith(f"✓ {exercise_id}: ")


def test_the_references_demand_what_the_prompts_ask():
    """The references of 11.2 and 11.3 are computed by running a reference answer: they must
    say that everything holds (no check may demand a broken model)."""
    assert set(find("11.2").right_answer().values()) == {True}
    assert set(find("11.3").right_answer().values()) == {True}
    assert find("11.4").right_answer() == {"sgd_rows": (1, 8), "adam_rows": (0, 1, 4, 6, 8)}


# ------------------------------------------------------------------------ nudged answers
def test_11_1_a_nudged_count_fails():
    right = SOLUTIONS["11.1"][0]
    for name, value in right.items():
        for nudge in (-1, 1):
            assert line_of("11.1", {**right, name: value + nudge}).startswith("✗ 11.1: "), name


def test_11_4_a_row_more_or_less_fails():
    right = SOLUTIONS["11.4"][0]
    for name, rows in right.items():
        for changed in (rows | {9}, rows - {1}):
            assert line_of("11.4", {**right, name: changed}).startswith("✗ 11.4: "), name


# ----------------------------------------------------------------- 11.2: closer looks
def test_11_2_sizes_from_the_lesson_instead_of_the_arguments_are_explained():
    def six_kinds(table, num_classes):
        return keras_frozen(table, 6)

    assert line_of("11.2", {"frozen_word_model": six_kinds}) == (
        "✗ 11.2: the model of frozen_word_model(table, 3) turns 6 word ids into outputs of "
        "shape (6, 6); expected (6, 3): one output per class (num_classes), sized from the "
        "arguments, not from the lesson.")


def test_11_2_set_weights_before_the_layer_is_built_gets_a_hint():
    def too_early(table, num_classes):
        lookup = layers.Embedding(*table.shape, trainable=False)
        lookup.set_weights([table])
        return eg.Sequential([lookup, layers.Dense(num_classes, activation="softmax")])

    assert line_of("11.2", {"frozen_word_model": too_early}).startswith(
        "✗ 11.2: set_weights was called before the Embedding had its table")


def test_11_2_a_transposed_table_gets_a_hint():
    def transposed(table, num_classes):
        return keras_frozen(table.T, num_classes)

    assert line_of("11.2", {"frozen_word_model": transposed}).startswith(
        "✗ 11.2: the Embedding's table is transposed")


def test_11_2_a_pytorch_module_or_nothing_returned_is_explained_on_one_line():
    class WordClassifier(nn.Module):
        def __init__(self, table, num_classes):
            super().__init__()
            self.embedding = nn.Embedding(*table.shape)
            self.fc = nn.Linear(table.shape[1], num_classes)

        def forward(self, ids):
            return self.fc(self.embedding(ids))

    line = line_of("11.2", {"frozen_word_model": WordClassifier})
    assert line.endswith("it returned a WordClassifier, a PyTorch-style module.")
    assert "\n" not in line
    assert line_of("11.2", {"frozen_word_model": lambda table, n: None}) == (
        "✗ 11.2: frozen_word_model(table, 3) returned None: did you forget the `return`?")


def test_11_2_neither_loaded_nor_frozen_is_told_to_load_first():
    def plain(table, num_classes):
        return eg.Sequential([layers.Embedding(*table.shape),
                              layers.Dense(num_classes, activation="softmax")])

    assert line_of("11.2", {"frozen_word_model": plain}).startswith(
        "✗ 11.2: the Embedding does not start from `table`")


# ----------------------------------------------------------------- 11.3: closer looks
def test_11_3_the_wrong_kind_of_optimizer_or_none_is_explained():
    assert "TF-style optimizer (AdamOptimizer), which has no step()" in line_of(
        "11.3", {"head_only_optimizer": lambda net, lr: eg.train.AdamOptimizer(lr)})
    assert line_of("11.3", {"head_only_optimizer": lambda net, lr: None}) == (
        "✗ 11.3: head_only_optimizer(net, 0.05) returned None: did you forget the `return`?")


def test_11_3_a_zero_learning_rate_for_the_table_still_computes_its_gradient():
    def zero_rate(net, lr):
        return eg.optim.Adam([{"params": net.fc.parameters()},
                              {"params": net.embedding.parameters(), "lr": 0.0}], lr=lr)

    assert line_of("11.3", {"head_only_optimizer": zero_rate}).startswith(
        "✗ 11.3: the table stays, because the optimizer does not hold it, but backward")


def test_11_3_the_head_in_groups_of_its_own_passes_and_a_forgotten_rate_fails():
    def grouped(net, lr):
        net.embedding.weight.requires_grad_(False)
        return eg.optim.Adam([{"params": [net.fc.weight]}, {"params": [net.fc.bias]}], lr=lr)

    assert line_of("11.3", {"head_only_optimizer": grouped}).startswith("✓ 11.3")

    def bias_at_another_rate(net, lr):
        net.embedding.weight.requires_grad_(False)
        return eg.optim.Adam([{"params": [net.fc.weight]},
                              {"params": [net.fc.bias], "lr": 0.001}], lr=lr)

    assert line_of("11.3", {"head_only_optimizer": bias_at_another_rate}).startswith(
        "✗ 11.3: the table is frozen and the head learns, but not at the learning rate lr")


def test_11_3_an_error_in_the_students_code_names_their_line():
    def typo(net, lr):
        net.embeding.weight.requires_grad_(False)
        return eg.optim.Adam(net.parameters(), lr=lr)

    line = line_of("11.3", {"head_only_optimizer": typo})
    assert line.startswith("✗ 11.3: running your answer raised AttributeError:")
    assert "net.embeding.weight.requires_grad_(False))" in line


# ----------------------------------------------------------------- 11.4: closer looks
@pytest.mark.parametrize("adam_rows, hint", [
    ({1, 8, 4}, "adam_rows leaves out rows of earlier batches"),
    ({0, 1, 4, 6, 8, 9}, "adam_rows holds rows that were never looked up"),
])
def test_11_4_adam_rows_partly_right_get_their_hint(adam_rows, hint):
    assert line_of("11.4", {"sgd_rows": {1, 8}, "adam_rows": adam_rows}).startswith(
        f"✗ 11.4: {hint}")


@pytest.mark.parametrize("rows, message", [
    ({"1", "8"}, "sgd_rows should hold whole row numbers such as 0 or 4; it holds a str"),
    ({1, 10}, "sgd_rows holds 10, but the table's rows are 0 to 9."),
    (8, "sgd_rows should be a set of row numbers such as {0, 4}"),
    ({1.5}, "sgd_rows should hold whole row numbers"),
])
def test_11_4_rows_of_the_wrong_form_are_explained(rows, message):
    line = line_of("11.4", {"sgd_rows": rows, "adam_rows": {0, 1, 4, 6, 8}})
    assert line.startswith(f"✗ 11.4: {message}"), line


def test_11_2_a_pytorch_style_model_is_named_as_one():
    def frozen_word_model(table, num_classes):
        return nn.Sequential(nn.Embedding.from_pretrained(eg.tensor(table)),
                             nn.Linear(table.shape[1], num_classes))

    line = line_of("11.2", {"frozen_word_model": frozen_word_model})
    assert "a PyTorch-style module" in line and "softmax" not in line, line


def test_11_3_an_optimizer_other_than_adam_is_refused():
    line = line_of("11.3", {"head_only_optimizer":
                            lambda net, lr: eg.optim.SGD(net.fc.parameters(), lr=lr)})
    assert line.startswith("✗ 11.3: head_only_optimizer(net, 0.05) returned an eg.optim.SGD "
                           "optimizer"), line
    assert line.endswith("the exercise asks for Adam, eg.optim.Adam(params, lr=lr).")
