"""The profiler: every engine op as a Chrome trace event (Perfetto and chrome://tracing open it).

>>> import mxasync as mx, json, os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "trace.json")
>>> mx.profiler.set_config(filename=path)
>>> mx.profiler.set_state("run")
>>> v = mx.engine.get().new_variable()
>>> mx.engine.get().push_sync(lambda rctx: None, mx.cpu(), mutate_vars=[v], name="noop")
>>> mx.engine.get().wait_for_all()
>>> mx.profiler.set_state("stop")
>>> mx.profiler.dump()
>>> [e["name"] for e in json.load(open(path))["traceEvents"] if e.get("ph") == "X"]
['noop']
"""

from __future__ import annotations

import json
import os
import threading
import time

from ..atomic import write_file
from ..base import MXAsyncError

__all__ = ["Profiler", "set_config", "set_state", "state", "dump", "dumps", "pause", "resume"]


class Profiler:
    """Collects (op, start, end, thread) records while running; the engine calls :meth:`record`."""

    def __init__(self):
        self.filename = "profile.json"
        self.profile_all = True
        self.aggregate_stats = False
        self.state = "stop"
        self._records: list = []
        self._origin = time.perf_counter()
        self._pid = os.getpid()

    def record(self, op, t0: float, t1: float) -> None:
        if not self.profile_all and not op.profiling:
            return
        th = threading.current_thread()
        # list.append is atomic, so workers record without a lock
        self._records.append((op.display_name(), str(op.ctx), th.name, th.ident, t0, t1))

    def trace(self) -> dict:
        events = []
        threads = {}
        for name, ctx, tname, tid, t0, t1 in list(self._records):
            threads[tid] = tname
            events.append({
                "name": name, "cat": ctx, "ph": "X", "pid": self._pid, "tid": tid,
                "ts": (t0 - self._origin) * 1e6, "dur": max((t1 - t0) * 1e6, 0.001),
                "args": {"ctx": ctx, "worker": tname},
            })
        for tid, tname in threads.items():
            events.append({"name": "thread_name", "ph": "M", "pid": self._pid, "tid": tid, "args": {"name": tname}})
        events.append({"name": "process_name", "ph": "M", "pid": self._pid, "args": {"name": "mxasync engine"}})
        return {"traceEvents": events, "displayTimeUnit": "ms"}

    def aggregate(self) -> dict:
        stats: dict = {}
        for name, _ctx, _tn, _tid, t0, t1 in list(self._records):
            s = stats.setdefault(name, {"count": 0, "total_us": 0.0, "max_us": 0.0})
            d = (t1 - t0) * 1e6
            s["count"] += 1
            s["total_us"] += d
            s["max_us"] = max(s["max_us"], d)
        return stats


_PROFILER = Profiler()


def _engine():
    from .engine import Engine

    return Engine.get()


def set_config(filename: str = "profile.json", profile_all: bool = True, aggregate_stats: bool = False,
               **ignored) -> None:
    """Configure the profiler (MXNet's ``mx.profiler.set_config``).

    MXNet's finer switches (``profile_symbolic``, ``profile_memory``...) are
    accepted; every engine op is one kind of event here, so they change nothing.
    """
    _PROFILER.filename = str(filename)
    _PROFILER.profile_all = bool(profile_all)
    _PROFILER.aggregate_stats = bool(aggregate_stats)


def set_state(state: str = "stop") -> None:
    """``'run'`` starts recording every engine op, ``'stop'`` stops."""
    if state not in ("run", "stop"):
        raise MXAsyncError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _PROFILER.state = state
    _engine().set_profiler(_PROFILER if state == "run" else None)


def state() -> str:
    return _PROFILER.state


def pause() -> None:
    _engine().set_profiler(None)


def resume() -> None:
    if _PROFILER.state == "run":
        _engine().set_profiler(_PROFILER)


def dumps(reset: bool = False) -> str:
    """Aggregate statistics per op name as JSON text."""
    text = json.dumps(_PROFILER.aggregate(), indent=2, sort_keys=True)
    if reset:
        _PROFILER._records.clear()
    return text


def dump(finished: bool = True) -> None:
    """Write the Chrome trace to the configured file, atomically."""
    write_file(_PROFILER.filename, json.dumps(_PROFILER.trace()))
    if finished:
        _PROFILER._records.clear()
