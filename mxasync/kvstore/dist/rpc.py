"""Requests from a worker to the server ranks, and how keys are spread over servers.

A request is a header (op, key id, part, payload size, reply tag, meta size),
then optional pickled metadata, then the payload; the server answers on the
reply tag with the pulled data or an 8-byte status.  Requests are not
sequenced: they start as soon as their engine op runs, and the comm thread
drives many at once.

Like MXNet, a key smaller than ``MXNET_KVSTORE_BIGARRAY_BOUND`` elements lives
on one server (chosen by its id); a bigger one is cut into one contiguous part
per server, so every server carries a share of the big layers.
"""

from __future__ import annotations

import os
import pickle

import numpy as np

from ...base import MXNetError
from .comm import Comm, Task

__all__ = ["INIT", "PUSH", "PULL", "SETOPT", "STOP", "TAG_REQ", "TAG_META", "TAG_DATA", "Request", "shards"]

INIT, PUSH, PULL, SETOPT, STOP = 1, 2, 3, 4, 5
OP_NAMES = {INIT: "init", PUSH: "push", PULL: "pull", SETOPT: "set_optimizer", STOP: "stop"}
TAG_REQ, TAG_META, TAG_DATA = 21, 22, 23
HEADER_FIELDS = 6  # op, key id, part, nbytes, reply tag, meta bytes


def bigarray_bound() -> int:
    return int(os.environ.get("MXNET_KVSTORE_BIGARRAY_BOUND", 1_000_000))


def shards(kid: int, size: int, num_servers: int) -> list[tuple[int, int, int]]:
    """``(server index, start, stop)`` of each part of a flat key of ``size`` elements.

    >>> shards(7, 10, 3)
    [(1, 0, 10)]
    >>> shards(7, 2_000_000, 2)
    [(0, 0, 1000000), (1, 1000000, 2000000)]
    """
    if size < bigarray_bound() or num_servers == 1:
        return [(kid % num_servers, 0, size)]
    bounds = np.linspace(0, size, num_servers + 1).astype(np.int64)
    return [(s, int(bounds[s]), int(bounds[s + 1])) for s in range(num_servers)]


class Request(Task):
    """One op on one key, sent to every server holding a part of it.

    ``parts`` lists ``(server world rank, part, payload view or None, reply view
    or None)``; a PULL writes the answer into the reply views.
    """

    def __init__(self, op: int, kid: int, parts: list, meta: object = None, label: str = "") -> None:
        super().__init__()
        self.op = op
        self.kid = kid
        self.parts = parts
        self.meta = pickle.dumps(meta) if meta is not None else b""
        self.name = f"kvstore {OP_NAMES[op]}{' of key ' + label if label else ''}"

    def start(self, comm: Comm) -> None:
        world = comm.world
        self.pending: dict[int, list] = {}
        self.status: dict[int, np.ndarray] = {}
        meta = np.frombuffer(self.meta, np.uint8) if self.meta else None
        for server, part, payload, reply in self.parts:
            tag = comm.new_tag()
            reqs = []
            if self.op == PULL:
                reqs.append(world.Irecv(_bytes(reply), source=server, tag=tag))
            elif self.op != STOP:
                status = self.status[server] = np.zeros(1, np.int64)
                reqs.append(world.Irecv(status, source=server, tag=tag))
            nbytes = payload.nbytes if payload is not None else 0
            header = np.array([self.op, self.kid, part, nbytes, tag, len(self.meta)], np.int64)
            reqs.append(world.Isend(header, dest=server, tag=TAG_REQ))
            if meta is not None:
                reqs.append(world.Isend(meta, dest=server, tag=TAG_META))
            if payload is not None:
                reqs.append(world.Isend(_bytes(payload), dest=server, tag=TAG_DATA))
            self.pending[server] = reqs

    def poll(self, comm: Comm) -> bool:
        for server, reqs in list(self.pending.items()):
            if comm.MPI.Request.Testall(reqs):
                del self.pending[server]
                status = self.status.get(server)
                if status is not None and status[0] != 0:
                    raise _ServerError(f"{self.name}: server rank {server} failed to handle it "
                                       "(its traceback is on its stderr)")
        return not self.pending

    def waiting_for(self) -> str:
        return "server rank" + ("s " if len(self.pending) > 1 else " ") + ", ".join(map(str, sorted(self.pending)))


class _ServerError(MXNetError):
    fatal = False  # the server answered: the protocol is still in step


def _bytes(arr: np.ndarray) -> np.ndarray:
    """A flat byte view (MPI sends raw bytes; both ends know the dtype)."""
    return arr.reshape(-1).view(np.uint8)
