"""GPU arrays in ``dist_device_sync``: NCCL collectives, bootstrapped over MPI.

The first time a worker's ``dist_device_sync`` store meets a GPU array on a
device, it registers a *setup* task (sequenced like every collective, so every
worker reaches it at the same point of the program).  On the comm thread the
workers allgather whether they can use NCCL (CuPy with NCCL, one GPU per rank:
NCCL refuses two ranks on one GPU) and agree: either rank 0 makes an NCCL
unique id, MPI broadcasts it, and each worker builds a
``cupy.cuda.nccl.NcclCommunicator(workers, id, rank)`` on its device; or every
worker logs why not and that device's arrays go through host memory.

Each collective on a GPU array keeps the header exchange of
:class:`~.collective.Collective` (the mismatch and stall errors) and then, on
the comm thread, launches ``ncclAllReduce`` (or ``ncclBcast``) on the engine
op's stream (``RunContext.stream``), so it is ordered after the kernels that
produced the gradient without a host wait.  The op completes at once, with a
device event recorded on its vars as the engine does after a GPU op: later
device ops wait on the event, host readers synchronise on it.

Nothing here imports CuPy until a GPU array is pushed; without CuPy, NCCL or a
GPU the stores behave exactly as before.  ``MXASYNC_KVSTORE_NCCL=0`` forces the
host path.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

import numpy as np

from ...runtime.streams import device_hooks
from .collective import ALLREDUCE, BCAST, NCCL_SETUP, Collective, push_collective
from .comm import Comm

__all__ = ["on_gpu", "gpu_collective", "local_status", "agree", "GpuCollective", "NcclSetup"]

_log = logging.getLogger(__name__)
_NCCL_TYPES = {"int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32", "uint32": "NCCL_UINT32",
               "int64": "NCCL_INT64", "uint64": "NCCL_UINT64", "float16": "NCCL_FLOAT16",
               "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64"}


def _libs() -> tuple[Any, Any]:
    """``(cupy, cupy.cuda.nccl)``; tests replace this with fakes."""
    import cupy
    from cupy.cuda import nccl

    return cupy, nccl


def on_gpu(arr) -> bool:
    """Does this NDArray live on a GPU (the only arrays this module handles)?"""
    return arr.context.device_type == "gpu"


def local_status(device_id: int) -> dict:
    """What this worker brings to the agreement: can it use NCCL, and on which GPU (host, PCI bus id)."""
    info = {"ok": False, "why": "", "gpu": (socket.gethostname(), f"device {device_id}")}
    if os.environ.get("MXASYNC_KVSTORE_NCCL", "1").strip().lower() in ("0", "false", "no", "off"):
        info["why"] = "MXASYNC_KVSTORE_NCCL=0"
        return info
    try:
        cupy, nccl = _libs()
        if not getattr(nccl, "available", True):
            raise ImportError("CuPy was built without NCCL")
        info["gpu"] = (socket.gethostname(), str(cupy.cuda.Device(device_id).pci_bus_id))
    except Exception as exc:  # noqa: BLE001 - any failure means: no NCCL here
        info["why"] = f"{type(exc).__name__}: {exc}"
        return info
    info["ok"] = True
    return info


def agree(infos: list[dict]) -> str:
    """Every worker's :func:`local_status` -> ``''`` (use NCCL) or why not (the same on every worker).

    >>> agree([{"ok": True, "gpu": ("a", "0")}, {"ok": True, "gpu": ("b", "0")}])
    ''
    >>> agree([{"ok": True, "gpu": ("a", "0")}, {"ok": True, "gpu": ("a", "0")}])
    'workers 0 and 1 share GPU 0 on a (NCCL needs one GPU per rank)'
    """
    for rank, info in enumerate(infos):
        if not info["ok"]:
            return f"worker {rank} has no NCCL ({info['why']})"
    seen: dict[tuple, int] = {}
    for rank, info in enumerate(infos):
        gpu = tuple(info["gpu"])
        if gpu in seen:
            return f"workers {seen[gpu]} and {rank} share GPU {gpu[1]} on {gpu[0]} (NCCL needs one GPU per rank)"
        seen[gpu] = rank
    return ""


class _State:
    """Per process: which devices got a setup task (pushing thread) and their communicators (comm thread)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.slots: dict[int, int] = {}  # device id -> slot (the order in which this worker met its GPUs)
        self.comms: dict[int, Any] = {}  # slot -> NcclCommunicator, or None: through host memory


def _state(comm: Comm) -> _State:
    state = getattr(comm, "nccl_state", None)
    if state is None:
        with comm._seq_lock:
            state = getattr(comm, "nccl_state", None)
            if state is None:
                state = comm.nccl_state = _State()
    return state


def gpu_collective(comm: Comm, ctx, kind: int, key, buf, send=None, round_: int = 0, count: int = 0,
                   priority: int = 0) -> GpuCollective:
    """The task of a collective on GPU array data ``buf`` on ``ctx``; the first one on a device
    pushes that device's setup before it (both sequenced, so every worker does the same)."""
    state = _state(comm)
    with state.lock:
        slot = state.slots.get(ctx.device_id)
        fresh = slot is None
        if fresh:
            slot = state.slots[ctx.device_id] = len(state.slots)
    if fresh:
        push_collective(comm, NcclSetup(state, slot, ctx.device_id), ctx, [], [], priority)
    return GpuCollective(state, slot, kind, key=key, buf=buf, send=send, round_=round_, count=count)


class NcclSetup(Collective):
    """Agree on NCCL for one device slot; build its communicator (rank 0's unique id over MPI)."""

    def __init__(self, state: _State, slot: int, device_id: int) -> None:
        super().__init__(NCCL_SETUP, key=f"__nccl_setup_{slot}__", buf=np.zeros(1, np.int64))
        self.state, self.slot, self.device_id = state, slot, device_id

    def execute(self, comm: Comm) -> None:
        infos = comm.group.allgather(local_status(self.device_id))
        why = agree(infos)
        self.state.comms[self.slot] = None
        if why:
            _log.warning("mxasync dist_device_sync: worker %d: GPU arrays on gpu(%d) go through host memory: %s",
                         comm.rank, self.device_id, why)
            return
        cupy, nccl = _libs()
        uid = nccl.get_unique_id() if comm.rank == 0 else None
        uid = comm.group.bcast(uid, root=0)
        with cupy.cuda.Device(self.device_id):
            self.state.comms[self.slot] = nccl.NcclCommunicator(comm.size, uid, comm.rank)
        _log.info("mxasync dist_device_sync: worker %d: NCCL on gpu(%d) among %d workers",
                  comm.rank, self.device_id, comm.size)


class GpuCollective(Collective):
    """A :class:`Collective` on GPU arrays: NCCL on the op's stream, or staged through host memory."""

    def __init__(self, state: _State, slot: int, kind: int, **kw) -> None:
        super().__init__(kind, **kw)
        self.state, self.slot = state, slot

    def execute(self, comm: Comm) -> None:
        cupy, nccl = _libs()
        stream = getattr(self, "stream", None)
        sync = stream is None  # no stream from the engine (no device hooks): finish before completing
        if sync:
            stream = cupy.cuda.get_current_stream()
        nc = self.state.comms.get(self.slot)
        dtype = getattr(nccl, _NCCL_TYPES.get(np.dtype(self.buf.dtype).name, "-"), None)
        with cupy.cuda.Device(self.buf.device.id):
            if nc is not None and dtype is not None and self.kind in (ALLREDUCE, BCAST):
                self._nccl(nc, nccl, dtype, stream)
            else:  # no NCCL (every worker agreed) or a dtype NCCL lacks (the same on every worker)
                self._staged(comm, stream)
            if sync:
                stream.synchronize()
            else:
                _record(stream, getattr(self, "vars", ((), ())))

    def _nccl(self, nc, nccl, dtype, stream) -> None:
        buf = self.buf
        if self.kind == ALLREDUCE:
            send = buf if self.send_buf is None else self.send_buf
            nc.allReduce(send.data.ptr, buf.data.ptr, buf.size, dtype, nccl.NCCL_SUM, stream.ptr)
        else:
            nc.bcast(buf.data.ptr, buf.size, dtype, self.root, stream.ptr)

    def _staged(self, comm: Comm, stream) -> None:
        """Copy to the host (waiting for the stream), run the MPI collective, copy back on the stream."""
        buf, send = self.buf, self.send_buf
        host = (buf if send is None else send).get(stream=stream)
        self.buf, self.send_buf = host, None
        try:
            super().execute(comm)
        finally:
            self.buf, self.send_buf = buf, send
        buf.set(host, stream=stream)


def _record(stream, vars_) -> None:
    """Tell the engine the op's device work ends at an event on ``stream`` (as it does after a GPU op)."""
    hooks = device_hooks("gpu")
    event = (stream, hooks.record_event(stream))
    const_vars, mutate_vars = vars_
    for v in mutate_vars:
        v._event = event
        v._read_events = ()
    for v in const_vars:
        v._read_events += (event,)
