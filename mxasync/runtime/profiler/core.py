"""The profiler: engine ops and user ranges as Chrome trace events, and MXNet's aggregate table.

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

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator
from typing import NamedTuple

from ...atomic import write_file
from ...base import MXAsyncError
from .stats import aggregate_json, aggregate_table, check_dumps_args

__all__ = ["Profiler", "Record", "set_config", "set_state", "state", "dump", "dumps", "pause", "resume",
           "OPERATOR_DOMAIN", "CUSTOM_OP_DOMAIN", "scope", "current_scope"]

OPERATOR_DOMAIN = "operator"  # MXNet's domain of engine ops in the aggregate table
CUSTOM_OP_DOMAIN = "Custom Operator"


_scope = threading.local()


@contextlib.contextmanager
def scope(name: str) -> Iterator[None]:
    """Profile the ops this thread pushes inside the block as ``name::<op>`` in the 'Custom Operator' domain.

    MXNet's custom-op scope: a Python operator's forward runs in ``scope('MyOp')``, its
    backward in ``scope('_backward_MyOp')``, so ``mx.nd.zeros`` called there shows as
    ``MyOp::_zeros``.  Blocks nest; the innermost name wins.
    """
    prev = getattr(_scope, "name", None)
    _scope.name = str(name)
    try:
        yield
    finally:
        _scope.name = prev


def current_scope() -> str | None:
    """The profiler scope of the calling thread (None outside any :func:`scope`)."""
    return getattr(_scope, "name", None)


class Record(NamedTuple):
    """One event: ``ph`` 'X' (a range), 'C' (a counter value) or 'i' (an instant marker)."""

    domain: str
    name: str
    ph: str
    ctx: str
    thread: str
    tid: int
    t0: float
    t1: float
    value: float = 0.0
    scope: str = ""


class Profiler:
    """Collects records while running; the engine calls :meth:`record` for every op it runs."""

    def __init__(self):
        self.filename = "profile.json"
        self.profile_all = True
        self.aggregate_stats = False
        self.continuous_dump = False
        self.state = "stop"
        self.paused = False
        self.undumped = False  # started since the last dump: the trace is written at exit (MXNet's rule)
        self._records: list[Record] = []
        self._origin = time.perf_counter()
        self._pid = os.getpid()

    @property
    def recording(self) -> bool:
        return self.state == "run" and not self.paused

    def record(self, op, t0: float, t1: float) -> None:
        if not self.profile_all and not op.profiling:
            return
        th = threading.current_thread()
        in_scope = getattr(op, "scope", None)  # tagged at push while profiling
        if in_scope is None:
            domain, name = OPERATOR_DOMAIN, op.display_name()
        else:
            domain, name = CUSTOM_OP_DOMAIN, f"{in_scope}::{op.display_name()}"
        # list.append is atomic, so workers record without a lock
        self._records.append(Record(domain, name, "X", str(op.ctx), th.name, th.ident, t0, t1))

    def record_range(self, domain: str, name: str, t0: float, t1: float) -> None:
        if self.recording:
            th = threading.current_thread()
            self._records.append(Record(domain, name, "X", "python", th.name, th.ident, t0, t1))

    def record_counter(self, domain: str, name: str, value: float) -> None:
        if self.recording:
            th = threading.current_thread()
            t = time.perf_counter()
            self._records.append(Record(domain, name, "C", "python", th.name, th.ident, t, t, float(value)))

    def record_marker(self, domain: str, name: str, scope: str) -> None:
        if self.recording:
            th = threading.current_thread()
            t = time.perf_counter()
            self._records.append(Record(domain, name, "i", "python", th.name, th.ident, t, t, 0.0, scope))

    def records(self) -> list[Record]:
        return list(self._records)

    def clear(self) -> None:
        self._records.clear()

    def trace(self) -> dict:
        events = []
        threads = {}
        for r in self.records():
            threads[r.tid] = r.thread
            ev = {"name": r.name, "cat": r.domain, "ph": r.ph, "pid": self._pid, "tid": r.tid,
                  "ts": (r.t0 - self._origin) * 1e6}
            if r.ph == "X":
                ev["dur"] = max((r.t1 - r.t0) * 1e6, 0.001)
                ev["args"] = {"ctx": r.ctx, "worker": r.thread}
            elif r.ph == "C":
                ev["args"] = {r.name: r.value}
            else:
                ev["s"] = {"global": "g", "process": "p", "thread": "t"}.get(r.scope, "p")
            events.append(ev)
        for tid, tname in threads.items():
            events.append({"name": "thread_name", "ph": "M", "pid": self._pid, "tid": tid, "args": {"name": tname}})
        events.append({"name": "process_name", "ph": "M", "pid": self._pid, "args": {"name": "mxasync engine"}})
        return {"traceEvents": events, "displayTimeUnit": "ms"}


_PROFILER = Profiler()


def current() -> Profiler:
    return _PROFILER


def _engine():
    from ..engine import Engine

    return Engine.get()


def _sync_engine() -> None:
    _engine().set_profiler(_PROFILER if _PROFILER.recording else None)


def set_config(filename: str = "profile.json", profile_all: bool = True, aggregate_stats: bool = False,
               continuous_dump: bool = False, **ignored) -> None:
    """Configure the profiler (MXNet's ``mx.profiler.set_config``).

    MXNet's finer switches (``profile_symbolic``, ``profile_memory``...) are
    accepted; every engine op is one kind of event here, so they change nothing.
    ``aggregate_stats=True`` makes :func:`dumps` return the statistics table.
    """
    _PROFILER.filename = str(filename)
    _PROFILER.profile_all = bool(profile_all)
    _PROFILER.aggregate_stats = bool(aggregate_stats)
    _PROFILER.continuous_dump = bool(continuous_dump)


def _check_process(profile_process: str) -> None:
    if profile_process != "worker":
        raise MXAsyncError(f"profiler: profile_process={profile_process!r}: only 'worker' is profiled here "
                           "(there is no kvstore server process)")


def set_state(state: str = "stop", profile_process: str = "worker") -> None:
    """``'run'`` starts recording every engine op, ``'stop'`` stops (``profile_process``: MXNet's
    ``'worker'``; no kvstore server process is profiled here)."""
    _check_process(profile_process)
    if state not in ("run", "stop"):
        raise MXAsyncError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    _PROFILER.state = state
    _PROFILER.paused = False
    if state == "run":
        _PROFILER.undumped = True
    _sync_engine()


def state() -> str:
    return _PROFILER.state


def pause(profile_process: str = "worker") -> None:
    """Stop recording until :func:`resume` (ops, ranges, counters and markers alike)."""
    _check_process(profile_process)
    _PROFILER.paused = True
    _sync_engine()


def resume(profile_process: str = "worker") -> None:
    _check_process(profile_process)
    _PROFILER.paused = False
    _sync_engine()


def dumps(reset: bool = False, format: str = "table", sort_by: str = "total", ascending: bool = False) -> str:  # noqa: A002
    """MXNet's aggregate statistics per domain and name: a text table, or JSON with ``format='json'``.

    Empty unless ``set_config(aggregate_stats=True)``, as in MXNet. ``sort_by`` is one of
    'total', 'avg', 'min', 'max', 'count'; times are in ms.
    """
    check_dumps_args(format, sort_by)
    if not _PROFILER.aggregate_stats:
        text = ""
    elif format == "json":
        text = aggregate_json(_PROFILER.records(), sort_by, ascending)
    else:
        text = aggregate_table(_PROFILER.records(), sort_by, ascending)
    if reset:
        _PROFILER.clear()
    return text


def dump(finished: bool = True, profile_process: str = "worker") -> None:
    """Write the Chrome trace to the configured file, atomically.

    ``finished=False`` keeps the records (MXNet's continuous dump: each dump rewrites the whole trace).
    """
    _check_process(profile_process)
    write_file(_PROFILER.filename, json.dumps(_PROFILER.trace()))
    _PROFILER.undumped = _PROFILER.state == "run"
    if finished:
        _PROFILER.clear()


def dump_at_exit() -> None:
    """At interpreter exit (after the engine drained): a profiler started since the last
    :func:`dump` writes its trace to the configured file, as MXNet does."""
    if _PROFILER.undumped:
        _PROFILER.state = "stop"
        dump()
