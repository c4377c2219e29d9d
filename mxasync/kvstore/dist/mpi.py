"""Lazy access to mpi4py and the settings of the distributed KVStore.

mpi4py is an optional extra (``pip install "mxasync[dist]"``), so nothing here
imports it at module import time: ``import mxasync`` must work without it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
from typing import Any

from ...base import MXNetError

__all__ = ["available", "load_mpi", "init_thread", "timeout", "SERVER_MODULE", "WORKER", "SERVER"]

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


def init_thread(MPI: Any) -> None:
    """``MPI_Init_thread(MPI_THREAD_MULTIPLE)`` without holding the GIL.

    MPI's start-up waits until every rank of the job arrived.  mpi4py's
    ``Init_thread`` keeps the GIL meanwhile, so the whole process froze: the
    creating thread's start-up timeout could not fire and an event loop awaiting
    ``create_async`` stood still.  Called through ctypes (which lets the GIL go
    for the call), the wait blocks only the communication thread.
    """
    try:
        lib = ctypes.CDLL(MPI.__file__)  # its MPI library is a dependency: dlsym finds MPI's symbols
        fn = lib.MPI_Init_thread
    except (OSError, AttributeError):  # an MPI build we cannot reach this way: mpi4py's call, with the GIL
        MPI.Init_thread(MPI.THREAD_MULTIPLE)
        return
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_int)]
    fn.restype = ctypes.c_int
    provided = ctypes.c_int(0)
    code = fn(None, None, int(MPI.THREAD_MULTIPLE), ctypes.byref(provided))
    if code != 0:
        raise MXNetError(f"MPI_Init_thread failed with MPI error code {code}")


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
