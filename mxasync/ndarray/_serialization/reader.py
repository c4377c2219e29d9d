"""Reading the format from bytes or as a stream: every length checked before anything is allocated,
errors naming the byte offset, large arrays read straight into the array they load into."""

from __future__ import annotations

import io
import os
import stat
import struct
import sys
from collections.abc import Callable
from typing import IO, NamedTuple

import numpy as np

from mxasync.base import MXAsyncError, os_error
from mxasync.operator.sparse.formats import SparseValue

from .format import (
    CPU,
    DEV_TYPES,
    LIST_MAGIC,
    MAX_LEGACY_NDIM,
    STORAGE_TYPES,
    TYPE_FLAGS,
    V1_MAGIC,
    V2_MAGIC,
    V3_MAGIC,
    ArrayRecord,
    Loaded,
)

Alloc = Callable[[tuple[int, ...], np.dtype], np.ndarray]


class AllocRows(NamedTuple):
    """How a loader gives a run of small arrays of one shape one allocation: ``alloc(count, shape, dtype)``
    returns an array of ``count`` rows of that shape to fill and the arrays the rows load as; a block
    holds at most ``max_bytes``."""

    alloc: Callable[[int, tuple[int, ...], np.dtype], tuple[np.ndarray, list]]
    max_bytes: int


_MAX_BYTES = 2**63 - 1
_CHUNK = 1 << 20
_WINDOW = 1 << 20  # a stream's read-ahead: small arrays and headers are parsed out of it
_SMALL = 1 << 16  # arrays up to this many bytes are copied out of the window; bigger ones are read into place


def np_alloc(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return np.empty(shape, dtype)


def _truncated(n: int, what: str, pos: int, left: int) -> MXAsyncError:
    return MXAsyncError(f"truncated NDArray file: expected {n} bytes for {what} at byte offset {pos}, "
                        f"but only {left} remain")


class Reader:
    """Bounds-checked little-endian reads from a buffer, with offsets in the error messages."""

    def __init__(self, buf: bytes | bytearray | memoryview) -> None:
        self.buf = memoryview(buf).cast("B")
        self.pos = 0

    def remaining(self) -> int | None:
        return len(self.buf) - self.pos

    def window(self, n: int):
        """``(buffer, offset)`` with ``n`` bytes ahead, or None (see :func:`_fast_array`)."""
        return (self.buf, self.pos) if len(self.buf) - self.pos >= n else None

    def skip(self, n: int) -> None:
        self.pos += n

    def take(self, n: int, what: str) -> memoryview:
        left = len(self.buf) - self.pos
        if n > left:
            raise _truncated(n, what, self.pos, left)
        out = self.buf[self.pos : self.pos + n]
        self.pos += n
        return out

    def read_data(self, shape: tuple[int, ...], count: int, dtype: np.dtype, what: str, alloc: Alloc) -> np.ndarray:
        raw = self.take(count * dtype.itemsize, what)
        out = alloc(shape, dtype)
        out.reshape(-1)[...] = np.frombuffer(raw, dtype=dtype.newbyteorder("<"), count=count)
        return out

    def unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack("<" + fmt, self.take(struct.calcsize("<" + fmt), what))

    def one(self, fmt: str, what: str) -> int:
        return self.unpack(fmt, what)[0]

    def corrupt(self, msg: str, at: int) -> MXAsyncError:
        return MXAsyncError(f"corrupt NDArray file: {msg} at byte offset {at}")


class StreamReader(Reader):
    """The same reads from a file, through a read-ahead window of at most :data:`_WINDOW` bytes: the
    header of an array is checked before its data is read, a large array's data goes straight into
    the array ``alloc`` returns (never through the window), and on a regular file every length is
    checked against the bytes left before anything is allocated.  Small arrays come out of the
    window: a file of a million one-element arrays costs no read call per array."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.pos = 0  # bytes consumed (the window holds what was read ahead of it)
        self.buf: bytes = b""
        self.off = 0
        self.size: int | None = None
        try:
            st = os.fstat(f.fileno())
            if stat.S_ISREG(st.st_mode):
                self.size = st.st_size - f.tell()
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            pass  # a pipe, a device or a file-like object: lengths are checked as bytes arrive

    def remaining(self) -> int | None:
        return None if self.size is None else self.size - self.pos

    def window(self, n: int) -> tuple[bytes, int] | None:
        """``(buffer, offset)`` with ``n`` (at most a window's) bytes ahead, or None when the file ends first."""
        avail = len(self.buf) - self.off
        if avail < n:
            if n > _WINDOW:
                return None
            self.buf = self.buf[self.off:] + self.f.read(_WINDOW - avail)
            self.off = 0
            if len(self.buf) < n:
                return None
        return self.buf, self.off

    def skip(self, n: int) -> None:
        """Consume ``n`` bytes that :meth:`window` showed."""
        self.off += n
        self.pos += n

    def take(self, n: int, what: str) -> memoryview:
        left = self.remaining()
        if left is not None and n > left:
            raise _truncated(n, what, self.pos, left)
        if n <= _WINDOW and self.window(n) is not None:
            out = memoryview(self.buf)[self.off:self.off + n]
            self.skip(n)
            return out
        parts = [self.buf[self.off:]]
        need = n - len(parts[0])
        self.buf, self.off = b"", 0
        while need:  # in bounded chunks: a huge claimed length costs only the bytes really there
            chunk = self.f.read(min(need, _CHUNK))
            if not chunk:
                raise _truncated(n, what, self.pos, n - need)
            parts.append(chunk)
            need -= len(chunk)
        self.pos += n
        return memoryview(b"".join(parts))

    def read_data(self, shape: tuple[int, ...], count: int, dtype: np.dtype, what: str, alloc: Alloc) -> np.ndarray:
        nbytes = count * dtype.itemsize
        if self.size is None or nbytes <= _SMALL:
            return super().read_data(shape, count, dtype, what, alloc)
        left = self.size - self.pos
        if nbytes > left:
            raise _truncated(nbytes, what, self.pos, left)
        out = alloc(shape, dtype)
        view = memoryview(out.reshape(-1)).cast("B")
        done = min(len(self.buf) - self.off, nbytes)  # what the window already holds
        view[:done] = memoryview(self.buf)[self.off:self.off + done]
        self.buf, self.off = self.buf[self.off + done:], 0
        while done < nbytes:
            got = self.f.readinto(view[done:])
            if not got:
                raise _truncated(nbytes, what, self.pos, done)
            done += got
        self.pos += nbytes
        if sys.byteorder == "big" and dtype.itemsize > 1:
            out.byteswap(inplace=True)
        return out


_LEN = struct.Struct("<Q")
_V2_HEAD = struct.Struct("<Iii")  # magic, storage type, ndim
_BODY = struct.Struct("<iii")  # device type, device id, type flag
_DIMS = [struct.Struct(f"<{n}q") for n in range(9)]
_LE_TYPES = {flag: dt.newbyteorder("<") for flag, dt in TYPE_FLAGS.items()}


def _fast_header(r: Reader):
    """The header of a dense V2 array of at most 8 dimensions whose header and data sit in the reader's
    window: ``(buf, off, head, shape, dtype, nbytes, context)``, or None (nothing consumed) for
    anything else, which the full reader then takes with its checks and messages."""
    got = r.window(12)
    if got is None:
        return None
    buf, off = got
    magic, stype, ndim = _V2_HEAD.unpack_from(buf, off)
    if magic != V2_MAGIC or stype != 0 or not 0 < ndim <= 8:
        return None
    head = 24 + 8 * ndim
    if len(buf) - off < head:
        got = r.window(head)
        if got is None:
            return None
        buf, off = got
    shape = _DIMS[ndim].unpack_from(buf, off + 12)
    dev_type, dev_id, flag = _BODY.unpack_from(buf, off + 12 + 8 * ndim)
    dtype = _LE_TYPES.get(flag)
    if dtype is None or dev_type not in DEV_TYPES or min(shape) < 0:
        return None
    count, extent = 1, dtype.itemsize
    for d in shape:
        count *= d
        extent *= d or 1
    nbytes = count * dtype.itemsize
    if nbytes > _SMALL or extent > _MAX_BYTES:  # big data is read in place; a shape numpy cannot hold, refused
        return None
    if len(buf) - off < head + nbytes:
        got = r.window(head + nbytes)
        if got is None:
            return None
        buf, off = got
    return buf, off, head, shape, dtype, nbytes, (dev_type, dev_id)


def _fast_array(r: Reader, alloc: Alloc) -> ArrayRecord | None:
    """One array of :func:`_fast_header`'s kind, read with no intermediate call per field."""
    found = _fast_header(r)
    if found is None:
        return None
    buf, off, head, shape, dtype, nbytes, context = found
    out = alloc(shape, dtype)
    out.reshape(-1)[...] = np.frombuffer(buf, dtype, nbytes // dtype.itemsize, off + head)
    r.skip(head + nbytes)
    return ArrayRecord(out, context)


def _fast_run(r: Reader, alloc_rows: AllocRows, limit: int) -> list[ArrayRecord] | None:
    """Up to ``limit`` arrays of :func:`_fast_header`'s kind in a row whose headers are the same bytes
    (one shape, dtype and context: a file of many small parameters), read as one block into
    ``alloc_rows``'s rows; None (nothing consumed) when there is no such run."""
    found = _fast_header(r)
    if found is None:
        return None
    buf, off, head, shape, dtype, nbytes, context = found
    size = head + nbytes
    limit = min(limit, alloc_rows.max_bytes // max(nbytes, 1))
    if limit < 2:
        return None
    # as many of them as the window can hold (a file ending sooner: what the first one already showed)
    buf, off = r.window(min(limit, _WINDOW // size) * size) or r.window(size)
    limit = min(limit, (len(buf) - off) // size)
    if limit < 2:
        return None
    block = np.frombuffer(buf, np.uint8, limit * size, off).reshape(limit, size)
    same = (block[:, :head] == block[0, :head]).all(axis=1)
    n = limit if same.all() else int(same.argmin())
    if n < 2:
        return None
    data, rows = alloc_rows.alloc(n, shape, dtype)
    data.reshape(n, -1)[...] = block[:n, head:].view(dtype)
    r.skip(n * size)
    return [ArrayRecord(row, context) for row in rows]


def _read_dims(r: Reader, ndim: int, fmt: str, what: str) -> tuple[int, ...]:
    at = r.pos
    dims = r.unpack(f"{ndim}{fmt}", what) if ndim else ()
    if any(d < 0 for d in dims):
        raise r.corrupt(f"negative dimension in shape {dims} of {what}", at)
    return tuple(dims)


def _read_body(r: Reader, shape: tuple[int, ...], what: str, alloc: Alloc) -> ArrayRecord:
    at = r.pos
    dev_type, dev_id, flag = r.unpack("iii", f"context and type flag of {what}")
    if dev_type not in DEV_TYPES:
        raise r.corrupt(f"unknown device type {dev_type} for {what} (known: {DEV_TYPES})", at)
    if flag not in TYPE_FLAGS:
        raise r.corrupt(f"unknown type flag {flag} for {what}", at + 8)
    dtype = TYPE_FLAGS[flag]
    count, extent = 1, dtype.itemsize
    for d in shape:
        count *= d
        extent *= max(d, 1)
    if extent > _MAX_BYTES:  # numpy cannot even describe it, whatever a zero dimension makes the size
        raise r.corrupt(f"shape {shape} of {what} is too large for any array ({dtype})", at - 8 * len(shape))
    arr = r.read_data(shape, count, dtype, f"data of {what} ({dtype}, shape {shape})", alloc)
    return ArrayRecord(arr, (dev_type, dev_id))


def _read_shape(r: Reader, what: str) -> tuple[int, ...]:
    ndim = r.one("i", f"ndim of {what}")
    if not 0 <= ndim <= MAX_LEGACY_NDIM:
        raise r.corrupt(f"bad ndim {ndim} for {what}", r.pos - 4)
    return _read_dims(r, ndim, "q", what)


def _read_sparse(r: Reader, stype: str, what: str) -> ArrayRecord:
    """A csr / row_sparse array (after its storage type): a SparseValue of numpy arrays."""
    sshape = _read_shape(r, f"storage shape of {what}")
    shape = _read_shape(r, f"shape of {what}")
    at = r.pos
    dev_type, dev_id, flag = r.unpack("iii", f"context and type flag of {what}")
    if dev_type not in DEV_TYPES or flag not in TYPE_FLAGS:
        raise r.corrupt(f"bad context or type flag ({dev_type}, {flag}) for {what}", at)
    aux = []
    for k in range(2 if stype == "csr" else 1):
        aflag = r.one("i", f"aux {k} type of {what}")
        if aflag not in TYPE_FLAGS:
            raise r.corrupt(f"bad aux type flag {aflag} for {what}", r.pos - 4)
        aux.append((TYPE_FLAGS[aflag], _read_shape(r, f"aux {k} shape of {what}")))
    dtype = TYPE_FLAGS[flag]

    def read(shp, dt, label):
        n = 1
        for d in shp:
            n *= d
        return r.read_data(shp, n, dt, f"{label} of {what}", np_alloc)

    data = read(sshape, dtype, "data")
    arrays = [read(s, dt, f"aux {k}") for k, (dt, s) in enumerate(aux)]
    if stype == "csr":
        value = SparseValue("csr", shape, data, arrays[1].astype(np.int64, copy=False),
                            arrays[0].astype(np.int64, copy=False))
    else:
        value = SparseValue("row_sparse", shape, data, arrays[0].astype(np.int64, copy=False))
    return ArrayRecord(value, (dev_type, dev_id))


def read_array(r: Reader, index: int, alloc: Alloc) -> ArrayRecord:
    what = f"array {index}"
    at = r.pos
    magic = r.one("I", f"magic of {what}")
    if magic in (V2_MAGIC, V3_MAGIC):
        stype = r.one("i", f"storage type of {what}")
        if stype != 0:
            name = STORAGE_TYPES.get(stype)
            if name not in ("row_sparse", "csr"):
                raise r.corrupt(f"unknown storage type {stype} for {what} at byte offset {at}", r.pos - 4)
            return _read_sparse(r, name, what)
        ndim = r.one("i", f"ndim of {what}")
        if magic == V2_MAGIC and ndim == 0 or magic == V3_MAGIC and ndim == -1:
            return ArrayRecord(None, CPU)  # a "none" array: MXNet stores nothing more
        if not 0 <= ndim <= MAX_LEGACY_NDIM:
            raise r.corrupt(f"bad ndim {ndim} for {what}", r.pos - 4)
        return _read_body(r, _read_dims(r, ndim, "q", f"shape of {what}"), what, alloc)
    if magic == V1_MAGIC:
        ndim = r.one("I", f"ndim of {what}")
        if ndim > MAX_LEGACY_NDIM:
            raise r.corrupt(f"bad ndim {ndim} for {what}", r.pos - 4)
        return _read_body(r, _read_dims(r, ndim, "q", f"shape of {what}"), what, alloc)
    if magic > MAX_LEGACY_NDIM:
        raise r.corrupt(
            f"bad magic 0x{magic:08X} for {what} (expected 0x{V2_MAGIC:08X}, 0x{V3_MAGIC:08X}, "
            f"0x{V1_MAGIC:08X} or a legacy ndim <= {MAX_LEGACY_NDIM})",
            at,
        )
    # Pre-V1 layout: the word just read was ndim; dims are uint32.
    return _read_body(r, _read_dims(r, magic, "I", f"shape of {what}"), what, alloc)


def loads_arrays(buffer: bytes | bytearray | memoryview, alloc: Alloc = np_alloc, *,
                 np_shape: bool | None = None) -> Loaded:
    """Parse the bytes of an ``mx.nd.save`` file: a list of :class:`ArrayRecord`, or a dict when named.

    ``alloc(shape, dtype)`` gives the writable C-contiguous array each array's data goes into.
    ``np_shape`` (True or False) refuses arrays saved in the other shape semantics, as MXNet's
    loader does in (or out of) NumPy-shape mode; None reads every kind.
    """
    return _parse(Reader(buffer), alloc, np_shape)


def _check_semantics(r: Reader, index: int, np_shape: bool) -> None:
    """MXNet's rule: a V3 array (saved in NumPy-shape mode) loads only in that mode, any other only out of it."""
    got = r.window(4)
    if got is None:
        return  # too short to hold a magic: the reader reports the truncation
    saved_np = struct.unpack_from("<I", *got)[0] == V3_MAGIC
    if saved_np and not np_shape:
        raise MXAsyncError(f"array {index} was saved in np shape semantics, must be loaded in the same semantics. "
                           "Please turn on np shape semantics in Python using `with np_shape(True)` or decorator "
                           "`use_np_shape` to scope the code of loading the ndarray.")
    if np_shape and not saved_np:
        raise MXAsyncError(f"array {index} was not saved in np shape semantics, but being loaded in np shape "
                           "semantics. Please turn off np shape semantics in Python using `with np_shape(False)` "
                           "to scope the code of loading the ndarray.")


def _parse(r: Reader, alloc: Alloc, np_shape: bool | None = None,
           alloc_rows: AllocRows | None = None) -> Loaded:
    magic, _reserved = r.unpack("QQ", "file header")
    if magic != LIST_MAGIC:
        raise r.corrupt(f"file magic is 0x{magic:X}, expected 0x{LIST_MAGIC:X} (not an MXNet NDArray file)", 0)
    count = r.one("Q", "array count")
    left = r.remaining()
    if left is not None and count > left // 4:  # every array takes at least 4 bytes; refuse before allocating
        raise MXAsyncError(
            f"truncated NDArray file: expected at least {4 * count} bytes for the {count} arrays "
            f"the array count announces at byte offset {r.pos}, but only {left} remain"
        )
    records: list[ArrayRecord] = []
    while len(records) < count:
        i = len(records)
        if np_shape is not None:
            _check_semantics(r, i, np_shape)  # a run's arrays share the first one's magic
        run = _fast_run(r, alloc_rows, count - i) if alloc_rows is not None else None
        if run is not None:
            records.extend(run)
            continue
        rec = _fast_array(r, alloc)
        records.append(rec if rec is not None else read_array(r, i, alloc))
    at = r.pos
    nnames = r.one("Q", "name count")
    if nnames not in (0, count):
        raise r.corrupt(f"{nnames} names for {count} arrays", at)
    if nnames == 0:
        return records
    out: dict[str, ArrayRecord] = {}
    for i, rec in enumerate(records):
        got = r.window(8)
        if got is not None:  # the common case, straight out of the window
            size = _LEN.unpack_from(*got)[0]
            got = r.window(8 + size) if size <= _SMALL else None
            if got is not None:
                buf, off = got
                try:
                    out[str(buf[off + 8:off + 8 + size], "utf-8")] = rec
                    r.skip(8 + size)
                    continue
                except UnicodeDecodeError:
                    pass  # the full reader names it
        at = r.pos
        size = r.one("Q", f"length of name {i}")
        raw = r.take(size, f"name {i}")
        try:
            name = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise r.corrupt(f"name {i} is not valid utf-8", at) from None
        out[name] = rec  # a repeated name keeps the last array, as mx.nd.load does
    return out


def load_arrays(source: str | os.PathLike[str] | IO[bytes], alloc: Alloc = np_alloc, *,
                np_shape: bool | None = None, alloc_rows: AllocRows | None = None) -> Loaded:
    """Read an ``mx.nd.save`` / ``.params`` file from a path or a binary file object, as a stream.

    The file is never read whole: each length is checked against what is left before
    anything is allocated, and each array's data is read straight into ``alloc(shape, dtype)``,
    so the peak memory stays near the data's size.  ``np_shape``: as in :func:`loads_arrays`.
    ``alloc_rows`` (see :data:`AllocRows`) may give runs of small arrays of one shape one block.
    """
    if hasattr(source, "read"):
        return _parse(StreamReader(source), alloc, np_shape, alloc_rows)  # type: ignore[arg-type]
    try:
        f = open(os.fspath(source), "rb")  # noqa: SIM115 -- closed below
    except OSError as e:
        raise os_error(e, f"cannot read NDArray file {os.fspath(source)}: {e.strerror or e}", os.fspath(source)) from e
    with f:
        return _parse(StreamReader(f), alloc, np_shape, alloc_rows)
