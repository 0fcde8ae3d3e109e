"""Keras-style models: ``eg.Sequential``, ``eg.Model`` (functional and subclassed), ``eg.Input``,
with ``compile`` / ``fit`` / ``evaluate`` / ``predict``, callbacks and weight saving."""
from . import callbacks, metrics, optimizers
from .model import Input, Model
from .sequential import Sequential

__all__ = ["Sequential", "Model", "Input", "callbacks"]
