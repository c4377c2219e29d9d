"""Waiting on the engine: ``wait_for_var``, ``wait_to_read``, ``wait_for_all``, their awaitable twins, and errors.

``wait_for_var`` (and ``await var``) waits for every op pushed so far that reads
or writes the var, as MXNet's WaitForVar; ``wait_to_read`` for the writes only.
A wait is itself a tiny marker op queued on the var like any writer (or reader,
for ``wait_to_read``), so it orders exactly like the ops it waits for.  Sync
waits block on a lock; async waits resolve a future on the caller's own loop.
A wait about to block inside a running op that it needs raises instead (see
:mod:`.reentry`).
"""

from __future__ import annotations

import asyncio
import threading
from _thread import allocate_lock
from collections.abc import Callable

from ..base import MXAsyncError
from .op_block import _NORMAL, _SIGNAL, _Op
from .reentry import Running, needs, running_op
from .var import VarHandle

__all__ = ["WaitMixin"]


def _resolve(fut) -> None:
    if not fut.done():
        fut.set_result(None)


def _resolver(loop, fut):
    """A callback that wakes ``fut`` on its loop from any thread.

    The awaiting task may have been cancelled and its loop closed meanwhile;
    then there is nobody to wake, and the engine must go on regardless.
    """

    def wake() -> None:
        try:
            loop.call_soon_threadsafe(_resolve, fut)
        except RuntimeError:  # the loop is closed
            pass

    return wake


class WaitMixin:
    def _guard_loop_thread(self, what: str) -> None:
        if self._loop.in_loop_thread():
            raise MXAsyncError(f"{what} would block the engine's event loop; use the awaitable twin")

    def _refuse_inside_op(self, what: str, var: VarHandle | None, marker, for_write: bool = False,
                          idle_callback=None, sync: bool = True) -> None:
        """Called when a wait is about to block: raise if this thread is inside a running op whose
        completion the wait needs (a sync wait: any op, since it holds the op's thread; an awaited
        one: only one that needs the op itself), withdrawing the wait first."""
        running = running_op(self, 3)
        if running is None:
            if sync and self._pool is not None and threading.get_ident() in self._pool.idents:
                running = Running("a worker's op", None, (), (), False)
            else:
                return
        with self._lock:
            if not sync and not running.coroutine:
                return
            itself = var is None or needs(running, var)
            if not sync and not itself:
                return  # a coroutine op may await unrelated work
            if not self._withdraw(var, marker, for_write, idle_callback):
                return  # it was granted meanwhile: the wait will not block
        why = ("it would wait for itself" if var is None else
               "it would wait for its own output or for work queued behind it" if itself else
               "it would block the op's thread while the op holds its vars")
        raise MXAsyncError(
            f"{what} called inside a running engine op ({running.name!r}): {why}. "
            "Push the follow-up work as another op that reads this one's outputs, or wait after the op"
        )

    def _withdraw(self, var: VarHandle | None, marker, for_write: bool, idle_callback) -> bool:
        """Take back a queued wait (caller holds the lock); False when it already ran or is running."""
        if var is None:
            try:
                self._all_waiters.remove(idle_callback)
            except ValueError:
                return False
            return True
        try:
            var._queue.remove((marker, for_write))
        except ValueError:
            return False
        self._pending -= 1
        return True

    def _enqueue_signal(self, var: VarHandle, for_write: bool, fn: Callable[[], None]) -> _Op | None:
        """Queue ``fn`` to run once ``var``'s pending writes (and reads, ``for_write``) finish.

        Returns the queued marker op, or None when there is nothing to wait for.  Caller holds the lock.
        """
        if for_write:
            if not (var._writing or var._readers or var._queue):
                return None
        elif not (var._writing or var._queue):
            return None
        op = _Op(fn, _SIGNAL, None, [] if for_write else [var], [var] if for_write else [],
                 _NORMAL, 0, "WaitForVar", True)
        op.wait = 1
        self._pending += 1
        (var._queue or var._new_queue()).append((op, for_write))
        return op

    def _help_until(self, latch) -> None:
        """Block until ``latch`` is released, running the worker pool's queued ops in this thread
        meanwhile: the thread that waits would otherwise sleep while a worker is woken for them."""
        pool = self._pool
        if pool is not None:
            while not latch.acquire(False):
                op = pool.try_take()
                if op is None:
                    break
                try:
                    self._run_chain(op, True)
                except KeyboardInterrupt:  # the user's Ctrl-C, landed while this thread ran the op
                    raise
                except BaseException:  # noqa: BLE001, S110 - as on a worker: the error is on the op's vars
                    pass
            else:
                return
        latch.acquire()

    def wait_for_var(self, var: VarHandle, *, for_write: bool = True) -> None:
        """Block until every op pushed so far that reads or writes ``var`` finished (MXNet's WaitForVar).

        ``for_write=False`` waits for the writes only, as :meth:`wait_to_read`.
        Raises the error of a failed writer, once.
        """
        self._flush_bulk()
        self._guard_loop_thread("wait_for_var")
        latch = allocate_lock()
        latch.acquire()
        with self._lock:
            marker = self._enqueue_signal(var, for_write, latch.release)
        if marker is not None:
            self._refuse_inside_op("wait_for_var", var, marker, for_write)
            self._help_until(latch)
        if var._event is not None or (for_write and var._read_events):
            self._host_sync(var, for_write)
        self._raise_var_error(var)

    async def wait_for_var_async(self, var: VarHandle, *, for_write: bool = True) -> None:
        """Awaitable :meth:`wait_for_var` (``await var``); the caller's event loop keeps running meanwhile."""
        self._flush_bulk()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        with self._lock:
            marker = self._enqueue_signal(var, for_write, _resolver(loop, fut))
        if marker is not None:
            self._refuse_inside_op("wait_for_var_async", var, marker, for_write, sync=False)
            await fut
        if var._event is not None or (for_write and var._read_events):
            await asyncio.to_thread(self._host_sync, var, for_write)
        self._raise_var_error(var)

    def wait_to_read(self, var: VarHandle) -> None:
        """Block until every write pushed so far on ``var`` finished; reads may still be running
        (NDArray's ``wait_to_read`` and ``asnumpy``).  Raises the error of a failed writer, once."""
        self.wait_for_var(var, for_write=False)

    async def wait_to_read_async(self, var: VarHandle) -> None:
        """Awaitable :meth:`wait_to_read`."""
        await self.wait_for_var_async(var, for_write=False)

    def wait_for_all(self) -> None:
        """Block until every op pushed so far finished; raise the first unreported error, if any.

        All errors pending at that point count as reported afterwards, so a
        second ``wait_for_all`` is clean (MXNet's rule).
        """
        self._flush_bulk()
        self._guard_loop_thread("wait_for_all")
        latch = allocate_lock()
        latch.acquire()
        release = latch.release
        if self._when_idle(release):
            self._refuse_inside_op("wait_for_all", None, None, idle_callback=release)
            self._help_until(latch)
        self._sync_devices()
        self._raise_first_error()

    async def wait_for_all_async(self) -> None:
        """Awaitable :meth:`wait_for_all`."""
        self._flush_bulk()
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        wake = _resolver(loop, fut)
        if self._when_idle(wake):
            self._refuse_inside_op("wait_for_all_async", None, None, idle_callback=wake, sync=False)
            await fut
        if self._device_used:
            await asyncio.to_thread(self._sync_devices)
        self._raise_first_error()

    def _wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for every pending op without touching errors; False on timeout."""
        latch = allocate_lock()
        latch.acquire()
        if not self._when_idle(latch.release):
            return True
        return latch.acquire(timeout=-1 if timeout is None else timeout)

    def _when_idle(self, callback) -> bool:
        """Call ``callback`` once no op is pending; False (and no call) when none is pending now."""
        with self._lock:
            busy = self._pending > 0
            if busy:
                self._all_waiters.append(callback)
        return busy

    @property
    def num_pending(self) -> int:
        """Ops pushed and not yet finished (internal wait markers included)."""
        return self._pending
