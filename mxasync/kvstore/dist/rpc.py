"""Requests from a worker to the server ranks, and how keys are spread over servers.

A request is a fixed binary header (:data:`HEADER`: op, part, key id, payload
size, reply tag, extra bytes, the key and dtype of an ``init``), then optional
extra bytes, then the payload; the server answers on the reply tag with the
pulled data or an 8-byte status.  Nothing a server receives is unpickled except
the optimizer, which worker 0 sends once per ``set_optimizer`` (the server
accepts it from worker 0 only): a server parses every other request with
``struct`` and checks it before it allocates or replies.  Requests are not
sequenced: they start as soon as their engine op runs, and the comm thread
drives many at once.

Like MXNet, a key smaller than ``MXNET_KVSTORE_BIGARRAY_BOUND`` elements lives
on one server (chosen by its id); a bigger one is cut into one contiguous part
per server, so every server carries a share of the big layers.
"""

from __future__ import annotations

import os
import struct
from typing import NamedTuple

import numpy as np

from ...base import MXNetError
from .comm import Comm, Task

__all__ = ["INIT", "PUSH", "PULL", "SETOPT", "STOP", "PUSH_RSP", "PULL_RSP", "row_shards", "TAG_REQ", "TAG_META", "TAG_DATA", "HEADER", "Header",
           "ProtocolError", "encode_header", "decode_header", "Request", "shards"]

INIT, PUSH, PULL, SETOPT, STOP, PUSH_RSP, PULL_RSP = 1, 2, 3, 4, 5, 6, 7
OP_NAMES = {INIT: "init", PUSH: "push", PULL: "pull", SETOPT: "set_optimizer", STOP: "stop",
            PUSH_RSP: "row_sparse push", PULL_RSP: "row_sparse_pull"}
ROW_OPS = (PUSH_RSP, PULL_RSP)  # the extra bytes are row ids (int64); the int key field is the row size
TAG_REQ, TAG_META, TAG_DATA = 21, 22, 23
# op, part, key id, payload bytes, reply tag, extra bytes, key kind (0 int, 1 str: its UTF-8 is the
# extra bytes), int key, dtype (numpy's string form, e.g. b"<f4")
HEADER = struct.Struct("<iiqqiiiq8s")
TAG_FIRST, TAG_LAST = 1000, 31000  # reply tags (Comm.new_tag)
MAX_KEY_BYTES = 4096
MAX_OPTIMIZER_BYTES = 1 << 28
MAX_ROW_ID_BYTES = 1 << 34  # the server checks a request's rows against the part before receiving them


class ProtocolError(ValueError):
    """A request that this protocol never produces (a different version, a bug, or a stranger)."""


class Header(NamedTuple):
    op: int
    part: int
    kid: int
    nbytes: int
    tag: int
    meta_len: int
    key_kind: int
    key_int: int
    dtype: str


def encode_header(op: int, kid: int, part: int, nbytes: int, tag: int, meta_len: int = 0, key=None,
                  dtype: str = "") -> bytes:
    """The bytes of one request's header.

    >>> decode_header(encode_header(INIT, 7, 0, 16, 1001, 1, key="w", dtype="<f4")).dtype
    '<f4'
    """
    kind, key_int = (1, 0) if isinstance(key, str) else (0, int(key or 0))
    return HEADER.pack(op, part, kid, nbytes, tag, meta_len, kind, key_int, dtype.encode("ascii"))


def decode_header(raw: bytes) -> Header:
    """Parse and check a request header; raises :class:`ProtocolError` naming what is wrong.

    >>> decode_header(b"x" * 3)
    Traceback (most recent call last):
    ...
    mxasync.kvstore.dist.rpc.ProtocolError: a request header has 52 bytes, got 3
    """
    if len(raw) != HEADER.size:
        raise ProtocolError(f"a request header has {HEADER.size} bytes, got {len(raw)}")
    op, part, kid, nbytes, tag, meta_len, kind, key_int, dtype = HEADER.unpack(raw)
    if op not in OP_NAMES:
        raise ProtocolError(f"unknown request op {op}")
    name = OP_NAMES[op]
    if part < 0 or kid < 0 or nbytes < 0 or meta_len < 0:
        raise ProtocolError(f"{name}: negative field (part {part}, key id {kid}, {nbytes} bytes, {meta_len} extra)")
    if op != STOP and not TAG_FIRST <= tag <= TAG_LAST:
        raise ProtocolError(f"{name}: reply tag {tag} outside {TAG_FIRST}..{TAG_LAST}")
    if kind not in (0, 1):
        raise ProtocolError(f"{name}: unknown key kind {kind}")
    limit = (MAX_OPTIMIZER_BYTES if op == SETOPT else MAX_KEY_BYTES if op == INIT and kind == 1
             else MAX_ROW_ID_BYTES if op in ROW_OPS else 0)
    if op in ROW_OPS and (kind != 0 or key_int <= 0 or meta_len % 8):
        raise ProtocolError(f"{name}: row size {key_int} and {meta_len} bytes of row ids")
    if meta_len > limit:
        raise ProtocolError(f"{name}: {meta_len} extra bytes (at most {limit})")
    text = dtype.rstrip(b"\0").decode("ascii", "replace")
    if op == INIT:
        try:
            dt = np.dtype(text)
        except TypeError:
            raise ProtocolError(f"init: bad dtype {text!r}") from None
        if dt.kind not in "fiub" or dt.itemsize > 16 or nbytes % dt.itemsize:
            raise ProtocolError(f"init: dtype {text!r} is not a plain numeric type of {nbytes} bytes")
    return Header(op, part, kid, nbytes, tag, meta_len, kind, key_int, text)


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


def row_shards(kid: int, shape: tuple, num_servers: int) -> list[tuple[int, int, int]]:
    """``shards`` of a row_sparse key: each part a whole number of rows (flat element ranges).

    >>> row_shards(7, (2_000_000, 1), 2)
    [(0, 0, 1000000), (1, 1000000, 2000000)]
    >>> row_shards(7, (3, 4), 2)
    [(1, 0, 12)]
    """
    rows = int(shape[0]) if shape else 1
    row = int(np.prod(shape[1:], dtype=np.int64)) if len(shape) > 1 else 1
    if rows * row < bigarray_bound() or num_servers == 1 or rows < num_servers:
        return [(kid % num_servers, 0, rows * row)]
    bounds = np.linspace(0, rows, num_servers + 1).astype(np.int64) * row
    return [(s, int(bounds[s]), int(bounds[s + 1])) for s in range(num_servers)]


class Request(Task):
    """One op on one key, sent to every server holding a part of it.

    ``parts`` lists ``(server world rank, part, payload view or None, reply view
    or None)``; a PULL writes the answer into the reply views.
    """

    def __init__(self, op: int, kid: int, parts: list, label: str = "", key=None, dtype: str = "",
                 blob: bytes = b"", row_size: int = 0, row_ids: dict | None = None) -> None:
        super().__init__()
        self.op = op
        self.kid = kid
        self.parts = parts
        self.key, self.dtype = key, dtype
        # extra bytes: an init's str key (UTF-8), or the pickled optimizer of set_optimizer, or (row ops)
        # each part's row ids, int64, relative to the part (``row_ids[part]``)
        self.meta = key.encode() if op == INIT and isinstance(key, str) else blob
        self.row_size, self.row_ids = row_size, row_ids or {}
        self.name = f"kvstore {OP_NAMES[op]}{' of key ' + label if label else ''}"

    def start(self, comm: Comm) -> None:
        world = comm.world
        self.pending: dict[int, list] = {}
        self.status: dict[int, np.ndarray] = {}
        meta = np.frombuffer(self.meta, np.uint8) if self.meta else None
        for server, part, payload, reply in self.parts:
            if self.op in ROW_OPS:
                meta = self.row_ids[part].view(np.uint8)
            tag = comm.new_tag()
            reqs = []
            if self.op in (PULL, PULL_RSP):
                reqs.append(world.Irecv(_bytes(reply), source=server, tag=tag))
            elif self.op != STOP:
                status = self.status[server] = np.zeros(1, np.int64)
                reqs.append(world.Irecv(status, source=server, tag=tag))
            nbytes = payload.nbytes if payload is not None else 0
            key = self.key if self.op == INIT else self.row_size if self.op in ROW_OPS else None
            header = np.frombuffer(encode_header(self.op, self.kid, part, nbytes, tag,
                                                 0 if meta is None else meta.nbytes, key, self.dtype), np.uint8)
            reqs.append(world.Isend(header, dest=server, tag=TAG_REQ))
            if meta is not None and meta.nbytes:
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

    def waiting_ranks(self) -> list[int]:
        return sorted(self.pending)

    def waiting_for(self) -> str:
        return "server rank" + ("s " if len(self.pending) > 1 else " ") + ", ".join(map(str, sorted(self.pending)))


class _ServerError(MXNetError):
    fatal = False  # the server answered: the protocol is still in step


def _bytes(arr: np.ndarray) -> np.ndarray:
    """A flat byte view (MPI sends raw bytes; both ends know the dtype)."""
    return arr.reshape(-1).view(np.uint8)
