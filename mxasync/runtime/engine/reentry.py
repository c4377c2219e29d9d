"""Waits made from inside a running engine op: find that op, and tell whether the wait needs it.

An op's fn that waits for a var the op itself holds (its own output, or work
queued behind it) would wait forever, whatever kind of op it is: an inline sync
op in the pushing thread, one on a worker, MXNet's callback op before it called
``on_complete``, or a coroutine op awaiting.  The engine checks only when a wait
is about to block, so the hot path of ops and of waits that need not block pays
nothing: it walks this thread's frames up to the engine function that called the
op's fn.
"""

from __future__ import annotations

import sys
from itertools import chain

from .execution import Runner
from .grants import Grants

__all__ = ["running_op", "needs"]

# the engine functions that call an op's fn; their frames hold the op being run
_RUNNERS = {
    Grants.run_now.__code__: "run_now",
    Runner._execute.__code__: "execute",
    Runner._execute_full.__code__: "execute",
    Runner._start_one_callback.__code__: "callback",
    Runner._run_coro.__code__: "coroutine",
}


class Running:
    """The op a thread is running: its name, the op block (None for the inline fast path), its vars."""

    __slots__ = ("name", "op", "const_vars", "mutate_vars", "coroutine")

    def __init__(self, name, op, const_vars, mutate_vars, coroutine):
        self.name, self.op, self.const_vars, self.mutate_vars = name, op, const_vars, mutate_vars
        self.coroutine = coroutine

    def owns(self, var) -> bool:
        return any(v is var for v in chain(self.const_vars, self.mutate_vars))


def running_op(depth: int = 2) -> Running | None:
    """The op whose fn the calling thread is inside (its frames up to an engine runner), or None."""
    codes = _RUNNERS
    frame = sys._getframe(depth)
    while frame is not None:
        kind = codes.get(frame.f_code)
        if kind is not None:
            local = frame.f_locals
            if kind == "run_now":
                fn = local.get("fn")
                name = local.get("name") or getattr(fn, "__qualname__", None) or repr(fn)
                return Running(name, None, local.get("const_vars", ()), local.get("mutate_vars", ()), False)
            op = local.get("op")
            done = local.get("done")
            if op is not None and not (done is not None and done.called):  # a callback op that completed
                return Running(op.display_name(), op, op.const_vars, op.mutate_vars, kind == "coroutine")
        frame = frame.f_back
    return None


def needs(running: Running, var) -> bool:
    """Would a wait on ``var`` wait for ``running`` to finish?  (Caller holds the engine's lock.)

    True when ``var`` is one of the op's vars, or a var of an op queued behind it, transitively:
    those cannot move before the op completes.
    """
    if running.owns(var):
        return True
    seen: set[int] = set()
    frontier = [(running.const_vars, running.mutate_vars)]
    while frontier:
        const_vars, mutate_vars = frontier.pop()
        for v in chain(const_vars, mutate_vars):
            for op, _ in v._queue:
                if id(op) in seen:
                    continue
                seen.add(id(op))
                if any(u is var for u in chain(op.const_vars, op.mutate_vars)):
                    return True
                frontier.append((op.const_vars, op.mutate_vars))
    return False
