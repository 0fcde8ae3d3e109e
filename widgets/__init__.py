"""Jupyter widgets for edugraph: the graph inspector and the embedding projector."""
from .inspector import GraphInspector
from .projector import Projector

__all__ = ["GraphInspector", "Projector"]
