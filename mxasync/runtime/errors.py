"""Error bookkeeping: a failed op's error lands on the vars it writes, spoils the ops that touch them,
and is raised once (MXNet's rule): at a wait on one of those vars or at ``wait_for_all``."""

from __future__ import annotations

from .op_block import _Op, _wrap_error
from .run_context import FnProperty
from .var import ErrorRecord, VarHandle

__all__ = ["ErrorsMixin"]

_DELETE_VAR = FnProperty.DELETE_VAR


class ErrorsMixin:
    def _make_error(self, op: _Op, exc: BaseException) -> ErrorRecord | None:
        name = op.display_name()
        if op.prop is _DELETE_VAR:  # nobody will read the var again; say so and go on
            import warnings

            warnings.warn(f"engine: delete op {name!r} failed: {exc!r}", RuntimeWarning, stacklevel=1)
            return None
        record = ErrorRecord(_wrap_error(exc, name), name)
        with self._lock:
            self._errors.append(record)
            self._live_errors += 1
            self._slow = True
        return record

    def _inherit_error(self, op: _Op) -> bool:
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

    def _raise_var_error(self, var: VarHandle) -> None:
        err = var._err
        if err is None or err.reported:
            return
        with self._lock:
            if err.reported:
                return
            err.reported = True
            self._live_errors -= 1
            self._refresh_slow()
        raise err.exc

    def _raise_first_error(self) -> None:
        if not self._errors:
            return
        with self._lock:
            first = None
            for record in self._errors:
                if not record.reported:
                    if first is None:
                        first = record
                    record.reported = True
                    self._live_errors -= 1
            self._refresh_slow()
            self._errors.clear()
        if first is not None:
            raise first.exc
