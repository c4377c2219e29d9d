"""The engine's part in device streams: run contexts, events on vars, waits before ops, host syncs.

See :mod:`mxasync.runtime.streams` for the rules; :class:`DeviceSync` applies them.
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

    @staticmethod
    def after(op: _Op, rctx: RunContext) -> None:
        """Record an event after ``op`` on its stream and keep it on the vars it used."""
        hooks = device_hooks(op.ctx.device_type)
        event = (rctx.stream, hooks.record_event(rctx.stream))
        for v in op.mutate_vars:
            v._event = event
            v._read_events = ()
        for v in op.const_vars:
            v._read_events += (event,)

    @staticmethod
    def needs_host_sync(var: VarHandle, for_write: bool) -> bool:
        return var._event is not None or (for_write and bool(var._read_events))

    @staticmethod
    def host_sync(var: VarHandle, for_write: bool) -> None:
        """Block the host until the device work on ``var`` (its writes; its reads too, ``for_write``) is done."""
        events = ([var._event] if var._event else []) + (list(var._read_events) if for_write else [])
        for _, ev in events:
            ev.synchronize()

    def sync_all(self) -> None:
        if self.used:
            for hooks in all_device_hooks():
                hooks.synchronize_all()
