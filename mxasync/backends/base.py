"""The :class:`Backend` protocol: what a plugin gives mxasync for one device type.

A backend serves one ``device_type`` ('cpu', 'gpu', ...).  It offers

* ``xp``: an array namespace (numpy-like module) every generic op is written against;
* array helpers: ``empty``, ``asarray``, ``to_numpy`` and ``from_storage`` (the
  storage hook: view a :class:`~mxasync.runtime.storage.StorageHandle` as an array);
* stream helpers for asynchronous devices (``device_hooks()``, ``device_scope(ctx)``);
* ``overrides``: a table ``{op_name: kernel}`` replacing an op's generic kernel.

Construction must be cheap and must not import heavy libraries: the registry
builds every installed backend to learn its device type, and only calls
:meth:`Backend.start` on first use of that device type.

>>> from mxasync.backends.base import Backend
>>> import numpy
>>> class Tiny(Backend):
...     name, device_type = "tiny", "cpu_shared"
...     def start(self):
...         self.xp = numpy
>>> b = Tiny(); b.start(); b.empty((2,), "float32", None).shape
(2,)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

__all__ = ["Backend", "BackendState", "PLUGIN_API_VERSION"]

#: The version of the plugin contract (docs/backend_plugins.md) this mxasync implements.  A
#: backend states the version it was written for in ``Backend.api_version``; the registry
#: refuses (reports as failed) a backend written for another one.
PLUGIN_API_VERSION = 1


class BackendState:
    """Lifecycle states shown by ``mx.backends.list()``."""

    DISCOVERED = "discovered"  # entry point seen, not imported yet
    LOADED = "loaded"  # imported and constructed, not started
    READY = "ready"  # started: serves its device type
    UNAVAILABLE = "unavailable"  # imported fine, but is_available() is False (no device, no library)
    FAILED = "failed"  # import, construction or start raised


class Backend:
    """Base class for backends; subclass it and register it under the ``mxasync.backends`` entry-point group.

    Class attributes: ``name``, ``device_type``, ``priority``, ``api_version``,
    ``device_typeid``, ``host_memory``, ``asynchronous`` (docs/backend_plugins.md).
    Who serves a device type: the backend selected for it (``mx.backends.use`` or
    ``MXASYNC_BACKEND_<TYPE>``); else, for a device type mxasync ships a backend for
    (cpu, gpu, cpu_pinned, cpu_shared), the built-in one, whatever a plugin's
    ``priority``; else the available plugin with the highest ``priority``.
    """

    name: str = "backend"
    device_type: str = "cpu"
    priority: int = 0
    #: the plugin contract version this backend is written for (see PLUGIN_API_VERSION)
    api_version: int = PLUGIN_API_VERSION
    #: the numeric id of a new device type (None: the next free id from 16)
    device_typeid: int | None = None
    #: True when the device's arrays live in host memory that numpy can read and write
    #: (copies to and from cpu are then plain assignments); False: copies go through
    #: :meth:`copy_from_host` / :meth:`copy_to_host`
    host_memory: bool = True
    #: True when ops finish asynchronously on a stream (needs device hooks)
    asynchronous: bool = False
    #: why is_available() said no (shown by mx.backends.list())
    unavailable_reason: str | None = None

    def __init__(self) -> None:
        self.xp: Any = None
        self.overrides: dict[str, Callable] = {}

    # -- lifecycle -------------------------------------------------------
    def is_available(self) -> bool:
        """Whether this backend can run here (library importable, device present)."""
        return True

    def start(self) -> None:
        """Import heavy dependencies, set ``self.xp``, register hooks; called once at first use."""

    # -- arrays ----------------------------------------------------------
    def device_scope(self, ctx) -> contextlib.AbstractContextManager:
        """A context manager that makes ``ctx`` the current device for array creation."""
        return contextlib.nullcontext()

    def empty(self, shape, dtype, ctx) -> Any:
        with self.device_scope(ctx):
            return self.xp.empty(shape, dtype=dtype)

    def zeros(self, shape, dtype, ctx) -> Any:
        with self.device_scope(ctx):
            return self.xp.zeros(shape, dtype=dtype)

    def asarray(self, data, ctx, dtype=None) -> Any:
        with self.device_scope(ctx):
            return self.xp.asarray(data, dtype=dtype)

    def to_numpy(self, array) -> Any:
        """A numpy copy (or view on host backends) of a backend array."""
        import numpy

        return numpy.asarray(array)

    def from_storage(self, handle, shape, dtype) -> Any:
        """The storage hook: view ``handle.buffer`` (runtime Storage) as an array of ``shape``/``dtype``.

        Called for every array of a device type whose storage was registered
        (``mxasync.runtime.register_storage``); the default views a host buffer
        (a numpy ``uint8`` array) with numpy.
        """
        import numpy

        dtype = numpy.dtype(dtype)
        n = 1
        for d in shape:
            n *= d
        return handle.buffer[: n * dtype.itemsize].view(dtype).reshape(shape)

    def copy_from_host(self, dst, src, run_ctx) -> None:
        """Copy the numpy array ``src`` into this device's array ``dst`` (inside a pushed copy op).

        ``run_ctx.stream`` is the device's copy stream when the device registered hooks.
        """
        dst[...] = src

    def copy_to_host(self, src, dst, run_ctx) -> None:
        """Copy this device's array ``src`` into the numpy array ``dst`` (inside a pushed copy op)."""
        dst[...] = self.to_numpy(src)

    # -- streams and events (host backends: none) --------------------------
    def launch_scope(self, run_ctx) -> contextlib.AbstractContextManager:
        """Entered around every kernel launch of an op: selects the op's device and stream."""
        return contextlib.nullcontext()

    def device_hooks(self) -> Any:
        """The runtime ``DeviceHooks`` of an asynchronous device, else None."""
        return None

    def synchronize(self, ctx=None) -> None:
        """Block until the device has finished queued work."""

    # -- operators -------------------------------------------------------
    def override(self, op_name: str) -> Callable[[Callable], Callable]:
        """Decorator: ``@backend.override('relu')`` replaces that op's generic kernel on this backend.

        What the kernel receives is the plugin contract: docs/backend_plugins.md and
        ``mxasync.operator.override_signature(op_name)``.
        """

        def deco(fn: Callable) -> Callable:
            self.overrides[op_name] = fn
            return fn

        return deco

    def __repr__(self) -> str:
        return f"<Backend {self.name!r} for {self.device_type!r}>"
