"""How busy the machine is right now: the kernel's count of runnable threads.

The numpy backend's CPU policy asks this before handing a kernel more than one core
(the engine's BLAS threads, the kernel threads of ``parallel``): a multithreaded kernel
is as slow as its slowest thread, and on busy cores a thread that waits for a time slice
stalls the whole call. ``/proc/loadavg``'s fourth field counts the runnable threads at
the moment it is read (the reader included); it is sampled at most every 20 ms through a
descriptor kept open (a pread costs ~2 µs, an open ~20 µs, far more on a busy machine).
Where it cannot be read (not Linux) nothing else is assumed to run.
"""

from __future__ import annotations

import os
import time

__all__ = ["runnable_elsewhere"]

_SAMPLE_S = 0.02
_at = -1.0
_value = 0
_fd = None


def runnable_elsewhere() -> int:
    """Threads runnable on the machine besides the caller (0 when unknown)."""
    global _at, _value, _fd
    now = time.monotonic()
    if now - _at > _SAMPLE_S:
        _at = now
        try:
            if _fd is None:
                _fd = os.open("/proc/loadavg", os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            _value = max(0, int(os.pread(_fd, 128, 0).split()[3].split(b"/")[0]) - 1)
        except (OSError, ValueError, IndexError, AttributeError):
            _value = 0
    return _value
