"""Storage chunks: the memory behind NDArrays and the engine var that orders its uses.

Every NDArray is a view (``data``) of one chunk; views made by basic slicing or
reshape share their parent's chunk, hence its var, so writes through a view
are ordered with every other use of the memory.

A device whose backend registered its own storage (``register_storage``) takes every
chunk from it: ``alloc``, then the backend's ``from_storage`` views the block as an array,
and the block goes back through ``free`` (or ``park``) as a pooled one does.

Small chunks are plain backend arrays: the op closures that use them hold
references, so the memory lives as long as any pending op needs it and no
engine op is needed to free it.  Large CPU chunks come from the pooled
:class:`~mxasync.runtime.storage.Storage`; a dead one with ops still pending
parks its block with its var, and the next op output of that size takes the
block over behind a delete of the old var (its ops finish first, its errors
stay behind); otherwise the return to the pool is pushed as ``delete_variable``
so it happens after every pending op finished.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .._bfloat16 import canonical_dtype, is_bfloat16
from ..backends import get_backend
from ..base import MXAsyncError
from ..runtime.context import Context
from ..runtime.engine import Engine
from ..runtime.storage import Storage, has_registered_storage
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
        # no lock may be taken here (a GC pass can run this on a thread inside the engine's
        # lock), so the release waits for the engine's next push, wait or pooled allocation
        try:
            _engine().defer(partial(_release, self.handle, self.var, self.ctx))
        except Exception:  # noqa: BLE001, S110 - interpreter shutdown; the OS takes the memory back
            pass


def _release(handle, var: VarHandle, ctx: Context) -> None:
    """A dead pooled chunk's block: back to the pool, parked with its pending ops' var, or freed
    by a pushed delete after them."""
    storage = Storage.get(ctx)
    if not var.pending:
        storage.free(handle)
        return
    evicted = storage.park(handle, var)
    if evicted is not None:
        old_handle, old_var = evicted
        _engine().delete_variable(lambda rctx: storage.free(old_handle), ctx, old_var)


def alloc_chunk(shape: tuple, dtype, ctx: Context, xp, op_output: bool = False) -> Chunk:
    """A chunk holding an uninitialised array of ``shape``/``dtype`` on ``ctx``.

    ``op_output``: the chunk is first written by the engine op pushed next, so it may take
    a parked block whose old ops are still pending (see the module docstring).  An array too
    big to allocate raises ``MXNetError`` naming its shape, dtype and size (never numpy's bare
    ``ValueError: Maximum allowed dimension exceeded`` or ``MemoryError``).
    """
    try:
        return _alloc_chunk(shape, dtype, ctx, xp, op_output)
    except (ValueError, MemoryError, OverflowError) as exc:
        dt = np.dtype(dtype)
        nbytes = dt.itemsize * _prod(shape)
        raise MXAsyncError(f"cannot allocate an array of shape {tuple(shape)} and dtype {dt.name} on {ctx}: "
                           f"{nbytes:.3g} bytes ({type(exc).__name__}: {exc})") from exc


def _alloc_chunk(shape: tuple, dtype, ctx: Context, xp, op_output: bool) -> Chunk:
    dtype = canonical_dtype(dtype)
    if has_registered_storage(ctx.device_type):
        # a plugin device's own memory: its Storage's block, viewed as an array by its backend
        handle = Storage.get(ctx).alloc(dtype.itemsize * _prod(shape))
        base = get_backend(ctx.device_type).from_storage(handle, tuple(shape), dtype)
        return PooledChunk(base, ctx, handle)
    if xp is np:
        nbytes = dtype.itemsize * _prod(shape)
        storage = Storage.get(ctx)
        if nbytes >= storage.min_pooled:
            engine = _engine()
            if engine._deferred:
                engine.run_deferred()  # dead chunks' blocks first: the warmest ones
            if op_output and getattr(engine._tls, "bulk", None) is None:
                parked = storage.take_parked(nbytes)
                if parked is not None:
                    handle, old_var = parked
                    chunk = PooledChunk(handle.buffer[:nbytes].view(dtype).reshape(shape), ctx, handle)
                    if old_var.pending:
                        engine.delete_variable(None, ctx, old_var, then=chunk.var)
                    return chunk
            handle = storage.alloc(nbytes)
            base = handle.buffer[:nbytes].view(dtype).reshape(shape)
            return PooledChunk(base, ctx, handle)
        return Chunk(np.empty(shape, dtype), ctx)
    if is_bfloat16(dtype):
        raise MXAsyncError(f"cannot allocate a bfloat16 array of shape {tuple(shape)} on {ctx}: its backend "
                           f"({get_backend(ctx.device_type).name}) has no bfloat16 arrays (CuPy has none); "
                           "use float16 there, or compute on the CPU")
    return Chunk(xp.empty(shape, dtype), ctx)


def _prod(shape) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
