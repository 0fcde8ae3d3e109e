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
