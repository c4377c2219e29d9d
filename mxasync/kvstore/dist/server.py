"""Server ranks of ``dist_async``: ``python -m mxasync.kvstore.dist.server`` (the launcher starts them).

A server owns parts of keys.  It applies each push as soon as it arrives, with
the optimizer that ``set_optimizer`` sent it (MXNet's asynchronous SGD), and
answers a pull with the part's current value.  It stops once every worker has
sent STOP (workers do that at exit).  Its loop is a task on the comm thread,
so it obeys the same one-thread-calls-MPI rule as a worker.

No allocation per request: a push lands in the part's own receive buffer
(reused once the last update that read it finished), and a pull is sent
straight from the stored value, which no push overwrites until that send
completed.
"""

from __future__ import annotations

import pickle
import sys
import threading
import traceback

import numpy as np

from ...base import MXNetError
from .comm import Comm, Task, get_comm
from .mpi import SERVER
from .rpc import INIT, PULL, PUSH, SETOPT, STOP, TAG_DATA, TAG_META, TAG_REQ, Request

__all__ = ["ServerLoop", "main", "stop_servers"]


class ServerLoop(Task):
    """Receive requests from any worker and answer them, until every worker said STOP."""

    name = "kvstore server"

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[int, int], object] = {}  # (key id, part) -> NDArray
        self.keys: dict[int, object] = {}  # key id -> the user's key (the updater's index)
        self.dtypes: dict[tuple[int, int], np.dtype] = {}
        self.grads: dict[tuple[int, int], object] = {}  # (key id, part) -> NDArray a push lands in
        self.sending: dict[tuple[int, int], list] = {}  # (key id, part) -> pulls still sending the value
        self.updater = None
        self.replies: list = []  # (request, buffer) until sent
        self.stopped: set[int] = set()
        self.done = threading.Event()

    def start(self, comm: Comm) -> None:
        self.MPI = comm.MPI
        self.status = comm.MPI.Status()

    def waiting_for(self) -> str:
        return "the workers"

    def poll(self, comm: Comm) -> bool:
        self.deadline = float("inf")  # a server waits for workers as long as the job lives
        world = comm.world
        self.moved = False
        for _ in range(64):  # answer a burst, then let the thread breathe
            if not world.Iprobe(source=comm.MPI.ANY_SOURCE, tag=TAG_REQ, status=self.status):
                break
            header = np.empty(6, np.int64)
            source = self.status.Get_source()
            world.Recv(header, source=source, tag=TAG_REQ)
            self._handle(comm, source, *(int(x) for x in header))
            self.moved = True  # more may be on the way: the comm thread polls again at once
        self.replies = [(req, buf) for req, buf in self.replies if not req.Test()]
        if len(self.stopped) == comm.num_workers and not self.replies:
            self.done.set()
            return True
        return False

    def _handle(self, comm: Comm, source: int, op: int, kid: int, part: int, nbytes: int, tag: int,
                meta_len: int) -> None:
        world = comm.world
        meta = None
        if meta_len:
            raw = np.empty(meta_len, np.uint8)
            world.Recv(raw, source=source, tag=TAG_META)
            meta = pickle.loads(raw.tobytes())
        if op == STOP:
            self.stopped.add(source)
            return
        if op == PULL:
            value = self.store[(kid, part)]
            value.wait_to_read()
            req = self._reply(world, value._data.reshape(-1).view(np.uint8), source, tag)
            self.sending.setdefault((kid, part), []).append(req)
            return
        payload = None
        if nbytes:
            payload = self._receive_buffer(op, kid, part, meta, nbytes)
            world.Recv(payload, source=source, tag=TAG_DATA)
        status = 0
        try:
            self._apply(op, kid, part, meta, payload)
        except Exception:  # noqa: BLE001 - the worker gets an error; the server keeps serving
            traceback.print_exc()
            status = 1
        self._reply(world, np.array([status], np.int64), source, tag)

    def _receive_buffer(self, op: int, kid: int, part: int, meta, nbytes: int) -> np.ndarray:
        """Bytes a push (or init) of the part lands in: its grad buffer, once nothing reads it."""
        from ...ndarray import empty

        grad = self.grads.get((kid, part))
        if op == PUSH and grad is not None and grad._data.nbytes == nbytes:
            grad.wait_to_write()  # the previous update read it
            return grad._data.reshape(-1).view(np.uint8)
        if op == INIT:
            dtype = np.dtype(meta[1])
            grad = self.grads[(kid, part)] = empty((nbytes // dtype.itemsize,), dtype=dtype)
            return grad._data.view(np.uint8)
        return np.empty(nbytes, np.uint8)  # a size the part does not have: _apply reports it

    def _apply(self, op: int, kid: int, part: int, meta, payload: np.ndarray | None) -> None:
        from ...ndarray import array

        if op == SETOPT:
            from ...optimizer import get_updater

            self.updater = get_updater(meta)
            return
        sending = self.sending.pop((kid, part), None)
        if sending:  # pulls still reading the stored value: let them finish before it changes
            self.MPI.Request.Waitall(sending)
        if op == INIT:
            key, dtype = meta
            self.keys[kid] = key
            self.dtypes[(kid, part)] = np.dtype(dtype)
            self.store[(kid, part)] = array(payload.view(dtype), dtype=dtype)
        elif op == PUSH:
            weight, grad = self.store[(kid, part)], self.grads[(kid, part)]
            if payload.nbytes != grad._data.nbytes:
                raise MXNetError(f"kvstore push: key {self.keys[kid]!r} part {part} holds {grad.size} values "
                                 f"of {grad.dtype}, the push sent {payload.nbytes} bytes")
            if self.updater is None:  # the push replaces the value: swap buffers rather than copy
                self.store[(kid, part)], self.grads[(kid, part)] = grad, weight
            else:
                self.updater(self.keys[kid], grad, weight)

    def _reply(self, world, buf: np.ndarray, dest: int, tag: int):
        req = world.Isend(buf, dest=dest, tag=tag)
        self.replies.append((req, buf))
        return req


def stop_servers(comm: Comm) -> None:
    """Tell every server this worker is done (at exit); servers end when all workers did."""
    if comm.server_ranks:
        comm.run(Request(STOP, 0, [(s, 0, None, None) for s in comm.server_ranks]))


def main(argv: list[str] | None = None) -> int:
    comm = get_comm(SERVER)
    loop = ServerLoop()
    errors: list = []
    comm.arm(loop, errors.append)
    comm.submit(loop)
    _wait(loop, errors)
    if errors and errors[0] is not None:
        print(f"mxasync server rank {comm.world_rank}: {errors[0]}", file=sys.stderr, flush=True)
        return 1
    return 0


def _wait(loop: ServerLoop, errors: list) -> None:
    # the loop ends by finishing (every worker stopped) or by failing
    while not loop.done.wait(0.5) and not errors:
        pass


if __name__ == "__main__":
    sys.exit(main())
