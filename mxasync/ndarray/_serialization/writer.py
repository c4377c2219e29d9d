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


def _check_context(ctx: Any, label: Any) -> Context:
    try:
        dev_type, dev_id = (int(v) for v in ctx)
    except (TypeError, ValueError):
        raise MXAsyncError(f"array {label!r}: context must be a (dev_type, dev_id) pair, got {ctx!r}") from None
    if dev_type not in DEV_TYPES:
        raise MXAsyncError(f"array {label!r}: unknown device type {dev_type} (known: {DEV_TYPES})")
    if not 0 <= dev_id < 2**31:
        raise MXAsyncError(f"array {label!r}: device id {dev_id} out of range")
    return dev_type, dev_id


def _normalise_item(item: Any, label: Any, np_shape: bool, contexts: dict) -> ArrayRecord:
    """``item`` as a checked record; ``label`` (its name or index) only goes into messages, and
    ``contexts`` keeps each context already checked (a file has one or two of them)."""
    ctx: Any = CPU
    given = item
    if isinstance(item, tuple) and len(item) == 2 and (item[0] is None or isinstance(item[0], (np.ndarray,
                                                                                              SparseValue))):
        item, ctx = item
    try:
        ctx = contexts[ctx]
    except (KeyError, TypeError):  # new, or unhashable (a list): check it
        checked = _check_context(ctx, label)
        if isinstance(ctx, tuple):
            contexts[ctx] = checked
        ctx = checked
    if item is None:
        return ArrayRecord(None, ctx)
    if isinstance(item, SparseValue):
        type_flag_of(item.data.dtype)
        return ArrayRecord(item, ctx)
    arr = item if type(item) is np.ndarray else np.asarray(item)
    type_flag_of(arr.dtype)  # refuse before anything is written
    if arr.ndim == 0 and not np_shape:
        # MXNet 1.9 writes such an array as ndim 0, which its own loader then reads as "none".
        raise MXAsyncError(
            f"array {label!r}: a 0-d array cannot be saved in MXNet's legacy shape format; "
            "reshape it to (1,) or save with np_shape=True (MXNet's numpy semantics)"
        )
    if type(given) is ArrayRecord and given.array is arr and given.context == ctx:
        return given  # already a checked record (mx.nd.save's): no new tuple per array
    return ArrayRecord(arr, ctx)


def _normalise(data: SaveData, np_shape: bool) -> tuple[list[ArrayRecord], list[str]]:
    contexts: dict = {}
    if isinstance(data, Mapping):
        names = list(data.keys())
        for name in names:
            if not isinstance(name, str):
                raise MXAsyncError(f"array names must be str, got {name!r}")
        items = [_normalise_item(data[n], n, np_shape, contexts) for n in names]
        return items, names
    if isinstance(data, (np.ndarray, str, bytes)):
        raise MXAsyncError(f"expected a list or dict of arrays, got {type(data).__name__}")
    items = [_normalise_item(v, i, np_shape, contexts) for i, v in enumerate(data)]
    return items, []


# Small dense arrays of one shape, dtype and context in a row are written as one block: per-array
# writes and packs cost more than the bytes for them (a file of 200000 4-element arrays).
_RUN_ITEM_BYTES = 1 << 16  # arrays above this are written on their own, straight from their memory
_RUN_BYTES = 1 << 24  # a block's size at most (it is a copy of the arrays)


def _dense_head(magic: int, arr: np.ndarray, dev_type: int, dev_id: int) -> bytes:
    return struct.pack(f"<IiI{arr.ndim}qiii", magic, 0, arr.ndim, *arr.shape, dev_type, dev_id,
                       type_flag_of(arr.dtype))


def _little_endian(arr: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))


def _write_run(write: Callable[[Any], Any], magic: int, run: list[ArrayRecord]) -> None:
    """Arrays of one shape, dtype and context: each one's header and data, in one write."""
    first, (dev_type, dev_id) = run[0]
    head = np.frombuffer(_dense_head(magic, first, dev_type, dev_id), np.uint8)
    if not first.size:
        write(head.tobytes() * len(run))
        return
    if len(run) == 1:
        write(head.tobytes())
        write(memoryview(_little_endian(first).reshape(-1).view(np.uint8)))
        return
    block = np.empty((len(run), head.size + first.nbytes), np.uint8)
    block[:, :head.size] = head
    data = block[:, head.size:].view(first.dtype.newbyteorder("<")).reshape((len(run),) + first.shape)
    for i, (arr, _ctx) in enumerate(run):
        data[i] = arr
    write(memoryview(block.reshape(-1)))


def _write_all(write: Callable[[Any], Any], items: list[ArrayRecord], names: list[str], np_shape: bool) -> None:
    magic = V3_MAGIC if np_shape else V2_MAGIC
    write(struct.pack("<QQQ", LIST_MAGIC, 0, len(items)))
    run: list[ArrayRecord] = []
    run_key, run_bytes = None, 0
    for item in items:
        arr = item.array
        key = (arr.shape, arr.dtype, item.context) if type(arr) is np.ndarray and arr.nbytes <= _RUN_ITEM_BYTES \
            else None
        if run and (key is None or key != run_key or run_bytes >= _RUN_BYTES):
            _write_run(write, magic, run)
            run = []
        if key is not None:
            if not run:
                run_key, run_bytes = key, 0
            run.append(item)
            run_bytes += arr.nbytes
        elif arr is None:
            write(struct.pack("<Iii", magic, 0, -1 if np_shape else 0))
        elif isinstance(arr, SparseValue):
            _write_sparse(write, magic, arr, *item.context)
        else:
            _write_run(write, magic, [item])
    if run:
        _write_run(write, magic, run)
    write(struct.pack("<Q", len(names)))
    write(b"".join(len(raw).to_bytes(8, "little") + raw for raw in (name.encode("utf-8") for name in names)))


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
            write(memoryview(_little_endian(a).reshape(-1).view(np.uint8)))


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
