"""NVIDIA's cuDNN frontend (the ``cudnn`` module of ``nvidia-cudnn-frontend``), loaded lazily.

CuPy 14 dropped its cuDNN bindings; NVIDIA's Python frontend builds cuDNN graphs and runs
them on raw device pointers, so it works on CuPy memory as it is.  This module owns what
the frontend needs besides a graph: the library itself (imported on first use, never at
``import mxasync``), one cuDNN handle per device bound to the stream an op launches on, and
one workspace buffer per stream.

A workspace per stream is safe without an engine var: kernels on one stream run in the
order they were launched, so two ops sharing the buffer never overlap.

Tests swap the library for a fake with :func:`use` (the fake runs the graphs with numpy).

>>> from mxasync.backends.cupy.cudnn import frontend
>>> frontend.data_type_name("float32"), frontend.data_type_name("float64")
('FLOAT', None)
"""

from __future__ import annotations

import logging
import threading
from typing import Any

__all__ = ["load", "use", "unavailable_reason", "device_state", "pointer", "data_type_name", "DeviceState"]

log = logging.getLogger("mxasync.backends.cupy.cudnn")

_lock = threading.Lock()
_module: Any = None
_tried = False
_reason: str | None = None
_reported: set[str] = set()
_devices: dict[int, DeviceState] = {}

# the array dtypes cuDNN's graph API runs convolutions in (float64 is left to the generic kernels)
_DATA_TYPES = {"float32": "FLOAT", "float16": "HALF", "bfloat16": "BFLOAT16"}


def load() -> Any:
    """The frontend module, or None when it (or the cuDNN library under it) cannot be loaded."""
    global _module, _tried, _reason
    if _tried:
        return _module
    with _lock:
        if not _tried:
            try:
                import cudnn  # nvidia-cudnn-frontend; it dlopens libcudnn.so.9 at import

                _module = cudnn
            except Exception as exc:  # not installed, or no cuDNN 9 library beside it
                _reason = f"cuDNN frontend unavailable ({type(exc).__name__}: {exc})"
            _tried = True
    return _module


def use(module: Any) -> None:
    """Use ``module`` as the frontend (a fake in tests); None forgets it, so the next :func:`load` retries."""
    global _module, _tried, _reason
    with _lock:
        _module, _tried, _reason = module, module is not None, None
        _devices.clear()
        _reported.clear()


def unavailable_reason() -> str | None:
    return _reason


def report_once(key: str, message: str) -> None:
    """Say at debug level, once per ``key``, why an op runs its generic kernel instead of cuDNN."""
    if key not in _reported:
        _reported.add(key)
        log.debug("%s", message)


def data_type_name(dtype: Any) -> str | None:
    """The frontend's ``data_type`` member for an array dtype, or None when cuDNN is not used for it."""
    return _DATA_TYPES.get(str(dtype))


def pointer(array: Any) -> int:
    """The device address of an array: CuPy's ``data.ptr``; numpy's buffer address (the fake frontend)."""
    data = array.data
    ptr = getattr(data, "ptr", None)
    return int(ptr) if ptr is not None else int(array.__array_interface__["data"][0])


def current_device_and_stream(xp: Any) -> tuple[int, int]:
    """(device id, stream pointer) the caller launches on: CuPy's current ones; (0, 0) for a host namespace."""
    cuda = getattr(xp, "cuda", None)
    if cuda is None:
        return 0, 0
    return int(cuda.Device().id), int(cuda.get_current_stream().ptr)


class DeviceState:
    """One device's cuDNN handle, the stream it is bound to, and a workspace buffer per stream."""

    def __init__(self, fe: Any, device_id: int):
        self.device_id = device_id
        self.handle = fe.create_handle()
        self._fe = fe
        self._stream: int | None = None
        self._workspaces: dict[int, Any] = {}
        self.lock = threading.Lock()

    def bind(self, stream: int) -> Any:
        """The handle, set to launch on ``stream`` (``set_stream`` costs ~5 µs: only when it changes)."""
        if stream != self._stream:
            self._fe.set_stream(handle=self.handle, stream=stream)
            self._stream = stream
        return self.handle

    def workspace(self, xp: Any, stream: int, nbytes: int) -> Any:
        """A buffer of at least ``nbytes`` for ``stream``, grown (never shrunk) as plans need more."""
        ws = self._workspaces.get(stream)
        if ws is None or ws.nbytes < nbytes:
            ws = self._workspaces[stream] = xp.empty(max(1, int(nbytes)), dtype="uint8")
        return ws


def device_state(fe: Any, device_id: int) -> DeviceState:
    state = _devices.get(device_id)
    if state is None:
        with _lock:
            state = _devices.get(device_id)
            if state is None:
                state = _devices[device_id] = DeviceState(fe, device_id)
    return state
