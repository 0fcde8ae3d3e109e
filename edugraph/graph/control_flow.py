"""Tensor-dependent control flow: ``eg.cond`` and ``eg.while_loop`` (TF1's signatures).

Eagerly they are plain Python: ``cond`` calls the branch the predicate picks, ``while_loop``
loops. In a graph (a Session's, or a traced function's) a Python ``if`` cannot look at a value
that does not exist yet, so the decision must itself be a node:

* ``cond(pred, true_fn, false_fn)`` traces each branch function into its own small graph and
  adds one ``If`` node holding both; when it runs it runs only the branch ``pred`` picks;
* ``while_loop(cond, body, loop_vars)`` traces ``cond`` and ``body`` into graphs and adds one
  ``While`` node that runs the body while the condition holds, keeping each step's loop
  variables for the backward pass.

A node has one output; here that output is the tuple of the branch's results (a ``TupleTensor``,
a Python tuple at run time) and ``TupleGet`` nodes hand out its parts.

Gradients (``eg.gradients``, ``tape.gradient`` in a traced function): the gradient of a cond is
another cond over the branches' gradient graphs (so second derivatives work too); the gradient
of a while loop runs the body's gradient graph backwards over the recorded steps.

Inside ``eg.function``, AutoGraph (``edugraph/autograph``) writes these calls for a Python
``if``/``while``/``for`` on a tensor; in a TF1 graph, or with ``autograph=False``, ``if t:``
raises and says to call ``eg.cond``.
"""
import contextlib
import functools

import numpy as np

from .. import context
from ..errors import GradientError
from ..nest import map_structure
from ..ops.base import Op
from ..tensor import Tensor
from .core import Operation, SymbolicTensor
from .function import (FuncGraph, _graph_tensor, compile_graph, fed_tensors, passes_of,
                       run_on_devices, values_of)
from .shapes import TensorShape

__all__ = ["cond", "while_loop"]


# ----------------------------------------------------------------------------- tuples
class TupleTensor(SymbolicTensor):
    """The tuple of a cond's or while loop's results. ``present``: the positions that hold a
    value (a gradient tuple may lack some); gradients meeting here add up part by part."""

    present = None

    def __add__(self, other):
        return _add_tuples(self, other)

    __radd__ = __add__


def _tuple_node(graph, op, inputs, name, present, requires_grad=True, controls=()):
    out = graph.add_operation(op, inputs, (), np.dtype(object), name, controls)
    out.present = tuple(present)
    out.requires_grad = requires_grad
    return out


class TupleGet(Op):
    """Part ``index`` of a tuple."""

    name, type_name, returns_an_input = "tuple_get", "Identity", True

    def __init__(self, index, size):
        self.index, self.size = index, size

    def forward(self, xp, values):
        return values[self.index]

    def backward(self, grad, out, values):
        return _tuple_node(out.graph, Pack(self.size, (self.index,)), [grad],
                           "pack_grad", (self.index,)),


class _TupleOp(Op):
    """An op whose value is a tuple. Marked stateful so that constant folding leaves it alone
    (a folded constant must be an array); it runs as any op does."""

    stateful, output_class = True, TupleTensor

    def session_step(self, session, node):
        return functools.partial(self.forward, node._device.xp)


class Pack(_TupleOp):
    """A tuple of ``size`` with the inputs at ``positions`` and None elsewhere."""

    name, type_name = "pack", "Pack"

    def __init__(self, size, positions):
        self.size, self.positions = size, tuple(positions)

    def forward(self, xp, *values):
        result = [None] * self.size
        for p, v in zip(self.positions, values):
            result[p] = v
        return tuple(result)

    def backward(self, grad, out, *values):
        return [_get(grad, p, self.size, v.shape, v.dtype, "pack_grad")
                if p in grad.present else None for p, v in zip(self.positions, values)]


class AddTuples(_TupleOp):
    """Two tuples added part by part (None counts as zero)."""

    name, type_name = "add_tuples", "AddN"

    def forward(self, xp, a, b):
        return tuple(y if x is None else x if y is None else x + y for x, y in zip(a, b))

    def backward(self, grad, out, a, b):
        return grad, grad


def _add_tuples(a, b):
    present = sorted(set(a.present or ()) | set(b.present or ()))
    return _tuple_node(a.graph, AddTuples(), [a, b], "add_tuples", present)


def _get(tuple_tensor, index, size, shape, dtype, name):
    graph = tuple_tensor.graph
    out = graph.add_operation(TupleGet(index, size), [tuple_tensor], shape, dtype, name)
    if dtype == object:                 # (a carried TensorArray's list: as its node)
        out.requires_grad = tuple_tensor.requires_grad
    return out


class ZerosLike(Op):
    """Zeros of ``x``'s run-time shape: the gradient where a branch does not use an input."""

    name, differentiable, type_name = "zeros_like", False, "ZerosLike"

    def forward(self, xp, x):
        return xp.zeros_like(x)


def _zeros_like(x):
    return x.graph.add_operation(ZerosLike(), [x], x.shape, x.dtype, "zeros_like")


# ----------------------------------------------------------------------------- branches
class Branch:
    """A graph that a control-flow node runs: ``inputs`` lines up with the node's inputs
    (a placeholder of this graph, or None where the branch does not use that input),
    ``outputs`` are its results, ``effects`` the ops that run with it (assigns)."""

    def __init__(self, graph, inputs, outputs, effects=()):
        self.graph, self.inputs, self.outputs = graph, list(inputs), list(outputs)
        self.effects = list(effects)

    def runner(self, session):
        """A function from the node's input values to the outputs' values (compiled once)."""
        fed = [(i, p) for i, p in enumerate(self.inputs) if p is not None]
        plan, _ = compile_graph(self.graph, self.outputs + self.effects, [p for _, p in fed],
                                passes_of(session), values_of(session), session.config)
        n = len(self.outputs)
        fed = [(i, key) for (i, _), key in zip(fed, fed_tensors(plan))]
        run_plan = run_on_devices(plan)

        def run(values):
            return run_plan({key: values[i] for i, key in fed})[:n]
        return run

    def written_variables(self):
        found = []
        for op in self.effects:
            found += [v for v in _written(op) if all(v is not f for f in found)]
        return found

    def __repr__(self):
        return f"<branch '{self.graph.name}': {len(self.graph.get_operations())} ops>"


def _written(op):
    from .passes import written_variables
    return list(written_variables(op))


class _ControlFlowOp(Op):
    """Shared by If and While: a stateful node (it runs sub-graphs in the node's session)."""

    stateful = True
    output_class = TupleTensor

    @property
    def written_variables(self):
        found = []
        for branch in self.branches():
            found += [v for v in branch.written_variables() if all(v is not f for f in found)]
        return found

    @property
    def side_effect(self):
        """Has a branch ops that must run though nothing reads them (``eg.print``, assigns)?
        Then a traced function runs this node on every call, as it runs those ops."""
        return any(branch.effects for branch in self.branches())

    def attributes(self):
        return {b.graph.name: f"<{len(b.graph.get_operations())} ops>" for b in self.branches()}


class CondOp(_ControlFlowOp):
    """Run branch 0 if the first input is true, else branch 1, on the other inputs."""

    name, type_name = "cond", "If"

    def __init__(self, true_branch, false_branch):
        self.true_branch, self.false_branch = true_branch, false_branch

    def branches(self):
        return [self.true_branch, self.false_branch]

    def session_step(self, session, node):
        runners = {}
        branches = self.branches()

        def run(pred, *values):
            index = 0 if pred else 1
            runner = runners.get(index)
            if runner is None:
                runner = runners[index] = branches[index].runner(session)
            return tuple(runner(values))
        return run

    def backward(self, grad, out, pred, *inputs):
        """A cond over the branches' gradient graphs, fed the same predicate."""
        graph = out.graph
        present = list(grad.present)
        size = len(self.true_branch.outputs)
        _refuse_list_gradients([self.true_branch.outputs[i] for i in present], "an eg.cond")
        grad_parts = [_get(grad, i, size, self.true_branch.outputs[i].shape,
                           self.true_branch.outputs[i].dtype, "cond_grad_in") for i in present]
        wrt = [k for k, t in enumerate(inputs) if t.requires_grad and t.dtype.kind == "f"]
        grads_of = [_branch_gradient(b, present, wrt, inputs) for b in self.branches()]
        keep = [j for j in range(len(wrt)) if any(g[j] is not None for _, g in grads_of)]
        new_branches = []
        for branch, (branch_inputs, grads) in zip(self.branches(), grads_of):
            with context.building(branch.graph):
                outputs = [grads[j] if grads[j] is not None else
                           _zeros_like(branch_inputs[wrt[j]]) for j in keep]
            new_branches.append(Branch(branch.graph, branch_inputs, outputs))
        node = _tuple_node(graph, CondOp(*new_branches), [pred, *inputs, *grad_parts],
                           "cond_grad", range(len(keep)))
        result = [None] * (1 + len(inputs))
        for position, j in enumerate(keep):
            x = inputs[wrt[j]]
            result[1 + wrt[j]] = _get(node, position, len(keep), x.shape, x.dtype, "cond_grad")
        return result


def _refuse_list_gradients(carried, where):
    """A gradient arrives at a value the node carries that is a list (an eg.TensorArray's):
    the branches' gradient graphs handle tensors only, so say so rather than give None."""
    if any(t.dtype == object for t in carried):
        raise GradientError(
            f"Gradients through an eg.TensorArray carried by {where} are left out in edugraph "
            "(TF computes them). Collect the values in a Python list in an unrolled loop "
            "(for i in range(n)) and eg.stack them, or take the gradient inside the loop.")


def _branch_gradient(branch, present, wrt, inputs):
    """Add to ``branch``'s graph the gradients of its outputs at ``present`` with respect to
    the node inputs ``wrt``; returns (the gradient branch's inputs, the gradients)."""
    from .gradients import gradients
    bg = branch.graph
    branch_inputs = list(branch.inputs)
    with context.building(bg):
        for k in wrt:                           # inputs this branch ignores: fed, gradient 0
            if branch_inputs[k] is None:
                x = inputs[k]
                branch_inputs[k] = _placeholder(bg, x, "unused")
        seeds = [_placeholder(bg, branch.outputs[i], "grad") for i in present]
        grads = gradients([branch.outputs[i] for i in present],
                          [branch_inputs[k] for k in wrt], grad_ys=seeds)
    return branch_inputs + seeds, grads


def _placeholder(graph, like, name, shape=None):
    """A placeholder of ``graph`` for values like tensor ``like`` (dtype, shape, device)."""
    from .core import Placeholder
    shape = like.shape if shape is None else shape
    t = graph.add_operation(Placeholder(like.dtype, TensorShape(shape)), (), shape, like.dtype,
                            name)
    t.op._device, t.op.device = like.op._device, like.op.device
    return t


# ----------------------------------------------------------------------------- cond
def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``; in a graph, a node that decides at run
    time and runs only the chosen branch. Both branches must return the same structure of
    tensors with the same dtypes and shapes.

    >>> y = eg.cond(x > 0, lambda: x * 2, lambda: -x)
    """
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError("eg.cond(pred, true_fn, false_fn): true_fn and false_fn must be "
                        "functions of no arguments (e.g. lambda: x * 2).")
    if isinstance(pred, (bool, np.bool_)):      # decided now: just call it
        return true_fn() if pred else false_fn()
    graph = _graph_for(pred)
    if graph is None:                           # eager: plain Python
        return true_fn() if _eager_truth(pred, "eg.cond") else false_fn()
    pred = _graph_tensor(graph, pred)
    _check_predicate(pred, "eg.cond")
    name = name or "cond"
    traced = [_trace(graph, fn, f"{name}_{label}") for fn, label in
              ((true_fn, "true"), (false_fn, "false"))]
    (true_graph, true_out, true_struct), (false_graph, false_out, false_struct) = traced
    _check_same(true_struct, false_struct, true_out, false_out)
    outer = _union([true_graph, false_graph])
    branches = [Branch(g, [g.outer_captures.get(t) for t in outer], [o for o in outs
                                                                      if o is not None],
                       g.side_effects) for g, outs in ((true_graph, true_out),
                                                      (false_graph, false_out))]
    tensors = [i for i, o in enumerate(true_out) if o is not None]
    node = _tuple_node(graph, CondOp(*branches), [pred, *outer], name, range(len(tensors)),
                       any(true_out[i].dtype.kind == "f" for i in tensors))
    _note_writes(graph, node)
    parts = {}
    for position, i in enumerate(tensors):
        a, b = true_out[i], false_out[i]
        parts[i] = _get(node, position, len(tensors), _merge_shapes(a.shape, b.shape),
                        a.dtype, f"{name}_output")
    leaves = [parts.get(i) for i in range(len(true_out))]
    return _rebuild(true_struct, leaves)


def _graph_for(value):
    graph = context.state.graph
    if graph is None and isinstance(value, SymbolicTensor):
        graph = value.graph
    return graph


def _eager_truth(pred, what):
    if not isinstance(pred, Tensor):
        raise TypeError(f"{what}: the predicate must be a boolean tensor or a Python bool, "
                        f"not {type(pred).__name__}.")
    if pred.dtype != np.bool_ or pred.size != 1:
        raise TypeError(f"{what}: the predicate must be a scalar boolean tensor; got dtype "
                        f"{pred.dtype} and shape {pred.shape}. Compare to get one (x > 0), "
                        "then reduce (eg.reduce_all / eg.reduce_any) if it has many values.")
    return bool(pred.item())


def _check_predicate(pred, what):
    shape = pred.shape
    if pred.dtype != np.bool_ or (shape.rank_known and any(d != 1 for d in shape)):
        raise TypeError(f"{what}: the predicate must be a scalar boolean tensor; "
                        f"{pred.name} has dtype {pred.dtype} and shape {shape}. Compare to "
                        "get one (x > 0), then reduce (eg.reduce_all / eg.reduce_any) if it "
                        "has many values.")


def _trace(outer, fn, name, args=()):
    """Run ``fn(*args)`` into a new branch graph; returns (graph, flat outputs, structure)."""
    graph = FuncGraph(name, outer_graph=outer)
    with context.building(graph):
        result = fn(*args)
        flat = []

        def leaf(value):
            if isinstance(value, Operation):
                if value not in graph.side_effects:
                    graph.side_effects.append(value)
                flat.append(None)
            elif value is None:
                flat.append(None)
            else:
                flat.append(graph.as_tensor(value))
            return len(flat) - 1
        structure = map_structure(leaf, result)
    return graph, flat, structure


def _rebuild(structure, leaves):
    return map_structure(lambda i: leaves[i], structure)


def _shape_of_structure(structure):
    return map_structure(lambda i: "t", structure)


def _check_same(true_struct, false_struct, true_out, false_out):
    if _shape_of_structure(true_struct) != _shape_of_structure(false_struct) or \
            [o is None for o in true_out] != [o is None for o in false_out]:
        raise ValueError(
            "eg.cond: true_fn and false_fn must return the same structure, but true_fn "
            f"returned {_describe(true_struct, true_out)} and false_fn returned "
            f"{_describe(false_struct, false_out)}. Return the same nesting of tensors from "
            "both (e.g. a zero tensor where one branch has nothing to give).")
    for i, (a, b) in enumerate(zip(true_out, false_out)):
        if a is None:
            continue
        if a.dtype != b.dtype:
            raise TypeError(
                f"eg.cond: output {i} is {a.dtype} in true_fn ({a.name}) but {b.dtype} in "
                f"false_fn ({b.name}). Both branches must give the same dtype: cast one with "
                "eg.cast.")
        if a.shape.rank_known and b.shape.rank_known and not (
                len(a.shape) == len(b.shape) and all(x is None or y is None or x == y
                                                     for x, y in zip(a.shape, b.shape))):
            raise ValueError(
                f"eg.cond: output {i} has shape {a.shape} in true_fn ({a.name}) but "
                f"{b.shape} in false_fn ({b.name}). Both branches must give the same shape: "
                "reshape or broadcast one of them.")


def _describe(structure, flat):
    return str(map_structure(lambda i: "None" if flat[i] is None else
                             f"{flat[i].dtype.name}{tuple(flat[i].shape)}", structure))


def _merge_shapes(a, b):
    if not a.rank_known:
        return b
    if not b.rank_known:
        return a
    return TensorShape([x if x == y else None for x, y in zip(a, b)])


def _union(graphs):
    """The enclosing graph's tensors the branch graphs use, each once, in order."""
    found = []
    for g in graphs:
        for t in g.outer_captures:
            if all(t is not f for f in found):
                found.append(t)
    return found


def _note_writes(graph, node):
    """Variables written inside the branches are written by ``node`` (reads after it read
    again)."""
    if isinstance(graph, FuncGraph):
        for var in node.op.eg_op.written_variables:
            graph.note_write(var, node.op)


# ----------------------------------------------------------------------------- while_loop
class WhileOp(_ControlFlowOp):
    """Loop: while ``cond`` gives true (and fewer than the limit), loop vars = ``body``(vars).
    Inputs: the loop variables, the captured tensors, then the limit if there is one. The
    output tuple holds the final loop variables and, last, every step's loop variables when
    the run also computes the loop's gradient (``WhileGradOp`` reads them), else None: a loop
    nobody differentiates keeps no history, so its memory does not grow with its steps.
    ``back_prop=False`` makes it a node without gradient (gradients through it are None)."""

    name, type_name = "while_loop", "While"

    def __init__(self, cond_branch, body_branch, size, has_limit, back_prop=True):
        self.cond_branch, self.body_branch = cond_branch, body_branch
        self.size, self.has_limit, self.differentiable = size, has_limit, back_prop

    def branches(self):
        return [self.cond_branch, self.body_branch]

    def session_step(self, session, node):
        compiled = []
        size, has_limit = self.size, self.has_limit
        keeps_history = any(isinstance(op.eg_op, WhileGradOp)   # (ops this run needs)
                            for op in node.outputs[0].consumers())

        def run(*values):
            if not compiled:
                compiled.extend([self.cond_branch.runner(session),
                                 self.body_branch.runner(session)])
            test, body = compiled
            limit = values[-1] if has_limit else None
            state = list(values[:size])
            rest = list(values[size:len(values) - 1 if has_limit else None])
            history, steps = [], 0
            with _naming_a_runaway_loop(node.name, lambda: steps):
                while (limit is None or steps < limit) and test(state + rest)[0]:
                    if keeps_history:
                        history.append(state)
                    state = list(body(state + rest))
                    steps += 1
            return tuple(state) + (history if keeps_history else None,)
        return run

    def backward(self, grad, out, *inputs):
        """Run the body's gradient graph backwards over the recorded steps."""
        size = self.size
        captured = inputs[size:len(inputs) - 1 if self.has_limit else None]
        body = self.body_branch
        floats = [i for i in range(size) if body.inputs[i].dtype.kind == "f"]
        _refuse_list_gradients([body.inputs[i] for i in grad.present if i < size],
                               "an eg.while_loop")
        wrt = [k for k, t in enumerate(captured) if t.requires_grad and t.dtype.kind == "f"]
        from .gradients import gradients
        bg = body.graph
        branch_inputs = list(body.inputs)
        with context.building(bg):
            for k in wrt:
                if branch_inputs[size + k] is None:
                    x = captured[k]
                    branch_inputs[size + k] = _placeholder(bg, x, "unused")
            seeds = [_placeholder(bg, body.inputs[i], "grad") for i in floats]
            xs = [branch_inputs[i] for i in floats] + [branch_inputs[size + k] for k in wrt]
            grads = gradients([body.outputs[i] for i in floats], xs, grad_ys=seeds)
            grads = [g if g is not None else _zeros_like(x) for g, x in zip(grads, xs)]
        grad_body = Branch(bg, branch_inputs[:size + len(captured)] + seeds, grads)
        present = [i for i in grad.present if i in floats]
        parts = [_get(grad, i, size + 1, body.inputs[i].shape, body.inputs[i].dtype,
                      "while_grad_in") for i in present]
        n_out = len(floats) + len(wrt)
        node = _tuple_node(out.graph, WhileGradOp(grad_body, size, floats, present, wrt),
                           [out, *parts, *captured], "while_grad", range(n_out))
        result = [None] * len(inputs)
        targets = [(i, inputs[i]) for i in floats] + [(size + k, captured[k]) for k in wrt]
        for position, (i, x) in enumerate(targets):
            if x.requires_grad:
                result[i] = _get(node, position, n_out, x.shape, x.dtype, "while_grad")
        return result


class WhileGradOp(Op):
    """The gradient of a while loop: from the last step back to the first, the body's gradient
    graph turns the loop variables' gradients after a step into those before it, and adds up
    the captured tensors' gradients over the steps."""

    name, type_name, stateful, output_class = "while_loop_grad", "WhileGrad", True, TupleTensor

    def __init__(self, grad_body, size, floats, present, wrt):
        self.grad_body, self.size, self.floats = grad_body, size, floats
        self.present, self.wrt = present, wrt

    def session_step(self, session, node):
        compiled = []
        xp = node._device.xp
        floats, present, size = self.floats, self.present, self.size
        n_present = len(present)

        def run(forward, *values):
            if not compiled:
                compiled.append(self.grad_body.runner(session))
            step = compiled[0]
            given = dict(zip(present, values[:n_present]))
            captured = list(values[n_present:])
            grads = [given[i] if i in given else xp.zeros_like(forward[i]) for i in floats]
            totals = None
            for state in reversed(forward[size]):
                results = step(state + captured + grads)
                grads, cap = list(results[:len(floats)]), results[len(floats):]
                totals = list(cap) if totals is None else [a + b for a, b in zip(totals, cap)]
            if totals is None:                  # no step ran: the captured tensors get 0
                totals = [xp.zeros_like(captured[k]) for k in self.wrt]
            return tuple(grads) + tuple(totals)
        return run

    def backward(self, grad, out, *inputs):
        raise GradientError("Second derivatives through eg.while_loop are not supported: "
                            "differentiate the loop once, or unroll it in Python.")


def while_loop(cond, body, loop_vars, shape_invariants=None, parallel_iterations=10,
               back_prop=True, swap_memory=False, maximum_iterations=None, name=None,
               return_same_structure=False):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` is true (TF1).

    In a graph the loop runs when the graph runs, as many times as the values say. The body
    must give back loop variables of the same structure, dtypes and shapes.

    >>> i, x = eg.while_loop(lambda i, x: i < n, lambda i, x: (i + 1, x * w), [0, x0])

    ``maximum_iterations=N`` stops after N iterations at most, even if ``cond`` is still
    true: a cap for a loop whose end depends on values (a convergence test). A loop that never
    ends (a body that does not move towards making ``cond`` false) runs until you interrupt
    it: Ctrl-C, or the stop button (interrupt the kernel) in Jupyter; the KeyboardInterrupt
    then says how many iterations ran. To differentiate the loop, each iteration's values
    are kept; with ``back_prop=False`` (no gradient through the loop, as in TF), or when no
    gradient is asked for, nothing is kept, so memory does not grow with the iterations.
    """
    single = not isinstance(loop_vars, (list, tuple))
    loop_vars = [loop_vars] if single else loop_vars
    graph = _graph_for(next((v for v in _flat(loop_vars) if isinstance(v, SymbolicTensor)),
                            None))
    name = name or "while"
    if graph is None:
        with contextlib.nullcontext() if back_prop else context.no_grad():
            result = _eager_loop(cond, body, list(loop_vars), maximum_iterations, name)
    else:
        result = _graph_loop(graph, cond, body, loop_vars, maximum_iterations, name, back_prop)
    if single:
        return result[0]
    if not return_same_structure and len(result) == 1:
        return result[0]
    return type(loop_vars)(result) if not hasattr(loop_vars, "_fields") else \
        type(loop_vars)(*result)


def _flat(values):
    out = []
    map_structure(out.append, list(values))
    return out


def _as_list(result, n):
    if n == 1 and not isinstance(result, (list, tuple)):
        return [result]
    return list(result)


def _eager_loop(cond, body, state, limit, name):
    steps = 0
    with _naming_a_runaway_loop(name, lambda: steps):
        while (limit is None or steps < int(limit)) and _eager_truth_or_bool(cond(*state)):
            state = _as_list(body(*state), len(state))
            steps += 1
    return state


@contextlib.contextmanager
def _naming_a_runaway_loop(name, steps):
    """A loop stopped by Ctrl-C (or Jupyter's stop button) says which loop, after how many
    iterations, and how to cap it: a loop that never ends is the usual reason to stop one."""
    try:
        yield
    except KeyboardInterrupt as stop:
        stop.add_note(f"eg.while_loop '{name}' was interrupted after {steps()} iterations with "
                      "its cond still true. If it never ends, check that the body moves the "
                      "loop variables towards making cond false (i + 1, not i), and pass "
                      "maximum_iterations=N to stop after N iterations at most.")
        raise


def _eager_truth_or_bool(value):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    return _eager_truth(value, "eg.while_loop cond")


def _graph_loop(graph, cond, body, loop_vars, limit, name, back_prop):
    from .tensor_array import carried, uncarried    # (tensor_array.py imports this module)
    given = list(loop_vars)
    structure = map_structure(carried, given)       # a TensorArray travels as its list tensor
    flat = [_graph_tensor(graph, v) for v in _flat(structure)]
    index = iter(range(len(flat)))
    layout = map_structure(lambda v: next(index), structure)

    def as_args(graph_):
        placeholders = [_placeholder(graph_, t, f"loop_var_{i}") for i, t in enumerate(flat)]
        return placeholders, uncarried(given, _rebuild(layout, placeholders))

    cond_graph = FuncGraph(f"{name}_cond", outer_graph=graph)
    with context.building(cond_graph):
        cond_in, args = as_args(cond_graph)
        pred = cond(*args)
        if isinstance(pred, (bool, np.bool_)) or not isinstance(pred, Tensor):
            raise TypeError(f"eg.while_loop: cond must return a boolean tensor built from the "
                            f"loop variables, not {pred!r}.")
        pred = cond_graph.as_tensor(pred)
    _check_predicate(pred, "eg.while_loop cond")

    body_graph = FuncGraph(f"{name}_body", outer_graph=graph)
    with context.building(body_graph):
        body_in, args = as_args(body_graph)
        result = body(*args)
        result = _as_list(result, len(loop_vars))
        if len(result) != len(loop_vars) or _shape_of_structure(
                map_structure(lambda v: 0, list(result))) != _shape_of_structure(layout):
            raise ValueError(f"eg.while_loop: body must return the loop variables' structure "
                             f"{_shape_of_structure(layout)}, but returned "
                             f"{_shape_of_structure(map_structure(lambda v: 0, list(result)))}."
                             " Return one new value per loop variable.")
        body_out = [body_graph.as_tensor(v) for v in _flat(map_structure(carried, result))]
    for i, (before, after) in enumerate(zip(flat, body_out)):
        if before.dtype != after.dtype or (after.shape.rank_known and before.shape.rank_known
                                           and not before.shape.is_compatible_with(
                                               after.shape)):
            raise ValueError(
                f"eg.while_loop: loop variable {i} enters the loop as {before.dtype.name} "
                f"{before.shape} but the body returns {after.dtype.name} {after.shape}. A loop "
                "variable must keep its dtype and shape from step to step: cast or reshape "
                "the body's result.")
    outer = _union([cond_graph, body_graph])
    inputs = flat + outer
    if limit is not None:
        inputs.append(_graph_tensor(graph, limit))
    cond_branch = Branch(cond_graph, cond_in + [cond_graph.outer_captures.get(t)
                                                for t in outer], [pred])
    body_branch = Branch(body_graph, body_in + [body_graph.outer_captures.get(t)
                                                for t in outer], body_out,
                         body_graph.side_effects)
    node = _tuple_node(graph, WhileOp(cond_branch, body_branch, len(flat), limit is not None,
                                      back_prop),
                       inputs, name, range(len(flat)),
                       back_prop and any(t.dtype.kind == "f" or (t.dtype == object and
                                                                 t.requires_grad)
                                         for t in flat))   # (a float TensorArray's list)
    _note_writes(graph, node)
    outs = [_get(node, i, len(flat) + 1, t.shape, t.dtype, f"{name}_output")
            for i, t in enumerate(flat)]
    return uncarried(result, _as_list(_rebuild(layout, outs), len(loop_vars)))
