"""Storage chunks: the memory behind NDArrays and the engine var that orders its uses.

Every NDArray is a view (``data``) of one chunk; views made by basic slicing or
reshape share their parent's chunk, hence its var, so writes through a view
are ordered with every other use of the memory.

Small chunks are plain backend arrays: the op closures that use them hold
references, so the memory lives as long as any pending op needs it and no
engine op is needed to free it.  Large CPU chunks come from the pooled
:class:`~mxasync.runtime.storage.Storage`; their return to the pool is pushed
as ``delete_variable`` so it happens after every pending op finished.
"""

from __future__ import annotations

import numpy as np

from ..runtime.context import Context
from ..runtime.engine import Engine
from ..runtime.storage import Storage
from ..runtime.var import VarHandle

__all__ = ["Chunk", "PooledChunk", "alloc_chunk"]

_engine = Engine.get


class Chunk:
    """Memory plus the var that orders its uses; small chunks need nothing at deletion."""

    __slots__ = ("base", "var", "ctx", "handle", "__weakref__")

    def __init__(self, base, ctx: Context, handle=None):
        self.base = base
        self.ctx = ctx
        self.handle = handle
        self.var = VarHandle(_engine())


class PooledChunk(Chunk):
    """A chunk whose memory came from the pool: deleting it returns the block after pending ops."""

    __slots__ = ()

    def __del__(self):
        handle = self.handle
        try:
            var = self.var
            storage = Storage.get(self.ctx)
            if var.pending:
                _engine().delete_variable(lambda rctx: storage.free(handle), self.ctx, var)
            else:
                storage.free(handle)
        except Exception:  # noqa: BLE001 - interpreter shutdown; the OS takes the memory back
            pass


def alloc_chunk(shape: tuple, dtype, ctx: Context, xp) -> Chunk:
    """A chunk holding an uninitialised array of ``shape``/``dtype`` on ``ctx``."""
    dtype = np.dtype(dtype)
    if xp is np:
        nbytes = dtype.itemsize * _prod(shape)
        storage = Storage.get(ctx)
        if nbytes >= storage.min_pooled:
            handle = storage.alloc(nbytes)
            base = handle.buffer[:nbytes].view(dtype).reshape(shape)
            return PooledChunk(base, ctx, handle)
        return Chunk(np.empty(shape, dtype), ctx)
    return Chunk(xp.empty(shape, dtype), ctx)


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
