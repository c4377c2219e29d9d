"""Error bookkeeping: a failed op's error lands on the vars it writes, spoils the ops that touch them,
and is raised once (MXNet's rule): at a wait on one of those vars or at ``wait_for_all``.

"Once" is about time, not about who asks: every wait that was already waiting when the
error surfaces gets it (two tasks awaiting one failed array in ``asyncio.gather`` both
raise); waits that begin afterwards do not.  A wait takes a ticket from :attr:`Errors.clock`
when it begins; a record notes the clock when it surfaces.

A stored error keeps its traceback as text (a note on the op's exception), never the frames:
the frames of a failed kernel hold its arrays.  A record that surfaced at a wait is dropped
from the engine's list at once; it lives on only on the vars it tainted.
"""

from __future__ import annotations

import itertools
import traceback
import warnings
from collections.abc import Callable

from ..run_context import FnProperty
from ..var import ErrorRecord, VarHandle
from .ops import _Op, _wrap_error

__all__ = ["Errors"]

_DELETE_VAR = FnProperty.DELETE_VAR


class Errors:
    """The errors not yet reported.  ``live`` counts them; while it is not zero the engine takes its
    full path (``on_change`` tells the engine to look again), where ops check what they inherit."""

    def __init__(self, lock, on_change: Callable[[], None]):
        self.records: dict[ErrorRecord, None] = {}  # not yet reported, in the order they happened
        self.live = 0
        self.clock = itertools.count(1)  # waits take a ticket at their start; records note when they surfaced
        self._lock = lock  # the engine's lock (Grants.lock)
        self._on_change = on_change

    def make(self, op: _Op, exc: BaseException) -> ErrorRecord | None:
        """The record of ``op`` failing with ``exc`` (None for a failed delete: a warning, nobody reads it)."""
        name = op.display_name()
        if op.prop is _DELETE_VAR:  # nobody will read the var again; say so and go on
            warnings.warn(f"engine: delete op {name!r} failed: {exc!r}", RuntimeWarning, stacklevel=1)
            return None
        record = ErrorRecord(_wrap_error(exc, name), name)
        with self._lock:
            self.records[record] = None
            self.live += 1
            self._on_change()
        _detach(exc)  # after taking its place in line: nobody sees the record before the op completes
        return record

    @staticmethod
    def inherit(op: _Op) -> bool:
        """Spoil ``op`` if a var it touches carries an unreported error (MXNet's skip rule)."""
        for v in op.const_vars:
            e = v._err
            if e is not None and not e.reported:
                op.err = e
                return True
        for v in op.mutate_vars:
            e = v._err
            if e is not None and not e.reported:
                op.err = e
                return True
        return False

    def raise_var(self, var: VarHandle, since: int | None = None) -> None:
        """Raise the error on ``var`` if it is unreported (marking it reported), or if it surfaced
        after ``since``, the ticket of a wait that began before (that wait was already waiting)."""
        err = var._err
        if err is None:
            return
        if err.reported:
            if since is None or err.surfaced <= since:
                return
        else:
            with self._lock:
                if err.reported:
                    if since is None or err.surfaced <= since:
                        return
                else:
                    self._surface(err)
                    self._on_change()
        raise err.raisable()

    def _surface(self, record: ErrorRecord) -> None:
        """Mark ``record`` reported and drop it (caller holds the lock)."""
        record.reported = True
        record.surfaced = next(self.clock)
        self.live -= 1
        self.records.pop(record, None)

    def raise_first(self) -> None:
        """Raise the first unreported error; every error pending now counts as reported."""
        if not self.records:
            return
        with self._lock:
            pending = list(self.records)
            for record in pending:
                self._surface(record)
            self._on_change()
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
