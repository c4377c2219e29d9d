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
the tiny-op fast path of ``push_kernel``.  The rest is done by collaborators that
own their state, built in :meth:`Engine._assemble`: :class:`~.grants.Grants` (the
lock, granting and releasing vars, the pending count), :class:`~.execution.Runner`
(dispatch, the run chain, callback and coroutine ops), :class:`~.placement.Placement`
(inline or pool, the cost model, the push throttle), :class:`~.errors.Errors`,
:class:`~.waits.Waits`, :class:`~.device_sync.DeviceSync` and :class:`~.deferred.Deferred`
(finalizers' work); :mod:`.fork` restarts them in a forked child.  What a hot path needs
from them is bound once (``self._submit`` is ``Grants.submit``), never looked up twice.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ...base import MXAsyncError, env_int, env_str
from ..context import Context, current_context
from ..profiler import current_scope
from ..run_context import FnProperty, RunContext
from ..var import VarHandle
from .deferred import Deferred
from .device_sync import DeviceSync
from .errors import Errors
from .execution import Runner
from .grants import Grants
from .ops import _CALLBACK, _CORO, _NORMAL, _SYNC, Operator, _dedupe_mutate, _Op, _ThreadState
from .placement import Placement
from .threads import EngineLoop, default_worker_threads
from .waits import Waits

__all__ = ["Engine", "Operator", "get", "bulk", "set_bulk_size"]

_DELETE_VAR = FnProperty.DELETE_VAR


class Engine:
    """The threaded asyncio engine.  ``Engine.get()`` returns the process-wide one."""

    _instance: Engine | None = None
    _instance_lock = threading.Lock()
    # the collaborators' types (the naive engine changes where ops run)
    _runner_type: type[Runner] = Runner
    _placement_type: type[Placement] = Placement

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
        self.bulk_size = env_int(15, "MXASYNC_EXEC_BULK_EXEC_MAX_NODE", "MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN")
        self._slow = False  # True while devices, the profiler or shutdown need the full path
        self._assemble()

    def _assemble(self) -> None:
        """Build the collaborators, connect them, and bind what the push paths use (again in a forked child)."""
        self._tls = _ThreadState()
        self._loop = EngineLoop()
        self._deferred_work = deferred = Deferred(self._tls)
        self._devices = devices = DeviceSync(self._refresh_slow)
        self._grants = grants = Grants(deferred, devices.cache)
        self._placement = placement = self._placement_type(self.num_workers, self._loop, grants)
        self._errors = errors = Errors(grants.lock)
        self._runner = runner = self._runner_type(grants, placement, errors, devices, self._loop, self._tls)
        grants.connect(runner, placement, errors)
        placement.connect(runner)
        self._waits = Waits(self._flush_bulk, grants, runner, placement, errors, devices, self._loop)
        # bound once for the push paths (and read by the ndarray layer: _deferred, _tls)
        self._lock = grants.lock
        self._deferred = deferred.queue
        self.run_deferred = deferred.run
        self._rc_cache = devices.cache
        self._submit = grants.submit
        self._run_now = grants.run_now
        self._refresh_slow()

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
                    if v._writing or v._queue or v._deleted or v._err is not None:
                        break
                else:
                    for v in mutate_vars:
                        if v._writing or v._readers or v._queue or v._deleted or v._err is not None:
                            break
                    else:
                        ran = True
                        try:
                            fn(*args)
                        except BaseException as exc:  # noqa: BLE001 - granted here, then lands like any op failure
                            failed = exc
                            self._grants.hold(const_vars, mutate_vars)
                        else:
                            for v in mutate_vars:
                                v.version += 1
        if not ran:
            self.push_sync(lambda rctx: fn(*args), ctx, const_vars, mutate_vars, name=name, inline=True)
        elif failed is not None:
            self._runner.failed_at_once(fn, ctx, const_vars, mutate_vars, name, failed)

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

    def call_later(self, delay: float, fn: Callable[[], Any]) -> None:
        """Call ``fn()`` on the engine loop's thread after ``delay`` seconds; never blocks.

        For watchdogs of callback ops (a round of ``_contrib_SyncBatchNorm``'s device copies that
        never fills): no thread sleeps for them. ``fn`` must be quick and must not wait.
        """
        self._loop.call_later(delay, fn)

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

    # ------------------------------------------------------------------ waits
    def wait_for_var(self, var: VarHandle, *, for_write: bool = True) -> None:
        """Block until every op pushed so far that reads or writes ``var`` finished (MXNet's WaitForVar).

        ``for_write=False`` waits for the writes only, as :meth:`wait_to_read`.
        Raises the error of a failed writer, once.
        """
        self._waits.for_var(var, for_write)

    def unready(self, vars: list[VarHandle], *, for_write: bool = True) -> list[int]:
        """The positions in ``vars`` of those a :meth:`wait_for_var` would not return at once for:
        with work pending (all of it, or the writes only for ``for_write=False``), a device event
        or an error.  Flushes this thread's bulk first; waits for nothing.

        For callers that sync many arrays (``nd.save``): one pass here, then a wait for each var
        listed, instead of a wait per var.
        """
        return self._waits.unready(vars, for_write)

    async def wait_for_var_async(self, var: VarHandle, *, for_write: bool = True) -> None:
        """Awaitable :meth:`wait_for_var` (``await var``); the caller's event loop keeps running meanwhile."""
        await self._waits.for_var_async(var, for_write)

    def wait_to_read(self, var: VarHandle) -> None:
        """Block until every write pushed so far on ``var`` finished; reads may still be running
        (NDArray's ``wait_to_read`` and ``asnumpy``).  Raises the error of a failed writer, once."""
        self._waits.for_var(var, False)

    async def wait_to_read_async(self, var: VarHandle) -> None:
        """Awaitable :meth:`wait_to_read`."""
        await self._waits.for_var_async(var, False)

    def wait_for_all(self) -> None:
        """Block until every op pushed so far finished; raise the first unreported error, if any.

        All errors pending at that point count as reported afterwards, so a
        second ``wait_for_all`` is clean (MXNet's rule).
        """
        self._waits.for_all()

    async def wait_for_all_async(self) -> None:
        """Awaitable :meth:`wait_for_all`."""
        await self._waits.for_all_async()

    @property
    def num_pending(self) -> int:
        """Ops pushed and not yet finished (internal wait markers included)."""
        return self._grants.pending

    # ------------------------------------------------------------- finalizers
    def defer(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` at the next push, wait or pooled allocation, on that caller's thread.

        For finalizers: ``__del__`` can run inside a garbage-collection pass on a thread
        that holds the engine's lock (any allocation may start one), where pushing an op
        would deadlock; appending here takes no lock.  (``run_deferred`` runs them now.)
        """
        self._deferred.append(fn)

    # --------------------------------------------------------------- lifetime
    def notify_shutdown(self) -> None:
        """Tell the engine the process is going away: deletes become no-ops."""
        self._runner.shutdown = True
        self._refresh_slow()

    def _refresh_slow(self) -> None:
        """Recompute ``_slow`` (here and on the runner) from the state that needs the full path."""
        runner = self._runner
        self._slow = runner.slow = bool(self._devices.used or runner.profiler is not None
                                        or runner.shutdown)

    def set_profiler(self, profiler) -> None:
        """Install (or with None remove) the object whose ``record(op, t0, t1)`` sees every op.

        While one is installed, each push tags its op with the pushing thread's profiler
        scope (a custom op's name): ``self._submit`` becomes :meth:`_submit_in_scope`, so
        without a profiler the push path pays nothing for it.
        """
        self._runner.profiler = profiler
        self._submit = self._submit_in_scope if profiler is not None else self._grants.submit
        self._refresh_slow()

    def _submit_in_scope(self, op: _Op, deduped: bool = False) -> None:
        name = current_scope()
        if name is not None:
            op.scope = name
        self._grants.submit(op, deduped)

    def close(self) -> None:
        """Stop this engine's worker threads after pending work (for engines made by hand, e.g. in tests)."""
        self._waits.idle()
        self._placement.stop()
        loop = self._loop.loop
        if loop is not None:
            loop.call_soon_threadsafe(loop.stop)


def _noop(rctx) -> None:
    return None


def _cpu0() -> Context:
    from ..context import cpu

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
