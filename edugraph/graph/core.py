"""The graph: operations (nodes) and the symbolic tensors (edges) between them, as in TF1.

Inside ``with eg.Graph().as_default():`` (or after ``eg.disable_eager_execution()``) the usual
ops do not compute: ``apply`` hands them to ``Graph.create_op``, which checks the inputs, works
out the output's static shape, names the node (``Add``, ``Add_1``, ``layer1/MatMul``) and
returns a ``SymbolicTensor`` — a handle that a ``Session`` can later evaluate.
"""
import contextlib
import re

import numpy as np

from .. import context, devices
from ..errors import NoValueError, NotFoundError, ShapeError
from ..ops.base import Op, _float_dtype_error, number_reference, promote_integers
from ..ops.shape import Identity
from ..tensor import Tensor, _numbers_kind, as_dtype, dtype_next_to, tf_dtype
from .shapes import TensorShape, infer

# TF's op type names for our op classes where they differ from the class name
_TYPE_NAMES = {"Subtract": "Sub", "Multiply": "Mul", "Divide": "RealDiv", "Negative": "Neg",
               "Where": "SelectV2", "Clip": "ClipByValue", "Concat": "ConcatV2",
               "Stack": "Pack", "GetItem": "StridedSlice", "Gather": "GatherV2",
               "RandomNormal": "RandomStandardNormal", "LogSumExp": "ReduceLogSumExp",
               "SumToShapeOf": "SumToShape", "BroadcastLike": "BroadcastTo",
               "ReshapeLike": "Reshape"}
# TF1 spells dtypes this way in error messages ("with dtype float and shape [3,4]")
_TF_DTYPE_NAMES = {"float32": "float", "float64": "double"}


def op_type(op):
    """The TF type name of an Op instance: ``Add``, ``MatMul``, ``Less``..."""
    explicit = getattr(op, "type_name", None)
    if explicit:
        return explicit
    name = type(op).__name__
    if name == "Compare":                       # one class, many comparisons: less → Less
        return "".join(part.title() for part in op.name.split("_"))
    return _TYPE_NAMES.get(name, name)


def tf_dtype_name(dtype):
    return _TF_DTYPE_NAMES.get(np.dtype(dtype).name, np.dtype(dtype).name)


class SymbolicTensor(Tensor):
    """One output of an Operation: a shape and dtype now, a value only inside ``Session.run``."""

    def __init__(self, op, index, shape, dtype):
        self._value = None
        self.device = op._device
        self.requires_grad = dtype.kind == "f" and op.type != "Const"
        self._grad = self._op = self._inputs = None
        self._seq, self._retain = 0, False
        self.op, self.value_index, self.graph = op, index, op.graph
        self._shape, self._dtype = shape, dtype
        self.name = f"{op.name}:{index}"

    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        return self._dtype

    @property
    def size(self):
        return int(np.prod(self._shape)) if self._shape.is_fully_defined() else None

    def get_shape(self):
        return self._shape

    def set_shape(self, shape):
        shape = TensorShape(shape)
        if shape.rank_known and not self._shape.is_compatible_with(shape):
            raise ValueError(f"Shapes {self._shape} and {shape} are incompatible")
        if shape.rank_known:
            self._shape = shape

    def consumers(self):
        """The operations that take this tensor as an input, in creation order."""
        return [op for op in self.graph.get_operations() if any(t is self for t in op.inputs)]

    def eval(self, feed_dict=None, session=None):
        """``t.eval()`` = ``session.run(t)`` in the default session (TF1)."""
        from .session import default_session
        return (session or default_session(self.graph)).run(self, feed_dict)

    def numpy(self):
        raise NoValueError(self._no_value())

    def item(self):                     # (also int(t) and float(t))
        raise NotImplementedError(self._no_value())

    def __array__(self, dtype=None, copy=None):     # np.array(t), np.mean(t)...: as in TF
        raise NotImplementedError(self._no_value())

    def _no_value(self):
        return (f"{self.name} is a symbolic tensor: it has no value until "
                f"{self.graph.where_values_are}.")

    def __repr__(self):
        return f'Tensor("{self.name}", shape={self._shape}, dtype={self._dtype.name})'

    __str__ = __repr__

    def __bool__(self):
        raise TypeError("Using a `eg.Tensor` as a Python `bool` is not allowed in graph "
                        f"execution ({self.name}): it has no value while the graph is built. "
                        "Use eg.cond(pred, true_fn, false_fn) for a tensor-dependent `if` and "
                        "eg.while_loop(cond, body, loop_vars) for a `while`. (eg.function "
                        "rewrites `if`/`while`/`for` on tensors into these itself, as TF's "
                        "AutoGraph does, but not with autograph=False, and, unlike TF's, only "
                        "in the function it decorates: decorate a function it calls with "
                        "eg.function too. A TF1 graph has no AutoGraph.)")

    def __iter__(self):
        raise TypeError(f"Iterating over the symbolic tensor {self.name} is not allowed in "
                        "graph execution; index it (t[0]) or use eg.while_loop.")

    def __len__(self):
        if not self._shape.rank_known or not self._shape or self._shape[0] is None:
            raise TypeError(f"len() of {self.name} is unknown while building the graph "
                            f"(shape {self._shape}).")
        return self._shape[0]

    __hash__ = object.__hash__


class Operation:
    """A node: an Op (``eg_op``) applied to input tensors, producing ``outputs``."""

    def __init__(self, graph, eg_op, name, inputs, control_inputs, device):
        self.graph, self.eg_op, self.name = graph, eg_op, name
        self.type = op_type(eg_op)
        self.inputs = tuple(inputs)
        self.control_inputs = tuple(control_inputs)
        self._device = device
        self.device = "" if device is None else f"/device:{device.kind.upper()}:{device.index}"
        if device is None:
            self._device = devices.cpu
        self.outputs = []
        self._id = len(graph._operations)

    @property
    def attrs(self):
        """The op's non-tensor arguments (axis, keepdims...), for the inspector."""
        return self.eg_op.attributes()

    def values(self):
        return tuple(self.outputs)

    def run(self, feed_dict=None, session=None):
        from .session import default_session
        (session or default_session(self.graph)).run(self, feed_dict)

    def __repr__(self):
        return f"<eg.Operation '{self.name}' type={self.type}>"


class Graph:
    """A TF1 computation graph: ``with eg.Graph().as_default(): ...`` builds into it."""

    places_when_run = True      # a device it asks for is checked by the Session (soft placement)
    where_values_are = ("a Session runs it. Use sess.run(t) (or t.eval() inside "
                        "`with eg.Session():`)")

    def __init__(self):
        self._operations = []
        self._by_name = {}
        self._name_counts = {}
        self._scope = ""
        self._control_stack = []
        self._finalized = False
        self._collections = {}
        self._captures = {}
        self.version = 0

    @property
    def code_era(self):
        """Which TensorFlow the code building this graph is written for, where a name means
        different things (``tf.nn.dropout``'s second argument): "tf1" (Graph and Session
        code), or None while an ``eg.function``'s body, TF2 code, is inlined into it."""
        return None if context.state.inlined_functions else "tf1"

    # ------------------------------------------------------------------ building
    def as_default(self):
        """New ops go into this graph inside the ``with`` block."""
        return context.building(self)

    def create_op(self, op, args, name=None):
        """Add ``op`` applied to ``args`` (tensors, numbers, arrays) and return its output."""
        ref = number_reference(args)
        inputs = promote_integers(op, [self._as_graph_tensor(a, ref, op) for a in args])
        floats = {t.dtype for t in inputs if t.dtype.kind == "f"}
        if len(floats) > 1:
            _float_dtype_error(op, inputs)
        try:
            shape, dtype = infer(op, inputs)
        except ShapeError as e:
            raise ShapeError(f"{self._scope}{op_type(op)}: {e}") from None
        return self.add_operation(op, inputs, shape, dtype, name)

    def add_operation(self, op, inputs, shape, dtype, name=None, control_inputs=()):
        """Record a node with one output of the given static shape; returns that output.
        Every node comes in here (ops, constants, placeholders, variables), so this is where a
        finalized graph refuses new ones."""
        if self._finalized:
            raise RuntimeError(
                f"Graph is finalized and cannot be modified: cannot add "
                f"'{self._scope}{name or op_type(op)}' ({op_type(op)}). Build every op, "
                "constant and variable before graph.finalize(); a training loop after it "
                "must only sess.run what already exists (make new ops once, before it).")
        controls = list(control_inputs)
        for deps in self._control_stack:
            controls += [d for d in deps if d not in controls]
        node = Operation(self, op, self.unique_name(name or op_type(op)), inputs, controls,
                         devices._scope.stack[-1] if devices._scope.stack else None)
        self._operations.append(node)
        self._by_name[node.name] = node
        self.version += 1
        if shape is not None:
            node.outputs.append(self._output_class(op)(node, 0, TensorShape(shape),
                                                      np.dtype(dtype)))
        return node.outputs[0] if node.outputs else node

    @staticmethod
    def _output_class(op):
        return getattr(op, "output_class", SymbolicTensor)

    def _as_graph_tensor(self, value, ref, op):
        if isinstance(value, SymbolicTensor):
            if value.graph is not self:
                raise ValueError(
                    f"{op_type(op)}: Tensor {value.name} must be from the same graph as the "
                    "other inputs. Build everything inside one `with graph.as_default():`.")
            return value
        if isinstance(value, Tensor):           # an eager tensor or Variable: read at run time
            from .ops import capture
            return capture(self, value)
        return constant(value, dtype=_constant_dtype(value, ref), graph=self)

    def unique_name(self, name, mark_as_used=True):
        """``name`` inside the current scope, made unique with ``_1``, ``_2``... as TF does."""
        name = self._scope + name
        key = name.lower()
        count = self._name_counts.get(key, 0)
        if mark_as_used:
            self._name_counts[key] = count + 1
        if count == 0:
            return name
        base = key
        while key in self._name_counts:
            key = f"{base}_{count}"
            count += 1
        if mark_as_used:
            self._name_counts[key] = 1
        return f"{name}_{count - 1}"

    @contextlib.contextmanager
    def name_scope(self, name):
        """Prefix names of ops created inside with ``name/`` (made unique: ``layer``, ``layer_1``)."""
        previous = self._scope
        if name is None or name == "":
            self._scope = ""
        elif name.endswith("/"):
            self._scope = name
        else:
            self._scope = self.unique_name(name) + "/"
        try:
            yield self._scope
        finally:
            self._scope = previous

    def get_name_scope(self):
        return self._scope.rstrip("/")

    @contextlib.contextmanager
    def control_dependencies(self, control_inputs):
        """Ops created inside run only after ``control_inputs`` (ops or tensors) have run."""
        if control_inputs is None:
            saved, self._control_stack = self._control_stack, []
        else:
            saved = None
            self._control_stack.append(
                [c if isinstance(c, Operation) else self.as_graph_element(c).op
                 for c in control_inputs])
        try:
            yield
        finally:
            if saved is None:
                self._control_stack.pop()
            else:
                self._control_stack = saved

    def device(self, spec):
        return devices.device(spec)

    def finalize(self):
        """Make the graph read-only: adding an op afterwards raises (catches graph growth bugs)."""
        self._finalized = True

    @property
    def finalized(self):
        return self._finalized

    # ------------------------------------------------------------------ reading (inspector API)
    def get_operations(self):
        """All operations in creation order (a topological order)."""
        return list(self._operations)

    def get_operation_by_name(self, name):
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"The name '{name}' refers to an Operation not in the graph.") \
                from None

    def get_tensor_by_name(self, name):
        match = re.fullmatch(r"(.+):(\d+)", name)
        if not match:
            raise ValueError(f"The name '{name}' looks like an Operation name, not a Tensor "
                             f"name; tensor names look like '{name}:0'.")
        op = self._by_name.get(match[1])
        if op is None or int(match[2]) >= len(op.outputs):
            raise KeyError(f"The name '{name}' refers to a Tensor which does not exist. The "
                           f"operation, '{match[1]}', does not exist in the graph."
                           if op is None else f"The name '{name}' refers to a Tensor which "
                           f"does not exist: '{match[1]}' has {len(op.outputs)} outputs.")
        return op.outputs[int(match[2])]

    def as_graph_element(self, obj):
        """A tensor, an operation, or a name of one ('x:0' or 'train') → that graph element."""
        if isinstance(obj, str):
            return self.get_tensor_by_name(obj) if ":" in obj else \
                self.get_operation_by_name(obj)
        if isinstance(obj, (SymbolicTensor, Operation)):
            if obj.graph is not self:
                raise ValueError(f"{obj.name} is not an element of this graph.")
            return obj
        raise TypeError(f"Can not convert a {type(obj).__name__} into a Tensor or Operation.")

    def add_to_collection(self, name, value):
        self._collections.setdefault(name, []).append(value)

    def get_collection(self, name, scope=None):
        items = self._collections.get(name, [])
        if scope:
            items = [i for i in items if re.match(scope, getattr(i, "op", i).name)]
        return list(items)

    def as_graph_def(self):
        """This graph as TF's ``GraphDef`` message, which TensorBoard draws (graph_def.py)."""
        from .graph_def import as_graph_def
        return as_graph_def(self)

    def __repr__(self):
        return f"<eg.Graph with {len(self._operations)} operations>"


# ----------------------------------------------------------------------- graph-only ops
class Placeholder(Op):
    """A value the caller feeds into ``Session.run`` (``feed_dict``)."""

    name, differentiable, stateful = "placeholder", False, True

    def __init__(self, dtype, shape):
        self.dtype, self.shape = dtype, shape

    def session_step(self, session, node):
        t = node.outputs[0]
        dims = "" if not t.shape.rank_known else " and shape [" + ",".join(
            "?" if d is None else str(d) for d in t.shape) + "]"
        from ..errors import InvalidArgumentError
        raise InvalidArgumentError(
            f"You must feed a value for placeholder tensor '{node.name}' with dtype "
            f"{tf_dtype_name(t.dtype)}{dims}\n\t [[node {node.name}]] Feed it: "
            f"sess.run(..., feed_dict={{{node.name}: value}}).", node)


class PlaceholderWithDefault(Identity):
    """Its input, unless a value is fed for it (a Session's plan replaces fed tensors before
    any graph pass, so folding the default into a constant is harmless)."""

    name = "placeholder_with_default"


class Const(Op):
    """A value fixed when the graph is built."""

    name, differentiable = "const", False

    def __init__(self, value):
        self.value = value

    def forward(self, xp):
        return xp.asarray(self.value)

    def attributes(self):
        return {"value": self.value if self.value.size <= 16 else f"<{self.value.shape} array>"}


class NoOp(Op):
    """Does nothing; with control inputs it makes others run (``eg.group``)."""

    name, differentiable = "no_op", False


# ----------------------------------------------------------------------- the default graph
_default_graph = Graph()
_eager = [True]


def get_default_graph():
    """The graph new ops go into: the innermost ``as_default`` one, else the global default."""
    return context.state.graph or _default_graph


def reset_default_graph():
    """Start a fresh global default graph (TF1; not allowed inside ``as_default``)."""
    global _default_graph
    if context.state.graph is not None and context.state.graph is not _default_graph:
        raise AssertionError("Do not use eg.reset_default_graph() inside a "
                             "`with graph.as_default():` block.")
    _default_graph = Graph()
    if not _eager[0]:
        context.set_static_default(_default_graph)


def executing_eagerly():
    """True when ops compute at once (not building a graph)."""
    return context.state.graph is None


def disable_eager_execution():
    """TF1 mode: every op builds into the default graph; run it with a Session."""
    _eager[0] = False
    context.set_static_default(_default_graph)


def enable_eager_execution():
    """Back to eager (the default): ops compute at once."""
    _eager[0] = True
    context.set_static_default(None)


def _graph_or_error(what):
    graph = context.state.graph
    if graph is None:
        raise RuntimeError(f"eg.{what}() is not compatible with eager execution. Build a graph "
                           "first: `with eg.Graph().as_default():` or call "
                           "eg.disable_eager_execution().")
    return graph


def placeholder(dtype, shape=None, name=None):
    """A tensor to be fed at run time: ``eg.placeholder(eg.float32, shape=(None, 3))``."""
    graph = _graph_or_error("placeholder")
    if dtype is None or isinstance(dtype, (tuple, list)):   # numpy reads (None, 3) as a dtype
        raise TypeError(f"placeholder(dtype, shape): the first argument is the dtype, not "
                        f"{dtype!r}; e.g. eg.placeholder(eg.float32, shape=(None, 3)).")
    dtype, shape = as_dtype(dtype), TensorShape(shape)
    return graph.add_operation(Placeholder(dtype, shape), (), shape, dtype,
                               name or "Placeholder")


def placeholder_with_default(input, shape, name=None):
    """``input`` unless fed (``tf.placeholder_with_default``): TF1's
    ``is_training = eg.placeholder_with_default(False, shape=())``, fed True to train.
    ``input`` may also be a tensor of the graph: it is computed only when nothing is fed."""
    graph = _graph_or_error("placeholder_with_default")
    op = PlaceholderWithDefault()
    if isinstance(input, SymbolicTensor):       # a tensor of the graph: computed if not fed
        default = graph._as_graph_tensor(input, None, op)
    else:
        default = constant(input, graph=graph)
    shape = TensorShape(shape)
    if not shape.is_compatible_with(default.shape):
        raise ValueError(f"placeholder_with_default: the default has shape {default.shape}, "
                         f"which does not fit the shape {shape} given; give a shape it "
                         "fits (None for a size that may vary).")
    return graph.add_operation(op, (default,), shape, default.dtype,
                               name or "PlaceholderWithDefault")


def constant(value, dtype=None, shape=None, name=None, graph=None):
    """A Const node holding ``value`` (TF's ``tf.constant``), or an eager tensor when eager."""
    graph = graph or context.state.graph
    if isinstance(value, Tensor):
        if value.graph is not None:
            raise TypeError(
                f"constant: {value.name!r} is a graph tensor; its value exists only when "
                "sess.run computes it, and a constant needs its value now. Use the tensor "
                "itself where the value is needed (eg.identity(x) makes a new node of it).")
        value = value.numpy()
    elif not hasattr(value, "dtype"):
        _numbers_kind(value)                    # (a clear error for ragged lists or text)
    if dtype is not None:
        array = np.asarray(value, dtype=as_dtype(dtype))
    else:
        array = np.asarray(value)
        if not hasattr(value, "dtype"):         # Python data gets TF's defaults
            array = array.astype(tf_dtype(array))
    if shape is not None:
        array = _constant_in_shape(array, tuple(shape))
    if graph is None:
        from ..tensor import tensor
        return tensor(array)
    return graph.add_operation(Const(array), (), array.shape, array.dtype, name or "Const")


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """A tensor stays as it is (TF refuses a different ``dtype``); numbers, lists and arrays
    become a constant, of ``dtype`` if given, else of ``dtype_hint`` for Python data, else of
    TF's defaults (``tf.convert_to_tensor``)."""
    if isinstance(value, Tensor):
        if dtype is not None and as_dtype(dtype) != value.dtype:
            raise ValueError(f"Tensor conversion requested dtype {as_dtype(dtype)} for a "
                             f"tensor of dtype {value.dtype}: cast it with eg.cast.")
        return value
    if dtype is None and dtype_hint is not None and not hasattr(value, "dtype"):
        dtype = dtype_hint
    return constant(value, dtype=dtype, name=name)


def _constant_in_shape(array, shape):
    """TF's rule: one value fills ``shape``; as many values as it has elements fill it in
    row-major order (``constant([1., 2., 3., 4., 5., 6.], shape=[2, 3])``)."""
    size = int(np.prod(shape))
    if array.size == 1:
        return np.full(shape, array.reshape(()), dtype=array.dtype)
    if array.size == size:
        return array.reshape(shape).copy()
    raise ValueError(f"constant: a value of shape {array.shape} ({array.size} elements) cannot "
                     f"make shape {shape} ({size} elements). Give one number to fill the shape, "
                     f"or exactly {size} values.")


def _constant_dtype(value, ref):
    """Numbers and lists of numbers adapt to the tensor they meet, as eagerly."""
    return None if ref is None else dtype_next_to(value, ref)


def name_scope(name, default_name=None, values=None):
    """``with eg.name_scope('layer1'):`` prefixes op names (``layer1/MatMul``)."""
    graph = context.state.graph
    if graph is None:
        return contextlib.nullcontext(name)
    return graph.name_scope(name or default_name)


def control_dependencies(control_inputs):
    """Ops created inside run only after ``control_inputs`` have run."""
    return _graph_or_error("control_dependencies").control_dependencies(control_inputs)


def no_op(name=None):
    return _graph_or_error("no_op").add_operation(NoOp(), (), None, None, name or "NoOp")


def group(*inputs, name=None):
    """One op that runs all ``inputs`` (a NoOp with them as control inputs)."""
    ops = [i if isinstance(i, Operation) else i.op for i in _flatten(inputs)]
    graph = ops[0].graph if ops else _graph_or_error("group")
    return graph.add_operation(NoOp(), (), None, None, name or "group_deps",
                               control_inputs=ops)


def data_inputs(op):
    """The ops whose outputs ``op`` reads."""
    return [t.op for t in op.inputs]


def upstream_ops(start, stop=(), inputs_of=data_inputs):
    """Every op reachable backwards from the ops ``start`` through ``inputs_of(op)``, not going
    past an op whose output is in ``stop`` (an explicit stack: deep graphs are fine)."""
    seen, stack = set(), list(start)
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op.outputs and op.outputs[0] in stop:
            continue
        stack.extend(inputs_of(op))
    return seen


def _flatten(items):
    for item in items:
        if isinstance(item, (list, tuple)):
            yield from _flatten(item)
        else:
            yield item
