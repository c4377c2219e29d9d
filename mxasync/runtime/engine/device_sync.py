"""The engine's part in device streams: run contexts, marks on vars, waits before ops, host syncs.

See :mod:`mxasync.runtime.streams` for the rules; :class:`DeviceSync` applies them.  A device
op launches and returns; the engine then leaves a *mark* on the vars it used: the op's stream
and, once something must wait for it, an event.  The event is recorded only then (an op on
another stream, a host read, a copy lane): ops that follow on the same stream are ordered by
the stream itself and record nothing.  An event recorded later on the same stream covers the
op too (a stream runs in order), so late recording is exact enough: it may also cover work
launched after the op, never less.  All the outputs of one op share one mark, so the first
waiter records the event for every later one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..context import Context
from ..run_context import FnProperty, RunContext
from ..streams import all_device_hooks, device_hooks, stream_lane
from ..var import VarHandle

if TYPE_CHECKING:
    from .ops import _Op

__all__ = ["DeviceSync"]


class DeviceSync:
    """Run contexts per context, and the events of device ops.

    ``cache`` maps ``id(ctx)`` to ``(ctx, RunContext)`` for host contexts (the hot paths
    bind it once); ``used`` turns True at the first device op, and ``on_use`` tells the
    engine to take its full path from then on.
    """

    def __init__(self, on_use: Callable[[], None]):
        self.cache: dict[int, tuple[Context, RunContext]] = {}
        self.used = False
        self._on_use = on_use

    def run_context(self, ctx: Context, prop: FnProperty) -> RunContext:
        hooks = device_hooks(ctx.device_type)
        if hooks is None:
            cached = self.cache.get(id(ctx))
            if cached is None:
                cached = self.cache[id(ctx)] = (ctx, RunContext(ctx, None))
            return cached[1]
        if not self.used:
            self.used = True
            self._on_use()
        return RunContext(ctx, hooks.stream(ctx, stream_lane(prop)))

    def before(self, op: _Op, rctx: RunContext) -> None:
        """Order ``op`` after the device work of the vars it touches (their last write; for
        the vars it writes, the reads since too)."""
        stream = rctx.stream
        hooks = device_hooks(op.ctx.device_type) if stream is not None else None
        for v in op.const_vars:
            mark = v._event
            if mark is not None:
                _order(mark, stream, hooks)
        for v in op.mutate_vars:
            mark = v._event
            if mark is not None:
                _order(mark, stream, hooks)
            for mark in v._read_events:
                _order(mark, stream, hooks)

    @staticmethod
    def after(op: _Op, rctx: RunContext) -> None:
        """Leave ``op``'s mark on the vars it used: its stream, no event yet (see the module docstring)."""
        stream = rctx.stream
        mark = [stream, None, device_hooks(op.ctx.device_type)]
        for v in op.mutate_vars:
            v._event = mark
            v._read_events = ()
        for v in op.const_vars:
            reads = v._read_events  # one mark per stream: a later read on a stream covers the earlier
            v._read_events = (*(m for m in reads if m[0] is not stream), mark) if reads else (mark,)

    @staticmethod
    def needs_host_sync(var: VarHandle, for_write: bool) -> bool:
        return var._event is not None or (for_write and bool(var._read_events))

    @staticmethod
    def host_sync(var: VarHandle, for_write: bool) -> None:
        """Block the host until the device work on ``var`` (its writes; its reads too, ``for_write``) is
        done: a synchronize on the event of its last write (recorded now if nothing recorded it yet)."""
        mark = var._event
        if mark is not None:
            event_of(mark).synchronize()
        if for_write:
            for mark in var._read_events:
                event_of(mark).synchronize()

    def sync_all(self) -> None:
        """Block the host until every stream of every device type is idle (``wait_for_all``)."""
        if self.used:
            for hooks in all_device_hooks():
                hooks.synchronize_all()


def event_of(mark):
    """The event of a mark, recorded on its stream now if none was yet (and kept on the mark, which
    every var the op used shares).  A mark is ``[stream, event or None, hooks]``, or a
    ``(stream, event)`` pair from code that records its own event (the NCCL watch)."""
    event = mark[1]
    if event is None:
        event = mark[1] = mark[2].record_event(mark[0])
    return event


def _order(mark, stream, hooks) -> None:
    """Order work about to run on ``stream`` (None: the host) after the work ``mark`` stands for."""
    if stream is None:
        event_of(mark).synchronize()
    elif mark[0] is not stream:
        hooks.wait_event(stream, event_of(mark))
