"""Dependency bookkeeping: grant an op its vars or queue it behind them, and release them when it completes.

MXNet's rule: two ops run in push order when one of them writes a var the other
uses; readers between two writes run concurrently.  Per var the engine keeps
the granted readers, whether a writer is granted, and a FIFO of the ops waiting
(on the :class:`~mxasync.runtime.var.VarHandle` itself); :class:`Grants` keeps
the one lock that guards all of it, the count of ops pending, and who waits for
that count to reach zero.
"""

from __future__ import annotations

from _thread import allocate_lock
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...base import MXAsyncError
from .errors import Errors
from .ops import _NORMAL, _SIGNAL, _dedupe_mutate, _Op

if TYPE_CHECKING:
    from ..var import VarHandle
    from .deferred import Deferred
    from .execution import Runner
    from .placement import Placement

__all__ = ["Grants"]

_spoil = Errors.spoil  # a granted var is tainted: the op may not run (see errors.py)


class Grants:
    """The engine's lock, the grants of every var, and the pending count.

    Its hot paths call the runner and the placement through methods bound once in
    :meth:`connect` (``self._dispatch`` is ``Runner.dispatch``, and so on).
    """

    def __init__(self, deferred: Deferred, rc_cache: dict):
        self.lock = allocate_lock()
        self.pending = 0  # ops pushed and not yet finished (wait markers included)
        self.all_waiters: list[Callable[[], None]] = []  # called once pending reaches 0
        self._deferred = deferred.queue
        self._run_deferred = deferred.run
        self._rc_cache = rc_cache  # DeviceSync.cache: id(ctx) -> (ctx, RunContext) of host contexts

    def connect(self, runner: Runner, placement: Placement, errors: Errors) -> None:
        self._taint = errors.taint
        self._dispatch = runner.dispatch
        self._run_ready = runner.run_ready
        self._failed_at_once = runner.failed_at_once
        self._yield_above = placement.yield_above  # a setting, read once
        self._throttle = placement.throttle

    # ------------------------------------------------------------ granting
    def submit(self, op: _Op, deduped: bool = False) -> None:
        """Grant ``op`` its vars, or queue it behind them; dispatch it when nothing is in its way."""
        if self._deferred:
            self._run_deferred()
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
        if self.pending > self._yield_above:
            self._throttle()
        wait = 0
        with self.lock:
            self.pending += 1
            for v in const_vars:
                if v._writing or v._queue:
                    (v._queue or v._new_queue()).append((op, False))
                    wait += 1
                else:
                    v._readers += 1
                    if v._err is not None:
                        _spoil(op, v, False)
            for v in mutate_vars:
                if v._writing or v._readers or v._queue:
                    (v._queue or v._new_queue()).append((op, True))
                    wait += 1
                else:
                    v._writing = True
                    if v._err is not None:
                        _spoil(op, v, True)
            op.wait = wait
        if not wait:
            self._dispatch(op)

    def run_now(self, fn, ctx, const_vars, mutate_vars, name) -> bool:
        """The hot path of a tiny op whose vars are all free: grant, run, release.

        No op object is built unless something goes wrong.  Returns False (having
        changed nothing) when the op must take the general path: a var is busy
        or deleted, a var is both read and written, or the context is new.
        """
        if self._deferred:  # dead arrays' blocks, even in a loop of tiny inline ops only
            self._run_deferred()
        cached = self._rc_cache.get(id(ctx))
        if cached is None:
            return False
        with self.lock:
            for v in const_vars:
                if v._writing or v._queue or v._deleted or v._err is not None or v in mutate_vars:
                    return False
            for v in mutate_vars:
                if v._writing or v._readers or v._queue or v._deleted or v._err is not None:
                    return False
            if len(mutate_vars) > 1 and len(set(mutate_vars)) != len(mutate_vars):
                return False
            for v in const_vars:
                v._readers += 1
            for v in mutate_vars:
                v._writing = True
            self.pending += 1
        try:
            fn(cached[1])
        except BaseException as exc:  # noqa: BLE001 - lands on the vars like any op failure
            self._failed_at_once(fn, ctx, const_vars, mutate_vars, name, exc)
            return True
        self._run_ready(self.release(const_vars, mutate_vars, None, True))
        return True

    def hold(self, const_vars, mutate_vars) -> None:
        """Take the grants of an op that already ran under the lock and failed (caller holds the lock),
        so that it completes like any op (see ``Engine.push_kernel``)."""
        for v in const_vars:
            v._readers += 1
        for v in mutate_vars:
            v._writing = True
        self.pending += 1

    @staticmethod
    def _drain(v: VarHandle, ready: list) -> None:
        """Grant the head of ``v``'s queue: one writer, or every reader up to the next writer.

        The grant is recorded before the op leaves the queue: ``VarHandle.pending``, read
        without the lock (a dead array's release), must never see the op in neither place,
        or the array's memory would go back to the pool under the op about to run.
        """
        q = v._queue
        while q:
            op, is_write = q[0]
            if is_write:
                if not v._readers and not v._writing:
                    v._writing = True
                    q.popleft()
                    if v._err is not None:
                        _spoil(op, v, True)
                    op.wait -= 1
                    if not op.wait:
                        ready.append(op)
                return
            if v._writing:
                return
            v._readers += 1
            q.popleft()
            if v._err is not None:
                _spoil(op, v, False)
            op.wait -= 1
            if not op.wait:
                ready.append(op)

    # ----------------------------------------------------------- releasing
    def complete(self, op: _Op):
        """Release ``op``'s vars; returns the ops this made ready (a list, or an empty tuple)."""
        return self.release(op.const_vars, op.mutate_vars, op.err, op.kind is not _SIGNAL)

    def release(self, const_vars, mutate_vars, err, counts: bool):
        """Give back the grants of a finished op; ``counts`` is False for wait markers (no version bump)."""
        ready = None
        waiters = None
        with self.lock:
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
                        self._taint(v, err)
                    elif v._err is not None:
                        v._err = None  # written by an op that ran: clean again
                if v._queue:
                    if ready is None:
                        ready = []
                    self._drain(v, ready)
            self.pending -= 1
            if not self.pending and self.all_waiters:
                waiters, self.all_waiters = self.all_waiters, []
        if waiters:
            for w in waiters:
                w()
        return ready or ()

    # ------------------------------------------------------------- waiting
    def enqueue_signal(self, var: VarHandle, for_write: bool, fn: Callable[[], None]) -> _Op | None:
        """Queue ``fn`` to run once ``var``'s pending writes (and reads, ``for_write``) finish.

        Returns the queued marker op, or None when there is nothing to wait for.  Caller holds the lock.
        """
        if for_write:
            if not (var._writing or var._readers or var._queue):
                return None
        elif not (var._writing or var._queue):
            return None
        op = _Op(fn, _SIGNAL, None, [] if for_write else [var], [var] if for_write else [],
                 _NORMAL, 0, "WaitForVar", True)
        op.wait = 1
        self.pending += 1
        (var._queue or var._new_queue()).append((op, for_write))
        return op

    def withdraw(self, var: VarHandle | None, marker, for_write: bool, idle_callback) -> bool:
        """Take back a queued wait (caller holds the lock); False when it already ran or is running."""
        if var is None:
            try:
                self.all_waiters.remove(idle_callback)
            except ValueError:
                return False
            return True
        try:
            var._queue.remove((marker, for_write))
        except ValueError:
            return False
        self.pending -= 1
        return True

    def when_idle(self, callback) -> bool:
        """Call ``callback`` once no op is pending; False (and no call) when none is pending now."""
        with self.lock:
            busy = self.pending > 0
            if busy:
                self.all_waiters.append(callback)
        return busy
