"""Jupyter widgets for edugraph: the graph inspector, the embedding projector and live
learning curves."""
from .inspector import GraphInspector
from .projector import Projector
from .training import TrainingPlot

__all__ = ["GraphInspector", "Projector", "TrainingPlot"]
