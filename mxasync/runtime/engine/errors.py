"""Error bookkeeping: a failed op's error lands on the vars it writes, spoils the ops that touch them,
and is raised once (MXNet's rule): at a wait on one of those vars or at ``wait_for_all``."""

from __future__ import annotations

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
        self.records: list[ErrorRecord] = []
        self.live = 0
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
            self.records.append(record)
            self.live += 1
            self._on_change()
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

    def raise_var(self, var: VarHandle) -> None:
        """Raise the unreported error on ``var``, marking it reported."""
        err = var._err
        if err is None or err.reported:
            return
        with self._lock:
            if err.reported:
                return
            err.reported = True
            self.live -= 1
            self._on_change()
        raise err.exc

    def raise_first(self) -> None:
        """Raise the first unreported error; every error pending now counts as reported."""
        if not self.records:
            return
        with self._lock:
            first = None
            for record in self.records:
                if not record.reported:
                    if first is None:
                        first = record
                    record.reported = True
                    self.live -= 1
            self._on_change()
            self.records.clear()
        if first is not None:
            raise first.exc
