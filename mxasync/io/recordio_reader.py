"""``RecordReader``: thread-safe random access to a RecordIO file, for the image pipelines."""

from __future__ import annotations

import os
import threading
from typing import Any

from ..base import MXAsyncError
from .recordio_format import MAGIC, MAX_LEN, PART_HEAD, decode_record

__all__ = ["RecordReader"]


class RecordReader:
    """Thread-safe random access to a RecordIO file (``os.pread``), for pipelines.

    Unlike ``MXRecordIO`` it has no current position, so worker threads can
    share one reader. It re-opens itself after a ``fork``.

    >>> import os, tempfile
    >>> from mxasync.io.recordio import MXRecordIO
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
        payload, _ = decode_record(self._read, offset, self.uri)
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
            magic, lrec = PART_HEAD.unpack(head)
            cflag, length = lrec >> 29, lrec & MAX_LEN
            if magic != MAGIC or cflag > 3 or (cflag in (2, 3)) != in_record:
                decode_record(self._read, start if in_record else pos, self.uri)  # raises the precise error
                raise MXAsyncError(f"{self.uri}: corrupt RecordIO file at byte offset {pos}")  # pragma: no cover
            if not in_record:
                start = pos
            pos += 8 + ((length + 3) & ~3)
            if pos > size:
                decode_record(self._read, start, self.uri)  # raises the truncation error
            in_record = cflag in (1, 2)
            if not in_record:
                found.append(start)
        if in_record:
            decode_record(self._read, start, self.uri)
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
