"""The engine's part in device streams: events on vars, waits before ops, host syncs.

See :mod:`mxasync.runtime.streams` for the rules; this mixin applies them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .context import Context
from .run_context import FnProperty, RunContext
from .streams import all_device_hooks, device_hooks, stream_lane
from .var import VarHandle

if TYPE_CHECKING:
    from .op_block import _Op

__all__ = ["DeviceSyncMixin"]


class DeviceSyncMixin:
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

    def _sync_devices(self) -> None:
        if self._device_used:
            for hooks in all_device_hooks():
                hooks.synchronize_all()
