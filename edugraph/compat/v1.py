"""TF's migration idiom, so that a TF1 program runs with its ``tf.`` lines untouched::

    import edugraph.compat.v1 as tf          # for: import tensorflow as tf   (TF 1.x)
    tf.disable_v2_behavior()                 # TF1's graphs and Sessions by default

    x = tf.placeholder(tf.float32, shape=(None, 3))
    ...

Every name of ``edugraph`` is here (``tf.placeholder``, ``tf.Session``, ``tf.train.Saver``,
``tf.summary.FileWriter``, ``tf.nn.dropout``...), plus ``disable_v2_behavior`` and
``enable_v2_behavior``. With the v2 behaviour disabled, ops build into the default graph.

``tf.nn`` is ``eg.nn`` but for two of TF1's functions. Its cross-entropy functions take named
arguments only, as TF 1.x's did (TF 2's ``tf.compat.v1`` reads them as (labels, logits)):
old tutorials call them with (logits, labels), the order before TF 1.0, and read positionally
that would silently compute the loss of the swapped arguments.
Its ``dropout(h, keep_prob)`` reads the second argument as TF1's keep_prob, eagerly too.
``tf.data`` is ``eg.data`` with TF1's ``make_one_shot_iterator(dataset)`` and
``make_initializable_iterator(dataset)``. ``tf.argmax(x)`` works along axis 0, as TF's.
"""
import functools
import types

import numpy as np

import edugraph as _edugraph
from edugraph.graph import disable_eager_execution, enable_eager_execution


def disable_v2_behavior():
    """TF1's behaviour: ops build into the default graph, run by a Session (TF2's other
    changes, such as resource variables, have no counterpart to switch here)."""
    disable_eager_execution()


def enable_v2_behavior():
    """TF2's behaviour again: eager execution."""
    enable_eager_execution()


def set_random_seed(seed):
    """TF1's ``tf.set_random_seed``: ``eg.random.set_seed``. TF1's seeds the default graph's
    random ops; edugraph's seeds every random op made after it, in any graph (so runs repeat
    also after ``reset_default_graph``)."""
    _edugraph.random.set_seed(seed)


def div(x, y, name=None):
    """TF1's ``tf.div``: Python 2's ``/``, which floors whole numbers (``tf.div(-7, 2)`` is -4,
    int32) and divides floats (``eg.div`` is PyTorch's, which always divides: -3.5)."""
    if _whole(x) and _whole(y):
        if not (hasattr(x, "dtype") or hasattr(y, "dtype")):   # Python numbers: TF's int32
            x = _edugraph.constant(x)
        return _edugraph.floordiv(x, y, name=name)
    return _edugraph.divide(x, y, name=name)


def _whole(value):
    dtype = getattr(value, "dtype", None)
    return (np.dtype(dtype) if dtype is not None else np.asarray(value).dtype).kind in "iu"


def _named_arguments_only(function, name=None):
    """TF1's ``function`` (``tf.nn.name``): refuses positional arguments (TF 1.x had a
    ``_sentinel`` first)."""
    name = name or function.__name__

    @functools.wraps(function)
    def named_only(*args, **kwargs):
        if args:
            raise ValueError(
                f"Only call `{name}` with named arguments (labels=..., logits=..., ...), as "
                f"TF1 requires: tf.nn.{name}(labels=y, logits=logits). Old tutorials pass "
                "(logits, labels) by position, and read in today's order that would swap "
                "them.")
        return function(**kwargs)
    named_only.__name__ = name
    return named_only


def _tf1_module(name, doc):
    """``tf.<name>`` of TF1: edugraph's module of that name but for the names set on this one
    (looked up when asked, as ``__getattr__`` below: edugraph may still be importing)."""
    module = types.ModuleType(f"{__name__}.{name}", doc)
    module.__getattr__ = lambda attr: getattr(getattr(_edugraph, name), attr)
    module.__dir__ = lambda: sorted(set(vars(module)) | set(dir(getattr(_edugraph, name))))
    return module


nn = _tf1_module("nn", "``tf.nn`` of TF1: ``eg.nn``, its cross-entropy functions taking named "
                 "arguments only, and its dropout reading keep_prob.")

nn.softmax_cross_entropy_with_logits = _named_arguments_only(
    _edugraph.losses.tf1_softmax_cross_entropy_with_logits, "softmax_cross_entropy_with_logits")
nn.softmax_cross_entropy_with_logits_v2 = _named_arguments_only(
    _edugraph.nn.softmax_cross_entropy_with_logits, "softmax_cross_entropy_with_logits_v2")
nn.sparse_softmax_cross_entropy_with_logits = _named_arguments_only(
    _edugraph.nn.sparse_softmax_cross_entropy_with_logits)
nn.sigmoid_cross_entropy_with_logits = _named_arguments_only(
    _edugraph.nn.sigmoid_cross_entropy_with_logits)


def _tf1_dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """TF1's ``tf.nn.dropout``, which ``tf.compat.v1.nn`` keeps in TF2: its second argument
    is ``keep_prob`` wherever it runs, eagerly too (``eg.nn.dropout`` has to read it as the
    code around it is written)."""
    if keep_prob is None and rate is None:
        raise ValueError("tf.nn.dropout needs keep_prob (the fraction of units kept) or rate "
                         "(the fraction dropped), e.g. tf.nn.dropout(h, keep_prob=0.9).")
    return _edugraph.nn.dropout(x, noise_shape=noise_shape, seed=seed, name=name, rate=rate,
                                keep_prob=keep_prob)


nn.dropout = _tf1_dropout

# TF1's tf.argmax / tf.argmin: along axis 0 without one (eg.argmax asks, because PyTorch's
# flattens; TF1 code has no PyTorch to be told apart from)
argmax, argmin = _edugraph.math.argmax, _edugraph.math.argmin

data = _tf1_module("data", "``tf.data`` of TF1: ``eg.data``, with TF1's functions that make a "
                   "dataset's iterator.")
data.make_one_shot_iterator = lambda dataset: dataset.make_one_shot_iterator()
data.make_initializable_iterator = lambda dataset: dataset.make_initializable_iterator()


def __getattr__(name):
    """Any other name is edugraph's (read when asked: this module may be imported while
    edugraph itself is still being imported)."""
    return getattr(_edugraph, name)


def __dir__():
    return sorted(set(globals()) | set(dir(_edugraph)))
