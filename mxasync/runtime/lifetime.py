"""Process lifetime: drain the engine at exit (bounded) and give forked children fresh threads."""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import weakref
from typing import Any

from ..base import env_float
from .engine import Engine


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
    eng._wait_idle(_exit_timeout())


_fork_state: dict[str, Any] = {}


def _before_fork() -> None:
    eng = Engine._instance
    if eng is None:
        return
    pool = eng._pool
    in_engine_thread = eng._loop.in_loop_thread() or (pool is not None and threading.get_ident() in pool.idents)
    if not in_engine_thread:
        eng._wait_idle(_exit_timeout())
    eng._lock.acquire()
    _fork_state["engine"] = weakref.ref(eng)


def _after_fork_parent() -> None:
    ref = _fork_state.pop("engine", None)
    eng = ref() if ref else None
    if eng is not None:
        eng._lock.release()


def _after_fork_child() -> None:
    ref = _fork_state.pop("engine", None)
    eng = ref() if ref else None
    if eng is not None:
        eng._after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child)
