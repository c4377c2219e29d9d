"""Device contexts: ``Context``, ``mx.cpu()``, ``mx.gpu()`` and the ``with ctx:`` scope.

The current context lives in a :class:`contextvars.ContextVar`, so a ``with ctx:``
block is private to its thread and to its asyncio task, as users of both expect.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from functools import cache

from ..base import MXAsyncError

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "cpu_shared", "current_context", "num_gpus", "device",
           "register_device_type", "device_types", "set_device_type_finder", "BUILTIN_DEVICE_TYPES",
           "HOST_DEVICE_TYPES", "mixable"]

#: MXNet's device types and ids; backend plugins add their own with :func:`register_device_type`
BUILTIN_DEVICE_TYPES = ("cpu", "gpu", "cpu_pinned", "cpu_shared")
#: the device types whose arrays are host memory: one op may mix them (MXNet does), its result on the first
HOST_DEVICE_TYPES = ("cpu", "cpu_pinned", "cpu_shared")
_DEVTYPE_TO_ID = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
_ID_TO_DEVTYPE = {v: k for k, v in _DEVTYPE_TO_ID.items()}
_FIRST_PLUGIN_TYPEID = 16  # MXNet's ids stop at 5; plugin device types count up from here
_types_lock = threading.Lock()
# Called with an unknown device type name; may register it (the backend registry installs one
# that looks the name up among installed backend plugins).  The runtime knows no backend.
_finder: Callable[[str], object] | None = None


def mixable(a: Context, b: Context) -> bool:
    """Whether one op may take inputs on contexts ``a`` and ``b``: the same context, or two host ones.

    Any other pair (``gpu(0)`` and ``cpu(0)``, ``gpu(0)`` and ``gpu(1)``, a plugin's device and
    ``cpu``) needs a copy first (``as_in_context``), as in MXNet.

    >>> mixable(cpu(0), cpu_pinned(0)), mixable(cpu(0), gpu(0))
    (True, False)
    """
    return a == b or (a.device_type in HOST_DEVICE_TYPES and b.device_type in HOST_DEVICE_TYPES)


def register_device_type(name: str, typeid: int | None = None) -> int:
    """Make ``name`` a device type usable in :class:`Context`; returns its type id.

    Backend plugins call it (the backend registry does it for every plugin it
    loads).  Registering a known name again returns its id; a plugin's id is
    ``typeid`` when given and free, else the next one from 16 (ids of plugin
    device types are per process: files store the name where they can).

    >>> from mxasync.runtime.context import register_device_type, Context
    >>> register_device_type("cpu")
    1
    >>> tid = register_device_type("doc_dev"); Context("doc_dev", 1), Context(tid, 1) == Context("doc_dev", 1)
    (doc_dev(1), True)
    """
    if not isinstance(name, str) or not name.isidentifier():
        raise MXAsyncError(f"register_device_type: a device type is an identifier, got {name!r}")
    with _types_lock:
        if name in _DEVTYPE_TO_ID:
            return _DEVTYPE_TO_ID[name]
        if typeid is None or typeid in _ID_TO_DEVTYPE:
            typeid = max(_FIRST_PLUGIN_TYPEID - 1, *_ID_TO_DEVTYPE) + 1
        _DEVTYPE_TO_ID[name] = typeid
        _ID_TO_DEVTYPE[typeid] = name
        return typeid


def device_types() -> dict[str, int]:
    """The device types known now (built-in and registered), with their ids."""
    return dict(_DEVTYPE_TO_ID)


def set_device_type_finder(finder: Callable[[str], object] | None) -> None:
    """Install the hook that may register an unknown device type on first use (the backend registry's)."""
    global _finder
    _finder = finder


def _known(device_type: str) -> bool:
    if device_type in _DEVTYPE_TO_ID:
        return True
    if _finder is not None and isinstance(device_type, str):
        _finder(device_type)
    return device_type in _DEVTYPE_TO_ID


class _CurrentOnAccess:
    """``Context.default_ctx`` (MXNet 1.x's class attribute, read on the class): the current context."""

    def __get__(self, obj, owner=None) -> Context:
        return current_context()


class Context:
    """A device: ``Context('cpu', 0)``, ``Context('gpu', 1)``.

    Contexts are small immutable values; equal contexts hash equally, so they
    key per-device tables (storage pools, streams, random generators).

    >>> import mxasync as mx
    >>> ctx = mx.Context('gpu', 1)
    >>> ctx, ctx.device_type, ctx.device_id, ctx.device_typeid
    (gpu(1), 'gpu', 1, 2)
    >>> with mx.cpu(3):
    ...     mx.current_context()
    cpu(3)
    """

    __slots__ = ("device_type", "device_id", "_hash")

    devtype2str = _ID_TO_DEVTYPE
    devstr2type = _DEVTYPE_TO_ID
    default_ctx = _CurrentOnAccess()

    def __init__(self, device_type: str | int | Context = "cpu", device_id: int = 0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        elif isinstance(device_type, int):
            if device_type not in _ID_TO_DEVTYPE:
                raise MXAsyncError(f"Context: unknown device type id {device_type}")
            device_type = _ID_TO_DEVTYPE[device_type]
        if not _known(device_type):
            raise MXAsyncError(
                f"Context: unknown device type {device_type!r}; expected one of {sorted(_DEVTYPE_TO_ID)} "
                "(a backend plugin adds its own device type: see mx.backends.list())"
            )
        device_id = int(device_id)
        if device_id < 0:
            raise MXAsyncError(f"Context: device_id must be >= 0, got {device_id}")
        object.__setattr__(self, "device_type", device_type)
        object.__setattr__(self, "device_id", device_id)
        object.__setattr__(self, "_hash", hash((device_type, device_id)))

    def __setattr__(self, name, value):
        raise AttributeError("Context is immutable")

    @property
    def device_typeid(self) -> int:
        return _DEVTYPE_TO_ID[self.device_type]

    @property
    def is_gpu(self) -> bool:
        return self.device_type == "gpu"

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, Context)
            and self.device_type == other.device_type
            and self.device_id == other.device_id
        )

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __reduce__(self):
        return (Context, (self.device_type, self.device_id))

    # ``with ctx:`` makes ctx the default for array creation in this thread/task.
    # Contexts are shared values, so the reset token is kept on a per-entry stack.
    def __enter__(self) -> Context:
        token = _CURRENT.set(self)
        stack = _TOKENS.get()
        _TOKENS.set(stack + (token,))
        return self

    def __exit__(self, *exc) -> None:
        stack = _TOKENS.get()
        _TOKENS.set(stack[:-1])
        _CURRENT.reset(stack[-1])

    def empty_cache(self) -> None:
        """Return this device's pooled memory to the system (MXNet's ``ctx.empty_cache()``)."""
        from .storage import Storage

        Storage.get(self).release_all()


@cache
def _make(device_type: str, device_id: int) -> Context:
    return Context(device_type, device_id)


def cpu(device_id: int = 0) -> Context:
    """The CPU context; ``device_id`` only tells pools and streams apart."""
    return _make("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """A GPU context; creating it needs no GPU, using it does."""
    return _make("gpu", device_id)


def device(device_type: str = "cpu", device_id: int = 0) -> Context:
    """``device('toy', 0)``: the context of any device type, a plugin's included (``mx.device``)."""
    if isinstance(device_type, str) and ":" in device_type:  # 'gpu:1'
        device_type, _, num = device_type.partition(":")
        device_id = int(num)
    return _make(device_type, device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    return _make("cpu_pinned", device_id)


def cpu_shared(device_id: int = 0) -> Context:
    return _make("cpu_shared", device_id)


_CURRENT: contextvars.ContextVar[Context] = contextvars.ContextVar("mxasync_context", default=cpu(0))  # noqa: B039 - Context is immutable
_TOKENS: contextvars.ContextVar[tuple] = contextvars.ContextVar("mxasync_context_tokens", default=())


def current_context() -> Context:
    """The context of the innermost ``with ctx:`` in this thread or task (``cpu(0)`` outside any)."""
    return _CURRENT.get()


def num_gpus() -> int:
    """Number of CUDA devices CuPy can see (0 when CuPy or a driver is missing)."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:
        return 0
