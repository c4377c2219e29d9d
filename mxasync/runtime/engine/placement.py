"""Where a ready op runs: inline in the readying thread, on the worker pool, and how far ahead a pusher may get.

A thread hop costs ~90 µs here against ~2 µs for a whole tiny op, so cheap
sync ops run in the thread that readied them and heavy ones go to the pool.
"Cheap" comes from the caller's hint or from the op's measured cost.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from asyncio import _get_running_loop as _running_loop
from typing import TYPE_CHECKING, Any

from ...base import env_float, env_int
from ..run_context import FnProperty
from ..streams import device_hooks
from .ops import _Op
from .threads import EngineLoop, WorkerPool

if TYPE_CHECKING:
    from .execution import Runner
    from .grants import Grants

__all__ = ["Placement"]

_perf = time.perf_counter
_COPY_LANES = (FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU)


def _launches(op: _Op) -> bool:
    """True for an op that launches on an asynchronous device's compute stream (it returns at once).
    Copies keep the measured placement: a copy to or from host memory may block."""
    ctx = op.ctx
    return ctx is not None and op.prop not in _COPY_LANES and device_hooks(ctx.device_type) is not None


class Placement:
    """The cost model (measured cost per op key), the worker pool, and the push throttle."""

    def __init__(self, num_workers: int, loop: EngineLoop, grants: Grants):
        self.num_workers = num_workers
        # Ops measured below this many seconds run in the thread that readied them.
        self.inline_threshold = env_float(50.0, "MXASYNC_INLINE_THRESHOLD_US") * 1e-6
        self.yield_above = env_int(256, "MXASYNC_MAX_LEAD_OPS")
        self.throttle_seconds = env_float(2.0, "MXASYNC_THROTTLE_MS") * 1e-3
        self.max_backlog = env_int(4 * num_workers, "MXASYNC_POOL_BACKLOG")
        self.cost: dict[Any, float] = {}
        self._sample = 0
        self.workers: WorkerPool | None = None  # made on first use by :meth:`pool`
        self._pool_lock = threading.Lock()
        self._loop = loop
        self._grants = grants
        self._stalled_at = 0  # the pending count when the throttle last found nothing finishing
        self._skipped = 0  # throttles skipped since (it looks again after yield_above of them)

    def connect(self, runner: Runner) -> None:
        self._run_in_worker = runner.run_in_worker
        self._run_chain = runner.run_chain

    def should_inline(self, op: _Op) -> bool:
        """Decide where a ready sync op runs; unhinted ops go by their measured cost.

        Unknown ops go to the pool (a push must never block on a long op) and
        are timed there; known ones are re-timed one run in 32 so a cost that
        grows is noticed.  An op on an asynchronous device's compute stream only
        launches its kernels, so it always runs in the readying thread: no hop.
        """
        inline = op.inline
        if inline is None:
            key = op.key = op.name or getattr(op.fn, "__code__", op.fn)
            cost = self.cost.get(key)
            if cost is None:
                if _launches(op):
                    op.inline = True
                    return True
                return False
            self._sample = sample = (self._sample + 1) & 31
            inline = cost < self.inline_threshold
            if sample:
                op.inline = inline  # decided: no timing this run
        return inline

    def learn_cost(self, key, seconds: float) -> None:
        """Track an op's cost as a decaying minimum.

        A sample can be inflated by waiting for the GIL (up to the 5 ms switch
        interval) but never deflated, so the minimum is the honest estimate;
        letting it grow by 1.5x per larger sample still follows a real increase.
        """
        old = self.cost.get(key)
        self.cost[key] = seconds if old is None or seconds < old else min(seconds, old * 1.5)

    def in_worker(self) -> bool:
        """True in one of the pool's threads."""
        pool = self.workers
        return pool is not None and threading.get_ident() in pool.idents

    def throttle(self) -> None:
        """Let the workers catch up when a thread pushes far ahead of them.

        Every pushed op holds its output memory until it runs, so an unbounded
        lead turns a loop of temporaries into a loop of allocations.  The pushing
        thread brings its lead down to half: it runs the ops waiting for a worker
        itself (as a wait does), and otherwise sleeps while ops keep finishing.
        It never waits on a dependency: when nothing finished for
        ``MXASYNC_THROTTLE_MS``, the pending ops wait for something else (maybe
        something this thread has yet to do), so it stops waiting and only looks
        again every ``MXASYNC_MAX_LEAD_OPS`` pushes, or once ops finish again.
        A long dependent chain is then pushed at the speed it runs, and one stuck
        behind a blocked op is pushed at full speed.  Engine threads never wait.
        """
        grants = self._grants
        if self._stalled_at:
            if grants.pending >= self._stalled_at and self._skipped < self.yield_above:
                self._skipped += 1
                return
            self._stalled_at = 0
        if self._loop.in_loop_thread() or self.in_worker():
            return
        # A thread running an event loop (async code pushing) never runs others' ops and waits at
        # most MXASYNC_THROTTLE_MS per push: its loop has other tasks to serve.
        serving = _running_loop() is not None
        low = self.yield_above // 2
        patience = self.throttle_seconds
        deadline = _perf() + patience
        last = grants.pending
        finishing = False  # whether any op finished while this thread waited
        while last > low:
            pool = self.workers
            op = pool.try_take() if pool is not None and not serving else None
            if op is not None:
                try:
                    self._run_chain(op, True)
                except KeyboardInterrupt:  # the user's Ctrl-C, landed while this thread ran the op
                    raise
                except BaseException:  # noqa: BLE001, S110 - as on a worker: the error is on the op's vars
                    pass
            elif _perf() >= deadline:
                if not finishing:
                    self._stalled_at = last  # nothing finishes: stop waiting until something does
                    self._skipped = 0
                return
            else:
                time.sleep(5e-5)
            pending = grants.pending
            if pending < last:
                finishing = True
                if not serving:
                    deadline = _perf() + patience  # ops are finishing: worth waiting for
            last = pending

    def pool(self) -> WorkerPool:
        """The worker pool, started on first use."""
        pool = self.workers
        if pool is None:
            with self._pool_lock:
                if self.workers is None:
                    # The GIL switch interval is process-wide: the engine leaves it alone unless asked (see
                    # docs/architecture.md).  BLAS threads are never touched: the engine's GEMMs run on its own
                    # BLAS instance (mxasync.backends.numpy.blas), whose count is the engine's alone.
                    interval = os.environ.get("MXASYNC_SWITCH_INTERVAL_US")
                    if interval and float(interval) * 1e-6 < sys.getswitchinterval():
                        sys.setswitchinterval(float(interval) * 1e-6)
                    self.workers = WorkerPool(self._run_in_worker, self.num_workers)
                pool = self.workers
        return pool

    def stop(self) -> None:
        """Stop the worker threads (after the ops already queued)."""
        if self.workers is not None:
            self.workers.stop()
            self.workers = None
