"""RecordIO: the binary record file format of MXNet (dmlc-core), byte for byte.

A ``.rec`` file is a sequence of records. Each record is written as one or
more *parts*; a part is two little-endian ``uint32`` words and a payload::

    0xced7230a  (cflag << 29) | length  payload... zero padding to 4 bytes

``cflag`` is 0 for a whole record; a payload that contains the magic word at a
4-byte aligned position is split there (the magic itself is dropped) into
parts flagged 1 (first), 2 (middle) and 3 (last), and the reader puts the
magic back between them. Files written here load in MXNet 1.9 and the other
way round. A ``.idx`` file is text, one ``key<TAB>byte offset`` line per record.

On top of the raw records MXNet stores an image-record header (``IRHeader``:
flag, label, id, id2 as ``uint32, float32, uint64, uint64``) followed by
``flag`` extra float32 labels when the label is a vector.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "a.rec")
>>> with MXRecordIO(path, "w") as w:
...     w.write(b"hello"); w.write(pack(IRHeader(0, 3.0, 7, 0), b"payload"))
>>> r = MXRecordIO(path, "r")
>>> r.read()
b'hello'
>>> unpack(r.read())
(HEADER(flag=0, label=3.0, id=7, id2=0), b'payload')
>>> r.read() is None
True
>>> r.close()

Differences from MXNet on purpose: errors are ``MXAsyncError`` naming the file
and byte offset; an *open writer* cannot be pickled (unpickling would reopen it
with ``'w'`` and truncate the file); a writer in a forked child raises instead
of corrupting the parent's file.
"""

from __future__ import annotations

import numbers
import os
import struct
import threading
from collections import namedtuple
from collections.abc import Callable
from typing import Any

import numpy as np

from ..base import MXAsyncError

__all__ = [
    "MAGIC", "MXRecordIO", "MXIndexedRecordIO", "RecordReader", "IRHeader",
    "pack", "unpack", "pack_img", "unpack_img", "encode_record",
]

MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", MAGIC)
_HEAD = struct.Struct("<II")
_MAX_LEN = (1 << 29) - 1
_FLUSH_AT = 1 << 20

IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """Image-record header: ``flag`` (0 or the label count), ``label``, ``id``, ``id2``."""
_IR = struct.Struct("<IfQQ")


def encode_record(payload: bytes) -> bytes:
    """The exact bytes RecordIO stores for one record (parts, headers, padding).

    >>> encode_record(b"abc").hex()
    '0a23d7ce0300000061626300'
    """
    n = len(payload)
    if n > _MAX_LEN:
        raise MXAsyncError(f"RecordIO records must be shorter than 2**29 bytes, got {n}")
    out: list[bytes] = []
    start = 0
    lower = n & ~3
    pos = payload.find(_MAGIC_BYTES)
    while 0 <= pos < lower:
        if pos % 4:
            pos = payload.find(_MAGIC_BYTES, pos + 1)
            continue
        out.append(_HEAD.pack(MAGIC, ((1 if start == 0 else 2) << 29) | (pos - start)))
        out.append(payload[start:pos])
        start = pos + 4
        pos = payload.find(_MAGIC_BYTES, start)
    out.append(_HEAD.pack(MAGIC, ((3 if start else 0) << 29) | (n - start)))
    out.append(payload[start:])
    out.append(b"\0" * (-n % 4))
    return b"".join(out)


def _decode_record(read: Callable[[int, int], bytes], offset: int, uri: str) -> tuple[bytes | None, int]:
    """Decode the record at ``offset``: ``(payload, next offset)``, or ``(None, offset)`` at end of file.

    ``read(pos, n)`` returns up to ``n`` bytes of the file at ``pos``.
    """
    chunks: list[bytes] = []
    pos = offset
    while True:
        head = read(pos, 8)
        if not head:
            if chunks:
                raise MXAsyncError(f"{uri}: truncated RecordIO file: the record at byte offset {offset} "
                                   f"ends at byte offset {pos} without its last part")
            return None, pos
        if len(head) < 8:
            raise MXAsyncError(f"{uri}: truncated RecordIO file: {len(head)} of 8 header bytes at byte offset {pos}")
        magic, lrec = _HEAD.unpack(head)
        if magic != MAGIC:
            raise MXAsyncError(f"{uri}: corrupt RecordIO file: magic 0x{magic:08x} at byte offset {pos} "
                               f"(expected 0x{MAGIC:08x}): not a record boundary or not a RecordIO file")
        cflag, length = lrec >> 29, lrec & _MAX_LEN
        if cflag > 3 or (cflag in (2, 3)) != bool(chunks):
            where = "continues a record" if cflag in (2, 3) else "starts a record"
            raise MXAsyncError(f"{uri}: corrupt RecordIO file: part flag {cflag} at byte offset {pos} "
                               f"{where} in the wrong place")
        padded = (length + 3) & ~3
        data = read(pos + 8, padded)
        if len(data) < padded:
            raise MXAsyncError(f"{uri}: truncated RecordIO file: the record part at byte offset {pos} needs "
                               f"{padded} payload bytes but only {len(data)} remain")
        chunks.append(data if padded == length else data[:length])
        pos += 8 + padded
        if cflag in (0, 3):
            break
        chunks.append(_MAGIC_BYTES)
    return (chunks[0] if len(chunks) == 1 else b"".join(chunks)), pos


class _OwnedWriter:
    """A binary writer with its own buffer that only the creating process flushes.

    A forked child inherits the buffer; flushing it there would write the same
    bytes twice, so a child only closes its copy of the descriptor.
    """

    def __init__(self, path: str) -> None:
        self.raw = open(path, "wb", buffering=0)  # noqa: SIM115 -- closed by close()
        self.buf = bytearray()
        self.pid = os.getpid()

    def write(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) >= _FLUSH_AT:
            self.flush()

    def flush(self) -> None:
        if os.getpid() != self.pid:
            return
        done = 0
        with memoryview(self.buf) as view:
            while done < len(view):
                done += self.raw.write(view[done:])
        self.buf.clear()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            self.raw.close()


class MXRecordIO:
    """Sequential reader (``flag='r'``) or writer (``flag='w'``) of a RecordIO file.

    Safe across ``fork`` and pickling: a reader used in another process than
    the one that opened it re-opens the file and starts from the beginning
    (MXNet's ``_check_pid``); a writer there raises ``MXAsyncError``.
    """

    def __init__(self, uri: str | os.PathLike[str], flag: str) -> None:
        if flag not in ("r", "w"):
            raise ValueError(f"MXRecordIO flag must be 'r' or 'w', got {flag!r}")
        self.uri = os.fspath(uri)
        self.flag = flag
        self.pid: int | None = None
        self.is_open = False
        self._fh: Any = None
        self._pos = 0
        self.open()

    @property
    def writable(self) -> bool:
        return self.flag == "w"

    def open(self) -> None:
        """Open the file (truncating it in write mode)."""
        try:
            self._fh = _OwnedWriter(self.uri) if self.writable else open(self.uri, "rb")  # noqa: SIM115
        except OSError as e:
            mode = "writing" if self.writable else "reading"
            raise MXAsyncError(f"cannot open RecordIO file {self.uri!r} for {mode}: {e.strerror}") from e
        self._pos = 0
        self.pid = os.getpid()
        self.is_open = True

    def close(self) -> None:
        """Flush (writers) and close; closing twice is fine."""
        if not self.is_open:
            return
        self.is_open = False
        fh, self._fh = self._fh, None
        fh.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 -- never raise from a finalizer
            pass

    def __enter__(self) -> MXRecordIO:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        if self.writable and self.is_open:
            raise MXAsyncError(f"cannot pickle an open RecordIO writer for {self.uri!r}: re-opening it would "
                               "truncate the file; close it first")
        state = dict(self.__dict__)
        state["_fh"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        was_open, self.is_open = self.is_open, False
        if was_open:
            self.open()

    def reset(self) -> None:
        """Close and re-open: a reader starts again at the first record (a writer truncates)."""
        self.close()
        self.open()

    def _check_pid(self, allow_reset: bool) -> None:
        if self.pid == os.getpid():
            return
        if not allow_reset:
            raise MXAsyncError(f"RecordIO writer for {self.uri!r} was opened in process {self.pid} and cannot be "
                               f"used in process {os.getpid()}")
        self.is_open = False  # drop the inherited handle without touching the shared offset
        self._fh = None
        self.open()

    def _require(self, writable: bool, what: str) -> None:
        if not self.is_open:
            raise MXAsyncError(f"RecordIO file {self.uri!r} is closed; cannot {what}")
        if writable != self.writable:
            raise MXAsyncError(f"RecordIO file {self.uri!r} was opened with flag {self.flag!r}; cannot {what}")

    def write(self, buf: bytes) -> None:
        """Append one record."""
        self._require(True, "write")
        self._check_pid(allow_reset=False)
        data = encode_record(bytes(buf))
        self._fh.write(data)
        self._pos += len(data)

    def _read_seq(self, pos: int, n: int) -> bytes:
        return self._fh.read(n)

    def read(self) -> bytes | None:
        """The next record's bytes, or ``None`` at the end of the file."""
        self._require(False, "read")
        self._check_pid(allow_reset=True)
        start = self._pos
        try:
            payload, self._pos = _decode_record(self._read_seq, start, self.uri)
        except MXAsyncError:
            self._fh.seek(start)
            raise
        return payload

    def tell(self) -> int:
        """Byte offset of the next record to be read or written."""
        if not self.is_open:
            raise MXAsyncError(f"RecordIO file {self.uri!r} is closed; cannot tell")
        return self._pos

    def _seek(self, pos: int) -> None:
        self._require(False, "seek")
        self._check_pid(allow_reset=True)
        self._fh.seek(pos)
        self._pos = pos

    def __repr__(self) -> str:
        state = "open" if self.is_open else "closed"
        return f"{type(self).__name__}({self.uri!r}, {self.flag!r}) [{state}]"


class MXIndexedRecordIO(MXRecordIO):
    """RecordIO with a ``.idx`` file for random access by key.

    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> w = MXIndexedRecordIO(os.path.join(d, "a.idx"), os.path.join(d, "a.rec"), "w")
    >>> for i in range(3):
    ...     w.write_idx(i, b"record %d" % i)
    >>> w.close()
    >>> r = MXIndexedRecordIO(os.path.join(d, "a.idx"), os.path.join(d, "a.rec"), "r")
    >>> r.keys, r.read_idx(2)
    ([0, 1, 2], b'record 2')
    >>> r.close()
    """

    def __init__(self, idx_path: str | os.PathLike[str], uri: str | os.PathLike[str], flag: str,
                 key_type: Callable[[str], Any] = int) -> None:
        self.idx_path = os.fspath(idx_path)
        self.key_type = key_type
        self.idx: dict[Any, int] = {}
        self.keys: list[Any] = []
        self._fidx: _OwnedWriter | None = None
        super().__init__(uri, flag)

    def open(self) -> None:
        super().open()
        self.idx, self.keys = {}, []
        if self.writable:
            self._fidx = _OwnedWriter(self.idx_path)
            return
        try:
            with open(self.idx_path, encoding="utf-8") as f:
                lines = f.readlines()
        except OSError as e:
            super().close()
            raise MXAsyncError(f"cannot read RecordIO index {self.idx_path!r}: {e.strerror}") from e
        for lineno, line in enumerate(lines, 1):
            fields = line.strip().split("\t")
            if fields == [""]:
                continue
            try:
                key, pos = self.key_type(fields[0]), int(fields[1])
            except (IndexError, ValueError) as e:
                super().close()
                raise MXAsyncError(f"{self.idx_path}:{lineno}: bad index line {line.rstrip()!r}: "
                                   "expected 'key<TAB>byte offset'") from e
            self.idx[key] = pos
            self.keys.append(key)

    def close(self) -> None:
        if not self.is_open:
            return
        try:
            super().close()
        finally:
            fidx, self._fidx = self._fidx, None
            if fidx is not None:
                fidx.close()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state["_fidx"] = None
        return state

    def seek(self, idx: Any) -> None:
        """Position the reader at the record with key ``idx``."""
        try:
            pos = self.idx[idx]
        except KeyError:
            raise KeyError(f"{idx!r} is not a key of the RecordIO index {self.idx_path!r}") from None
        self._seek(pos)

    def read_idx(self, idx: Any) -> bytes:
        """The record with key ``idx``."""
        self.seek(idx)
        payload = self.read()
        if payload is None:
            raise MXAsyncError(f"{self.uri}: index {self.idx_path!r} points key {idx!r} at byte offset "
                               f"{self.idx[idx]}, past the last record")
        return payload

    def write_idx(self, idx: Any, buf: bytes) -> None:
        """Append a record and its ``key<TAB>offset`` index line."""
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        assert self._fidx is not None
        self._fidx.write(f"{key}\t{pos}\n".encode())
        self.idx[key] = pos
        self.keys.append(key)


class RecordReader:
    """Thread-safe random access to a RecordIO file (``os.pread``), for pipelines.

    Unlike ``MXRecordIO`` it has no current position, so worker threads can
    share one reader. It re-opens itself after a ``fork``.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "b.rec")
    >>> with MXRecordIO(path, "w") as w:
    ...     for n in (1, 5, 9):
    ...         w.write(b"x" * n)
    >>> with RecordReader(path) as r:
    ...     offsets = r.offsets()
    ...     print(offsets, r.read_at(offsets[1]))
    [0, 12, 28] b'xxxxx'
    """

    def __init__(self, uri: str | os.PathLike[str]) -> None:
        self.uri = os.fspath(uri)
        self._fd = -1
        self._pid = -1
        self._lock = threading.Lock()
        self._open()

    def _open(self) -> None:
        try:
            self._fd = os.open(self.uri, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except OSError as e:
            raise MXAsyncError(f"cannot open RecordIO file {self.uri!r} for reading: {e.strerror}") from e
        self._pid = os.getpid()

    def _read(self, pos: int, n: int) -> bytes:
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    self._open()
        if self._fd < 0:
            raise MXAsyncError(f"RecordReader for {self.uri!r} is closed")
        if hasattr(os, "pread"):
            data = os.pread(self._fd, n, pos)
            while 0 < len(data) < n:  # short reads only happen at EOF on regular files; be safe
                more = os.pread(self._fd, n - len(data), pos + len(data))
                if not more:
                    break
                data += more
            return data
        with self._lock:  # pragma: no cover -- platforms without pread
            os.lseek(self._fd, pos, os.SEEK_SET)
            return os.read(self._fd, n)

    def read_at(self, offset: int) -> bytes:
        """The record that starts at byte ``offset``."""
        payload, _ = _decode_record(self._read, offset, self.uri)
        if payload is None:
            raise MXAsyncError(f"{self.uri}: no record at byte offset {offset}: it is the end of the file")
        return payload

    def offsets(self) -> list[int]:
        """Byte offsets of every record, found by walking the part headers (payloads are skipped)."""
        size = os.fstat(self._fd).st_size
        found: list[int] = []
        pos, start, in_record = 0, 0, False
        while pos < size:
            head = self._read(pos, 8)
            if len(head) < 8:
                raise MXAsyncError(f"{self.uri}: truncated RecordIO file: {len(head)} of 8 header bytes "
                                   f"at byte offset {pos}")
            magic, lrec = _HEAD.unpack(head)
            cflag, length = lrec >> 29, lrec & _MAX_LEN
            if magic != MAGIC or cflag > 3 or (cflag in (2, 3)) != in_record:
                _decode_record(self._read, start if in_record else pos, self.uri)  # raises the precise error
                raise MXAsyncError(f"{self.uri}: corrupt RecordIO file at byte offset {pos}")  # pragma: no cover
            if not in_record:
                start = pos
            pos += 8 + ((length + 3) & ~3)
            if pos > size:
                _decode_record(self._read, start, self.uri)  # raises the truncation error
            in_record = cflag in (1, 2)
            if not in_record:
                found.append(start)
        if in_record:
            _decode_record(self._read, start, self.uri)
        return found

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001
            pass

    def __getstate__(self) -> dict[str, Any]:
        return {"uri": self.uri}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["uri"])


def pack(header: IRHeader | tuple, s: bytes) -> bytes:
    """Prefix ``s`` with an image-record header; a non-scalar label becomes ``flag`` float32 values.

    >>> h, body = unpack(pack(IRHeader(0, [1, 2.5], 3, 0), b"x"))
    >>> h.flag, h.label.tolist(), h.id, body
    (2, [1.0, 2.5], 3, b'x')
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32).ravel()
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    try:
        return _IR.pack(int(header.flag), float(header.label), int(header.id), int(header.id2)) + bytes(s)
    except struct.error as e:
        raise MXAsyncError(f"cannot pack image-record header {tuple(header)}: {e} "
                           "(id and id2 must fit in uint64)") from e


def unpack(s: bytes) -> tuple[IRHeader, bytes]:
    """Split a record into its ``IRHeader`` and payload (see ``pack``)."""
    if len(s) < _IR.size:
        raise MXAsyncError(f"record of {len(s)} bytes is too short for an image-record header ({_IR.size} bytes)")
    header = IRHeader(*_IR.unpack_from(s))
    start = _IR.size
    if header.flag > 0:
        end = start + 4 * header.flag
        if len(s) < end:
            raise MXAsyncError(f"record of {len(s)} bytes is too short for its {header.flag} float32 labels")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag, start).copy())
        start = end
    return header, bytes(s[start:])


def pack_img(header: IRHeader | tuple, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode an HxW or HxWxC uint8 image in **BGR** order (as OpenCV and MXNet do) and ``pack`` it.

    ``quality`` is the JPEG quality (1-100) or the PNG compression level (0-9).

    >>> img = np.zeros((4, 6, 3), np.uint8); img[..., 2] = 200   # pure red in BGR
    >>> h, out = unpack_img(pack_img(IRHeader(0, 1.0, 0, 0), img, img_fmt=".png"))
    >>> out.shape, out[0, 0].tolist()
    ((4, 6, 3), [0, 0, 200])
    """
    from .image import codec

    return pack(header, codec.encode(img, img_fmt, quality=quality, channel_order="bgr"))


def unpack_img(s: bytes, iscolor: int = -1) -> tuple[IRHeader, np.ndarray]:
    """``unpack`` and decode the image, in **BGR** order like MXNet (OpenCV's ``imdecode`` flags).

    ``iscolor``: -1 keeps the stored channels (HxW for gray, HxWx3 BGR for color),
    0 gives HxW gray, 1 gives HxWx3 BGR.
    """
    from .image import codec

    header, img = unpack(s)
    return header, codec.decode(img, flag=iscolor, channel_order="bgr")
