"""The projector's neighbours and analogies: edugraph's own (``edugraph.neighbours``)."""
from edugraph.neighbours import METRICS, analogy, distances, nearest, neighbours  # noqa: F401
