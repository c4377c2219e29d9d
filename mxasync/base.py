"""Errors and environment knobs shared by every layer.

Nothing here imports another part of mxasync, so any module may import it.
"""

from __future__ import annotations

import os

__all__ = [
    "MXAsyncError", "MXNetError", "MXAsyncValueError", "MXAsyncOSError", "env_int", "env_float", "env_str", "env_bool",
]


class MXAsyncError(RuntimeError):
    """The error users see for runtime, shape and parameter problems.

    ``mx.MXNetError`` is the same class, so ``except mx.MXNetError`` ports
    unchanged from MXNet code.
    """


MXNetError = MXAsyncError


class MXAsyncValueError(MXAsyncError, ValueError):
    """A bad value where MXNet (or numpy under it) raises ``ValueError``: both, so either
    ``except`` clause keeps working."""


class MXAsyncOSError(MXAsyncError, OSError):
    """A file could not be read or written: an ``MXNetError`` (as MXNet raises) that is also an
    ``OSError`` carrying ``errno`` and the user's file name."""

    def __str__(self) -> str:
        return str(self.args[0]) if len(self.args) == 1 else OSError.__str__(self)


def _lookup(names: tuple[str, ...]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value not in (None, ""):
            return value
    return None


def env_str(default: str, *names: str) -> str:
    """First non-empty environment variable among ``names``, else ``default``.

    Names are tried in order so that an ``MXASYNC_*`` knob can sit in front of
    the MXNet name users already know.
    """
    value = _lookup(names)
    return default if value is None else value


def env_int(default: int, *names: str) -> int:
    value = _lookup(names)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise MXAsyncError(f"environment variable {names[0]}={value!r} is not an integer") from None


def env_float(default: float, *names: str) -> float:
    value = _lookup(names)
    if value is None:
        return default
    try:
        return float(value)
    except ValueError:
        raise MXAsyncError(f"environment variable {names[0]}={value!r} is not a number") from None


def env_bool(default: bool, *names: str) -> bool:
    value = _lookup(names)
    if value is None:
        return default
    return value.strip().lower() not in ("0", "false", "no", "off", "")
