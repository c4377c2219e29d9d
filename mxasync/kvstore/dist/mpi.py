"""Lazy access to mpi4py and the settings of the distributed KVStore.

mpi4py is an optional extra (``pip install "mxasync[dist]"``), so nothing here
imports it at module import time: ``import mxasync`` must work without it.
"""

from __future__ import annotations

import os
import shutil
from typing import Any

from ...base import MXNetError

__all__ = ["available", "load_mpi", "timeout", "SERVER_MODULE", "WORKER", "SERVER"]

# the module that server ranks run (``python -m ...``); the launcher starts it
SERVER_MODULE = "mxasync.kvstore.dist.server"
WORKER, SERVER = 0, 1

_DEFAULT_TIMEOUT = 300.0


def available() -> bool:
    """True when mpi4py imports and an ``mpirun`` is on PATH (what the dist tests need).

    >>> isinstance(available(), bool)
    True
    """
    if shutil.which("mpirun") is None:
        return False
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return True


def load_mpi() -> Any:
    """Import mpi4py's ``MPI`` without letting it initialise MPI (the comm thread does that)."""
    try:
        import mpi4py
    except ImportError as exc:
        raise MXNetError(
            "the distributed KVStore needs mpi4py and an MPI runtime: "
            "apt-get install openmpi-bin libopenmpi-dev && pip install 'mxasync[dist]'"
        ) from exc
    # the thread that calls Init_thread is the only one that ever calls MPI
    mpi4py.rc.initialize = False
    mpi4py.rc.finalize = False
    from mpi4py import MPI

    return MPI


def timeout() -> float:
    """Seconds a peer may stay silent before a KVStore op fails (``MXASYNC_KVSTORE_TIMEOUT``).

    >>> timeout() > 0
    True
    """
    raw = os.environ.get("MXASYNC_KVSTORE_TIMEOUT")
    if not raw:
        return _DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        raise MXNetError(f"MXASYNC_KVSTORE_TIMEOUT must be a number of seconds, got {raw!r}") from None
    if value <= 0:
        raise MXNetError(f"MXASYNC_KVSTORE_TIMEOUT must be positive, got {raw!r}")
    return value
