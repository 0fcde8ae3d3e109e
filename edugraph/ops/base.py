"""The op pattern: one class per op, forward and backward side by side.

``forward(xp, *arrays)`` computes on raw arrays (``xp`` is numpy, CuPy or the stand-in module).
``backward(grad, out, *inputs)`` is written with framework ops on Tensors, so that

* eager ``backward()`` runs it with recording off (just array maths),
* ``create_graph=True`` / nested ``GradientTape``s record it: gradients of gradients,
* static ``eg.gradients`` runs it on symbolic tensors: gradient nodes in the graph.

``apply`` is the single entry point that executes an op eagerly or adds it to a graph.
"""
import functools
import operator

import numpy as np

from ..context import state, _sequence
from ..devices import current_device
from ..errors import DeviceError, GradientError, ShapeError
from ..tensor import Tensor, _number_tensor, constant_like, is_array


class Op:
    """Base class of all ops. Subclasses set ``name`` (shown in graphs) and the two methods."""

    name = "op"
    differentiable = True           # False: outputs never need a gradient (comparisons, argmax)
    promotes_from = None            # arithmetic: inputs from this index on share a float dtype
    gate = None                     # the lecture's gate pattern, for the inspector: "distributes"...
    output_device = None            # set only by the explicit device copy
    returns_an_input = False        # forward may hand back an array it was given (identity)

    def forward(self, xp, *arrays):
        raise NotImplementedError

    def backward(self, grad, out, *inputs):
        raise GradientError(
            f"Op '{self.name}' has no gradient, so backward cannot pass through it. Compute it "
            "under eg.no_grad() or detach() its inputs if no gradient is needed there.")

    def explain_failure(self, shapes):
        """Why ``forward`` failed on inputs of these shapes (override for a sharper message)."""
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.attributes().items())
        return (f"{self.name}({attrs}) could not be computed on inputs of shapes "
                f"{', '.join(map(str, shapes))}.")

    def explain_type_failure(self, inputs, error):
        """Why numpy refused ``inputs`` with a TypeError: for most ops, their dtypes
        (``(x > 0) - (x > 0)``: booleans do not subtract). An op whose own arguments may be
        of the wrong type (an index) overrides this."""
        dtypes = " and ".join(str(t.dtype) for t in inputs)
        return (f"{self.name} cannot compute on {dtypes} inputs (numpy: {error}). Cast an "
                "input to a dtype that supports it first, e.g. eg.cast(mask, eg.float32).")

    def attributes(self):
        """The op's non-tensor arguments (axis, keepdims...), for graph views and signatures."""
        return {k: v for k, v in vars(self).items() if not k.startswith("_")}

    def __repr__(self):
        attrs = ", ".join(f"{k}={v!r}" for k, v in self.attributes().items())
        return f"{type(self).__name__}({attrs})"


check_result = None    # while a numerics check is on, a function that raises at NaN or inf
                       # in a result (edugraph/debugging.py sets it)


def apply(op, *args, name=None):
    """Run ``op`` on ``args`` now (eager), or add it to the graph being built (static mode).

    ``name`` names the graph node (``h``, then ``h_1``...); eager tensors have no node names,
    so eagerly it is accepted and ignored (the same code runs in both modes).

    This runs once per op call, so it is kept lean: one pass over the arguments decides the
    mode, one pass over the inputs checks devices and dtypes, collects the arrays and sees
    whether any input requires a gradient.
    """
    __tracebackhide__ = True  # noqa: F841  (IPython: an error in an op's forward shows its line)
    graph = state.graph
    plain = True                                # all arguments are eager Tensors (common case)
    for a in args:
        if a.__class__ is not Tensor:           # (an identity test: cheaper than isinstance)
            if not isinstance(a, Tensor):
                plain = False                   # numbers or arrays: made constants below
            elif a.graph is not None and graph is None:
                graph = a.graph
    if graph is not None:
        return graph.create_op(op, args, name=name)
    inputs = args if plain else as_tensors(args)

    device = inputs[0].device if inputs else current_device()
    values = []
    dtype = None
    same_dtype = True
    requires_grad = False
    for t in inputs:
        if t.device is not device:
            raise DeviceError(
                f"{op.name}: inputs live on different devices, {device.name} and "
                f"{t.device.name}. Copy one explicitly first, e.g. x.to('{device.name}').")
        value = t._value
        if value.dtype is not dtype:
            same_dtype = dtype is None
            dtype = value.dtype
        if t.requires_grad:
            requires_grad = True
        values.append(value)
    if not same_dtype:                          # only then can two float dtypes clash
        promoted = promote_integers(op, inputs)
        if promoted is not inputs:
            return apply(op, *promoted)
        _check_float_dtypes(op, inputs)
    try:
        value = op.forward(device.xp, *values)
    except (ValueError, IndexError, TypeError) as e:
        if isinstance(e, (ShapeError, GradientError)):
            raise
        raise _failure(op, inputs, e) from e
    if value.__class__ not in _array_classes:   # (a class seen for the first time, or a
        forward_result(op, value)               # custom op's forward: not_an_array)
    if check_result is not None:                # eg.debugging.enable_check_numerics()
        check_result(op, device, inputs, value)
    if device.log_placement:
        print(f"{op.name}: {device.name}")
    out = Tensor(value, op.output_device or device)
    if requires_grad and state.grad_enabled and op.differentiable and value.dtype.kind == "f":
        out.requires_grad = True
        out._op, out._inputs, out._seq = op, inputs, next(_sequence)
    return out


def _failure(op, inputs, error):
    """The error for a forward that numpy refused, in the op's words: numpy's TypeErrors are
    mostly about dtypes (``explain_type_failure``), its other errors about shapes, which the
    op explains (``explain_failure``); an op with no inputs (``eg.zeros``) can only pass
    numpy's reason on."""
    if not inputs:
        attrs = ", ".join(f"{k}={v!r}" for k, v in op.attributes().items())
        return ShapeError(f"{op.name}({attrs}) could not be computed: {error}.")
    if isinstance(error, TypeError):
        return TypeError(op.explain_type_failure(inputs, error))
    return ShapeError(op.explain_failure([t.shape for t in inputs]))


_array_classes = {np.ndarray}    # the classes forward has returned that are arrays (numpy's
                                 # scalars, CuPy's arrays join on first sight): one set lookup
                                 # per op, where checking each result would cost up to 0.1 µs


def forward_result(op, value):
    """``value``, which ``op.forward`` returned, checked to be an array (see ``not_an_array``);
    ``apply`` calls it for a class it has not seen, a graph's shape inference every time."""
    if not is_array(value):
        raise not_an_array(op, value)
    _array_classes.add(value.__class__)
    return value


def _method_of(op, method):
    """How a message names an op's method: "Cube.backward (op 'cube')"."""
    return f"{type(op).__name__}.{method} (op '{op.name}')"


def not_an_array(op, value):
    """The error for a ``forward`` that returned something other than an array: in a custom op
    that is usually edugraph's own functions called there (``eg.pow(x, 3)`` makes a tensor),
    which would otherwise fail much later, in whichever op reads the result next."""
    where = _method_of(op, "forward")
    if isinstance(value, Tensor):
        return TypeError(
            f"{where} returned a tensor; forward computes on the arrays it is given and returns "
            "an array: write it with the array's own operators or with xp (numpy, or CuPy on a "
            "GPU), e.g. `return x ** 3` or `return xp.exp(x)`. edugraph's functions (eg.pow, "
            "eg.exp...) make tensors: they belong in backward, which works on tensors.")
    got = "None (no return statement?)" if value is None else f"a {type(value).__name__}"
    return TypeError(
        f"{where} returned {got}, not an array; forward must return an array computed from "
        "the arrays it is given, e.g. `return x ** 3` or `return xp.asarray(...)`.")


def backward_result(op, grads, inputs):
    """``grads``, which ``op.backward`` returned for ``inputs``, checked: a tuple (or list)
    with one gradient per input, each a tensor or None. The engine zips it with the inputs,
    so a bare tensor, a short tuple or a numpy array would otherwise fail deep inside it, or
    worse, quietly give an input no gradient. The eager engine calls this only when its loop
    over the gradients fails (to name the op's mistake, if it is one); ``eg.gradients``
    always."""
    where = _method_of(op, "backward")
    n = len(inputs)
    example = "`return (grad * 3 * x ** 2,)`" if n == 1 else "`return grad_x, grad_y`"
    built = ("each an edugraph tensor built from the tensors backward gets (grad, out, the "
             "inputs) with edugraph ops (eg.* or tensor operators), not numpy arrays or numbers")
    if not isinstance(grads, (tuple, list)):
        if isinstance(grads, Tensor):
            got = "a single tensor, not a tuple (a missing comma?)"
        else:
            got = "None (no return statement?)" if grads is None else \
                f"{_kind(grads)}, not a tuple"
        raise TypeError(f"{where} returned {got}. Return a tuple with one gradient per input, "
                        f"even for one input, e.g. {example}, {built}.")
    if len(grads) != n:
        raise TypeError(
            f"{where} returned {len(grads)} gradient(s), but the op has {n} input(s). Return "
            "one per input, in the order forward takes them (None for an input that needs "
            f"none), e.g. {example}.")
    for i, g in enumerate(grads):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(
                f"{where} returned {_kind(g)} as the gradient of input {i}. Return "
                f"a tuple with one gradient per input, e.g. {example}, {built}: the engine "
                "adds them up and eg.gradients makes graph nodes of them.")
    return grads


def _kind(value):
    """``value``'s class for a message: "a float", "a numpy.ndarray"."""
    cls = type(value)
    return f"a {cls.__name__}" if cls.__module__ == "builtins" else \
        f"a {cls.__module__.split('.')[0]}.{cls.__name__}"


def sums_to(shape, target):
    """Can broadcasting make ``shape`` from ``target`` (so summing gives ``target`` back)?"""
    try:
        return np.broadcast_shapes(shape, target) == tuple(shape)
    except ValueError:
        return False


def wrong_gradient_shape(op, grad, inp, inputs):
    """The error for a gradient from ``op.backward`` that ``sum_to_shape`` cannot bring to its
    input's shape: it has the shape of neither the input nor a broadcast of it."""
    i = next(k for k, t in enumerate(inputs) if t is inp)
    return ShapeError(
        f"{_method_of(op, 'backward')} returned a gradient of shape "
        f"{tuple(grad.shape)} for input {i} of shape {tuple(inp.shape)}: a gradient has its "
        "input's shape (or one that broadcasting made from it, which the engine sums back). "
        "Did backward sum where it should multiply elementwise (grad * 3 * x ** 2)?")


_INT_OR_FLOAT = {int, float}


def as_tensors(args):
    """Numbers, lists and arrays among ``args`` become constants next to the first tensor
    (``matmul(x, [[1.], [2.]])`` gives x's dtype and device); tensors stay as they are."""
    if len(args) == 2:                  # x + 1.0, 2 * x, x / n: the common case, kept short
        a, b = args                     # (next to a float tensor an int is a float constant)
        if b.__class__ in _INT_OR_FLOAT and a.__class__ is Tensor and a._value.dtype.kind == "f":
            return a, _number_tensor(b, "f", a)
        if a.__class__ in _INT_OR_FLOAT and b.__class__ is Tensor and b._value.dtype.kind == "f":
            return _number_tensor(a, "f", b), b
    ref = number_reference(args)
    return tuple(a if isinstance(a, Tensor) else constant_like(a, ref) for a in args)


def as_tensor(value):
    """``value`` as a tensor: lists and arrays become constants, tensors stay as they are."""
    return value if isinstance(value, Tensor) else constant_like(value, None)


def number_reference(args):
    """The tensor whose dtype and device a number among ``args`` takes: the first float tensor
    (``where(x > 0, x, 0.0)``: x, not the boolean mask), else the first tensor. (An integer
    tensor next to a float number then computes in float32: ``promote_integers``.)"""
    ref = None
    for a in args:
        if isinstance(a, Tensor):
            if a.dtype.kind == "f":
                return a
            if ref is None:
                ref = a
    return ref


def promote_integers(op, inputs):
    """PyTorch's rule for arithmetic on an integer (or bool) tensor and a float one: both
    compute in the float's dtype (numpy would widen float32 to float64). The integer input
    goes through a visible Cast node. Other ops (gather's indices, where's condition) keep
    their dtypes: they say from which input on this applies (``promotes_from``)."""
    start = op.promotes_from
    if start is None:
        return inputs
    float_dtype = next((t.dtype for t in inputs[start:] if t.dtype.kind == "f"), None)
    if float_dtype is None or all(t.dtype.kind == "f" for t in inputs[start:]):
        return inputs
    from .math import cast
    return (*inputs[:start], *(t if t.dtype.kind == "f" else cast(t, float_dtype)
                               for t in inputs[start:]))


def _check_float_dtypes(op, inputs):
    float_dtype = None
    for t in inputs:
        if t.dtype.kind == "f":
            if float_dtype is None:
                float_dtype = t.dtype
            elif t.dtype != float_dtype:
                _float_dtype_error(op, inputs)


def _float_dtype_error(op, inputs):
    named = ", ".join(f"input {i}: {t.dtype}" for i, t in enumerate(inputs))
    raise TypeError(
        f"{op.name}: inputs have different float dtypes ({named}). edugraph never converts "
        f"silently; cast one explicitly, e.g. x.to(eg.float32) or eg.cast(x, eg.float64).")


def broadcast_rule_failure(op_name, shapes, values_message=None):
    """The message for shapes that do not broadcast: which dimension broke which rule. When
    they do broadcast, the values are the issue: ``values_message`` (or a general one)."""
    ndim = max(len(s) for s in shapes)
    for axis in range(-1, -ndim - 1, -1):
        sizes = {s[axis] for s in shapes if len(s) >= -axis and s[axis] is not None} - {1}
        if len(sizes) > 1:
            return (f"{op_name}: shapes {' and '.join(map(str, shapes))} cannot be broadcast: "
                    f"at dimension {axis} (counting from the right) the sizes are "
                    f"{sorted(sizes)}; broadcasting needs them equal or one of them 1. "
                    "Reshape or transpose an input so the dimensions line up.")
    return values_message or (f"{op_name} could not be computed on inputs of shapes "
                              f"{' and '.join(map(str, shapes))}.")


# ----------------------------------------------------------------- ops shaped like a tensor
class ShapedLike(Op):
    """An op whose output takes another tensor's shape (a gradient shaped like its input).
    A fully known shape (always, eagerly) is the ``shape`` attribute, so the other tensor's
    values are never read: they may have been changed in place since (see autodiff). In a
    graph whose shape is known only when it runs, the tensor itself is passed as the last
    input, ``like``, and ``forward`` reads ``like[0].shape``. ``apply_shaped_like`` decides."""

    shape = None

    def __init__(self, shape=None):
        self.shape = shape


def apply_shaped_like(op, like, *args):
    """``apply(op, *args)`` with ``op.shape`` set to ``like``'s shape, or with ``like`` as a
    last input when its shape is not fully known yet."""
    shape = like.shape
    if None in shape:
        return apply(op, *args, like)
    op.shape = tuple(shape)
    return apply(op, *args)


# ----------------------------------------------------------------- ops that take a shape
class TakesShape(Op):
    """An op with a shape argument: reshape, broadcast_to, fill (zeros, ones), the random ops.

    Mostly the shape is whole numbers, kept as ``self.shape``. In a graph it may also be a
    tensor whose value comes only when the graph runs: ``eg.shape(x)``, or a list with such
    sizes in it, ``[eg.shape(x)[0], 3]`` (packed into one tensor, as ``eg.stack`` packs it).
    Then that tensor is the op's LAST input, ``self.shape`` holds what is known of it before
    the run (None for a size that is not), and ``forward`` reads the sizes when it runs:
    ``self.sizes(shape)``, ``shape`` being the op's optional last argument. ``shape_operand``
    decides which it is; the op class is the same either way."""

    def sizes(self, shape):
        """The sizes to make: the shape input's, if the op has one (``shape`` is then a tuple
        of one array), else ``self.shape``."""
        return tuple(shape[0].tolist()) if shape else self.shape


def shape_operand(shape, op_name, size=operator.index):
    """An op's shape argument as ``(sizes, inputs)``, for ``apply(Op(sizes, ...), *args,
    *inputs)`` (see ``TakesShape``): whole numbers, one or a sequence (eager tensors too), give
    (a tuple of ints, ()); a graph tensor, or a list holding some, gives (what is known of it
    before the graph runs, (the shape as one tensor,)); anything else gives (None, ()), for
    the op to explain. ``size`` makes one number an int (``int`` also takes 2.0).

    Only a shape that is not whole numbers reaches the second step, so eager code pays
    nothing for it."""
    try:
        if shape.__class__ is tuple or shape.__class__ is list:    # (np.ndim costs ~1 µs)
            return tuple(map(size, shape)), ()
        return ((size(shape),) if np.ndim(shape) == 0 else tuple(map(size, shape))), ()
    except (TypeError, ValueError, NotImplementedError):   # (a graph tensor has no numbers)
        parts = shape if isinstance(shape, (list, tuple)) else (shape,)
        if not any(isinstance(p, Tensor) and p.graph is not None for p in parts):
            return None, ()
    from ..graph.shapes import shape_input
    known, tensor = shape_input(shape, op_name)
    return known, (tensor,)


# ----------------------------------------------------------------- the one place broadcasting
# gradients are reduced: every input's gradient passes through sum_to_shape in the engine.
class SumToShapeOf(ShapedLike):
    """Sum ``grad`` over the axes broadcasting added or stretched, back to ``like``'s shape."""

    name = "sum_to_shape"

    def forward(self, xp, grad, *like):
        return sum_to_shape_array(xp, grad, like[0].shape if like else self.shape)

    def backward(self, grad, out, g, *like):
        return (broadcast_like(grad, g),) + (None,) * len(like)   # (like: none)


class BroadcastLike(ShapedLike):
    """Stretch ``x`` to ``like``'s shape."""

    name = "broadcast_to"
    gate = "copies"

    def forward(self, xp, x, *like):
        return broadcast_array(xp, x, like[0].shape if like else self.shape)

    def backward(self, grad, out, x, *like):
        return (sum_to_shape(grad, x),) + (None,) * len(like)


def broadcast_array(xp, array, shape):
    """A new array of ``shape`` filled by broadcasting ``array``. Materialised on purpose: numpy's
    zero-copy ``broadcast_to`` costs ~3 µs of Python per call and gives read-only gradients."""
    out = xp.empty(shape, dtype=array.dtype)
    xp.copyto(out, array)
    return out


def sum_to_shape_array(xp, array, shape):
    lead = array.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, n in enumerate(shape)
                                      if n == 1 and array.shape[i + lead] != 1)
    if axes:
        array = array.sum(axis=axes, keepdims=True)
    return array.reshape(shape) if lead else array


def sum_to_shape(grad, like):
    """``grad`` reduced to ``like``'s shape; a no-op when the shapes already agree."""
    shape = like.shape
    if None in shape:
        return apply(SumToShapeOf(), grad, like)
    return grad if grad.shape == shape else apply(SumToShapeOf(tuple(shape)), grad)


def broadcast_like(x, like):
    shape = like.shape                  # (apply_shaped_like written out: this runs in
    if None in shape:                   # every reduction's backward)
        return apply(BroadcastLike(), x, like)
    return x if x.shape == shape else apply(BroadcastLike(tuple(shape)), x)


def accepting_aliases(**aliases):
    """A decorator: the function also takes other frameworks' names for its keywords
    (``alias="own_name"``); an alias given as None counts as not given."""
    def decorate(fn):
        @functools.wraps(fn)
        def with_aliases(*args, **kwargs):
            if kwargs:                  # (eg.reduce_sum(x) runs once per step: kept short)
                for alias, own in aliases.items():
                    if alias in kwargs:
                        value = kwargs.pop(alias)
                        if value is not None:
                            kwargs[own] = value
            return fn(*args, **kwargs)
        return with_aliases
    return decorate


# PyTorch's keywords: eg.sum(x, dim=1, keepdim=True), eg.cat([a, b], dim=1)
accepting_torch_dims = accepting_aliases(dim="axis", keepdim="keepdims")
# TF1's older ones: tf.reduce_sum(y_ * tf.log(y), reduction_indices=[1]) (the MNIST tutorial)
accepting_tf1_keywords = accepting_aliases(reduction_indices="axis", keep_dims="keepdims",
                                           squeeze_dims="axis", dimension="axis")


def rank_known(shape):
    """False only for a graph tensor of unknown rank (a placeholder made without a shape);
    eager shapes are plain tuples."""
    return getattr(shape, "rank_known", True)


def reduction_axes(axis, ndim):
    """Normalise ``axis`` (None, int or tuple, negatives allowed) to a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    if axis.__class__ is int:           # the common case (np.ndim costs ~1 µs)
        return (axis % ndim if ndim else 0,)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(a) % ndim if ndim else 0 for a in axes))
