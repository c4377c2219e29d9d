"""Running ready ops: where each kind goes, the chain that runs what a completion readies, and
running a sync op's fn with everything it may need (inherited errors, devices, profiling, cost timing)."""

from __future__ import annotations

import time

from .op_block import _CALLBACK, _CORO, _SIGNAL, _SYNC, _Op
from .run_context import FnProperty

__all__ = ["ExecutionMixin"]

_DELETE_VAR = FnProperty.DELETE_VAR
_CPU_PRIORITIZED = FnProperty.CPU_PRIORITIZED
_perf = time.perf_counter


class ExecutionMixin:
    def _dispatch(self, op: _Op) -> None:
        kind = op.kind
        if kind is _SYNC:
            if self._should_inline(op):
                self._run_chain(op)
                return
            pool = self._worker_pool()
            if len(pool.heap) >= self.max_backlog:
                # The workers are behind: the readying thread does the work itself.  This
                # bounds the ops (and the memory they hold) in flight when a loop pushes
                # faster than the pool drains, without ever blocking on a wait.
                self._run_chain(op)
            else:
                pool.submit(op, op.priority + (1 << 40 if op.prop is _CPU_PRIORITIZED else 0))
        elif kind is _CORO:
            self._loop.spawn(self._run_coro, op)
        else:
            self._run_chain(op)

    def _run_chain(self, op: _Op, in_worker: bool = False) -> None:
        """Run ``op`` and then every inline op it readies, in this thread, without recursion.

        On a worker, the first heavy op that a completion readies is kept too: a
        dependent chain of big ops then stays on one thread instead of paying a
        wake-up per op; any other heavy ops go to the pool for the idle workers.
        """
        stack = None
        interrupt = None
        while True:
            if op.kind is _SYNC:
                ready = self._complete(self._execute(op))
                if op.err is not None and not isinstance(op.err.exc.__cause__, Exception) and op.err.op_name == op.display_name():
                    interrupt = op.err.exc.__cause__  # KeyboardInterrupt in an inline op: finish, then raise
            elif op.kind is _SIGNAL:
                ready = self._complete(op)
                op.fn()
            else:
                ready = ()
                try:
                    self._start_callback(op)
                except BaseException as exc:  # noqa: BLE001 - SystemExit in a callback's fn: finish the chain first
                    interrupt = interrupt or exc
            keep_heavy = in_worker
            for r in ready:
                if r.kind is _SIGNAL or (r.kind is _SYNC and self._should_inline(r)):
                    pass
                elif keep_heavy and r.kind is _SYNC:
                    keep_heavy = False
                else:
                    self._dispatch(r)
                    continue
                if stack is None:
                    stack = [r]
                else:
                    stack.append(r)
            if not stack:
                break
            op = stack.pop()
        if interrupt is not None:
            raise interrupt

    def _execute(self, op: _Op) -> _Op:
        """Run a ready sync op, capturing its error; returns ``op``."""
        cached = self._rc_cache.get(id(op.ctx))
        if self._slow or cached is None or op.inline is None:
            return self._execute_full(op)
        try:
            op.fn(cached[1])
        except BaseException as exc:  # noqa: BLE001 - every failure must land on the op's vars
            op.err = self._make_error(op, exc)
        return op

    def _execute_full(self, op: _Op) -> _Op:
        """:meth:`_execute` with errors to inherit, devices, profiling or cost timing."""
        if self._live_errors and op.prop is not _DELETE_VAR and self._inherit_error(op):
            return op
        if op.prop is _DELETE_VAR and self._shutdown:
            return op  # the process is going away; the OS takes the memory back
        cached = self._rc_cache.get(id(op.ctx))
        rctx = cached[1] if cached is not None else self._run_context(op.ctx, op.prop)
        if self._device_used:
            self._device_before(op, rctx)
        prof = self._profiler
        timed = op.inline is None
        try:
            if timed or prof is not None:
                t0 = _perf()
                op.fn(rctx)
                t1 = _perf()
                if timed:
                    self._learn_cost(op.key, t1 - t0)
                if prof is not None:
                    prof.record(op, t0, t1)
            else:
                op.fn(rctx)
        except BaseException as exc:  # noqa: BLE001 - every failure must land on the op's vars
            op.err = self._make_error(op, exc)
        if self._device_used and rctx.stream is not None:
            self._device_after(op, rctx)
        return op

    def _finish(self, op: _Op) -> None:
        """Complete an op that ran outside a chain (callback and coroutine ops)."""
        self._run_ready(self._complete(op))

    def _run_ready(self, ready) -> None:
        """Start ops readied outside a chain: cheap ones here, the rest where they belong."""
        for r in ready:
            if r.kind is _SIGNAL or r.kind is _CALLBACK or (r.kind is _SYNC and self._should_inline(r)):
                self._run_chain(r)
            else:
                self._dispatch(r)
