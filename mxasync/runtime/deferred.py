"""Work that finalizers hand to the engine: queued without a lock, run at the next push, wait or allocation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["DeferredMixin"]


class DeferredMixin:
    def defer(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` at the next push, wait or pooled allocation, on that caller's thread.

        For finalizers: ``__del__`` can run inside a garbage-collection pass on a thread
        that holds the engine's lock (any allocation may start one), where pushing an op
        would deadlock; appending here takes no lock.
        """
        self._deferred.append(fn)

    def run_deferred(self) -> None:
        """Run what :meth:`defer` queued (a finalizer's failure is ignored, as in ``__del__``).

        The pushes this makes do not drain again on this thread: the loop here takes the rest.
        """
        tls = self._tls
        if tls.draining:
            return
        tls.draining = True
        deferred = self._deferred
        try:
            while deferred:
                try:
                    fn = deferred.popleft()
                except IndexError:  # another thread took the last one
                    return
                try:
                    fn()
                except Exception:  # noqa: BLE001, S110 - a finalizer must not fail the caller's push
                    pass
        finally:
            tls.draining = False
