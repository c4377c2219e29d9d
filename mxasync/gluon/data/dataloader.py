"""``DataLoader``: mini-batches from a Dataset, read by worker threads or processes, with ``async for``.

>>> import numpy as np
>>> from mxasync.gluon.data import ArrayDataset, DataLoader
>>> loader = DataLoader(ArrayDataset(np.arange(10), np.arange(10) * 2), batch_size=4, last_batch='discard')
>>> [(x.asnumpy().tolist(), y.asnumpy().tolist()) for x, y in loader]
[([0, 1, 2, 3], [0, 2, 4, 6]), ([4, 5, 6, 7], [8, 10, 12, 14])]
"""

from __future__ import annotations

import weakref
from multiprocessing.reduction import ForkingPickler  # MXNet's module exports it (GluonNLP imports it here)

import anyio
import anyio.to_thread
import numpy as np

from ... import ndarray as nd
from ...runtime.context import cpu_pinned
from ...util import is_np_array
from . import sampler as _sampler
from ._workers import ProcessWorkers, ThreadWorkers, WorkerTimeout

__all__ = ["DataLoader", "default_batchify_fn", "default_mp_batchify_fn", "ForkingPickler"]


def default_batchify_fn(data: list):
    """Stack a list of samples into a batch: NDArrays with ``nd.stack``, tuples field by field (a list
    of batches), anything else through ``numpy.asarray`` (its dtype kept: float64 stays float64)."""
    first = data[0]
    if isinstance(first, nd.NDArray):
        batch = nd.stack(*data)
        return batch.as_np_ndarray() if is_np_array() else batch  # MXNet: mx.np.stack under set_np
    if isinstance(first, tuple):
        return [default_batchify_fn(list(field)) for field in zip(*data, strict=False)]
    arr = np.asarray(data)
    batch = nd.array(arr, dtype=arr.dtype)
    return batch.as_np_ndarray() if is_np_array() else batch  # under npx.set_np(): mx.np batches


def default_mp_batchify_fn(data: list):
    """What MXNet stacks into ``cpu_shared`` memory for its workers. Worker batches here reach the caller
    through our own transport, so this is :func:`default_batchify_fn` (batches come back on ``cpu``)."""
    return default_batchify_fn(data)


def _as_in_context(data, ctx):
    if isinstance(data, nd.NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


class _MultiWorkerIter:
    """One epoch through worker threads or processes: keeps ``prefetch`` batches requested ahead and
    hands them out in sampler order whatever order the workers finish in."""

    def __init__(self, workers, batchify_fn, batch_sampler, pin_memory: bool, pin_device_id: int,
                 prefetch: int, timeout: float, data_loader: DataLoader):
        self._workers = workers
        self._batchify_fn = batchify_fn
        self._batch_sampler = batch_sampler
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._timeout = timeout
        self._data_loader = data_loader  # the pool lives as long as an epoch reading from it
        self._buffer: dict[int, object] = {}
        self._rcvd = 0
        self._sent = 0
        self._iter = iter(batch_sampler)
        self._finalizer = weakref.finalize(self, _abandon_all, self._buffer)
        for _ in range(prefetch):
            self._push_next()

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def _push_next(self) -> None:
        samples = next(self._iter, None)
        if samples is None:
            return
        self._buffer[self._sent] = self._workers.submit(samples, self._batchify_fn)
        self._sent += 1

    def __next__(self):
        self._push_next()
        if self._rcvd == self._sent:
            raise StopIteration
        pending = self._buffer.pop(self._rcvd)
        self._rcvd += 1
        try:
            batch = pending.get(self._timeout, self._workers.processes)
        except WorkerTimeout:
            # a worker process that hangs (or was stopped) is killed and replaced; its batches go to the new one
            retry = getattr(self._workers, "timed_out", None)
            if retry is None or not retry(pending, self._timeout):
                raise
            try:
                batch = pending.get(self._timeout, self._workers.processes)
            except WorkerTimeout:
                retry(pending, self._timeout)  # given up: still, the next batches get a live worker
                raise
        if self._pin_memory:
            batch = _as_in_context(batch, cpu_pinned(self._pin_device_id))
        return batch

    next = __next__

    def __iter__(self):
        return self

    def close(self) -> None:
        """Drop the batches requested ahead (a worker still busy with one frees it when done)."""
        self._finalizer()


def _abandon_all(buffer: dict) -> None:
    for pending in buffer.values():
        pending.abandon()
    buffer.clear()


def _close_workers(holder: list) -> None:
    if holder:
        holder.pop().close()


class DataLoader:
    """Load mini-batches from ``dataset`` (MXNet 1.9's ``gluon.data.DataLoader``).

    ``batch_size``/``shuffle``/``sampler``/``last_batch`` (``'keep'``, ``'discard'``, ``'rollover'``) build a
    :class:`~.sampler.BatchSampler`, or pass your own ``batch_sampler``. ``batchify_fn`` merges a list of
    samples (default: :func:`default_batchify_fn`). ``num_workers > 0`` reads batches in parallel,
    ``prefetch`` (default ``2 * num_workers``) of them ahead, each within ``timeout`` seconds.

    Workers are threads unless ``thread_pool=False`` is given explicitly: then they are processes
    started from a clean interpreter (not forked from this one), which need a picklable dataset and
    ``batchify_fn``, and hand batches back through shared memory. MXNet's default is processes; ours is
    threads (``thread_pool=None``), which overlap well because numpy and our kernels release the GIL.

    ``pin_memory`` puts batches in ``cpu_pinned(pin_device_id)``. ``auto_reload`` starts prefetching the
    next epoch as soon as one ends (and the first at construction). ``async for batch in loader`` reads
    each batch in a worker thread so the event loop stays responsive. ``close()`` (or garbage
    collection) stops the workers.
    """

    def __init__(self, dataset, batch_size: int | None = None, shuffle: bool = False, sampler=None,
                 last_batch: str | None = None, batch_sampler=None, batchify_fn=None, num_workers: int = 0,
                 pin_memory: bool = False, pin_device_id: int = 0, prefetch: int | None = None,
                 thread_pool: bool | None = None, timeout: float = 120, auto_reload: bool = False):
        if timeout <= 0:
            raise ValueError(f"DataLoader: timeout must be positive, given {timeout}")
        self._dataset = dataset
        self._pin_memory = pin_memory
        self._pin_device_id = pin_device_id
        self._timeout = timeout
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("batch_size must be specified unless batch_sampler is specified")
            if sampler is None:
                sampler = (_sampler.RandomSampler if shuffle else _sampler.SequentialSampler)(len(dataset))
            elif shuffle:
                raise ValueError("shuffle must not be specified if sampler is specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch if last_batch else "keep")
        elif batch_size is not None or shuffle or sampler is not None or last_batch is not None:
            raise ValueError("batch_size, shuffle, sampler and last_batch must not be specified if "
                             "batch_sampler is specified.")
        self._batch_sampler = batch_sampler
        self._num_workers = max(0, int(num_workers))
        self._thread_pool = thread_pool is not False
        self._prefetch = max(0, int(prefetch) if prefetch is not None else 2 * self._num_workers)
        self._batchify_fn = batchify_fn if batchify_fn is not None else (
            default_mp_batchify_fn if self._num_workers > 0 else default_batchify_fn)
        self._workers_holder: list = []
        if self._num_workers > 0:
            workers_cls = ThreadWorkers if self._thread_pool else ProcessWorkers
            self._workers_holder.append(workers_cls(self._num_workers, dataset, self._batchify_fn))
        self._finalizer = weakref.finalize(self, _close_workers, self._workers_holder)
        self._iter = None
        self.auto_reload = auto_reload
        if auto_reload:
            self.refresh()

    # -- epochs -------------------------------------------------------------------------------------
    def __iter__(self):
        if self._iter is None:
            self.refresh()
        it, self._iter = self._iter, None  # one prefetched epoch serves one iterator
        try:
            yield from it
        finally:
            if isinstance(it, _MultiWorkerIter):
                it.close()
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _same_process_iter(self):
        for samples in self._batch_sampler:
            batch = self._batchify_fn([self._dataset[i] for i in samples])
            if self._pin_memory:
                batch = _as_in_context(batch, cpu_pinned(self._pin_device_id))
            yield batch

    def _prefetch_iter(self):
        if self._num_workers == 0:
            return self._same_process_iter()
        if not self._workers_holder:
            raise RuntimeError("DataLoader: the loader is closed")
        return _MultiWorkerIter(self._workers_holder[0], self._batchify_fn, self._batch_sampler,
                                self._pin_memory, self._pin_device_id, self._prefetch, self._timeout, self)

    def refresh(self) -> None:
        """Start a fresh epoch now (with workers, its first batches are requested at once)."""
        self.clean()
        self._iter = self._prefetch_iter()

    def clean(self) -> None:
        """Drop the prefetched epoch; the next one starts when iterated."""
        it, self._iter = self._iter, None
        if isinstance(it, _MultiWorkerIter):
            it.close()

    def __len__(self) -> int:
        return len(self._batch_sampler)

    def close(self) -> None:
        """Stop the workers (thread workers finish the batch in hand; process workers are terminated)."""
        self.clean()
        self._finalizer()

    def __enter__(self) -> DataLoader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- async face -----------------------------------------------------------------------------------
    def __aiter__(self):
        return _AsyncEpoch(iter(self))


_END = object()


def _next_or_end(it):
    return next(it, _END)


class _AsyncEpoch:
    """``async for`` over one epoch: each batch is read (or waited for) in a worker thread."""

    def __init__(self, it):
        self._it = it

    def __aiter__(self):
        return self

    async def __anext__(self):
        batch = await anyio.to_thread.run_sync(_next_or_end, self._it)
        if batch is _END:
            raise StopAsyncIteration
        return batch

    async def aclose(self) -> None:
        self._it.close()
