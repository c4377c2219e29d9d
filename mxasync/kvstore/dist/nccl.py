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

A launched NCCL kernel waits on the device for its peers, and host readers wait
on its event, so a peer that stalls or dies *after* its header would hang them.
The comm thread therefore watches every launch (:class:`NcclWatch`, NCCL's own
advice and what PyTorch's watchdog does): when NCCL reports an asynchronous
error, or the event is not done while some peer has shown no sign of life for
``MXASYNC_KVSTORE_TIMEOUT`` (the heartbeat rule every other wait follows: a
peer whose kernel is only queued behind long compute is waited for), it aborts
the NCCL communicator (the kernel returns) and ends the job with a message
naming the collective, since its result can no longer be trusted.

Nothing here imports CuPy until a GPU array is pushed; without CuPy, NCCL or a
GPU the stores behave exactly as before.  ``MXASYNC_KVSTORE_NCCL=0`` forces the
host path.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
from typing import Any

import numpy as np

from ...runtime.streams import device_hooks
from .collective import ALLREDUCE, BCAST, NCCL_SETUP, Collective, push_collective
from .comm import Comm, Task

__all__ = ["on_gpu", "gpu_collective", "local_status", "agree", "GpuCollective", "NcclSetup", "NcclWatch"]

_log = logging.getLogger(__name__)
_INFO_BYTES = 1024  # one worker's status in the setup's allgather (JSON, zero-padded)
_UID_BYTES = 128  # NCCL_UNIQUE_ID_BYTES: cupy's get_unique_id() is a tuple of 128 char values
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
        info["why"] = f"{type(exc).__name__}: {exc}"[:300]  # it travels in a fixed-size message
        return info
    info["ok"] = True
    return info


def _parse_status(row: np.ndarray) -> dict:
    """One worker's :func:`local_status` from its fixed-size JSON bytes (a truncated one means: no NCCL)."""
    try:
        return json.loads(row.tobytes().rstrip(b"\0").decode())
    except ValueError:
        return {"ok": False, "why": "its NCCL status did not fit the message", "gpu": ("?", "?")}


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

    def execute(self, comm: Comm):
        # fixed-size messages through non-blocking collectives, so a stalled peer hits the deadline
        mine = json.dumps(local_status(self.device_id)).encode()[:_INFO_BYTES].ljust(_INFO_BYTES, b"\0")
        gathered = np.zeros((comm.size, _INFO_BYTES), np.uint8)
        yield comm.group.Iallgather(np.frombuffer(mine, np.uint8), gathered)
        infos = [_parse_status(row) for row in gathered]
        why = agree(infos)
        self.state.comms[self.slot] = None
        if why:
            _log.warning("mxasync dist_device_sync: worker %d: GPU arrays on gpu(%d) go through host memory: %s",
                         comm.rank, self.device_id, why)
            return
        cupy, nccl = _libs()
        uid = np.zeros(_UID_BYTES, np.int64)
        if comm.rank == 0:
            uid[:] = nccl.get_unique_id()
        yield comm.group.Ibcast(uid, root=0)
        uid = tuple(int(x) for x in uid)
        with cupy.cuda.Device(self.device_id):
            self.state.comms[self.slot] = nccl.NcclCommunicator(comm.size, uid, comm.rank)
        _log.info("mxasync dist_device_sync: worker %d: NCCL on gpu(%d) among %d workers",
                  comm.rank, self.device_id, comm.size)


class GpuCollective(Collective):
    """A :class:`Collective` on GPU arrays: NCCL on the op's stream, or staged through host memory."""

    def __init__(self, state: _State, slot: int, kind: int, **kw) -> None:
        super().__init__(kind, **kw)
        self.state, self.slot = state, slot

    def execute(self, comm: Comm):
        cupy, nccl = _libs()
        stream = getattr(self, "stream", None)
        sync = stream is None  # no stream from the engine (no device hooks): finish before completing
        if sync:
            stream = cupy.cuda.get_current_stream()
        nc = self.state.comms.get(self.slot)
        dtype = getattr(nccl, _NCCL_TYPES.get(np.dtype(self.buf.dtype).name, "-"), None)
        device = cupy.cuda.Device(self.buf.device.id)
        launched = nc is not None and dtype is not None and self.kind in (ALLREDUCE, BCAST)
        if launched:
            with device:
                self._nccl(nc, nccl, dtype, stream)
        else:  # no NCCL (every worker agreed) or a dtype NCCL lacks (the same on every worker)
            yield from self._staged(comm, stream, device)
        with device:
            if sync:
                stream.synchronize()
                return
            event = _record(stream, getattr(self, "vars", ((), ())))
        if launched:
            comm.submit(NcclWatch(comm, self.state, self.slot, event, self.name))

    def _nccl(self, nc, nccl, dtype, stream) -> None:
        buf = self.buf
        if self.kind == ALLREDUCE:
            send = buf if self.send_buf is None else self.send_buf
            nc.allReduce(send.data.ptr, buf.data.ptr, buf.size, dtype, nccl.NCCL_SUM, stream.ptr)
        else:
            nc.bcast(buf.data.ptr, buf.size, dtype, self.root, stream.ptr)

    def _staged(self, comm: Comm, stream, device):
        """Copy to the host (waiting for the stream), run the MPI collective, copy back on the stream."""
        buf, send = self.buf, self.send_buf
        with device:
            host = (buf if send is None else send).get(stream=stream)
        self.buf, self.send_buf = host, None
        try:
            yield from super().execute(comm)
        finally:
            self.buf, self.send_buf = buf, send
        with device:
            buf.set(host, stream=stream)


def _record(stream, vars_):
    """Tell the engine the op's device work ends at an event on ``stream`` (as it does after a
    GPU op); returns that event."""
    hooks = device_hooks("gpu")
    recorded = hooks.record_event(stream)
    event = (stream, recorded)
    const_vars, mutate_vars = vars_
    for v in mutate_vars:
        v._event = event
        v._read_events = ()
    for v in const_vars:
        v._read_events += (event,)
    return recorded


class NcclWatch(Task):
    """The comm thread's watch over one launched NCCL collective (see the module docstring).

    Done when the event recorded after the launch is; an NCCL asynchronous error, or a peer
    silent for the timeout while the event is pending, aborts the communicator and the job.
    """

    def __init__(self, comm: Comm, state: _State, slot: int, event, name: str) -> None:
        super().__init__()
        self.comm, self.state, self.slot, self.event = comm, state, slot, event
        self.name = f"{name} (NCCL)"
        self.armed = True  # nothing to wait for: the kernel is queued already

    def start(self, comm: Comm) -> None:
        """Nothing to send: the kernel was launched by the collective."""

    def poll(self, comm: Comm) -> bool:
        nc = self.state.comms.get(self.slot)
        check = getattr(nc, "check_async_error", None)
        if check is not None:
            check()  # raises on NCCL's asynchronous errors (a peer's connection lost, ...)
        return bool(self.event.done)

    def waiting_ranks(self) -> list[int]:
        """Every other worker (world ranks): the kernel needs all of them, and a busy one is not dead."""
        return [r for r in self.comm.group_ranks if r != self.comm.world_rank]

    def waiting_for(self) -> str:
        return ("the other workers on the GPU: the kernel still waits for them (a worker stalled or "
                "died after announcing this collective)")

    def finish(self, error: BaseException | None) -> None:
        if error is None:
            return
        nc = self.state.comms.get(self.slot)
        try:
            if nc is not None:
                nc.abort()  # the waiting kernel returns, so the device and host readers are freed
        finally:
            self.comm.abort(f"{error}; the NCCL communicator was aborted and the job ends, since the "
                            "collective's result cannot be trusted")
