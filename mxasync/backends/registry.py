"""The backend registry, fed by the ``mxasync.backends`` entry-point group.

Discovery reads entry points (no import).  The first time a device type is
used, every entry point is imported and constructed (cheap by contract), its
device type becomes a valid :class:`~mxasync.Context` type, and the backend
that serves the device type is started.  A plugin that fails is reported once,
with a warning naming the plugin and the cause, and is skipped; the others keep
working.

Who serves a device type (the rule, also in docs/backend_plugins.md):

1. the backend selected for it, if any: ``mx.backends.use(device_type, name)``
   or the variable ``MXASYNC_BACKEND_<DEVICE_TYPE>=name`` (``MXASYNC_BACKEND_CPU``);
2. else, for a device type mxasync ships a backend for (cpu, gpu, cpu_pinned,
   cpu_shared), that built-in backend: a plugin never takes one over unasked,
   whatever its priority (it stays on standby, and ``mx.backends.list()`` says so);
3. else the available plugin with the highest ``priority`` (ties: by name).

Each decision is logged once on the ``mxasync.backends`` logger: a takeover of
a built-in device type at WARNING, the other choices at INFO.

>>> from mxasync.backends import registry
>>> registry.get_backend("cpu").name
'numpy'
>>> any(info["name"] == "numpy" and info["state"] == "ready" for info in registry.list_backends())
True
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable
from importlib import metadata
from typing import Any

from ..base import MXAsyncError
from ..runtime.context import register_device_type, set_device_type_finder
from .base import PLUGIN_API_VERSION, Backend, BackendState

__all__ = ["get_backend", "list_backends", "register_backend", "reset", "use", "generation", "on_switch",
           "BackendWarning", "ENTRY_POINT_GROUP"]

log = logging.getLogger("mxasync.backends")

ENTRY_POINT_GROUP = "mxasync.backends"


class BackendWarning(UserWarning):
    """A backend plugin failed to import or start (reported once per plugin)."""


class _Entry:
    __slots__ = ("name", "source", "ep", "backend", "state", "error", "builtin", "note", "device_type", "warned")

    def __init__(self, name: str, source: str, ep=None, backend: Backend | None = None, builtin: bool = False):
        self.name = name
        self.source = source
        self.ep = ep
        self.backend = backend
        self.state = BackendState.DISCOVERED if backend is None else BackendState.LOADED
        self.error: str | None = None
        self.builtin = builtin  # shipped with mxasync (its module is under mxasync.)
        self.note: str | None = None  # why it serves, or why it does not
        self.device_type: str | None = backend.device_type if backend is not None else None
        self.warned = False  # its failure was reported (once per process)


_lock = threading.RLock()
_entries: dict[str, _Entry] | None = None
_serving: dict[str, Backend] = {}  # device_type -> started backend (the fast lookup)
_selected: dict[str, str] = {}  # device_type -> backend name, from use()
_loaded_all = False
_generation = 0  # bumped whenever the backend serving a device type may change (use, register_backend, reset)
_listeners: list[Callable[[], None]] = []


def generation() -> int:
    """A number that changes whenever the backend serving some device type may have changed.

    Caches of backend kernels and namespaces (an operator's kernels per context, the imperative
    plans, a bound executor's steps) keep the number they were built under and rebuild when it
    moved, so ops that ran before ``mx.backends.use(...)`` do not keep the old backend's kernels.
    """
    return _generation


def on_switch(callback: Callable[[], None]) -> None:
    """Call ``callback()`` (it must only drop caches) whenever :func:`generation` changes."""
    _listeners.append(callback)


def _switched() -> None:
    global _generation
    _generation += 1
    for callback in list(_listeners):
        callback()


def _discover() -> dict[str, _Entry]:
    global _entries
    if _entries is None:
        entries: dict[str, _Entry] = {}
        for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
            if ep.name not in entries:  # the first distribution to claim a name wins
                dist = getattr(ep, "dist", None)
                entries[ep.name] = _Entry(ep.name, f"{ep.value} ({dist.name if dist else '?'})", ep,
                                          builtin=ep.value.startswith("mxasync."))
        _entries = entries
    return _entries


def _fail(entry: _Entry, stage: str, exc: BaseException, warn: bool = True) -> None:
    entry.state = BackendState.FAILED
    entry.error = f"{stage}: {type(exc).__name__}: {exc}"
    if warn:
        _warn(entry)


def _warn(entry: _Entry) -> None:
    """Report a failed plugin with a BackendWarning, once per process."""
    if not entry.warned:
        entry.warned = True
        warnings.warn(f"mxasync backend plugin {entry.name!r} ({entry.source}) failed to {entry.error}",
                      BackendWarning, stacklevel=5)


def _load(entry: _Entry) -> None:
    if entry.state != BackendState.DISCOVERED:
        return
    try:
        obj = entry.ep.load()
        backend = obj if isinstance(obj, Backend) else obj()  # a class or factory
        if not isinstance(backend, Backend):
            raise TypeError(f"entry point gave {type(backend).__name__}, not an mxasync Backend")
    except Exception as exc:
        _fail(entry, "load", exc)  # its device type is unknown: reported now
        return
    entry.device_type = getattr(backend, "device_type", None)
    try:
        _check_api(backend)
        register_device_type(backend.device_type, backend.device_typeid)
    except Exception as exc:
        # refused (another contract version): reported when its device type is asked for, not in every
        # process that merely uses another device (mx.backends.list() shows it at any time)
        _fail(entry, "load", exc, warn=False)
        log.info("backend %r (%s) refused: %s", entry.name, entry.source, entry.error)
        return
    entry.backend = backend
    entry.state = BackendState.LOADED


def _check_api(backend: Backend) -> None:
    version = getattr(backend, "api_version", None)
    if version != PLUGIN_API_VERSION:
        raise MXAsyncError(f"backend {backend.name!r} is written for plugin API version {version!r}; "
                           f"this mxasync implements version {PLUGIN_API_VERSION}")


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
    """The started backend serving ``device_type`` (loads plugins on first use; the rule is in the module doc).

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
        entry = _choose(device_type)
        _serving[device_type] = entry.backend
        return entry.backend


def _selection(device_type: str) -> tuple[str | None, str]:
    if device_type in _selected:
        return _selected[device_type], f"mx.backends.use({device_type!r}, {_selected[device_type]!r})"
    var = f"MXASYNC_BACKEND_{device_type.upper()}"
    name = os.environ.get(var) or None
    return name, f"{var}={name}"


def _choose(device_type: str) -> _Entry:
    candidates = [e for e in _discover().values() if e.backend is not None and e.backend.device_type == device_type]
    candidates.sort(key=lambda e: (-e.backend.priority, e.name))
    builtins = [e for e in candidates if e.builtin]
    wanted, how = _selection(device_type)
    refused = [e for e in _discover().values() if e.backend is None and e.device_type == device_type]
    for entry in refused:  # a refused plugin for this device type: say so where it could have served
        if not builtins or entry.name == wanted:
            _warn(entry)
    if wanted is not None:
        chosen = [e for e in candidates if e.name == wanted]
        if not chosen:
            why = "".join(f"; {e.name!r} was refused ({e.error})" for e in refused if e.name == wanted)
            raise MXAsyncError(f"{how}: no installed backend {wanted!r} serves device type {device_type!r}"
                               f" (candidates: {', '.join(e.name for e in candidates) or 'none'}){why}")
        entry = chosen[0]
        if not _start(entry):
            raise MXAsyncError(f"{how}: backend {wanted!r} cannot serve {device_type!r}: {entry.state}"
                               + (f" ({entry.error})" if entry.error else ""))
        entry.note = f"serves {device_type!r}: selected by {how}"
        if builtins and not entry.builtin:
            log.warning("backend %r (%s) takes over device type %r from %r: selected by %s", entry.name,
                        entry.source, device_type, builtins[0].name, how)
        else:
            log.info("backend %r serves device type %r: selected by %s", entry.name, device_type, how)
        return entry
    pool = builtins or candidates
    for entry in pool:
        if _start(entry):
            break
    else:
        states = ", ".join(f"{e.name}: {e.state}{' (' + e.error + ')' if e.error else ''}"
                           for e in candidates + refused)
        raise MXAsyncError(f"no backend available for device type {device_type!r}"
                           + (f" (installed: {states})" if states else " (none installed)"))
    others = [e for e in candidates if e is not entry]
    entry.note = f"serves {device_type!r}" + (" (built-in)" if entry.builtin else f" (priority {entry.backend.priority})")
    for other in others:
        if builtins and not other.builtin:
            other.note = (f"standby: built-in {entry.name!r} serves {device_type!r}; select this one with "
                          f"MXASYNC_BACKEND_{device_type.upper()}={other.name} or "
                          f"mx.backends.use({device_type!r}, {other.name!r})")
            log.info("backend %r (%s) offers device type %r; %s", other.name, other.source, device_type, other.note)
        elif other.note is None:
            other.note = f"standby: {entry.name!r} serves {device_type!r}"
    if not entry.builtin:
        log.info("backend %r (%s) serves device type %r (priority %d%s)", entry.name, entry.source, device_type,
                 entry.backend.priority, f"; also offered by {', '.join(e.name for e in others)}" if others else "")
    return entry


def use(device_type: str, name: str | None) -> None:
    """Select backend ``name`` for ``device_type`` (``None`` goes back to the default rule).

    Same as ``MXASYNC_BACKEND_<TYPE>=name``.  Every op from then on runs the new backend's
    kernels, including ops that already ran (their cached kernels are dropped, see
    :func:`generation`), and :func:`get_backend` reports it.  Arrays made before keep
    their memory; with a backend whose arrays are not host memory, copy them to the
    new one (``as_in_context``) or make them again.  A name no installed backend has is
    refused at the next :func:`get_backend`, naming the candidates.
    """
    with _lock:
        if name is None:
            _selected.pop(device_type, None)
        else:
            _selected[device_type] = name
        _serving.pop(device_type, None)
        for e in _discover().values():
            if e.backend is not None and e.backend.device_type == device_type:
                e.note = None
        _switched()


def register_backend(backend: Backend, name: str | None = None) -> None:
    """Add a backend object directly (tests, interactive use); entry points are the normal way.

    It follows the same rule as an installed plugin: it serves a new device type
    at once, a built-in one only when selected with :func:`use`.
    """
    with _lock:
        _check_api(backend)
        register_device_type(backend.device_type, backend.device_typeid)
        entries = _discover()
        name = name or backend.name
        entries[name] = _Entry(name, "register_backend()", backend=backend)
        _serving.pop(backend.device_type, None)
        _switched()


def list_backends() -> list[dict[str, Any]]:
    """Every installed backend with its device type, priority and state (imports plugins, starts nothing)."""
    with _lock:
        _load_all()
        out = []
        for e in _discover().values():
            b = e.backend
            serving = b is not None and _serving.get(b.device_type) is b
            out.append({"name": e.name, "device_type": b.device_type if b else e.device_type,
                        "priority": b.priority if b else None, "state": e.state, "serving": serving,
                        "builtin": e.builtin, "source": e.source, "error": e.error, "note": e.note,
                        "api_version": getattr(b, "api_version", None) if b else None})
        return out


def reset() -> None:
    """Forget discovery results (tests; after installing a plugin in a running process)."""
    global _entries, _loaded_all
    with _lock:
        _entries = None
        _loaded_all = False
        _serving.clear()
        _selected.clear()
        _switched()


def _find_device_type(name: str) -> None:
    """The runtime's finder: an unknown Context device type may belong to a plugin not loaded yet."""
    with _lock:
        _load_all()
        for entry in _discover().values():
            if entry.backend is None and entry.device_type == name:
                _warn(entry)  # refused: the reason it is unknown


set_device_type_finder(_find_device_type)
