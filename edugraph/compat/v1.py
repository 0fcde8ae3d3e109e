"""TF's migration idiom, so that a TF1 program runs with its ``tf.`` lines untouched::

    import edugraph.compat.v1 as tf          # for: import tensorflow as tf   (TF 1.x)
    tf.disable_v2_behavior()                 # TF1's graphs and Sessions by default

    x = tf.placeholder(tf.float32, shape=(None, 3))
    ...

Every name of ``edugraph`` is here (``tf.placeholder``, ``tf.Session``, ``tf.train.Saver``,
``tf.summary.FileWriter``, ``tf.nn.dropout``...), plus ``disable_v2_behavior`` and
``enable_v2_behavior``. With the v2 behaviour disabled, ops build into the default graph,
and ``tf.nn.dropout(h, keep_prob)`` reads its second argument as TF1's keep_prob.
"""
import edugraph as _edugraph
from edugraph.graph import disable_eager_execution, enable_eager_execution


def disable_v2_behavior():
    """TF1's behaviour: ops build into the default graph, run by a Session (TF2's other
    changes, such as resource variables, have no counterpart to switch here)."""
    disable_eager_execution()


def enable_v2_behavior():
    """TF2's behaviour again: eager execution."""
    enable_eager_execution()


def __getattr__(name):
    """Any other name is edugraph's (read when asked: this module may be imported while
    edugraph itself is still being imported)."""
    return getattr(_edugraph, name)


def __dir__():
    return sorted(set(globals()) | set(dir(_edugraph)))
