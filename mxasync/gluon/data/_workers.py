"""The DataLoader's worker pools: threads (the default) and processes that hand batches back through
shared memory.

Process workers are started with the ``forkserver`` method (``spawn`` where it is missing; the
``MXASYNC_DATALOADER_START_METHOD`` environment variable picks another): a plain ``fork`` would copy
the engine's threads and locks mid-flight, so workers start from a clean interpreter and build
their own engine when the dataset makes NDArrays. A worker turns each batch into numpy arrays;
the large ones travel in a ``multiprocessing.shared_memory`` block that the parent copies into a
fresh NDArray and unlinks, the small ones ride in the pickle.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import os
import pickle
import signal
import threading
import time
import traceback
import warnings
from multiprocessing import shared_memory

import numpy as np

from ... import ndarray as nd
from ...base import MXAsyncError, env_str
from ...runtime.context import Context

__all__ = ["ThreadWorkers", "ProcessWorkers", "WorkerTimeout", "WorkerDied"]

_SHM_MIN_BYTES = 1 << 16  # below this a pickle copy is cheaper than a shared-memory block
_CLOSE_GRACE = 2.0  # seconds close() waits for batches in flight (their blocks are freed as they land)


class WorkerTimeout(MXAsyncError, TimeoutError):
    """A worker did not deliver a batch within the DataLoader's ``timeout``."""


def _timeout_error(timeout: float, processes: bool) -> WorkerTimeout:
    msg = (f"DataLoader: a worker did not deliver its batch within timeout={timeout} s; a slow dataset or "
           "transform needs a larger timeout")
    if processes:
        msg += ", and a worker process that died (out of memory, killed) loses its batch"
    return WorkerTimeout(msg)


class _Pending:
    """A batch requested from a worker; ``get`` waits for it, ``abandon`` frees it whenever it arrives."""

    __slots__ = ("_lock", "_done", "_value", "_error", "_abandoned", "_unpack", "__weakref__")

    def __init__(self, unpack=None):
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._value = None
        self._error: BaseException | None = None
        self._abandoned = False
        self._unpack = unpack

    def set_result(self, value) -> None:
        with self._lock:
            if self._abandoned:
                _discard(value)
                return
            self._value = value
        self._done.set()

    def set_error(self, exc: BaseException) -> None:
        self._error = exc
        self._done.set()

    def get(self, timeout: float, processes: bool):
        if not self._done.wait(timeout):
            raise _timeout_error(timeout, processes)
        if self._error is not None:
            raise self._error
        with self._lock:
            value, self._value = self._value, None
        return self._unpack(value) if self._unpack else value

    def abandon(self) -> None:
        with self._lock:
            self._abandoned = True
            value, self._value = self._value, None
        if value is not None and self._unpack:
            _discard(value)


# -- threads -----------------------------------------------------------------------------------------

class ThreadWorkers:
    """``n`` threads reading ``dataset`` (numpy and our kernels release the GIL, so threads overlap)."""

    processes = False

    def __init__(self, num_workers: int, dataset, batchify_fn=None):
        self._dataset = dataset
        self._pool = concurrent.futures.ThreadPoolExecutor(num_workers, thread_name_prefix="mxasync-dataloader")

    def submit(self, samples: list, batchify_fn) -> _Pending:
        pending = _Pending()
        fut = self._pool.submit(_thread_batch, self._dataset, samples, batchify_fn)
        fut.add_done_callback(lambda f: _settle(pending, f))
        return pending

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def _settle(pending: _Pending, fut: concurrent.futures.Future) -> None:
    if fut.cancelled():  # close() cancelled it before a thread took it (f.exception() would raise)
        pending.set_error(MXAsyncError("DataLoader: the worker pool was closed before this batch was read"))
    elif fut.exception() is not None:
        pending.set_error(fut.exception())
    else:
        pending.set_result(fut.result())


def _thread_batch(dataset, samples, batchify_fn):
    return batchify_fn([dataset[i] for i in samples])


# -- processes ---------------------------------------------------------------------------------------

class _Shm:
    """A numpy array left in a shared-memory block by a worker (and the context to rebuild it in)."""

    __slots__ = ("name", "shape", "dtype", "ctx")

    def __init__(self, name: str, shape: tuple, dtype: str, ctx: tuple | None):
        self.name, self.shape, self.dtype, self.ctx = name, shape, dtype, ctx

    def __getstate__(self):
        return (self.name, self.shape, self.dtype, self.ctx)

    def __setstate__(self, state):
        self.name, self.shape, self.dtype, self.ctx = state


class _Small:
    """A small NDArray carried in the pickle as numpy, with its context."""

    __slots__ = ("array", "ctx")

    def __init__(self, array: np.ndarray, ctx: tuple):
        self.array, self.ctx = array, ctx

    def __getstate__(self):
        return (self.array, self.ctx)

    def __setstate__(self, state):
        self.array, self.ctx = state


def _to_shm(arr: np.ndarray, ctx: tuple | None) -> _Shm:
    arr = np.ascontiguousarray(arr)
    block = shared_memory.SharedMemory(create=True, size=max(arr.nbytes, 1))
    try:
        np.ndarray(arr.shape, arr.dtype, buffer=block.buf)[...] = arr
        return _Shm(block.name, arr.shape, arr.dtype.str, ctx)
    finally:
        block.close()


def _pack(obj):
    """Worker side: NDArrays and numpy arrays become plain or shared-memory payloads."""
    if isinstance(obj, nd.NDArray):
        arr, ctx = obj.asnumpy(), (obj.context.device_type, obj.context.device_id)
        return _to_shm(arr, ctx) if arr.nbytes >= _SHM_MIN_BYTES else _Small(arr, ctx)
    if isinstance(obj, np.ndarray) and obj.dtype != object and obj.nbytes >= _SHM_MIN_BYTES:
        return _to_shm(obj, None)
    if isinstance(obj, list):
        return [_pack(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_pack(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _pack(v) for k, v in obj.items()}
    return obj


def _unpack(obj):
    """Parent side: rebuild the arrays (a copy out of each block, which is then unlinked)."""
    if isinstance(obj, _Shm):
        block = shared_memory.SharedMemory(name=obj.name)
        try:
            view = np.ndarray(obj.shape, np.dtype(obj.dtype), buffer=block.buf)
            out = np.array(view) if obj.ctx is None else nd.array(view, ctx=Context(*obj.ctx), dtype=view.dtype)
            del view
        finally:
            block.close()
            block.unlink()
        return out
    if isinstance(obj, _Small):
        return nd.array(obj.array, ctx=Context(*obj.ctx), dtype=obj.array.dtype)
    if isinstance(obj, list):
        return [_unpack(o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(_unpack(o) for o in obj)
    if isinstance(obj, dict):
        return {k: _unpack(v) for k, v in obj.items()}
    return obj


def _discard(obj) -> None:
    """Unlink the blocks of a packed batch nobody will read."""
    if isinstance(obj, _Shm):
        try:
            block = shared_memory.SharedMemory(name=obj.name)
        except FileNotFoundError:
            return
        block.close()
        block.unlink()
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _discard(o)
    elif isinstance(obj, dict):
        for o in obj.values():
            _discard(o)


def _worker_main(conn, payload: bytes) -> None:
    """A worker process: batches requested on ``conn`` are answered on it until the parent says stop
    or goes away (its end of the pipe closes, so a worker never outlives its DataLoader's process)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    dataset = pickle.loads(payload)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        tid, samples, batchify_fn = msg
        try:
            reply = (tid, True, _pack(batchify_fn([dataset[i] for i in samples])))
        except BaseException as exc:  # noqa: BLE001 - the parent raises it at the batch
            reply = (tid, False, _portable(exc))
        try:
            conn.send(reply)
        except (EOFError, OSError):
            _discard(reply[2])
            return


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if it pickles, else an MXAsyncError with its type, message and traceback."""
    try:
        pickle.dumps(exc)
        return exc
    except Exception:  # noqa: BLE001
        text = "".join(traceback.format_exception(exc))
        return MXAsyncError(f"DataLoader worker: {type(exc).__name__}: {exc}\n{text}")


class WorkerDied(MXAsyncError):
    """A DataLoader worker process died (killed, out of memory, crashed) while reading a batch."""


def _death(index: int, pid: int, code: int | None) -> str:
    if code is not None and code < 0:
        try:
            how = f"signal {-code} ({signal.Signals(-code).name})"
        except ValueError:
            how = f"signal {-code}"
    else:
        how = f"exit status {code}"
    return f"DataLoader worker {index} (pid {pid}) died from {how}"


def _start_method() -> str:
    methods = multiprocessing.get_all_start_methods()
    wanted = env_str("forkserver" if "forkserver" in methods else "spawn", "MXASYNC_DATALOADER_START_METHOD")
    if wanted not in methods:
        raise MXAsyncError(f"MXASYNC_DATALOADER_START_METHOD={wanted!r} is not one of {methods}")
    return wanted


def _preload_forkserver(ctx) -> None:
    """Have the forkserver import mxasync once, so each worker forks with it loaded (importing it in every
    worker costs seconds on a busy machine). Kept: the modules already asked for (``__main__`` by
    default). Takes effect when the server starts (importing mxasync starts no thread)."""
    from multiprocessing import forkserver

    wanted = list(getattr(forkserver._forkserver, "_preload_modules", ["__main__"]))
    if "mxasync" not in wanted:
        ctx.set_forkserver_preload([*wanted, "mxasync"])


def _pickled(what: str, obj) -> bytes:
    try:
        return pickle.dumps(obj, pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        raise MXAsyncError(f"DataLoader(thread_pool=False): the {what} must be picklable to reach worker processes "
                           f"({type(exc).__name__}: {exc}); use module-level functions instead of lambdas, or "
                           "thread workers (thread_pool=True)") from exc


class _Worker:
    """One worker process and the parent's end of its pipe; ``tasks`` are the batches it owes."""

    def __init__(self, ctx, index: int, payload: bytes):
        self.index = index
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, payload), daemon=True,
                                name=f"mxasync-dataloader-{index}")
        self.proc.start()
        child.close()
        self.tasks: dict[int, tuple] = {}  # task id -> (pending, samples, batchify_fn, tries)
        self.hung: float | None = None  # the timeout it missed, when it was killed for it
        self.replaced = threading.Event()  # set once a new worker took its place


class ProcessWorkers:
    """``n`` worker processes, each holding its own copy of ``dataset`` and its own pipe.

    A reader thread waits on every pipe and every process at once, so a worker that dies (kill -9,
    out of memory) is seen at once: a warning names it and its signal, it is restarted, and the
    batches it owed go to the new one; a batch whose second worker dies too raises
    :class:`WorkerDied` at that batch. Nothing is shared between workers (no queue lock a killed
    worker could take with it), so closing never hangs: workers are told to stop, then terminated,
    then killed.
    """

    processes = True
    retries = 1  # times a batch is given to a new worker after its worker died

    def __init__(self, num_workers: int, dataset, batchify_fn):
        self._payload = _pickled("dataset", dataset)
        _pickled("batchify_fn", batchify_fn)
        method = _start_method()
        # multiprocessing keeps one temp dir per process (the forkserver's socket lives there); put it back
        # if something removed it (test runners that clean a per-test TMPDIR do)
        os.makedirs(multiprocessing.util.get_temp_dir(), exist_ok=True)
        self._ctx = multiprocessing.get_context(method)
        if method == "forkserver":
            _preload_forkserver(self._ctx)
        self._lock = threading.Lock()
        self._next_tid = 0
        self._closed = False
        try:
            self._workers = [_Worker(self._ctx, i, self._payload) for i in range(num_workers)]
        except OSError:
            if method != "forkserver":
                raise
            # a forkserver whose socket vanished with its temp dir: spawn starts workers without it
            self._ctx = multiprocessing.get_context("spawn")
            self._workers = [_Worker(self._ctx, i, self._payload) for i in range(num_workers)]
        self._wake_r, self._wake_w = self._ctx.Pipe(duplex=False)
        self._reader = threading.Thread(target=self._read, name="mxasync-dataloader-reader", daemon=True)
        self._reader.start()

    def pids(self) -> list[int]:
        """The worker processes' ids (a restarted worker has a new one)."""
        with self._lock:
            return [w.proc.pid for w in self._workers]

    def submit(self, samples: list, batchify_fn) -> _Pending:
        pending = _Pending(_unpack)
        with self._lock:
            tid = self._next_tid
            self._next_tid += 1
            self._send(min(self._workers, key=lambda w: len(w.tasks)), tid, (pending, list(samples), batchify_fn, 0))
        return pending

    def _send(self, worker: _Worker, tid: int, task: tuple) -> None:
        worker.tasks[tid] = task
        try:
            worker.conn.send((tid, task[1], task[2]))
        except (OSError, EOFError):
            pass  # it died: the reader sees its process end and hands the task on

    # -- the reader thread ------------------------------------------------------------------------------
    def _read(self) -> None:
        while True:
            with self._lock:
                if self._closed:
                    return
                by_conn = {w.conn: w for w in self._workers}
                by_sentinel = {w.proc.sentinel: w for w in self._workers}
            ready = multiprocessing.connection.wait([*by_conn, *by_sentinel, self._wake_r])
            if self._wake_r in ready:
                return
            for obj in ready:
                worker = by_conn.get(obj)
                if worker is not None:
                    try:
                        tid, ok, value = obj.recv()
                    except (EOFError, OSError):
                        continue  # its process ended: the sentinel says so
                    with self._lock:
                        task = worker.tasks.pop(tid, None)
                    if task is None:
                        _discard(value)
                    elif ok:
                        task[0].set_result(value)
                    else:
                        task[0].set_error(value)
            for obj in ready:
                worker = by_sentinel.get(obj)
                if worker is not None:
                    self._replace(worker)

    def timed_out(self, pending: _Pending, timeout: float) -> bool:
        """``pending`` missed its ``timeout``: kill the worker that owes it (hung, stopped with SIGSTOP,
        deadlocked), so the reader replaces it and hands its batches to the new one. True when the
        batch is on its way again (its first timeout), False when it is given up."""
        with self._lock:
            for w in self._workers:
                task = next((t for t in w.tasks.values() if t[0] is pending), None)
                if task is not None:
                    break
            else:
                return False
            w.hung = timeout
            retry = task[3] < self.retries
        w.proc.kill()  # SIGKILL: a stopped process cannot catch or delay it
        w.replaced.wait(timeout)  # the reader sees it end and starts the new one: its timeout starts then
        return retry

    def _replace(self, dead: _Worker) -> None:
        """A worker process ended: say so, start another in its place, and hand its batches on."""
        dead.proc.join(1.0)
        what = _death(dead.index, dead.proc.pid, dead.proc.exitcode)
        if dead.hung is not None:
            what = (f"DataLoader worker {dead.index} (pid {dead.proc.pid}) did not deliver a batch within "
                    f"timeout={dead.hung} s (hung or stopped) and was killed")
        with self._lock:
            if self._closed:
                return
            fresh = _Worker(self._ctx, dead.index, self._payload)
            self._workers[self._workers.index(dead)] = fresh
            owed, dead.tasks = dead.tasks, {}
            for tid, (pending, samples, batchify_fn, tries) in sorted(owed.items()):
                if tries >= self.retries:
                    pending.set_error(WorkerDied(f"{what} while reading samples {samples[:8]}"
                                                 f"{' ...' if len(samples) > 8 else ''}, twice: the batch is "
                                                 "given up (does reading it crash the process?)"))
                else:
                    self._send(fresh, tid, (pending, samples, batchify_fn, tries + 1))
        dead.conn.close()
        dead.replaced.set()
        warnings.warn(f"{what}; it was restarted as pid {fresh.proc.pid} and its {len(owed)} batch(es) "
                      "handed to it", RuntimeWarning, stacklevel=1)

    # -- closing -----------------------------------------------------------------------------------------
    def close(self) -> None:
        """Let the batches in flight land (briefly) so their shared memory is freed, then stop the workers:
        asked, then terminated, then killed; never a hang, never a process left behind."""
        deadline = time.monotonic() + _CLOSE_GRACE
        with self._lock:
            inflight = [t[0] for w in self._workers for t in w.tasks.values()]
        for pending in inflight:
            if not pending._done.wait(max(0.0, deadline - time.monotonic())):
                break
        with self._lock:
            self._closed = True
            workers = list(self._workers)
        self._wake_w.send(None)
        for w in workers:
            try:
                w.conn.send(None)
            except (OSError, EOFError):
                pass
        for w in workers:
            w.proc.join(max(0.05, deadline - time.monotonic()))
            if w.proc.is_alive():
                w.proc.terminate()
                w.proc.join(1.0)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(1.0)
            w.conn.close()
        if self._reader is not threading.current_thread():
            self._reader.join(1.0)
        for w in workers:  # batches nobody will read: free their shared memory
            for pending, *_ in w.tasks.values():
                pending.abandon()
