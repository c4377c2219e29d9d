"""What an engine op is told about itself: its function property and run context."""

from __future__ import annotations

import enum

__all__ = ["FnProperty", "RunContext"]


class FnProperty(enum.IntEnum):
    """MXNet's function properties; they pick the stream and the scheduling lane."""

    NORMAL = 0
    COPY_TO_GPU = 1
    COPY_FROM_GPU = 2
    CPU_PRIORITIZED = 3
    ASYNC = 4
    DELETE_VAR = 5
    GPU_PRIORITIZED = 6


class RunContext:
    """Handed to every engine op when it runs.

    ``ctx`` is the device, ``stream`` the CuPy stream the op must launch on
    (``None`` on CPU).  Ops launched on a stream may return before the device has
    finished: the engine records an event after them and makes host readers wait.
    """

    __slots__ = ("ctx", "stream")

    def __init__(self, ctx, stream=None):
        self.ctx = ctx
        self.stream = stream

    def get_stream(self):
        return self.stream

    def __repr__(self) -> str:
        return f"RunContext(ctx={self.ctx!r}, stream={self.stream!r})"
