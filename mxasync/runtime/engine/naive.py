"""``MXASYNC_ENGINE_TYPE=naive``: every op runs to completion inside its push.

For debugging, like MXNet's NaiveEngine: nothing runs concurrently and a sync
op runs in the pushing thread, so a debugger stops in the line that pushed it.
Errors still follow the engine's rules (stored on vars, raised at waits), so
code behaves the same under both engines.  Only two collaborators differ: the
placement runs every op inline, and the runner blocks the push until the op is done.
"""

from __future__ import annotations

from _thread import allocate_lock

from ...base import MXAsyncError
from .execution import Runner
from .ops import _CORO, _SYNC, _Op
from .placement import Placement
from .threaded import Engine

__all__ = ["NaiveEngine"]


class NaivePlacement(Placement):
    def should_inline(self, op: _Op) -> bool:
        op.key = op.name or getattr(op.fn, "__code__", op.fn)
        return True


class NaiveRunner(Runner):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._latches: dict[int, object] = {}

    def dispatch(self, op: _Op) -> None:
        if op.kind is not _CORO and op.kind is not _SYNC and self._tls.starting is not None:
            self._start_callback(op)  # readied inside another callback's fn: it cannot block here
            return
        if op.kind is _SYNC:
            self.run_chain(op)
            return
        if op.kind is _CORO and self._loop.in_loop_thread():
            raise MXAsyncError(f"naive engine: coroutine op {op.display_name()!r} pushed from the engine loop")
        latch = allocate_lock()
        latch.acquire()
        self._latches[id(op)] = latch
        if op.kind is _CORO:
            self._loop.spawn(self._run_coro, op)
        else:
            self._start_callback(op)
        latch.acquire()

    def finish(self, op: _Op) -> None:
        super().finish(op)
        latch = self._latches.pop(id(op), None)
        if latch is not None:
            latch.release()


class NaiveEngine(Engine):
    _runner_type = NaiveRunner
    _placement_type = NaivePlacement

    @property
    def type(self) -> str:
        return "NaiveEngine"
