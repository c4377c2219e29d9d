"""``mx.log``: MXNet's logger, one line a record: ``<level letter><mmdd hh:mm:ss> <pid> <file>:<func>:<line>]
<message>``, coloured by level (red from WARNING, green INFO, blue below).

>>> import logging
>>> get_logger("mxasync.doctest", level=DEBUG).level == logging.DEBUG
True
"""

from __future__ import annotations

import logging
import warnings

__all__ = ["CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG", "NOTSET", "get_logger", "getLogger"]

CRITICAL, ERROR, WARNING = logging.CRITICAL, logging.ERROR, logging.WARNING
INFO, DEBUG, NOTSET = logging.INFO, logging.DEBUG, logging.NOTSET

_LABELS = {CRITICAL: "C", ERROR: "E", WARNING: "W", INFO: "I", DEBUG: "D"}


class _Formatter(logging.Formatter):
    def __init__(self) -> None:
        super().__init__(datefmt="%m%d %H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        level = record.levelno
        color = "\x1b[31m" if level >= WARNING else "\x1b[32m" if level >= INFO else "\x1b[34m"
        self._style._fmt = (color + _LABELS.get(level, "U") +
                            "%(asctime)s %(process)d %(pathname)s:%(funcName)s:%(lineno)d]\x1b[0m %(message)s")
        return super().format(record)


def get_logger(name: str | None = None, filename: str | None = None, filemode: str | None = None,
               level: int = WARNING) -> logging.Logger:
    """The logger ``name``; the first call for a name gives it MXNet's format, on ``filename`` (mode
    ``filemode``, default ``'a'``) or on stderr, and sets ``level``."""
    logger = logging.getLogger(name)
    if name is not None and not getattr(logger, "_init_done", None):
        logger._init_done = True  # type: ignore[attr-defined]
        handler = logging.FileHandler(filename, filemode or "a") if filename else logging.StreamHandler()
        handler.setFormatter(_Formatter())
        logger.addHandler(handler)
        logger.setLevel(level)
    return logger


def getLogger(name: str | None = None, filename: str | None = None, filemode: str | None = None,  # noqa: N802
              level: int = WARNING) -> logging.Logger:
    """Deprecated spelling of :func:`get_logger` (warns, as MXNet's does)."""
    warnings.warn("getLogger is deprecated, Use get_logger instead.", DeprecationWarning, stacklevel=2)
    return get_logger(name, filename, filemode, level)
