"""Optimizers (``eg.train.GradientDescentOptimizer``...), one implementation for both modes;
TF1's checkpoints (``eg.train.Saver``, ``latest_checkpoint``)."""
from .optimizer import (Optimizer, create_global_step, get_global_step,
                        get_or_create_global_step)
from .optimizers import (AdadeltaOptimizer, AdagradOptimizer, AdamOptimizer, FtrlOptimizer,
                         GradientDescentOptimizer, MomentumOptimizer,
                         ProximalAdagradOptimizer, ProximalGradientDescentOptimizer,
                         RMSPropOptimizer)
from .saver import CheckpointState, Saver, get_checkpoint_state, latest_checkpoint

__all__ = ["Optimizer", "create_global_step", "get_global_step", "get_or_create_global_step",
           "AdadeltaOptimizer", "AdagradOptimizer", "AdamOptimizer", "FtrlOptimizer",
           "GradientDescentOptimizer", "MomentumOptimizer", "ProximalAdagradOptimizer",
           "ProximalGradientDescentOptimizer", "RMSPropOptimizer", "Saver", "CheckpointState",
           "get_checkpoint_state", "latest_checkpoint"]
