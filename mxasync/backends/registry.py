"""The backend registry, fed by the ``mxasync.backends`` entry-point group.

Discovery reads entry points (no import).  The first time a device type is
used, every entry point is imported and constructed (cheap by contract), and the
best available backend of that device type is started.  A plugin that fails is
reported once, with a warning naming the plugin and the cause, and is skipped;
the others keep working.

>>> from mxasync.backends import registry
>>> registry.get_backend("cpu").name
'numpy'
>>> any(info["name"] == "numpy" and info["state"] == "ready" for info in registry.list_backends())
True
"""

from __future__ import annotations

import threading
import warnings
from importlib import metadata
from typing import Any

from ..base import MXAsyncError
from .base import Backend, BackendState

__all__ = ["get_backend", "list_backends", "register_backend", "reset", "BackendWarning", "ENTRY_POINT_GROUP"]

ENTRY_POINT_GROUP = "mxasync.backends"


class BackendWarning(UserWarning):
    """A backend plugin failed to import or start (reported once per plugin)."""


class _Entry:
    __slots__ = ("name", "source", "ep", "backend", "state", "error")

    def __init__(self, name: str, source: str, ep=None, backend: Backend | None = None):
        self.name = name
        self.source = source
        self.ep = ep
        self.backend = backend
        self.state = BackendState.DISCOVERED if backend is None else BackendState.LOADED
        self.error: str | None = None


_lock = threading.RLock()
_entries: dict[str, _Entry] | None = None
_serving: dict[str, Backend] = {}  # device_type -> started backend (the fast lookup)
_loaded_all = False


def _discover() -> dict[str, _Entry]:
    global _entries
    if _entries is None:
        entries: dict[str, _Entry] = {}
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name not in entries:  # the first distribution to claim a name wins
                dist = getattr(ep, "dist", None)
                entries[ep.name] = _Entry(ep.name, f"{ep.value} ({dist.name if dist else '?'})", ep)
        _entries = entries
    return _entries


def _fail(entry: _Entry, stage: str, exc: BaseException) -> None:
    entry.state = BackendState.FAILED
    entry.error = f"{stage}: {type(exc).__name__}: {exc}"
    warnings.warn(f"mxasync backend plugin {entry.name!r} ({entry.source}) failed to {entry.error}",
                  BackendWarning, stacklevel=4)


def _load(entry: _Entry) -> None:
    if entry.state != BackendState.DISCOVERED:
        return
    try:
        obj = entry.ep.load()
        backend = obj if isinstance(obj, Backend) else obj()  # a class or factory
        if not isinstance(backend, Backend):
            raise TypeError(f"entry point gave {type(backend).__name__}, not an mxasync Backend")
    except Exception as exc:
        _fail(entry, "load", exc)
        return
    entry.backend = backend
    entry.state = BackendState.LOADED


def _load_all() -> None:
    global _loaded_all
    if not _loaded_all:
        for entry in list(_discover().values()):
            _load(entry)
        _loaded_all = True


def _start(entry: _Entry) -> bool:
    if entry.state == BackendState.READY:
        return True
    if entry.state != BackendState.LOADED:
        return False
    backend = entry.backend
    try:
        if not backend.is_available():
            entry.state = BackendState.UNAVAILABLE
            entry.error = backend.unavailable_reason
            return False
        backend.start()
    except Exception as exc:
        _fail(entry, "start", exc)
        return False
    entry.state = BackendState.READY
    return True


def get_backend(device_type: str) -> Backend:
    """The started backend serving ``device_type`` (loads plugins on first use).

    Raises :class:`~mxasync.base.MXAsyncError` when no installed backend can serve it.
    """
    backend = _serving.get(device_type)
    if backend is not None:
        return backend
    with _lock:
        backend = _serving.get(device_type)
        if backend is not None:
            return backend
        _load_all()
        candidates = [e for e in _discover().values()
                      if e.backend is not None and e.backend.device_type == device_type]
        candidates.sort(key=lambda e: -e.backend.priority)
        for entry in candidates:
            if _start(entry):
                _serving[device_type] = entry.backend
                return entry.backend
        states = ", ".join(f"{e.name}: {e.state}{' (' + e.error + ')' if e.error else ''}" for e in candidates)
        raise MXAsyncError(f"no backend available for device type {device_type!r}"
                           + (f" (installed: {states})" if states else " (none installed)"))


def register_backend(backend: Backend, name: str | None = None) -> None:
    """Add a backend object directly (tests, interactive use); entry points are the normal way."""
    with _lock:
        entries = _discover()
        name = name or backend.name
        entries[name] = _Entry(name, "register_backend()", backend=backend)
        cur = _serving.get(backend.device_type)
        if cur is None or backend.priority > cur.priority:
            _serving.pop(backend.device_type, None)


def list_backends() -> list[dict[str, Any]]:
    """Every installed backend with its device type, priority and state (imports plugins, starts nothing)."""
    with _lock:
        _load_all()
        out = []
        for e in _discover().values():
            b = e.backend
            serving = b is not None and _serving.get(b.device_type) is b
            out.append({"name": e.name, "device_type": b.device_type if b else None,
                        "priority": b.priority if b else None, "state": e.state, "serving": serving,
                        "source": e.source, "error": e.error})
        return out


def reset() -> None:
    """Forget discovery results (tests; after installing a plugin in a running process)."""
    global _entries, _loaded_all
    with _lock:
        _entries = None
        _loaded_all = False
        _serving.clear()
