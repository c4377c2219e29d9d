"""Collectives among worker ranks, each preceded by a small header exchange.

Every worker sends every other worker a header (what it is about to do: which
collective, which key, how many bytes, which round) before the collective
itself.  The exchange makes three failures visible instead of hangs:

* a worker that ran fewer batches sends ``FINISH`` (or ``BARRIER``) while the
  others send ``ALLREDUCE``: everyone gets an error saying so;
* a worker that stays silent is named when the timeout expires;
* a worker whose input failed (its engine op was skipped) sends a FAILED header,
  so the others fail that op too instead of waiting for it.

Only after every header matched does the collective start, and it is always a
*non-blocking* one (``Iallreduce``, ``Ibcast``, ...): the comm thread polls it
against the deadline and keeps announcing and receiving headers meanwhile.  A
peer that stalls *inside* the collective (its header went out, then it stopped)
cannot be waited out: MPI offers no way to cancel a started collective, and its
buffers may be half written, so once ``MXASYNC_KVSTORE_TIMEOUT`` passes the comm
thread ends the job with a message naming the collective.  The headers travel
ahead of the data, batched: see :mod:`.sequencer`.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable

import numpy as np

from ...base import MXNetError
from ...runtime.engine import Engine
from ...runtime.run_context import FnProperty
from .comm import Comm, Task

__all__ = ["Collective", "ALLREDUCE", "BCAST", "BARRIER", "FINISH", "ALLGATHER", "NCCL_SETUP", "AGREE", "key_id",
           "push_collective", "push_barrier", "push_agree"]

ALLREDUCE, BCAST, BARRIER, FINISH, ALLGATHER, NCCL_SETUP, AGREE = 1, 2, 3, 4, 5, 6, 7
_KIND_NAMES = {ALLREDUCE: "push", BCAST: "init", BARRIER: "barrier()", FINISH: "exit", ALLGATHER: "push",
               NCCL_SETUP: "NCCL setup", AGREE: "init"}
_DESC_BYTES = 128  # an AGREE's description of a key's array: "dtype shape", UTF-8, zero-padded
_FAILED, _CRASHED = 1, 2  # header flags: input failed; exiting on an uncaught exception
# a header: kind, key id, nbytes, round, flags, collective count
_key_names: dict[int, str] = {}


def key_id(key: object) -> int:
    """A stable 31-bit id of a KVStore key (the same on every rank), remembered for messages.

    >>> key_id(3) == key_id(3) and key_id("3") != key_id(3)
    True
    """
    text = f"{type(key).__name__}:{key}"
    kid = zlib.crc32(text.encode()) & 0x7FFFFFFF
    _key_names[kid] = repr(key)
    return kid


class Collective(Task):
    """A header exchange followed by one collective on the workers' communicator.

    ``buf`` is a numpy array updated in place (ALLREDUCE, BCAST); ``recv`` takes
    the result of ALLGATHER.  ``after(buf)`` runs on the comm thread once the
    data arrived (keep it cheap).
    """

    sequenced = True

    def __init__(self, kind: int, key: object = None, buf: np.ndarray | None = None, round_: int = 0,
                 root: int = 0, recv: np.ndarray | None = None, after: Callable[[], None] | None = None,
                 count: int = 0, crashed: bool = False, send: np.ndarray | None = None,
                 desc: str = "") -> None:
        super().__init__()
        self.desc = desc  # AGREE: this worker's "dtype shape" of the key
        self.kind = kind
        self.key = key
        self.kid = key_id(key) if key is not None else 0
        self.buf = buf
        self.recv_buf = recv
        self.send_buf = send  # ALLREDUCE from this array into ``buf`` (saves the copy into ``buf``)
        self.round = round_
        self.root = root
        self.after = after
        self.count = count
        self.crashed = crashed
        self._outs: list[np.ndarray] = []  # pull outputs filled right after the data arrived
        self._in_place = False  # sum in ``send`` itself (a pull into the pushed array), then copy to ``buf``
        self._outs_lock = threading.Lock()
        self._began = False
        label = _KIND_NAMES[kind] if key is None else f"{_KIND_NAMES[kind]} of key {key!r}"
        self.name = f"kvstore {label}" + (f" (round {round_})" if round_ else "")

    # ------------------------------------------------------------ header
    def start(self, comm: Comm) -> None:
        """Build the header; the comm thread's Sequencer sends it with every other one ready."""
        flags = (_FAILED if not self.armed else 0) | (_CRASHED if self.crashed else 0)
        nbytes = self.buf.nbytes if self.buf is not None else 0
        self.header = np.array([self.kind, self.kid, nbytes, self.round, flags, self.count], np.int64)
        self.missing: set[int] = set()

    def waiting_for(self) -> str:
        names = ", ".join(str(p) for p in sorted(self.missing))
        return f"worker{'s' if len(self.missing) > 1 else ''} {names}" if self.missing else "the workers"

    def attach_out(self, out: np.ndarray) -> bool:
        """Fill ``out`` with ``buf`` on the comm thread after the collective (a pull fused into
        the push); False once the collective began, when the caller must copy itself."""
        with self._outs_lock:
            if self._began:
                return False
            self._outs.append(out)
            return True

    def attach_in_place(self) -> bool:
        """Sum in the pushed array itself and copy the sum into ``buf`` (a pull into the pushed
        array: one copy fewer than summing into ``buf`` and copying back); False once begun."""
        with self._outs_lock:
            if self._began or self.kind != ALLREDUCE or self.send_buf is None:
                return False
            self._in_place = True
            return True

    def complete(self, comm: Comm, headers: dict) -> bool:
        """Check the peers' headers and start the data's collective; True once it is done."""
        with self._outs_lock:
            self._began = True
        self.headers = headers
        self.peers = sorted(headers)
        self._check(comm)
        if not self.armed:
            return True  # this worker's op was skipped by the engine: nothing to compute
        self._steps = self.execute(comm)
        self._waiting = None
        return self.advance(comm)

    def advance(self, comm: Comm) -> bool:
        """Drive the started collective without blocking; True once its data arrived."""
        steps = self._steps
        while True:
            if self._waiting is not None:
                if not comm.MPI.Request.Testall(self._waiting):
                    return False
                self._waiting = None
            if steps is None:
                break
            try:
                pending = next(steps)
            except StopIteration:
                break
            self._waiting = pending if isinstance(pending, list) else [pending]
        self._steps = None
        for out in self._outs:
            np.copyto(out, self.buf)
        if self.after is not None:
            self.after()
        return True

    def stalled(self, silent: list[int]) -> str:
        """What ends the job when peers (``silent``) of the started collective fell silent."""
        peers = sorted(silent) or getattr(self, "peers", ())
        who = f"worker{'s' if len(peers) > 1 else ''} {', '.join(map(str, peers))}" if peers else "the workers"
        return f"{self.name}: no answer from {who} inside the started collective"

    def _check(self, comm: Comm) -> None:
        failed = [p for p in self.peers if self.headers[p][4] & _FAILED]
        if not self.armed:
            failed.append(comm.rank)
        if failed:
            who = ", ".join(str(p) for p in sorted(failed))
            exc = MXNetError(f"{self.name}: worker {who} could not take part because its input failed "
                             "(see that worker's error); the op fails on every worker")
            exc.fatal = False  # every worker agrees, so later collectives still line up
            raise exc
        mine = self.header[:3]
        for p in self.peers:
            if not np.array_equal(self.headers[p][:3], mine):
                raise MXNetError(self._mismatch(comm, p))

    def _mismatch(self, comm: Comm, peer: int) -> str:
        theirs, mine = self.headers[peer], self.header
        text = (f"workers disagree on the next KVStore step: worker {comm.rank} does {_describe(mine)} "
                f"while worker {peer} does {_describe(theirs)}")
        kinds = {int(mine[0]), int(theirs[0])}
        if (mine[4] | theirs[4]) & _CRASHED:
            text += " (it stopped on an uncaught error: see its traceback)"
        elif kinds & {FINISH, BARRIER} and kinds & {ALLREDUCE, ALLGATHER}:
            text += (". The workers ran different numbers of batches: give each the same number "
                     "(num_parts=kv.num_workers, part_index=kv.rank on equal parts, or "
                     "last_batch_handle='discard')")
        elif mine[1] == theirs[1] and mine[2] != theirs[2]:
            text += ". The key has a different size on each worker"
        else:
            text += ". Every worker must push the same keys in the same order"
        return text

    # ------------------------------------------------------------ data
    def execute(self, comm: Comm):
        """The data's collective as a generator: it starts non-blocking MPI calls and yields their
        requests (one or a list); the comm thread resumes it once they completed."""
        MPI, group, buf = comm.MPI, comm.group, self.buf
        if self.kind == ALLREDUCE:
            send = self.send_buf
            if buf.dtype == np.float16:  # MPI has no half type: sum in float32
                tmp = (buf if send is None else send).astype(np.float32)
                yield group.Iallreduce(MPI.IN_PLACE, tmp, op=MPI.SUM)
                buf[...] = tmp
            elif self._in_place:
                yield group.Iallreduce(MPI.IN_PLACE, send, op=MPI.SUM)
                np.copyto(buf, send)
            else:
                yield group.Iallreduce(MPI.IN_PLACE if send is None else send, buf, op=MPI.SUM)
        elif self.kind == BCAST:
            yield group.Ibcast(buf.view(np.uint8).reshape(-1), root=self.root)
        elif self.kind == ALLGATHER:
            yield group.Iallgather(buf.view(np.uint8).reshape(-1), self.recv_buf.view(np.uint8).reshape(-1))
        elif self.kind == BARRIER:
            yield group.Ibarrier()
        elif self.kind == AGREE:
            mine = np.zeros(_DESC_BYTES, np.uint8)
            raw = self.desc.encode()[:_DESC_BYTES]
            mine[:len(raw)] = np.frombuffer(raw, np.uint8)
            everyone = np.empty((comm.size, _DESC_BYTES), np.uint8)
            yield group.Iallgather(mine, everyone)
            self._agree([bytes(row).rstrip(b"\0").decode("utf-8", "replace") for row in everyone])

    def _agree(self, descs: list[str]) -> None:
        """Every worker gathered every worker's description of the key: the same error on each."""
        if len(set(descs)) == 1:
            return
        groups: dict[str, list[int]] = {}
        for rank, d in enumerate(descs):
            groups.setdefault(d, []).append(rank)
        said = "; ".join(f"worker{'s' if len(r) > 1 else ''} {', '.join(map(str, r))} {'have' if len(r) > 1 else 'has'} "
                         f"{d}" for d, r in groups.items())
        raise MXNetError(f"{self.name}: the workers disagree on the key's dtype or shape: {said}. Every worker "
                         "must init a key with the same dtype, shape and storage type (the distributed store would otherwise "
                         "sum or copy its bytes as if they were alike)")


def _describe(header: np.ndarray) -> str:
    kind, kid, nbytes, round_, _flags, count = (int(x) for x in header)
    if kind in (ALLREDUCE, ALLGATHER):
        key = _key_names.get(kid, f"#{kid}")
        return f"push #{round_} of key {key} ({nbytes} bytes; collective push #{count})"
    if kind in (BCAST, AGREE):
        return f"init of key {_key_names.get(kid, f'#{kid}')}"
    if kind == FINISH:
        return f"exit after {count} collective pushes"
    if kind == NCCL_SETUP:
        return "the NCCL setup of a GPU (before its first GPU push or init)"
    return f"barrier() after {count} collective pushes"


def push_collective(comm: Comm, task: Collective, ctx, const_vars, mutate_vars,
                    priority: int = 0) -> None:
    """Push ``task`` as an engine op that reads ``const_vars`` and writes ``mutate_vars``.

    The task is registered now, in program order (the order every rank shares),
    and armed when the engine runs the op; the comm thread completes the op.
    """
    engine = Engine.get()
    const_vars, mutate_vars = list(const_vars), list(mutate_vars)
    task.done_var = engine.new_variable(name=task.name)
    task.vars = (const_vars, mutate_vars)  # a GPU collective records its device event on them
    comm.submit(task)

    def start(rctx, on_complete) -> None:
        task.stream = rctx.stream  # the device stream a GPU collective launches on (None on CPU)
        comm.arm(task, on_complete)

    engine.push_async(start, ctx, const_vars, [*mutate_vars, task.done_var],
                      prop=FnProperty.ASYNC, priority=priority, name=task.name)


def push_agree(comm: Comm, key, arr) -> None:
    """Check once, when ``key`` is initialised, that every worker gives it the same dtype, shape and
    storage type (an engine op writing ``arr``, the stored array: later uses of the key carry its error)."""
    desc = f"{np.dtype(arr.dtype).name} {tuple(arr.shape)}"
    if arr.stype != "default":
        desc += f" {arr.stype}"
    push_collective(comm, Collective(AGREE, key=key, desc=desc), arr.context, [], [arr._chunk.var])


def push_barrier(comm: Comm, reads=(), writes=()):
    """A barrier among the workers as an engine op after the ops on ``reads`` (and before later
    ops on ``writes``); returns the var to wait on or ``await`` (it carries the barrier's error)."""
    from ...runtime.context import cpu

    task = Collective(BARRIER, count=comm.push_count)
    push_collective(comm, task, cpu(), reads, writes)
    return task.done_var
