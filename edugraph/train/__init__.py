"""Optimizers (``eg.train.GradientDescentOptimizer``...), one implementation for both modes."""
from .optimizer import (Optimizer, create_global_step, get_global_step,
                        get_or_create_global_step)
from .optimizers import (AdadeltaOptimizer, AdagradOptimizer, AdamOptimizer, FtrlOptimizer,
                         GradientDescentOptimizer, MomentumOptimizer,
                         ProximalAdagradOptimizer, ProximalGradientDescentOptimizer,
                         RMSPropOptimizer)

__all__ = ["Optimizer", "create_global_step", "get_global_step", "get_or_create_global_step",
           "AdadeltaOptimizer", "AdagradOptimizer", "AdamOptimizer", "FtrlOptimizer",
           "GradientDescentOptimizer", "MomentumOptimizer", "ProximalAdagradOptimizer",
           "ProximalGradientDescentOptimizer", "RMSPropOptimizer"]
