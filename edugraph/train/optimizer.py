"""The Optimizer machinery, shared by every update rule and by both modes.

A rule only says how to compute new values: ``update(var, grad, slots, step)`` returns
``{var: new_value, "m": new_m, ...}`` written with framework ops. Here we apply it:

* in a graph, each new value becomes an ``assign`` node and ``minimize`` returns one op that
  groups them (remember to *run* it: an unfetched update never happens);
* in eager mode, the values are computed at once and written into the Variables in place.

Slots (Adam's ``m`` and ``v``...) are Variables of the same shape as their variable, created on
first use and readable with ``get_slot(var, "m")``.
"""
import numbers
import warnings

import numpy as np

from .. import context, devices
from ..autodiff import GradientTape
from ..context import no_grad, note_in_place_change
from ..errors import ShapeError
from ..losses import _compatible
from ..ops.clip import clip_by_global_norm, clip_by_norm
from ..ops.math import clip
from ..tensor import Tensor
from ..variable import Variable

_global_steps = {}


class Optimizer:
    """Base class: subclasses set ``slot_initial`` ({name: initial value}) and ``update``."""

    slot_initial = {}
    counts_steps = False                # does the rule need the step number (Adam's bias fix)?
    # Keras's optimizers clip the gradients before the update when made with clipnorm=,
    # global_clipnorm= or clipvalue= (eg.keras.optimizers sets these); TF1's have no such option
    clipnorm = global_clipnorm = clipvalue = None
    # Keras's optimizers warn when a variable gets no gradient (None: the loss does not use
    # it); TF1's skip it without a word, and so do these unless eg.keras.optimizers made them
    warns_missing_gradients = False

    def __init__(self, learning_rate, use_locking=False, name=None):
        if not isinstance(learning_rate, Tensor) and (
                np.ndim(learning_rate) != 0 or np.asarray(learning_rate).dtype.kind not in "iuf"):
            raise TypeError(
                f"{type(self).__name__}: learning_rate must be a number, or a tensor for a rate "
                f"that changes (a placeholder fed each step, a Variable), got "
                f"{learning_rate!r} ({type(learning_rate).__name__}).")
        self.name = name or type(self).__name__.replace("Optimizer", "")
        if not isinstance(learning_rate, Tensor) and not learning_rate >= 0:
            raise ValueError(f"{self.name}: learning_rate must be 0 or more (as eg.optim's lr), "
                             f"got {learning_rate}: a negative rate would step up the loss, not "
                             "down.")
        self.learning_rate = learning_rate
        self._slots = {}                # (var, slot name) → slot Variable
        self._step = None               # how many updates were applied (bias correction)

    # ------------------------------------------------------------------ the rule
    def update(self, var, grad, slots, step):
        """New values ``{var: ..., slot name: ...}`` after one step (``step`` counts from 1)."""
        raise NotImplementedError

    # A rule may also give ``update_in_place(xp, var, grad, slots, step)``: the same formula,
    # the same float operations in the same order, on the arrays themselves (numpy or CuPy:
    # ``xp``), written into the variable's and the slots' own arrays. Eager steps use it, as
    # TF's fused ApplyAdam kernel and PyTorch's fused Adam are used: each op of ``update``
    # would cost a framework call and a full-size temporary, and Adam's rule is some twenty
    # of them per variable. Graphs keep ``update``: it is what they show, and the tests
    # check that the two give the same bits.
    update_in_place = None

    # ------------------------------------------------------------------ slots
    def get_slot_names(self):
        return sorted(self.slot_initial)

    def get_slot(self, var, name):
        """The slot variable ``name`` of ``var`` (None before the first update)."""
        return self._slots.get((id(var), name))

    def slots_for(self, var):
        """``{slot name: slot Variable}`` for ``var``, created (at their initial values) on first
        use, as the first update would."""
        slots = {}
        for name, initial in self.slot_initial.items():
            slot = self._slots.get((id(var), name))
            if slot is None:
                slot = self._slots[(id(var), name)] = _like(var, initial, f"{self.name}_{name}")
            slots[name] = slot
        return slots

    def step_variable(self, like):
        """The variable counting applied updates (for bias correction), created beside ``like``."""
        if self._step is None:
            self._step = _like(like, 0.0, f"{self.name}_step", shape=())
        return self._step

    # ------------------------------------------------------------------ saving
    def get_state(self, named_variables):
        """The optimizer's state as arrays: ``{"<variable name>/<slot>": ..., "step": ...}``.
        Keyed by variable name, so it can be restored into a fresh optimizer for a fresh model."""
        state = {}
        for name, var in named_variables:
            for slot_name in self.get_slot_names():
                slot = self.get_slot(var, slot_name)
                if slot is not None:
                    state[f"{name}/{slot_name}"] = slot.numpy()
        if self._step is not None:
            state["step"] = self._step.numpy()
        return state

    def set_state(self, state, named_variables):
        """Restore what ``get_state`` returned (slots are created where they do not exist yet)."""
        named_variables = list(named_variables)
        for name, var in named_variables:
            if any(key.startswith(f"{name}/") for key in state):
                for slot_name, slot in self.slots_for(var).items():
                    slot.assign(state[f"{name}/{slot_name}"])
        if "step" in state and named_variables:
            self.step_variable(named_variables[0][1]).assign(state["step"])

    # ------------------------------------------------------------------ TF1 API
    def compute_gradients(self, loss, var_list=None):
        """[(gradient, variable)], gradient None where the loss does not depend on it."""
        if isinstance(var_list, Variable):      # (TF1 flattens var_list: one is a list)
            var_list = [var_list]
        elif isinstance(var_list, Tensor):      # list(x) would iterate over x's rows
            raise TypeError(f"minimize: var_list must be a list of variables ([W]), not "
                            f"{_what(var_list)}.")
        if callable(loss):
            if var_list is None:
                raise ValueError("In eager mode pass var_list: "
                                 "opt.minimize(loss_fn, var_list=[w, b]).")
            with GradientTape() as tape:
                value = loss()
            return list(zip(tape.gradient(value, list(var_list)), var_list))
        if not isinstance(loss, Tensor):
            raise TypeError(f"minimize: loss must be a tensor computed from the variables "
                            f"(in eager mode, a function computing it), not "
                            f"{_what(loss)} {loss!r}.")
        if loss.graph is None:
            raise TypeError("In eager mode minimize() needs a function computing the loss "
                            "(opt.minimize(lambda: loss(w), var_list=[w])), not a value: "
                            "the gradient must be recorded while the loss is computed.")
        from ..graph.gradients import gradients
        from ..graph.variables import TRAINABLE_VARIABLES
        var_list = list(var_list) if var_list is not None else \
            loss.graph.get_collection(TRAINABLE_VARIABLES)
        if not var_list:
            raise ValueError("No variables to optimize.")
        return list(zip(gradients(loss, var_list), var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """Apply one update to each variable; a graph op (graph mode) or done at once (eager)."""
        grads_and_vars = _checked_pairs(grads_and_vars, global_step)
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            names = [getattr(v, "name", "?") for _, v in grads_and_vars]
            raise ValueError(f"No gradients provided for any variable: {names}. Check that "
                             "the loss depends on the variables (and is not an integer).")
        if self.warns_missing_gradients and len(pairs) < len(grads_and_vars):
            names = [getattr(v, "name", "?") for g, v in grads_and_vars if g is None]
            warnings.warn(f"Gradients do not exist for variables {names} when minimizing the "
                          "loss: the loss does not depend on them, so they are not updated. "
                          "(A layer the model never calls? A variable used only outside the "
                          "`with GradientTape()` block?)", UserWarning, stacklevel=2)
        graph = pairs[0][1].graph
        if graph is None:
            with no_grad():
                return self._apply(pairs, global_step)
        with context.building(graph), graph.name_scope(name or self.name):
            return self._apply(pairs, global_step)

    def apply(self, grads, trainable_variables=None):
        """Keras 3's spelling: ``optimizer.apply(grads, model.trainable_variables)``, the
        gradients and the variables as two lists in the same order."""
        if trainable_variables is None:
            raise ValueError("optimizer.apply(grads, trainable_variables): pass the variables "
                             "too (model.trainable_variables), in the order of the gradients.")
        grads, variables = list(grads), list(trainable_variables)
        if len(grads) != len(variables):
            raise ValueError(f"optimizer.apply got {len(grads)} gradients for "
                             f"{len(variables)} variables; they pair up in order.")
        return self.apply_gradients(zip(grads, variables))

    def minimize(self, loss, global_step=None, var_list=None, name=None):
        """compute_gradients + apply_gradients: the training step."""
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step, name)

    def _apply(self, pairs, global_step):
        pairs = self._clipped(pairs)
        step, writes = None, []
        if self.counts_steps:
            counter = self.step_variable(pairs[0][1])
            step = counter + 1
            writes.append(counter.assign(step))
        for grad, var in pairs:
            slots = self.slots_for(var)
            if self._updates_in_place(grad, var):
                arrays = {name: slot._value for name, slot in slots.items()}
                self.update_in_place(var.device.xp, var._value, grad._value, arrays,
                                     None if step is None else step._value)
                for changed in (var, *slots.values()):
                    note_in_place_change(changed)
                continue
            new = self.update(var, grad, {k: s for k, s in slots.items()}, step)
            for key, value in new.items():
                writes.append(_write(var, value) if key is var else slots[key].assign(value))
        if pairs[0][1].graph is None:
            if global_step is not None:
                global_step.assign_add(1)
            return None
        from ..graph.core import control_dependencies, group
        if global_step is None:
            return group(*writes, name="update")
        with control_dependencies(writes):
            return global_step.assign_add(1).op

    def _updates_in_place(self, grad, var):
        """Can this eager step use ``update_in_place``? When ``var`` could take ``var -=
        grad`` straight into its array (same device, shape and float dtype, nothing watching
        each op: see ``Tensor._writes_through``) and the learning rate is a plain number (a
        tensor rate, fed or scheduled, goes through the ops)."""
        return (self.update_in_place is not None and var.graph is None
                and isinstance(self.learning_rate, numbers.Real)
                and var._writes_through(grad))

    def _clipped(self, pairs):
        """Keras's gradient clipping, one kind at most: each gradient by its own norm
        (``clipnorm``), all of them by their global norm (``global_clipnorm``), or each entry
        to [-clipvalue, clipvalue]."""
        grads = [g for g, _ in pairs]
        if self.clipnorm is not None:
            grads = [clip_by_norm(g, self.clipnorm) for g in grads]
        elif self.global_clipnorm is not None:
            grads, _ = clip_by_global_norm(grads, self.global_clipnorm)
        elif self.clipvalue is not None:
            grads = [clip(g, -self.clipvalue, self.clipvalue) for g in grads]
        else:
            return pairs
        return [(g, v) for g, (_, v) in zip(grads, pairs)]


def _checked_pairs(grads_and_vars, global_step):
    """``grads_and_vars`` as a list of (gradient, variable) pairs. Shapes that are not such
    pairs would otherwise update nothing, or the wrong variable, without a word:
    ``[(w, g)]`` (the wrong way round), ``(grads, variables)`` (two lists, not zipped),
    ``[w, g]`` (no pairs at all), ``apply_gradients(grads, variables)``."""
    fix = "pass zip(grads, variables), gradient first."
    if global_step is not None and not isinstance(global_step, Variable):
        raise TypeError(f"apply_gradients: global_step is {_what(global_step)}, not a "
                        "Variable. Gradients and variables given as two lists? Pair them: "
                        "apply_gradients(zip(grads, variables)).")
    if isinstance(grads_and_vars, Tensor) or not hasattr(grads_and_vars, "__iter__"):
        raise TypeError(f"apply_gradients: got {_what(grads_and_vars)}, not a list of "
                        f"(gradient, variable) pairs; {fix}")
    pairs = list(grads_and_vars)
    for i, pair in enumerate(pairs):
        if isinstance(pair, Tensor) or not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"apply_gradients: item {i} is {_what(pair)}, not a (gradient, "
                            f"variable) pair; {fix}")
        grad, var = pair
        if not _updatable(var):
            raise TypeError(f"apply_gradients: pair {i}'s variable is {_what(var)}; {fix}")
        grad_shape = getattr(grad, "shape", None)
        if grad_shape is not None and not _compatible(grad_shape, var.shape):
            raise ShapeError(f"apply_gradients: pair {i}'s gradient has shape "
                             f"{tuple(grad_shape)} but its variable {var.name!r} has shape "
                             f"{tuple(var.shape)}; each gradient must be shaped like its "
                             "variable. Lists zipped in different orders? Pass "
                             "zip(grads, variables) with grads computed for those variables.")
    return pairs


def _updatable(var):
    """Can an optimizer write into ``var``? A Variable, or (eagerly) a tensor that requires
    grad: a PyTorch-style parameter, which ``eg.optim`` passes."""
    return isinstance(var, Variable) or (
        isinstance(var, Tensor) and var.graph is None and var.requires_grad)


def _what(x):
    """``x`` in words, for an error message: what did the caller pass?"""
    if isinstance(x, Variable):
        return f"the Variable {x.name!r} (shape {tuple(x.shape)})"
    if isinstance(x, Tensor) and x.graph is not None:
        return f"the graph tensor {x.name!r}, not a Variable"
    if isinstance(x, Tensor):
        needs = "requires" if x.requires_grad else "does not require"
        return f"a tensor that {needs} grad (shape {tuple(x.shape)})"
    if isinstance(x, (list, tuple)):
        return f"a {type(x).__name__} of {len(x)} items"
    return f"a {type(x).__name__}"


def _write(var, value):
    """``var.assign(value)``; a plain tensor that requires grad (a PyTorch-style parameter,
    ``eg.randn(3, requires_grad=True)``, as ``eg.optim`` takes them) has no ``assign`` and is
    written in place with ``copy_``, which keeps the same in-place bookkeeping."""
    return var.assign(value) if isinstance(var, Variable) else var.copy_(value)


def _like(var, value, name, shape=None):
    """A non-trainable Variable shaped like ``var`` (or ``shape``) filled with ``value``."""
    shape = var.shape if shape is None else shape
    array = np.full(tuple(shape), value, dtype=var.dtype)
    if var.graph is not None:
        from ..graph.core import name_scope
        with context.building(var.graph), name_scope(None):
            return Variable(array, trainable=False, name=f"{var.op.name}/{name}")
    with devices.device(var.device):
        return Variable(array, trainable=False, name=f"{var.name or 'tensor'}/{name}")


def create_global_step(graph=None):
    """The training step counter (an int64 Variable) that ``minimize(global_step=...)`` bumps."""
    from ..graph.core import get_default_graph
    graph = graph or get_default_graph()
    with context.building(graph):
        step = _global_steps[graph] = Variable(np.int64(0), trainable=False, name="global_step")
    return step


def get_global_step(graph=None):
    from ..graph.core import get_default_graph
    return _global_steps.get(graph or get_default_graph())


def get_or_create_global_step(graph=None):
    return get_global_step(graph) or create_global_step(graph)
