"""The single-process stores: ``'local'`` (reduce and update on the CPU) and ``'device'``.

A push is three overridable steps, each one engine op per key so the engine
orders it after the writes of the pushed arrays (and the priority puts the
first layers' keys first, as MXNet's Module asks with ``priority=-index``):

* ``_reduce``: sum the pushed arrays into a buffer (the stored value itself
  when there is no updater, so a plain push costs one op);
* ``_update``: run the updater on (merged, stored);
* ``_broadcast``: copy the stored value into every ``out`` of a pull.

'device' keeps each key's sum and stored value on the device of the pushed
arrays instead of the CPU; on a CPU-only machine both behave the same.

>>> import mxasync as mx
>>> from mxasync import kvstore
>>> kv = kvstore.create("local")
>>> kv.init("w", mx.nd.ones((2,)))
>>> kv._set_updater(lambda key, grad, weight: weight.__isub__(grad * 0.5))
>>> kv.pushpull("w", [mx.nd.ones((2,))] * 2, out=(w := mx.nd.empty((2,)))); w.asnumpy().tolist()
[0.0, 0.0]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..base import MXAsyncError
from ..ndarray._invoke import invoke
from ..ndarray.ndarray import NDArray, empty
from ..operator.base import WRITE_TO
from ..operator.sparse.dispatch import add_values, store, value_of
from ..runtime.context import Context, cpu
from ..runtime.engine import Engine
from .base import Key, KVStoreBase, register

__all__ = ["KVStoreLocal"]

_HOST = ("cpu", "cpu_pinned", "cpu_shared")


def _same_memory(a: Context, b: Context) -> bool:
    """Arrays on these contexts can be read by one kernel (every CPU context is host memory)."""
    return a == b or (a.device_type in _HOST and b.device_type in _HOST)


def _xp(ctx: Context):
    from ..backends import get_backend

    return get_backend(ctx.device_type).xp


def push_sum(srcs: Sequence[NDArray], dst: NDArray, priority: int, name: str) -> None:
    """One engine op: ``dst[:] = sum(srcs)``; every ``src`` must share ``dst``'s memory space."""
    if dst.stype != "default" or any(s.stype != "default" for s in srcs):
        _push_sparse_sum(srcs, dst, priority, name)
        return
    xp = _xp(dst.context)
    datas = [s._data for s in srcs]
    out = dst._data
    out_var = dst._chunk.var
    reads = list(dict.fromkeys(s._chunk.var for s in srcs))
    aliased = out_var in reads  # dst is one of the sources: sum into a temporary first
    if aliased:
        reads.remove(out_var)

    def run(rctx):
        if len(datas) == 1:
            out[...] = datas[0]
        elif aliased:
            total = datas[0] + datas[1]
            for d in datas[2:]:
                total += d
            out[...] = total
        else:
            xp.add(datas[0], datas[1], out=out)
            for d in datas[2:]:
                xp.add(out, d, out=out)

    Engine.get().push_sync(run, dst.context, reads, [out_var], priority=priority, name=name)


def _push_sparse_sum(srcs: Sequence[NDArray], dst: NDArray, priority: int, name: str) -> None:
    """``push_sum`` with csr / row_sparse arrays: the sum keeps ``dst``'s storage type."""
    xp = _xp(dst.context)
    datas = [s._data for s in srcs]
    out = dst._data
    reads = [v for v in dict.fromkeys(s._chunk.var for s in srcs) if v is not dst._chunk.var]

    def run(rctx):
        total = value_of(datas[0])
        for d in datas[1:]:
            total = add_values(xp, total, value_of(d))
        store(xp, out, WRITE_TO, total)

    Engine.get().push_sync(run, dst.context, reads, [dst._chunk.var], priority=priority, name=name)


def push_copy(src: NDArray, dst: NDArray, priority: int, name: str) -> None:
    """``dst[:] = src`` as one op with ``priority`` (across devices, ``copyto`` picks the copy kind)."""
    if src._chunk is dst._chunk and src._data is dst._data:
        return
    if _same_memory(src.context, dst.context):
        push_sum([src], dst, priority, name)
    else:
        src.copyto(dst)


@register("local", "device", "local_update_cpu", "local_allreduce_cpu", "local_allreduce_device")
class KVStoreLocal(KVStoreBase):
    """Keys live in this process; see the module docstring for the three steps of a push."""

    def __init__(self, kv_type: str = "local"):
        super().__init__(kv_type)
        self._on_device = kv_type.endswith("device")
        self._store: dict[Key, NDArray] = {}
        self._merged: dict[Key, NDArray] = {}
        self._staged: dict[tuple[Key, int], NDArray] = {}

    def _has_key(self, key: Key) -> bool:
        return key in self._store

    def _home(self, value: NDArray) -> Context:
        return value.context if self._on_device else cpu(0)

    # -- the steps ----------------------------------------------------------------
    def _init_key(self, key: Key, value: NDArray) -> None:
        if key in self._store:
            raise MXAsyncError(f"kvstore.init: key {key!r} was already initialised")
        stored = empty(value.shape, self._home(value), value.dtype, stype=value.stype)
        push_copy(value, stored, 0, f"kvstore_init[{key}]")
        self._store[key] = stored

    def _push_key(self, key: Key, values: Sequence[NDArray], priority: int) -> None:
        stored = self._store[key]
        for v in values:
            if v.shape != stored.shape:
                raise MXAsyncError(f"kvstore.push: key {key!r} holds shape {stored.shape}, got a value of "
                                   f"shape {v.shape}")
        if self._on_device and not _same_memory(values[0].context, stored.context):
            stored = self._store[key] = stored.copyto(values[0].context)  # follow the pushed arrays
        if self._updater is None:
            self._reduce(key, values, stored, priority)
            return
        merged = self._merged.get(key)
        stype = "row_sparse" if all(v.stype == "row_sparse" for v in values) else "default"
        if merged is None or not _same_memory(merged.context, stored.context) or merged.stype != stype:
            merged = self._merged[key] = empty(stored.shape, stored.context, stored.dtype, stype=stype)
        self._reduce(key, values, merged, priority)
        self._update(key, merged, stored)

    def _pull_key(self, key: Key, outs: Sequence[NDArray], priority: int) -> None:
        stored = self._store[key]
        for o in outs:
            if o.shape != stored.shape:
                raise MXAsyncError(f"kvstore.pull: key {key!r} holds shape {stored.shape}, out has shape {o.shape}")
        self._broadcast(key, stored, outs, priority)

    def _stored_stype(self, key: Key) -> str:
        return self._store[key].stype

    def _row_sparse_pull_key(self, key: Key, out: NDArray, row_ids: NDArray, priority: int) -> None:
        stored = self._store[key]
        if out.shape != stored.shape:
            raise MXAsyncError(f"kvstore.row_sparse_pull: key {key!r} holds shape {stored.shape}, out has shape "
                               f"{out.shape}")
        rows = row_ids.as_in_context(stored.context)
        kept = invoke("_sparse_retain", [stored.tostype("row_sparse"), rows])
        push_copy(kept, out, priority, f"kvstore_row_sparse_pull[{key}]")

    # -- overridable pieces (a distributed store adds its all-reduce to _reduce) ------
    def _reduce(self, key: Key, values: Sequence[NDArray], dst: NDArray, priority: int) -> None:
        """``dst[:] = sum(values)``; values on another device are copied next to ``dst`` first."""
        local = []
        for i, v in enumerate(values):
            if _same_memory(v.context, dst.context):
                local.append(v)
                continue
            buf = self._staged.get((key, i))
            if buf is None or buf.context != dst.context:
                buf = self._staged[(key, i)] = empty(v.shape, dst.context, v.dtype)
            v.copyto(buf)
            local.append(buf)
        push_sum(local, dst, priority, f"kvstore_reduce[{key}]")

    def _update(self, key: Key, merged: NDArray, stored: NDArray) -> None:
        """Run the updater; its NDArray ops are pushed like any others (MXNet calls it the same way)."""
        self._updater(key, merged, stored)

    def _broadcast(self, key: Key, src: NDArray, outs: Sequence[NDArray], priority: int) -> None:
        for o in outs:
            push_copy(src, o, priority, f"kvstore_broadcast[{key}]")

    # -- inspection --------------------------------------------------------------
    def _stored(self, key: Key) -> np.ndarray:
        """A numpy copy of a stored value (tests and debugging)."""
        return self._store[key].asnumpy()
