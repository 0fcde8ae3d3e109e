"""Graph optimisation passes: each takes a graph and its outputs and returns a new, better graph.

Sessions and traced functions run ``optimize(...)``'s result, never the graph as written:

* ``prune``: keep only what the outputs need (why an unfetched ``assign`` never runs);
* ``fold_constants``: compute now whatever depends on constants only — with the shapes known,
  gradient seeds (ones) and their broadcasts become constants — and drop ``x * 1``, ``x + 0``;
* ``eliminate_common_subexpressions``: the same op on the same inputs is computed once;
* ``fuse_elementwise``: a chain of elementwise ops becomes one step that reuses one buffer;
* ``update_in_place``: ``w.assign(w - d)`` becomes ``w.assign_sub(d)`` (numpy's ``w -= d``).

Each pass can be switched off (``eg.function(..., passes=[...])``) and each intermediate graph
is a normal ``Graph``: the inspector can draw the graph before and after.
"""
import numpy as np

from ..ops import activation, base, math, random, shape as shape_ops
from ..ops.base import Op
from ..variable import Variable
from .core import Const, Graph, Operation, Placeholder, SymbolicTensor, upstream_ops
from .ops import Assign, Capture, ReadVariable


def rewrite(graph, outputs, visit=None, keep=None):
    """Copy ``graph``'s ops for which ``keep(op)`` holds into a new Graph, in order.
    ``visit(op, inputs, new_graph, mapping)`` may return a replacement for the op's output
    (or the op), or None to copy it; ``mapping`` takes old tensors and ops to new ones."""
    new = Graph()
    mapping = {}
    for op in graph.get_operations():
        if keep is not None and not keep(op):
            continue
        inputs = [mapping.get(t) for t in op.inputs]
        replacement = visit(op, inputs, new, mapping) if visit is not None else None
        if replacement is None:
            replacement = _copy(op, inputs, new, mapping)
        if isinstance(replacement, Operation):
            mapping[op] = replacement
        else:
            mapping[op] = replacement.op
            if op.outputs:
                mapping[op.outputs[0]] = replacement
    return new, [mapping[o] for o in outputs]


def _copy(op, inputs, new, mapping):
    out = op.outputs[0] if op.outputs else None
    controls = [mapping[c] for c in op.control_inputs if c in mapping]
    result = new.add_operation(op.eg_op, inputs, out.shape if out is not None else None,
                               out.dtype if out is not None else None, op.name, controls)
    node = result if isinstance(result, Operation) else result.op
    node._device, node.device = op._device, op.device
    if out is not None:
        result.requires_grad = out.requires_grad      # (a cond's tuple sets its own)
    if hasattr(op, "_exec_inputs"):
        node._exec_inputs = tuple(mapping[t] for t in op._exec_inputs)
    return result


def _is_pure(op):
    return not getattr(op.eg_op, "stateful", False) and not isinstance(op.eg_op, random.RandomOp)


# ----------------------------------------------------------------------------- prune
def prune(graph, outputs, feeds=()):
    """Only the ops that ``outputs`` (tensors or ops) need; fed tensors become placeholders."""
    fed = set(feeds)
    needed = needed_ops(outputs, fed)

    def visit(op, inputs, new, mapping):
        if op.outputs and op.outputs[0] in fed:
            t = op.outputs[0]
            fed_here = new.add_operation(Placeholder(t.dtype, t.shape), (), t.shape, t.dtype,
                                         op.name)
            fed_here.op._device, fed_here.op.device = op._device, op.device   # fed there
            return fed_here
        return None

    return rewrite(graph, outputs, visit, keep=_closed(needed, fed).__contains__)


def needed_ops(outputs, fed):
    """The ops that must run for ``outputs`` (tensors or ops): backwards over the inputs each
    op executes and its control inputs, stopping at fed tensors."""
    return upstream_ops([o if isinstance(o, Operation) else o.op for o in outputs], fed,
                        _executed_inputs)


def _executed_inputs(op):
    return [t.op for t in getattr(op, "_exec_inputs", op.inputs)] + list(op.control_inputs)


def _closed(needed, fed):
    """``needed`` plus every input of a kept op (so edges can be copied), fed or not."""
    return upstream_ops(needed, fed)


# ----------------------------------------------------------------------------- fold constants
_SHAPE_ONLY = (base.BroadcastLike, base.SumToShapeOf, shape_ops.ReshapeLike)


def fold_constants(graph, outputs):
    """Ops on constants become constants; ``x * 1`` and ``x + 0`` become ``x``."""
    from .gradients import OnesLike

    def value(t):
        return t.op.eg_op.value if isinstance(t.op.eg_op, Const) else None

    def visit(op, inputs, new, mapping):
        if not op.outputs or not _is_pure(op) or op.control_inputs:
            return None             # (control inputs must still run when its output is used)
        out = op.outputs[0]
        eg_op = op.eg_op
        if isinstance(eg_op, OnesLike) and out.shape.is_fully_defined():
            return _const(new, np.ones(out.shape, out.dtype), op)
        values = [value(t) for t in inputs]
        if isinstance(eg_op, _SHAPE_ONLY) and len(inputs) == 2 and values[0] is not None and \
                inputs[1].shape.is_fully_defined():
            values[1] = np.empty(inputs[1].shape, inputs[1].dtype)   # only its shape is read
        if all(v is not None for v in values):
            return _const(new, np.asarray(eg_op.forward(np, *values)), op)
        identity = _identity_of(eg_op, inputs, values, out)
        if identity is None and type(eg_op) in _BINARY:
            scalars = _uniform_as_scalars(inputs, values, out, new, op)
            if scalars is not None:
                return _copy(op, scalars, new, mapping)
        return identity

    # what a folded op read (and the 1 of ``x * 1``) is left without consumers: drop it
    return prune(*rewrite(graph, outputs, visit))


def _uniform_as_scalars(inputs, values, out, graph, op):
    """The inputs with each constant whose elements are all equal (a broadcast seed such as
    ``ones((64, 1000)) / 64`` in a gradient) replaced by one number, where the other input has
    the result's shape anyway: the same values, without reading a whole array of copies."""
    changed = list(inputs)
    for i, v in enumerate(values):
        other = inputs[1 - i]
        if v is not None and v.ndim and v.size > 1 and other.shape == out.shape and \
                out.shape.is_fully_defined() and (v == v.flat[0]).all():
            changed[i] = _const(graph, np.array(v.flat[0]), inputs[i].op)
    return changed if any(c is not t for c, t in zip(changed, inputs)) else None


def _const(graph, array, op):
    array.flags.writeable = False           # shared by every run: nobody may change it
    t = graph.add_operation(Const(array), (), array.shape, array.dtype, op.name)
    t.op._device, t.op.device = op._device, op.device
    return t


_BINARY = (math.Add, math.Subtract, math.Multiply, math.Divide, math.Maximum, math.Minimum)


def _identity_of(eg_op, inputs, values, out):
    """``x * 1``, ``1 * x``, ``x + 0``, ``0 + x``, ``x - 0``, ``x / 1`` → ``x`` (same shape)."""
    unit = {math.Multiply: 1, math.Divide: 1, math.Add: 0, math.Subtract: 0}.get(type(eg_op))
    if unit is None:
        return None
    sides = (0, 1) if isinstance(eg_op, (math.Multiply, math.Add)) else (0,)
    for keep in sides:
        other = values[1 - keep]
        x = inputs[keep]
        if other is not None and x.shape == out.shape and x.dtype == out.dtype and \
                out.shape.is_fully_defined() and np.all(other == unit):
            return x
    return None


# ----------------------------------------------------------------------------- CSE
def eliminate_common_subexpressions(graph, outputs):
    """Identical pure ops on identical inputs are computed once."""
    seen = {}

    def visit(op, inputs, new, mapping):
        if not op.outputs or not _is_pure(op):
            return None
        key = _signature(op, inputs)
        if key is None:
            return None
        if key not in seen:
            seen[key] = _copy(op, inputs, new, mapping)
        return seen[key]

    return rewrite(graph, outputs, visit)


def _signature(op, inputs):
    if op.control_inputs:
        return None
    attrs = op.eg_op.attributes()
    if isinstance(op.eg_op, Const):
        array = op.eg_op.value
        if array.size > 64:
            return None
        attrs = (array.dtype.str, array.shape, array.tobytes())
    try:
        # (the name too: it alone tells apart ops of one class that show no attributes,
        # x < y and x > y are both a Compare)
        return (type(op.eg_op), op.eg_op.name,
                repr(attrs) if not isinstance(attrs, tuple) else attrs,
                tuple(id(t) for t in inputs), op.device)
    except Exception:
        return None


# ----------------------------------------------------------------------------- fusion
_UFUNCS = {math.Add: "add", math.Subtract: "subtract", math.Multiply: "multiply",
           math.Divide: "true_divide", math.Maximum: "maximum", math.Minimum: "minimum",
           math.Negative: "negative", math.Square: "square", math.Sqrt: "sqrt",
           math.Exp: "exp", math.Log: "log", math.Abs: "absolute", activation.Tanh: "tanh"}


def _ufunc_of(eg_op):
    if isinstance(eg_op, math.Compare):
        return eg_op.ufunc
    if isinstance(eg_op, activation.Relu):
        return "relu"
    if isinstance(eg_op, math.Cast):
        return "cast"
    return _UFUNCS.get(type(eg_op))


class FusedElementwise(Op):
    """Several elementwise ops as one step: each writes into a temporary that dies there, so
    a chain of n ops allocates one array instead of n (less memory traffic than numpy)."""

    name = "fused"

    def __init__(self, program, labels):
        # [(ufunc, dtype, args, reuse, shape)]: args are ("in", i) or ("tmp", j) references;
        # ``reuse`` is the position of a temporary argument to write the result into
        self.program = program
        self.labels = labels            # the fused ops' names, for the inspector

    def forward(self, xp, *inputs):
        temps = []
        for ufunc, dtype, args, reuse, _ in self.program:
            values = [inputs[i] if kind == "in" else temps[i] for kind, i in args]
            out = temps[args[reuse][1]] if reuse is not None else None
            if ufunc == "cast":
                result = values[0].astype(dtype)
            elif ufunc == "relu":
                result = xp.maximum(values[0], 0, out=out)
            else:
                result = getattr(xp, ufunc)(*values, out=out)
            temps.append(result)
        return temps[-1]

    def attributes(self):
        return {"ops": self.labels}


def fuse_elementwise(graph, outputs):
    """Merge each elementwise op into its only consumer when that is elementwise too."""
    consumers = {}
    for op in graph.get_operations():
        for t in op.inputs:
            consumers.setdefault(t, []).append(op)
        for c in op.control_inputs:
            consumers.setdefault(c, []).append(op)
    output_set = {o for o in outputs}

    def fusable(op):
        return op.outputs and _is_pure(op) and _ufunc_of(op.eg_op) is not None and \
            not op.control_inputs

    def absorbed(op):
        """Is ``op`` computed inside its consumer's fused step?"""
        out = op.outputs[0] if op.outputs else None
        users = consumers.get(out, [])
        return fusable(op) and out not in output_set and op not in consumers and \
            len(users) == 1 and fusable(users[0]) and users[0].device == op.device and \
            sum(t is out for t in users[0].inputs) == 1

    def visit(op, inputs, new, mapping):
        if not fusable(op) or not any(absorbed(t.op) for t in op.inputs):
            return None
        program, ext, labels = [], [], []
        _build(op, program, ext, labels, absorbed)
        out = op.outputs[0]
        t = new.add_operation(FusedElementwise(program, labels), [mapping[x] for x in ext],
                              out.shape, out.dtype, op.name)
        t.op._device, t.op.device = op._device, op.device
        return t

    return rewrite(graph, outputs, visit, keep=lambda op: not absorbed(op))


def _build(op, program, ext, labels, absorbed):
    """Append ``op``'s sub-expression to ``program``, inputs first (left to right); returns the
    temp index of its result. An explicit stack, not recursion: a traced chain of 10 000 adds
    fuses into one step too."""
    temp_of = {}                        # absorbed op → the temp index of its result
    stack = [(op, False)]
    while stack:
        node, inputs_done = stack.pop()
        if not inputs_done:
            stack.append((node, True))
            stack.extend((t.op, False) for t in reversed(node.inputs) if absorbed(t.op))
            continue
        args, out = [], node.outputs[0]
        for t in node.inputs:
            if absorbed(t.op):
                args.append(("tmp", temp_of[t.op]))
                continue
            index = next((i for i, e in enumerate(ext) if e is t), None)
            if index is None:          # (tensors compare elementwise with ==: match by identity)
                index = len(ext)
                ext.append(t)
            args.append(("in", index))
        reuse = None
        for position, (kind, index) in enumerate(args):
            source = program[index] if kind == "tmp" else None
            if source is not None and source[4] == out.shape and source[1] == out.dtype and \
                    out.shape.is_fully_defined() and len(out.shape) and \
                    _ufunc_of(node.eg_op) != "cast":
                # (0-d results are numpy scalars, not arrays: nothing to write into)
                reuse = position        # the temporary dies here: write the result into it
                break
        labels.append(node.name)
        program.append((_ufunc_of(node.eg_op), out.dtype, tuple(args), reuse, out.shape))
        temp_of[node] = len(program) - 1
    return temp_of[op]


# ----------------------------------------------------------------------------- updates in place
def update_in_place(graph, outputs):
    """``w.assign(w - d)`` becomes ``w.assign_sub(d)``, ``w.assign(w + d)`` ``assign_add``.

    Every optimizer's update has this form. As written it computes ``w - d`` into a new array
    and then copies that over ``w``; rewritten, the session subtracts ``d`` where ``w`` lies,
    like ``w -= d`` in numpy: one pass over ``w`` instead of two, and no new array. Only when
    the difference is used by that assign alone and nothing else in the graph writes ``w``
    (so it makes no difference when ``w`` is read).
    """
    consumers, writers = {}, {}
    for op in graph.get_operations():
        for t in op.inputs:
            consumers.setdefault(t, []).append(op)
        if isinstance(op.eg_op, Assign):
            writers[op.eg_op._variable] = writers.get(op.eg_op._variable, 0) + 1
    fetched = set(outputs)                      # (a set: tensors compare elementwise with ==)
    rewritten = {}                              # assign op → (mode, delta tensor, dead op)
    for op in graph.get_operations():
        if isinstance(op.eg_op, Assign) and op.eg_op.mode == "assign" and \
                writers[op.eg_op._variable] == 1:
            var, value = op.inputs
            found = _update_of(var, value)
            if found and consumers[value] == [op] and value not in fetched and \
                    value.shape == var.shape and var.shape.is_fully_defined() and \
                    value.dtype == var.dtype and not value.op.control_inputs:
                rewritten[op] = found + (value.op,)
    dead = {entry[2] for entry in rewritten.values()}

    def visit(op, inputs, new, mapping):
        if op not in rewritten:
            return None
        mode, delta, _ = rewritten[op]
        out = op.outputs[0]
        result = new.add_operation(Assign(op.eg_op._variable, mode, validate_shape=False),
                                   (inputs[0], mapping[delta]), out.shape, out.dtype, op.name,
                                   [mapping[c] for c in op.control_inputs if c in mapping])
        result.op._device, result.op.device = op._device, op.device
        result.op._exec_inputs = (mapping[delta],)
        return result

    return rewrite(graph, outputs, visit, keep=lambda op: op not in dead)


def _update_of(var, value):
    """("sub", d) for ``value = var - d``, ("add", d) for ``var + d`` or ``d + var``."""
    eg_op, inputs = value.op.eg_op, value.op.inputs
    if type(eg_op) is math.Subtract and inputs[0] is var and inputs[1] is not var:
        return "sub", inputs[1]
    if type(eg_op) is math.Add and (inputs[0] is var) != (inputs[1] is var):
        return "add", inputs[1] if inputs[0] is var else inputs[0]
    return None


DEFAULT_PASSES = (fold_constants, eliminate_common_subexpressions, update_in_place,
                  fuse_elementwise)


def optimize(graph, outputs, passes=DEFAULT_PASSES):
    """Run ``passes`` in order; returns the final graph and its outputs."""
    for optimization in passes:
        graph, outputs = optimization(graph, outputs)
    return graph, outputs


# ----------------------------------------------------------------------------- reads and writes
def protect_reads(graph, outputs):
    """Make reads of a variable that is written later copy it, where their value is needed
    after the write. Every plan (a Session's, a traced function's) runs this last.

    Writes happen in place (``w -= d``, as numpy would), and a read hands out the variable's
    own array. That is right for every read used before the write; a read (or a view of it)
    used after the write, or returned, must keep the old value, so that read copies. (An
    optimisation can move a use after the write: with ``1 * b`` folded to ``b``, the gradient
    of ``a * b`` with respect to ``a`` *is* the read of ``b``, and ``b``'s update, built
    after ``a``'s, must not see ``a`` already updated.) A use that waits for the write on
    purpose (``with eg.control_dependencies([assign]): eg.identity(v)``) reads the new value:
    only uses that do not depend on the write make the read copy."""
    ops = graph.get_operations()
    position = {op: i for i, op in enumerate(ops)}
    writes = {}
    for op in ops:
        for var in written_variables(op):
            writes.setdefault(id(var), []).append(position[op])
    if not writes:
        return
    consumers = {}
    for op in ops:
        for t in getattr(op, "_exec_inputs", op.inputs):
            consumers.setdefault(t, []).append(op)
    returned = set(t for t in outputs if isinstance(t, SymbolicTensor))
    for op in ops:
        var = _read_of(op)
        if var is None or id(var) not in writes:
            continue
        later = [p for p in writes[id(var)] if p > position[op]]
        if later and _used_after(op.outputs[0], ops[later[0]], consumers, position, returned):
            op.eg_op = _copying(op.eg_op)


def written_variables(op):
    if isinstance(op.eg_op, Assign):
        return [op.eg_op._variable]
    return getattr(op.eg_op, "written_variables", None) or ()


def _read_of(op):
    """The variable whose storage ``op``'s output may be (a read, or an assign's result)."""
    if isinstance(op.eg_op, ReadVariable):
        return op.eg_op._variable
    if isinstance(op.eg_op, Capture) and isinstance(op.eg_op._tensor, Variable):
        return op.eg_op._tensor
    if isinstance(op.eg_op, Assign):
        return op.eg_op._variable
    return None


def reads_a_variable(fetched):
    """Is ``fetched`` (a tensor or an op) a variable's read, or an assign's result?"""
    return isinstance(fetched, SymbolicTensor) and _read_of(fetched.op) is not None


def _used_after(tensor, write, consumers, position, returned):
    """Is ``tensor`` (or a view of it) returned, or used after ``write`` by an op that does not
    wait for it?"""
    stack, seen = [tensor], set()
    while stack:
        t = stack.pop()
        if t in returned:
            return True
        for user in consumers.get(t, ()):
            if position[user] > position[write]:
                if write in upstream_ops([user], inputs_of=_executed_inputs):
                    continue                # it waits for the write: it wants the new value
                return True
            if user.outputs and not _fresh(user) and user.outputs[0] not in seen:
                seen.add(user.outputs[0])
                stack.append(user.outputs[0])
    return False


def _fresh(op):
    """Does ``op`` always return a new array (never a view of an input)?"""
    return _ufunc_of(op.eg_op) is not None or isinstance(op.eg_op, FusedElementwise) or \
        op.type in _FRESH_TYPES


_FRESH_TYPES = {"MatMul", "Sum", "Mean", "Max", "Min", "Sigmoid", "Softmax", "LogSoftmax",
                "Conv2D", "Pow"}


class _CopyingReadVariable(ReadVariable):
    """A graph variable's read that copies: its value must outlive a later in-place write."""

    def session_step(self, session, node):
        read = super().session_step(session, node)
        return lambda: read().copy()


class _CopyingRead(Capture):
    """A Capture that copies: its value must outlive a later in-place write."""

    def session_step(self, session, node):
        tensor = self._tensor
        return lambda: tensor._value.copy()


class _CopyingAssign(Assign):
    """An Assign whose result is a copy of the new value (the variable changes again later)."""

    def session_step(self, session, node):
        write = super().session_step(session, node)
        return lambda value: write(value).copy()


def _copying(eg_op):
    if isinstance(eg_op, (_CopyingReadVariable, _CopyingRead, _CopyingAssign)):
        return eg_op
    if isinstance(eg_op, ReadVariable):
        return _CopyingReadVariable(eg_op._variable)
    if isinstance(eg_op, Capture):
        return _CopyingRead(eg_op._tensor)
    return _CopyingAssign(eg_op._variable, eg_op.mode, eg_op.validate_shape)
