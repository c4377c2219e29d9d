"""Engine variables: the versioned futures that order ops.

A :class:`VarHandle` carries the dependency state the engine needs (granted
readers, a granted writer, the queue of ops waiting for it) and, once a writer
failed, the error that tainted it.  All of that state is guarded by the
engine's lock; nothing here takes a lock itself.
"""

from __future__ import annotations

import copy
from collections import deque

__all__ = ["VarHandle", "ErrorRecord", "Taint"]


class ErrorRecord:
    """One failure: the error of the op that raised, shared by every var it (and every op it
    spoiled, transitively) left unwritten.

    ``pending`` is True until a wait has raised it (or ``wait_for_all`` cleared it); while it is,
    ``wait_for_all`` raises it and ops that write a var it taints are skipped too (MXNet's rule).
    Reads of a tainted var are skipped whatever ``pending`` says: what they would read was never
    written (see :mod:`mxasync.runtime.engine.errors`).
    """

    __slots__ = ("exc", "op_name", "pending")

    def __init__(self, exc: BaseException, op_name: str):
        self.exc = exc
        self.op_name = op_name
        self.pending = True

    def raisable(self) -> BaseException:
        """A fresh copy of the error to raise: raising the stored one would tie the waiter's
        frames (its traceback) to the record, and so to every var it taints."""
        exc = self.exc
        try:
            fresh = copy.copy(exc)
        except Exception:  # noqa: BLE001 - an exception type that cannot be copied: raise the stored one
            return exc
        fresh.__cause__ = exc.__cause__
        fresh.__suppress_context__ = True
        return fresh

    def __repr__(self) -> str:
        state = "pending" if self.pending else "reported"
        return f"ErrorRecord({self.op_name!r}, {type(self.exc).__name__}, {state})"


class Taint:
    """A var left unwritten by a failure: the record, the wait clock when it landed (``at``), and
    when a blocking wait on this var raised it (``seen``, 0: not yet).  Made only on failures,
    so a var costs nothing for it until then."""

    __slots__ = ("record", "at", "seen")

    def __init__(self, record: ErrorRecord, at: int):
        self.record, self.at, self.seen = record, at, 0


class VarHandle:
    """A versioned future.

    ``version`` counts the writes that have completed.  ``await var`` returns once
    every op pushed so far that reads or writes it has finished (MXNet's
    WaitForVar), and raises the error of a failed writer (engine/errors.py says how often).

    >>> import mxasync as mx
    >>> eng = mx.engine.get()
    >>> v = eng.new_variable(name="counter")
    >>> for _ in range(3):
    ...     eng.push_sync(lambda rctx: None, mx.cpu(), mutate_vars=[v])
    >>> eng.wait_for_var(v); v.version
    3
    """

    __slots__ = (
        "name", "version", "_engine", "_readers", "_writing", "_queue", "_err",
        "_event", "_read_events", "_deleted", "_bulked", "__weakref__",
    )

    def __init__(self, engine, name: str | None = None):
        self.name = name
        self.version = 0
        self._engine = engine
        self._readers = 0  # granted reads not yet complete
        self._writing = False  # a granted write not yet complete
        # (op, is_write) waiting for a grant, in push order; an empty tuple until the first op
        # queues (most vars never see one, and a deque costs a third of a var's creation)
        self._queue: deque | tuple = ()
        # the failure that left this var unwritten (None once a write succeeds); see engine/errors.py
        self._err: Taint | None = None
        self._event = None  # device event of the last write (GPU ops)
        self._read_events: tuple = ()  # device events of reads since that write
        self._deleted = False
        self._bulked = 0  # open bulk segments holding an op on this var, not yet pushed (bulk.py)

    def _new_queue(self) -> deque:
        """A fresh queue in place of an empty one (callers: ``(v._queue or v._new_queue()).append(...)``)."""
        q = self._queue = deque()
        return q

    @property
    def error(self) -> BaseException | None:
        """The exception of the failure that left this var unwritten, if any."""
        err = self._err
        return err.record.exc if err is not None else None

    @property
    def pending(self) -> bool:
        """True while some pushed op that uses this var has not finished.

        An op collected in an open ``engine.bulk`` segment counts: it was pushed, though the
        engine sees it only when the segment is flushed.  Safe without the engine's lock: the
        queue is read first, and the engine grants an op before it takes it off the queue, so
        a reader racing a grant sees one or the other.
        """
        return bool(self._queue) or self._writing or self._readers > 0 or self._bulked > 0

    def last_op_is_sole_reader(self) -> bool:
        """True when the op pushed last on this var reads it and no other read of it is pending
        or running, so that op may write the memory in place (only writes come before it).

        Read without the engine's lock: ask from the thread that pushed that op, which is the
        only one that could push after it.
        """
        queue = self._queue
        if not queue:
            return self._readers == 1 and not self._writing
        if queue[-1][1]:  # the last op pushed writes
            return False
        ahead = list(queue)[:-1]
        if any(not is_write for _op, is_write in ahead):
            return False
        return bool(ahead) or (self._readers == 0 and self._writing)

    def __await__(self):
        return self._engine.wait_for_var_async(self).__await__()

    def __repr__(self) -> str:
        label = f" {self.name!r}" if self.name else ""
        return f"<VarHandle{label} v{self.version}{' pending' if self.pending else ''}>"
