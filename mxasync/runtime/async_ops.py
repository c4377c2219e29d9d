"""Asynchronous ops: MXNet's ``fn(run_ctx, on_complete)`` callbacks and coroutine ops on the engine loop."""

from __future__ import annotations

import time

from .op_block import _OnComplete, _Op

__all__ = ["AsyncOpsMixin"]

_perf = time.perf_counter


class AsyncOpsMixin:
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
        if self._live_errors and self._inherit_error(op):
            done()
            return
        rctx = self._run_context(op.ctx, op.prop)
        if self._device_used:
            self._device_before(op, rctx)
        if self._profiler is not None:
            done.started = _perf()
        try:
            op.fn(rctx, done)
        except BaseException as exc:  # noqa: BLE001 - SystemExit too: the op must still complete
            if not done.called:
                done(exc)
            elif isinstance(exc, Exception):
                import warnings

                warnings.warn(f"engine: op {op.display_name()!r} raised after on_complete: {exc!r}",
                              RuntimeWarning, stacklevel=1)
            if not isinstance(exc, Exception):
                raise

    async def _run_coro(self, op: _Op) -> None:
        if not (self._live_errors and self._inherit_error(op)):
            rctx = self._run_context(op.ctx, op.prop)
            if self._device_used:
                self._device_before(op, rctx)
            t0 = _perf()
            try:
                await op.fn(rctx)
            except BaseException as exc:  # noqa: BLE001 - includes cancellation of the engine loop
                op.err = self._make_error(op, exc)
            if self._device_used and rctx.stream is not None:
                self._device_after(op, rctx)
            prof = self._profiler
            if prof is not None:
                prof.record(op, t0, _perf())
        self._finish(op)
