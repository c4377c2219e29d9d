"""Process lifetime: drain the engine at exit (bounded); a forked child starts with a clean engine."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import weakref
from typing import Any

from ...base import env_float
from ..profiler import core as profiler
from .fork import restart_in_child
from .threaded import Engine


def _exit_timeout() -> float:
    return env_float(10.0, "MXASYNC_EXIT_TIMEOUT")


@atexit.register
def _drain_at_exit() -> None:
    eng = Engine._instance
    if eng is None:
        return
    eng.notify_shutdown()
    with contextlib.suppress(Exception):
        eng._flush_bulk()
    if eng._loop.in_loop_thread():
        return
    eng._waits.idle(_exit_timeout())
    with contextlib.suppress(Exception):  # an unwritable trace path must not turn exit into a traceback
        profiler.dump_at_exit()


_fork_state: dict[str, Any] = {}
_held_across_fork: list = []  # the upper layers' locks (op registry loading), taken after the engine's


def hold_across_fork(lock):
    """Have every ``fork()`` take ``lock`` after the engine's own locks and give it back on both
    sides, so a child never inherits it taken by a thread it does not have (that child would
    wait for it forever).  Returns ``lock``.

    What keeps this free of deadlock: a thread holding ``lock`` never waits for the engine's lock
    or a storage pool's, while kernels that run under the engine's lock may take ``lock``.
    """
    _held_across_fork.append(lock)
    return lock


def _fork_locks() -> list:
    """The locks whose state a child must not inherit half-taken: the storage pools' (taken
    first: storage code never waits for the engine's lock while holding its own)."""
    from ..storage import Storage

    return [Storage._instances_lock] + [s._lock for s in Storage.all().values()]


def _before_fork() -> None:
    """Hold the engine's lock (and the pools') across ``fork()`` so the child copies consistent
    var states.  Pending work is *not* waited for: the child never runs it (see
    ``fork.restart_in_child``), so a fork with minutes of queued work is as quick as any."""
    eng = Engine._instance
    if eng is not None:
        locks = _fork_locks()
        for lock in locks:
            lock.acquire()
        eng._lock.acquire()
        _fork_state["engine"] = weakref.ref(eng)
        _fork_state["locks"] = locks
        _fork_state["pending"] = eng.num_pending
    for lock in _held_across_fork:
        lock.acquire()


def _after_fork_parent() -> None:
    for lock in reversed(_held_across_fork):
        lock.release()
    ref = _fork_state.pop("engine", None)
    eng = ref() if ref else None
    if eng is not None:
        eng._lock.release()
    for lock in reversed(_fork_state.pop("locks", ())):
        lock.release()
    _fork_state.clear()


def _after_fork_child() -> None:
    for lock in reversed(_held_across_fork):  # this thread took them, and is the child's one thread
        lock.release()
    ref = _fork_state.pop("engine", None)
    eng = ref() if ref else None
    locks = _fork_state.pop("locks", ())
    pending = _fork_state.pop("pending", 0)
    _fork_state.clear()
    if eng is None:
        return
    from ..storage import Storage

    # this thread took them in the parent; new ones are simpler than releasing them here
    Storage._instances_lock = threading.Lock()
    for storage in Storage.all().values():
        storage._lock = threading.RLock()
    del locks
    restart_in_child(eng, pending)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child)
