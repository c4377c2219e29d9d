"""Error bookkeeping: a failed op's error lands on the vars it writes and travels to every var
computed from them; waits raise it.

The rules (docs/ndarray.md, "When an op fails"):

- **Taint.** A var written by a failed op is *tainted* with the op's :class:`ErrorRecord`. An op
  that reads a tainted var does not run its kernel: it is *spoiled*, and taints the vars it
  writes with the same record, transitively. A successful write cleans a var. Whether an op
  runs depends only on what the ops before it on its vars did, never on when somebody waited,
  so no op ever reads memory a failure left unwritten.
- **Writes.** An op that only writes a tainted var (in place, ``x[:] = 1``) is spoiled while
  the record is *pending*, i.e. no wait has raised it yet (MXNet's rule); afterwards it runs,
  and a successful one cleans the var, so code that caught the error can start over.
- **Awaits** (``await x``, ``wait_for_var_async``...) raise whenever the var is tainted, as
  awaiting a failed future does: every task awaiting any array computed from a failure raises.
- **Blocking waits** (``wait_to_read``, ``asnumpy``, ``wait_for_var``) raise once per var
  (views share their array's var), MXNet's rule, which its ``test_exc_handling.py`` checks:
  the first wait raises, and so does every wait already waiting then (a wait takes a ticket
  from :attr:`Errors.clock` when it begins); waits that begin later on that var do not.
  Another var tainted by the same failure still raises at its own waits.
- **wait_for_all** raises the first pending record and clears them all; blocking waits on vars
  tainted before it are clean afterwards (MXNet: a second ``waitall`` is clean, and so is
  ``b.asnumpy()`` of a view of the failed array).

A stored error keeps its traceback as text (a note on the op's exception), never the frames:
the frames of a failed kernel hold its arrays.  A record lives on only on the vars it taints
once it stopped pending.  The spoiling is decided where an op is granted a var (``Grants``),
so the engine's fast paths pay one attribute test per var for it and nothing else.
"""

from __future__ import annotations

import itertools
import traceback
import warnings

from ..run_context import FnProperty
from ..var import ErrorRecord, Taint, VarHandle
from .ops import _Op, _wrap_error

__all__ = ["Errors"]

_DELETE_VAR = FnProperty.DELETE_VAR


class Errors:
    """The records not yet reported (for ``wait_for_all``), and the rules that spoil ops and raise at waits."""

    def __init__(self, lock):
        self.records: dict[ErrorRecord, None] = {}  # pending: not yet raised at a wait, in the order they happened
        self.clock = itertools.count(1)  # waits take a ticket at their start; taints and reports note the time
        self.cleared_at = 0  # when wait_for_all last cleared the pending records
        self._lock = lock  # the engine's lock (Grants.lock)

    def make(self, op: _Op, exc: BaseException) -> ErrorRecord | None:
        """The record of ``op`` failing with ``exc`` (None for a failed delete: a warning, nobody reads it)."""
        name = op.display_name()
        if op.prop is _DELETE_VAR:  # nobody will read the var again; say so and go on
            warnings.warn(f"engine: delete op {name!r} failed: {exc!r}", RuntimeWarning, stacklevel=1)
            return None
        record = ErrorRecord(_wrap_error(exc, name), name)
        with self._lock:
            self.records[record] = None
        _detach(exc)  # after taking its place in line: nobody sees the record before the op completes
        return record

    # ------------------------------------------------------ called by Grants, under the lock
    def taint(self, var: VarHandle, record: ErrorRecord) -> None:
        """``var`` was written by a failed or spoiled op (a successful write sets ``var._err = None``)."""
        var._err = Taint(record, next(self.clock))

    @staticmethod
    def spoil(op: _Op, var: VarHandle, write: bool) -> None:
        """``op`` was granted ``var``, which is tainted: the op will not run if it reads the var, or
        writes it while its record is pending.  Decided at the grant, when every earlier write of the
        var has finished and no later one can start, so no wait's timing changes it."""
        err = var._err.record
        if op.err is None and (not write or err.pending) and op.prop is not _DELETE_VAR:
            op.err = err

    # ------------------------------------------------------------------------- waits
    def raise_var(self, var: VarHandle, since: int, blocking: bool) -> None:
        """Raise the error tainting ``var``: always for an await; for a blocking wait (ticket
        ``since``) unless a wait on this var that began earlier already raised it, or it was
        cleared by a ``wait_for_all`` since it landed."""
        if var._err is None:
            return
        with self._lock:
            taint = var._err
            if taint is None:
                return
            err = taint.record
            seen = taint.seen or (self.cleared_at if taint.at < self.cleared_at else 0)
            if blocking and seen and since > seen:
                return
            if not seen:
                taint.seen = next(self.clock)
            if err.pending:
                err.pending = False
                self.records.pop(err, None)
        raise err.raisable()

    def raise_first(self) -> None:
        """Raise the first pending record; every record pending now counts as reported."""
        if not self.records:
            return
        with self._lock:
            pending = list(self.records)
            for record in pending:
                record.pending = False
            self.records.clear()
            if pending:
                self.cleared_at = next(self.clock)
        if pending:
            raise pending[0].raisable()


def _detach(exc: BaseException) -> BaseException:
    """``exc`` with its traceback kept as text (a note) and its frames let go, along its chain."""
    if exc.__traceback__ is None:
        return exc
    text = "".join(traceback.format_exception(exc))
    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = None
        e = e.__cause__ or e.__context__
    exc.add_note("The failed op's traceback, kept as text:\n" + text.rstrip())
    return exc
