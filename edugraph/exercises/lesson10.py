"""Lesson 10's exercises: inverted dropout forward and backward by hand; a layer's gradient
through ReLU and dropout; the mean and the variance of a dropped unit; a PyTorch-style module
whose dropout stops at evaluation.

Dropout is ``h · mask`` with a mask of 0 (dropped) and 1/(1 − p) (kept): ``eg.nn.dropout`` is
exactly that multiplication. Its mask is random, so the references below multiply by the
exercises' given masks with the same edugraph ops, and let ``backward()`` do the rest.
"""
import numpy as np

import edugraph as eg
from edugraph import nn
from edugraph.nn import functional as F

from .answers import WrongForm, array, close, function, number
from .checking import Exercise, Mistake


def _leaf(values):
    return eg.tensor(values, dtype=eg.float64, requires_grad=True)


def _constant(values):
    return eg.tensor(values, dtype=eg.float64)


# ------------------------------------------------------- 10.1: inverted dropout by hand
H1 = np.array([1.5, 0.5, 2.0, 3.0, 1.0])
KEEP1 = np.array([1.0, 0.0, 1.0, 1.0, 0.0])     # this draw keeps units 0, 2 and 3
G1 = np.array([2.0, -1.0, 0.4, 1.0, 3.0])        # the gradient arriving at dropout's output
RATE1 = 0.2


def _dropout_by_parts(mask):
    """Dropout's output and the gradient it passes back to h, when it multiplies by mask."""
    h = _leaf(H1)
    out = h * _constant(mask)
    (out * _constant(G1)).sum().backward()
    return {"out1": out.numpy(), "dh1": h.grad.numpy()}


def _with(name, values):
    """The right answer with one part replaced (what a student with one slip sets)."""
    return {**_dropout_by_parts(KEEP1 / (1 - RATE1)), name: values}


def _part_is(name, values):
    return lambda got, reference: close(got[name], values)


def _some_units_kept(out):
    """Whether each unit is 0 or kept (scaled or not) in out: a dropout with another mask."""
    kept = [H1 * s for s in (1.0, 1 / (1 - RATE1), 2.0)]       # 2.0: the default rate 0.5
    return out.shape == H1.shape and all(
        np.isclose(o, 0.0) or any(np.isclose(o, k[i]) for k in kept) for i, o in enumerate(out))


ex10_1 = Exercise(
    "10.1",
    reads={"out1": array, "dh1": array},
    reference=lambda: _dropout_by_parts(KEEP1 / (1 - RATE1)),
    passed="units 0, 2 and 3 are kept and scaled by 1/(1 − p) = 1.25, the others are 0; the "
           "gradient is 0 where dropped and 1.25 × upstream where kept: the mul by the mask "
           "routes and scales.",
    expected="out1 and dh1 are 5 numbers each (a list or a numpy array), in the units' order "
             "(checked to 1e-6).",
    mistakes=(
        Mistake("out1 drops the right units but leaves the kept ones as they are: inverted "
                "dropout divides them by 1 − p, so that the output's average stays h.",
                when=_part_is("out1", H1 * KEEP1), example=_with("out1", H1 * KEEP1)),
        Mistake("out1 multiplies the kept units by 1 − p: that is the original paper's factor, "
                "applied at inference. Inverted dropout divides by 1 − p during training.",
                when=_part_is("out1", H1 * KEEP1 * (1 - RATE1)),
                example=_with("out1", H1 * KEEP1 * (1 - RATE1))),
        Mistake("out1 divides the kept units by the rate p; divide by the probability of "
                "keeping a unit, 1 − p.",
                when=_part_is("out1", H1 * KEEP1 / RATE1),
                example=_with("out1", H1 * KEEP1 / RATE1)),
        Mistake("out1 keeps other units than this draw, which keeps units 0, 2 and 3 and "
                "drops 1 and 4 (eg.nn.dropout would draw a mask of its own).",
                when=lambda got, ref: not close(got["out1"], ref["out1"])
                and _some_units_kept(got["out1"]),
                example=_with("out1", H1 * np.array([0.0, 1.0, 1.0, 0.0, 1.0]) / (1 - RATE1))),
        Mistake("dh1 sends gradient to the dropped units too: their output is 0 whatever h "
                "is, so the mul by a mask entry of 0 passes back 0.",
                when=lambda got, ref: any(close(got["dh1"], G1 * s)
                                          for s in (1.0, 1 / (1 - RATE1), 1 - RATE1)),
                example=_with("dh1", G1 / (1 - RATE1))),
        Mistake("dh1 is 0 in the right places but scaled wrongly: the backward multiplies by "
                "the same mask as the forward, 1/(1 − p) where a unit is kept.",
                when=lambda got, ref: any(close(got["dh1"], G1 * KEEP1 * s)
                                          for s in (1.0, 1 - RATE1, 1 / RATE1)),
                example=_with("dh1", G1 * KEEP1)),
        Mistake("dh1 is dropout's local derivative, the mask alone; the gradient it passes "
                "back is the upstream gradient g times the mask (the chain rule).",
                when=_part_is("dh1", KEEP1 / (1 - RATE1)),
                example=_with("dh1", KEEP1 / (1 - RATE1))),
        Mistake("dh1 multiplies the upstream gradient by dropout's output; a mul gate passes "
                "the upstream times its OTHER input, the mask.",
                when=lambda got, ref: close(got["dh1"], G1 * ref["out1"]),
                example=_with("dh1", G1 * H1 * KEEP1 / (1 - RATE1))),
    ),
)


# ------------------------------------------------ 10.2: a layer through ReLU and dropout
X2 = np.array([[1.0, 2.0, -1.0],
               [0.0, 1.0, 2.0]])
W2 = np.array([[1.0, -1.0, 0.5, 2.0],
               [0.5, 1.0, -1.0, 0.0],
               [-1.0, 0.5, 1.0, 1.0]])
B2 = np.array([0.0, 0.0, 0.5, -1.5])            # makes z of unit 3, example 0 negative
KEEP2 = np.array([[1.0, 0.0, 1.0, 1.0],        # unit 1 of example 0 is dropped, though its
                  [0.0, 1.0, 1.0, 1.0]])       # z > 0; unit 2 is kept, though its z < 0
G2 = np.array([[1.0, 0.5, -1.0, 2.0],
               [2.0, -1.0, 0.5, 1.0]])
RATE2 = 0.5


def _layer_gradients(mask=KEEP2 / (1 - RATE2), relu=True, bias_per_example=False, bias=B2):
    """dL/dW and dL/db for L = Σ G2 ⊙ dropout(relu(X2 W + b)), dropout multiplying by mask.
    ``bias_per_example``: b as one row per example, so its gradient is not summed."""
    w = _leaf(W2)
    b = _leaf(np.tile(bias, (len(X2), 1)) if bias_per_example else bias)
    z = eg.matmul(_constant(X2), w) + b
    d = (eg.relu(z) if relu else z) * _constant(mask)
    (d * _constant(G2)).sum().backward()
    return {"dW2": w.grad.numpy(), "db2": b.grad.numpy()}


def _dw_is(*variants):
    return lambda got, ref: any(close(got["dW2"], _layer_gradients(**v)["dW2"])
                                for v in variants)


ex10_2 = Exercise(
    "10.2",
    reads={"dW2": array, "db2": array},
    reference=_layer_gradients,
    passed="dW = Xᵀ·δ and db = Σ δ over the examples, with δ = G · relu'(z) · mask: "
           "ReLU and dropout both route (0 or through), dropout also scales by 2.",
    expected="dW2 has W's shape (3, 4) and db2 has b's shape (4,) (checked to 1e-6).",
    mistakes=(
        # the batch has 2 examples: a mean over it halves the gradients as well
        Mistake("your gradients are half the right ones: dropout's backward multiplies by the "
                "mask, 1/(1 − p) = 2 where a unit is kept (and L sums over the batch: no "
                "division by the 2 examples).",
                when=_dw_is(dict(mask=KEEP2)),
                example=lambda: _layer_gradients(mask=KEEP2)),
        Mistake("gradient flows through units that dropout zeroed: their output is 0 whatever "
                "z is, so they pass back nothing.",
                when=_dw_is(dict(mask=np.ones_like(KEEP2)), dict(mask=2 * np.ones_like(KEEP2))),
                example=lambda: _layer_gradients(mask=2 * np.ones_like(KEEP2))),
        Mistake("gradient flows through units whose z is negative: there ReLU's output is 0 "
                "and its local derivative 0, kept by dropout or not.",
                when=_dw_is(dict(relu=False), dict(relu=False, mask=KEEP2)),
                example=lambda: _layer_gradients(relu=False)),
        Mistake("your ReLU mask leaves b out: z = XW + b, and b turns z of unit 3 of "
                "example 0 negative, so ReLU passes nothing back there.",
                when=_dw_is(dict(bias=np.zeros_like(B2))),
                example=lambda: _layer_gradients(bias=np.zeros_like(B2))),
        Mistake("dW2 is transposed: it has W's shape (3, 4), one row per input feature: "
                "Xᵀ @ δ.",
                when=lambda got, ref: close(got["dW2"], ref["dW2"].T),
                example=lambda: {**_layer_gradients(), "dW2": _layer_gradients()["dW2"].T}),
        Mistake("db2 has one row per example: b is added to every example's row, so its "
                "gradient sums the rows (branches sum).",
                when=lambda got, ref: close(got["db2"],
                                            _layer_gradients(bias_per_example=True)["db2"]),
                example=lambda: {**_layer_gradients(),
                                 "db2": _layer_gradients(bias_per_example=True)["db2"]}),
    ),
)


# ---------------------------------------------------- 10.3: mean and variance of a dropped unit
A3, RATE3 = 6.0, 0.25


def _moments(scale):
    """E[y] and Var[y] of y = a · m · scale, m = 0 with probability p and 1 otherwise: the two
    outcomes weighted by their probabilities (exact, no sampling)."""
    values, probabilities = np.array([0.0, A3 * scale]), np.array([RATE3, 1 - RATE3])
    mean = probabilities @ values
    return mean, probabilities @ values ** 2 - mean ** 2


def _unit_reference():
    mean, variance = _moments(1 / (1 - RATE3))
    # the paper trains with a 0/1 mask (mean (1 − p)·a) and scales at inference to match it
    return {"mean3": mean, "var3": variance, "paper_factor3": _moments(1.0)[0] / A3}


def _unit_with(name, value):
    return {**_unit_reference(), name: value}


def _is(name, value):
    return lambda got, reference: np.isclose(got[name], value)


_SECOND_MOMENT = _unit_reference()["var3"] + _unit_reference()["mean3"] ** 2

ex10_3 = Exercise(
    "10.3",
    reads={"mean3": number, "var3": number, "paper_factor3": number},
    reference=_unit_reference,
    passed="E[y] = {mean3:g} = a (inverted dropout keeps the mean), Var[y] = {var3:g} = "
           "a²·p/(1 − p), and the paper's inference factor is 1 − p = {paper_factor3:g}.",
    expected="mean3, var3 and paper_factor3 are three numbers (checked to 1e-6).",
    mistakes=(
        Mistake("mean3 is the mean of a unit that is kept without scaling, (1 − p)·a; inverted "
                "dropout keeps a/(1 − p).",
                when=_is("mean3", (1 - RATE3) * A3),
                example=_unit_with("mean3", (1 - RATE3) * A3)),
        Mistake("var3 is the variance of the unscaled unit, a²·p(1 − p): the kept value is "
                "a/(1 − p), not a.",
                when=_is("var3", _moments(1.0)[1]), example=_unit_with("var3", _moments(1.0)[1])),
        Mistake("var3 is E[y²]; the variance is E[y²] − E[y]².",
                when=_is("var3", _SECOND_MOMENT), example=_unit_with("var3", _SECOND_MOMENT)),
        Mistake("var3 swaps p and 1 − p: y is 0 with probability p, the rate, and a/(1 − p) "
                "with probability 1 − p.",
                when=_is("var3", A3 ** 2 * (1 - RATE3) / RATE3),
                example=_unit_with("var3", A3 ** 2 * (1 - RATE3) / RATE3)),
        Mistake("var3 is the standard deviation; the variance is its square.",
                when=_is("var3", np.sqrt(_unit_reference()["var3"])),
                example=_unit_with("var3", np.sqrt(_unit_reference()["var3"]))),
        Mistake("paper_factor3 is inverted dropout's training factor 1/(1 − p); the paper does "
                "not scale in training, so at inference it scales the other way.",
                when=_is("paper_factor3", 1 / (1 - RATE3)),
                example=_unit_with("paper_factor3", 1 / (1 - RATE3))),
        Mistake("paper_factor3 is the rate p of dropping; the factor is the probability of "
                "KEEPING a unit, 1 − p (which the paper calls p).",
                when=_is("paper_factor3", RATE3), example=_unit_with("paper_factor3", RATE3)),
    ),
)


# ----------------------------------------------- 10.4: dropout that stops at evaluation
RATE4 = 0.5
N_COPIES = 2000         # copies of one image: each row draws its own mask in training mode


class _FixedNet(nn.Module):
    """The reference: the mode of the module decides."""

    def __init__(self):
        super().__init__()
        self.hidden = nn.Linear(64, 32)
        self.out = nn.Linear(32, 10)

    def forward(self, x):
        h = F.relu(self.hidden(x))
        return self.out(F.dropout(h, p=RATE4, training=self.training))


def _net_with(drop):
    """A _FixedNet whose dropout is drop(module, h)."""
    def forward(self, x):
        return self.out(drop(self, F.relu(self.hidden(x))))
    return type("FixedNet", (_FixedNet,), {"forward": forward})


_still_drops_at_eval = _net_with(lambda self, h: F.dropout(h, p=RATE4))
_never_drops = _net_with(lambda self, h: F.dropout(h, p=RATE4, training=False))
_flag_reversed = _net_with(lambda self, h: F.dropout(h, p=RATE4, training=not self.training))
_not_scaled = _net_with(lambda self, h: h * eg.cast(eg.random.uniform(h.shape) >= RATE4,
                                                    h.dtype) if self.training else h)
_other_rate = _net_with(lambda self, h: F.dropout(h, p=0.2, training=self.training))
_nearly_half = _net_with(lambda self, h: F.dropout(h, p=0.45, training=self.training))
_gaussian_noise = _net_with(lambda self, h: h * (1 + eg.random.normal(h.shape))
                            if self.training else h)


class _DropsTheImage(_FixedNet):
    """Dropout on the input pixels instead of the hidden units."""

    def forward(self, x):
        return self.out(F.relu(self.hidden(F.dropout(x, p=RATE4, training=self.training))))


def _layer(net, name, size):
    layer = getattr(net, name, None)
    if not isinstance(layer, nn.Linear) or tuple(layer.weight.shape) != size[::-1]:
        raise WrongForm("FixedNet needs AlwaysDrops's layers: self.hidden = nn.Linear(64, 32) "
                        "and self.out = nn.Linear(32, 10).")
    return layer


def _net_behaviour(answer):
    """What FixedNet does in training mode and after eval(), on copies of one image."""
    net_class = answer["FixedNet"]
    if not (isinstance(net_class, type) and issubclass(net_class, eg.nn.Module)):
        raise WrongForm("FixedNet should be the class itself, a subclass of nn.Module "
                        "(class FixedNet(nn.Module): ...), not an instance or a function.")
    eg.random.set_seed(10)              # the same weights and masks at every check
    net = net_class()
    hidden, out = _layer(net, "hidden", (64, 32)), _layer(net, "out", (32, 10))
    image = np.random.default_rng(10).random((1, 64)).astype(np.float32)
    copies = np.repeat(image, N_COPIES, axis=0)
    seen = []                           # what reaches out: the hidden units, dropped or not
    forward = out.forward

    def recording(h, *args, **kwargs):
        seen.append(np.array(h.numpy() if isinstance(h, eg.Tensor) else h, np.float64))
        return forward(h, *args, **kwargs)
    out.forward = recording
    net.train()
    trained = array(net(eg.tensor(copies)), "FixedNet's output in training mode")
    reached_out = seen[0] if seen and seen[0].shape == (N_COPIES, 32) else None
    net.eval()
    evaluated = [array(net(eg.tensor(copies[:3])), "FixedNet's output after eval()")
                 for _ in range(2)]
    if trained.shape != (N_COPIES, 10) or evaluated[0].shape != (3, 10):
        raise WrongForm(f"FixedNet should give 10 outputs per image; for {N_COPIES} images it "
                        f"gave an array of shape {trained.shape}.")
    out.forward = forward
    with eg.no_grad():                  # the network without dropout, from its own layers
        units = F.relu(hidden(eg.tensor(image))).numpy().astype(np.float64)
        plain = out(eg.tensor(units, dtype=eg.float32)).numpy().astype(np.float64)
    # each active hidden unit (above 0 after the ReLU) in each copy: dropped (0) or kept,
    # and by how much a kept one was multiplied (1/(1 − p) = 2 for inverted dropout)
    active = units[0] > 0
    share_dropped, kept_scale = 0.0, "none"
    if reached_out is not None and active.any():
        passed = reached_out[:, active] / units[0, active]
        dropped = np.abs(passed) < 1e-6
        share_dropped = float(dropped.mean())
        kept = passed[~dropped]
        kept_scale = ("1/(1 − p)" if np.allclose(kept, 1 / (1 - RATE4), rtol=1e-4) else
                      "constant" if np.allclose(kept, kept[0], rtol=1e-4) else "other") \
            if kept.size else "none"
    weights = out.weight.numpy().astype(np.float64)
    # each kept hidden unit i adds W[j, i]·a_i/(1 − p), a dropped one 0: the variance of
    # output j is Σ_i W[j, i]² a_i² · p/(1 − p) (exercise 10.3, unit by unit)
    predicted_variance = (weights ** 2 * units ** 2).sum(axis=1) * RATE4 / (1 - RATE4)
    standard_error = np.sqrt(trained.var(axis=0) / N_COPIES) + 1e-6

    def average_is(expected):           # within 5 standard errors, for every output
        return (np.abs(trained.mean(axis=0) - expected) / standard_error).max() < 5

    bias = out.bias.numpy().astype(np.float64)
    return {
        "drops in training": bool(np.ptp(trained, axis=0).max() > 1e-4),
        "same output after eval()": bool(
            np.allclose(evaluated[0], evaluated[1], atol=1e-6)
            and np.allclose(evaluated[0], plain, rtol=1e-4, atol=1e-5)),
        # inverted dropout's average is the plain output; kept units left unscaled give
        # b + (1 − p)·(W a) instead; anything else is dropout somewhere else
        "average in training": "plain output" if average_is(plain[0]) else
        "unscaled" if average_is(bias + (1 - RATE4) * (plain[0] - bias)) else "other",
        "varies as p = 0.5 predicts": bool(
            0.8 < np.median(trained.var(axis=0) / predicted_variance) < 1.25),
        # (some 32,000 active units: a share of p = 0.5 lies within 0.01 of it, p = 0.45
        # does not)
        "drops a share p = 0.5": abs(share_dropped - RATE4) < 0.02,
        "kept units scaled": kept_scale,
        "share dropped": share_dropped,
    }


def _behaves(**how):
    return lambda got, reference: all(got[k] == v for k, v in how.items())


ex10_4 = Exercise(
    "10.4",
    reads={"FixedNet": function},
    run=_net_behaviour,
    reference=lambda: {k: v for k, v in _net_behaviour({"FixedNet": _FixedNet}).items()
                       if k != "share dropped"},
    passed=lambda got: (
        f"FixedNet drops {got['share dropped']:.1%} of the active hidden units after train() "
        f"(p = 0.5) and doubles the kept ones, 1/(1 − p) (its average over {N_COPIES} masks "
        "is the plain network's output), and gives the plain network's output, every time, "
        "after eval()."),
    expected="FixedNet() has AlwaysDrops's layers and gives 10 outputs per image; after "
             "train() its dropout drops half the hidden units, after eval() none.",
    mistakes=(
        Mistake("FixedNet still drops after eval(): F.dropout is a plain function that does "
                "not know the module's mode, and its training argument is True unless you "
                "pass it one (an nn.Dropout made inside forward is in training mode too: "
                "eval() never reaches it). Which attribute holds the mode that train() and "
                "eval() set?",
                when=_behaves(**{"drops in training": True, "same output after eval()": False}),
                example={"FixedNet": _still_drops_at_eval}),
        Mistake("FixedNet never drops now, not even after train(): training=False switches "
                "dropout off for good. Give F.dropout the module's own mode instead.",
                when=_behaves(**{"drops in training": False, "same output after eval()": True}),
                example={"FixedNet": _never_drops}),
        Mistake("FixedNet drops after eval() and not after train(): the mode is passed the "
                "wrong way round.",
                when=_behaves(**{"drops in training": False}),
                example={"FixedNet": _flag_reversed}),
        Mistake("in training mode the average over many masks is not the output after "
                "eval(): the kept units must be divided by 1 − p (section 3), as F.dropout "
                "does.",
                when=_behaves(**{"average in training": "unscaled"}),
                example={"FixedNet": _not_scaled}),
        Mistake("in training mode FixedNet multiplies the hidden units by random factors "
                "but sets none of them to 0: dropout drops units, each kept with probability "
                "1 − p and scaled by 1/(1 − p), dropped (0) otherwise, as F.dropout does.",
                when=lambda got, ref: got["drops in training"] and got["share dropped"] < 0.01,
                example={"FixedNet": _gaussian_noise}),
        Mistake("FixedNet drops another share of the hidden units than half: AlwaysDrops's "
                "rate is p = 0.5; keep it.",
                when=lambda got, ref: got["share dropped"] >= 0.01
                and not got["drops a share p = 0.5"]
                and got["kept units scaled"] in ("1/(1 − p)", "constant"),
                example={"FixedNet": _nearly_half}),
        Mistake("in training mode FixedNet does not behave like dropout with p = 0.5 on the "
                "32 hidden units (after the ReLU, before out): keep AlwaysDrops's rate and "
                "place.",
                when=lambda got, ref: got["average in training"] == "other"
                or not got["varies as p = 0.5 predicts"] or got["kept units scaled"] != ref[
                    "kept units scaled"],
                example={"FixedNet": _DropsTheImage}),
    ),
)

EXERCISES = [ex10_1, ex10_2, ex10_3, ex10_4]
