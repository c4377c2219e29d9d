"""The one writer for every file mxasync writes: a whole file or none of it.

Bytes go to a hidden temporary in the target's folder, named after the target
(``.NAME.tmp-HOST-PID-RAND``); on success it is flushed, fsynced and renamed over
the target with ``os.replace``, so a reader, or a process killed with ``kill -9``
mid-write, sees the old file or the new one, never a truncated one. The next
write of the same target removes the temporaries that earlier writers on this
host left behind when they died (their process id no longer runs). The final file
gets the mode ``open(path, "w")`` would give it: the existing file's mode, else
``0o666`` less the umask. Errors name the target, never the temporary.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
>>> with atomic_open(path, "w") as f:
...     _ = f.write("hello")
>>> open(path).read(), os.listdir(os.path.dirname(path))
('hello', ['notes.txt'])
>>> write_file(path, b"bye")
>>> open(path).read()
'bye'
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import socket
import stat
from collections.abc import Iterator
from typing import IO, Any

from .base import MXAsyncOSError, os_error

__all__ = ["atomic_open", "AtomicFile", "write_file", "remove_stale_temporaries", "temporary_prefix"]


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:32] or "host"


def temporary_prefix(path: str) -> str:
    """The name prefix of ``path``'s temporaries, e.g. ``.net-0001.params.tmp-``."""
    return f".{os.path.basename(path)}.tmp-"


def _umask() -> int:
    # Read without os.umask(), which would briefly change it for every thread.
    with contextlib.suppress(OSError, ValueError), open("/proc/self/status") as f:
        for line in f:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    return 0o022


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists under another user (or cannot tell): keep its file
    return True


def remove_stale_temporaries(path: str) -> list[str]:
    """Delete the temporaries of ``path`` whose writer (on this host) has died; their names."""
    folder, prefix = os.path.dirname(os.path.abspath(path)), temporary_prefix(path)
    pattern = re.compile(re.escape(prefix) + r"([A-Za-z0-9]+)-(\d+)-[0-9a-f]+$")
    host, removed = _host(), []
    try:
        entries = [e.name for e in os.scandir(folder) if e.name.startswith(prefix)]
    except OSError:
        return removed
    for name in entries:
        m = pattern.match(name)
        if m is None or m.group(1) != host or _pid_alive(int(m.group(2))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(folder, name))
            removed.append(name)
    return removed


def _wrap(err: OSError, verb: str, path: str) -> MXAsyncOSError:
    return os_error(err, f"cannot {verb} {path}: {err.strerror or err}", path)


class AtomicFile:
    """A file open for writing that replaces ``path`` only at :meth:`commit`.

    ``mode`` is ``"wb"`` or ``"w"`` (text, utf-8 unless ``encoding``). Use it as a context
    manager (commit on success, discard on error) or call :meth:`commit` / :meth:`discard`.
    A copy inherited by a forked child neither commits nor deletes: only the creating
    process owns the temporary. A target that exists and is not a regular file
    (``/dev/null``, a pipe) is written in place, as no rename could replace it safely.
    """

    def __init__(self, path: str | os.PathLike[str], mode: str = "wb", encoding: str | None = None,
                 buffering: int = -1) -> None:
        if mode not in ("w", "wb"):
            raise ValueError(f"AtomicFile mode must be 'w' or 'wb', got {mode!r}")
        self.path = os.fspath(path)
        target = os.path.realpath(self.path) if os.path.islink(self.path) else os.path.abspath(self.path)
        self.target = target
        self.pid = os.getpid()
        self.closed = False
        kw: dict[str, Any] = {"encoding": encoding or "utf-8"} if mode == "w" else {}
        try:
            st = os.stat(target)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise _wrap(e, "write", self.path) from e
        self.in_place = st is not None and not stat.S_ISREG(st.st_mode)
        self.mode_bits = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~_umask()
        try:
            if self.in_place:
                self.tmp = None
                self.file: IO[Any] = open(target, mode, buffering=buffering, **kw)  # noqa: SIM115
                return
            remove_stale_temporaries(target)
            folder = os.path.dirname(target)
            while True:
                name = f"{temporary_prefix(target)}{_host()}-{self.pid}-{secrets.token_hex(4)}"
                tmp = os.path.join(folder, name)
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
                    break
                except FileExistsError:
                    continue
            self.tmp = tmp
            self.file = open(fd, mode, buffering=buffering, **kw)  # noqa: SIM115
        except OSError as e:
            raise _wrap(e, "write", self.path) from e

    def write(self, data: Any) -> int:
        try:
            return self.file.write(data)
        except OSError as e:
            self.discard()
            raise _wrap(e, "write", self.path) from e

    def fileno(self) -> int:
        return self.file.fileno()

    def commit(self) -> None:
        """Flush, fsync and rename over the target (only in the process that opened it)."""
        if self.closed:
            return
        self.closed = True
        if os.getpid() != self.pid:
            with contextlib.suppress(OSError):
                os.close(self.file.fileno())  # a forked copy: drop the descriptor, nothing else
            return
        try:
            self.file.flush()
            if self.tmp is None:
                self.file.close()
                return
            os.fsync(self.file.fileno())
            self.file.close()
            os.chmod(self.tmp, self.mode_bits)
            os.replace(self.tmp, self.target)
        except OSError as e:
            self._drop()
            raise _wrap(e, "write", self.path) from e
        with contextlib.suppress(OSError):  # make the rename itself durable
            dfd = os.open(os.path.dirname(self.target), os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)

    def _drop(self) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.file.close()
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)

    def discard(self) -> None:
        """Close and delete the temporary; the target stays as it was."""
        if self.closed:
            return
        self.closed = True
        if os.getpid() != self.pid:
            with contextlib.suppress(OSError):
                os.close(self.file.fileno())
            return
        self._drop()

    close = commit

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.discard()

    def __del__(self) -> None:
        # An AtomicFile dropped without commit was abandoned: never publish a half file.
        with contextlib.suppress(Exception):
            if not getattr(self, "closed", True):
                self.discard()


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "wb", encoding: str | None = None) -> Iterator[IO[Any]]:
    """``with atomic_open(path, "w") as f: f.write(...)``: the target appears whole at the end of the block."""
    af = AtomicFile(path, mode, encoding)
    try:
        yield af  # type: ignore[misc]
    except BaseException:
        af.discard()
        raise
    af.commit()


def write_file(path: str | os.PathLike[str], data: bytes | bytearray | memoryview | str) -> None:
    """Write all of ``data`` (bytes, or str as utf-8) to ``path`` atomically."""
    with AtomicFile(path, "w" if isinstance(data, str) else "wb") as f:
        f.write(data)
