"""Optimizers (``eg.train.GradientDescentOptimizer``...), one implementation for both modes."""
__all__ = []
