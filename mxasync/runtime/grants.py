"""Dependency bookkeeping: grant an op its vars or queue it behind them, and release them when it completes.

MXNet's rule: two ops run in push order when one of them writes a var the other
uses; readers between two writes run concurrently.  Per var the engine keeps
the granted readers, whether a writer is granted, and a FIFO of the ops waiting;
all of it under the engine's one lock.
"""

from __future__ import annotations

from ..base import MXAsyncError
from .op_block import _SIGNAL, _dedupe_mutate, _Op
from .var import VarHandle

__all__ = ["GrantsMixin"]


class GrantsMixin:
    def _submit(self, op: _Op, deduped: bool = False) -> None:
        if self._deferred:
            self.run_deferred()
        const_vars, mutate_vars = op.const_vars, op.mutate_vars
        if not deduped and mutate_vars and (const_vars or len(mutate_vars) > 1):
            const_vars, mutate_vars = op.const_vars, op.mutate_vars = _dedupe_mutate(const_vars, mutate_vars)
        try:
            for v in const_vars:
                if v._deleted:
                    raise MXAsyncError(f"push({op.display_name()}): var {v!r} was deleted")
            for v in mutate_vars:
                if v._deleted:
                    raise MXAsyncError(f"push({op.display_name()}): var {v!r} was deleted")
        except AttributeError:
            raise MXAsyncError(
                f"push({op.display_name()}): const_vars and mutate_vars must hold VarHandles "
                f"from Engine.new_variable(), got {list(const_vars)!r} and {list(mutate_vars)!r}"
            ) from None
        if self._pending > self.yield_above:
            self._throttle()
        wait = 0
        with self._lock:
            self._pending += 1
            for v in const_vars:
                if v._writing or v._queue:
                    (v._queue or v._new_queue()).append((op, False))
                    wait += 1
                else:
                    v._readers += 1
            for v in mutate_vars:
                if v._writing or v._readers or v._queue:
                    (v._queue or v._new_queue()).append((op, True))
                    wait += 1
                else:
                    v._writing = True
            op.wait = wait
        if not wait:
            self._dispatch(op)

    @staticmethod
    def _drain(v: VarHandle, ready: list) -> None:
        """Grant the head of ``v``'s queue: one writer, or every reader up to the next writer."""
        q = v._queue
        while q:
            op, is_write = q[0]
            if is_write:
                if not v._readers and not v._writing:
                    q.popleft()
                    v._writing = True
                    op.wait -= 1
                    if not op.wait:
                        ready.append(op)
                return
            if v._writing:
                return
            q.popleft()
            v._readers += 1
            op.wait -= 1
            if not op.wait:
                ready.append(op)

    def _complete(self, op: _Op):
        """Release ``op``'s vars; returns the ops this made ready (a list, or an empty tuple)."""
        return self._release(op.const_vars, op.mutate_vars, op.err, op.kind is not _SIGNAL)

    def _release(self, const_vars, mutate_vars, err, counts: bool):
        """Give back the grants of a finished op; ``counts`` is False for wait markers (no version bump)."""
        ready = None
        waiters = None
        with self._lock:
            for v in const_vars:
                v._readers -= 1
                if not v._readers and v._queue:
                    if ready is None:
                        ready = []
                    self._drain(v, ready)
            for v in mutate_vars:
                v._writing = False
                if counts:
                    v.version += 1
                    if err is not None:
                        v._err = err
                if v._queue:
                    if ready is None:
                        ready = []
                    self._drain(v, ready)
            self._pending -= 1
            if not self._pending and self._all_waiters:
                waiters, self._all_waiters = self._all_waiters, []
        if waiters:
            for w in waiters:
                w()
        return ready or ()
