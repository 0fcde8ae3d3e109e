"""``tf.compat``: ``edugraph.compat.v1`` is TF's migration idiom for TF1 code."""
from . import v1  # noqa: F401
