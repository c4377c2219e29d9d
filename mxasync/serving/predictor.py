"""``Predictor``: ``await predictor.predict(x)`` on a model, with requests joined into dynamic batches.

Requests wait in per-shape buckets (examples of one shape and dtype batch together). A batch
leaves when its bucket holds ``max_batch_size`` requests or when its oldest request has
waited ``max_delay`` seconds, whichever comes first; the oldest bucket goes first. Up to
``max_inflight`` batches compute at once while the next one gathers: a batch is pushed to
the engine and its outputs awaited, so the event loop keeps serving meanwhile.

* back-pressure: at most ``max_queue`` requests wait; one more is refused at once (:class:`QueueFull`);
* ``timeout`` (per predictor, or per call): :class:`RequestTimeout`, and the request leaves the queue;
* cancelling the awaiting task takes its request out of the queue; if its batch already
  runs, its rows are computed and dropped; no other request notices.

A predictor belongs to the event loop that first calls it; it changes no process-wide state.
"""

from __future__ import annotations

import asyncio
import math
from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ndarray import NDArray
from ..runtime.context import Context
from .errors import InvalidInput, ModelError, PredictorClosed, QueueFull, RequestTimeout, ServingError
from .model import LoadedModel, load_model

__all__ = ["Predictor", "PredictorStats"]

_DEFAULT: Any = object()


@dataclass
class PredictorStats:
    """Counts since the predictor was made; ``batch_sizes[n]`` is how many batches had ``n`` requests."""

    requests: int = 0
    completed: int = 0
    failed: int = 0
    rejected: int = 0
    timed_out: int = 0
    cancelled: int = 0
    batches: int = 0
    batch_sizes: Counter = field(default_factory=Counter)


@dataclass(eq=False)
class _Request:
    inputs: tuple[np.ndarray, ...]
    future: asyncio.Future
    arrived: float
    key: tuple
    queued: bool = True


class Predictor:
    """Serve ``model`` (a checkpoint prefix, an ``.onnx`` file or a Gluon ``HybridBlock``) to awaiting callers.

    ``input_shape``: the shape of one example (without the batch axis; ``None`` for a free
    dimension), a list of them for a model with several data inputs; taken from the file when it
    says (ONNX), else requests of any shape are accepted and bucketed by shape. ``max_delay`` and
    ``timeout`` are in seconds. ``predict`` takes one example and returns its output row (a numpy
    array; a tuple of them for several outputs).

    >>> import asyncio, numpy as np, mxasync as mx
    >>> from mxasync.serving import Predictor
    >>> net = mx.gluon.nn.Dense(3, in_units=4)
    >>> net.initialize()
    >>> async def main():
    ...     async with Predictor(net, input_shape=(4,), max_batch_size=8) as p:
    ...         rows = await asyncio.gather(*(p.predict(np.ones(4)) for _ in range(5)))
    ...     return [r.shape for r in rows], p.stats.completed
    >>> asyncio.run(main())
    ([(3,), (3,), (3,), (3,), (3,)], 5)
    """

    def __init__(self, model, *, ctx: Context | None = None, input_shape=None, dtype="float32",
                 max_batch_size: int = 8, max_delay: float = 0.005, max_queue: int = 256,
                 timeout: float | None = None, max_inflight: int = 2, name: str | None = None):
        self.model: LoadedModel = load_model(model, ctx)
        self.name = name or self.model.source
        self.dtype = np.dtype(dtype)
        self.input_shapes = self._input_shapes(input_shape)
        self.max_batch_size = self.max_delay = self.max_queue = self.timeout = None
        self._wake: asyncio.Event | None = None
        self.configure(max_batch_size=max_batch_size, max_delay=max_delay, max_queue=max_queue, timeout=timeout)
        if max_inflight < 1:
            raise ValueError(f"Predictor: max_inflight must be at least 1, got {max_inflight}")
        self.max_inflight = max_inflight
        self.stats = PredictorStats()
        self._buckets: dict[tuple, deque[_Request]] = {}
        self._live: Counter = Counter()  # per bucket: requests still queued in it
        self._depth = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._runner: asyncio.Task | None = None
        self._batches: set[asyncio.Task] = set()
        self._closing = False
        self._flushing = False

    # ---- configuration ----------------------------------------------------------------------

    def _input_shapes(self, input_shape) -> list[tuple | None]:
        n = len(self.model.data_names)
        if input_shape is None:
            return list(self.model.input_shapes or [None] * n)
        shapes = [input_shape] if n == 1 or not input_shape or not isinstance(input_shape[0], (tuple, list)) \
            else list(input_shape)
        if len(shapes) != n:
            raise ValueError(f"Predictor: {n} data inputs {self.model.data_names} but {len(shapes)} input shapes")
        return [tuple(s) if s is not None else None for s in shapes]

    def configure(self, *, max_batch_size: int | None = None, max_delay: float | None = None,
                  max_queue: int | None = None, timeout: float | None = _DEFAULT) -> None:
        """Change the batching limits; they apply from the next batch on (the server's management API calls it)."""
        for label, value, low in (("max_batch_size", max_batch_size, 1), ("max_queue", max_queue, 1)):
            if value is not None and (not isinstance(value, int) or value < low):
                raise ValueError(f"Predictor: {label} must be an integer of at least {low}, got {value!r}")
        if max_delay is not None and not (max_delay >= 0 and math.isfinite(max_delay)):
            raise ValueError(f"Predictor: max_delay must be a finite number of seconds >= 0, got {max_delay!r}")
        if timeout is not _DEFAULT and timeout is not None and not timeout > 0:
            raise ValueError(f"Predictor: timeout must be positive seconds or None, got {timeout!r}")
        self.max_batch_size = max_batch_size or self.max_batch_size
        self.max_delay = self.max_delay if max_delay is None else float(max_delay)
        self.max_queue = max_queue or self.max_queue
        if timeout is not _DEFAULT:
            self.timeout = timeout
        if self._wake is not None:
            self._wake.set()

    @property
    def queue_depth(self) -> int:
        """Requests waiting for a batch (cancelled and timed-out ones leave at once)."""
        return self._depth

    @property
    def batches_in_flight(self) -> int:
        return len(self._batches)

    @property
    def closed(self) -> bool:
        return self._closing

    # ---- requests ---------------------------------------------------------------------------

    def _example(self, x) -> tuple[np.ndarray, ...]:
        names = self.model.data_names
        if isinstance(x, dict):
            missing = [n for n in names if n not in x]
            if missing or len(x) != len(names):
                raise InvalidInput(f"model {self.name!r} takes inputs {names}, got {sorted(x)}")
            parts = [x[n] for n in names]
        elif len(names) > 1:
            if not isinstance(x, (tuple, list)) or len(x) != len(names):
                raise InvalidInput(f"model {self.name!r} takes {len(names)} inputs {names}: pass a tuple or a dict")
            parts = list(x)
        else:
            parts = [x]
        out = []
        for name, part, shape in zip(names, parts, self.input_shapes, strict=True):
            try:
                a = np.asarray(part, dtype=self.dtype)
            except (TypeError, ValueError) as e:
                raise InvalidInput(f"model {self.name!r}, input {name!r}: not an array of numbers ({e})") from None
            if shape is not None and not _fits(a.shape, shape):
                if None in shape or a.size != math.prod(shape):
                    raise InvalidInput(f"model {self.name!r} takes examples of shape {_show(shape)} for input "
                                       f"{name!r}, got {a.shape}")
                a = a.reshape(shape)
            out.append(a)
        return tuple(out)

    async def predict(self, x, *, timeout: float | None = _DEFAULT):
        """The model's output for one example ``x`` (an array-like, an NDArray; a tuple or dict for several inputs).

        Raises :class:`QueueFull` at once when ``max_queue`` requests wait, :class:`RequestTimeout`
        after ``timeout`` seconds (default: the predictor's), :class:`InvalidInput` for a bad example,
        :class:`ModelError` when the model fails on its batch, :class:`PredictorClosed` once closing.
        """
        if isinstance(x, NDArray):
            x = await x.asnumpy_async()
        inputs = self._example(x)
        if self._closing:
            raise PredictorClosed(f"model {self.name!r} is closed")
        self._start()
        if self._depth >= self.max_queue:
            self.stats.rejected += 1
            raise QueueFull(f"model {self.name!r}: the queue is full ({self.max_queue} requests waiting); "
                            "retry later or raise max_queue")
        future = self._loop.create_future()
        key = tuple((a.shape, a.dtype.str) for a in inputs)
        request = _Request(inputs, future, self._loop.time(), key)
        future.add_done_callback(lambda _f: self._left(request))
        bucket = self._buckets.setdefault(key, deque())
        bucket.append(request)
        self._depth += 1
        self._live[key] += 1
        self.stats.requests += 1
        if len(bucket) == 1 or self._live[key] == self.max_batch_size:  # a new oldest candidate, or a full batch
            self._wake.set()
        timeout = self.timeout if timeout is _DEFAULT else timeout
        timer = None if timeout is None else self._loop.call_later(timeout, self._expire, request, timeout)
        try:
            return await future
        finally:
            if timer is not None:
                timer.cancel()

    def _expire(self, request: _Request, timeout: float) -> None:
        if not request.future.done():  # still queued, or in a batch whose rows will be dropped
            self.stats.timed_out += 1
            request.future.set_exception(RequestTimeout(f"model {self.name!r}: no answer within {timeout:g} s"))

    def _left(self, request: _Request) -> None:
        """A request's future is done: if it was still queued (cancelled, timed out) it leaves the queue."""
        if request.queued:
            request.queued = False
            self._depth -= 1
            self._live[request.key] -= 1
        if request.future.cancelled():
            self.stats.cancelled += 1

    # ---- the batcher ------------------------------------------------------------------------

    def _start(self) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
            self._wake = asyncio.Event()
            self._slots = asyncio.Semaphore(self.max_inflight)
            self._runner = loop.create_task(self._run(), name=f"mxasync.serving batcher {self.name}")
        elif self._loop is not loop:
            raise ServingError(f"model {self.name!r}: a Predictor serves the event loop that first used it")

    def _oldest(self) -> tuple | None:
        best, when = None, None
        for key, bucket in list(self._buckets.items()):
            while bucket and not bucket[0].queued:
                bucket.popleft()
            if not bucket:
                del self._buckets[key]
                del self._live[key]
            elif when is None or bucket[0].arrived < when:
                best, when = key, bucket[0].arrived
        return best

    async def _next_key(self) -> tuple | None:
        """The bucket to run next, once it is full or its oldest request waited max_delay (None: closed and empty)."""
        while True:
            key = self._oldest()
            if key is None:
                if self._closing:
                    return None
                self._wake.clear()
                await self._wake.wait()
                continue
            bucket = self._buckets[key]
            remaining = bucket[0].arrived + self.max_delay - self._loop.time()
            if self._flushing or remaining <= 0 or self._live[key] >= self.max_batch_size:
                return key
            self._wake.clear()
            timer = self._loop.call_later(remaining, self._wake.set)
            try:
                await self._wake.wait()
            finally:
                timer.cancel()

    def _take(self, key: tuple) -> list[_Request]:
        bucket, batch = self._buckets.get(key, ()), []
        while bucket and len(batch) < self.max_batch_size:
            request = bucket.popleft()
            if request.queued:
                request.queued = False
                self._depth -= 1
                self._live[key] -= 1
                if not request.future.done():  # cancelled or timed out, its callback not yet run
                    batch.append(request)
        return batch

    async def _run(self) -> None:
        try:
            while (key := await self._next_key()) is not None:
                await self._slots.acquire()
                batch = self._take(key)  # taken after a slot is free, so it grows while earlier batches run
                if not batch:
                    self._slots.release()
                    continue
                task = self._loop.create_task(self._compute(batch))
                self._batches.add(task)
                task.add_done_callback(self._batches.discard)
        except BaseException as e:
            self._fail_queued(e if isinstance(e, ServingError) else PredictorClosed(f"model {self.name!r}: its "
                                                                                      f"batcher stopped ({e!r})"))
            raise

    async def _compute(self, batch: list[_Request]) -> None:
        try:
            self.stats.batches += 1
            self.stats.batch_sizes[len(batch)] += 1
            try:
                stacked = [np.stack([r.inputs[i] for r in batch]) for i in range(len(batch[0].inputs))]
                outputs = [await o.asnumpy_async() for o in self.model.forward(stacked)]
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - every request of the batch gets it
                error = ModelError(f"model {self.name!r} failed on a batch of {len(batch)}: {e}")
                error.__cause__ = e
                for r in batch:
                    if not r.future.done():
                        self.stats.failed += 1
                        r.future.set_exception(error)
                return
            for i, r in enumerate(batch):
                if not r.future.done():  # a cancelled request's rows are dropped here
                    self.stats.completed += 1
                    rows = tuple(o[i].copy() for o in outputs)
                    r.future.set_result(rows[0] if len(rows) == 1 else rows)
        finally:
            self._slots.release()

    def _fail_queued(self, error: BaseException) -> None:
        for bucket in self._buckets.values():
            for r in bucket:
                if r.queued:
                    r.queued = False
                    self._depth -= 1
                    if not r.future.done():
                        r.future.set_exception(error)
        self._buckets.clear()
        self._live.clear()

    # ---- lifetime ---------------------------------------------------------------------------

    async def start(self) -> Predictor:
        """Start the batcher on the running loop (``predict`` does it on first use)."""
        self._start()
        return self

    async def warmup(self, batch_sizes=None) -> None:
        """Run the model once at each batch size (default: 1 and ``max_batch_size``) on zeros.

        The first call at a shape builds the graph; doing it before the first request keeps that
        out of its latency. Needs every input's shape to be known (``input_shape``).
        """
        if any(s is None or None in s for s in self.input_shapes):
            raise ServingError(f"model {self.name!r}: warm-up needs the input shape (give input_shape=...)")
        for n in sorted(set(batch_sizes or (1, self.max_batch_size))):
            batch = [np.zeros((n, *shape), self.dtype) for shape in self.input_shapes]
            for out in self.model.forward(batch):
                await out.asnumpy_async()

    def flush(self) -> None:
        """From now on send each batch as soon as a slot is free, without waiting ``max_delay`` to fill it.

        Requests are still accepted; a server calls it when it starts shutting down, so the
        requests in flight are answered promptly. :meth:`close` implies it.
        """
        self._flushing = True
        if self._wake is not None:
            self._wake.set()

    async def close(self, drain: bool = True) -> None:
        """Refuse new requests; with ``drain`` answer the queued ones first (without waiting ``max_delay``),
        else fail them with :class:`PredictorClosed`. Returns when no batch runs any more."""
        self._closing = self._flushing = True
        if self._loop is None:
            return
        if not drain:
            self._fail_queued(PredictorClosed(f"model {self.name!r} was closed"))
        self._wake.set()
        await asyncio.gather(self._runner, return_exceptions=True)
        while self._batches:
            await asyncio.gather(*self._batches, return_exceptions=True)

    async def __aenter__(self) -> Predictor:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.close()


def _fits(shape: tuple, want: tuple) -> bool:
    return len(shape) == len(want) and all(w is None or s == w for s, w in zip(shape, want, strict=True))


def _show(shape: tuple) -> str:
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
