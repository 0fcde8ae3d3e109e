"""Static mode (TF1): Graph, placeholder, Session, gradients, control flow, traced functions."""
__all__ = []
