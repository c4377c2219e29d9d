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

import asyncio
import atexit
import contextlib
import inspect
import os
import sys
import threading
import time
import weakref
from _thread import allocate_lock
from collections.abc import Callable, Iterable
from typing import Any

from ..base import MXAsyncError, env_float, env_int, env_str
from .context import Context, current_context
from .run_context import FnProperty, RunContext
from .streams import all_device_hooks, device_hooks, stream_lane
from .threads import EngineLoop, WorkerPool, cpu_count, default_worker_threads, limit_blas_threads
from .var import ErrorRecord, VarHandle

__all__ = ["Engine", "Operator", "get", "bulk", "set_bulk_size"]

_SYNC, _CALLBACK, _CORO, _SIGNAL = 0, 1, 2, 3
_NORMAL = FnProperty.NORMAL
_DELETE_VAR = FnProperty.DELETE_VAR
_CPU_PRIORITIZED = FnProperty.CPU_PRIORITIZED
_perf = time.perf_counter


class _Op:
    """One pushed op.  ``wait`` counts the grants it still needs."""

    __slots__ = (
        "fn", "kind", "ctx", "const_vars", "mutate_vars", "prop", "priority", "name",
        "wait", "inline", "err", "profiling", "key",
    )

    def __init__(self, fn, kind, ctx, const_vars, mutate_vars, prop, priority, name, inline):
        self.fn = fn
        self.kind = kind
        self.ctx = ctx
        self.const_vars = const_vars
        self.mutate_vars = mutate_vars
        self.prop = prop
        self.priority = priority
        self.name = name
        self.inline = inline
        self.err = None
        self.profiling = False
        self.wait = 0
        self.key = None

    def display_name(self) -> str:
        if self.name:
            return self.name
        fn = self.fn
        return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__


class Operator:
    """A pre-built op (``Engine.new_operator``) that can be pushed many times."""

    __slots__ = ("fn", "kind", "const_vars", "mutate_vars", "prop", "name", "deleted")

    def __init__(self, fn, kind, const_vars, mutate_vars, prop, name):
        self.fn = fn
        self.kind = kind
        self.const_vars = const_vars
        self.mutate_vars = mutate_vars
        self.prop = prop
        self.name = name
        self.deleted = False

    def __repr__(self) -> str:
        return f"<Operator {self.name!r}{' deleted' if self.deleted else ''}>"


class _OnComplete:
    """The ``on_complete`` callback handed to callback-style ops; call it once."""

    __slots__ = ("engine", "op", "called", "started")

    def __init__(self, engine, op):
        self.engine = engine
        self.op = op
        self.called = False
        self.started = None

    def __call__(self, error: BaseException | None = None) -> None:
        if self.called:
            raise MXAsyncError(f"on_complete of engine op {self.op.display_name()!r} called twice")
        self.called = True
        op = self.op
        engine = self.engine
        if error is not None:
            op.err = engine._make_error(op, error)
        if self.started is not None and engine._profiler is not None:
            engine._profiler.record(op, self.started, _perf())
        engine._finish(op)


def _wrap_error(exc: BaseException, name: str) -> MXAsyncError:
    if isinstance(exc, MXAsyncError):
        text = str(exc)
        message = text if text.startswith(name) else f"[{name}] {text}"
    else:
        message = f"[{name}] {type(exc).__name__}: {exc}"
    wrapped = MXAsyncError(message)
    wrapped.__cause__ = exc
    return wrapped


class _ThreadState(threading.local):
    """Per-thread engine state; class attributes are the defaults every thread starts with."""

    bulk = None  # the open BulkSegment of this thread
    starting = None  # callback ops readied while this thread is inside one's fn (a trampoline)


def _resolve(fut) -> None:
    if not fut.done():
        fut.set_result(None)


def _resolver(loop, fut):
    """A callback that wakes ``fut`` on its loop from any thread.

    The awaiting task may have been cancelled and its loop closed meanwhile;
    then there is nobody to wake, and the engine must go on regardless.
    """

    def wake() -> None:
        try:
            loop.call_soon_threadsafe(_resolve, fut)
        except RuntimeError:  # the loop is closed
            pass

    return wake


def _dedupe_mutate(const_vars, mutate_vars):
    """Drop duplicate writes and reads of vars the op also writes (MXNet's DeduplicateVarHandle)."""
    if len(mutate_vars) == 1:
        m = mutate_vars[0]
        if m in const_vars:  # identity test first, so this is cheap
            const_vars = [v for v in const_vars if v is not m]
        return const_vars, mutate_vars
    if len(set(mutate_vars)) != len(mutate_vars):
        mutate_vars = list(dict.fromkeys(mutate_vars))
    if const_vars:
        writes = set(mutate_vars)
        const_vars = [v for v in const_vars if v not in writes]
    return const_vars, mutate_vars


class Engine:
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
        self.push_sync(lambda rctx: None, cpu_ctx(), (), opr.const_vars + opr.mutate_vars,
                       _DELETE_VAR, name="DeleteOperator", inline=True)

    def delete_variable(self, delete_fn: Callable[[RunContext], Any] | None, ctx: Context | None, var: VarHandle) -> None:
        """Run ``delete_fn`` after every op pushed so far on ``var``; ``var`` is unusable after this call.

        The delete runs even when ``var`` carries an error: memory is always returned.
        """
        self._flush_bulk()
        self._submit(_Op(delete_fn or _noop, _SYNC, ctx or current_context(), (), [var],
                         _DELETE_VAR, 0, "DeleteVariable", True))
        var._deleted = True

    # ------------------------------------------------------------ scheduling
    def _submit(self, op: _Op, deduped: bool = False) -> None:
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

    def _should_inline(self, op: _Op) -> bool:
        """Decide where a ready sync op runs; unhinted ops go by their measured cost.

        Unknown ops go to the pool (a push must never block on a long op) and
        are timed there; known ones are re-timed one run in 32 so a cost that
        grows is noticed.
        """
        inline = op.inline
        if inline is None:
            key = op.key = op.name or getattr(op.fn, "__code__", op.fn)
            cost = self._cost.get(key)
            if cost is None:
                return False
            self._sample = sample = (self._sample + 1) & 31
            inline = cost < self.inline_threshold
            if sample:
                op.inline = inline  # decided: no timing this run
        return inline

    def _throttle(self) -> None:
        """Let the workers catch up when a thread pushes far ahead of them.

        Every pushed op holds its output memory until it runs, so an unbounded
        lead turns a loop of temporaries into a loop of allocations.  The
        pushing thread waits until half the lead is gone, but never more than
        ``MXASYNC_THROTTLE_MS`` per push: ops that wait for something this
        thread has yet to do can never deadlock it.  Engine threads never wait.
        """
        if self._loop.in_loop_thread():
            return
        pool = self._pool
        if pool is not None and threading.get_ident() in pool.idents:
            return
        low = self.yield_above // 2
        deadline = _perf() + self.throttle_seconds
        time.sleep(0)
        while self._pending > low and _perf() < deadline:
            time.sleep(5e-5)

    def _learn_cost(self, key, seconds: float) -> None:
        """Track an op's cost as a decaying minimum.

        A sample can be inflated by waiting for the GIL (up to the 5 ms switch
        interval) but never deflated, so the minimum is the honest estimate;
        letting it grow by 1.5x per larger sample still follows a real increase.
        """
        old = self._cost.get(key)
        self._cost[key] = seconds if old is None or seconds < old else min(seconds, old * 1.5)

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
                self._start_callback(op)
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

    def _start_callback(self, op: _Op) -> None:
        """Start a callback op.  Ops readied by an ``on_complete`` called inside ``fn``
        are started after ``fn`` returns, so chains of them never recurse."""
        tls = self._tls
        if tls.starting is not None:
            tls.starting.append(op)
            return
        pending = tls.starting = [op]
        try:
            while pending:
                self._start_one_callback(pending.pop(0))
        finally:
            tls.starting = None

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
        except Exception as exc:  # noqa: BLE001
            if not done.called:
                done(exc)
            else:
                import warnings

                warnings.warn(f"engine: op {op.display_name()!r} raised after on_complete: {exc!r}",
                              RuntimeWarning, stacklevel=1)

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

    def _run_in_worker(self, op: _Op) -> None:
        try:
            self._run_chain(op, True)
        except BaseException:  # noqa: BLE001 - a worker never dies; the error is already on the op's vars
            pass

    def _worker_pool(self) -> WorkerPool:
        pool = self._pool
        if pool is None:
            with self._pool_lock:
                if self._pool is None:
                    blas = env_int(max(1, cpu_count() // self.num_workers), "MXASYNC_BLAS_THREADS")
                    limit_blas_threads(blas)
                    # A worker waiting for the GIL gets it only at the holder's next switch
                    # interval (5 ms by default), during which a pushing loop can queue hundreds
                    # of ops and the memory they hold; a shorter interval keeps that bounded.
                    interval = env_float(500.0, "MXASYNC_SWITCH_INTERVAL_US") * 1e-6
                    if interval < sys.getswitchinterval():
                        sys.setswitchinterval(interval)
                    self._pool = WorkerPool(self._run_in_worker, self.num_workers)
                pool = self._pool
        return pool

    # --------------------------------------------------------------- devices
    def _run_context(self, ctx: Context, prop: FnProperty) -> RunContext:
        hooks = device_hooks(ctx.device_type)
        if hooks is None:
            cached = self._rc_cache.get(id(ctx))
            if cached is None:
                cached = self._rc_cache[id(ctx)] = (ctx, RunContext(ctx, None))
            return cached[1]
        self._device_used = True
        self._slow = True
        return RunContext(ctx, hooks.stream(ctx, stream_lane(prop)))

    def _device_before(self, op: _Op, rctx: RunContext) -> None:
        """Order ``op`` after the device work of the vars it touches."""
        stream = rctx.stream
        hooks = device_hooks(op.ctx.device_type) if stream is not None else None
        for v in op.const_vars:
            self._await_events(v._event and [v._event], stream, hooks)
        for v in op.mutate_vars:
            self._await_events(([v._event] if v._event else []) + list(v._read_events), stream, hooks)

    @staticmethod
    def _await_events(events, stream, hooks) -> None:
        for ev_stream, ev in events or ():
            if stream is None:
                ev.synchronize()
            elif ev_stream is not stream:
                hooks.wait_event(stream, ev)

    def _device_after(self, op: _Op, rctx: RunContext) -> None:
        hooks = device_hooks(op.ctx.device_type)
        event = (rctx.stream, hooks.record_event(rctx.stream))
        for v in op.mutate_vars:
            v._event = event
            v._read_events = ()
        for v in op.const_vars:
            v._read_events += (event,)

    @staticmethod
    def _host_sync(var: VarHandle, for_write: bool) -> None:
        events = ([var._event] if var._event else []) + (list(var._read_events) if for_write else [])
        for _, ev in events:
            ev.synchronize()

    # ------------------------------------------------------------------ waits
    def _guard_blocking_wait(self, what: str) -> None:
        pool = self._pool
        if pool is not None and threading.get_ident() in pool.idents:
            raise MXAsyncError(
                f"{what} called inside a running engine op would wait for itself; "
                "push the follow-up work as another op instead"
            )
        if self._loop.in_loop_thread():
            raise MXAsyncError(f"{what} would block the engine's event loop; use the awaitable twin")

    def _enqueue_signal(self, var: VarHandle, for_write: bool, fn: Callable[[], None]) -> bool:
        """Queue ``fn`` to run once ``var``'s pending writes (and reads, ``for_write``) finish.

        Returns False when there is nothing to wait for.  Caller holds the lock.
        """
        if for_write:
            if not (var._writing or var._readers or var._queue):
                return False
        elif not (var._writing or var._queue):
            return False
        op = _Op(fn, _SIGNAL, None, [] if for_write else [var], [var] if for_write else [],
                 _NORMAL, 0, "WaitForVar", True)
        op.wait = 1
        self._pending += 1
        var._queue.append((op, for_write))
        return True

    def wait_for_var(self, var: VarHandle, *, for_write: bool = False) -> None:
        """Block until every write pushed so far on ``var`` finished (and every read, ``for_write``).

        Raises the error of a failed writer, once.
        """
        self._flush_bulk()
        self._guard_blocking_wait("wait_for_var")
        latch = allocate_lock()
        latch.acquire()
        with self._lock:
            queued = self._enqueue_signal(var, for_write, latch.release)
        if queued:
            latch.acquire()
        if var._event is not None or (for_write and var._read_events):
            self._host_sync(var, for_write)
        self._raise_var_error(var)

    async def wait_for_var_async(self, var: VarHandle, *, for_write: bool = False) -> None:
        """Awaitable :meth:`wait_for_var`; the caller's event loop keeps running meanwhile."""
        self._flush_bulk()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        with self._lock:
            queued = self._enqueue_signal(var, for_write, _resolver(loop, fut))
        if queued:
            await fut
        if var._event is not None or (for_write and var._read_events):
            await asyncio.to_thread(self._host_sync, var, for_write)
        self._raise_var_error(var)

    def _raise_var_error(self, var: VarHandle) -> None:
        err = var._err
        if err is None or err.reported:
            return
        with self._lock:
            if err.reported:
                return
            err.reported = True
            self._live_errors -= 1
            self._refresh_slow()
        raise err.exc

    def wait_for_all(self) -> None:
        """Block until every op pushed so far finished; raise the first unreported error, if any.

        All errors pending at that point count as reported afterwards, so a
        second ``wait_for_all`` is clean (MXNet's rule).
        """
        self._flush_bulk()
        self._guard_blocking_wait("wait_for_all")
        latch = allocate_lock()
        latch.acquire()
        with self._lock:
            busy = self._pending > 0
            if busy:
                self._all_waiters.append(latch.release)
        if busy:
            latch.acquire()
        self._sync_devices()
        self._raise_first_error()

    async def wait_for_all_async(self) -> None:
        """Awaitable :meth:`wait_for_all`."""
        self._flush_bulk()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        with self._lock:
            busy = self._pending > 0
            if busy:
                self._all_waiters.append(_resolver(loop, fut))
        if busy:
            await fut
        if self._device_used:
            await asyncio.to_thread(self._sync_devices)
        self._raise_first_error()

    def _sync_devices(self) -> None:
        if self._device_used:
            for hooks in all_device_hooks():
                hooks.synchronize_all()

    def _raise_first_error(self) -> None:
        if not self._errors:
            return
        with self._lock:
            first = None
            for record in self._errors:
                if not record.reported:
                    if first is None:
                        first = record
                    record.reported = True
                    self._live_errors -= 1
            self._refresh_slow()
            self._errors.clear()
        if first is not None:
            raise first.exc

    def _wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for every pending op without touching errors; False on timeout."""
        latch = allocate_lock()
        latch.acquire()
        with self._lock:
            busy = self._pending > 0
            if busy:
                self._all_waiters.append(latch.release)
        if not busy:
            return True
        return latch.acquire(timeout=-1 if timeout is None else timeout)

    @property
    def num_pending(self) -> int:
        """Ops pushed and not yet finished (internal wait markers included)."""
        return self._pending

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

    def _after_fork_in_child(self) -> None:
        """Give a forked child fresh threads and locks; var state carries over."""
        pending = self._pending
        self._init_state()
        self._pending = pending


def _noop(rctx) -> None:
    return None


def cpu_ctx() -> Context:
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


def _exit_timeout() -> float:
    return env_float(10.0, "MXASYNC_EXIT_TIMEOUT")


@atexit.register
def _drain_at_exit() -> None:
    eng = Engine._instance
    if eng is None:
        return
    eng.notify_shutdown()
    with contextlib.suppress(Exception):
        eng._flush_bulk()
    if eng._loop.in_loop_thread():
        return
    eng._wait_idle(_exit_timeout())


_fork_state: dict[str, Any] = {}


def _before_fork() -> None:
    eng = Engine._instance
    if eng is None:
        return
    pool = eng._pool
    in_engine_thread = eng._loop.in_loop_thread() or (pool is not None and threading.get_ident() in pool.idents)
    if not in_engine_thread:
        eng._wait_idle(_exit_timeout())
    eng._lock.acquire()
    _fork_state["engine"] = weakref.ref(eng)


def _after_fork_parent() -> None:
    ref = _fork_state.pop("engine", None)
    eng = ref() if ref else None
    if eng is not None:
        eng._lock.release()


def _after_fork_child() -> None:
    ref = _fork_state.pop("engine", None)
    eng = ref() if ref else None
    if eng is not None:
        eng._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child)
