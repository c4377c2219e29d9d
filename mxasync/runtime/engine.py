"""The dependency engine: MXNet's Engine with an asyncio heart.

An op names the vars it reads (``const_vars``) and writes (``mutate_vars``).
MXNet's rule orders them: two ops run in push order when one of them writes a
var the other uses; readers between two writes run concurrently.

How an op travels (see docs/architecture.md for the picture):

1. ``push_*`` grants the op each of its vars or queues it behind them, under one
   lock, in the pushing thread.  Pushing never blocks.
2. When the last grant arrives, the op is *ready*.  A tiny sync op runs at once
   in the thread that made it ready (no thread hop: a hop costs ~90 µs against
   ~2 µs for the whole op); a heavy one goes to the worker pool; a coroutine op
   becomes a task on the engine loop; a callback op (MXNet's AsyncFn) is started
   and finishes when it calls ``on_complete``.
3. Completion releases the vars, which grants the next ops in their queues;
   those that become ready run on in the same thread, iteratively.

Errors are stored on the vars the failing op writes, and spoil every op that
later touches them; waits raise them, once.
"""

from __future__ import annotations

import inspect
import threading
import time
from _thread import allocate_lock
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..base import MXAsyncError, env_float, env_int, env_str
from .async_ops import AsyncOpsMixin
from .context import Context, current_context
from .device_sync import DeviceSyncMixin
from .op_block import (
    _CALLBACK,
    _CORO,
    _NORMAL,
    _SIGNAL,
    _SYNC,
    Operator,
    _dedupe_mutate,
    _Op,
    _ThreadState,
    _wrap_error,
)
from .placement import PlacementMixin
from .run_context import FnProperty, RunContext
from .threads import EngineLoop, WorkerPool, default_worker_threads
from .var import ErrorRecord, VarHandle
from .waits import WaitMixin

__all__ = ["Engine", "Operator", "get", "bulk", "set_bulk_size"]

_DELETE_VAR = FnProperty.DELETE_VAR
_CPU_PRIORITIZED = FnProperty.CPU_PRIORITIZED
_perf = time.perf_counter


class Engine(PlacementMixin, AsyncOpsMixin, WaitMixin, DeviceSyncMixin):
    """The threaded asyncio engine.  ``Engine.get()`` returns the process-wide one."""

    _instance: Engine | None = None
    _instance_lock = threading.Lock()

    @classmethod
    def get(cls) -> Engine:
        inst = cls._instance
        if inst is None:
            with cls._instance_lock:
                if cls._instance is None:
                    kind = env_str("threaded", "MXASYNC_ENGINE_TYPE", "MXNET_ENGINE_TYPE").lower()
                    if kind in ("naive", "naiveengine"):
                        from .naive import NaiveEngine

                        cls._instance = NaiveEngine()
                    else:
                        cls._instance = Engine()
                inst = cls._instance
        return inst

    def __init__(self, num_workers: int | None = None):
        self.num_workers = num_workers or default_worker_threads()
        # Ops measured below this many seconds run in the thread that readied them.
        self.inline_threshold = env_float(50.0, "MXASYNC_INLINE_THRESHOLD_US") * 1e-6
        self.yield_above = env_int(256, "MXASYNC_MAX_LEAD_OPS")
        self.throttle_seconds = env_float(2.0, "MXASYNC_THROTTLE_MS") * 1e-3
        self.max_backlog = env_int(4 * self.num_workers, "MXASYNC_POOL_BACKLOG")
        self.bulk_size = env_int(15, "MXASYNC_EXEC_BULK_EXEC_MAX_NODE", "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN")
        self._init_state()
        self._shutdown = False
        self._profiler = None
        self._cost: dict[Any, float] = {}
        self._sample = 0
        self._slow = False  # True while errors, devices, the profiler or shutdown need the full path
        self._device_used = False

    def _init_state(self) -> None:
        self._lock = allocate_lock()
        self._pending = 0
        self._all_waiters: list[Callable[[], None]] = []
        self._errors: list[ErrorRecord] = []
        self._live_errors = 0
        self._pool: WorkerPool | None = None
        self._pool_lock = threading.Lock()
        self._loop = EngineLoop()
        self._tls = _ThreadState()
        self._rc_cache: dict[int, tuple[Context, RunContext]] = {}
        self._deferred: deque = deque()  # finalizers' work, run at the next push, wait or allocation

    @property
    def type(self) -> str:
        return "ThreadedEngine"

    # ------------------------------------------------------------------ vars
    def new_variable(self, name: str | None = None) -> VarHandle:
        """A fresh var with no pending ops."""
        return VarHandle(self, name)

    # ----------------------------------------------------------------- pushes
    def push_sync(
        self,
        fn: Callable[[RunContext], Any],
        ctx: Context | None = None,
        const_vars: Iterable[VarHandle] = (),
        mutate_vars: Iterable[VarHandle] = (),
        prop: FnProperty = _NORMAL,
        priority: int = 0,
        name: str | None = None,
        *,
        inline: bool | None = None,
    ) -> None:
        """Push ``fn(run_ctx)``; it is done when it returns.

        ``inline`` forces (True) or forbids (False) running in the readying
        thread; by default the engine decides from the op's measured cost.
        """
        bulk = self._tls.bulk
        if bulk is not None and prop is _NORMAL:
            bulk.add(fn, ctx or current_context(), const_vars, mutate_vars, name)
            return
        if inline is True and not self._slow and self._run_now(fn, ctx, const_vars, mutate_vars, name):
            return
        self._submit(_Op(fn, _SYNC, ctx or current_context(), const_vars, mutate_vars, prop, priority, name, inline))

    def push_inline(self, fn, ctx: Context, const_vars: list, mutate_vars: list, name: str | None = None) -> None:
        """``push_sync(..., inline=True)`` for callers on a hot path that know the op is tiny.

        ``const_vars`` and ``mutate_vars`` must be lists without duplicates.
        """
        if self._slow or self._tls.bulk is not None or not self._run_now(fn, ctx, const_vars, mutate_vars, name):
            self.push_sync(fn, ctx, const_vars, mutate_vars, name=name, inline=True)

    def _run_now(self, fn, ctx, const_vars, mutate_vars, name) -> bool:
        """The hot path of a tiny op whose vars are all free: grant, run, release.

        No op object is built unless something goes wrong.  Returns False (having
        changed nothing) when the op must take the general path: a var is busy
        or deleted, a var is both read and written, or the context is new.
        """
        if self._deferred:  # dead arrays' blocks, even in a loop of tiny inline ops only
            self.run_deferred()
        cached = self._rc_cache.get(id(ctx))
        if cached is None:
            return False
        with self._lock:
            for v in const_vars:
                if v._writing or v._queue or v._deleted or v in mutate_vars:
                    return False
            for v in mutate_vars:
                if v._writing or v._readers or v._queue or v._deleted:
                    return False
            if len(mutate_vars) > 1 and len(set(mutate_vars)) != len(mutate_vars):
                return False
            for v in const_vars:
                v._readers += 1
            for v in mutate_vars:
                v._writing = True
            self._pending += 1
        op = None
        try:
            fn(cached[1])
        except BaseException as exc:  # noqa: BLE001 - lands on the vars like any op failure
            op = _Op(fn, _SYNC, ctx, const_vars, mutate_vars, _NORMAL, 0, name, True)
            op.err = self._make_error(op, exc)
            if not isinstance(exc, Exception):
                self._finish(op)
                raise
            self._finish(op)
            return True
        self._run_ready(self._release(const_vars, mutate_vars, None, True))
        return True

    def push_async(
        self,
        fn: Callable,
        ctx: Context | None = None,
        const_vars: Iterable[VarHandle] = (),
        mutate_vars: Iterable[VarHandle] = (),
        prop: FnProperty = FnProperty.ASYNC,
        priority: int = 0,
        name: str | None = None,
    ) -> None:
        """Push an asynchronous op.

        ``fn`` is either ``async def fn(run_ctx)`` (done when the coroutine
        returns; it runs on the engine loop) or MXNet's ``fn(run_ctx,
        on_complete)`` (done when ``on_complete()`` or ``on_complete(exc)`` is
        called, from any thread; ``fn`` itself must not block).
        """
        self._flush_bulk()
        kind = _CORO if inspect.iscoroutinefunction(fn) else _CALLBACK
        self._submit(_Op(fn, kind, ctx or current_context(), const_vars, mutate_vars, prop, priority, name, None))

    def new_operator(
        self,
        fn: Callable,
        const_vars: Iterable[VarHandle] = (),
        mutate_vars: Iterable[VarHandle] = (),
        prop: FnProperty = _NORMAL,
        name: str | None = None,
    ) -> Operator:
        """Pre-build an op to push many times (MXNet's ``NewOperator``; ``fn`` as in :meth:`push_async`)."""
        kind = _CORO if inspect.iscoroutinefunction(fn) else _CALLBACK
        const_vars, mutate_vars = _dedupe_mutate(list(const_vars), list(mutate_vars))
        return Operator(fn, kind, const_vars, mutate_vars, prop, name)

    def push(self, opr: Operator, ctx: Context | None = None, priority: int = 0, profiling: bool = False) -> None:
        """Push an operator made by :meth:`new_operator`."""
        if opr.deleted:
            raise MXAsyncError(f"push: operator {opr.name!r} was deleted")
        self._flush_bulk()
        op = _Op(opr.fn, opr.kind, ctx or current_context(), opr.const_vars, opr.mutate_vars,
                 opr.prop, priority, opr.name, None)
        op.profiling = profiling
        self._submit(op, deduped=True)

    def delete_operator(self, opr: Operator) -> None:
        """Forget ``opr`` once every push of it so far has finished."""
        opr.deleted = True
        self.push_sync(lambda rctx: None, _cpu0(), (), opr.const_vars + opr.mutate_vars,
                       _DELETE_VAR, name="DeleteOperator", inline=True)

    def delete_variable(self, delete_fn: Callable[[RunContext], Any] | None, ctx: Context | None, var: VarHandle,
                        then: VarHandle | None = None) -> None:
        """Run ``delete_fn`` after every op pushed so far on ``var``; ``var`` is unusable after this call.

        The delete runs even when ``var`` carries an error: memory is always returned.
        ``then`` is a var the delete also writes, so the ops pushed on ``then`` later wait
        for every op on ``var`` (memory changing hands) without inheriting its errors.
        """
        self._flush_bulk()
        self._submit(_Op(delete_fn or _noop, _SYNC, ctx or current_context(), (), [var] if then is None else [var, then],
                         _DELETE_VAR, 0, "DeleteVariable", True))
        var._deleted = True

    # ------------------------------------------------------------ scheduling
    def defer(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` at the next push, wait or pooled allocation, on that caller's thread.

        For finalizers: ``__del__`` can run inside a garbage-collection pass on a thread
        that holds the engine's lock (any allocation may start one), where pushing an op
        would deadlock; appending here takes no lock.
        """
        self._deferred.append(fn)

    def run_deferred(self) -> None:
        """Run what :meth:`defer` queued (a finalizer's failure is ignored, as in ``__del__``).

        The pushes this makes do not drain again on this thread: the loop here takes the rest.
        """
        tls = self._tls
        if tls.draining:
            return
        tls.draining = True
        deferred = self._deferred
        try:
            while deferred:
                try:
                    fn = deferred.popleft()
                except IndexError:  # another thread took the last one
                    return
                try:
                    fn()
                except Exception:  # noqa: BLE001, S110 - a finalizer must not fail the caller's push
                    pass
        finally:
            tls.draining = False

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
                    v._queue.append((op, False))
                    wait += 1
                else:
                    v._readers += 1
            for v in mutate_vars:
                if v._writing or v._readers or v._queue:
                    v._queue.append((op, True))
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

    def _make_error(self, op: _Op, exc: BaseException) -> ErrorRecord | None:
        name = op.display_name()
        if op.prop is _DELETE_VAR:  # nobody will read the var again; say so and go on
            import warnings

            warnings.warn(f"engine: delete op {name!r} failed: {exc!r}", RuntimeWarning, stacklevel=1)
            return None
        record = ErrorRecord(_wrap_error(exc, name), name)
        with self._lock:
            self._errors.append(record)
            self._live_errors += 1
            self._slow = True
        return record

    def _inherit_error(self, op: _Op) -> bool:
        """Spoil ``op`` if a var it touches carries an unreported error (MXNet's skip rule)."""
        for v in op.const_vars:
            e = v._err
            if e is not None and not e.reported:
                op.err = e
                return True
        for v in op.mutate_vars:
            e = v._err
            if e is not None and not e.reported:
                op.err = e
                return True
        return False

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

    # ------------------------------------------------------------------- bulk
    def bulk(self, size: int):
        """Group the sync pushes of this thread into engine ops of up to ``size`` pushes.

        A group is flushed when full, when the context changes, at any wait, and
        at the end of the block.  ``bulk(0)`` or ``bulk(1)`` turns grouping off.
        """
        from .bulk import BulkScope

        return BulkScope(self, size)

    def set_bulk_size(self, size: int) -> int:
        """Set the executor's bulk size; returns the previous one (MXNet's ``set_bulk_size``)."""
        prev, self.bulk_size = self.bulk_size, int(size)
        return prev

    def _flush_bulk(self) -> None:
        if self._deferred:
            self.run_deferred()
        bulk = self._tls.bulk
        if bulk is not None:
            bulk.flush()

    # --------------------------------------------------------------- lifetime
    def notify_shutdown(self) -> None:
        """Tell the engine the process is going away: deletes become no-ops."""
        self._shutdown = True
        self._slow = True

    def _refresh_slow(self) -> None:
        self._slow = bool(self._live_errors or self._device_used or self._profiler is not None or self._shutdown)

    def set_profiler(self, profiler) -> None:
        """Install (or with None remove) the object whose ``record(op, t0, t1)`` sees every op."""
        self._profiler = profiler
        self._refresh_slow()

    def close(self) -> None:
        """Stop this engine's worker threads after pending work (for engines made by hand, e.g. in tests)."""
        self._wait_idle()
        if self._pool is not None:
            self._pool.stop()
            self._pool = None
        loop = self._loop.loop
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)

    def _after_fork_in_child(self, pending: int) -> None:
        """A forked child starts clean: fresh locks, no pending op, threads and loop made on first
        use.  The parent's pending ops never run here (their threads did not come along), so the
        vars they held are freed, and those they would have written carry one error (raised once,
        at the first wait on any of them, not by wait_for_all), since their value here is unknown."""
        errors = [e for e in self._errors if not e.reported]
        self._init_state()
        self._errors = errors
        self._live_errors = len(errors)
        if pending:
            from .fork import forget_parent_work

            # on the vars only: the child's wait_for_all has nothing of the parent's to report
            if forget_parent_work(self) is not None:
                self._live_errors += 1
        self._refresh_slow()


def _noop(rctx) -> None:
    return None


def _cpu0() -> Context:
    from .context import cpu

    return cpu(0)


# ---------------------------------------------------------------- module API
def get() -> Engine:
    """The process-wide engine (``mx.engine.get()``)."""
    return Engine.get()


def bulk(size: int):
    """``with mx.engine.bulk(16):`` groups small pushes into engine ops of 16."""
    return Engine.get().bulk(size)


def set_bulk_size(size: int) -> int:
    return Engine.get().set_bulk_size(size)
