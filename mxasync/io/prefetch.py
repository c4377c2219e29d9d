"""``PrefetchingIter``: read the next batch of one or more iterators in background threads.

>>> import mxasync as mx
>>> from mxasync.io import NDArrayIter
>>> a = NDArrayIter({"data": mx.nd.ones((100, 10))}, batch_size=25)
>>> b = NDArrayIter({"data": mx.nd.zeros((100, 3))}, batch_size=25)
>>> with PrefetchingIter([a, b], rename_data=[{"data": "a"}, {"data": "b"}]) as it:
...     print([d.name for d in it.provide_data], sum(1 for _ in it))
['a', 'b'] 4
"""

from __future__ import annotations

import threading
import weakref

from ..base import MXAsyncError
from .base import BatchWrapperIter, DataBatch, DataDesc, DataIter

__all__ = ["PrefetchingIter"]

_JOIN_TIMEOUT = 10.0


class _Worker:
    """One daemon thread that calls ``it.next()`` whenever a batch is requested (one batch ahead)."""

    def __init__(self, it: DataIter, name: str):
        self.it = it
        self._cond = threading.Condition()
        self._wanted = False
        self._ready = False
        self._stopping = False
        self._result: tuple[str, object] = ("end", None)
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not (self._wanted or self._stopping):
                    self._cond.wait()
                if self._stopping:
                    return
                self._wanted = False
            try:
                result: tuple[str, object] = ("ok", self.it.next())
            except StopIteration:
                result = ("end", None)
            except BaseException as exc:  # handed to the consumer, never kills the thread silently
                result = ("error", exc)
            with self._cond:
                self._result, self._ready = result, True
                self._cond.notify_all()

    def request(self) -> None:
        with self._cond:
            self._wanted = True
            self._cond.notify_all()

    def take(self) -> tuple[str, object]:
        with self._cond:
            while not self._ready:
                if not self.thread.is_alive():
                    return ("error", MXAsyncError("PrefetchingIter: the prefetch thread has stopped"))
                self._cond.wait(0.5)
            self._ready = False
            result, self._result = self._result, ("end", None)
            return result

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        if self.thread is not threading.current_thread():
            self.thread.join(_JOIN_TIMEOUT)


def _stop_all(workers: list[_Worker]) -> None:
    for w in workers:
        w.stop()


class PrefetchingIter(BatchWrapperIter):
    """Merge ``iters`` batch by batch, each read one batch ahead in its own thread.

    ``rename_data``/``rename_label``: one ``{old: new}`` map per iterator. An exception raised
    by an inner iterator is re-raised by the ``next()`` (or ``reset()``) that would have
    returned its batch. ``close()`` (or leaving a ``with`` block, or garbage collection) stops
    the threads.
    """

    def __init__(self, iters, rename_data: list[dict] | None = None, rename_label: list[dict] | None = None):
        super().__init__()
        iters = list(iters) if isinstance(iters, (list, tuple)) else [iters]
        if not iters:
            raise MXAsyncError("PrefetchingIter: needs at least one iterator")
        self.iters = iters
        self.n_iter = len(iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0].shape[0]
        self.current_batch: DataBatch | None = None
        self._exhausted = False
        self._workers = [_Worker(it, f"mxasync-prefetch-{i}") for i, it in enumerate(iters)]
        self._finalizer = weakref.finalize(self, _stop_all, self._workers)
        self._request_all()

    # -- descriptions -------------------------------------------------------------
    @staticmethod
    def _renamed(descs_per_iter, renames) -> list[DataDesc]:
        out: list[DataDesc] = []
        for i, descs in enumerate(descs_per_iter):
            for d in descs:
                d = d if isinstance(d, DataDesc) else DataDesc(*d)
                if renames is not None:
                    d = DataDesc(renames[i][d.name], d.shape, d.dtype, d.layout)
                out.append(d)
        return out

    @property
    def provide_data(self) -> list[DataDesc]:
        return self._renamed([it.provide_data for it in self.iters], self.rename_data)

    @property
    def provide_label(self) -> list[DataDesc]:
        return self._renamed([it.provide_label for it in self.iters], self.rename_label)

    # -- protocol -------------------------------------------------------------------
    def _request_all(self) -> None:
        self._inflight = True
        for w in self._workers:
            w.request()

    def _take_all(self) -> list[tuple[str, object]]:
        self._inflight = False
        return [w.take() for w in self._workers]

    def _check_open(self) -> None:
        if not self._finalizer.alive:
            raise MXAsyncError("PrefetchingIter: the iterator is closed")

    def reset(self) -> None:
        """Wait for the batches in flight, reset every iterator and start prefetching again.

        An error raised while prefetching the discarded batches is re-raised here (after the
        reset, so the iterator stays usable).
        """
        self._check_open()
        stale = self._take_all() if self._inflight else []
        for it in self.iters:
            it.reset()
        self._exhausted = False
        self._request_all()
        for kind, value in stale:
            if kind == "error":
                raise value

    def iter_next(self) -> bool:
        self._check_open()
        if self._exhausted:
            return False
        if not self._inflight:
            self._request_all()
        results = self._take_all()
        for kind, value in results:
            if kind == "error":
                raise value
        kinds = {kind for kind, _ in results}
        if kinds == {"end"}:
            self._exhausted = True
            return False
        if len(kinds) > 1:
            raise MXAsyncError("PrefetchingIter: the iterators yield different numbers of batches")
        batches = [value for _, value in results]
        if any(b.pad != batches[0].pad for b in batches):
            raise MXAsyncError(f"PrefetchingIter: the iterators disagree on pad: {[b.pad for b in batches]}")
        self.current_batch = DataBatch(sum((list(b.data) for b in batches), []),
                                       sum((list(b.label or []) for b in batches), []),
                                       batches[0].pad, batches[0].index,
                                       provide_data=self.provide_data, provide_label=self.provide_label)
        self._request_all()
        return True


    # -- shutdown -------------------------------------------------------------------
    def close(self) -> None:
        """Stop the prefetch threads (waits for a batch being read to finish)."""
        self._finalizer()

    def __enter__(self) -> PrefetchingIter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
