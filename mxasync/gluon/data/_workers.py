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
import multiprocessing.util
import os
import pickle
import signal
import threading
import time
import weakref
from multiprocessing import shared_memory

import numpy as np

from ... import ndarray as nd
from ...base import MXAsyncError, env_str
from ...runtime.context import Context

__all__ = ["ThreadWorkers", "ProcessWorkers", "WorkerTimeout"]

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
        fut.add_done_callback(lambda f: pending.set_error(f.exception()) if f.exception() is not None
                              else pending.set_result(f.result()))
        return pending

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


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


_worker_dataset = None


def _process_init(payload: bytes) -> None:
    global _worker_dataset
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle (this is the worker's own process)
    _worker_dataset = pickle.loads(payload)


def _process_batch(samples, batchify_fn):
    return _pack(batchify_fn([_worker_dataset[i] for i in samples]))


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


class ProcessWorkers:
    """``n`` worker processes, each holding its own copy of ``dataset``."""

    processes = True

    def __init__(self, num_workers: int, dataset, batchify_fn):
        payload = _pickled("dataset", dataset)
        _pickled("batchify_fn", batchify_fn)
        method = _start_method()
        # multiprocessing keeps one temp dir per process (the forkserver's socket lives there); put it back
        # if something removed it (test runners that clean a per-test TMPDIR do)
        os.makedirs(multiprocessing.util.get_temp_dir(), exist_ok=True)
        self._inflight: weakref.WeakSet = weakref.WeakSet()
        ctx = multiprocessing.get_context(method)
        if method == "forkserver":
            _preload_forkserver(ctx)
        try:
            self._pool = ctx.Pool(num_workers, initializer=_process_init,
                                                                  initargs=(payload,))
        except OSError:
            if method != "forkserver":
                raise
            # a forkserver whose socket vanished with its temp dir: spawn starts workers without it
            self._pool = multiprocessing.get_context("spawn").Pool(num_workers, initializer=_process_init,
                                                                   initargs=(payload,))

    def submit(self, samples: list, batchify_fn) -> _Pending:
        pending = _Pending(_unpack)
        self._inflight.add(pending)
        self._pool.apply_async(_process_batch, (list(samples), batchify_fn),
                               callback=pending.set_result, error_callback=pending.set_error)
        return pending

    def close(self) -> None:
        """Let the batches in flight land (briefly) so their shared memory is freed, then stop the workers."""
        self._pool.close()
        deadline = time.monotonic() + _CLOSE_GRACE
        for pending in list(self._inflight):
            if not pending._done.wait(max(0.0, deadline - time.monotonic())):
                break
        self._pool.terminate()
