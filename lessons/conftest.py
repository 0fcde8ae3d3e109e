"""nbval re-runs the lessons and compares their outputs with the stored ones.

The kernels it starts run with the BLAS settings the outputs were recorded with
(``python -m edugraph.exercises.record``, lessons/README.md, "Writing a lesson"): a training
curve's second digit depends on which matrix kernels OpenBLAS picks.
"""
from edugraph.exercises.record import use_lesson_environment

use_lesson_environment()
