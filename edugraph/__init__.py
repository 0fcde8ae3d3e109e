"""edugraph: a small deep-learning framework that shows how TensorFlow and PyTorch work inside.

Eager mode (the default) computes at once and records for ``backward()`` / ``GradientTape``.
Everything a student needs is here, under the names used on the lecture slides.
"""
from types import SimpleNamespace as _SimpleNamespace

from .missing import MissingNameError as _MissingNameError
from . import allocator  # noqa: F401  (glibc keeps freed arrays for the next step: see there)

from . import errors, nn  # noqa: F401
from .autodiff import GradientTape, UnconnectedGradients, backward, grad
from .context import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck  # torch.autograd.gradcheck
from .devices import (Device, current_device, device, get_device, gpu_available, list_devices,
                      log_device_placement)
from .ops import random
from .ops.activation import (dropout, elu, leaky_relu, log_softmax, relu, sigmoid, softmax,
                             softplus, tanh)
from .ops.base import (accepting_tf1_keywords as _accepting_tf1_keywords,
                       accepting_torch_dims as _accepting_torch_dims)
from .ops.linalg import bmm, dot, matmul, mm, mv, outer
from .ops.clip import clip_by_global_norm, clip_by_norm, global_norm  # tf.clip_by_*
from .ops.math import (abs, add, add_n, cast, clip, clip_by_value, cos, divide, divide_no_nan,
                       equal, exp, floordiv, floormod, greater, greater_equal, less, less_equal,
                       log, logical_and, logical_not, logical_or, maximum, minimum, multiply,
                       negative, not_equal, pow, sign, sin, sqrt, square, subtract, where)
from .ops.printing import print_ as print  # noqa: A001  (tf.print: prints when it runs)
from .ops.random import (arange, fill, full, full_like, linspace, manual_seed, ones, ones_like,
                         rand, rand_like, randint, randn, randn_like, random_normal,
                         random_uniform, torch_normal as normal, truncated_normal, zeros,
                         zeros_like)
from .ops.sequence import range_ as range, shape  # noqa: A001  (tf.range, tf.shape)
from .ops.reduce import (cumsum, logsumexp, norm, reduce_all, reduce_any, reduce_logsumexp,
                         reduce_max, reduce_mean, reduce_min, reduce_std, reduce_sum,
                         reduce_variance, std, torch_max, torch_min, var)
# argmax without an axis: TF's works along axis 0, PyTorch's flattens (eg.argmax asks which)
from .ops.reduce import shared_argmax as argmax, shared_argmin as argmin
from .ops.reduce import tf_argmax as _tf_argmax, tf_argmin as _tf_argmin
from .ops.shape import (broadcast_to, cat, concat, copy_to, expand_dims, flatten, gather,
                        identity, one_hot, permute, reshape, squeeze, stack, stop_gradient,
                        transpose, unsqueeze)
# PyTorch's order and picks (x.gather(dim, index) is gather_along_dim); tf.reverse, tf.roll
from .ops.shape import (argsort, diag, diagonal, flip, gather_along_dim, masked_fill,
                        masked_select, repeat_interleave, reverse, roll, scatter, scatter_add,
                        sort, tile, topk, tril, triu)
from .ops.random import eye
from .tensor import (Tensor, as_dtype, bool_, float16, float32, float64, from_numpy, int8,
                     int16, int32, int64, tensor, uint8)
from .variable import Variable
from .view import GraphView, graph_view

# The other rooms: each exports its public names through its package's __all__.
from . import data, datasets, initializers, layers, losses, train  # noqa: E402,F401
from . import autograd, keras  # noqa: E402,F401  (torch.autograd, tf.keras)
from . import debugging  # noqa: E402,F401  (tf.debugging.enable_check_numerics)
from . import cuda, optim  # noqa: E402,F401  (torch.cuda, torch.optim)
from . import distribute  # noqa: E402,F401  (tf.distribute)
from . import utils  # noqa: E402,F401  (torch.utils: eg.utils.data.DataLoader...)
from .utils.serialization import load, save  # noqa: E402  (torch.save, torch.load)
from .graph import *  # noqa: E402,F401,F403
from .initializers import (glorot_normal as glorot_normal_initializer,  # noqa: E402  (TF1 names)
                           glorot_uniform as glorot_uniform_initializer,
                           variance_scaling_initializer)
from .models import *  # noqa: E402,F401,F403

bool = bool_  # noqa: A001  (eg.bool, like tf.bool / torch.bool)
float, double, half = float32, float64, float16  # noqa: A001  (PyTorch's names)
int, long = int32, int64  # noqa: A001  (torch.int is int32; torch.long int64)
sum, mean = reduce_sum, reduce_mean  # noqa: A001  (PyTorch spellings: torch.sum, torch.mean)
max, min = torch_max, torch_min  # noqa: A001  (torch.max(x, 1) → (values, indices))
amax, amin = reduce_max, reduce_min
mul, sub, div, neg = multiply, subtract, divide, negative
mod, floor_divide, remainder = floormod, floordiv, floormod  # tf.mod; PyTorch's names

newaxis = None                  # x[..., eg.newaxis] (tf.newaxis, np.newaxis)
clamp = clip                    # torch.clamp(x, min=0)
# TF1's older keywords on TF's names: eg.reduce_sum(p, reduction_indices=[1], keep_dims=True)
(reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_any, reduce_all, reduce_logsumexp,
 reduce_variance, reduce_std, squeeze, argmax, argmin) = (_accepting_tf1_keywords(f) for f in (
    reduce_sum, reduce_mean, reduce_max, reduce_min, reduce_any, reduce_all, reduce_logsumexp,
    reduce_variance, reduce_std, squeeze, argmax, argmin))
# PyTorch's keywords too, where PyTorch has the function: eg.sum(x, dim=1), eg.cat(xs, dim=1)
(sum, mean, amax, amin, cat, stack, squeeze, unsqueeze, argmax, argmin, softmax, log_softmax,
 logsumexp, cumsum) = (_accepting_torch_dims(f) for f in (  # noqa: A001
    sum, mean, amax, amin, cat, stack, squeeze, unsqueeze, argmax, argmin, softmax, log_softmax,
    logsumexp, cumsum))
# tf.math: TF's namespace of the elementwise maths and reductions (tf.math.reduce_std(x))
math = _SimpleNamespace(**{name: globals()[name] for name in (
    "abs", "add", "add_n", "cos", "cumsum", "divide", "divide_no_nan",
    "equal", "exp",
    "floordiv", "floormod",
    "greater", "greater_equal", "less", "less_equal", "log", "log_softmax", "logical_and",
    "logical_not", "logical_or", "maximum", "minimum", "multiply", "negative", "not_equal", "pow",
    "reduce_all", "reduce_any", "reduce_logsumexp", "reduce_max", "reduce_mean", "reduce_min",
    "reduce_std", "reduce_sum", "reduce_variance", "sigmoid", "sign", "sin", "softmax", "softplus",
    "sqrt", "square", "subtract", "tanh")})
math.argmax, math.argmin = (_accepting_tf1_keywords(f) for f in (_tf_argmax, _tf_argmin))
test = _SimpleNamespace(is_gpu_available=gpu_available)     # tf.test.is_gpu_available()
repeat = repeat_interleave     # tf.repeat (PyTorch's x.repeat tiles: eg.tile)
math.top_k = topk              # tf.math.top_k(x, k): (values, indices)
from . import autograph  # noqa: E402,F401  (tf.autograph.to_code: what eg.function converts)
from .module import Module  # noqa: E402  (tf.Module: variables, submodules, name scopes)
from . import contrib  # noqa: E402,F401  (tf.contrib.eager: TF 1.x's eager preview, lecture 6)
from . import compat  # noqa: E402,F401  (tf.compat.v1: TF1 programs with their tf. lines)
from . import io  # noqa: E402,F401  (tf.io: TFRecord files, decode_raw)
from . import summary  # noqa: E402,F401  (tf.summary: TensorBoard's event files)

__version__ = "0.1.0"


def __getattr__(name):
    """``eg.<name>`` for a name edugraph does not have: what to use instead (missing.py)."""
    if name.startswith("_"):
        raise AttributeError(f"module 'edugraph' has no attribute '{name}'")
    raise _MissingNameError("eg", name, lambda: list(globals()))


# ``from edugraph import *`` must not replace Python's own print, range, sum, max, float...
# nor a standard module the notebook imported (math, random)
import builtins as _builtins  # noqa: E402
import sys as _sys  # noqa: E402
__all__ = sorted(name for name in dir() if not name.startswith("_") and
                 not hasattr(_builtins, name) and name not in _sys.stdlib_module_names)
