"""dist_device_sync's NCCL path (mxasync.kvstore.dist.nccl).

The CPU tests drive the selection, agreement and launch logic with fake CuPy /
NCCL / MPI objects and run everywhere.  The ``gpu`` tests run real MPI jobs on
GPUs and skip cleanly without CuPy, a device or mpirun:

* 1 rank on gpu(0): the whole NCCL path (id over MPI, communicator, allreduce and
  bcast on the op's stream, events) with a 1-rank communicator; any 1-GPU machine;
* 2 ranks on gpu(0) and gpu(1): real cross-rank NCCL sums; needs 2 GPUs;
* 2 ranks both on gpu(0): NCCL refuses two ranks on one GPU, so the workers must
  agree on the host path (and still get the right sums); any 1-GPU machine;
* ``MXASYNC_KVSTORE_NCCL=0``: the host path on request.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from mxasync.kvstore.dist import collective, nccl
from mxasync.kvstore.dist.collective import ALLREDUCE, BCAST, NCCL_SETUP
from mxasync.kvstore.dist.mpi import available

SCRIPTS = Path(__file__).parent / "scripts"


# ------------------------------------------------------------------ fakes
class FakeStream:
    def __init__(self, ptr=0xABC):
        self.ptr, self.synced = ptr, 0

    def synchronize(self):
        self.synced += 1


class FakeDevice:
    def __init__(self, device_id):
        self.id = device_id
        self.pci_bus_id = f"0000:0{device_id}:00.0"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class FakeGpuArray:
    """A numpy array dressed as a cupy one (what NCCL and the staging path touch)."""

    def __init__(self, values, device_id=0):
        self.host = np.array(values)
        self.dtype, self.size, self.nbytes = self.host.dtype, self.host.size, self.host.nbytes
        self.device = FakeDevice(device_id)
        self.data = SimpleNamespace(ptr=id(self))
        self.calls = []

    def get(self, stream=None):
        self.calls.append(("get", stream))
        return self.host.copy()

    def set(self, arr, stream=None):
        self.calls.append(("set", stream))
        self.host[...] = arr


class FakeCommunicator:
    def __init__(self, n, uid, rank):
        self.args, self.calls = (n, uid, rank), []

    def allReduce(self, *args):  # noqa: N802 - CuPy's name
        self.calls.append(("allReduce", *args))

    def bcast(self, *args):
        self.calls.append(("bcast", *args))


def fake_libs(available=True):
    stream = FakeStream(ptr=0xD0)
    cuda = SimpleNamespace(Device=FakeDevice, get_current_stream=lambda: stream)
    lib = SimpleNamespace(available=available, NCCL_SUM=100, NCCL_FLOAT32=7, NCCL_FLOAT16=6, NCCL_INT8=0,
                          NCCL_UINT8=1, NCCL_INT32=2, NCCL_UINT32=3, NCCL_INT64=4, NCCL_UINT64=5, NCCL_FLOAT64=8,
                          NcclCommunicator=FakeCommunicator, get_unique_id=lambda: tuple(range(128)))
    return SimpleNamespace(cuda=cuda), lib


class FakeGroup:
    """The workers' communicator as seen from one rank of two; the other rank mirrors this one."""

    def __init__(self, rank, other_info=None, root_uid=None):
        self.rank, self.other_info, self.root_uid, self.calls = rank, other_info, root_uid, []

    # the non-blocking collectives the comm thread uses; each finishes at once (FakeMPI.Request)
    def Iallgather(self, send, recv):  # noqa: N802 - mpi4py's names
        mine = json.loads(send.tobytes().rstrip(b"\0").decode())
        other = self.other_info if self.other_info is not None else dict(mine, gpu=("otherhost", "0"))
        row = json.dumps(other).encode().ljust(recv.shape[1], b"\0")
        recv[1 - self.rank] = np.frombuffer(row, np.uint8)
        recv[self.rank] = send
        return "done"

    def Ibcast(self, buf, root=0):  # noqa: N802
        self.calls.append(("bcast", tuple(int(x) for x in buf) if self.rank == root else None, root))
        if self.rank != root:
            buf[:] = self.root_uid
        return "done"

    def Iallreduce(self, send, recv, op=None):  # noqa: N802
        self.calls.append(("Allreduce",))
        recv[...] = 2 * (recv if send is FakeMPI.IN_PLACE else send)  # the other worker pushed the same
        return "done"


class FakeMPI:
    IN_PLACE, SUM = object(), "sum"
    Request = SimpleNamespace(Testall=lambda reqs: all(r == "done" for r in reqs))


def run(task, comm):
    """Drive a collective's non-blocking steps to the end (the comm thread's job)."""
    steps = task.execute(comm)
    for _ in steps or ():
        pass


def fake_comm(rank=0, **kw):
    submitted = []
    return SimpleNamespace(rank=rank, size=2, group=FakeGroup(rank, **kw), MPI=FakeMPI, submitted=submitted,
                           submit=submitted.append)


class FakeVar:
    def __init__(self):
        self._event, self._read_events = None, ()


class FakeHooks:
    def record_event(self, stream):
        return ("event", stream)


@pytest.fixture
def fakes(monkeypatch):
    cupy, lib = fake_libs()
    monkeypatch.setattr(nccl, "_libs", lambda: (cupy, lib))
    monkeypatch.setattr(nccl, "device_hooks", lambda device_type: FakeHooks())
    monkeypatch.delenv("MXASYNC_KVSTORE_NCCL", raising=False)
    return cupy, lib


def gpu_task(state, kind, buf, send=None, stream=None, slot=0):
    task = nccl.GpuCollective(state, slot, kind, key="w", buf=buf, send=send, round_=1, count=1)
    task.stream = stream
    task.vars = ([FakeVar()], [FakeVar()])
    return task


# -------------------------------------------------------------- CPU tests
def test_the_stores_import_and_register_when_cupy_cannot_be_imported():
    code = ("import sys\n"
            "class NoCupy:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name.split('.')[0] == 'cupy': raise ImportError('blocked')\n"
            "sys.meta_path.insert(0, NoCupy())\n"
            "import mxasync.kvstore.dist.nccl, mxasync.kvstore.dist\n"
            "from mxasync.kvstore.base import _REGISTRY\n"
            "assert 'dist_device_sync' in _REGISTRY and 'cupy' not in sys.modules\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_local_status_without_cupy_nccl_or_by_request(monkeypatch, fakes):
    assert nccl.local_status(1) == {"ok": True, "why": "", "gpu": (nccl.socket.gethostname(), "0000:01:00.0")}
    monkeypatch.setenv("MXASYNC_KVSTORE_NCCL", "0")
    assert nccl.local_status(0)["why"] == "MXASYNC_KVSTORE_NCCL=0"
    monkeypatch.delenv("MXASYNC_KVSTORE_NCCL")

    def no_cupy():
        raise ModuleNotFoundError("No module named 'cupy'")

    monkeypatch.setattr(nccl, "_libs", no_cupy)
    info = nccl.local_status(0)
    assert not info["ok"] and "No module named 'cupy'" in info["why"]
    monkeypatch.setattr(nccl, "_libs", lambda: fake_libs(available=False))
    assert "without NCCL" in nccl.local_status(0)["why"]


def test_agreement_is_all_or_nothing():
    ok = {"ok": True, "why": "", "gpu": ("a", "0")}
    assert nccl.agree([ok, dict(ok, gpu=("a", "1")), dict(ok, gpu=("b", "0"))]) == ""
    why = nccl.agree([ok, {"ok": False, "why": "ImportError: x", "gpu": ("b", "0")}])
    assert why == "worker 1 has no NCCL (ImportError: x)"
    assert "share GPU 0 on a" in nccl.agree([ok, dict(ok)])


@pytest.mark.parametrize("rank", [0, 1])
def test_setup_sends_rank0_unique_id_over_mpi(fakes, rank):
    state = nccl._State()
    comm = fake_comm(rank, root_uid=tuple(range(128)))
    setup = nccl.NcclSetup(state, 0, device_id=rank)
    assert setup.kind == NCCL_SETUP and setup.buf.nbytes == 8  # the same header on every worker
    run(setup, comm)
    made = state.comms[0]
    assert isinstance(made, FakeCommunicator) and made.args == (2, tuple(range(128)), rank)
    sent = comm.group.calls[0]
    assert sent[0] == "bcast" and sent[2] == 0
    assert sent[1] == (tuple(range(128)) if rank == 0 else None)  # only rank 0 makes the id


def test_setup_falls_back_with_one_log_line(fakes, caplog):
    state = nccl._State()
    comm = fake_comm(0, other_info={"ok": False, "why": "ModuleNotFoundError: cupy", "gpu": ("h", "d")})
    with caplog.at_level(logging.INFO, logger=nccl.__name__):
        run(nccl.NcclSetup(state, 0, device_id=0), comm)
    assert state.comms == {0: None} and comm.group.calls == []  # no id sent, no communicator
    lines = [r for r in caplog.records if r.name == nccl.__name__]
    assert len(lines) == 1 and lines[0].levelno == logging.WARNING
    assert "go through host memory: worker 1 has no NCCL (ModuleNotFoundError: cupy)" in lines[0].getMessage()


def test_allreduce_launches_on_the_op_stream_and_records_an_event(fakes):
    state = nccl._State()
    comm_nc = state.comms[0] = FakeCommunicator(2, None, 0)
    stream = FakeStream()
    buf, src = FakeGpuArray(np.zeros(6, np.float32)), FakeGpuArray(np.ones(6, np.float32))
    task = gpu_task(state, ALLREDUCE, buf, send=src, stream=stream)
    run(task, fake_comm())
    assert comm_nc.calls == [("allReduce", src.data.ptr, buf.data.ptr, 6, 7, 100, stream.ptr)]
    assert stream.synced == 0 and buf.calls == [] and src.calls == []  # no host wait, no copies
    (read,), (written,) = task.vars
    assert written._event == (stream, ("event", stream)) and read._read_events == ((stream, ("event", stream)),)
    in_place = gpu_task(state, ALLREDUCE, buf, stream=stream)
    comm = fake_comm()
    run(in_place, comm)
    assert comm_nc.calls[-1][1] == comm_nc.calls[-1][2] == buf.data.ptr
    (watch,) = comm.submitted  # the comm thread watches the launched kernel
    assert isinstance(watch, nccl.NcclWatch) and watch.event == ("event", stream) and watch.armed


class FakeEvent:
    def __init__(self):
        self.done = False


class AbortingCommunicator(FakeCommunicator):
    def __init__(self, *args, async_error=None):
        super().__init__(*args)
        self.aborted, self.async_error = 0, async_error

    def abort(self):
        self.aborted += 1

    def check_async_error(self):
        if self.async_error is not None:
            raise self.async_error


class FakeLiveness:
    """Heartbeats as the comm thread sees them: ``alive`` peers always just spoke, the others
    last spoke when the watch began."""

    def __init__(self, timeout, alive=()):
        self.timeout, self.alive, self.asked, self.since = timeout, set(alive), [], time.monotonic()

    def silent(self, world_ranks, now):
        self.asked.append(list(world_ranks))
        return [r for r in world_ranks if r not in self.alive and now - self.since > self.timeout]


def _watching_comm(timeout, alive=()):
    """A real Comm's progress loop state without MPI: only the watch is active (worker 0 of 2)."""
    from mxasync.kvstore.dist.comm import Comm

    comm = object.__new__(Comm)
    comm.timeout, comm.broken, comm._seq, comm._active = timeout, None, None, []
    comm.world_rank, comm.group_ranks = 0, [0, 1]
    comm.liveness = FakeLiveness(timeout, alive)
    comm.aborts = []
    comm.abort = lambda message, code=1: comm.aborts.append(message)
    return comm


def test_watch_ends_when_the_kernel_is_done(fakes):
    state = nccl._State()
    nc = state.comms[0] = AbortingCommunicator(2, None, 0)
    comm, event = _watching_comm(timeout=60), FakeEvent()
    watch = nccl.NcclWatch(comm, state, 0, event, "kvstore push of key 'w' (round 1)")
    comm._active.append(watch)
    comm._progress()
    assert comm._active == [watch]
    event.done = True
    comm._progress()
    assert comm._active == [] and nc.aborted == 0 and comm.aborts == [] and comm.broken is None


def test_watch_waits_for_a_busy_peer_that_shows_signs_of_life(fakes):
    """A peer whose kernel is queued behind long compute still heartbeats: no fixed deadline."""
    state = nccl._State()
    nc = state.comms[0] = AbortingCommunicator(2, None, 0)
    comm = _watching_comm(timeout=0.01, alive={1})
    event = FakeEvent()
    comm._active.append(nccl.NcclWatch(comm, state, 0, event, "kvstore push of key 'w' (round 2)"))
    for _ in range(3):
        comm._progress()
        time.sleep(0.02)  # past the timeout each time: only silence may end the watch
    assert len(comm._active) == 1 and nc.aborted == 0 and comm.aborts == []
    assert comm.liveness.asked[-1] == [1]  # it asks about the other worker, not itself
    event.done = True
    comm._progress()
    assert comm._active == [] and nc.aborted == 0


def test_watch_aborts_nccl_and_the_job_when_a_peer_stalls(fakes):
    state = nccl._State()
    nc = state.comms[0] = AbortingCommunicator(2, None, 0)
    comm = _watching_comm(timeout=0.01)  # worker 1 silent: its comm thread stopped
    comm._active.append(nccl.NcclWatch(comm, state, 0, FakeEvent(), "kvstore push of key 'w' (round 3)"))
    comm._progress()
    time.sleep(0.03)
    comm._progress()
    assert comm._active == [] and nc.aborted == 1
    (message,) = comm.aborts
    assert "kvstore push of key 'w' (round 3) (NCCL): no answer from the other workers on the GPU" in message
    assert "for 0.01 s" in message and "communicator was aborted" in message
    assert comm.broken is not None  # every later KVStore op fails at once


def test_watch_aborts_on_an_nccl_async_error(fakes):
    state = nccl._State()
    nc = state.comms[0] = AbortingCommunicator(2, None, 0, async_error=RuntimeError("NCCL_ERROR_REMOTE_ERROR"))
    comm = _watching_comm(timeout=60)
    comm._active.append(nccl.NcclWatch(comm, state, 0, FakeEvent(), "kvstore init of key 'w'"))
    comm._progress()
    assert nc.aborted == 1 and "NCCL_ERROR_REMOTE_ERROR" in comm.aborts[0]


def test_bcast_through_nccl_from_root(fakes):
    state = nccl._State()
    comm_nc = state.comms[0] = FakeCommunicator(2, None, 1)
    stream, buf = FakeStream(), FakeGpuArray(np.zeros(3, np.float16))
    run(gpu_task(state, BCAST, buf, stream=stream), fake_comm(1))
    assert comm_nc.calls == [("bcast", buf.data.ptr, 3, 6, 0, stream.ptr)]


@pytest.mark.parametrize("why", ["no NCCL", "dtype NCCL lacks"])
def test_host_path_stages_through_mpi_on_the_stream(fakes, why):
    state = nccl._State()
    if why == "no NCCL":
        state.comms[0] = None
        values = np.arange(4, dtype=np.float32)
    else:
        state.comms[0] = FakeCommunicator(2, None, 0)
        values = np.arange(4, dtype=np.int16)
    stream = FakeStream()
    buf = FakeGpuArray(values)
    task = gpu_task(state, ALLREDUCE, buf, stream=stream)
    comm = fake_comm()
    run(task, comm)
    assert comm.group.calls == [("Allreduce",)]
    np.testing.assert_array_equal(buf.host, 2 * values)
    assert buf.calls == [("get", stream), ("set", stream)]
    assert task.buf is buf and task.vars[1][0]._event[0] is stream
    if why != "no NCCL":
        assert state.comms[0].calls == []


def test_without_an_engine_stream_it_finishes_before_completing(fakes):
    cupy, _ = fakes
    state = nccl._State()
    state.comms[0] = FakeCommunicator(2, None, 0)
    task = gpu_task(state, ALLREDUCE, FakeGpuArray(np.zeros(2, np.float32)), stream=None)
    run(task, fake_comm())
    current = cupy.cuda.get_current_stream()
    assert state.comms[0].calls[0][-1] == current.ptr and current.synced == 1
    assert task.vars[1][0]._event is None


def test_one_setup_per_device_in_first_use_order(monkeypatch):
    pushed = []
    monkeypatch.setattr(nccl, "push_collective", lambda comm, task, ctx, c, m, p=0: pushed.append(task))
    import threading

    comm = SimpleNamespace(_seq_lock=threading.Lock())
    tasks = [nccl.gpu_collective(comm, SimpleNamespace(device_id=d), ALLREDUCE, "k", FakeGpuArray([1.0], d))
             for d in (3, 3, 1, 3)]
    assert [(t.slot, t.device_id) for t in pushed] == [(0, 3), (1, 1)]
    assert [t.slot for t in tasks] == [0, 0, 1, 0]
    assert all(isinstance(t, nccl.NcclSetup) for t in pushed)


def test_store_picks_the_gpu_path_only_for_gpu_arrays(monkeypatch):
    from mxasync.kvstore.dist import dist_sync

    class Arr:
        stype = "default"

        def __init__(self, device_type, var):
            self.context = SimpleNamespace(device_type=device_type, device_id=0)
            self.dtype, self._data, self._chunk = np.float32, np.zeros(2, np.float32), SimpleNamespace(var=var)

    made, pushed = [], []
    monkeypatch.setattr(dist_sync, "gpu_collective", lambda *a, **kw: made.append((a, kw)) or "gpu-task")
    monkeypatch.setattr(dist_sync, "push_collective", lambda comm, task, *a: pushed.append((task, a)))
    store = object.__new__(dist_sync.KVStoreDistSync)
    store._comm, store._rounds, store._compression, store._fusable = SimpleNamespace(push_count=0), {}, None, {}
    store._store = {}
    src, dst = Arr("gpu", "src-var"), Arr("gpu", "dst-var")
    store._reduce("w", [src], dst, 0)
    assert made[0][0][2:4] == (ALLREDUCE, "w") and made[0][1]["send"] is src._data  # summed straight from src
    assert pushed[0] == ("gpu-task", (dst.context, ["src-var"], ["dst-var"], 0))
    cpu_src, cpu_dst = Arr("cpu", "a"), Arr("cpu", "b")
    store._reduce("c", [cpu_src], cpu_dst, 0)
    assert len(made) == 1 and isinstance(pushed[1][0], collective.Collective)  # host arrays: plain MPI


def test_a_setup_mismatch_is_described():
    header = np.array([NCCL_SETUP, 0, 8, 0, 0, 0], np.int64)
    assert "NCCL setup of a GPU" in collective._describe(header)


# -------------------------------------------------------------- GPU jobs
def _gpus() -> int:
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 - no cupy, no driver, no device
        return 0


def _job(workers: int, *args: str, env: dict | None = None, timeout: float = 120) -> tuple[int, str]:
    full_env = dict(os.environ, MXASYNC_KVSTORE_TIMEOUT="60", **(env or {}))
    full_env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SCRIPTS), full_env.get("PYTHONPATH")]))
    cmd = [sys.executable, "-c", "import sys; from mxasync.cli import main; sys.exit(main())", "launch",
           "-n", str(workers), "--timeout", str(timeout), "nccl_sync.py", *args]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=SCRIPTS, env=full_env, capture_output=True, text=True, timeout=timeout + 30)
    return proc.returncode, proc.stdout + proc.stderr + f"\n[{time.monotonic() - t0:.1f} s]"


def _need(gpus: int) -> None:
    if not available():
        pytest.skip("needs mpirun and mpi4py (.ci/install-mpi.sh)")
    have = _gpus()
    if have < gpus:
        pytest.skip(f"needs {gpus} GPU(s) and CuPy; found {have}")


@pytest.mark.gpu
def test_gpu_one_rank_uses_nccl():
    _need(1)
    rc, out = _job(1, "rank", "nccl")
    assert rc == 0 and "nccl_sync ok (nccl)" in out and "NCCL on gpu(0) among 1 workers" in out, out


@pytest.mark.gpu
def test_gpu_two_ranks_two_gpus_use_nccl():
    _need(2)
    rc, out = _job(2, "rank", "nccl")
    assert rc == 0 and out.count("nccl_sync ok (nccl)") == 2, out


@pytest.mark.gpu
def test_gpu_two_ranks_on_one_gpu_agree_on_the_host_path():
    _need(1)
    rc, out = _job(2, "zero", "host")
    assert rc == 0 and out.count("nccl_sync ok (host)") == 2, out
    assert "share GPU" in out, out


@pytest.mark.gpu
def test_gpu_host_path_on_request():
    _need(1)
    rc, out = _job(1, "rank", "host", env={"MXASYNC_KVSTORE_NCCL": "0"})
    assert rc == 0 and "nccl_sync ok (host)" in out and "MXASYNC_KVSTORE_NCCL=0" in out, out


@pytest.mark.gpu
def test_gpu_stalled_peer_after_its_header_ends_the_job():
    """Worker 1 announces a push and never launches it: worker 0's kernel would wait forever;
    the comm thread's watch aborts NCCL and ends the job with a message instead."""
    _need(2)
    rc, out = _job(2, "rank", "stall", env={"MXASYNC_KVSTORE_TIMEOUT": "5"}, timeout=90)
    assert rc != 0 and "the stalled push returned" not in out, out
    assert "(NCCL): no answer from the other workers on the GPU" in out and "communicator was aborted" in out, out
