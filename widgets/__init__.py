"""Jupyter widgets for edugraph: the graph inspector and the embedding projector."""
