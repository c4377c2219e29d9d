"""``dist_async``: workers push to server ranks that apply each push at once (MXNet's async SGD).

Server ranks own the keys (big keys cut into one part per server; see
:mod:`.rpc`).  A push sums the worker's own values locally, then sends the sum
to the servers; a pull asks the servers for the current value.  Nothing waits
for the other workers, so each worker sees whatever the servers hold when its
pull arrives; after a ``barrier()`` every worker sees every push made before it.

Start servers with ``mxasync launch -n WORKERS --num-servers S script.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...base import MXNetError
from ...ndarray.ndarray import NDArray, empty
from ...runtime.engine import Engine
from ...runtime.run_context import FnProperty
from ..base import Key, register
from ..local import push_copy
from .collective import key_id, push_agree, push_barrier
from .dist_sync import DistWorkerStore
from .rpc import INIT, PULL, PULL_RSP, PUSH, PUSH_RSP, SETOPT, Request, row_shards, shards
from .sparse import RowRequest, check_sparse_key

__all__ = ["KVStoreDistAsync"]


@register("dist_async", "dist_device_async")
class KVStoreDistAsync(DistWorkerStore):
    """Asynchronous store on server ranks (see the module docstring)."""

    def __init__(self, kv_type: str = "dist_async"):
        super().__init__(kv_type)
        if not self._comm.server_ranks:
            raise MXNetError(f"kvstore {kv_type!r} needs server ranks: start the job with "
                             "'mxasync launch -n WORKERS --num-servers S script.py'")
        self._parts: dict[Key, list] = {}

    def _push_barrier(self, keys=()):
        """The barrier op: after this worker's pushes (they write the stored arrays); before later
        pulls of ``keys`` (they write them too)."""
        stored = [self._store[k]._chunk.var for k in keys]
        pending = [a._chunk.var for k, a in self._store.items() if k not in keys]
        return push_barrier(self._comm, reads=pending, writes=stored)

    # -- the steps ----------------------------------------------------------------
    def init(self, key, value) -> None:
        """Worker 0's values go to the servers; a barrier op orders every worker's later pulls of
        these keys after they arrived (without blocking this thread)."""
        before = set(self._store)
        super().init(key, value)
        self._push_barrier([k for k in self._store if k not in before])

    def _init_key(self, key: Key, value: NDArray) -> None:
        sparse = value.stype != "default"
        if sparse:
            check_sparse_key(key, value, self.type)
        super()._init_key(key, value)  # a local buffer of the right shape for pulls
        stored = self._store[key]
        push_agree(self._comm, key, stored)  # same dtype and shape on every worker, checked once per key
        kid = key_id(key)
        servers = self._comm.server_ranks
        cut = row_shards(kid, stored.shape, len(servers)) if sparse else shards(kid, stored.size, len(servers))
        self._parts[key] = [(servers[s], start, stop) for s, start, stop in cut]
        if self.rank == 0:  # a row_sparse key lives dense on the servers (every row present, as MXNet's)
            dense = stored.tostype("default") if sparse else stored
            self._request(INIT, key, dense, reads=True, dtype=np.dtype(stored.dtype).str)

    def _push_key(self, key: Key, values: Sequence[NDArray], priority: int) -> None:
        stored = self._store[key]
        for v in values:
            if v.shape != stored.shape:
                raise MXNetError(f"kvstore.push: key {key!r} holds shape {stored.shape}, got {v.shape}")
        if stored.stype != "default":  # only the pushed rows travel; the servers update them lazily
            merged = self._merged.get(key)
            if merged is None:
                merged = self._merged[key] = empty(stored.shape, stored.context, stored.dtype, stype="row_sparse")
            self._reduce(key, values, merged, priority)
            self._row_request(RowRequest(PUSH_RSP, key, self._parts[key], merged._data), [merged], [stored],
                              priority)
            return
        if len(values) == 1 and _sendable(values[0], stored):
            merged = values[0]  # one host value: MPI sends it as it is, no copy into a buffer
        else:
            merged = self._merged.get(key)
            if merged is None:
                merged = self._merged[key] = empty(stored.shape, stored.context, stored.dtype)
            self._reduce(key, values, merged, priority)
        self._request(PUSH, key, merged, reads=True, order=stored, priority=priority)

    def _pull_key(self, key: Key, outs: Sequence[NDArray], priority: int) -> None:
        stored = self._store[key]
        for o in outs:
            if o.shape != stored.shape:
                raise MXNetError(f"kvstore.pull: key {key!r} holds shape {stored.shape}, out has shape {o.shape}")
        if stored.stype != "default":  # the servers hold it dense: a dense pull, then the copies
            dense = empty(stored.shape, stored.context, stored.dtype)
            self._request(PULL, key, dense, reads=False, order=stored, priority=priority)
            for o in outs:
                push_copy(dense, o, priority, f"kvstore_pull[{key}]")
            return
        if len(outs) == 1 and _sendable(outs[0], stored) and outs[0]._chunk is not stored._chunk:
            # one host out: the servers' answer lands in it directly (still after this worker's pushes)
            self._request(PULL, key, outs[0], reads=False, order=stored, priority=priority)
            return
        self._request(PULL, key, stored, reads=False, priority=priority)
        super()._pull_key(key, outs, priority)

    def _row_sparse_pull_key(self, key: Key, out: NDArray, row_ids: NDArray, priority: int) -> None:
        stored = self._store[key]
        if stored.stype == "default":
            raise MXNetError(f"kvstore.row_sparse_pull: key {key!r} is dense on dist_async; pull it with pull()")
        if out.shape != stored.shape:
            raise MXNetError(f"kvstore.row_sparse_pull: key {key!r} holds shape {stored.shape}, out has shape "
                             f"{out.shape}")
        rows = row_ids if row_ids.context.device_type == "cpu" else row_ids.as_in_context(stored.context)
        task = RowRequest(PULL_RSP, key, self._parts[key], out._data, rows._data)
        # reads the stored var: after this worker's pushes of the key (they write it)
        self._row_request(task, [rows, stored], [out], priority)

    def _row_request(self, task: RowRequest, reads: Sequence[NDArray], writes: Sequence[NDArray],
                     priority: int) -> None:
        """One engine op that builds the row request from the values when they are ready, then sends it."""
        comm, engine = self._comm, Engine.get()
        task.done_var = engine.new_variable(name=task.name)

        def start(rctx, on_complete) -> None:
            task.prepare()
            comm.arm(task, on_complete)
            comm.submit(task)

        engine.push_async(start, writes[0].context, list(dict.fromkeys(a._chunk.var for a in reads)),
                          [task.done_var, *dict.fromkeys(a._chunk.var for a in writes)], prop=FnProperty.ASYNC,
                          priority=priority, name=task.name)

    def _request(self, op: int, key: Key, arr: NDArray, reads: bool, order: NDArray | None = None,
                 priority: int = 0, dtype: str = "") -> None:
        """Push one engine op that sends ``arr`` to (or, for PULL, fills it from) the key's servers.

        ``order`` is the key's stored array: writing its var orders this push
        before the key's later pulls, so a worker always sees its own pushes.
        """
        flat = arr._data.reshape(-1)
        parts = [(server, i, flat[a:b] if reads else None, None if reads else flat[a:b])
                 for i, (server, a, b) in enumerate(self._parts[key])]
        task = Request(op, key_id(key), parts, repr(key), key=key, dtype=dtype)
        comm = self._comm
        engine = Engine.get()
        task.done_var = engine.new_variable(name=task.name)
        var = arr._chunk.var
        const = [var] if reads else []
        mutate = [task.done_var] + ([] if reads else [var]) + ([order._chunk.var] if order is not None else [])

        def start(rctx, on_complete) -> None:
            comm.arm(task, on_complete)
            comm.submit(task)

        engine.push_async(start, arr.context, const, mutate, prop=FnProperty.ASYNC, priority=priority,
                          name=task.name)

    # -- optimizer ------------------------------------------------------------------
    def set_optimizer(self, optimizer) -> None:
        """Worker 0 pickles ``optimizer`` to every server (it must pickle), then all workers meet."""
        import pickle

        if self.rank == 0:
            try:
                blob = pickle.dumps(optimizer)
            except Exception as exc:  # noqa: BLE001
                raise MXNetError(f"kvstore.set_optimizer: dist_async ships the optimizer to the servers, "
                                 f"so it must pickle: {exc}") from exc
            servers = self._comm.server_ranks
            self._comm.run(Request(SETOPT, 0, [(s, 0, None, None) for s in servers], "optimizer", blob=blob))
        self._optimizer = optimizer
        self.barrier()


def _sendable(arr: NDArray, stored: NDArray) -> bool:
    """Can MPI use ``arr``'s memory as it is (host, contiguous, the stored dtype)?"""
    return (arr.stype == "default" and arr.context.device_type in ("cpu", "cpu_pinned", "cpu_shared")
            and arr._data.flags.c_contiguous
            and np.dtype(arr.dtype) == np.dtype(stored.dtype))
