"""Reverse-mode autodiff: the engine is tiny, all the knowledge lives in the ops.

1. Start from the output's gradient (1 for a scalar loss).
2. Take the nodes in reverse topological order: nodes are numbered as they are recorded
   (``_seq``) and an op's inputs always exist before its output, so the newest node holding a
   gradient has received all of it. A heap keeps them newest first (a loop, not recursion: a
   10 000-op chain is fine).
3. Each node's op turns its output gradient into its inputs' gradients (``op.backward``);
   each is reduced to its input's shape (``sum_to_shape``) and *summed* where branches meet.
"""
import heapq
import math
import warnings

from . import context, debugging as _debugging, nest
from .context import state, no_grad, enable_grad, next_sequence
from .errors import GradientError, ShapeError
from .ops import base as _base  # (module import: tensor.py loads this file while ops load)
from .tensor import Tensor


def _seed(output, grad, implicit_sum=False):
    """The gradient that starts the walk; ``implicit_sum``: a non-scalar output's is all ones
    (TF tapes differentiate the sum of the target; PyTorch's backward asks for it)."""
    if grad is None:
        if output._value.size != 1 and not implicit_sum:
            raise GradientError(
                f"backward() on a tensor of shape {output.shape} needs a gradient of the same "
                "shape: only a scalar has an implicit gradient of 1. Reduce it first "
                "(loss.sum() or loss.mean()) or pass backward(grad=...).")
        ones = output.device.xp.empty(output.shape, dtype=output.dtype)
        ones.fill(1)                    # (xp.ones is a Python wrapper around the same two calls)
        return Tensor(ones, output.device)
    grad = grad if isinstance(grad, Tensor) else Tensor(
        output.device.put(_host(grad, output.dtype)), output.device)
    if (grad.shape, grad.dtype, grad.device) != (output.shape, output.dtype, output.device):
        raise GradientError(
            f"The gradient passed to backward has shape {grad.shape}, dtype {grad.dtype} on "
            f"{grad.device.name}, but the output has shape {output.shape}, dtype "
            f"{output.dtype} on {output.device.name}; they must match.")
    return grad


def _host(value, dtype):
    import numpy as np
    return np.asarray(value, dtype=dtype)


_newest_freed = 0                  # the newest node a backward() freed (a sequence number)


def _propagate(outputs, seeds, boundary=0, wanted=(), accumulate=True, free=False,
               end=math.inf):
    """The reverse walk. Returns the summed gradient of each node in ``wanted``; with
    ``accumulate`` adds leaf gradients into ``leaf.grad`` as PyTorch does; with ``free``
    marks each node it walks as freed (``backward()`` without ``retain_graph``, see there).

    Nodes recorded before ``boundary`` (a tape's start) or from ``end`` on (where its block
    ended) count as leaves: a tape only sees what it recorded. Leaves are never on the heap;
    their gradients wait in ``grads`` until the end.
    """
    __tracebackhide__ = True  # noqa: F841  (IPython: an error in an op's backward shows its line)
    grads = {}                      # node → its gradient so far (branches sum into it)
    for out, seed in zip(outputs, seeds):
        grads[out] = grads[out] + seed if out in grads else seed
    pending = [(-node._seq, node) for node in grads
               if node._op is not None and boundary <= node._seq < end]
    heapq.heapify(pending)          # recorded nodes holding a gradient, newest first (numbers
                                    # are unique, so the heap never compares two tensors)
    push, pop = heapq.heappush, heapq.heappop
    found = {}
    sum_to_shape = _base.sum_to_shape
    global _newest_freed            # (comparisons, not max(): this runs once per backward)
    as_recorded_after = context.last_in_place_change
    if _newest_freed > as_recorded_after:
        as_recorded_after = _newest_freed
    if free and pending and -pending[0][0] > _newest_freed:
        _newest_freed = -pending[0][0]
    checking = _base.check_result is not None   # eg.debugging.enable_check_numerics()
    while pending:
        node = pop(pending)[1]
        grad = grads.pop(node)
        if node in wanted:
            found[node] = grad
        if accumulate and node._retain:         # (retained grads add up too, as in PyTorch)
            _accumulate(node, grad)
        if node._seq > as_recorded_after:       # (nothing changed in place or freed since:
            out, inputs, backward_inputs = node, node._inputs, node._inputs      # the norm)
        else:
            out, inputs, backward_inputs = _as_recorded(node)
        if free:
            node._freed = True
        if checking:                            # (a numerics check names node's backward)
            input_grads = _debugging.backward_checked(node, grad, out, backward_inputs)
        else:
            input_grads = node._op.backward(grad, out, *backward_inputs)
        try:
            if len(input_grads) != len(inputs):
                raise TypeError
            for inp, g in zip(inputs, input_grads):
                if g is None or not inp.requires_grad:
                    continue
                if inp.graph is not None or g._value.shape != inp._value.shape:
                    try:                        # undo broadcasting: the one central place
                        g = sum_to_shape(g, inp)
                    except ShapeError:
                        raise _base.wrong_gradient_shape(node._op, g, inp, inputs) from None
                total = grads.get(inp)          # (same shape, eager: nothing to undo)
                if total is not None:
                    grads[inp] = total + g      # branches sum
                else:
                    grads[inp] = g
                    if inp._op is not None and boundary <= inp._seq < end:
                        push(pending, (-inp._seq, inp))
        except (TypeError, AttributeError):
            # a custom op's backward may return a bare tensor, arrays, too few gradients:
            # named here (checked only on failure: this loop runs for every node)
            _base.backward_result(node._op, input_grads, inputs)
            raise
    for leaf, grad in grads.items():            # what is left: the leaves
        if leaf in wanted:
            found[leaf] = grad
        if accumulate and leaf.requires_grad:
            _accumulate(leaf, grad)
    return found


def _accumulate(tensor, grad):
    tensor._grad = grad if tensor._grad is None else tensor._grad + grad


def _as_recorded(node):
    """For a node recorded before some tensor changed in place or a backward() freed nodes:
    ``node``, the inputs it used, and the tensors its backward may read, as they were when it
    was recorded.

    * An input that a recorded change has made a new node since (``out += identity`` while
      gradients are recorded: ``Tensor._record_change``) is the version it was then
      (``_previous``), and its gradient goes there.
    * A tensor whose values were overwritten since (``assign``, ``x -= ...`` under no_grad,
      ``x[...] = ...``, ``.data = ...``) is read through a stand-in without values: a backward
      that needs them fails clearly (PyTorch's "modified by an inplace operation"); one that
      does not (``w * x`` for w's gradient reads only x) still gives the right answer, as in
      TF. A tensor that is a view of a variable's array (``w.T``, ``w[0]``, ``w.detach()``)
      changed when the variable did.
    * A node that a ``backward()`` without ``retain_graph`` has walked is read through
      stand-ins that say so (``_Freed``): walking it again gives its gradient only where it
      needs no saved values (an add), as in PyTorch."""
    inputs = tuple(_version_at(t, node._seq) for t in node._inputs)
    if getattr(node, "_freed", False):
        return _Freed(node, node), inputs, [_Freed(t, node) for t in inputs]
    written = context.written_in_place_since(node._seq)
    readable = []
    for t in (node, *inputs):
        if getattr(t, "_changed_at", 0) > node._seq:
            t = _Overwritten(t, node)
        else:
            variable = _viewed_variable(t, written)
            if variable is not None:
                t = _Overwritten(t, node, view_of=variable)
        readable.append(t)
    return readable[0], inputs, readable[1:]


def _version_at(tensor, sequence):
    """``tensor`` as it was at ``sequence``: a recorded in-place change since then made it a
    newer node (a higher sequence number), and the version before is its ``_previous``."""
    while tensor._seq > sequence and getattr(tensor, "_previous", None) is not None:
        tensor = tensor._previous
    return tensor


def _viewed_variable(tensor, written):
    """The tensor among ``written`` whose array holds ``tensor``'s values (``tensor`` is a view
    of it), if any."""
    if tensor.graph is not None:
        return None
    for variable in written:
        if variable.device is tensor.device and \
                variable.device.xp.may_share_memory(tensor._value, variable._value):
            return variable
    return None


class _WithoutValues(Tensor):
    """An input or the output of ``node`` whose values its backward may no longer read:
    shape and dtype, but reading the values raises the error ``_why`` writes."""

    __slots__ = ("_shape", "_dtype", "_user", "_view_of", "_role")

    def __init__(self, original, node, view_of=None):
        super().__init__(None, original.device, original.requires_grad, original.name)
        self._shape, self._dtype, self._user = original.shape, original.dtype, node
        self._view_of = view_of
        self._role = "its output" if original is node else "an input"

    @property
    def _value(self):
        raise GradientError(self._why())

    @_value.setter
    def _value(self, value):        # (Tensor.__init__ sets it: nothing to keep)
        pass

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    size = property(lambda self: math.prod(self._shape))


class _Freed(_WithoutValues):
    """What ``node`` saved for its backward, after a ``backward()`` without ``retain_graph``
    walked it (PyTorch frees saved values then: a second walk that needs them fails)."""

    def _why(self):
        op = self._user._op.name
        return (f"Trying to backward through the graph a second time: the gradient of {op} "
                f"needs the values of {self._role} (shape {self._shape}), and the first "
                "backward() freed them, as PyTorch does. Call backward() once per forward "
                "pass (compute the loss again, then backward() again: the gradients add up in "
                ".grad), or pass retain_graph=True to the first backward() if you need to "
                "walk the same graph twice.")


class _Overwritten(_WithoutValues):
    """An input or the output of ``node``, changed in place after ``node`` was recorded."""

    def _why(self):
        op = self._user._op.name
        shape = f"(shape {self._shape})"
        if self._view_of is not None:
            source = f"variable '{self._view_of.name}'" if self._view_of.name else "a tensor"
            shared = "that is a view of" if self._role == "an input" else \
                "that shares memory with"
            what = f"{self._role} {shape} {shared} {source} (a reshape, slice, detach...)"
        else:
            what = f"its variable '{self.name}' {shape}" if self.name else f"{self._role} {shape}"
        return (f"The gradient of {op} needs the values of {what}, but they were changed in "
                f"place (assign, assign_add/sub, x -= ..., x[...] = ... or .data = ...) after "
                f"{op} {'made' if self._role == 'its output' else 'used'} them. Take the "
                "gradients first and change the variables after (grads = tape.gradient(loss, "
                "[w1, w2]), then the assigns), or run the forward pass again.")


def backward(output, grad=None, retain_graph=None, create_graph=False, inputs=None):
    """``output.backward()``: gradients of ``output`` into every leaf's ``.grad`` (only into
    ``inputs`` when given, as in PyTorch). ``torch.autograd.backward([l1, l2], [g1, g2])``:
    several outputs (and their gradients), whose gradients add up.

    As in PyTorch, a walk without ``retain_graph`` (which defaults to ``create_graph``) frees
    the graph it walked: PyTorch frees the values the ops saved for their gradients; here they
    are marked as gone (the tensors keep their arrays, for the inspector), so a second
    ``backward()`` through that graph is an error, as there. Each forward pass makes a new
    graph, so ``loss.backward()`` once per pass adds the passes' gradients up in ``.grad``."""
    __tracebackhide__ = True  # noqa: F841  (as in _propagate)
    free = not (create_graph if retain_graph is None else retain_graph)
    if isinstance(output, (list, tuple)):
        outputs = list(output)
        grads = list(grad) if isinstance(grad, (list, tuple)) else [grad] * len(outputs)
    else:
        outputs, grads = [output], [grad]
    for out in outputs:
        _check_backward_output(out)
    with enable_grad() if create_graph else no_grad():
        seeds = list(map(_seed, outputs, grads))
        if inputs is None:
            _propagate(outputs, seeds, free=free)
            return
        inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        found = _propagate(outputs, seeds, wanted=set(inputs), accumulate=False, free=free)
        for t in inputs:
            if t in found:
                _accumulate(t, found[t])


def _check_backward_output(output):
    if not isinstance(output, Tensor):
        raise TypeError(f"backward() needs a tensor (a loss), got {type(output).__name__}.")
    if output.graph is not None:
        raise GradientError(
            f"backward() on the graph tensor '{output.name}': a graph has no values to take "
            "gradients of until it runs. In a graph, add gradient nodes with "
            "eg.gradients(loss, [w, b]) or optimizer.minimize(loss), and run them in a Session.")
    if not output.requires_grad:
        raise GradientError(_no_gradient_path("backward() on a tensor"))


def _no_gradient_path(what):
    return (f"{what} that does not require grad. Either nothing it was computed from has "
            "requires_grad=True (create the inputs with eg.tensor(..., requires_grad=True) or "
            "eg.Variable(...)), or it was computed under eg.no_grad(), or the path passes "
            "through an op that has no gradient (argmax, a comparison, a cast to an integer "
            "dtype): the gradient stops there.")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """d(sum of outputs)/d(inputs), returned (not accumulated), like ``torch.autograd.grad``
    (same arguments; ``retain_graph`` is not needed: the recorded graph is kept). A tuple with
    one gradient per input, also for a single input: ``grad(y, x)[0]``, as in PyTorch."""
    __tracebackhide__ = True  # noqa: F841  (as in _propagate)
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    grad_outputs = grad_outputs if isinstance(grad_outputs, (list, tuple)) else \
        [grad_outputs] * len(outputs)
    if not allow_unused and not any(o.requires_grad for o in outputs):
        raise GradientError(_no_gradient_path("grad() of an output"))
    with enable_grad() if create_graph else no_grad():
        seeds = [_seed(o, g) for o, g in zip(outputs, grad_outputs)]
        found = _propagate(outputs, seeds, wanted=set(inputs), accumulate=False)
    result = [found.get(i) for i in inputs]
    if not allow_unused and any(r is None for r in result):
        missing = [i for i, r in enumerate(result) if r is None]
        raise GradientError(f"inputs {missing} were not used to compute the outputs; pass "
                            "allow_unused=True to get None for them.")
    return tuple(result)


class GradientTape:
    """Record eager ops to differentiate them later (TF2's ``tf.GradientTape``).

    >>> with eg.GradientTape() as tape:
    ...     y = x * x            # x watched (a Variable is watched automatically)
    >>> tape.gradient(y, x)

    The tape holds what ran inside its ``with`` block, as TF's does: recorded nodes are
    numbered, and the tape keeps the numbers its block gave out (``_start`` to ``_stop``). A
    loss computed after the block is not on it (its gradient is None, as in TF), nor is the
    gradient maths of a ``tape.gradient`` called after the block, so a second derivative needs
    a tape open around that call. While a function traces, the tape holds the graph's ops
    made inside the block in the same way (``_ops``).
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self.persistent = persistent
        self.watch_accessed_variables = watch_accessed_variables
        self._start = self._stop = None
        self._ops = None            # (graph, first op, op after the last) while tracing
        self._used = False
        self._watched = []
        self._switched_on = []      # watched tensors that did not require grad before

    def __enter__(self):
        self._start, self._stop = next_sequence(), None
        graph = state.graph
        self._ops = None if graph is None else [graph, len(graph.get_operations()), None]
        self._previous_grad_mode = state.grad_enabled
        state.grad_enabled = True
        state.tapes.append(self)
        return self

    def __exit__(self, *exc):
        self._stop = next_sequence()            # what runs from here on is not on the tape
        if self._ops is not None:
            self._ops[2] = len(self._ops[0].get_operations())
        state.tapes.remove(self)
        state.grad_enabled = self._previous_grad_mode
        self._set_watched(False)    # watching belongs to this tape, not to the tensor

    def _set_watched(self, on):
        """Switch recording of the tensors this tape watched on, or off where no other open
        tape watches them too (nested tapes may watch the same tensor, in either order)."""
        for t in self._switched_on:
            t.requires_grad = on or _watched_by_another_tape(t, self)

    def watch(self, tensor):
        """Record operations on ``tensor`` (constants are not watched unless asked). As in TF,
        an integer tensor cannot be watched (it has no gradient): a warning says so, and its
        gradient is None."""
        watched = tensor if isinstance(tensor, (list, tuple)) else [tensor]
        _check_tensors("GradientTape.watch", watched, "the watched values", " Make a tensor "
                       "first, eg.constant(3.0): a number or numpy array cannot be watched.")
        for t in watched:
            if t.dtype.kind != "f":
                warnings.warn(f"GradientTape.watch: the dtype of the watched tensor must be "
                              f"floating (e.g. eg.float32), got {t.dtype}: its gradient will "
                              "be None. Make it with a float dtype to differentiate by it.",
                              stacklevel=2)
                continue
            if not t.requires_grad:
                t.requires_grad_(True)
                self._switched_on.append(t)
            elif _watched_by_another_tape(t, self):     # then it is this tape's too
                self._switched_on.append(t)
            self._watched.append(t)

    def watched_variables(self):
        return tuple(self._watched)

    def stop_recording(self):
        """Ops inside are not recorded (``with tape.stop_recording():``)."""
        return no_grad()

    def reset(self):
        """Forget what was recorded (TF: as if the block were left and a new tape entered):
        inside the block, only what runs from here on counts; after it, nothing does."""
        self._start = next_sequence()
        if self._ops is not None:
            self._ops[1] = len(self._ops[0].get_operations())
        self._used = False

    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients="none"):
        """d(target)/d(sources), with sources a tensor, a list/tuple or a dict of them. A
        target that is a structure of tensors (a list, a dict) stands for their sum, as in
        TF; ``output_gradients``, if given, has the target's structure."""
        if self._start is None:
            raise GradientError("GradientTape.gradient needs the tape to have recorded: use "
                                "it after `with eg.GradientTape() as tape:`.")
        if self._used and not self.persistent:
            raise GradientError("A non-persistent GradientTape can only be used to compute "
                                "one set of gradients (or jacobians). Use "
                                "eg.GradientTape(persistent=True) to call gradient again.")
        target = nest.flatten(target)
        flat, rebuild = flatten_sources(sources)
        _check_tensors("GradientTape.gradient", target, "the target (the loss computed inside "
                       "`with eg.GradientTape() as tape:`)")
        _check_tensors("GradientTape.gradient", flat, "the sources (the variables or watched "
                       "tensors to differentiate by)")
        self._used = True
        if output_gradients is not None:
            output_gradients = nest.flatten(output_gradients)
        if any(t.graph is not None for t in target):
            # inside an @eg.function: gradient nodes in the traced graph (eg.gradients)
            from .graph.function import tape_gradient
            return tape_gradient(target, sources, output_gradients, unconnected_gradients,
                                 self._ops)
        recording = self in state.tapes
        self._set_watched(True)     # the walk follows watched tensors, also after the tape closed
        try:
            found = self._walk(target, flat, output_gradients)
        finally:
            self._set_watched(recording)
        result = [found.get(s) if self._differentiates(s) else None for s in flat]
        return rebuild(fill_unconnected(result, flat, unconnected_gradients))

    def _differentiates(self, source):
        """Whether ``tape.gradient`` gives a gradient for ``source``, as TF's tape decides: one
        it watched, one it computed, a variable (unless ``watch_accessed_variables=False``),
        or a tensor made to require grad. A tensor computed *before* the tape began, e.g.
        ``x2 = eg.Variable(2.0) + 1.0``, or after its block, is none of these: its gradient
        is None."""
        if any(t is source for t in self._watched):
            return True
        if not self.watch_accessed_variables:
            return False
        return source._op is None or self._start <= source._seq < self._end()

    def _end(self):
        """The first number after what the tape recorded (none while the block runs)."""
        return math.inf if self._stop is None else self._stop

    def _walk(self, target, sources, output_gradients):
        targets = target if isinstance(target, (list, tuple)) else [target]
        seeds_in = output_gradients if isinstance(output_gradients, (list, tuple)) else \
            [output_gradients] * len(targets)
        pairs = [(t, g) for t, g in zip(targets, seeds_in) if t.requires_grad]
        if not pairs:
            return {}
        # Gradient maths is itself recorded while any tape is active: nested tapes give
        # second derivatives exactly as TF does.
        with enable_grad() if state.tapes else no_grad():
            seeds = [_seed(t, g, implicit_sum=True) for t, g in pairs]
            return _propagate([t for t, _ in pairs], seeds, boundary=self._start,
                              end=self._end(), wanted=set(sources), accumulate=False)


def _check_tensors(where, values, what, hint=""):
    for i, value in enumerate(values):
        if not isinstance(value, Tensor):
            at = f" (item {i})" if len(values) > 1 else ""
            raise TypeError(f"{where}: {what} must be tensors, got "
                            f"{type(value).__name__}{at}.{hint}")


class UnconnectedGradients:
    """``tape.gradient(..., unconnected_gradients=eg.UnconnectedGradients.ZERO)``: zeros, not
    None, for sources the target does not depend on (TF's enum; the strings work too)."""

    NONE, ZERO = "none", "zero"


def fill_unconnected(grads, sources, unconnected_gradients):
    """``grads`` as ``unconnected_gradients`` asks for a source the target does not depend on
    (its gradient None): "none" keeps None, "zero" gives zeros of the source's shape and dtype
    (``tape.gradient`` and ``eg.gradients`` share this; in a graph, the zeros are a node)."""
    if unconnected_gradients not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
        raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}. "
                         "Use 'none' (None for an unconnected source) or 'zero' (zeros), or "
                         "eg.UnconnectedGradients.NONE / .ZERO.")
    if unconnected_gradients == UnconnectedGradients.NONE:
        return list(grads)
    from .ops.random import zeros_like
    return [g if g is not None else zeros_like(s) for g, s in zip(grads, sources)]


def _watched_by_another_tape(tensor, tape):
    return any(other is not tape and any(t is tensor for t in other._switched_on)
               for other in state.tapes)


def flatten_sources(sources):
    """``tape.gradient``'s sources (one, a list/tuple or a dict) → (a list, a function giving
    the results in the same form)."""
    if isinstance(sources, dict):
        keys = list(sources)
        return [sources[k] for k in keys], lambda r: dict(zip(keys, r))
    if isinstance(sources, (list, tuple)):
        return list(sources), lambda r: type(sources)(r)
    return [sources], lambda r: r[0]
