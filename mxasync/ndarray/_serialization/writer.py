"""Writing the format: ``mx.nd.save``'s bytes, to a path atomically or to a binary file."""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Mapping
from typing import IO, Any

import numpy as np

from mxasync.atomic import AtomicFile
from mxasync.base import MXAsyncError
from mxasync.operator.sparse.formats import SparseValue

from .format import (
    CPU,
    DEV_TYPES,
    LIST_MAGIC,
    STYPE_IDS,
    V2_MAGIC,
    V3_MAGIC,
    ArrayRecord,
    Context,
    SaveData,
    type_flag_of,
)


def _check_context(ctx: Any, where: str) -> Context:
    try:
        dev_type, dev_id = (int(v) for v in ctx)
    except (TypeError, ValueError):
        raise MXAsyncError(f"{where}: context must be a (dev_type, dev_id) pair, got {ctx!r}") from None
    if dev_type not in DEV_TYPES:
        raise MXAsyncError(f"{where}: unknown device type {dev_type} (known: {DEV_TYPES})")
    if not 0 <= dev_id < 2**31:
        raise MXAsyncError(f"{where}: device id {dev_id} out of range")
    return dev_type, dev_id


def _normalise_item(item: Any, where: str, np_shape: bool) -> ArrayRecord:
    ctx: Any = CPU
    if isinstance(item, tuple) and len(item) == 2 and (item[0] is None or isinstance(item[0], (np.ndarray,
                                                                                              SparseValue))):
        item, ctx = item
    ctx = _check_context(ctx, where)
    if item is None:
        return ArrayRecord(None, ctx)
    if isinstance(item, SparseValue):
        type_flag_of(item.data.dtype)
        return ArrayRecord(item, ctx)
    arr = np.asarray(item)
    type_flag_of(arr.dtype)  # refuse before anything is written
    if arr.ndim == 0 and not np_shape:
        # MXNet 1.9 writes such an array as ndim 0, which its own loader then reads as "none".
        raise MXAsyncError(
            f"{where}: a 0-d array cannot be saved in MXNet's legacy shape format; "
            "reshape it to (1,) or save with np_shape=True (MXNet's numpy semantics)"
        )
    return ArrayRecord(arr, ctx)


def _normalise(data: SaveData, np_shape: bool) -> tuple[list[ArrayRecord], list[str]]:
    if isinstance(data, Mapping):
        names = list(data.keys())
        for name in names:
            if not isinstance(name, str):
                raise MXAsyncError(f"array names must be str, got {name!r}")
        items = [_normalise_item(data[n], f"array {n!r}", np_shape) for n in names]
        return items, names
    if isinstance(data, (np.ndarray, str, bytes)):
        raise MXAsyncError(f"expected a list or dict of arrays, got {type(data).__name__}")
    items = [_normalise_item(v, f"array {i}", np_shape) for i, v in enumerate(data)]
    return items, []


def _write_all(write: Callable[[Any], Any], items: list[ArrayRecord], names: list[str], np_shape: bool) -> None:
    magic = V3_MAGIC if np_shape else V2_MAGIC
    write(struct.pack("<QQQ", LIST_MAGIC, 0, len(items)))
    for arr, (dev_type, dev_id) in items:
        if arr is None:
            write(struct.pack("<Iii", magic, 0, -1 if np_shape else 0))
            continue
        if isinstance(arr, SparseValue):
            _write_sparse(write, magic, arr, dev_type, dev_id)
            continue
        head = struct.pack(f"<IiI{arr.ndim}q", magic, 0, arr.ndim, *arr.shape)
        flag = type_flag_of(arr.dtype)
        write(head + struct.pack("<iii", dev_type, dev_id, flag))
        if arr.size:
            data = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
            write(memoryview(data.reshape(-1).view(np.uint8)))
    write(struct.pack("<Q", len(names)))
    for name in names:
        raw = name.encode("utf-8")
        write(struct.pack("<Q", len(raw)) + raw)


def _shape_bytes(shape) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def _write_sparse(write, magic: int, v: SparseValue, dev_type: int, dev_id: int) -> None:
    """One csr / row_sparse array as MXNet's NDArray::Save writes it."""
    aux = [v.indptr, v.indices] if v.stype == "csr" else [v.indices]
    head = struct.pack("<Ii", magic, STYPE_IDS[v.stype]) + _shape_bytes(v.data.shape) + _shape_bytes(v.shape)
    head += struct.pack("<iii", dev_type, dev_id, type_flag_of(v.data.dtype))
    for a in aux:
        head += struct.pack("<i", type_flag_of(a.dtype)) + _shape_bytes(a.shape)
    write(head)
    for a in [v.data, *aux]:
        if a.size:
            data = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
            write(memoryview(data.reshape(-1).view(np.uint8)))


def dumps_arrays(data: SaveData, *, np_shape: bool = False) -> bytes:
    """The bytes ``mx.nd.save`` writes for ``data`` (a list, or a dict name -> array).

    ``np_shape=True`` writes V3 arrays, as MXNet does under ``mx.npx.set_np()``; such files
    hold 0-d arrays but MXNet then loads them only under numpy semantics.
    """
    items, names = _normalise(data, np_shape)
    parts: list[Any] = []
    _write_all(parts.append, items, names, np_shape)
    return b"".join(parts)


def save_arrays(target: str | os.PathLike[str] | IO[bytes], data: SaveData, *, np_shape: bool = False) -> None:
    """Write ``data`` to a path (atomically: temp file in the same folder, then os.replace) or a binary file."""
    items, names = _normalise(data, np_shape)
    if hasattr(target, "write"):
        _write_all(target.write, items, names, np_shape)  # type: ignore[union-attr]
        return
    with AtomicFile(target, "wb") as f:
        _write_all(f.write, items, names, np_shape)
