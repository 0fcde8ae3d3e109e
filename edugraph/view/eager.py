"""A view of an eager result: follow ``_op`` / ``_inputs`` back from it, as ``backward()`` does.

Node ids follow that walk's order (inputs in argument order), so they depend only on the
structure of the computation, never on ``id()``.
"""
from ..autodiff import _version_at
from ..errors import GradientError
from ..variable import Variable
from .model import Edge, GraphView, Node
from .numbers import number


def _from_eager(output, names, title):
    """Follow ``_op`` / ``_inputs`` back from ``output``; ids follow that walk's order."""
    given = {id(t): name for name, t in names.items()}
    order = _post_order(output)
    counters = {}
    nodes, edges, ops, arrays, devices = [], [], {}, {}, {}
    ids = {}
    for t in order:
        node_id = ids[t] = f"n{len(nodes)}"
        used = _inputs_as_used(t)
        inputs = [ids[i] for i in used]
        if t._op is not None:
            kind, label = "op", t._op.name
            ops[node_id] = t._op
        else:
            kind = "variable" if isinstance(t, Variable) else \
                "input" if t.requires_grad else "constant"
            label = given.get(id(t)) or t.name or _default_label(kind, t, counters)
        scope = label.rpartition("/")[0] if kind != "op" else ""
        nodes.append(Node(
            id=node_id, label=label, kind=kind, op=t._op.name if t._op else None, scope=scope,
            inputs=inputs, shape=tuple(t.shape), dtype=str(t.dtype), device=t.device.name,
            gate=getattr(t._op, "gate", None), requires_grad=t.requires_grad,
            attrs=t._op.attributes() if t._op is not None else {}))
        arrays[node_id], devices[node_id] = t._value, t.device
        for index, i in enumerate(inputs):
            edges.append(Edge(id=f"e{len(edges)}", source=i, target=node_id, index=index,
                              shape=tuple(used[index].shape)))
    return GraphView(nodes, edges, ids[output], title=title, ops=ops, arrays=arrays,
                     devices=devices)




def _default_label(kind, t, counters):
    if kind == "constant" and t.size == 1:
        return number(t.numpy().reshape(-1)[0])
    n = counters[kind] = counters.get(kind, -1) + 1
    return kind if n == 0 else f"{kind}_{n}"


def _post_order(output):
    """Every tensor ``output`` was computed from, each after its inputs (inputs in argument
    order, so the order depends only on the structure of the computation)."""
    order, done = [], set()
    stack = [(output, False)]
    while stack:
        t, expanded = stack.pop()
        if t in done:
            continue
        if expanded or t._op is None:
            done.add(t)
            order.append(t)
            continue
        stack.append((t, True))
        stack.extend((i, False) for i in reversed(_inputs_as_used(t)) if i not in done)
    return order


def _inputs_as_used(t):
    """The inputs of the op that made ``t``, as that op used them, as the engine reads them
    (``autodiff._as_recorded``): a tensor changed in place since, with the change recorded
    (``a += 1`` while gradients are on), is the version before; one whose values were written
    over (an optimizer step, ``c += 10`` on a constant) cannot be shown, since its new values
    beside results computed from the old ones would be a wrong picture."""
    if t._op is None:
        return []
    used = [_version_at(i, t._seq) for i in t._inputs]
    for i in used:
        if getattr(i, "_changed_at", 0) > t._seq:
            what = f"'{i.name}'" if i.name else f"an input of shape {tuple(i.shape)}"
            raise GradientError(
                f"graph_view: the values of {what} were changed in place (an optimizer step, "
                f"assign, x -= ..., x[...] = ...) after {t._op.name} used them, so the view "
                "would show the new values beside results computed from the old ones. Draw "
                "the graph before changing them, or compute it again.")
    return used
