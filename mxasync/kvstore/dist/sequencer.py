"""The ordered collectives of a worker and the header stream that guards them.

Collectives must run in the same order on every worker.  Before one runs, every
worker must have said what it is about to do (which collective, which key, how
many bytes), so a worker that went elsewhere (ran fewer batches, pushes other
keys, crashed) is caught as an error instead of a hang, and a silent worker is
named once it showed no sign of life for the timeout (see :mod:`.liveness`).

Those announcements are a *stream*: each sequenced task has a number (its
registration order, the same on every worker); as soon as the engine readies a
task (armed) or skips it (its input failed), its header goes out, and every
header ready at that moment goes out in **one** message.  A collective runs
when it is first in line and every peer's header with its number has arrived
and matched.  So the headers of the keys behind the running collective travel
while it runs: no round trip per key is left on the critical path.
"""

from __future__ import annotations

import collections
import time
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .comm import Comm, Task

__all__ = ["Sequencer", "NFIELDS"]

NFIELDS = 7  # sequence number, then the task's header: kind, key id, nbytes, round, flags, count
_MAX_BATCH = 256  # headers per message (more go in several messages)
_TAG_STREAM = 12


class Sequencer:
    """Sequenced tasks of one process, in registration order, and the header stream among workers."""

    def __init__(self, comm: Comm) -> None:
        self.tasks: collections.deque[Task] = collections.deque()
        self._count = 0  # tasks accepted so far: the next one's sequence number
        self._announced = 0  # tasks of ``tasks`` (from the left) whose header went out
        self._peers: list[int] = [r for r in range(comm.size) if r != comm.rank]
        self._got: dict[int, dict[int, np.ndarray]] = {p: {} for p in self._peers}
        self._bufs = {p: np.empty((_MAX_BATCH, NFIELDS), np.int64) for p in self._peers}
        self._recvs = {p: self._post(comm, p) for p in self._peers}
        self._sends: list[tuple[object, np.ndarray]] = []
        self._running = False  # the first task in line started its collective
        self._running_since = 0.0

    def __bool__(self) -> bool:
        return bool(self.tasks)

    def append(self, task: Task) -> None:
        task.seqno = self._count
        self._count += 1
        self.tasks.append(task)

    # ------------------------------------------------------------------ MPI
    def _post(self, comm: Comm, peer: int):
        buf = self._bufs[peer]
        return comm.group.Irecv([buf, comm.MPI.BYTE], source=peer, tag=_TAG_STREAM)

    def _announce(self, comm: Comm, now: float) -> bool:
        """Send the headers of the tasks now ready, in order, as one message per peer."""
        rows = []
        for task in list(self.tasks)[self._announced:]:
            if not (task.armed or task.skipped()):
                break
            if not comm._start(task, now):
                task.header = None  # failed locally (broken store): its header still keeps the stream aligned
            rows.append(self._row(task))
            self._announced += 1
        if not rows:
            return False
        for i in range(0, len(rows), _MAX_BATCH):
            msg = np.stack(rows[i:i + _MAX_BATCH])
            for p in self._peers:
                self._sends.append((comm.group.Isend([msg, comm.MPI.BYTE], dest=p, tag=_TAG_STREAM), msg))
        return True

    @staticmethod
    def _row(task: Task) -> np.ndarray:
        header = getattr(task, "header", None)
        row = np.zeros(NFIELDS, np.int64)
        row[0] = task.seqno
        if header is not None:
            row[1:1 + len(header)] = header
        return row

    def _receive(self, comm: Comm) -> bool:
        moved = False
        status = comm.MPI.Status()
        for p in self._peers:
            while self._recvs[p].Test(status):
                n = status.Get_count(comm.MPI.BYTE) // (8 * NFIELDS)
                got = self._got[p]
                for row in self._bufs[p][:n]:
                    got[int(row[0])] = row[1:].copy()
                self._recvs[p] = self._post(comm, p)
                moved = True
        if self._sends:
            self._sends = [(r, m) for r, m in self._sends if not r.Test()]
        return moved

    # ------------------------------------------------------------- progress
    def progress(self, comm: Comm, now: float) -> bool:
        """Announce, receive, and run every task first in line whose peers' headers are in."""
        moved = self._announce(comm, now)
        moved |= self._receive(comm)
        while self.tasks and self._announced:
            task = self.tasks[0]
            if self._running:  # its collective started: poll it (never a blocking MPI call)
                if not comm._advance(task, now, self._silent(comm, self._peers, now)):
                    break
                self._pop()
                moved = True
                continue
            if task.header is None or comm.broken is not None:
                if task.header is not None:  # an earlier task broke the store: fail fast
                    comm._fail(task, comm.broken)
                self._pop()
                moved = True
                continue
            task.missing = {p for p in self._peers if task.seqno not in self._got[p]}
            if task.missing:
                silent = self._silent(comm, task.missing, now)
                if silent:  # a peer that is only busy elsewhere is waited for, however long
                    task.missing = set(silent)
                    comm._timed_out(task)
                    self._pop()
                    moved = True
                    continue
                break
            theirs = {p: self._got[p].pop(task.seqno) for p in self._peers}
            moved = True
            if not comm._complete(task, theirs):
                self._running = True  # its data moves now
                self._running_since = now
                break
            self._pop()
        return moved

    def _pop(self) -> None:
        self.tasks.popleft()
        self._announced -= 1
        self._running = False

    @staticmethod
    def _silent(comm: Comm, peers, now: float) -> list[int]:
        """Those of ``peers`` (group ranks) that showed no sign of life for the timeout."""
        silent = set(comm.liveness.silent([comm.group_ranks[p] for p in peers], now))
        return sorted(p for p in peers if comm.group_ranks[p] in silent)

    def running(self) -> bool:
        """True while the first task in line has its collective in flight."""
        return self._running

    def running_for(self) -> float | None:
        """Seconds the first task's collective has been in flight (None: none is)."""
        if not self._running:
            return None
        return time.monotonic() - self._running_since

    def waiting_on_peers(self) -> bool:
        """True when the first task in line went out and waits for the other workers' headers."""
        return bool(self._announced)

    def close(self, comm: Comm) -> None:
        """Cancel the posted receives (before MPI_Finalize)."""
        for req in self._recvs.values():
            req.Cancel()
            req.Wait()
        for req, _ in self._sends:
            req.Wait()
        self._sends = []
