"""Loading the heavy parts of the package ahead of use, off the event loop.

``mx.nd`` loads numpy, pydantic, the engine and, one family at a time, the ops it is
asked for (the first ``mx.nd.ones`` about 0.3 s of CPU); in async code that first call
holds the event loop meanwhile.  ``await mx.preload_async()`` does that work in a worker
thread while the loop keeps running; ``mx.preload()`` is its sync twin (for a service's
start-up).

>>> import mxasync as mx
>>> mx.preload("ndarray")
>>> import sys; "mxasync.ndarray" in sys.modules
True
"""

from __future__ import annotations

import asyncio
import importlib

__all__ = ["preload", "preload_async"]

#: what loads the operator registry (``symbol`` and ``ndarray`` derive every op from it)
DEFAULT = ("ndarray", "symbol")


def preload(*names: str) -> None:
    """Import ``mxasync.<name>`` for each name (default: ``ndarray`` and ``symbol``)."""
    for name in names or DEFAULT:
        importlib.import_module(f"mxasync.{name}")


async def preload_async(*names: str) -> None:
    """:func:`preload` in a worker thread: the caller's event loop keeps running meanwhile."""
    await asyncio.to_thread(preload, *names)
