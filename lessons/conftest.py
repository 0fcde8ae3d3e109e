"""nbval re-runs the lessons and compares their outputs with the stored ones.

A lesson's training numbers depend on the matrix kernels OpenBLAS picks for the CPU: its
AVX-512 kernels add in another order than its AVX2 ones, and a few hundred training steps
(a chaotic recurrent net's above all) turn the last bit into the second digit. The outputs
are recorded with OpenBLAS's Haswell (AVX2) kernels, which every x86-64 CPU since 2013 has,
and the kernels nbval starts use the same ones (lessons/README.md, "Writing a lesson").
"""
import os
import platform

if platform.machine().lower() in ("x86_64", "amd64"):
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")
# The lessons' matrices are small: one BLAS thread computes the same numbers, and two threads
# on a busy 2-core machine wait on each other (a 100×64 by 64×512 product took 28 ms, not 0.2).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
