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
from .rpc import (
    HEADER,
    INIT,
    OP_NAMES,
    PULL,
    PULL_RSP,
    PUSH,
    PUSH_RSP,
    ROW_OPS,
    SETOPT,
    STOP,
    TAG_DATA,
    TAG_META,
    TAG_REQ,
    Header,
    ProtocolError,
    Request,
    decode_header,
)

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
            source = self.status.Get_source()
            size = self.status.Get_count(comm.MPI.BYTE)
            if source not in comm.worker_ranks or size != HEADER.size:
                _refuse(comm, source, f"a {size}-byte request header (this protocol's have {HEADER.size})")
            raw = np.empty(HEADER.size, np.uint8)
            world.Recv(raw, source=source, tag=TAG_REQ)
            try:
                header = decode_header(raw.tobytes())
            except ProtocolError as exc:
                _refuse(comm, source, str(exc))
            self._handle(comm, source, header)
            self.moved = True  # more may be on the way: the comm thread polls again at once
        self.replies = [(req, buf) for req, buf in self.replies if not req.Test()]
        if len(self.stopped) == comm.num_workers and not self.replies:
            self.done.set()
            return True
        return False

    def _handle(self, comm: Comm, source: int, h: Header) -> None:
        world = comm.world
        op, kid, part, nbytes, tag = h.op, h.kid, h.part, h.nbytes, h.tag
        meta = None
        if op in ROW_OPS:
            self._check_rows(comm, source, h)
        if h.meta_len:
            raw = np.empty(h.meta_len, np.uint8)
            world.Recv(raw, source=source, tag=TAG_META)
            meta = raw.tobytes()
        if op == STOP:
            self.stopped.add(source)
            return
        if op == SETOPT:
            if source != comm.worker_ranks[0]:
                _refuse(comm, source, "set_optimizer from a worker other than worker 0")
        elif op == INIT:
            meta = ((meta or b"").decode("utf-8", "replace") if h.key_kind == 1 else h.key_int, h.dtype)
        elif (kid, part) not in self.store:
            _refuse(comm, source, f"{OP_NAMES[op]} of key id {kid} part {part}, which no worker initialised here")
        elif op == PUSH and nbytes > self.grads[(kid, part)]._data.nbytes:
            _refuse(comm, source, f"a push of {nbytes} bytes to key id {kid} part {part}, which holds "
                    f"{self.grads[(kid, part)]._data.nbytes}")
        if op in ROW_OPS:
            self._handle_rows(comm, source, h, np.frombuffer(meta or b"", np.int64))
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

    def _check_rows(self, comm: Comm, source: int, h: Header) -> None:
        """A row op's sizes against the part, before anything is received or allocated."""
        part = self.store.get((h.kid, h.part))
        if part is None:
            _refuse(comm, source, f"{OP_NAMES[h.op]} of key id {h.kid} part {h.part}, which no worker initialised here")
        n, row = h.meta_len // 8, h.key_int
        item = self.dtypes[(h.kid, h.part)].itemsize
        if part.size % row or n > part.size // row or (h.op == PUSH_RSP and h.nbytes != n * row * item) \
                or (h.op == PULL_RSP and h.nbytes):
            _refuse(comm, source, f"a {OP_NAMES[h.op]} of {n} rows of {row} values ({h.nbytes} bytes) to key id "
                    f"{h.kid} part {h.part}, which holds {part.size} values")

    def _handle_rows(self, comm: Comm, source: int, h: Header, ids: np.ndarray) -> None:
        """A row_sparse push (the rows ``ids`` of the part, lazily updated) or row_sparse_pull (a copy of
        the rows ``ids``): row ids are relative to the part, sorted and unique."""
        from ...ndarray import sparse

        world, key = comm.world, (h.kid, h.part)
        weight = self.store[key]
        rows = weight.size // h.key_int
        if h.op == PUSH_RSP:
            data = np.empty(h.nbytes, np.uint8)
            if h.nbytes:
                world.Recv(data, source=source, tag=TAG_DATA)
        if ids.size and (ids[0] < 0 or ids[-1] >= rows or np.any(np.diff(ids) <= 0)):
            _refuse(comm, source, f"a {OP_NAMES[h.op]} of key id {h.kid} part {h.part} whose row ids are not "
                    f"sorted, unique and below {rows}")
        status = 0
        try:
            matrix = weight.reshape((rows, h.key_int))
            if h.op == PULL_RSP:
                matrix.wait_to_read()
                self._reply(world, np.ascontiguousarray(matrix._data[ids]).view(np.uint8).reshape(-1), source, h.tag)
                return
            sending = self.sending.pop(key, None)
            if sending:
                self.MPI.Request.Waitall(sending)
            grad = sparse.row_sparse_array((data.view(weight.dtype).reshape(-1, h.key_int), ids.copy()),
                                           shape=(rows, h.key_int), dtype=weight.dtype)
            if self.updater is None:  # the push replaces the value (rows it lacks are zero), as MXNet's server
                grad.copyto(matrix)
            else:
                self.updater(self.keys[h.kid], grad, matrix)
        except Exception:  # noqa: BLE001 - the worker gets an error; the server keeps serving
            traceback.print_exc()
            status = 1
            if h.op == PULL_RSP:  # the worker waits for rows: it gets garbage-free zeros and the status below
                self._reply(world, np.zeros(len(ids) * h.key_int * weight.dtype.itemsize, np.uint8), source, h.tag)
                return
        self._reply(world, np.array([status], np.int64), source, h.tag)

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

            # the one pickled message, from worker 0 only (see the trust model in docs/distributed.md)
            self.updater = get_updater(pickle.loads(meta)) if meta else None
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


def _refuse(comm: Comm, source: int, what: str) -> None:
    """A request this protocol never sends: the job ends (its ranks no longer agree on the protocol)."""
    comm.abort(f"kvstore server: malformed request from rank {source}: {what}; the job ends "
               "(a distributed job must run on a trusted network: docs/distributed.md)")


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
