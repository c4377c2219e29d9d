"""An example mxasync backend: the device type ``toy``, backed by numpy.

What a plugin provides, in order (docs/backend_plugins.md walks through it):

* a :class:`~mxasync.backends.Backend` subclass naming its device type;
* storage for that device (here a counting host-memory pool);
* copies to and from host memory (``copy_from_host`` / ``copy_to_host``);
* streams for the engine (``DeviceHooks``; here a synchronous fake device whose
  events are complete when recorded, and which records every launch);
* operator overrides following the plugin contract (``mxasync.operator.override_signature``).

``ToyBackend.stats`` counts what went through each hook, so tests can see the
plugin really did the work.
"""

from __future__ import annotations

import numpy

from mxasync.backends import Backend
from mxasync.runtime import register_device_hooks, register_storage
from mxasync.runtime.storage import CPUStorage

from .kernels import register_kernels

__all__ = ["ToyBackend", "ToyStorage", "ToyHooks"]
__version__ = "0.1.0"

STATS: dict[str, int] = {}


def count(name: str) -> None:
    STATS[name] = STATS.get(name, 0) + 1


class ToyStorage(CPUStorage):
    """The toy device's memory: mxasync's pooled host allocator, counting its allocations."""

    def alloc(self, nbytes: int):
        count("alloc")
        return super().alloc(nbytes)


class _Stream:
    def __init__(self, ctx, lane: str):
        self.ctx, self.lane = ctx, lane

    def __repr__(self) -> str:
        return f"<toy stream {self.lane} of {self.ctx}>"


class _Event:
    done = True  # the toy device runs each launch at once, so an event is complete when recorded

    def synchronize(self) -> None:
        pass


class ToyHooks:
    """The runtime's ``DeviceHooks`` for the toy device: one compute and one copy stream per device."""

    def __init__(self):
        self.streams: dict = {}

    def stream(self, ctx, lane: str):
        key = (ctx, lane)
        if key not in self.streams:
            self.streams[key] = _Stream(ctx, lane)
        return self.streams[key]

    def record_event(self, stream):
        count("event")
        return _Event()

    def wait_event(self, stream, event) -> None:
        count("wait_event")

    def synchronize_all(self) -> None:
        pass


class _Launch:
    def __init__(self, run_ctx):
        self.run_ctx = run_ctx

    def __enter__(self):
        count(f"launch_{self.run_ctx.stream.lane}" if self.run_ctx.stream is not None else "launch_host")

    def __exit__(self, *exc):
        return None


class ToyBackend(Backend):
    name = "toy_numpy"
    device_type = "toy"      # a new device type: mx.Context("toy", 0) works once this is installed
    priority = 0
    api_version = 1          # the plugin contract this backend is written for
    asynchronous = True      # ops run on the engine's streams (given by ToyHooks)
    host_memory = False      # copies to and from cpu go through copy_from_host / copy_to_host

    def __init__(self):      # cheap: the registry builds every installed backend to learn its device type
        super().__init__()
        self.stats = STATS
        self.hooks = ToyHooks()
        register_kernels(self)

    def start(self) -> None:  # first use of the device type
        self.xp = numpy
        register_storage(self.device_type, ToyStorage)
        register_device_hooks(self.device_type, self.hooks)

    def launch_scope(self, run_ctx):
        return _Launch(run_ctx)

    def device_hooks(self):
        return self.hooks

    def copy_from_host(self, dst, src, run_ctx) -> None:
        count("copy_from_host")
        dst[...] = src

    def copy_to_host(self, src, dst, run_ctx) -> None:
        count("copy_to_host")
        dst[...] = src
