"""``dist_sync`` and ``dist_device_sync``: MXNet's synchronous data-parallel store on MPI Allreduce.

Each worker keeps a full copy of every key.  A push sums the worker's own
values (the local store's reduce), then an Allreduce sums the workers' sums;
the updater then runs on every worker on identical inputs, so the copies stay
equal and a pull is a local copy.  That is MXNet's ``dist_sync`` result (the
server applies the update once per round to the sum of all pushes) without the
round trip to a server: ``benchmarks/kvstore.py`` measures both designs' costs.

``init`` takes worker 0's value (a broadcast, which also lines everyone up);
``set_optimizer`` ships worker 0's optimizer to the others when it pickles.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Sequence

import numpy as np

from ...base import MXNetError
from ...ndarray.ndarray import NDArray
from ...runtime.engine import Engine
from ..base import Key, register
from ..local import KVStoreLocal
from .collective import ALLREDUCE, BCAST, Collective, push_agree, push_barrier, push_collective
from .comm import Comm, get_comm, on_exit
from .compression import GradientCompression
from .nccl import gpu_collective, on_gpu
from .sparse import SparseCollective, check_sparse_key

__all__ = ["DistWorkerStore", "KVStoreDistSync", "worker_comm"]


_crashed = [False]


def worker_comm() -> Comm:
    """The process's communicator, with the exit handshake that catches unequal batch counts."""
    comm = get_comm()
    if not getattr(comm, "_exit_hook", False):
        comm._exit_hook = True
        on_exit(_finish)
        _watch_uncaught()
    return comm


def _watch_uncaught() -> None:
    """Remember an uncaught exception, so the exit handshake tells the others this worker crashed."""
    previous = sys.excepthook

    def hook(*exc_info) -> None:
        _crashed[0] = True
        previous(*exc_info)

    sys.excepthook = hook


def _finish(comm: Comm) -> None:
    """At exit every worker says so; a worker still pushing learns that the others ran fewer batches."""
    from .collective import FINISH
    from .server import stop_servers

    if comm.broken is not None:
        return
    comm.run(Collective(FINISH, count=comm.push_count, crashed=_crashed[0]))
    stop_servers(comm)


def _nothing(rctx) -> None:
    """A pull the comm thread already did: the op only orders later uses of ``out`` after the push."""


def _direct(src: NDArray, dst: NDArray) -> bool:
    """Can MPI sum ``src`` straight into ``dst`` (host memory, same dtype, contiguous, not aliased)?"""
    host = ("cpu", "cpu_pinned", "cpu_shared")
    if src.stype != "default" or dst.stype != "default":
        return False
    return (src.context.device_type in host and dst.context.device_type in host and src._chunk is not dst._chunk
            and np.dtype(src.dtype) == np.dtype(dst.dtype) and np.dtype(dst.dtype) != np.float16
            and src._data.flags.c_contiguous and dst._data.flags.c_contiguous)


class DistWorkerStore(KVStoreLocal):
    """What every MPI store of a worker shares: the communicator, rank and size, and a barrier
    that is an engine op (so async code can await it)."""

    def __init__(self, kv_type: str):
        super().__init__(kv_type)
        self._comm = worker_comm()

    @property
    def rank(self) -> int:
        return self._comm.rank

    @property
    def num_workers(self) -> int:
        return self._comm.size

    def barrier(self) -> None:
        """Wait until every worker got here (after what this worker pushed before it)."""
        Engine.get().wait_for_var(self._push_barrier())

    async def barrier_async(self) -> None:
        """``barrier()`` for async code: the event loop runs on while the workers meet."""
        await self._push_barrier()

    _barrier = barrier

    def _push_barrier(self):
        """The barrier op (collectives are sequenced, so it follows every earlier push)."""
        return push_barrier(self._comm)


@register("dist_sync", "dist_device_sync", "dist_sync_device")
class KVStoreDistSync(DistWorkerStore):
    """Synchronous data-parallel store on MPI collectives (see the module docstring)."""

    def __init__(self, kv_type: str = "dist_sync"):
        super().__init__(kv_type)
        self._on_device = "device" in kv_type
        self._rounds: dict[Key, int] = {}
        self._compression: GradientCompression | None = None
        self._fusable: dict[Key, tuple[Collective, NDArray]] = {}  # a key's pending push (and its array)

    def is_capable(self, capability: str) -> bool:
        return capability.lower() == "optimizer"

    # -- the steps ------------------------------------------------------------------
    def _init_key(self, key: Key, value: NDArray) -> None:
        if value.stype != "default":
            check_sparse_key(key, value, self.type)
        super()._init_key(key, value)
        stored = self._store[key]
        self._check_dtype(key, stored)
        push_agree(self._comm, key, stored)  # same dtype and shape on every worker, checked once per key
        if stored.stype != "default":  # row_sparse: worker 0's rows (see .sparse)
            task = SparseCollective(BCAST, key, stored._data)
        elif on_gpu(stored):  # dist_device_sync with a GPU value: NCCL (see .nccl)
            task = gpu_collective(self._comm, stored.context, BCAST, key, stored._data)
        else:
            task = Collective(BCAST, key=key, buf=stored._data)
        push_collective(self._comm, task, stored.context, [], [stored._chunk.var])

    def _reduce(self, key: Key, values: Sequence[NDArray], dst: NDArray, priority: int) -> None:
        comm = self._comm
        rnd = self._rounds[key] = self._rounds.get(key, 0) + 1
        src = values[0]
        if dst.stype != "default":
            self._reduce_sparse(key, values, dst, rnd, priority)
            return
        if self._compression is None and on_gpu(dst):
            self._reduce_gpu(key, values, dst, rnd, priority)
            return
        if self._compression is None and len(values) == 1 and _direct(src, dst):
            # one local value: MPI reads it directly, saving a copy of every gradient
            comm.push_count += 1
            task = Collective(ALLREDUCE, key=key, buf=dst._data, send=src._data, round_=rnd, count=comm.push_count)
            push_collective(comm, task, dst.context, [src._chunk.var], [dst._chunk.var], priority)
            if dst is self._store.get(key):
                self._fusable[key] = (task, src)
            return
        self._fusable.pop(key, None)
        super()._reduce(key, values, dst, priority)
        if self._compression is not None:
            self._compression.allreduce(comm, key, dst, rnd, priority)
            return
        comm.push_count += 1
        task = Collective(ALLREDUCE, key=key, buf=dst._data, round_=rnd, count=comm.push_count)
        push_collective(comm, task, dst.context, [], [dst._chunk.var], priority)

    def _reduce_sparse(self, key: Key, values: Sequence[NDArray], dst: NDArray, rnd: int, priority: int) -> None:
        """A row_sparse sum: the local sum, then the workers' rows summed over their union (see .sparse)."""
        if self._compression is not None:
            raise MXNetError(f"kvstore.push: key {key!r} is row_sparse; gradient compression takes dense values "
                             "only (as in MXNet)")
        comm = self._comm
        self._fusable.pop(key, None)
        super()._reduce(key, values, dst, priority)
        comm.push_count += 1
        task = SparseCollective(ALLREDUCE, key, dst._data, round_=rnd, count=comm.push_count)
        push_collective(comm, task, dst.context, [], [dst._chunk.var], priority)

    def _reduce_gpu(self, key: Key, values: Sequence[NDArray], dst: NDArray, rnd: int, priority: int) -> None:
        """dist_device_sync on a GPU: sum locally on the device, then NCCL sums across workers (see .nccl)."""
        comm, src = self._comm, values[0]
        self._fusable.pop(key, None)
        direct = (len(values) == 1 and src.context == dst.context and src._chunk is not dst._chunk
                  and np.dtype(src.dtype) == np.dtype(dst.dtype) and src._data.flags.c_contiguous)
        if not direct:
            super()._reduce(key, values, dst, priority)
        comm.push_count += 1
        task = gpu_collective(comm, dst.context, ALLREDUCE, key, dst._data, send=src._data if direct else None,
                              round_=rnd, count=comm.push_count, priority=priority)
        push_collective(comm, task, dst.context, [src._chunk.var] if direct else [], [dst._chunk.var], priority)

    def _broadcast(self, key: Key, src: NDArray, outs: Sequence[NDArray], priority: int) -> None:
        """A pull right after a push: the comm thread fills ``out`` as soon as the sum arrived
        (no engine op per copy, no copy racing the next collective for the cores).  A pull into
        the pushed array itself (``pushpull(key, grad)``) sums in that array and copies it into
        the store, a copy fewer."""
        task, pushed = self._fusable.get(key, (None, None))
        engine = Engine.get()
        rest = []
        for o in outs:
            if task is not None and getattr(engine._tls, "bulk", None) is None and self._fuse(task, pushed, src, o):
                # the no-op orders every later use of ``out`` after the push
                engine.push_sync(_nothing, o.context, [src._chunk.var], [o._chunk.var], priority=priority,
                                 name=f"kvstore_pull[{key}]")
            else:
                rest.append(o)
        if task is not None and rest:
            self._fusable.pop(key, None)  # it began (or cannot take these outs): copy as before
        if rest:
            super()._broadcast(key, src, rest, priority)

    @staticmethod
    def _fuse(task: Collective, pushed: NDArray, src: NDArray, out: NDArray) -> bool:
        """Let the comm thread write ``out`` during the push: only when nothing else may touch it
        meanwhile (no other op pending on it), so no engine op can observe the early write."""
        var = out._chunk.var
        if out is pushed:  # the push, not yet done, is the last op on it: nothing reads it beside the push
            return var.last_op_is_sole_reader() and task.attach_in_place()
        return _direct(src, out) and not var.pending and task.attach_out(out._data)

    @staticmethod
    def _check_dtype(key: Key, arr: NDArray) -> None:
        dense = arr.stype == "default"
        if np.dtype(arr.dtype).kind not in "fiub" or (dense and not arr._data.flags.c_contiguous):
            raise MXNetError(f"kvstore.init: key {key!r} has dtype {arr.dtype}; the distributed store "
                             "sums numeric arrays only")

    # -- optimizer and compression ----------------------------------------------------
    def set_optimizer(self, optimizer) -> None:
        """Every worker runs worker 0's optimizer on the summed gradients (MXNet ships it to the servers)."""
        try:
            blob = pickle.dumps(optimizer)
        except Exception:  # noqa: BLE001 - an unpicklable optimizer: each worker keeps its own
            blob = b""
        shipped = self._bcast_bytes(blob)
        if shipped and self.rank != 0:
            optimizer = pickle.loads(shipped)
        super().set_optimizer(optimizer)

    def _bcast_bytes(self, blob: bytes) -> bytes:
        size = np.array([len(blob)], np.int64)
        self._comm.run(Collective(BCAST, key="__optimizer_size__", buf=size))
        if not size[0]:
            return b""
        data = np.frombuffer(blob, np.uint8).copy() if self.rank == 0 else np.empty(int(size[0]), np.uint8)
        self._comm.run(Collective(BCAST, key="__optimizer__", buf=data))
        return data.tobytes()

    def set_gradient_compression(self, compression_params: dict) -> None:
        """``{'type': '2bit', 'threshold': t}``: push 2-bit codes with error feedback (MXNet's scheme)."""
        self._compression = GradientCompression.create(compression_params)
