"""How freed array memory is handed back: a deliberate choice, made once when edugraph loads.

An eager training step allocates and frees the same few full-size arrays every step (each
layer's gradient, the loss's differences, the update's products). numpy takes them from the C
library's ``malloc``; on Linux that is glibc's, which

* maps an allocation of 128 KiB or more as fresh pages from the kernel (``mmap``), and
* gives the free memory at the top of its heap back to the kernel (``trim``) once more than
  128 KiB of it is free.

glibc raises both limits by itself the first time it unmaps an array (the mmap limit to that
array's size, at most 32 MiB; the trim limit to twice it), which is why a process that has
run for a while settles. A student's fresh kernel has not settled: when a step's temporaries
outgrow the raised trim limit, every step ends by handing its pages back and the next one
starts by faulting them in again, one page fault per 4 KiB. The lecture's two-layer step
(64×1000×100) in a student's fresh script paid 359 page faults and about 1 ms of kernel time a
step for it: twice the time of the same step written in numpy. Whether a loop faults depends on
what ran before it in the process (the same numpy step faults too after some histories), so
only the limits themselves make it predictable (``tests/test_allocator.py`` counts the
faults; the README's performance section has the measurements).

So edugraph starts where glibc's own adjustment ends: arrays under 32 MiB come from the heap,
and up to 64 MiB of freed memory stays with the process for the next step instead of going back
to the kernel. Peak memory does not change (an array needs the same bytes wherever it comes
from); the cost is that after a peak the process may keep up to 64 MiB more resident than glibc
would, for as long as it runs (measured: a process that frees 60 MiB of arrays keeps the 60 MiB,
where glibc's defaults give them back; once more than 64 MiB is free at the top, glibc trims
again: one that freed 95 MiB kept 31). Arrays of 32 MiB or more are still mapped and unmapped
one by one.

Nothing changes elsewhere than glibc (macOS, Windows, musl) or when glibc's own environment
variables ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` are set: then they decide.
"""
import ctypes
import os

MMAP_THRESHOLD = 32 * 2**20     # glibc's own ceiling for its dynamic mmap limit (64-bit)
TRIM_THRESHOLD = 2 * MMAP_THRESHOLD     # ... and the trim limit glibc pairs with it

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3      # mallopt's parameter numbers (malloc.h)
_ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")


def keep_freed_memory():
    """Set glibc's mmap and trim limits as described above; returns whether they were set."""
    if not _on_glibc() or any(name in os.environ for name in _ENVIRONMENT):
        return False
    mallopt = ctypes.CDLL(None).mallopt     # (the C library the interpreter runs on)
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


def _on_glibc():
    try:
        return os.confstr("CS_GNU_LIBC_VERSION").startswith("glibc")
    except (AttributeError, ValueError, OSError):   # (no confstr, or no such name: not glibc)
        return False


kept_freed_memory = keep_freed_memory()
