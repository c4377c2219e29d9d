"""RecordIO files: MXNet's (dmlc-core) binary record files, byte for byte.

A ``.rec`` file is a sequence of records (their byte layout: :mod:`.recordio_format`);
files written here load in MXNet 1.9 and the other way round.  A ``.idx`` file
is text, one ``key<TAB>byte offset`` line per record.  MXNet's image-record
header on top of a record is in :mod:`.recordio_pack`, and a thread-safe
random-access reader for pipelines in :mod:`.recordio_reader`; all of them are
importable from here.

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

import os
from collections.abc import Callable
from typing import Any

from ..atomic import AtomicFile
from ..base import MXAsyncError
from .recordio_format import MAGIC, decode_record, encode_record
from .recordio_pack import IRHeader, pack, pack_img, unpack, unpack_img
from .recordio_reader import RecordReader

__all__ = [
    "MAGIC", "MXRecordIO", "MXIndexedRecordIO", "RecordReader", "IRHeader",
    "pack", "unpack", "pack_img", "unpack_img", "encode_record",
]

_FLUSH_AT = 1 << 20


class _OwnedWriter:
    """A binary writer with its own buffer that only the creating process flushes.

    A forked child inherits the buffer; flushing it there would write the same
    bytes twice, so a child only closes its copy of the descriptor. The file is an
    :class:`~mxasync.atomic.AtomicFile`: it appears, whole, at ``close``.
    """

    def __init__(self, path: str) -> None:
        self.raw = AtomicFile(path, "wb", buffering=0)
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
        except BaseException:
            self.raw.discard()
            raise
        self.raw.commit()

    def discard(self) -> None:
        self.raw.discard()


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

    def discard(self) -> None:
        """Close a writer without publishing what it wrote (the old file, if any, stays)."""
        if not self.is_open:
            return
        self.is_open = False
        fh, self._fh = self._fh, None
        fh.discard() if isinstance(fh, _OwnedWriter) else fh.close()

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
            payload, self._pos = decode_record(self._read_seq, start, self.uri)
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
            if pos < 0:
                super().close()
                raise MXAsyncError(f"{self.idx_path}:{lineno}: bad index line {line.rstrip()!r}: "
                                   f"the byte offset {pos} of key {key!r} is negative")
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

    def discard(self) -> None:
        if not self.is_open:
            return
        try:
            super().discard()
        finally:
            fidx, self._fidx = self._fidx, None
            if fidx is not None:
                fidx.discard()

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
