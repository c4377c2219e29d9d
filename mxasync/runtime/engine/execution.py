"""Running ready ops: where each kind goes, the chain that runs what a completion readies, running a
sync op's fn with everything it may need (inherited errors, devices, profiling, cost timing), and
the asynchronous kinds: MXNet's ``fn(run_ctx, on_complete)`` callbacks and coroutine ops."""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING

from ..run_context import FnProperty
from .ops import _CALLBACK, _CORO, _NORMAL, _SIGNAL, _SYNC, _OnComplete, _Op

if TYPE_CHECKING:
    from .device_sync import DeviceSync
    from .errors import Errors
    from .grants import Grants
    from .placement import Placement
    from .threads import EngineLoop

__all__ = ["Runner"]

_DELETE_VAR = FnProperty.DELETE_VAR
_CPU_PRIORITIZED = FnProperty.CPU_PRIORITIZED
_perf = time.perf_counter


class Runner:
    """Runs ready ops.  What its hot paths call on the other collaborators is bound once here
    (``self._complete`` is ``Grants.complete``, ``self._should_inline`` is ``Placement.should_inline``...).

    ``slow`` is True while errors, devices, the profiler or shutdown need the full path; the
    engine sets it (``Engine._refresh_slow``).  ``profiler`` and ``shutdown`` are set by the
    engine's ``set_profiler`` and ``notify_shutdown``.
    """

    def __init__(self, grants: Grants, placement: Placement, errors: Errors, devices: DeviceSync,
                 loop: EngineLoop, tls):
        self.slow = False
        self.profiler = None
        self.shutdown = False
        self._complete = grants.complete
        self._placement = placement
        self._should_inline = placement.should_inline
        self._learn_cost = placement.learn_cost
        self._max_backlog = placement.max_backlog  # a setting, read once
        self._errors = errors
        self.make_error = errors.make
        self._devices = devices
        self._rc_cache = devices.cache
        self._loop = loop
        self._tls = tls

    # ------------------------------------------------------------ dispatch
    def dispatch(self, op: _Op) -> None:
        kind = op.kind
        if kind is _SYNC:
            if self._should_inline(op):
                self.run_chain(op)
                return
            pool = self._placement.pool()
            if len(pool.heap) >= self._max_backlog:
                # The workers are behind: the readying thread does the work itself.  This
                # bounds the ops (and the memory they hold) in flight when a loop pushes
                # faster than the pool drains, without ever blocking on a wait.
                self.run_chain(op)
            else:
                pool.submit(op, op.priority + (1 << 40 if op.prop is _CPU_PRIORITIZED else 0))
        elif kind is _CORO:
            self._loop.spawn(self._run_coro, op)
        else:
            self.run_chain(op)

    def run_in_worker(self, op: _Op) -> None:
        """What a pool thread does with an op it took."""
        try:
            self.run_chain(op, True)
        except BaseException:  # noqa: BLE001 - a worker never dies; the error is already on the op's vars
            pass

    def run_chain(self, op: _Op, in_worker: bool = False) -> None:
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
                    self.dispatch(r)
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

    def finish(self, op: _Op) -> None:
        """Complete an op that ran outside a chain (callback and coroutine ops)."""
        self.run_ready(self._complete(op))

    def run_ready(self, ready) -> None:
        """Start ops readied outside a chain: cheap ones here, the rest where they belong."""
        for r in ready:
            if r.kind is _SIGNAL or r.kind is _CALLBACK or (r.kind is _SYNC and self._should_inline(r)):
                self.run_chain(r)
            else:
                self.dispatch(r)

    def failed_at_once(self, fn, ctx, const_vars, mutate_vars, name, exc) -> None:
        """An op run at once (granted, not yet released) raised: its error lands on its vars as any
        op's; a BaseException (Ctrl-C, SystemExit) then reaches the pushing thread."""
        op = _Op(fn, _SYNC, ctx, const_vars, mutate_vars, _NORMAL, 0, name, True)
        op.err = self.make_error(op, exc)
        self.finish(op)
        if not isinstance(exc, Exception):
            raise exc

    # -------------------------------------------------------------- sync ops
    def _execute(self, op: _Op) -> _Op:
        """Run a ready sync op, capturing its error; returns ``op``."""
        cached = self._rc_cache.get(id(op.ctx))
        if self.slow or cached is None or op.inline is None:
            return self._execute_full(op)
        if op.err is not None:  # spoiled where it was granted a tainted var (errors.py)
            return op
        try:
            op.fn(cached[1])
        except BaseException as exc:  # noqa: BLE001 - every failure must land on the op's vars
            op.err = self.make_error(op, exc)
        return op

    def _execute_full(self, op: _Op) -> _Op:
        """:meth:`_execute` with errors to inherit, devices, profiling or cost timing."""
        if op.err is not None:  # spoiled where it was granted a tainted var (errors.py)
            return op
        if op.prop is _DELETE_VAR and self.shutdown:
            return op  # the process is going away; the OS takes the memory back
        devices = self._devices
        cached = self._rc_cache.get(id(op.ctx))
        rctx = cached[1] if cached is not None else devices.run_context(op.ctx, op.prop)
        if devices.used:
            devices.before(op, rctx)
        prof = self.profiler
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
            op.err = self.make_error(op, exc)
        if devices.used and rctx.stream is not None:
            devices.after(op, rctx)
        return op

    # ------------------------------------------------- callback and coroutine ops
    def _start_callback(self, op: _Op) -> None:
        """Start a callback op.  Ops readied by an ``on_complete`` called inside ``fn``
        are started after ``fn`` returns, so chains of them never recurse.  A ``fn`` that
        raises SystemExit or KeyboardInterrupt completes its op with that error like any
        other; the interrupt is raised again once every op of the chain started."""
        tls = self._tls
        if tls.starting is not None:
            tls.starting.append(op)
            return
        pending = tls.starting = [op]
        interrupt = None
        try:
            while pending:
                try:
                    self._start_one_callback(pending.pop(0))
                except BaseException as exc:  # noqa: BLE001 - the op completed; the rest must start
                    interrupt = interrupt or exc
        finally:
            tls.starting = None
        if interrupt is not None:
            raise interrupt

    def _start_one_callback(self, op: _Op) -> None:
        done = _OnComplete(self, op)
        if op.err is not None:  # spoiled (errors.py): complete it, carrying the error on
            done()
            return
        devices = self._devices
        rctx = devices.run_context(op.ctx, op.prop)
        if devices.used:
            devices.before(op, rctx)
        if self.profiler is not None:
            done.started = _perf()
        try:
            op.fn(rctx, done)
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the op must still complete
            if not done.called:
                done(exc)
            elif isinstance(exc, Exception):
                warnings.warn(f"engine: op {op.display_name()!r} raised after on_complete: {exc!r}",
                              RuntimeWarning, stacklevel=1)
            if not isinstance(exc, Exception):
                raise

    async def _run_coro(self, op: _Op) -> None:
        if op.err is None:  # else spoiled (errors.py): complete it, carrying the error on
            devices = self._devices
            rctx = devices.run_context(op.ctx, op.prop)
            if devices.used:
                devices.before(op, rctx)
            t0 = _perf()
            try:
                await op.fn(rctx)
            except BaseException as exc:  # noqa: BLE001 - includes cancellation of the engine loop
                op.err = self.make_error(op, exc)
            if devices.used and rctx.stream is not None:
                devices.after(op, rctx)
            prof = self.profiler
            if prof is not None:
                prof.record(op, t0, _perf())
        self.finish(op)
