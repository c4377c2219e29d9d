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

This module holds the public face (pushes, vars, operators, bulk, lifetime) and
the tiny-op fast path; the rest is split by job into mixins: ``grants`` (granting
and releasing vars), ``execution`` (dispatch and the run chain), ``errors``,
``waits``, ``async_ops`` (callback and coroutine ops), ``placement`` (inline or
pool), ``device_sync``, ``deferred`` (finalizers' work) and ``fork``.
"""

from __future__ import annotations

import inspect
import threading
from _thread import allocate_lock
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ..base import MXAsyncError, env_float, env_int, env_str
from .async_ops import AsyncOpsMixin
from .context import Context, current_context
from .deferred import DeferredMixin
from .device_sync import DeviceSyncMixin
from .errors import ErrorsMixin
from .execution import ExecutionMixin
from .fork import ForkMixin
from .grants import GrantsMixin
from .op_block import (
    _CALLBACK,
    _CORO,
    _NORMAL,
    _SYNC,
    Operator,
    _dedupe_mutate,
    _Op,
    _ThreadState,
)
from .placement import PlacementMixin
from .profiler import current_scope
from .run_context import FnProperty, RunContext
from .threads import EngineLoop, WorkerPool, default_worker_threads
from .var import ErrorRecord, VarHandle
from .waits import WaitMixin

__all__ = ["Engine", "Operator", "get", "bulk", "set_bulk_size"]

_DELETE_VAR = FnProperty.DELETE_VAR


class Engine(GrantsMixin, ExecutionMixin, ErrorsMixin, DeferredMixin, PlacementMixin, AsyncOpsMixin, WaitMixin,
             DeviceSyncMixin, ForkMixin):
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

    def push_kernel(self, fn, args: tuple, ctx: Context, const_vars: list, mutate_vars: list,
                    name: str | None = None) -> None:
        """``fn(*args)`` for the NDArray operators on small arrays: the per-op budget is spent here.

        ``fn`` must be a pure kernel of a few microseconds that never calls the engine, and
        the var lists must hold no duplicates, no var in both.  When every var is free the
        kernel runs at once *under the engine's lock*: nothing can be granted on its vars
        meanwhile, so there is no grant to take and give back, no op object and nothing to
        ready afterwards (about half the cost of :meth:`push_inline`).  Anything else (a busy
        var, errors, the profiler, a bulk block, a new context) takes the general path.
        """
        failed = None
        ran = False
        if not (self._slow or self._deferred or self._tls.bulk is not None or id(ctx) not in self._rc_cache):
            with self._lock:
                for v in const_vars:
                    if v._writing or v._queue or v._deleted:
                        break
                else:
                    for v in mutate_vars:
                        if v._writing or v._readers or v._queue or v._deleted:
                            break
                    else:
                        ran = True
                        try:
                            fn(*args)
                        except BaseException as exc:  # noqa: BLE001 - granted here, then lands like any op failure
                            failed = exc
                            for v in const_vars:
                                v._readers += 1
                            for v in mutate_vars:
                                v._writing = True
                            self._pending += 1
                        else:
                            for v in mutate_vars:
                                v.version += 1
        if not ran:
            self.push_sync(lambda rctx: fn(*args), ctx, const_vars, mutate_vars, name=name, inline=True)
        elif failed is not None:
            self._failed_at_once(fn, ctx, const_vars, mutate_vars, name, failed)

    def _failed_at_once(self, fn, ctx, const_vars, mutate_vars, name, exc) -> None:
        """An op run at once (granted, not yet released) raised: its error lands on its vars as any
        op's; a BaseException (Ctrl-C, SystemExit) then reaches the pushing thread."""
        op = _Op(fn, _SYNC, ctx, const_vars, mutate_vars, _NORMAL, 0, name, True)
        op.err = self._make_error(op, exc)
        self._finish(op)
        if not isinstance(exc, Exception):
            raise exc

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
        try:
            fn(cached[1])
        except BaseException as exc:  # noqa: BLE001 - lands on the vars like any op failure
            self._failed_at_once(fn, ctx, const_vars, mutate_vars, name, exc)
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
        """Install (or with None remove) the object whose ``record(op, t0, t1)`` sees every op.

        While one is installed, each push tags its op with the pushing thread's profiler
        scope (a custom op's name).  The tagging submit is an instance attribute shadowing
        the class's, so without a profiler the push path pays nothing for it.
        """
        self._profiler = profiler
        if profiler is not None:
            self._submit = self._submit_in_scope
        else:
            self.__dict__.pop("_submit", None)
        self._refresh_slow()

    def _submit_in_scope(self, op: _Op, deduped: bool = False) -> None:
        name = current_scope()
        if name is not None:
            op.scope = name
        type(self)._submit(self, op, deduped)

    def close(self) -> None:
        """Stop this engine's worker threads after pending work (for engines made by hand, e.g. in tests)."""
        self._wait_idle()
        if self._pool is not None:
            self._pool.stop()
            self._pool = None
        loop = self._loop.loop
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)


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
