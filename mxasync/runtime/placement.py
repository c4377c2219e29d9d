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

from .op_block import _Op
from .threads import WorkerPool

__all__ = ["PlacementMixin"]

_perf = time.perf_counter


class PlacementMixin:
    def _should_inline(self, op: _Op) -> bool:
        """Decide where a ready sync op runs; unhinted ops go by their measured cost.

        Unknown ops go to the pool (a push must never block on a long op) and
        are timed there; known ones are re-timed one run in 32 so a cost that
        grows is noticed.
        """
        inline = op.inline
        if inline is None:
            key = op.key = op.name or getattr(op.fn, "__code__", op.fn)
            cost = self._cost.get(key)
            if cost is None:
                return False
            self._sample = sample = (self._sample + 1) & 31
            inline = cost < self.inline_threshold
            if sample:
                op.inline = inline  # decided: no timing this run
        return inline

    def _throttle(self) -> None:
        """Let the workers catch up when a thread pushes far ahead of them.

        Every pushed op holds its output memory until it runs, so an unbounded
        lead turns a loop of temporaries into a loop of allocations.  The
        pushing thread waits until half the lead is gone, but never more than
        ``MXASYNC_THROTTLE_MS`` per push: ops that wait for something this
        thread has yet to do can never deadlock it.  Engine threads never wait.
        """
        if self._loop.in_loop_thread():
            return
        pool = self._pool
        if pool is not None and threading.get_ident() in pool.idents:
            return
        low = self.yield_above // 2
        deadline = _perf() + self.throttle_seconds
        time.sleep(0)
        while self._pending > low and _perf() < deadline:
            time.sleep(5e-5)

    def _learn_cost(self, key, seconds: float) -> None:
        """Track an op's cost as a decaying minimum.

        A sample can be inflated by waiting for the GIL (up to the 5 ms switch
        interval) but never deflated, so the minimum is the honest estimate;
        letting it grow by 1.5x per larger sample still follows a real increase.
        """
        old = self._cost.get(key)
        self._cost[key] = seconds if old is None or seconds < old else min(seconds, old * 1.5)

    def _run_in_worker(self, op: _Op) -> None:
        try:
            self._run_chain(op, True)
        except BaseException:  # noqa: BLE001 - a worker never dies; the error is already on the op's vars
            pass

    def _worker_pool(self) -> WorkerPool:
        pool = self._pool
        if pool is None:
            with self._pool_lock:
                if self._pool is None:
                    # The GIL switch interval is process-wide: the engine leaves it alone unless asked (see
                    # docs/architecture.md).  BLAS threads are never touched: the engine's GEMMs run on its own
                    # BLAS instance (mxasync.backends.numpy.blas), whose count is the engine's alone.
                    interval = os.environ.get("MXASYNC_SWITCH_INTERVAL_US")
                    if interval and float(interval) * 1e-6 < sys.getswitchinterval():
                        sys.setswitchinterval(float(interval) * 1e-6)
                    self._pool = WorkerPool(self._run_in_worker, self.num_workers)
                pool = self._pool
        return pool
