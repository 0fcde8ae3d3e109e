"""``tf.contrib``: of TF 1.x's contributed modules, edugraph keeps the eager preview that the
lecture shows (``edugraph.contrib.eager``)."""
from . import eager  # noqa: F401
