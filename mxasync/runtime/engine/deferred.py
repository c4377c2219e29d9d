"""Work that finalizers hand to the engine: queued without a lock, run at the next push, wait or allocation."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["Deferred"]


class Deferred:
    """The finalizers' queue.  ``queue`` is a deque the hot paths test for emptiness (bound once)."""

    def __init__(self, tls):
        self.queue: deque[Callable[[], Any]] = deque()
        self._tls = tls  # the engine's _ThreadState (its ``draining`` flag)

    def run(self) -> None:
        """Run what ``Engine.defer`` queued (a finalizer's failure is ignored, as in ``__del__``).

        The pushes this makes do not drain again on this thread: the loop here takes the rest.
        """
        tls = self._tls
        if tls.draining:
            return
        tls.draining = True
        queue = self.queue
        try:
            while queue:
                try:
                    fn = queue.popleft()
                except IndexError:  # another thread took the last one
                    return
                try:
                    fn()
                except Exception:  # noqa: BLE001, S110 - a finalizer must not fail the caller's push
                    pass
        finally:
            tls.draining = False
