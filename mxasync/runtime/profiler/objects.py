"""MXNet's profiler objects: Domain, Task, Frame, Event (timed ranges), Counter, Marker.

Each one records into the profiler only while it runs (``set_state('run')`` and not
paused); ranges appear in the Chrome trace and in :func:`~mxasync.profiler.dumps`
under their domain, as MXNet lists them.

>>> import mxasync as mx
>>> d = mx.profiler.Domain("app")
>>> c = mx.profiler.Counter(d, "items", 3)
>>> c += 2
>>> c.value, str(d)
(5, 'app')
"""

from __future__ import annotations

import time

from ...base import MXAsyncError
from .core import current

__all__ = ["Domain", "Task", "Frame", "Event", "Counter", "Marker"]


class Domain:
    """A named group of tasks, frames, counters and markers."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise MXAsyncError(f"profiler.Domain: name must be a non-empty string, got {name!r}")
        self.name = name

    def new_task(self, name: str) -> Task:
        return Task(self, name)

    def new_frame(self, name: str) -> Frame:
        return Frame(self, name)

    def new_counter(self, name: str, value: int | None = None) -> Counter:
        return Counter(self, name, value)

    def new_marker(self, name: str) -> Marker:
        return Marker(self, name)

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Domain({self.name!r})"


class _Range:
    """A start/stop pair recorded as one range event of ``domain``."""

    def __init__(self, domain: str, name: str) -> None:
        self._domain = domain
        self.name = name
        self._t0: float | None = None

    def start(self) -> None:
        self._t0 = time.perf_counter()

    def stop(self) -> None:
        if self._t0 is None:
            raise MXAsyncError(f"profiler {type(self).__name__} {self.name!r}: stop() without start()")
        current().record_range(self._domain, self.name, self._t0, time.perf_counter())
        self._t0 = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __str__(self) -> str:
        return self.name


def _domain_name(domain) -> str:
    if not isinstance(domain, Domain):
        raise MXAsyncError(f"profiler: domain must be a profiler.Domain, got {type(domain).__name__}")
    return domain.name


class Task(_Range):
    """A range of work in ``domain`` (MXNet's ``profiler.Task``)."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(_domain_name(domain), name)
        self.domain = domain


class Frame(_Range):
    """A range such as one iteration (MXNet lists frames under ``'<domain>,frame'``)."""

    def __init__(self, domain: Domain, name: str) -> None:
        super().__init__(_domain_name(domain) + ",frame", name)
        self.domain = domain


class Event(_Range):
    """A range without a domain (MXNet lists events under ``'event'``)."""

    def __init__(self, name: str) -> None:
        super().__init__("event", name)


class Counter:
    """A named integer value whose changes are recorded (``+=``, ``-=``, ``set_value``)."""

    def __init__(self, domain: Domain, name: str, value: int | None = None) -> None:
        self._domain = _domain_name(domain)
        self.domain = domain
        self.name = name
        self.value = 0
        if value is not None:
            self.set_value(value)

    def set_value(self, value: int) -> None:
        self.value = value
        current().record_counter(self._domain, self.name, value)

    def increment(self, delta: int = 1) -> None:
        self.set_value(self.value + delta)

    def decrement(self, delta: int = 1) -> None:
        self.set_value(self.value - delta)

    def __iadd__(self, delta: int) -> Counter:
        self.increment(delta)
        return self

    def __isub__(self, delta: int) -> Counter:
        self.decrement(delta)
        return self

    def __str__(self) -> str:
        return self.name


class Marker:
    """An instant event; ``mark(scope)`` with scope 'global', 'process' or 'thread'."""

    def __init__(self, domain: Domain, name: str) -> None:
        self._domain = _domain_name(domain) + ",instant_marker"
        self.domain = domain
        self.name = name

    def mark(self, scope: str = "process") -> None:
        if scope not in ("global", "process", "thread", "task", "marker"):
            raise MXAsyncError(f"profiler.Marker.mark: unknown scope {scope!r}")
        current().record_marker(self._domain, self.name, scope)

    def __str__(self) -> str:
        return self.name
