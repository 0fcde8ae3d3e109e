"""Names that TensorFlow or PyTorch has and edugraph does not.

Code copied from TF or PyTorch may ask for ``eg.<name>``, ``eg.nn.<name>`` or ``x.<name>`` that
edugraph lacks. That never ends in a bare AttributeError: a name in the tables below gets what
edugraph offers instead, or why it is left out; any other name gets the closest names edugraph
has. Where a name is in neither framework, that is a typo, and the close names help too.
"""
import difflib

__all__ = ["MissingNameError", "INSTEAD", "refuse_missing_attributes"]

_IN_PLACE = ("the in-place methods here are add_, sub_, mul_, div_, copy_, zero_, fill_, "
             "normal_ and uniform_ (and x += ...); write the rest as y = x.op(...).")
_NO_LAYOUT = ("memory layout is numpy's business here (a reshape copies when it must), so "
              "drop it: x.contiguous().view(n, -1) is x.view(n, -1).")

INSTEAD = {
    "eg": {
        "complex64": "left out: tensors hold real numbers (float, int, bool). Keep the real "
                     "and imaginary parts as two tensors.",
        "string": "left out: tensors hold numbers, not text. Turn text into integer ids in "
                  "Python first (eg.datasets.Vocabulary).",
        "RaggedTensor": "left out: every tensor is rectangular. Pad the rows to one length "
                        "(and mask the padding), or keep one tensor per row.",
        "SparseTensor": "left out: tensors are dense. Store the zeros, or pick entries with "
                        "eg.gather.",
        "image": "left out (TF's tf.image): do image maths with numpy, e.g. in a "
                 "Dataset.map, before the model sees the images.",
        "einsum": "left out: write it with eg.matmul, eg.reduce_sum and broadcasting "
                  "('ij,jk->ik' is eg.matmul(a, b), 'ij,ij->i' eg.reduce_sum(a * b, axis=1)).",
        "jit": "TorchScript is left out. eg.function traces Python into an optimised graph "
               "(TF's tf.function), which you can look at.",
        "compile": "torch.compile is left out. eg.function traces a function into an "
                   "optimised graph (TF's tf.function), which you can look at.",
        "FloatTensor": "PyTorch's old tensor types are left out: eg.tensor(data, "
                       "dtype=eg.float32), x.float() (eg.float64 / x.double(), eg.int64 / "
                       "x.long()).",
        "Size": "shapes are tuples here: x.shape (or x.size()), compared with (2, 3).",
        "set_default_dtype": "the default float is always float32 (as in PyTorch): pass "
                             "dtype=eg.float64 where you need more digits.",
        "distributions": "left out: draw with eg.randn / eg.random.normal and write the "
                         "log-density as a formula.",
        "is_tensor": "isinstance(x, eg.Tensor).",
        "numel": "x.numel(), the tensor method.",
    },
    "eg.nn": {
        "Transformer": "left out: build attention from eg.matmul and eg.nn.softmax; the "
                       "course's models do not need the whole block.",
        "DataParallel": "eg.distribute.MirroredStrategy trains data parallel (README: "
                        "eg.distribute).",
        "Conv1d": "convolutions are 2-D only here (nn.Conv2d, eg.nn.conv2d): a 1-D signal is "
                  "an image of height 1.",
        "GroupNorm": "left out: nn.BatchNorm1d / nn.BatchNorm2d and nn.LayerNorm are there.",
        "ModuleDict": "left out: nn.ModuleList is there, and modules kept as attributes.",
        "embedding_lookup": "eg.gather(params, ids): the same lookup, row by row.",
        "l2_normalize": "x / eg.norm(x, axis=axis, keepdims=True).",
        "silu": "write it: x * eg.sigmoid(x).",
        "relu6": "write it: eg.clip_by_value(x, 0.0, 6.0).",
        "gelu": "left out (it needs erf); x * eg.sigmoid(1.702 * x) is its usual "
                "approximation.",
        "log_sigmoid": "write it: -eg.nn.softplus(-x).",
    },
    "eg.Tensor": {
        "copy": "use .clone(), as in PyTorch (numpy's x.copy()).",
        "astype": "x.to(eg.float64) (numpy's x.astype), or eg.cast(x, eg.float64) as in TF.",
        "new_zeros": "eg.zeros(shape, dtype=x.dtype, device=x.device), or eg.zeros_like(x) "
                     "for x's shape.",
        "is_cuda": "x.device.type == 'cuda'.",
        "contiguous": _NO_LAYOUT,
        "is_contiguous": _NO_LAYOUT,
        "stride": _NO_LAYOUT,
        "register_hook": "hooks are left out: call x.retain_grad() before backward() to keep "
                         "the gradient of a tensor that is not a leaf in x.grad.",
        "ndimension": "x.dim() (or x.ndim).",
        "nelement": "x.numel().",
        "half": "x.to(eg.float16) (x.float(), x.double() and x.long() are there).",
        "get_shape": "x.shape (a graph tensor has get_shape(), as in TF1).",
    },
}
# the same answer under the other names of one thing
INSTEAD["eg"] |= {name: INSTEAD["eg"][kept] for name, kept in [
    ("complex128", "complex64"), ("complex", "complex64"), ("strings", "string"),
    ("ragged", "RaggedTensor"), ("sparse", "SparseTensor"), ("DoubleTensor", "FloatTensor"),
    ("LongTensor", "FloatTensor"), ("get_default_dtype", "set_default_dtype")]}
INSTEAD["eg.nn"] |= {name: INSTEAD["eg.nn"][kept] for name, kept in [
    ("MultiheadAttention", "Transformer"), ("parallel", "DataParallel"),
    ("Conv3d", "Conv1d"), ("ConvTranspose2d", "Conv1d"), ("conv1d", "Conv1d"),
    ("conv3d", "Conv1d"), ("InstanceNorm2d", "GroupNorm"), ("swish", "silu")]}
# torch.nn.functional's names (F.gelu) get the advice eg.nn gives for its functions
INSTEAD["eg.nn.functional"] = {name: text for name, text in INSTEAD["eg.nn"].items()
                               if name[0].islower()} | {
    "logsigmoid": INSTEAD["eg.nn"]["log_sigmoid"]}
INSTEAD["eg.Tensor"] |= {name: INSTEAD["eg.Tensor"][kept] for name, kept in [
    ("new_ones", "new_zeros"), ("new_full", "new_zeros"), ("new_tensor", "new_zeros")]}
# PyTorch's in-place methods that edugraph leaves out
INSTEAD["eg.Tensor"] |= {f"{op}_": _IN_PLACE for op in (
    "abs", "clamp", "exp", "log", "neg", "pow", "relu", "sigmoid", "sqrt", "square", "tanh")}


def refuse_missing_attributes(cls, where="eg.Tensor"):
    """Give ``cls`` a property for each name of ``INSTEAD[where]`` that it lacks, which raises
    ``MissingNameError`` with the advice. Named properties, not a ``__getattr__``: a class with
    ``__getattr__`` makes Python 3.11 give up its fast path for EVERY attribute read on its
    instances (eager ops read tensors' attributes all the time: about 30 % slower). A name not
    in the table gets Python's own message, with its "Did you mean ...?"."""
    for name in INSTEAD[where]:
        if not hasattr(cls, name):
            setattr(cls, name, property(_refusal(where, name)))


def _refusal(where, name):
    def refuse(self):
        raise MissingNameError(where, name)
    refuse.__doc__ = f"Not in edugraph: {INSTEAD[where][name]}"
    return refuse


class MissingNameError(AttributeError):
    """``where.name`` for a name edugraph does not have. The message (what to use instead) is
    worked out only when it is shown, so ``hasattr`` stays cheap; ``names()`` gives the names
    there are, for the close ones."""

    def __init__(self, where, name, names=tuple):
        super().__init__(where, name)
        self.where, self.missing, self._names = where, name, names

    def __reduce__(self):                # (pickled without the function that lists names)
        return type(self), (self.where, self.missing)

    def __str__(self):
        hint = INSTEAD.get(self.where, {}).get(self.missing)
        if hint is None:
            public = [n for n in self._names() if not n.startswith("_")]
            close = difflib.get_close_matches(self.missing, public, n=3, cutoff=0.75)
            hint = (f"Did you mean {' or '.join(close)}? " if close else "") + \
                ("If TensorFlow or PyTorch has it, edugraph leaves it out: it keeps to what "
                 "the course needs (the README lists what is there).")
        return f"{self.where} has no attribute '{self.missing}': {hint}"
