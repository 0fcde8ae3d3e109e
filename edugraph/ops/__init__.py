"""All ops, grouped by family: maths, reductions, shapes, linear algebra, activations, random."""
from . import base, math, reduce, shape, linalg, activation, random, printing  # noqa: F401
