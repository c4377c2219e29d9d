"""What the engine pushes around: op blocks, pre-built operators, completion callbacks."""

from __future__ import annotations

import threading
import time

from ...base import MXAsyncError
from ..run_context import FnProperty

__all__ = ["Operator"]

# how an op runs: a sync fn, MXNet's fn(run_ctx, on_complete), a coroutine, or a wait marker
_SYNC, _CALLBACK, _CORO, _SIGNAL = 0, 1, 2, 3
_NORMAL = FnProperty.NORMAL
_perf = time.perf_counter


class _Op:
    """One pushed op.  ``wait`` counts the grants it still needs."""

    __slots__ = (
        "fn", "kind", "ctx", "const_vars", "mutate_vars", "prop", "priority", "name",
        "wait", "inline", "err", "profiling", "key",
        "scope",  # the profiler scope it was pushed in (set only while profiling; see Engine.set_profiler)
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

    __slots__ = ("runner", "op", "called", "started")

    def __init__(self, runner, op):
        self.runner = runner  # the engine's Runner (see .execution)
        self.op = op
        self.called = False
        self.started = None

    def __call__(self, error: BaseException | None = None) -> None:
        if self.called:
            raise MXAsyncError(f"on_complete of engine op {self.op.display_name()!r} called twice")
        self.called = True
        op = self.op
        runner = self.runner
        if error is not None:
            op.err = runner.make_error(op, error)
        if self.started is not None and runner.profiler is not None:
            runner.profiler.record(op, self.started, _perf())
        runner.finish(op)


def _wrap_error(exc: BaseException, name: str) -> MXAsyncError:
    if isinstance(exc, MXAsyncError):
        text = str(exc)
        message = text if text.startswith(name) else f"[{name}] {text}"
    else:
        message = f"[{name}] {type(exc).__name__}: {exc}"
    # an MXAsyncError subclass keeps its class (MXAsyncValueError stays a ValueError, as MXNet's op
    # errors of that kind are, e.g. npx.constraint_check)
    cls = type(exc) if isinstance(exc, MXAsyncError) else MXAsyncError
    try:
        wrapped = cls(message)
    except TypeError:
        wrapped = MXAsyncError(message)
    wrapped.__cause__ = exc
    return wrapped


class _ThreadState(threading.local):
    """Per-thread engine state; class attributes are the defaults every thread starts with."""

    bulk = None  # the open BulkSegment of this thread
    starting = None  # callback ops readied while this thread is inside one's fn (a trampoline)
    draining = False  # inside Deferred.run (its pushes must not drain again: no recursion)


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
