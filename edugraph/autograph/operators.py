"""What converted code calls (``ag__``): each statement is decided when it runs, while tracing.

A condition (or a loop's iterable) that is a Python value runs as plain Python: the branch
function is called, or the body function in a Python loop (the slide's "static Python loop,
not converted", which the trace unrolls). A tensor, while a graph is being built, has no value
yet, so the statement becomes a node: ``eg.cond`` or ``eg.while_loop``, which trace both
branches (or the body once) and decide when the graph runs.
"""
from .. import context
from ..graph.control_flow import cond, while_loop
from ..graph.core import SymbolicTensor, constant
from ..graph.tensor_array import carried, uncarried
from ..nest import flatten, map_structure
from ..ops.math import greater, less, logical_and, logical_not, logical_or
from ..ops.shape import gather
from ..tensor import Tensor

__all__ = ["Undefined", "check_defined", "if_stmt", "if_exp", "while_stmt", "for_stmt", "and_",
           "or_", "not_", "python_only"]


class Undefined:
    """The value of a name that has none yet: it is first set inside a converted statement
    (as a Python local before its first assignment). Using it raises."""

    __slots__ = ("name", "why")

    def __init__(self, name, why=None):
        self.name, self.why = name, why

    def _refuse(self, *args, **kwargs):
        raise NameError(self.why or f"'{self.name}' is used before it has a value (as in "
                                    "Python, it is set later, or on a path that did not run).")

    def __repr__(self):
        return f"Undefined({self.name!r})"


for _method in ("__getattr__", "__bool__", "__call__", "__iter__", "__len__", "__getitem__",
                "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                "__truediv__", "__rtruediv__", "__matmul__", "__neg__", "__lt__", "__le__",
                "__gt__", "__ge__", "__index__", "__float__", "__int__"):
    setattr(Undefined, _method, Undefined._refuse)


def _is_tensor(value):
    """Must this condition or iterable become graph control flow? Only a tensor while a
    graph is being built (an eager tensor there is read when the graph runs)."""
    return isinstance(value, Tensor) and (context.state.graph is not None or
                                          isinstance(value, SymbolicTensor))


def check_defined(result):
    """A traced function's result must not hold a name that has no value (one set only in a
    graph loop): say which, as Python would say when it is used."""
    for leaf in flatten(result):
        if isinstance(leaf, Undefined):
            leaf._refuse()


# ----------------------------------------------------------------------------- if
def if_stmt(test, if_body, else_body, state=(), changes=()):
    """``if test:``. The branch functions take the variables the statement changes and give
    them back (or give the function's return value, for an ``if`` that returns)."""
    if not _is_tensor(test):
        return if_body(*state) if test else else_body(*state)
    if changes:
        raise TypeError(
            f"An `if` on a tensor sets {', '.join(changes)}: eg.cond traces both branches, so "
            "both would change the object while tracing. Assign to a local variable in the "
            f"branches and set {changes[0]} after the `if`, or keep the value in an "
            "eg.Variable and assign() it.")
    traced = []

    def branch(fn):
        def run():
            out = fn(*state)
            traced.append(out)
            if len(traced) == 2:
                _check_both_set(*traced, test)
            return map_structure(_packed, out)
        return run
    result = cond(test, branch(if_body), branch(else_body))
    return _unpacked(traced[0], result)


def _check_both_set(first, second, test):
    for a, b in zip(flatten(first), flatten(second)):
        if isinstance(a, Undefined) != isinstance(b, Undefined):
            name = (a if isinstance(a, Undefined) else b).name
            raise ValueError(
                f"'{name}' is set in only one branch of an `if` on a tensor ({test.name}). "
                "The graph's cond must give it a value either way: set it in both branches, "
                "or before the `if`.")


def if_exp(test, if_true, if_false):
    """``a if test else b``."""
    if not _is_tensor(test):
        return if_true() if test else if_false()
    return cond(test, if_true, if_false)


def and_(*operands):
    """``a and b``: on tensors, ``eg.logical_and`` (both sides are computed)."""
    value = operands[0]()
    for operand in operands[1:]:
        if _is_tensor(value):
            value = logical_and(value, operand())
        elif not value:
            return value
        else:
            value = operand()
    return value


def or_(*operands):
    """``a or b``: on tensors, ``eg.logical_or``."""
    value = operands[0]()
    for operand in operands[1:]:
        if _is_tensor(value):
            value = logical_or(value, operand())
        elif value:
            return value
        else:
            value = operand()
    return value


def not_(value):
    return logical_not(value) if _is_tensor(value) else not value


def python_only(value, what):
    """A condition or iterable of a statement left as Python (see ``transformer.py``)."""
    if _is_tensor(value):
        raise TypeError(
            f"eg.function's AutoGraph does not convert {what}, and here it depends on the "
            f"tensor {value.name}. Rewrite it without the break/continue/return (a flag "
            "variable in the loop condition), or write eg.while_loop / eg.cond yourself.")
    return value


# ----------------------------------------------------------------------------- loops
def while_stmt(loop_test, loop_body, state, names):
    """``while test:``. A tensor test makes an ``eg.while_loop`` over the variables the body
    changes; a Python one runs the loop here (unrolled into the graph being traced)."""
    first = _probe(loop_test, state)
    if not _is_tensor(first):
        test = first
        while test:
            state = loop_body(*state)
            test = loop_test(*state)
            if _is_tensor(test):
                raise TypeError(
                    f"A `while` loop's condition was a Python value and became a tensor "
                    f"({test.name}) after a step. Make it a tensor from the start (e.g. "
                    "i = eg.constant(0)), so that the whole loop is a graph loop.")
        return state
    return _graph_loop(loop_test, lambda values: loop_body(*values), state, names, [])


def for_stmt(iterable, loop_body, state, names):
    """``for x in iterable:``. Over a tensor (``eg.range(n)`` included) a graph loop over its
    rows; over anything else a Python loop, unrolled into the graph being traced."""
    if not _is_tensor(iterable):
        for item in iterable:
            state = loop_body(item, *state)
        return state
    start, limit, step, item = _rows(iterable)

    def test(i, *values):
        if isinstance(step, int):               # the step's sign is known: one comparison
            return less(i, limit) if step > 0 else greater(i, limit)
        return logical_or(logical_and(greater(step, 0), less(i, limit)),
                          logical_and(less(step, 0), greater(i, limit)))

    def body(values):
        i = values[0]
        return (i + step,) + tuple(loop_body(item(i), *values[1:]))
    final = _graph_loop(test, body, (start,) + tuple(state), ("(iteration)",) + tuple(names),
                        [0])
    return final[1:]


def _rows(iterable):
    """(start, limit, step, the item at an index) for a loop over a tensor's rows. For
    ``eg.range`` the numbers are computed, not read from a tensor of them; a constant step
    is a Python int."""
    graph = context.state.graph
    if isinstance(iterable, SymbolicTensor) and iterable.op.type == "Range":
        start, limit, step = iterable.op.inputs
        if step.op.type == "Const":
            step = int(step.op.eg_op.value)
        return start, limit, step, lambda i: i
    from ..graph.function import _graph_tensor
    from ..ops.sequence import shape
    rows = _graph_tensor(graph, iterable)
    n = rows.shape[0] if rows.shape.rank_known and rows.shape[0] is not None else \
        shape(rows)[0]
    return constant(0), n, 1, lambda i: gather(rows, i)


def _probe(loop_test, state):
    """The loop condition's first value, computed in a scratch graph when a graph is being
    built: a Python value decides now, a tensor says "graph loop" (and the scratch graph,
    which nothing runs, is dropped: eg.while_loop traces the condition again)."""
    graph = context.state.graph
    if graph is None:
        return loop_test(*state)
    from ..graph.function import FuncGraph
    with context.building(FuncGraph("probe", outer_graph=graph)):
        return loop_test(*state)


def _graph_loop(test, body, state, names, always):
    """``eg.while_loop`` over the values of ``state`` that are defined (positions in
    ``always`` are carried anyway); the others stay Undefined after the loop."""
    carried = [i for i, v in enumerate(state) if i in always or not isinstance(v, Undefined)]
    loop_vars = [map_structure(_packed, state[i]) for i in carried]
    loop_vars = [constant(v) if not isinstance(v, (Tensor, list, tuple, dict)) else v
                 for v in loop_vars]
    outputs = []

    def full(values):
        values = list(values)
        return tuple(_unpacked(state[i], values[carried.index(i)]) if i in carried
                     else state[i] for i in range(len(state)))

    def loop_test(*values):
        return test(*full(values))

    def loop_body(*values):
        out = tuple(body(full(values)))
        for i in carried:
            if isinstance(out[i], Undefined):
                raise ValueError(f"'{names[i]}' has no value after a step of a loop on a "
                                 "tensor; give it one in every step.")
        outputs[:] = out
        return [map_structure(_packed, out[i]) for i in carried]
    try:
        result = while_loop(loop_test, loop_body, loop_vars, return_same_structure=True)
    except (TypeError, ValueError) as e:
        e.add_note("(The loop's variables, in order: " +
                   ", ".join(repr(names[i]) for i in carried) + ".)")
        raise
    after = []
    for i in range(len(state)):
        if i in carried:
            after.append(_unpacked(outputs[i], result[carried.index(i)]))
        else:
            after.append(Undefined(names[i], f"'{names[i]}' is set only inside a loop on a "
                                             "tensor (a graph loop), so it has no value after "
                                             "the loop: give it a value before the loop."))
    return tuple(after)


# ----------------------------------------------------------------------------- values
def _packed(value):
    """A value as a graph control-flow node can carry it (a TensorArray as its list tensor),
    an Undefined as nothing."""
    return None if isinstance(value, Undefined) else carried(value)


def _unpacked(template, value):
    """The inverse of ``_packed``: ``template`` is the value the node was given (or, for a
    loop's result, what the body returned); an Undefined stays undefined."""
    return uncarried(template, value, _undefined_stays)


def _undefined_stays(template, value):
    return template if isinstance(template, Undefined) else value
