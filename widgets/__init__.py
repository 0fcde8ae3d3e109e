"""Jupyter widgets for edugraph: the graph inspector, the embedding projector and live
learning curves."""
from .inspector import GraphInspector
from .projector import Projector
from .gradient_flow import GradientFlow
from .training import TrainingPlot

__all__ = ["GradientFlow", "GraphInspector", "Projector", "TrainingPlot"]
