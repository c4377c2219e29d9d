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
import sys
from _thread import allocate_lock
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...base import MXAsyncError
from ..var import VarHandle
from .reentry import Running, needs, running_op

if TYPE_CHECKING:
    from .device_sync import DeviceSync
    from .errors import Errors
    from .execution import Runner
    from .grants import Grants
    from .placement import Placement
    from .threads import EngineLoop

__all__ = ["Waits"]


def _running_loop(what: str) -> asyncio.AbstractEventLoop:
    """The caller's asyncio loop; under another event loop (trio, also through anyio) one clear error."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        pass
    library = _async_library()
    where = f"under {library}" if library else "outside a running asyncio event loop"
    raise MXAsyncError(
        f"{what}: mxasync's awaitables need asyncio (anyio on its asyncio backend); called {where}. "
        "Run the async code with asyncio.run or anyio.run(..., backend='asyncio'), or call the sync twin "
        "(e.g. wait_to_read) in a worker thread"
    ) from None


def _async_library() -> str | None:
    """The async library running this task when it is not asyncio (sniffio's answer; trio needs sniffio)."""
    sniffio = sys.modules.get("sniffio")
    if sniffio is not None:
        try:
            return sniffio.current_async_library()
        except Exception:  # noqa: BLE001 - AsyncLibraryNotFoundError: none at all
            return None
    return None


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


class Waits:
    """The engine's waits; ``Engine.wait_for_var`` and its siblings call these.

    ``flush`` is the engine's ``_flush_bulk`` (a wait first pushes this thread's open bulk).
    """

    def __init__(self, flush: Callable[[], None], grants: Grants, runner: Runner, placement: Placement,
                 errors: Errors, devices: DeviceSync, loop: EngineLoop):
        self._flush = flush
        self._grants = grants
        self._run_chain = runner.run_chain
        self._placement = placement
        self._errors = errors
        self._clock = errors.clock
        self._devices = devices
        self._loop = loop

    def _guard_loop_thread(self, what: str) -> None:
        if self._loop.in_loop_thread():
            raise MXAsyncError(f"{what} would block the engine's event loop; use the awaitable twin")

    def _refuse_inside_op(self, what: str, var: VarHandle | None, marker, for_write: bool = False,
                          idle_callback=None, sync: bool = True) -> None:
        """Called when a wait is about to block: raise if this thread is inside a running op whose
        completion the wait needs (a sync wait: any op, since it holds the op's thread; an awaited
        one: only one that needs the op itself), withdrawing the wait first."""
        running = running_op(3)
        if running is None:
            if sync and self._placement.in_worker():
                running = Running("a worker's op", None, (), (), False)
            else:
                return
        grants = self._grants
        with grants.lock:
            if not sync and not running.coroutine:
                return
            itself = var is None or needs(running, var)
            if not sync and not itself:
                return  # a coroutine op may await unrelated work
            if not grants.withdraw(var, marker, for_write, idle_callback):
                return  # it was granted meanwhile: the wait will not block
        why = ("it would wait for itself" if var is None else
               "it would wait for its own output or for work queued behind it" if itself else
               "it would block the op's thread while the op holds its vars")
        raise MXAsyncError(
            f"{what} called inside a running engine op ({running.name!r}): {why}. "
            "Push the follow-up work as another op that reads this one's outputs, or wait after the op"
        )

    def _help_until(self, latch) -> None:
        """Block until ``latch`` is released, running the worker pool's queued ops in this thread
        meanwhile: the thread that waits would otherwise sleep while a worker is woken for them."""
        pool = self._placement.workers
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

    def unready(self, vars: list[VarHandle], for_write: bool) -> list[int]:
        """``Engine.unready``: one pass over many vars with ``for_var``'s test for "returns at once"."""
        self._flush()
        if for_write:
            busy = [v for v in vars if v._err is not None or v._event is not None or v._queue or v._writing
                    or v._readers or v._read_events]
        else:
            busy = [v for v in vars if v._err is not None or v._event is not None or v._queue or v._writing]
        if not busy:  # the usual answer: found without numbering every var
            return []
        busy_ids = set(map(id, busy))
        return [i for i, v in enumerate(vars) if id(v) in busy_ids]

    def for_var(self, var: VarHandle, for_write: bool) -> None:
        """``Engine.wait_for_var``."""
        self._flush()
        self._guard_loop_thread("wait_for_var")
        # the test ``unready`` makes for many vars at once
        if var._err is None and var._event is None and not (
                var._queue or var._writing or (for_write and (var._readers or var._read_events))):
            return  # nothing to wait for and nothing to raise: no ticket, lock or latch
        since = next(self._clock)
        latch = allocate_lock()
        latch.acquire()
        grants = self._grants
        with grants.lock:
            marker = grants.enqueue_signal(var, for_write, latch.release)
        if marker is not None:
            self._refuse_inside_op("wait_for_var", var, marker, for_write)
            self._help_until(latch)
        if var._event is not None or (for_write and var._read_events):
            self._devices.host_sync(var, for_write)
        self._errors.raise_var(var, since, True)

    async def for_var_async(self, var: VarHandle, for_write: bool) -> None:
        """``Engine.wait_for_var_async``."""
        self._flush()
        loop = _running_loop("await on an engine var")
        since = next(self._clock)
        fut = loop.create_future()
        grants = self._grants
        with grants.lock:
            marker = grants.enqueue_signal(var, for_write, _resolver(loop, fut))
        if marker is not None:
            self._refuse_inside_op("wait_for_var_async", var, marker, for_write, sync=False)
            await fut
        if var._event is not None or (for_write and var._read_events):
            await asyncio.to_thread(self._devices.host_sync, var, for_write)
        self._errors.raise_var(var, since, False)

    def for_all(self) -> None:
        """``Engine.wait_for_all``."""
        self._flush()
        self._guard_loop_thread("wait_for_all")
        latch = allocate_lock()
        latch.acquire()
        release = latch.release
        if self._grants.when_idle(release):
            self._refuse_inside_op("wait_for_all", None, None, idle_callback=release)
            self._help_until(latch)
        self._devices.sync_all()
        self._errors.raise_first()

    async def for_all_async(self) -> None:
        """``Engine.wait_for_all_async``."""
        self._flush()
        loop = _running_loop("wait_for_all_async")
        fut = loop.create_future()
        wake = _resolver(loop, fut)
        if self._grants.when_idle(wake):
            self._refuse_inside_op("wait_for_all_async", None, None, idle_callback=wake, sync=False)
            await fut
        if self._devices.used:
            await asyncio.to_thread(self._devices.sync_all)
        self._errors.raise_first()

    def idle(self, timeout: float | None = None) -> bool:
        """Wait for every pending op without touching errors; False on timeout."""
        latch = allocate_lock()
        latch.acquire()
        if not self._grants.when_idle(latch.release):
            return True
        return latch.acquire(timeout=-1 if timeout is None else timeout)
