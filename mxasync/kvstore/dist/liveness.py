"""Signs of life among the ranks of a job: a rank that is busy is not a failed rank.

Every rank's communication thread sends each other rank a tiny heartbeat a few
times per ``MXASYNC_KVSTORE_TIMEOUT`` (the thread runs whatever the rank's own
code does: an evaluation on rank 0 only, a slow data loader, a long checkpoint
write), and notes when it last heard from each peer.  A wait for a peer fails
only once that peer has been **silent** (no heartbeat) for the whole timeout:
the rank is stopped (SIGSTOP, a debugger, a swapped-out host), hung inside the
communication thread, or dead.  A peer that is alive but elsewhere in its own
code is waited for, as MXNet waits, however long that takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from .comm import Comm

__all__ = ["Liveness", "TAG_HEARTBEAT"]

TAG_HEARTBEAT = 11
_BEATS_PER_TIMEOUT = 6  # heartbeats a peer sends within one timeout
_MAX_INTERVAL = 1.0  # seconds between heartbeats at most


class Liveness:
    """Heartbeats to every other rank of the world, and when each was last heard (comm thread only)."""

    def __init__(self, comm: Comm, now: float) -> None:
        self._comm = comm
        self.timeout = comm.timeout
        self.interval = min(_MAX_INTERVAL, comm.timeout / _BEATS_PER_TIMEOUT)
        self.peers = [r for r in range(comm.world_size) if r != comm.world_rank]
        self.last = {p: now for p in self.peers}
        self._beat = np.ones(1, np.int64)  # never written again: sends in flight may read it
        self._inbox = np.zeros(1, np.int64)
        self._status = comm.MPI.Status()
        self._recv = self._post()
        self._sends: dict[int, object] = {}  # peer -> its heartbeat still in flight (one at most)
        self._next = now

    def _post(self):
        comm = self._comm
        return comm.world.Irecv([self._inbox, comm.MPI.BYTE], source=comm.MPI.ANY_SOURCE, tag=TAG_HEARTBEAT)

    def tick(self, now: float) -> None:
        """Receive every heartbeat that arrived; send ours when one is due (never blocks)."""
        while self._recv.Test(self._status):
            self.last[self._status.Get_source()] = now
            self._recv = self._post()
        if now < self._next:
            return
        self._next = now + self.interval
        world, byte = self._comm.world, self._comm.MPI.BYTE
        for p in self.peers:
            pending = self._sends.get(p)
            if pending is not None and not pending.Test():
                continue  # that peer has not taken the last one yet: no pile of heartbeats for it
            self._sends[p] = world.Isend([self._beat, byte], dest=p, tag=TAG_HEARTBEAT)

    def wait_hint(self, now: float) -> float:
        """Seconds until the next heartbeat is due (the comm thread sleeps no longer)."""
        return max(0.0, self._next - now)

    def silent(self, world_ranks, now: float) -> list[int]:
        """Those of ``world_ranks`` not heard from for a whole timeout (stopped, hung or dead)."""
        return [r for r in world_ranks if r in self.last and now - self.last[r] > self.timeout]

    def close(self) -> None:
        """Cancel the posted receive (before MPI_Finalize); heartbeats still in flight are let go."""
        self._recv.Cancel()
        self._recv.Wait()
        for req in self._sends.values():
            if not req.Test():
                req.Free()  # a stopped peer may never take it; MPI completes it in the background
        self._sends = {}
