"""The CuPy backend: ``gpu`` contexts, streams and events for the engine.

cupy is imported only in :meth:`CupyBackend.is_available` / :meth:`start`, so
this module imports cleanly on machines without it, and the backend then
reports itself unavailable.

>>> from mxasync.backends.cupy import CupyBackend
>>> b = CupyBackend(); b.device_type
'gpu'
"""

from __future__ import annotations

import threading
from typing import Any

from ..base import Backend
from . import cudnn

__all__ = ["CupyBackend", "CupyDeviceHooks"]


class CupyDeviceHooks:
    """The runtime's ``DeviceHooks`` for CuPy: one compute and one copy stream per device."""

    def __init__(self, cupy):
        self._cp = cupy
        self._streams: dict[tuple[int, str], Any] = {}
        self._lock = threading.Lock()

    def stream(self, ctx, lane: str):
        key = (ctx.device_id, lane)
        s = self._streams.get(key)
        if s is None:
            with self._lock:
                s = self._streams.get(key)
                if s is None:
                    with self._cp.cuda.Device(ctx.device_id):
                        s = self._streams[key] = self._cp.cuda.Stream(non_blocking=True)
        return s

    def record_event(self, stream):
        ev = self._cp.cuda.Event(block=False, disable_timing=True)
        ev.record(stream)
        return ev

    def wait_event(self, stream, event) -> None:
        stream.wait_event(event)

    def synchronize_all(self) -> None:
        for s in list(self._streams.values()):
            s.synchronize()


class CupyBackend(Backend):
    name = "cupy"
    device_type = "gpu"
    priority = 0
    asynchronous = True
    host_memory = False

    def __init__(self) -> None:
        super().__init__()
        self._hooks: CupyDeviceHooks | None = None
        cudnn.install(self)  # cuDNN kernels through the override seam; the frontend loads on first use

    def is_available(self) -> bool:
        try:
            import cupy

            n = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:  # no cupy, no driver, no device
            self.unavailable_reason = f"{type(exc).__name__}: {exc}"
            return False
        return n > 0

    def start(self) -> None:
        import cupy

        from ...runtime.resource import register_resource_factory
        from ...runtime.streams import register_device_hooks

        self.xp = cupy
        self._hooks = CupyDeviceHooks(cupy)
        register_device_hooks("gpu", self._hooks)

        def make_generator(seed_seq, ctx):
            with cupy.cuda.Device(ctx.device_id):
                return cupy.random.Generator(cupy.random.XORWOW(int(seed_seq.generate_state(1)[0])))

        def make_space(nbytes, ctx):
            with cupy.cuda.Device(ctx.device_id):
                return cupy.empty(nbytes, dtype=cupy.uint8)

        register_resource_factory("gpu", make_generator, make_space)

    def device_scope(self, ctx):
        return self.xp.cuda.Device(0 if ctx is None else ctx.device_id)

    def launch_scope(self, run_ctx):
        """Kernels launched inside run on the op's device and stream (``RunContext.stream``)."""
        return _Launch(self.xp, run_ctx)

    def to_numpy(self, array):
        return self.xp.asnumpy(array)

    def from_storage(self, handle, shape, dtype):
        return self.xp.ndarray(tuple(shape), dtype=dtype, memptr=handle.buffer)

    def copy_from_host(self, dst, src, run_ctx) -> None:
        import numpy

        dst.set(numpy.ascontiguousarray(src), stream=run_ctx.stream)

    def copy_to_host(self, src, dst, run_ctx) -> None:
        src.get(out=dst, stream=run_ctx.stream)

    def device_hooks(self):
        return self._hooks

    def synchronize(self, ctx=None) -> None:
        if self._hooks is not None:
            self._hooks.synchronize_all()


class _Launch:
    __slots__ = ("dev", "stream")

    def __init__(self, cupy, run_ctx):
        self.dev = cupy.cuda.Device(run_ctx.ctx.device_id)
        self.stream = run_ctx.stream

    def __enter__(self):
        self.dev.__enter__()
        if self.stream is not None:
            self.stream.__enter__()

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        self.dev.__exit__(*exc)
