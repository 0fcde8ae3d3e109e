"""Graph ops with state: they read or write what a Session holds, so the Session binds them.

A pure op computes ``forward(xp, *arrays)`` from its inputs alone. These ops also need the
session: a variable's value lives in each Session, an assign writes it, a captured eager tensor
is read when the graph runs. Each gives the Session a ``session_step(session, node)``: the
function to call for that node in that session.
"""
from ..context import note_in_place_change
from ..errors import FailedPreconditionError
from ..ops.base import Op


class ReadVariable(Op):
    """A graph variable's current value in the running session (TF's ``VariableV2``)."""

    name, differentiable, stateful, type_name = "variable", False, True, "VariableV2"

    def __init__(self, variable):
        self._variable = variable

    def session_step(self, session, node):
        values, var = session._variables, self._variable

        def read():
            try:
                return values[var]
            except KeyError:
                raise FailedPreconditionError(
                    f"Attempting to use uninitialized value {var.op.name}\n\t [[node "
                    f"{var.op.name}]] Run its initializer first: "
                    "sess.run(eg.global_variables_initializer()).", node) from None
        return read


class Assign(Op):
    """Write a new value into a variable (``assign``, ``assign_add``, ``assign_sub``)."""

    name, differentiable, stateful = "assign", False, True

    def __init__(self, variable, mode):
        self._variable, self.mode = variable, mode
        self.type_name = {"assign": "Assign", "add": "AssignAdd", "sub": "AssignSub"}[mode]

    def session_step(self, session, node):
        values, var, mode = session._variables, self._variable, self.mode
        read = ReadVariable(var).session_step(session, node)

        def assign(value):
            if mode == "assign":
                stored = values.get(var)
                if stored is None or stored.shape != value.shape:
                    values[var] = value.copy()      # the variable owns its value
                else:
                    stored[...] = value             # in place: earlier fetches of var see it
            elif mode == "add":
                read()[...] += value
            else:
                read()[...] -= value
            if var.graph is None:                   # an eager Variable's own storage
                note_in_place_change(var)
            return values[var]
        return assign


class Capture(Op):
    """An eager tensor or Variable used inside a graph: read when the graph runs, so a traced
    function sees a Variable's current value (TF2 captures by reference)."""

    name, differentiable, stateful, type_name = "capture", False, True, "Placeholder"

    def __init__(self, tensor):
        self._tensor = tensor

    def session_step(self, session, node):
        tensor = self._tensor
        return lambda: tensor._value


def capture(graph, tensor):
    """The graph node reading eager ``tensor`` (one per tensor per graph)."""
    captured = graph._captures.get(id(tensor))
    if captured is None or captured[0] is not tensor:
        node = graph.add_operation(Capture(tensor), (), tensor.shape, tensor.dtype,
                                   tensor.name or "Capture")
        node.requires_grad = tensor.requires_grad
        node.op._device = node.device = tensor.device
        graph._captures[id(tensor)] = captured = (tensor, node)
    return captured[1]
