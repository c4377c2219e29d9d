"""Intra-op parallelism for numpy kernels: split one big kernel into chunks run on a few threads.

numpy releases the GIL inside its loops (copies, ufuncs, reductions), so a kernel cut
by batch or channel into chunks runs them on several cores at once. The threads are
this backend's own (never the engine's workers: an op must not wait on the engine), and
``split`` never waits for a busy helper: the calling thread runs chunk 0 and then takes
every chunk no helper has picked up yet, so on a loaded machine it degrades to running
the kernel itself. Nothing process-wide changes (no BLAS threads, no switch interval).

*Where* a kernel is cut is a function of its size and the configured thread count only,
never of the machine's load or of the thread it runs in: a chunk's result may differ in
its last bits from the same values computed whole (numpy sums a one-channel slice of a
BatchNorm input in another order than the whole), so a cut that followed the load made
identical passes differ (issue 25, 5a: MobileNet's gradients by up to 3% of their largest
value, after BatchNorm's cancellations). The load decides only *who* runs the chunks:
helper threads while a core is idle (``/proc/loadavg``), else the calling thread, chunk
after chunk.

``MXASYNC_KERNEL_THREADS`` sets the threads one kernel may use (default: the cores this
process may run on; 1 turns splitting off). The cut follows it; the kernels that split give
the bits of one whole call however they are cut (``tests/operator/kernels/test_kernel_split.py``).

>>> import numpy as np
>>> from mxasync.backends.numpy import parallel
>>> x = np.arange(10.0); out = np.empty_like(x)
>>> parallel.split(lambda lo, hi: np.multiply(x[lo:hi], 2, out=out[lo:hi]), 10, min_size=1)
>>> float(out[-1])
18.0
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

from ...runtime.engine.threads import cpu_count
from . import pressure

__all__ = ["split", "nthreads", "worth_splitting", "MIN_ELEMENTS"]

# Elements below which one kernel is not split: a thread hand-over costs 30-100 µs on an idle
# 2-core machine (far more on a loaded one), and the GIL passes back and forth between the
# chunks' numpy calls. Measured on 2 idle cores (2026-11-26): LeNet's step (tensors of 0.7-2M)
# ran 17.6-19.6 ms splitting above 512k and 16.4-17.3 ms above 4M; ResNet-18's (1.6-14M)
# 651-658 against 655-674 ms.
MIN_ELEMENTS = 1 << 22

_local = threading.local()  # .helper: True inside a helper thread (no nested splitting there)


_cores = cpu_count  # the cores this process may run on (the engine's own count)


def _configured() -> int:
    raw = os.environ.get("MXASYNC_KERNEL_THREADS", "").strip()
    if raw:
        try:
            return max(1, int(raw))
        except ValueError:
            pass
    return _cores()


_NTHREADS = _configured()


#: Hand chunks to helper threads only when a core is idle: on busy cores a helper waits for a time
#: slice while it holds a chunk, and every extra thread makes the GIL holder likelier to be preempted
#: (LeNet's step measured +30% CPU time split on 2 cores at load 5). It never changes the cut, only
#: who runs the chunks. Tests turn it off to force helpers.
CHECK_LOAD = True


def idle_cores() -> int:
    """Cores with nothing runnable on them besides the caller (see :mod:`.pressure`)."""
    return max(0, _cores() - 1 - pressure.runnable_elsewhere())


def nthreads() -> int:
    """Threads one kernel may use (the caller counts as one): the configured count, which sets the cut."""
    return _NTHREADS


def worth_splitting(elements: int) -> bool:
    """Whether a kernel touching ``elements`` values is cut into chunks: by its size and the configured
    thread count only (never the load, never the calling thread), so that its bits never depend on timing."""
    return _NTHREADS > 1 and elements >= MIN_ELEMENTS


def _helpers_wanted(chunks: int) -> int:
    """Helper threads to hand a job of ``chunks`` chunks to now: none inside a helper (nested) or
    while no core is idle; the caller then runs every chunk itself."""
    if getattr(_local, "helper", False) or (CHECK_LOAD and idle_cores() <= 0):
        return 0
    return min(chunks, _NTHREADS) - 1


class _Job:
    """One split kernel: chunks are claimed one at a time by whoever comes first."""

    __slots__ = ("fn", "bounds", "next", "lock", "pending", "done", "error")

    def __init__(self, fn: Callable[[int, int], object], bounds: list[tuple[int, int]]):
        self.fn, self.bounds = fn, bounds
        self.next = 0
        self.lock = threading.Lock()
        self.pending = len(bounds)
        self.done = threading.Event()
        self.error: BaseException | None = None

    def claim(self) -> tuple[int, int] | None:
        with self.lock:
            i = self.next
            if i >= len(self.bounds):
                return None
            self.next = i + 1
            return self.bounds[i]

    def work(self) -> None:
        while (b := self.claim()) is not None:
            try:
                if self.error is None:
                    self.fn(*b)
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, which re-raises
                self.error = exc
            finally:
                with self.lock:
                    self.pending -= 1
                    last = self.pending == 0
                if last:
                    self.done.set()


class _Helpers:
    """Daemon threads taking jobs from one queue; started on first use."""

    def __init__(self, n: int):
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.threads = [threading.Thread(target=self._main, name=f"mxasync-kernel-{i}", daemon=True)
                        for i in range(n)]
        for t in self.threads:
            t.start()

    def _main(self) -> None:
        _local.helper = True
        get = self.queue.get
        while True:
            job = get()
            job.work()


_helpers: _Helpers | None = None
_start_lock = threading.Lock()


def _pool() -> _Helpers:
    global _helpers
    if _helpers is None:
        with _start_lock:
            if _helpers is None:
                _helpers = _Helpers(_NTHREADS - 1)
    return _helpers


def _forget_helpers() -> None:  # a forked child has none of the parent's threads
    global _helpers
    _helpers = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helpers)


def _bounds(n: int, parts: int) -> list[tuple[int, int]]:
    step, extra = divmod(n, parts)
    out, lo = [], 0
    for i in range(parts):
        hi = lo + step + (1 if i < extra else 0)
        out.append((lo, hi))
        lo = hi
    return out


def split(fn: Callable[[int, int], object], n: int, min_size: int = 1, parts: int | None = None) -> None:
    """Run ``fn(lo, hi)`` over ``range(n)`` cut into up to ``parts`` ranges (default: two per thread) of at
    least ``min_size``.

    The ranges depend on ``n``, ``min_size``, ``parts`` and the configured thread count only.
    Chunk 0 runs in the calling thread, which then runs any chunk no helper took (all of them
    when no core is idle, or inside a helper); it returns when every chunk is done and
    re-raises the first error of any. ``fn`` must write disjoint outputs per range (it runs
    concurrently with itself).
    """
    # two chunks per thread: when a helper is slow to start (a loaded machine), the caller takes more
    k = 2 * _NTHREADS if parts is None else min(parts, 2 * _NTHREADS)
    if _NTHREADS <= 1:
        k = 1
    k = max(1, min(k, n // max(1, min_size)))
    if k <= 1:
        if n > 0:
            fn(0, n)
        return
    job = _Job(fn, _bounds(n, k))
    helpers = _helpers_wanted(k)
    if helpers:
        put = _pool().queue.put
        for _ in range(helpers):
            put(job)
    job.work()  # chunk 0 and whatever is left unclaimed
    job.done.wait()
    if job.error is not None:
        raise job.error
