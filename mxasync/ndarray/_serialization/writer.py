"""Writing the format: ``mx.nd.save``'s bytes, to a path atomically or to a binary file.

The arrays go out as a table, not one by one: each distinct (shape, dtype, context) gets its
header bytes once, and consecutive small arrays are written as one ``bytes.join`` of headers
and array memory (a file of 200000 four-element arrays costs a few C loops, not 200000 packs
and writes). Large arrays, and the few that need converting, are written on their own,
straight from their memory.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Mapping
from operator import attrgetter, itemgetter
from typing import IO, Any, NamedTuple

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
    ArrayTable,
    Context,
    SaveData,
    type_flag_of,
)

_U64 = struct.Struct("<Q")
_SHAPE, _DTYPE = attrgetter("shape"), attrgetter("dtype")


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


def _normalise_item(item: Any, label: Any, contexts: dict) -> tuple[Any, Context]:
    """``item`` as a checked ``(array, context)`` pair; ``label`` (its name or index) only goes into
    messages, and ``contexts`` keeps each context already checked (a file has one or two of them)."""
    ctx: Any = CPU
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
    if item is None or type(item) is np.ndarray:
        return item, ctx
    if isinstance(item, SparseValue):
        type_flag_of(item.data.dtype)  # refuse before anything is written
        return item, ctx
    return np.asarray(item), ctx


def _normalise(data: SaveData, np_shape: bool) -> ArrayTable:
    if isinstance(data, ArrayTable):
        return data
    contexts: dict = {}
    names: list[str] = []
    if isinstance(data, Mapping):
        names = list(data.keys())
        for name in names:
            if not isinstance(name, str):
                raise MXAsyncError(f"array names must be str, got {name!r}")
        pairs = [_normalise_item(data[n], n, contexts) for n in names]
    elif isinstance(data, (np.ndarray, str, bytes)):
        raise MXAsyncError(f"expected a list or dict of arrays, got {type(data).__name__}")
    else:
        pairs = [_normalise_item(v, i, contexts) for i, v in enumerate(data)]
    return ArrayTable(list(map(itemgetter(0), pairs)), list(map(itemgetter(1), pairs)), names)


# Small arrays are written in blocks: their headers and bytes joined, at most _RUN_BYTES at a time
# (a block is a copy of them); an array above _RUN_ITEM_BYTES is written on its own from its memory.
_RUN_ITEM_BYTES = 1 << 16
_RUN_BYTES = 1 << 24


class _Layout(NamedTuple):
    """What the arrays of one (shape, dtype, context) share."""

    head: bytes | None  # the bytes before an array's data (None: not a dense numpy array)
    size: int  # head and data bytes
    alone: bool  # written on its own: large, not little-endian, "none" or sparse


def _layout(arr: Any, ctx: Context, magic: int, np_shape: bool, label: Any) -> _Layout:
    if type(arr) is not np.ndarray:
        return _Layout(None, 0, True)
    flag = type_flag_of(arr.dtype)  # refuse before anything is written
    if arr.ndim == 0 and not np_shape:
        # MXNet 1.9 writes such an array as ndim 0, which its own loader then reads as "none".
        raise MXAsyncError(
            f"array {label!r}: a 0-d array cannot be saved in MXNet's legacy shape format; "
            "reshape it to (1,) or save with np_shape=True (MXNet's numpy semantics)"
        )
    head = struct.pack(f"<IiI{arr.ndim}qiii", magic, 0, arr.ndim, *arr.shape, *ctx, flag)
    little = arr.dtype.newbyteorder("<") == arr.dtype
    return _Layout(head, len(head) + arr.nbytes, arr.nbytes > _RUN_ITEM_BYTES or not little)


def _ids(values: list) -> np.ndarray:
    """Each value's number among the distinct values (numbered in order of first appearance)."""
    number = {v: i for i, v in enumerate(dict.fromkeys(values))}
    if len(number) == 1:
        return np.zeros(len(values), np.intp)
    return np.fromiter(map(number.__getitem__, values), np.intp, len(values))


def _layouts(table: ArrayTable, magic: int, np_shape: bool) -> tuple[list, list[int], int]:
    """Each array's header bytes, the positions of those written alone, and how many small arrays
    one block holds at most."""
    arrays = table.arrays
    if not arrays:
        return [], [], 1
    if {np.ndarray}.issuperset(map(type, arrays)):
        shapes, dtypes = list(map(_SHAPE, arrays)), list(map(_DTYPE, arrays))
    else:  # "none" arrays or sparse ones among them: one layout for all of those
        shapes = [a.shape if type(a) is np.ndarray else None for a in arrays]
        dtypes = [a.dtype if type(a) is np.ndarray else None for a in arrays]
    # one number per array for its (shape, dtype, context), without a tuple per array
    key = _ids(shapes)
    for column in (dtypes, table.contexts):
        ids = _ids(column)
        key = key * (int(ids.max()) + 1) + ids
    _, first, which = np.unique(key, return_index=True, return_inverse=True)
    labels = table.names or range(len(arrays))
    layouts = [_layout(arrays[i], table.contexts[i], magic, np_shape, labels[i]) for i in first.tolist()]
    heads = np.empty(len(layouts), object)
    heads[:] = [layout.head for layout in layouts]
    alone = np.array([layout.alone for layout in layouts])[which]
    block = max([layout.size for layout in layouts if not layout.alone], default=1)
    return heads[which].tolist(), np.flatnonzero(alone).tolist(), max(1, _RUN_BYTES // max(block, 1))


def _joined(heads: list[bytes], arrays: list[np.ndarray]) -> bytes:
    """Each array's header then its memory, as one bytes object."""
    parts: list[Any] = [None] * (2 * len(arrays))
    parts[0::2] = heads
    parts[1::2] = arrays
    try:
        return b"".join(parts)
    except TypeError:  # an array that is not C-contiguous (a view) exports no buffer: copy those
        parts[1::2] = [a if a.flags.c_contiguous else np.ascontiguousarray(a) for a in arrays]
        return b"".join(parts)


def _little_endian(arr: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))


def _write_alone(write: Callable[[Any], Any], magic: int, np_shape: bool, head: bytes | None, arr: Any,
                 ctx: Context) -> None:
    if arr is None:
        write(struct.pack("<Iii", magic, 0, -1 if np_shape else 0))
    elif isinstance(arr, SparseValue):
        _write_sparse(write, magic, arr, *ctx)
    else:
        write(head)
        if arr.size:
            write(memoryview(_little_endian(arr).reshape(-1).view(np.uint8)))


def _write_arrays(write: Callable[[Any], Any], table: ArrayTable, magic: int, np_shape: bool,
                  layouts: tuple[list, list[int], int]) -> None:
    heads, alone, block = layouts
    arrays, count = table.arrays, len(table.arrays)
    start = 0
    for stop in [*alone, count]:
        for at in range(start, stop, block):
            end = min(at + block, stop)
            write(_joined(heads[at:end], arrays[at:end]))
        if stop < count:
            _write_alone(write, magic, np_shape, heads[stop], arrays[stop], table.contexts[stop])
        start = stop + 1


def _names_bytes(names: list[str]) -> bytes:
    encoded = list(map(str.encode, names))  # UTF-8
    parts: list[bytes] = [b""] * (2 * len(encoded))
    parts[0::2] = map(_U64.pack, map(len, encoded))
    parts[1::2] = encoded
    return _U64.pack(len(names)) + b"".join(parts)


def _write_all(write: Callable[[Any], Any], table: ArrayTable, np_shape: bool) -> None:
    magic = V3_MAGIC if np_shape else V2_MAGIC
    layouts = _layouts(table, magic, np_shape)  # refuses bad dtypes and shapes before anything is written
    write(struct.pack("<QQQ", LIST_MAGIC, 0, len(table.arrays)))
    _write_arrays(write, table, magic, np_shape, layouts)
    write(_names_bytes(table.names))


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
    """The bytes ``mx.nd.save`` writes for ``data`` (a list, a dict name -> array, or an ArrayTable).

    ``np_shape=True`` writes V3 arrays, as MXNet does under ``mx.npx.set_np()``; such files
    hold 0-d arrays but MXNet then loads them only under numpy semantics.
    """
    table = _normalise(data, np_shape)
    parts: list[Any] = []
    _write_all(parts.append, table, np_shape)
    return b"".join(parts)


def save_arrays(target: str | os.PathLike[str] | IO[bytes], data: SaveData, *, np_shape: bool = False) -> None:
    """Write ``data`` to a path (atomically: temp file in the same folder, then os.replace) or a binary file."""
    table = _normalise(data, np_shape)
    if hasattr(target, "write"):
        _write_all(target.write, table, np_shape)  # type: ignore[union-attr]
        return
    with AtomicFile(target, "wb") as f:
        _write_all(f.write, table, np_shape)
