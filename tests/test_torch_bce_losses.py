"""PyTorch's binary cross-entropy losses and ``ignore_index`` against torch itself: values and
gradients for each reduction, with weights, in float32 and float64; gradients against central
differences; the extremes (probabilities 0 and 1, logits ±100, every target ignored); the
modules; the errors; and the class-id check of a graph, which runs in the Session."""
import warnings

import numpy as np
import pytest

import edugraph as eg
from edugraph.errors import InvalidArgumentError, ShapeError
from tests.gradcheck import gradcheck

torch = pytest.importorskip("torch")
F, TF = eg.nn.functional, torch.nn.functional

rng = np.random.default_rng(7)
PROBS = rng.uniform(0.05, 0.95, (4, 3))
BITS = rng.integers(0, 2, (4, 3)).astype(float)
SOFT = rng.uniform(0, 1, (4, 3))                    # targets between 0 and 1 are allowed too
ELEMENT_WEIGHT = rng.uniform(0.5, 2, (4, 3))
CLASS_WEIGHT = np.array([0.5, 2.0, 3.0])            # broadcast along the last dimension
POS_WEIGHT = np.array([3.0, 0.5, 1.5])
LOGITS = np.array([[-100.0, 0.0, 100.0], [3.0, -2.0, 0.5], [20.0, -20.0, 1.0],
                   [-1000.0, 1000.0, 7.0]])
CLASS_LOGITS = rng.normal(size=(6, 4))
IDS = np.array([1, -100, 3, 0, -100, 2])            # two ignored examples
IDS_IGNORING_0 = np.array([1, 0, 3, 0, 2, 2])       # ignore_index=0, a class of its own
CE_CLASS_WEIGHT = np.array([0.5, 2.0, 1.0, 3.0])    # one per class of CLASS_LOGITS
IMAGE_LOGITS = rng.normal(size=(2, 4, 3, 5))        # (N, C, H, W)
PIXEL_IDS = rng.integers(0, 4, (2, 3, 5))
PIXEL_IDS[0, 1] = -100                              # an ignored row of pixels
REDUCTIONS = ["mean", "sum", "none"]


def fixed(values):
    """An argument that is not differentiated: targets, weights, class ids."""
    values = np.asarray(values)
    return lambda lib, dtype: lib.tensor(values.astype(dtype) if values.dtype.kind == "f"
                                         else values)


def run(lib, call, inputs, dtype):
    """``call(functional, *args)``'s value and the gradients of the arguments that are not
    ``fixed``, backpropagated from a weighting of the output that differs per element."""
    functional = TF if lib is torch else F
    args = [value(lib, dtype) if callable(value)
            else lib.tensor(np.asarray(value, dtype), requires_grad=True) for value in inputs]
    out = call(functional, *args)
    cotangent = np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)).astype(dtype)
    (out * lib.tensor(cotangent)).sum().backward()
    return [out.detach().numpy()] + [arg.grad.numpy() for arg, value in zip(args, inputs)
                                     if not callable(value)]


# Agreement with torch. (Where torch's own float result is rounding noise, a logit's
# cancellation, the two may differ by about one rounding of the logit: hence atol.)
TOLERANCE = {np.float64: dict(rtol=1e-12, atol=1e-13), np.float32: dict(rtol=1e-5, atol=1e-5)}

CASES = {   # name: (arguments: arrays to differentiate or fixed(...), call(F, *args))
    "bce": ([PROBS, fixed(BITS)], lambda F, p, y, r: F.binary_cross_entropy(p, y, reduction=r)),
    "bce_soft_target_differentiated": (
        [PROBS, SOFT], lambda F, p, y, r: F.binary_cross_entropy(p, y, reduction=r)),
    "bce_element_weight": ([PROBS, fixed(BITS), fixed(ELEMENT_WEIGHT)],
                           lambda F, p, y, w, r: F.binary_cross_entropy(p, y, w, reduction=r)),
    "bce_class_weight": ([PROBS, fixed(SOFT), fixed(CLASS_WEIGHT)],
                         lambda F, p, y, w, r: F.binary_cross_entropy(p, y, weight=w,
                                                                      reduction=r)),
    "logits": ([LOGITS, fixed(BITS)],
               lambda F, x, y, r: F.binary_cross_entropy_with_logits(x, y, reduction=r)),
    "logits_soft_target_differentiated": (
        [LOGITS, SOFT], lambda F, x, y, r: F.binary_cross_entropy_with_logits(x, y,
                                                                              reduction=r)),
    "logits_pos_weight": ([LOGITS, fixed(SOFT), fixed(POS_WEIGHT)],
                          lambda F, x, y, pw, r: F.binary_cross_entropy_with_logits(
                              x, y, reduction=r, pos_weight=pw)),
    "logits_pos_weight_target_differentiated": (
        [LOGITS, SOFT, fixed(POS_WEIGHT)],
        lambda F, x, y, pw, r: F.binary_cross_entropy_with_logits(x, y, pos_weight=pw,
                                                                  reduction=r)),
    "logits_weight_and_pos_weight": (
        [LOGITS, fixed(BITS), fixed(ELEMENT_WEIGHT), fixed(POS_WEIGHT)],
        lambda F, x, y, w, pw, r: F.binary_cross_entropy_with_logits(
            x, y, w, reduction=r, pos_weight=pw)),
    "cross_entropy_ignored": ([CLASS_LOGITS, fixed(IDS)],
                              lambda F, x, y, r: F.cross_entropy(x, y, reduction=r)),
    "cross_entropy_ignored_weight": (
        [CLASS_LOGITS, fixed(IDS), fixed(CE_CLASS_WEIGHT)],
        lambda F, x, y, w, r: F.cross_entropy(x, y, w, reduction=r)),
    "cross_entropy_ignored_smoothing": (
        [CLASS_LOGITS, fixed(IDS)],
        lambda F, x, y, r: F.cross_entropy(x, y, reduction=r, label_smoothing=0.2)),
    "cross_entropy_ignored_weight_smoothing": (
        [CLASS_LOGITS, fixed(IDS), fixed(CE_CLASS_WEIGHT)],
        lambda F, x, y, w, r: F.cross_entropy(x, y, weight=w, reduction=r,
                                              label_smoothing=0.3)),
    "cross_entropy_ignore_a_class_id": (
        [CLASS_LOGITS, fixed(IDS_IGNORING_0), fixed(CE_CLASS_WEIGHT)],
        lambda F, x, y, w, r: F.cross_entropy(x, y, w, reduction=r, ignore_index=0,
                                              label_smoothing=0.1)),
    "cross_entropy_ignored_pixels": (
        [IMAGE_LOGITS, fixed(PIXEL_IDS), fixed(CE_CLASS_WEIGHT)],
        lambda F, x, y, w, r: F.cross_entropy(x, y, w, reduction=r, label_smoothing=0.1)),
    "nll_loss_ignored": ([CLASS_LOGITS, fixed(IDS)],
                         lambda F, x, y, r: F.nll_loss(x, y, reduction=r)),
    "nll_loss_ignored_weight": ([CLASS_LOGITS, fixed(IDS), fixed(CE_CLASS_WEIGHT)],
                                lambda F, x, y, w, r: F.nll_loss(x, y, w, reduction=r)),
    "nll_loss_ignore_a_class_id": (
        [CLASS_LOGITS, fixed(IDS_IGNORING_0), fixed(CE_CLASS_WEIGHT)],
        lambda F, x, y, w, r: F.nll_loss(x, y, weight=w, reduction=r, ignore_index=0)),
    "nll_loss_ignored_pixels": ([IMAGE_LOGITS, fixed(PIXEL_IDS)],
                                lambda F, x, y, r: F.nll_loss(x, y, reduction=r)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", CASES)
def test_values_and_gradients_match_torch(case, reduction, dtype):
    inputs, call = CASES[case]
    ours = run(eg, lambda F, *args: call(F, *args, reduction), inputs, dtype)
    theirs = run(torch, lambda F, *args: call(F, *args, reduction), inputs, dtype)
    assert ours[0].dtype == dtype and ours[0].shape == theirs[0].shape
    for i, (got, want) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(got, want, **TOLERANCE[dtype],
                                   err_msg=f"{case}: " + ("value" if i == 0 else f"grad {i}"))


def test_gradients_match_central_differences():
    """Every float argument, weights included, at interior points (float64)."""
    ids = np.array([1, 0, 3, 2, 1, 2])
    checks = {
        "binary_cross_entropy": (lambda p, y, w: F.binary_cross_entropy(p, y, w),
                                 PROBS, SOFT, ELEMENT_WEIGHT),
        "binary_cross_entropy_sum": (
            lambda p, y: F.binary_cross_entropy(p, y, reduction="sum"), PROBS, SOFT),
        "binary_cross_entropy_with_logits": (
            lambda x, y, w, pw: F.binary_cross_entropy_with_logits(x, y, w, "none", pw),
            rng.normal(0, 3, (4, 3)), SOFT, ELEMENT_WEIGHT, POS_WEIGHT),
        "cross_entropy_ignore_index": (
            lambda x, w: F.cross_entropy(x, eg.tensor(IDS), w, label_smoothing=0.2),
            CLASS_LOGITS, CE_CLASS_WEIGHT),
        "cross_entropy_ignore_a_class_id": (
            lambda x: F.cross_entropy(x, eg.tensor(ids), ignore_index=2), CLASS_LOGITS),
        "nll_loss_ignore_index": (lambda x: F.nll_loss(x, eg.tensor(IDS)), CLASS_LOGITS),
    }
    for name, (fn, *args) in checks.items():
        gradcheck(fn, *args, name=name)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_probabilities_of_exactly_0_and_1_give_torchs_finite_loss_and_gradient(dtype):
    """Each log is clamped to -100, so a certain wrong answer costs 100; the gradient is
    (p - y) / max(p (1 - p), 1e-12), with PyTorch's 1e-12 a C float: huge, finite, not 0."""
    p = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 1.0], dtype)
    y = np.array([0.0, 1.0, 0.0, 1.0, 0.3, 0.3], dtype)
    eps = np.float64(np.float32(1e-12))
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no "divide by zero in log" on the way
        ours = run(eg, lambda F, p, y: F.binary_cross_entropy(p, y, reduction="none"),
                   [p, fixed(y)], dtype)
    theirs = run(torch, lambda F, p, y: F.binary_cross_entropy(p, y, reduction="none"),
                 [p, fixed(y)], dtype)
    np.testing.assert_allclose(ours[0], [0, 100, 100, 0, 30, 70], rtol=1e-6)
    np.testing.assert_allclose(ours[0], theirs[0], **TOLERANCE[dtype])
    cotangent = np.linspace(0.5, 1.5, 6)
    expected = cotangent * (p - y) / eps
    np.testing.assert_allclose(ours[1], expected, **TOLERANCE[dtype])
    np.testing.assert_allclose(ours[1], theirs[1], **TOLERANCE[dtype])
    assert np.isfinite(ours[1]).all() and abs(ours[1][1]) > 1e11


def test_extreme_logits_give_finite_exact_values_and_gradients():
    """Checked against numpy's stable softplus (logaddexp) and σ, and against torch, which
    cancels to 0 where the exact loss (-100 + softplus(100)) or gradient (σ(100) - 1) is
    about 4e-44: the difference is far below a rounding of the logit (atol)."""
    x = np.array([-1000.0, -100.0, -100.0, 0.0, 0.0, 100.0, 100.0, 1000.0])
    y = np.array([1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0])
    cotangent = np.linspace(0.5, 1.5, 8)
    loss, grad = run(eg, lambda F, x, y: F.binary_cross_entropy_with_logits(
        x, y, reduction="none"), [x, fixed(y)], np.float64)
    softplus = lambda z: np.logaddexp(0, z)                         # noqa: E731
    sigmoid = lambda z: np.exp(-softplus(-z))                       # noqa: E731
    np.testing.assert_allclose(loss, (1 - y) * softplus(x) + y * softplus(-x), rtol=1e-15)
    np.testing.assert_allclose(grad, cotangent * ((1 - y) * sigmoid(x) - y * sigmoid(-x)),
                               rtol=1e-14)
    np.testing.assert_array_equal(grad[3:5], cotangent[3:5] * [0.5, -0.5])   # σ(0) − y
    theirs = run(torch, lambda F, x, y: F.binary_cross_entropy_with_logits(
        x, y, reduction="none"), [x, fixed(y)], np.float64)
    np.testing.assert_allclose(loss, theirs[0], rtol=1e-15, atol=1e-40)
    np.testing.assert_allclose(grad, theirs[1], rtol=1e-15, atol=1e-40)


ALL_IGNORED = {     # name: (the ignored id, call(F, logits, ids, class weights, reduction))
    "cross_entropy": (-100, lambda F, x, y, w, r: F.cross_entropy(x, y, reduction=r)),
    "cross_entropy_smoothing": (-100, lambda F, x, y, w, r: F.cross_entropy(
        x, y, reduction=r, label_smoothing=0.2)),
    "cross_entropy_weight": (-100, lambda F, x, y, w, r: F.cross_entropy(x, y, w,
                                                                         reduction=r)),
    "nll_loss_weight": (-100, lambda F, x, y, w, r: F.nll_loss(x, y, w, reduction=r)),
    "nll_loss_ignore_3": (3, lambda F, x, y, w, r: F.nll_loss(x, y, reduction=r,
                                                              ignore_index=3)),
}


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("case", ALL_IGNORED)
def test_every_target_ignored_gives_torchs_nan_mean_and_zero_gradients(case, reduction):
    ignored, call = ALL_IGNORED[case]
    inputs = [CLASS_LOGITS, fixed(np.full(6, ignored)), fixed(CE_CLASS_WEIGHT)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no "invalid value in divide" either
        ours = run(eg, lambda F, *args: call(F, *args, reduction), inputs, np.float64)
    theirs = run(torch, lambda F, *args: call(F, *args, reduction), inputs, np.float64)
    assert np.isnan(ours[0]).all() == (reduction == "mean")
    np.testing.assert_array_equal(ours[0], theirs[0])       # (nan equals nan here)
    np.testing.assert_array_equal(ours[1], np.zeros_like(CLASS_LOGITS))
    np.testing.assert_array_equal(ours[1], theirs[1])


def test_ignored_targets_leave_the_mean_as_if_they_were_not_there():
    """Without torch: the mean over all examples equals the mean over the kept ones."""
    kept = IDS != -100
    for weight in (None, CE_CLASS_WEIGHT):
        w = None if weight is None else eg.tensor(weight)
        all_of_them = F.cross_entropy(eg.tensor(CLASS_LOGITS), eg.tensor(IDS), w)
        only_kept = F.cross_entropy(eg.tensor(CLASS_LOGITS[kept]), eg.tensor(IDS[kept]), w)
        np.testing.assert_allclose(all_of_them.item(), only_kept.item(), rtol=1e-14)
        log_probs = CLASS_LOGITS - np.log(np.exp(CLASS_LOGITS).sum(1, keepdims=True))
        w_y = np.ones(4)[IDS[kept]] if weight is None else weight[IDS[kept]]
        want = -(w_y * log_probs[kept, IDS[kept]]).sum() / w_y.sum()
        np.testing.assert_allclose(all_of_them.item(), want, rtol=1e-14)


def test_narrow_integer_targets_may_ignore_an_id_they_can_hold():
    """A uint8 segmentation mask marks its void pixels 255; and the default -100, which a
    uint8 cannot hold, is compared all the same (as int64)."""
    logits = rng.normal(size=(2, 4, 3))
    for ids, ignore_index in (([[1, 255, 3], [255, 0, 2]], 255), ([[1, 0, 3], [2, 0, 2]], -100)):
        ids = np.array(ids, np.uint8)
        ours = F.cross_entropy(eg.tensor(logits), eg.tensor(ids), ignore_index=ignore_index)
        theirs = TF.cross_entropy(torch.tensor(logits), torch.tensor(ids.astype(np.int64)),
                                  ignore_index=ignore_index)
        np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-14)


def test_probability_targets_ignore_the_default_ignore_index_as_torch_does():
    probabilities = rng.dirichlet(np.ones(4), 6)
    ours = F.cross_entropy(eg.tensor(CLASS_LOGITS), eg.tensor(probabilities))
    theirs = TF.cross_entropy(torch.tensor(CLASS_LOGITS), torch.tensor(probabilities))
    np.testing.assert_allclose(ours.item(), theirs.item(), rtol=1e-14)


LOSS_MODULES = {    # name: (make(nn, lib), prediction, target)
    "BCELoss": (lambda nn, lib: nn.BCELoss(), PROBS, BITS),
    "BCELoss_weight_sum": (lambda nn, lib: nn.BCELoss(lib.tensor(CLASS_WEIGHT),
                                                      reduction="sum"), PROBS, SOFT),
    "BCEWithLogitsLoss": (lambda nn, lib: nn.BCEWithLogitsLoss(), LOGITS, BITS),
    "BCEWithLogitsLoss_pos_weight_none": (
        lambda nn, lib: nn.BCEWithLogitsLoss(lib.tensor(ELEMENT_WEIGHT), reduction="none",
                                             pos_weight=lib.tensor(POS_WEIGHT)), LOGITS, SOFT),
    "CrossEntropyLoss_ignore_index": (
        lambda nn, lib: nn.CrossEntropyLoss(lib.tensor(CE_CLASS_WEIGHT), ignore_index=0,
                                            label_smoothing=0.1), CLASS_LOGITS, IDS_IGNORING_0),
    "CrossEntropyLoss_default_ignore": (lambda nn, lib: nn.CrossEntropyLoss(reduction="sum"),
                                        IMAGE_LOGITS, PIXEL_IDS),
    "NLLLoss_ignore_index": (lambda nn, lib: nn.NLLLoss(ignore_index=0), CLASS_LOGITS,
                             IDS_IGNORING_0),
    "NLLLoss_default_ignore": (lambda nn, lib: nn.NLLLoss(reduction="none"), CLASS_LOGITS, IDS),
}


@pytest.mark.parametrize("case", LOSS_MODULES)
def test_loss_modules_match_torch_and_print_like_it(case, device):
    make, prediction, target = LOSS_MODULES[case]
    results = []
    for lib, where in ((eg, device), (torch, "cpu")):
        with lib.device(where):             # (the module's weights are made there too)
            loss_fn = make(lib.nn, lib)
            x = lib.tensor(prediction, requires_grad=True)
            loss = loss_fn(x, lib.tensor(target))
        loss.sum().backward()
        results.append((repr(loss_fn), loss.detach().cpu().numpy(), x.grad.cpu().numpy()))
    assert results[0][0] == results[1][0]
    for got, want in zip(results[0][1:], results[1][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_errors_say_what_is_wrong_and_what_to_do():
    column, flat = eg.tensor(np.full((4, 1), 0.5)), eg.tensor(np.zeros(4))
    for name in ("binary_cross_entropy", "binary_cross_entropy_with_logits"):
        with pytest.raises(ShapeError, match=rf"^{name}: the input has shape \(4, 1\) but the "
                                             r"target has shape \(4,\).*target.view\(-1, 1\)"):
            getattr(F, name)(column, flat)
        with pytest.raises(ValueError):                 # torch refuses the pair too
            getattr(TF, name)(torch.tensor(np.full((4, 1), 0.5)), torch.zeros(4))
    for bad in (1.5, -0.25, np.nan):
        p = np.array([0.2, bad, 0.7])
        with pytest.raises(ValueError, match=r"^binary_cross_entropy: all elements of input "
                                             r"should be between 0 and 1 \(probabilities\), "
                                             rf"but the input holds {bad:g}\. Logits\? Use "
                                             r"binary_cross_entropy_with_logits"):
            eg.nn.BCELoss()(eg.tensor(p), eg.tensor(np.ones(3)))
        with pytest.raises(RuntimeError, match="between 0 and 1"):
            TF.binary_cross_entropy(torch.tensor(p), torch.ones(3, dtype=torch.float64))
        with pytest.raises(ValueError, match=r"^binary_cross_entropy: all elements of target "
                                             rf"should be .* the target holds {bad:g}\. Labels 1 "
                                             r"and 2\? Make them 0 and 1"):
            eg.nn.BCELoss()(eg.tensor(np.ones(3) * 0.5), eg.tensor(p))
        with pytest.raises(RuntimeError, match="target should be between 0 and 1"):
            TF.binary_cross_entropy(torch.ones(3, dtype=torch.float64) * 0.5, torch.tensor(p))
    with pytest.raises(ShapeError, match=r"^binary_cross_entropy: weight of shape \(4, 1\) "
                                         r"must broadcast to the input's shape \(4,\)"):
        F.binary_cross_entropy(flat, flat, weight=np.ones((4, 1)))   # (4, 4) losses
    with pytest.raises(RuntimeError, match="doesn't match the broadcast shape"):
        TF.binary_cross_entropy(torch.zeros(4), torch.zeros(4), weight=torch.ones(4, 1))
    with pytest.raises(ShapeError, match=r"^binary_cross_entropy_with_logits: pos_weight of "
                                         r"shape \(4,\) must broadcast to the input's shape "
                                         r"\(2, 3\).*shape \(num_classes,\)"):
        eg.nn.BCEWithLogitsLoss(pos_weight=eg.ones(4))(eg.zeros((2, 3)), eg.zeros((2, 3)))
    with pytest.raises(ValueError, match="BCEWithLogitsLoss: reduction must be 'mean', 'sum' "
                                         "or 'none', got 'avg'"):
        eg.nn.BCEWithLogitsLoss(reduction="avg")


def test_an_id_that_is_neither_a_class_nor_ignored_is_still_refused():
    logits = eg.tensor(CLASS_LOGITS[:3])
    for ids, ignore_index, seen in (([0, -100, 4], -100, r"\[0, 4\]"),
                                    ([-1, -100, 2], -100, r"\[-1, 2\]"),
                                    ([0, -100, 2], 0, r"\[-100, 2\]")):
        for loss in (F.cross_entropy, F.nll_loss):
            with pytest.raises(ShapeError, match=rf"^{loss.__name__} with ignore_index="
                                                 rf"{ignore_index}: labels must be class ids "
                                                 rf"in \[0, 4\).*range over {seen}"):
                loss(logits, eg.tensor(ids), ignore_index=ignore_index)
        with pytest.raises(IndexError, match="out of bounds"):          # torch: an error too
            TF.cross_entropy(torch.tensor(CLASS_LOGITS[:3]), torch.tensor(ids),
                             ignore_index=ignore_index)
    probabilities = eg.tensor(rng.dirichlet(np.ones(4), 3))
    with pytest.raises(ValueError, match=r"^cross_entropy: ignore_index works with class-id "
                                         r"targets only.*reduction='none'"):
        F.cross_entropy(logits, probabilities, ignore_index=0)
    with pytest.raises(RuntimeError, match="ignore_index is not supported for floating point"):
        TF.cross_entropy(torch.tensor(CLASS_LOGITS[:3]), torch.tensor(probabilities.numpy()),
                         ignore_index=0)
    with pytest.raises(TypeError, match=r"^nll_loss: ignore_index must be an int class id, "
                                        r"got None"):
        eg.nn.NLLLoss(ignore_index=None)(logits, eg.tensor([0, 1, 2]))


def test_a_graph_ignores_ids_and_checks_the_others_when_it_runs():
    """Static mode: the ids are placeholders, so the check is a node of the graph."""
    ids = np.array([2, -100, 0, 3, -100, 1])
    with eg.Graph().as_default() as graph:
        logits = eg.placeholder(eg.float64, shape=(None, 4))
        targets = eg.placeholder(eg.int64, shape=(None,))
        loss = F.cross_entropy(logits, targets, eg.constant(CE_CLASS_WEIGHT),
                               label_smoothing=0.1)
        (grad,) = eg.gradients(loss, [logits])
        probs = eg.placeholder(eg.float64, shape=(None, 3))
        bce = F.binary_cross_entropy(probs, eg.constant(SOFT), weight=CLASS_WEIGHT)
        (bce_grad,) = eg.gradients(bce, [probs])
    with eg.Session(graph=graph) as sess:
        value, gradient = sess.run([loss, grad], {logits: CLASS_LOGITS, targets: ids})
        all_ignored = sess.run(loss, {logits: CLASS_LOGITS, targets: np.full(6, -100)})
        edge = PROBS.copy()
        edge[0, :2] = 0.0, 1.0
        bce_value, bce_gradient = sess.run([bce, bce_grad], {probs: edge})
        with pytest.raises(InvalidArgumentError, match=r"cross_entropy with ignore_index=-100: "
                                                       r"labels must be class ids in \[0, 4\).*"
                                                       r"\[-7, 3\]"):
            sess.run(loss, {logits: CLASS_LOGITS, targets: np.array([2, -100, -7, 3, 0, 1])})
    x = torch.tensor(CLASS_LOGITS, requires_grad=True)
    expected = TF.cross_entropy(x, torch.tensor(ids), torch.tensor(CE_CLASS_WEIGHT),
                                label_smoothing=0.1)
    expected.backward()
    np.testing.assert_allclose(value, expected.item(), rtol=1e-12)
    np.testing.assert_allclose(gradient, x.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert np.isnan(all_ignored)
    p = torch.tensor(edge, requires_grad=True)
    expected = TF.binary_cross_entropy(p, torch.tensor(SOFT), torch.tensor(CLASS_WEIGHT))
    expected.backward()
    np.testing.assert_allclose(bce_value, expected.item(), rtol=1e-12)
    np.testing.assert_allclose(bce_gradient, p.grad.numpy(), rtol=1e-12)
