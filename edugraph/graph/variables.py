"""Graph variables: state that persists across ``Session.run`` calls — but only in a Session.

``w = eg.Variable(eg.random_normal((D, H)))`` in a graph adds a variable node ``w`` and an
initializer ``w/Assign``. Each Session keeps its own value for ``w``; until the initializer has
run there, reading ``w`` fails (TF1: ``FailedPreconditionError: Attempting to use uninitialized
value w``). ``w.assign(...)`` only *builds* an assign node: it changes nothing until it is run.
"""
from .. import context, variable as _variable
from ..tensor import Tensor
from .core import SymbolicTensor, get_default_graph, group, constant, upstream_ops
from .function import FuncGraph, graph_assign
from .ops import Assign, InitializedValue, ReadVariable, check_assigned

GLOBAL_VARIABLES, TRAINABLE_VARIABLES = "variables", "trainable_variables"
UPDATE_OPS = "update_ops"           # batch norm's moving-average assigns, run with the train op


class GraphKeys:
    """TF1's names of the standard collections: ``eg.get_collection(eg.GraphKeys.UPDATE_OPS)``."""

    GLOBAL_VARIABLES, TRAINABLE_VARIABLES, UPDATE_OPS = \
        GLOBAL_VARIABLES, TRAINABLE_VARIABLES, UPDATE_OPS


def get_collection(key, scope=None):
    """The default graph's collection ``key`` (``tf.get_collection``), optionally only the
    items whose names match ``scope``."""
    return get_default_graph().get_collection(key, scope)


def add_to_collection(name, value):
    get_default_graph().add_to_collection(name, value)


class GraphVariable(SymbolicTensor, _variable.Variable):
    """``eg.Variable(...)`` inside a graph: a node whose value lives in each Session."""

    def __init__(self, initial_value, trainable=True, name=None, dtype=None):
        graph = get_default_graph()
        if callable(initial_value):
            initial_value = initial_value()
        with graph.control_dependencies(None):      # initial values never wait for others
            node = graph.add_operation(ReadVariable(self), (), None, None, name or "Variable")
            with graph.name_scope(node.name + "/"):
                if not isinstance(initial_value, SymbolicTensor):
                    initial_value = constant(initial_value, dtype=dtype, name="initial_value")
                else:
                    initial_value = _reading_initialized_values(initial_value)
                    if dtype is not None and initial_value.dtype != dtype:
                        from ..ops.math import cast
                        initial_value = cast(initial_value, dtype)
        super().__init__(node, 0, initial_value.shape, initial_value.dtype)
        node.outputs.append(self)
        self.trainable = trainable
        self.requires_grad = trainable and self.dtype.kind == "f"
        self.initial_value = initial_value
        with graph.name_scope(node.name + "/"), graph.control_dependencies(None):
            self.initializer = self._assign_node(initial_value, "assign", "Assign").op
        graph.add_to_collection(GLOBAL_VARIABLES, self)
        if trainable:
            graph.add_to_collection(TRAINABLE_VARIABLES, self)

    def _assign_node(self, value, mode, name):
        building = context.state.graph
        if building is not self.graph and isinstance(building, FuncGraph):
            # a branch of eg.cond / eg.while_loop: the assign belongs to the branch, which
            # runs it only when the branch runs (in this graph it would run every time)
            return graph_assign(self, value, mode, name)
        given = value
        if not isinstance(value, Tensor) or value.graph is None:
            value = constant(value, dtype=self.dtype)
        check_assigned(self.op.name, self.dtype, self.shape, value, given, mode)
        out = self.graph.add_operation(Assign(self, mode), (self, value), self.shape,
                                       self.dtype, name)
        out.op._exec_inputs = (value,)          # runs without reading the old value first
        return out

    def assign(self, value, use_locking=False, name=None, read_value=True):
        """A node that writes ``value`` into the variable when it runs (returns the new value)."""
        return self._assign_node(value, "assign", name or "Assign")

    def assign_add(self, delta, use_locking=False, name=None, read_value=True):
        return self._assign_node(delta, "add", name or "AssignAdd")

    def assign_sub(self, delta, use_locking=False, name=None, read_value=True):
        return self._assign_node(delta, "sub", name or "AssignSub")

    def value(self):
        return self

    def initialized_value(self):
        """The variable's value, or its initial value while it has none (TF1's): another
        variable's initial value can read it before its initializer has run."""
        with self.graph.name_scope(self.op.name + "/"), self.graph.control_dependencies(None):
            return self.graph.add_operation(InitializedValue(self), [self.initial_value],
                                            self.shape, self.dtype, "InitializedValue")

    def read_value(self):
        """The value read here: an Identity node built where this is called, so that under
        ``eg.control_dependencies([assign])`` it reads after the assign (TF1's read_value;
        ``value()`` is the variable's own node, which waits for nothing)."""
        from ..ops.shape import identity
        return identity(self)

    def load(self, value, session=None):
        """Write ``value`` into the variable in ``session`` at once (TF1's ``Variable.load``).
        As TF does it: run the initializer with ``value`` fed in place of the initial value,
        so a value of another shape gets the feed's error."""
        from .session import default_session
        if session is None:
            try:
                session = default_session(self.graph)
            except ValueError:
                raise ValueError(f"{self.op.name}.load(value, session): give the session, or "
                                 "call it inside `with eg.Session() as sess:`.") from None
        session.run(self.initializer, {self.initializer.inputs[1]: value})

    def __repr__(self):
        return f"<eg.Variable '{self.name}' shape={self.shape} dtype={self.dtype.name}>"

    __str__ = __repr__              # print(w), as TF1 prints it (not as a plain graph tensor)
    __hash__ = object.__hash__


_variable._graph_variable_class = GraphVariable


def assign(ref, value, name=None):
    """``tf.assign(ref, value)``: ``ref.assign(value)`` written as a function (TF1)."""
    return _check_variable(ref, "assign").assign(value, name=name)


def assign_add(ref, value, name=None):
    return _check_variable(ref, "assign_add").assign_add(value, name=name)


def assign_sub(ref, value, name=None):
    return _check_variable(ref, "assign_sub").assign_sub(value, name=name)


def _check_variable(ref, what):
    if not isinstance(ref, _variable.Variable):
        raise TypeError(f"{what} writes into a Variable, but got {type(ref).__name__} "
                        f"{ref!r}. Make it with eg.Variable(...).")
    return ref


def global_variables(scope=None):
    """Every variable of the default graph, in creation order."""
    return get_default_graph().get_collection(GLOBAL_VARIABLES, scope)


def trainable_variables(scope=None):
    """The variables an optimizer updates by default."""
    return get_default_graph().get_collection(TRAINABLE_VARIABLES, scope)


def _reading_initialized_values(value):
    """``value`` rebuilt so that where it reads other variables it reads their
    ``initialized_value()``, as TF1 rebuilds every initial value: ``V = eg.Variable(W * 2)``
    then needs no initializer run before V's (one run of both, or V's alone, works). The ops
    between the reads and ``value`` are copied (in the new variable's name scope); where one
    cannot be (several outputs, state), ``value`` stays as it was."""
    reads, to_copy, changed = [], [], set()
    for op in sorted(upstream_ops([value.op]), key=lambda op: op._id):
        if isinstance(op.eg_op, ReadVariable):
            reads.append(op)
        elif any(t.op in changed for t in op.inputs):
            if len(op.outputs) != 1 or getattr(op.eg_op, "stateful", False):
                return value
            to_copy.append(op)
        else:
            continue
        changed.add(op)
    if not reads:
        return value
    copied = {op.outputs[0]: op.eg_op._variable.initialized_value() for op in reads}
    for op in to_copy:
        out = op.outputs[0]
        copied[out] = value.graph.add_operation(
            op.eg_op, [copied.get(t, t) for t in op.inputs], out.shape, out.dtype,
            op.name.split("/")[-1])
    return copied[value]


def variables_initializer(var_list, name="init"):
    """One op that runs the initializers of ``var_list``. (Marked as such, so that a Session
    can say why a variable made after it is still uninitialised.)"""
    if isinstance(var_list, Tensor):            # iterating over W would give its rows
        raise TypeError(f"variables_initializer takes a list of Variables, e.g. "
                        f"eg.variables_initializer([W]), not {_what(var_list)} alone.")
    var_list = list(var_list)
    for item in var_list:
        if not isinstance(item, GraphVariable):
            raise TypeError(f"variables_initializer takes a list of Variables, e.g. "
                            f"eg.variables_initializer([W]), but got {_what(item)} in it: only "
                            "Variables have initializers.")
    init = group(*[v.initializer for v in var_list], name=name)
    init.initializes_variables = True
    return init


def _what(item):
    """``item`` in words, for a message."""
    if isinstance(item, GraphVariable):
        return f"the Variable '{item.op.name}'"
    if isinstance(item, Tensor):
        return f"the tensor '{item.name}' (computed, not a Variable)"
    return f"a {type(item).__name__}, {item!r}"


def global_variables_initializer():
    """One op that runs the initializer of every variable that exists *now* (``sess.run(init)``):
    make it after all of them."""
    return variables_initializer(global_variables())


initialize_all_variables = global_variables_initializer
