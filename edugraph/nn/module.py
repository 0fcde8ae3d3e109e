"""Module: the one base class of every layer and model (Keras's ``Layer``, PyTorch's ``nn.Module``).

Why one class for both: a Keras layer and a PyTorch module are the same idea — an object that
owns variables and computes outputs from inputs with ops — and differ only in spelling. So

* variables and sub-modules assigned as attributes are tracked automatically (PyTorch), and
  listed with ``parameters()`` / ``named_parameters()`` / ``trainable_variables`` (both);
* a layer may be *built lazily* on its first call, when the input's last dimension is known
  (Keras: ``Dense(10)`` needs no input size), by overriding ``build(input_shape)``; calling
  ``layer.build(input_shape)`` by hand builds it once, as in Keras (the first call then uses
  those weights);
* the computation is ``call(inputs, training=...)`` (Keras) or ``forward(x)`` (PyTorch);
* ``training`` says whether dropout drops and batch norm uses batch statistics, and here the
  two libraries differ. A Keras layer has no mode: it is told per call. Passed explicitly,
  ``model(x, training=True)`` (``fit`` does), the flag also holds for every layer called inside
  that call without one, as Keras's call context hands it down; with no flag anywhere a layer
  runs in inference mode. A PyTorch module has a mode, its attribute ``training``, which
  ``train()`` / ``eval()`` set on the whole tree and which starts True (``eg.nn.Module``, in
  ``nn/__init__.py``). So a call uses the flag passed to it, else the one handed down, else
  the module's own ``training`` (always False for Keras's layers, unless ``train()`` is called
  on them);
* freezing, too, is spelt twice: Keras sets ``layer.trainable = False``, PyTorch
  ``requires_grad_(False)`` on parameters (or on a module: all of its parameters).
  ``trainable_variables`` (what Keras's optimizers and ``summary`` count as trainable) leaves
  out both; ``parameters()`` is PyTorch's, and lists every parameter, frozen or not.

Layers compute with edugraph ops only, so the same layer runs eagerly, inside a Session graph
and in traced functions, on every device, and its gradients come from the ops.
"""
import functools
import inspect
import itertools
import numbers
import os
import re
import weakref
from collections import OrderedDict, defaultdict, namedtuple

import numpy as np

from .. import context, initializers
from ..context import state
from ..errors import NoValueError
from ..graph.core import Graph, name_scope, placeholder
from ..ops import math as math_ops
from ..ops.linalg import matmul
from ..tensor import (Tensor, as_dtype, check_flag, device_or_dtype, float32, float64,
                      tensor)
from ..variable import Variable

__all__ = ["Module", "KerasTensor"]

_eager_counters = defaultdict(itertools.count)
_graph_counters = weakref.WeakKeyDictionary()      # graph -> its own counters


def unique_name(base):
    """dense, dense_1, dense_2... (Keras numbers layers of each kind in creation order; as
    Keras's ``get_uid`` does, each graph counts from the start, so that ``tf.layers.dense`` in a
    new graph is ``dense`` again)."""
    graph = context.state.graph
    counters = _eager_counters if graph is None else \
        _graph_counters.setdefault(graph, defaultdict(itertools.count))
    n = next(counters[base])
    return base if n == 0 else f"{base}_{n}"


def reset_names():
    """Number layers from the start again (``dense``, not ``dense_7``): Keras's
    ``clear_session``."""
    _eager_counters.clear()
    _graph_counters.clear()


def _snake_case(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower().replace("2_d", "2d")


class KerasTensor:
    """What flows through a functional model while it is being wired (``eg.Input``): a shape
    (batch size ``None``) and the layer call that made it, but no values yet."""

    def __init__(self, shape, dtype=float32, layer=None, inputs=(), kwargs=None, name=None):
        self.shape, self.dtype = tuple(shape), as_dtype(dtype)
        self.layer, self.inputs, self.kwargs = layer, inputs, kwargs or {}
        self.name = name

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        made_by = f", made by '{self.layer.name}'" if self.layer is not None else ""
        return f"<KerasTensor shape={self.shape} dtype={self.dtype}{made_by}>"

    # Arithmetic wires an op into the model as a layer (``OpLambda``), as in Keras: ResNet's
    # ``x + shortcut``, ``0.5 * x``; the operand order is kept (``1 - x`` is not ``x - 1``).
    def __add__(self, other): return OpLambda.wire(math_ops.add, self, other)
    def __radd__(self, other): return OpLambda.wire(math_ops.add, other, self)
    def __sub__(self, other): return OpLambda.wire(math_ops.subtract, self, other)
    def __rsub__(self, other): return OpLambda.wire(math_ops.subtract, other, self)
    def __mul__(self, other): return OpLambda.wire(math_ops.multiply, self, other)
    def __rmul__(self, other): return OpLambda.wire(math_ops.multiply, other, self)
    def __truediv__(self, other): return OpLambda.wire(math_ops.divide, self, other)
    def __rtruediv__(self, other): return OpLambda.wire(math_ops.divide, other, self)
    def __pow__(self, other): return OpLambda.wire(math_ops.pow, self, other)
    def __rpow__(self, other): return OpLambda.wire(math_ops.pow, other, self)
    def __matmul__(self, other): return OpLambda.wire(matmul, self, other)
    def __rmatmul__(self, other): return OpLambda.wire(matmul, other, self)
    def __neg__(self): return OpLambda.wire(math_ops.negative, self)

    __array_ufunc__ = None      # ``np.ones(3) + x``: numpy leaves it to __radd__ above

    def __array__(self, dtype=None, copy=None):
        """What an edugraph function called on a KerasTensor meets where it makes its
        arguments tensors (``eg.exp(x)``): there are no values to convert, as ``.numpy()`` of
        a graph tensor has none."""
        raise NoValueError(
            f"{self!r} is a placeholder in a functional model: it has no values, so edugraph's "
            "functions (eg.exp, eg.reduce_sum...) cannot compute on it. Use the operators "
            "+ - * / ** @ and unary -, which add a layer to the model (x + shortcut, 0.5 * x), "
            "or layers (eg.keras.layers.Add, Dense...); for another function, write a layer: "
            "subclass eg.keras.layers.Layer and call the function in its call().")


def _flat(args):
    for a in args:
        if isinstance(a, (list, tuple)):
            yield from a
        else:
            yield a


def weights_file(path):
    """The file that ``save_weights(path)`` writes and ``load_weights(path)`` reads: numpy's
    ``.npz`` format, with ``.npz`` added to a name without it, as ``np.savez`` adds it. Both
    ask here, so the name given to one works with the other (``'w'`` → ``w.npz``, ``'w.h5'``
    → ``w.h5.npz``: an ``.npz`` file, not HDF5). A file object is used as it is."""
    if not isinstance(path, (str, os.PathLike)):
        return path
    path = os.fspath(path)
    return path if path.endswith(".npz") else path + ".npz"


def _is_numbers(x):
    """A (nested) list or tuple of plain numbers: data written out, not a list of tensors (a
    model with several inputs)."""
    return isinstance(x, (list, tuple)) and bool(x) and all(
        isinstance(i, numbers.Number) or _is_numbers(i) for i in x)


def _shape_of(x):
    """The shape of ``x`` (or of each tensor in a list), the batch size shown as ``None``:
    a layer is built for any batch size."""
    if isinstance(x, (list, tuple)):
        return [_shape_of(i) for i in x]
    shape = tuple(x.shape)
    return (None,) + shape[1:] if shape else shape


class Module:
    """Base of layers and models: tracks variables and sub-modules, builds on first call."""

    training = False            # Keras's layers run in inference mode unless told; see above

    def __init_subclass__(cls, **kwargs):
        """A subclass's ``build`` marks the layer built when it returns, as Keras's ``build``
        does, so that ``layer.build(shape)`` called by hand is not repeated (new weights, the
        old ones left behind) by the first call."""
        super().__init_subclass__(**kwargs)
        build = cls.__dict__.get("build")
        if build is not None and not getattr(build, "marks_built", False):
            @functools.wraps(build)
            def build_and_mark_built(self, *args, **kwargs):
                build(self, *args, **kwargs)
                self.built = True
            build_and_mark_built.marks_built = True
            cls.build = build_and_mark_built

    def __init__(self, name=None, trainable=True, dtype=None, input_shape=None, input_dim=None,
                 batch_input_shape=None):
        object.__setattr__(self, "_variables", {})
        object.__setattr__(self, "_modules", {})
        self.name = name or unique_name(_snake_case(type(self).__name__))
        self.trainable = trainable
        self.dtype = as_dtype(dtype or float32)
        self.built = False
        self.output_shape = None
        self._regularizers = []             # (variable, penalty function) pairs
        self._added_losses = []
        if input_dim is not None:
            input_shape = (input_dim,)
        if input_shape is not None:
            batch_input_shape = (None,) + tuple(input_shape)
        self.batch_input_shape = None if batch_input_shape is None else tuple(batch_input_shape)

    # ------------------------------------------------------------------ tracking
    def __setattr__(self, name, value):
        if "_modules" not in self.__dict__ and isinstance(value, (Module, Variable)):
            raise AttributeError(
                f"{type(self).__name__}.__init__ must call super().__init__() before it "
                f"assigns layers or variables (self.{name} = ...), as in Keras and PyTorch: "
                "that call sets up the tracking of its weights.")
        if isinstance(value, Module):
            self._modules[name] = value
        elif isinstance(value, Variable):
            self._variables[name] = value
        elif isinstance(value, (list, tuple)) and value and all(
                isinstance(v, Module) for v in value):
            for i, v in enumerate(value):
                self._modules[f"{name}.{i}"] = v
        object.__setattr__(self, name, value)

    def add_weight(self, name, shape, initializer="glorot_uniform", trainable=True,
                   regularizer=None, dtype=None):
        """A new variable of this layer, filled by ``initializer`` (Keras's ``add_weight``)."""
        init = initializers.get(initializer)
        var = Variable(init(tuple(shape), dtype or self.dtype), trainable=trainable,
                       name=f"{self.name}/{name}")
        setattr(self, name, var)
        if regularizer is not None:
            self._regularizers.append((var, regularizer))
        return var

    def modules(self):
        """This module and every module inside it, depth first (each once)."""
        seen, order = set(), []

        def visit(m):
            if id(m) in seen:
                return
            seen.add(id(m))
            order.append(m)
            for child in m._modules.values():
                visit(child)
        visit(self)
        return order

    def named_variables(self, prefix=""):
        """(dotted path, variable) for every variable, shared ones listed once."""
        seen = set()
        for path, module in self._named_modules(prefix):
            for name, var in module._variables.items():
                if id(var) not in seen:
                    seen.add(id(var))
                    yield (f"{path}.{name}" if path else name), var

    def _named_modules(self, prefix):
        yield prefix, self
        for name, child in self._modules.items():
            yield from child._named_modules(f"{prefix}.{name}" if prefix else name)

    def children(self):
        """The modules directly inside this one (PyTorch's ``model.children()``)."""
        return iter(dict.fromkeys(self._modules.values()))

    def named_children(self):
        return iter(self._modules.items())

    def named_modules(self, prefix=""):
        """(dotted path, module) for this module ("") and every module inside it."""
        seen = set()
        for path, module in self._named_modules(prefix):
            if id(module) not in seen:
                seen.add(id(module))
                yield path, module

    def apply(self, fn):
        """Call ``fn`` on every module inside this one, then on this one (PyTorch's
        ``net.apply(init_weights)``); returns this module."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def register_buffer(self, name, tensor):
        """A tensor the module keeps but does not learn (PyTorch's buffers: running
        statistics): in ``state_dict()``, not in ``parameters()``."""
        setattr(self, name, None if tensor is None else Variable(tensor, trainable=False,
                                                                 name=f"{self.name}/{name}"))

    def register_parameter(self, name, param):
        setattr(self, name, param)

    def add_module(self, name, module):
        """``self.add_module("0", layer)``: ``setattr`` for names that are not identifiers."""
        setattr(self, name, module)

    @property
    def variables(self):
        return [v for _, v in self.named_variables()]

    weights = variables

    @property
    def trainable_variables(self):
        """The variables an optimizer updates: not statistics (variables made with
        ``trainable=False``), nor those of a module set ``trainable = False`` (Keras's
        freezing), nor parameters frozen with ``requires_grad_(False)`` (PyTorch's)."""
        frozen = {id(v) for m in self.modules() if not m.trainable for v in m.variables}
        return [v for v in self.variables
                if v.trainable and v.requires_grad and id(v) not in frozen]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        trainable = {id(v) for v in self.trainable_variables}
        return [v for v in self.variables if id(v) not in trainable]

    non_trainable_weights = non_trainable_variables

    def parameters(self):
        """PyTorch's ``model.parameters()``: every parameter, also one frozen with
        ``requires_grad_(False)`` (an optimizer skips it: its ``.grad`` stays None), as in
        PyTorch; not buffers such as batch norm's running statistics. A module's
        ``trainable`` flag is Keras's: PyTorch code that sets it gets PyTorch's list."""
        return [v for _, v in self.named_parameters()]

    def named_parameters(self):
        return [(n, v) for n, v in self.named_variables() if v.trainable]

    def requires_grad_(self, requires_grad=True):
        """PyTorch's ``module.requires_grad_(False)``: freeze every parameter inside the
        module (``True``: unfreeze them); returns the module."""
        check_flag(requires_grad, "requires_grad", "requires_grad_()")
        for parameter in self.parameters():
            parameter.requires_grad_(requires_grad)
        return self

    def count_params(self):
        return sum(v.size for v in self.variables)

    def get_weights(self):
        """Copies of the variables' values (a CPU tensor's ``numpy()`` shares its memory, and
        optimizers update variables in place: a snapshot must not change with them)."""
        return [np.array(v.numpy(), copy=True) for v in self.variables]

    def set_weights(self, weights):
        variables = self.variables
        if len(weights) != len(variables):
            raise ValueError(f"{self.name}.set_weights: got {len(weights)} arrays for "
                             f"{len(variables)} variables.")
        for var, value in zip(variables, weights):
            if tuple(np.shape(value)) != var.shape:
                raise ValueError(f"{self.name}.set_weights: variable '{var.name}' has shape "
                                 f"{var.shape}, but the array has shape {np.shape(value)}.")
            var.assign(value)

    def zero_grad(self):
        for v in self.variables:
            v.grad = None

    @property
    def losses(self):
        """Regularisation terms of this module and those inside it (new graph nodes each time)."""
        terms = []
        for m in self.modules():
            terms += [penalty(var) for var, penalty in m._regularizers] + m._added_losses
        return terms

    def add_loss(self, loss):
        """Add a term (e.g. an activity penalty computed in ``call``) to ``losses``."""
        self._added_losses.append(loss)

    # ------------------------------------------------------------------ modes
    def train(self, mode=True):
        """Training mode for this module and all inside it (dropout drops, BN uses batches)."""
        for m in self.modules():
            m.training = mode
        return self

    def eval(self):
        return self.train(False)

    # ------------------------------------------------------------------ devices and dtypes
    def to(self, target=None, dtype=None, *, device=None):
        """Move every variable to a device (``model.to('cuda')``, ``model.to(device)``,
        ``model.to(device=device)``) or convert the floating-point ones to a dtype
        (``model.to(eg.float64)``). As in PyTorch this happens in place: the variables stay
        the same objects, only their values move (with their gradients). An optimizer's state
        does not move with them: make the optimizer after ``to``, as PyTorch's documentation
        advises."""
        for spec in (target, device, dtype):
            if spec is not None:
                self._to_one(spec)
        return self

    def _to_one(self, target):
        if any(v.graph is not None for v in self.variables):
            raise TypeError(f"{self.name}.to({target!r}) moves eager variables; in a graph, "
                            "place the layers with `with eg.device(...):` when building them.")
        device, dtype = device_or_dtype(target, f"{self.name}.to")
        if device is not None:
            moving = [v for v in self.variables if v.device is not device]
        elif dtype.kind != "f":
            raise TypeError(f"{self.name}.to({target!r}): a model converts only to a "
                            "floating-point dtype (eg.float32, eg.float64), as in PyTorch.")
        else:
            moving = [v for v in self.variables if v.is_floating_point() and v.dtype != dtype]
            for m in self.modules():       # (lazily built layers make their weights in it)
                m.dtype = dtype
        with context.no_grad():
            for var in moving:
                var.data = var.data.to(target)
                if var.grad is not None:
                    var.grad = var.grad.to(target)

    def cpu(self):
        return self.to("cpu:0")

    def cuda(self, device=0):
        return self.to(f"gpu:{device}")

    def double(self):
        return self.to(float64)

    def float(self):
        return self.to(float32)

    # ------------------------------------------------------------------ building and calling
    def build(self, input_shape):
        """Create the variables once the input shape is known (override in layers)."""

    def compute_output_shape(self, input_shape):
        """Most layers keep the shape; layers that change it override this."""
        return input_shape

    def build_for(self, input_shape):
        """Build (once) for inputs of ``input_shape`` and return the output shape."""
        if not self.built:
            self.build(input_shape)
            self.built = True
        self.output_shape = self.compute_output_shape(input_shape)
        return self.output_shape

    def call(self, *args, **kwargs):
        """The computation (Keras's name). The default runs ``forward`` (PyTorch's name)."""
        if type(self).forward is Module.forward:
            raise NotImplementedError(f"{type(self).__name__} must define call() or forward().")
        return self.forward(*args, **kwargs)

    def forward(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def __call__(self, *args, training=None, **kwargs):
        if any(isinstance(a, KerasTensor) for a in _flat(args)):
            return self._call_symbolic(args, kwargs)
        if args and _is_numbers(args[0]):       # layer([[1., 2.]]): a tensor (Keras 3 refuses)
            args = (tensor(args[0]), *args[1:])
        elif args and (args[0] is None or isinstance(args[0], str)):
            raise TypeError(f"{type(self).__name__} '{self.name}' was called on {args[0]!r}; "
                            "it needs a tensor, e.g. eg.tensor([[1.0, 2.0]]).")
        handed_down = state.call_training
        if training is None:            # not given: the flag of the call this one is inside
            training = handed_down
        if not self.built:
            self.build_for(_shape_of(args[0]))
        self._added_losses = []
        if self._takes_training():
            kwargs["training"] = self.training if training is None else training
        state.call_training = training  # for the layers this call calls (None: their own)
        try:
            with name_scope(self.name):     # in a graph, TF1's names: dense/MatMul, dense/Relu
                out = self.call(*args, **kwargs)
        finally:
            state.call_training = handed_down
        if self.output_shape is None and isinstance(out, Tensor):
            self.output_shape = (None,) + tuple(out.shape[1:])
        return out

    def _takes_training(self):
        cls = type(self)
        if "_accepts_training" not in cls.__dict__:
            method = cls.call if cls.call is not Module.call else cls.forward
            params = inspect.signature(method).parameters
            cls._accepts_training = "training" in params or any(
                p.kind is p.VAR_KEYWORD for p in params.values())
        return cls._accepts_training

    def _call_symbolic(self, args, kwargs):
        """Functional API: record the call and work out the output's shape; no values yet."""
        out_shape = self.build_for(_shape_of(args[0]))
        dtype = self.dtype if self.variables else next(_flat(args)).dtype
        return KerasTensor(out_shape, dtype, layer=self, inputs=args, kwargs=kwargs)

    # ------------------------------------------------------------------ saving and showing
    def state_dict(self):
        """Every variable by its dotted name, as PyTorch's ``model.state_dict()``.

        An ``OrderedDict`` of name → tensor with the names ``named_variables()`` gives
        (``"fc1.kernel"``, ``"0.bias"``), non-trainable variables such as batch norm's
        ``moving_mean`` included. Save it with ``eg.save(model.state_dict(), path)`` and
        restore it with ``model.load_state_dict(eg.load(path))``.

        PyTorch's modules (``eg.nn.Linear``, ``Conv2d``, ``BatchNorm2d``...) have PyTorch's
        names and layouts, so their state dicts are interchangeable with torch's, given
        the values as arrays. Keras's layers keep Keras's: a ``Dense`` layer's ``kernel`` is
        (in, out), PyTorch's ``weight`` transposed; batch norm's ``gamma``, ``beta``,
        ``moving_mean``, ``moving_variance`` are PyTorch's ``weight``, ``bias``,
        ``running_mean``, ``running_var``.

        As in PyTorch, the tensors share memory with the variables: training on changes
        them too. For a snapshot (the best weights so far) copy them:
        ``copy.deepcopy(model.state_dict())``."""
        return OrderedDict((name, var.detach()) for name, var in self.named_variables())

    def load_state_dict(self, state_dict, strict=True):
        """Copy the values of a ``state_dict()`` into this model's variables, as PyTorch's.

        The variables stay the same objects (an optimizer made for them keeps working) on
        their devices and in their dtypes. ``strict``: every variable must get a value and
        every value must have a variable; ``strict=False`` loads the names that match and
        returns ``(missing_keys, unexpected_keys)``. Shapes must always match. Errors list
        every problem (RuntimeError, as PyTorch raises)."""
        return self._load_named(state_dict, "state_dict", strict, RuntimeError)

    def save_weights(self, path):
        """All variables to an ``.npz`` file, by name (see ``load_weights``); ``.npz`` is
        added to a name without it (``weights_file``)."""
        np.savez(weights_file(path), **{name: var.numpy()
                                        for name, var in self.named_variables()})

    def load_weights(self, path):
        """Variables from a file written by ``save_weights`` (given the same name); names and
        shapes must match."""
        with np.load(weights_file(path)) as stored:
            self._load_named(stored, "weights")

    def _load_named(self, stored, what, strict=True, error=ValueError):
        """Copy ``stored`` (name → array or tensor) into the variables of the same names, or
        raise ``error`` naming every problem first. (Keras's ``load_weights`` raises
        ValueError, PyTorch's ``load_state_dict`` RuntimeError.)"""
        for path, module in self.named_modules():
            if not module.built and hasattr(module, "materialize"):    # PyTorch's lazy modules
                module.materialize(stored, f"{path}." if path else "")
        variables = dict(self.named_variables())
        missing = [name for name in variables if name not in stored]
        unexpected = [name for name in stored if name not in variables]
        values = {name: _host_array(stored[name]) for name in variables if name in stored}
        problems = [f"size mismatch for '{name}': the model's variable has shape "
                    f"{variables[name].shape}, the {what} has shape {value.shape}."
                    for name, value in values.items() if value.shape != variables[name].shape]
        if strict and unexpected:
            problems.insert(0, f"Unexpected key(s) in {what}: {unexpected}: the model has no "
                               "variables of these names.")
        if strict and missing:
            problems.insert(0, f"Missing key(s) in {what}: {missing}: it has no weights for "
                               "these variables of the model.")
        if problems:
            raise error(
                f"Error(s) in loading {what} into {type(self).__name__} '{self.name}':\n  "
                + "\n  ".join(problems) + "\nWas it saved from a model with the same layers? "
                "(Keras's layers have Keras's names and layouts: a Dense kernel is PyTorch's "
                "Linear weight transposed. A layer such as Dense(10) or nn.LazyLinear(10) "
                "makes its variables on its first call: call the model on a batch before "
                "loading.)")
        for name, value in values.items():
            variables[name].assign(value)
        return IncompatibleKeys(missing, unexpected)

    def summary(self, print_fn=print):
        """A Keras-like table: each layer with its output shape and parameter count."""
        rows = [(f"{m.name} ({type(m).__name__})", str(m.output_shape), f"{m.count_params():,}")
                for m in self.summary_layers()]
        trainable = sum(v.size for v in self.trainable_variables)
        total = self.count_params()
        header = ("Layer (type)", "Output Shape", "Param #")
        widths = [max(len(r[i]) for r in rows + [header]) + 3 for i in range(3)]

        def line(r):
            return "".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
        rule = "=" * sum(widths)
        text = [f'Model: "{self.name}"', rule.replace("=", "_"), line(header), rule]
        for i, r in enumerate(rows):
            text += [line(r), rule if i == len(rows) - 1 else "_" * sum(widths)]
        if not rows:
            text.append(rule)
        text += [f"Total params: {total:,}", f"Trainable params: {trainable:,}",
                 f"Non-trainable params: {total - trainable:,}"]
        print_fn("\n".join(text))

    def summary_layers(self):
        """The rows of ``summary``: the direct sub-modules."""
        children = []
        for m in self._modules.values():
            if all(m is not c for c in children):
                children.append(m)
        return children

    def __repr__(self):
        inside = "".join(f"\n  ({name}): " + repr(m).replace("\n", "\n  ")
                         for name, m in self._modules.items())
        return f"{type(self).__name__}({self.extra_repr()}{inside}{chr(10) if inside else ''})"

    def extra_repr(self):
        return ""


class OpLambda(Module):
    """An edugraph function applied to KerasTensors, as a layer of a functional model: what the
    operators wire in (``x + shortcut`` is an ``eg.add`` layer), as Keras's TFOpLambda.

    Its inputs are the KerasTensor operands; the others (numbers, numpy arrays, tensors) are
    kept as they are, in their places. Running the model calls the function on the inputs'
    values, so the gradient is the function's own."""

    def __init__(self, function, operands):
        super().__init__(name=unique_name("eg." + function.__name__))
        self.function = function
        self._constants = [None if isinstance(o, KerasTensor) else o for o in operands]

    @classmethod
    def wire(cls, function, *operands):
        """``function(*operands)`` as a new layer called on the KerasTensors among them;
        NotImplemented (Python then raises its TypeError) for an operand of another kind."""
        if not all(isinstance(o, (KerasTensor, numbers.Number, np.ndarray, np.generic)) or
                   isinstance(o, Tensor) and o.graph is None for o in operands):
            return NotImplemented
        return cls(function, operands)([o for o in operands if isinstance(o, KerasTensor)])

    def call(self, inputs):
        given = iter(inputs)
        return self.function(*(next(given) if c is None else c for c in self._constants))

    def _call_symbolic(self, args, kwargs):
        """The output's shape and dtype: the function run on placeholders in a scratch graph,
        so its own shape rules apply, and its own error for shapes that do not fit comes
        while the model is wired, naming them."""
        with Graph().as_default():
            out = self.call([placeholder(t.dtype, t.shape) for t in args[0]])
        self.built, self.output_shape = True, tuple(out.shape)
        return KerasTensor(out.shape, out.dtype, layer=self, inputs=args)


class IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns, as in PyTorch: the names it could not load."""

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()


def _host_array(value):
    """A numpy array of ``value`` (a tensor on any device, an array, a list)."""
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


def fan_in_shape(input_shape, what):
    """The last dimension of an input shape, which must be known to size a weight."""
    if input_shape[-1] is None:
        raise ValueError(f"{what}: the last dimension of the input must be known to create "
                         f"the weights, but the input shape is {input_shape}.")
    return int(input_shape[-1])

