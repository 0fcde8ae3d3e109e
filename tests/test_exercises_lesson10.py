"""Lesson 10's exercises: the reference answers pass, a nudged answer fails, and the mistakes
that need more than their example (tests/test_exercises.py feeds every example) are seen."""
import numpy as np
import pytest

import edugraph as eg
from edugraph import nn
from edugraph.nn import functional as F
from tests.exercise_lines import line_of


def by_hand_10_2():
    x = np.array([[1.0, 2.0, -1.0], [0.0, 1.0, 2.0]])
    w = np.array([[1.0, -1.0, 0.5, 2.0], [0.5, 1.0, -1.0, 0.0], [-1.0, 0.5, 1.0, 1.0]])
    b = np.array([0.0, 0.0, 0.5, -1.5])
    keep = np.array([[1, 0, 1, 1], [0, 1, 1, 1]])
    g = np.array([[1.0, 0.5, -1.0, 2.0], [2.0, -1.0, 0.5, 1.0]])
    delta = g * keep * 2 * (x @ w + b > 0)
    return {"dW2": x.T @ delta, "db2": delta.sum(axis=0)}


class FixedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 32)
        self.out = nn.Linear(32, 10)

    def forward(self, x):
        return self.out(F.dropout(F.relu(self.hidden(x)), 0.5, training=self.training))


class WithDropoutModule(nn.Module):
    """The other right answer: an nn.Dropout child, which eval() reaches too."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 32)
        self.drop = nn.Dropout(0.5)
        self.out = nn.Linear(32, 10)

    def forward(self, x):
        return self.out(self.drop(F.relu(self.hidden(x))))


SOLUTIONS = {
    # kept units 0, 2, 3 times 1/(1 - 0.2) = 1.25; the gradient: upstream times the same mask
    "10.1": {"out1": [1.5 * 1.25, 0.0, 2.0 * 1.25, 3.0 * 1.25, 0.0],
             "dh1": [2.0 * 1.25, 0.0, 0.4 * 1.25, 1.0 * 1.25, 0.0]},
    "10.2": by_hand_10_2(),
    # y = 8 with probability 3/4, else 0: E = 6, E[y²] = 48
    "10.3": {"mean3": 6.0, "var3": 48.0 - 36.0, "paper_factor3": 0.75},
    "10.4": {"FixedNet": FixedNet},
}


@pytest.mark.parametrize("exercise_id", SOLUTIONS)
def test_the_reference_answer_passes(exercise_id):
    assert line_of(exercise_id, SOLUTIONS[exercise_id]).startswith(f"✓ {exercise_id}: ")


@pytest.mark.parametrize("exercise_id", ["10.1", "10.2", "10.3"])
def test_a_nudged_number_fails(exercise_id):
    for name, value in SOLUTIONS[exercise_id].items():
        nudged = {**SOLUTIONS[exercise_id], name: np.asarray(value) + 0.01}
        assert line_of(exercise_id, nudged).startswith(f"✗ {exercise_id}: "), name


def test_10_1_a_tensor_and_a_tuple_are_read_as_numbers():
    answer = {"out1": eg.tensor(SOLUTIONS["10.1"]["out1"]), "dh1": tuple(SOLUTIONS["10.1"]["dh1"])}
    assert line_of("10.1", answer).startswith("✓ 10.1")


def test_10_1_a_mistake_in_the_other_form_is_seen_too():
    """Both parts without the scale: the forward's hint comes first."""
    right = SOLUTIONS["10.1"]
    unscaled = {name: np.asarray(v) / 1.25 for name, v in right.items()}
    assert "leaves the kept ones as they are" in line_of("10.1", unscaled)
    # the gradient of every unit, as if nothing was dropped, times the scale
    through = {**right, "dh1": np.array([2.0, -1.0, 0.4, 1.0, 3.0])}
    assert "sends gradient to the dropped units too" in line_of("10.1", through)
    # a mask of its own: eg.nn.dropout at the default rate 0.5 (0 or twice h)
    own_mask = {**right, "out1": eg.tensor([3.0, 1.0, 0.0, 6.0, 0.0])}
    assert "keeps other units than this draw" in line_of("10.1", own_mask)


def test_10_1_a_wrongly_shaped_answer_says_what_is_expected():
    line = line_of("10.1", {**SOLUTIONS["10.1"], "out1": [1.875, 2.5, 3.75]})
    assert line.startswith("✗ 10.1: not right yet. out1 and dh1 are 5 numbers each")
    assert "dh1 is right; out1 is not" in line


def test_10_2_mistakes_in_another_form():
    right = SOLUTIONS["10.2"]
    half = {name: v / 2 for name, v in right.items()}
    assert "half the right ones" in line_of("10.2", half)
    # the mask ignored, but without the scale either
    x = np.array([[1.0, 2.0, -1.0], [0.0, 1.0, 2.0]])
    z_positive = np.array([[1, 1, 0, 0], [0, 1, 1, 1]])
    g = np.array([[1.0, 0.5, -1.0, 2.0], [2.0, -1.0, 0.5, 1.0]])
    assert "dropout zeroed" in line_of("10.2", {**right, "dW2": x.T @ (g * z_positive)})
    assert "transposed" in line_of("10.2", {**right, "dW2": right["dW2"].T.tolist()})
    # z = XW without b: the mask of unit 3 of example 0 is wrong
    no_bias = g * np.array([[1, 0, 1, 1], [0, 1, 1, 1]]) * 2 * (x @ np.array(
        [[1.0, -1.0, 0.5, 2.0], [0.5, 1.0, -1.0, 0.0], [-1.0, 0.5, 1.0, 1.0]]) > 0)
    assert "leaves b out" in line_of("10.2", {"dW2": x.T @ no_bias, "db2": no_bias.sum(0)})


def test_10_3_a_wrong_number_gets_the_form_not_the_value():
    line = line_of("10.3", {**SOLUTIONS["10.3"], "var3": 5.0})
    assert line == ("✗ 10.3: not right yet. mean3, var3 and paper_factor3 are three numbers "
                    "(checked to 1e-6). (mean3 and paper_factor3 are right; var3 is not.)")


def test_10_4_an_nn_dropout_child_passes_too():
    assert line_of("10.4", {"FixedNet": WithDropoutModule}).startswith("✓ 10.4")


def test_10_4_the_mode_read_from_the_method_instead_of_the_flag_still_drops_at_eval():
    class ReadsTheMethod(FixedNet):
        def forward(self, x):
            # self.train is a bound method, always true
            return self.out(F.dropout(F.relu(self.hidden(x)), 0.5, training=self.train))

    assert "FixedNet still drops after eval()" in line_of("10.4", {"FixedNet": ReadsTheMethod})


def test_10_4_a_flag_set_once_in_init_does_not_follow_eval():
    class FlagInInit(FixedNet):
        def __init__(self):
            super().__init__()
            self.dropping = True

        def forward(self, x):
            h = F.relu(self.hidden(x))
            return self.out(F.dropout(h, 0.5, training=self.dropping))

    assert "FixedNet still drops after eval()" in line_of("10.4", {"FixedNet": FlagInInit})


def test_10_4_dropout_in_another_place_is_seen():
    class DropsTheInput(FixedNet):
        def forward(self, x):
            x = F.dropout(x, 0.5, training=self.training)
            return self.out(F.relu(self.hidden(x)))

    assert "keep AlwaysDrops's rate and place" in line_of("10.4", {"FixedNet": DropsTheInput})


def test_10_4_wrong_forms_get_one_line():
    assert line_of("10.4", {"FixedNet": FixedNet()}) == (
        "✗ 10.4: FixedNet should be the class itself, a subclass of nn.Module "
        "(class FixedNet(nn.Module): ...), not an instance or a function.")

    class OtherLayers(FixedNet):
        def __init__(self):
            super().__init__()
            self.hidden = nn.Linear(64, 16)
            self.out = nn.Linear(16, 10)

    assert "needs AlwaysDrops's layers" in line_of("10.4", {"FixedNet": OtherLayers})

    class Typo(FixedNet):
        def forward(self, x):
            return self.out(F.dropout(F.relu(self.hiden(x)), 0.5, training=self.training))

    line = line_of("10.4", {"FixedNet": Typo})
    assert line.startswith("✗ 10.4: running your answer raised AttributeError")
    assert "(in forward, line" in line


@pytest.mark.parametrize("rate", [0.45, 0.55, 0.2])
def test_10_4_dropout_at_another_rate_than_one_half_is_told_so(rate):
    from edugraph.exercises.lesson10 import F, _net_with
    other = _net_with(lambda self, h: F.dropout(h, p=rate, training=self.training))
    assert line_of("10.4", {"FixedNet": other}) == (
        "✗ 10.4: FixedNet drops another share of the hidden units than half: AlwaysDrops's "
        "rate is p = 0.5; keep it.")


def test_10_4_multiplicative_gaussian_noise_drops_nothing_and_is_told_so():
    from edugraph.exercises.lesson10 import _gaussian_noise
    assert line_of("10.4", {"FixedNet": _gaussian_noise}).startswith(
        "✗ 10.4: in training mode FixedNet multiplies the hidden units by random factors but "
        "sets none of them to 0")
