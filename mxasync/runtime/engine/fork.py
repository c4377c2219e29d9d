"""What a forked child does with the work its parent had pending at ``fork()``.

The child has none of the parent's threads, so the ops pending there (queued,
on a worker, awaiting ``on_complete``) never finish in the child.  Rather than
make the parent wait for them before every fork, the child forgets them: each
var they held is freed, and each var one of them would have *written* carries
an error saying its value is unknown in this process (the write may have run
half, or not at all).  Vars that pending ops only read keep their value.

Finding those vars takes one pass over the garbage collector's objects, made
only when the parent had work pending at the fork.
"""

from __future__ import annotations

import gc
from collections import deque

from ...base import MXAsyncError
from ..var import ErrorRecord, VarHandle
from .ops import _SIGNAL

__all__ = ["restart_in_child", "forget_parent_work"]

FORK_MESSAGE = (
    "a write to this array (or to one it was computed from) was pending in the parent process when it forked "
    "(os.fork, multiprocessing's 'fork' start method); a child never runs its parent's pending ops, "
    "so the value here is unknown. Call mx.nd.waitall() before forking, or make the array in the child"
)


def forget_parent_work(engine) -> ErrorRecord | None:
    """Free every var the parent's pending ops held; returns the error put on those they wrote."""
    record = None
    for obj in gc.get_objects():
        if type(obj) is not VarHandle or not (obj._writing or obj._readers or obj._queue):
            continue
        written = obj._writing or any(is_write and op.kind is not _SIGNAL for op, is_write in obj._queue)
        obj._writing = False
        obj._readers = 0
        obj._queue = deque()
        if written and not obj._deleted:
            if record is None:
                record = ErrorRecord(MXAsyncError(FORK_MESSAGE), "fork")
                record.pending = False  # on the vars only: wait_for_all has nothing of the parent's to report
            engine._errors.taint(obj, record)
    return record


def restart_in_child(engine, pending: int) -> None:
    """A forked child starts clean: fresh locks, no pending op, threads and loop made on first
    use.  The parent's pending ops never run here (their threads did not come along), so the
    vars they held are freed, and those they would have written carry one error (raised at
    their waits as any failure's, not by wait_for_all), since their value here is unknown.

    What the engine learned (op costs, whether devices are in use, the profiler, shutdown)
    carries over; errors not yet reported too."""
    old_errors, old_placement, old_devices, old_runner = (
        engine._errors, engine._placement, engine._devices, engine._runner)
    engine._assemble()
    engine._placement.cost = old_placement.cost
    engine._devices.used = old_devices.used
    engine._runner.shutdown = old_runner.shutdown
    engine.set_profiler(old_runner.profiler)
    errors = engine._errors
    errors.records = {e: None for e in old_errors.records if e.pending}
    errors.clock, errors.cleared_at = old_errors.clock, old_errors.cleared_at  # the vars' taint times use it
    if pending:
        forget_parent_work(engine)
    engine._refresh_slow()
