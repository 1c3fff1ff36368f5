"""glibc's allocator, set for training on the CPU.

Measured on the 2-core machine (issue 15): an SFT step spent more system time than user time, because
glibc serves every large buffer (attention's T×T scores, activations) with a fresh ``mmap`` and
returns it with ``munmap`` when freed, so each micro-batch faults its pages in again. With mmap off for
the heap (``M_MMAP_MAX`` 0) and large trim and top-pad thresholds, freed buffers stay in the heap and
the next micro-batch reuses them: warm micro-batches ran 2.9-4.7x faster. The price is that the peak
stays resident (micro-batch 4 at 2,802 tokens: 10.4 GB). These are the ``MALLOC_MMAP_MAX_``,
``MALLOC_TRIM_THRESHOLD_`` and ``MALLOC_TOP_PAD_`` settings, applied from inside the process with
``mallopt`` so that every launch (``rehearse train``, ``npm run train:default``, ``python3 -m
trainer``) gets them. ``REHEARSAL_MALLOC=default`` leaves glibc as it is; a ``MALLOC_*_`` variable set by
the caller wins over the value here.
"""
import ctypes
import os
import sys

# mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_TOP_PAD = -2
_M_MMAP_MAX = -4

_SETTINGS = (
    (_M_MMAP_MAX, "MALLOC_MMAP_MAX_", 0),
    (_M_TRIM_THRESHOLD, "MALLOC_TRIM_THRESHOLD_", 1 << 30),
    (_M_TOP_PAD, "MALLOC_TOP_PAD_", 256 << 20),
)


def tune() -> str:
    """Applies the settings above; returns ``"tuned"``, or ``"default"`` when off or not glibc."""
    if os.environ.get("REHEARSAL_MALLOC", "tuned") == "default" or not sys.platform.startswith("linux"):
        return "default"
    try:
        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return "default"
    for param, env_name, value in _SETTINGS:
        if env_name not in os.environ and mallopt(param, value) != 1:
            return "default"
    return "tuned"
