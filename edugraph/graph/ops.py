"""Graph ops with state: they read or write what a Session holds, so the Session binds them.

A pure op computes ``forward(xp, *arrays)`` from its inputs alone. These ops also need the
session: a variable's value lives in each Session, an assign writes it, a captured eager tensor
is read when the graph runs. Each gives the Session a ``session_step(session, node)``: the
function to call for that node in that session.
"""
import numbers

from ..context import note_in_place_change
from ..errors import FailedPreconditionError, InvalidArgumentError
from ..ops.base import Op
from ..variable import shape_mismatch
from .shapes import TensorShape


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
                raise uninitialized(var, node, "Run its initializer first: "
                                    "sess.run(eg.global_variables_initializer()).") from None
        return read


class InitializedValue(Op):
    """A graph variable's value, or its initial value (the input) while this session has
    none (TF1's ``initialized_value()``): what other variables' initial values read."""

    name, differentiable, stateful, type_name = "initialized_value", False, True, \
        "InitializedValue"

    def __init__(self, variable):
        self._variable = variable

    def session_step(self, session, node):
        values, var = session._variables, self._variable

        def read(initial):          # (a copy: the new variable must not share the storage)
            return values[var].copy() if var in values else initial
        return read


def uninitialized(var, node, what_to_do):
    """TF1's error for a read of graph variable ``var`` (at ``node``) before it has a value."""
    return FailedPreconditionError(f"Attempting to use uninitialized value {var.op.name}\n\t "
                                   f"[[node {var.op.name}]] {what_to_do}", node)


def check_assigned(name, dtype, shape, value, given, mode):
    """The checks of an assign node being built, as TF makes them: ``value``, the graph tensor
    made of ``given``, must have the variable's dtype and a shape compatible with its
    ``shape`` (a single number too: ``given`` then shows in the message's fix)."""
    if value.dtype != dtype:
        raise TypeError(f"{mode} to variable '{name}' ({dtype}) needs a {dtype} value, not "
                        f"{value.dtype}; cast it with eg.cast.")
    if value.shape.rank_known and not TensorShape(shape).is_compatible_with(value.shape):
        number = given if isinstance(given, numbers.Number) else None
        raise ValueError(shape_mismatch(name, shape, value.shape, mode, number))


class Assign(Op):
    """Write a new value into a variable (``assign``, ``assign_add``, ``assign_sub``).

    As TF's ``validate_shape``, the value must have the variable's shape, checked when it runs
    (a placeholder's shape may be unknown until then): no broadcasting, and no new shape for
    the variable. Only the graph passes write ``w.assign(w - d)`` as ``w.assign_sub(d)``, with
    a ``d`` that broadcasts (``validate_shape=False``: they checked ``w - d``'s shape)."""

    name, differentiable, stateful = "assign", False, True

    def __init__(self, variable, mode, validate_shape=True):
        self._variable, self.mode, self.validate_shape = variable, mode, validate_shape
        self.type_name = {"assign": "Assign", "add": "AssignAdd", "sub": "AssignSub"}[mode]

    def session_step(self, session, node):
        values, var, mode = session._variables, self._variable, self.mode
        read = ReadVariable(var).session_step(session, node)
        shape = TensorShape(var.shape)              # (a graph variable's may be partly unknown)

        def refuse(value):
            name = var.name if var.graph is None else var.op.name
            return InvalidArgumentError(f"{shape_mismatch(name, shape, value.shape, mode)}\n"
                                        f"\t [[node {node.name}]]", node)

        def assign(value):
            if mode == "assign":
                stored = values.get(var)
                if stored is None or stored.shape != value.shape:
                    if self.validate_shape and not shape.is_compatible_with(value.shape):
                        raise refuse(value)
                    values[var] = value.copy()      # the variable owns its value
                else:
                    stored[...] = value             # in place: earlier fetches of var see it
            else:
                stored = read()
                if self.validate_shape and stored.shape != value.shape:
                    raise refuse(value)
                if mode == "add":
                    stored[...] += value
                else:
                    stored[...] -= value
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
