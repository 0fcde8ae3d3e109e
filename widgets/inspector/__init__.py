"""Graph inspector: a computation's graph with values and gradients on every node."""
from .widget import GraphInspector

__all__ = ["GraphInspector"]
