"""Device streams and events, as the engine sees them.

The runtime knows no device API.  A backend that serves an asynchronous
device (CuPy for ``gpu``) registers a :class:`DeviceHooks` here; the engine then

* hands each op its stream (``RunContext.stream``): one compute stream and one
  copy stream per device, picked by the op's :class:`FnProperty`;
* records an event after each device op and keeps it on the vars the op used;
* before an op runs, makes it wait for the events of the vars it touches:
  nothing on the same stream (stream order suffices), ``stream.wait_event`` on
  another stream, ``event.synchronize()`` for host code (CPU ops and waits).
"""

from __future__ import annotations

from typing import Any, Protocol

from .run_context import FnProperty

__all__ = ["DeviceHooks", "register_device_hooks", "device_hooks", "all_device_hooks", "stream_lane"]


class DeviceHooks(Protocol):
    def stream(self, ctx, lane: str) -> Any:
        """The stream for ``ctx`` in ``lane`` ('compute' or 'copy'); same object each call."""

    def record_event(self, stream) -> Any:
        """An event recorded on ``stream`` now; it has ``synchronize()`` and ``done``."""

    def wait_event(self, stream, event) -> None:
        """Make ``stream`` wait for ``event`` without blocking the host."""

    def synchronize_all(self) -> None:
        """Block the host until every stream of this device type is idle."""


_HOOKS: dict[str, DeviceHooks] = {}


def register_device_hooks(device_type: str, hooks: DeviceHooks) -> None:
    _HOOKS[device_type] = hooks


def device_hooks(device_type: str) -> DeviceHooks | None:
    return _HOOKS.get(device_type)


def stream_lane(prop: FnProperty) -> str:
    return "copy" if prop in (FnProperty.COPY_TO_GPU, FnProperty.COPY_FROM_GPU) else "compute"


def all_device_hooks() -> list[DeviceHooks]:
    return list(_HOOKS.values())
