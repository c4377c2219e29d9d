"""row_sparse keys on the MPI stores: collectives that move only the stored rows.

A row_sparse value holds a different number of rows on each worker, so a
``dist_sync`` push cannot be one fixed-size Allreduce.  :class:`SparseCollective`
is still *one* sequenced collective (one header, checked like every other: the
same key, kind and dense size on every worker, liveness and timeouts alike), whose
data step runs in stages on the comm thread:

* ``ALLREDUCE`` (a push): allgather each worker's row count, then allgatherv the
  row indices and the rows; every worker sums the gathered rows by index in the
  same order, so each gets the same row_sparse sum over the union of the rows
  (MXNet's server sums the pushed row_sparse gradients the same way);
* ``BCAST`` (an init): worker 0's row count, then its indices and rows.

Bytes travel as ``uint8`` (so float16 rows need no MPI type), and only the rows
that exist cross the wire.

On ``dist_async`` a row_sparse key lives dense on the servers (cut into whole rows
when it is big, see :func:`.rpc.row_shards`); :class:`RowRequest` sends each server
just the pushed rows of its part, which it updates lazily, or asks it for just the
rows of a ``row_sparse_pull``.

>>> import numpy as np
>>> v = sum_gathered(np, (5, 2), np.array([3, 1, 3]), np.ones((3, 2), np.float32))
>>> v.indices.tolist(), v.data[:, 0].tolist()
([1, 3], [1.0, 2.0])
"""

from __future__ import annotations

import numpy as np

from ...base import MXNetError
from ...operator.sparse.formats import IDX, SparseStore, SparseValue, rsp_value
from .collective import ALLREDUCE, BCAST, Collective, key_id
from .comm import Comm
from .rpc import PULL_RSP, PUSH_RSP, Request

__all__ = ["SparseCollective", "RowRequest", "sum_gathered", "check_sparse_key"]


def check_sparse_key(key, arr, store_type: str) -> None:
    """A distributed store keeps row_sparse keys in host memory only (csr is no KVStore type in MXNet)."""
    if arr.stype == "csr":
        raise MXNetError(f"kvstore.init: key {key!r} is csr; {store_type} stores dense and row_sparse values "
                         "only (as MXNet's KVStore)")
    if arr.context.device_type not in ("cpu", "cpu_pinned", "cpu_shared"):
        raise MXNetError(f"kvstore.init: row_sparse key {key!r} is on {arr.context}; {store_type} keeps "
                         "row_sparse keys in host memory: init it from a CPU array")


def sum_gathered(xp, shape: tuple, indices, rows) -> SparseValue:
    """The row_sparse sum of ``rows`` at (possibly repeated, unsorted) row ``indices``."""
    uniq, where = xp.unique(indices.astype(IDX), return_inverse=True)
    total = xp.zeros((uniq.shape[0], *shape[1:]), rows.dtype)
    xp.add.at(total, where.reshape(-1), rows)
    return rsp_value(xp, shape, total, uniq)


class SparseCollective(Collective):
    """A push (``ALLREDUCE``: sum) or init (``BCAST`` from worker 0) of the row_sparse value in ``store``
    (a :class:`SparseStore` written in place, on the comm thread, as the collective's engine op allows)."""

    def __init__(self, kind: int, key, store: SparseStore, round_: int = 0, count: int = 0) -> None:
        if kind not in (ALLREDUCE, BCAST):
            raise ValueError(f"SparseCollective: kind {kind} is neither ALLREDUCE nor BCAST")
        super().__init__(kind, key=key, round_=round_, count=count)
        self.store = store
        self.name += " (row_sparse)"

    def start(self, comm: Comm) -> None:
        super().start(comm)
        # the dense size goes in the header: workers whose key differs in size disagree before any data moves
        self.header[2] = self.store.size * self.store.dtype.itemsize

    def execute(self, comm: Comm):
        s = self.store
        row_bytes = int(np.prod(s.shape[1:], dtype=np.int64)) * s.dtype.itemsize
        if self.kind == BCAST:
            yield from self._bcast(comm, s, row_bytes)
        else:
            yield from self._allreduce(comm, s, row_bytes)

    def _bcast(self, comm: Comm, s: SparseStore, row_bytes: int):
        group, root = comm.group, self.root
        mine = comm.rank == root
        v = s.value
        n = np.array([v.nnz if mine else 0], np.int64)
        yield group.Ibcast(n, root=root)
        if mine:
            idx, data = np.ascontiguousarray(v.indices, IDX), np.ascontiguousarray(v.data)
        else:
            idx, data = np.empty(int(n[0]), IDX), np.empty((int(n[0]), *s.shape[1:]), s.dtype)
        yield [group.Ibcast(idx, root=root), group.Ibcast(_raw(data), root=root)]
        if not mine:
            s.set(rsp_value(np, s.shape, data, idx))

    def _allreduce(self, comm: Comm, s: SparseStore, row_bytes: int):
        group = comm.group
        v = s.value
        idx, data = np.ascontiguousarray(v.indices, IDX), np.ascontiguousarray(v.data)
        counts = np.empty(comm.size, np.int64)
        yield group.Iallgather(np.array([idx.shape[0]], np.int64), counts)
        total = int(counts.sum())
        all_idx = np.empty(total, IDX)
        all_rows = np.empty((total, *s.shape[1:]), s.dtype)
        yield [group.Iallgatherv(_raw(idx), [_raw(all_idx), (counts * idx.itemsize).tolist()]),
               group.Iallgatherv(_raw(data), [_raw(all_rows), (counts * row_bytes).tolist()])]
        s.set(sum_gathered(np, s.shape, all_idx, all_rows))


def _raw(arr: np.ndarray) -> np.ndarray:
    return arr.reshape(-1).view(np.uint8)


class RowRequest(Request):
    """A row_sparse push (``PUSH_RSP``: the rows of ``store``) or ``row_sparse_pull`` (``PULL_RSP``: the rows
    ``row_ids`` into ``store``) to the servers holding the key's parts ``(server rank, start, stop)``.
    :meth:`prepare` reads the values when the engine op runs; the parts without rows send nothing."""

    def __init__(self, op: int, key, parts: list, store: SparseStore, row_ids: np.ndarray | None = None) -> None:
        row = int(np.prod(store.shape[1:], dtype=np.int64))
        super().__init__(op, key_id(key), [], repr(key), key=key, dtype=store.dtype.str, row_size=row)
        self.store, self.ids, self.cuts = store, row_ids, parts
        self.want = self.rows = None

    def prepare(self) -> None:
        s, row = self.store, self.row_size
        if self.op == PUSH_RSP:
            v = s.value
            if v.nnz and (int(v.indices.min()) < 0 or int(v.indices.max()) >= s.shape[0]):
                raise MXNetError(f"kvstore.push: the row_sparse value of key {self.key!r} holds rows "
                                 f"{int(v.indices.min())}..{int(v.indices.max())}, outside [0, {s.shape[0]})")
            if v.nnz > 1 and not np.all(np.diff(v.indices) > 0):
                v = sum_gathered(np, s.shape, v.indices, v.data)
            ids, data = v.indices, np.ascontiguousarray(v.data).reshape(-1, row)
        else:
            ids = np.unique(np.asarray(self.ids).astype(IDX).reshape(-1))
            if ids.size and (ids[0] < 0 or ids[-1] >= s.shape[0]):
                raise MXNetError(f"kvstore.row_sparse_pull: row_ids of key {self.key!r} must lie in "
                                 f"[0, {s.shape[0]}), got {ids[0]}..{ids[-1]}")
            self.want, self.rows = ids, np.zeros((ids.size, row), s.dtype)
        for i, (server, start, stop) in enumerate(self.cuts):
            lo, hi = np.searchsorted(ids, [start // row, stop // row])
            if hi == lo:
                continue
            self.row_ids[i] = np.ascontiguousarray(ids[lo:hi] - start // row, IDX)
            if self.op == PUSH_RSP:
                self.parts.append((server, i, np.ascontiguousarray(data[lo:hi]), None))
            else:
                self.parts.append((server, i, None, self.rows[lo:hi]))

    def poll(self, comm: Comm) -> bool:
        done = super().poll(comm)
        if done and self.op == PULL_RSP:
            s = self.store
            s.set(rsp_value(np, s.shape, self.rows.reshape(-1, *s.shape[1:]), self.want))
        return done
