"""Samplers: which sample indices a DataLoader reads, and in what batches (MXNet 1.9's ``gluon.data``).

>>> list(BatchSampler(SequentialSampler(10), 3, 'keep'))
[[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
>>> list(IntervalSampler(6, 3))
[0, 3, 1, 4, 2, 5]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler", "IntervalSampler"]

_LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class: an iterable of indices with a length."""

    def __iter__(self) -> Iterator:
        raise NotImplementedError

    def __len__(self) -> int:
        raise NotImplementedError


class SequentialSampler(Sampler):
    """``start, start + 1, ..., start + length - 1``."""

    def __init__(self, length: int, start: int = 0):
        self._length = length
        self._start = start

    def __iter__(self) -> Iterator[int]:
        return iter(range(self._start, self._start + self._length))

    def __len__(self) -> int:
        return self._length


class RandomSampler(Sampler):
    """A random permutation of ``[0, length)`` per epoch (drawn from ``numpy.random``, as MXNet does)."""

    def __init__(self, length: int):
        self._length = length

    def __iter__(self) -> Iterator[int]:
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self) -> int:
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true (computed once)."""

    def __init__(self, fn: Callable, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i, sample in enumerate(dataset) if fn(sample)]

    def __iter__(self) -> Iterator[int]:
        return iter(self._indices)

    def __len__(self) -> int:
        return len(self._indices)


class BatchSampler(Sampler):
    """Group the indices of ``sampler`` into lists of ``batch_size``.

    ``last_batch``: ``'keep'`` yields a short last batch, ``'discard'`` drops it, ``'rollover'``
    carries its indices over to the front of the next epoch.
    """

    def __init__(self, sampler, batch_size: int, last_batch: str = "keep"):
        if last_batch not in _LAST_BATCH:
            raise ValueError(f"last_batch must be one of 'keep', 'discard', or 'rollover', but got {last_batch}")
        if int(batch_size) <= 0:
            raise ValueError(f"BatchSampler: batch_size must be positive, got {batch_size}")
        self._sampler = sampler
        self._batch_size = int(batch_size)
        self._last_batch = last_batch
        self._prev: list = []

    def __iter__(self) -> Iterator[list]:
        batch, self._prev = self._prev, []
        for i in self._sampler:
            batch.append(i)
            if len(batch) == self._batch_size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self) -> int:
        n, b = len(self._sampler), self._batch_size
        if self._last_batch == "keep":
            return (n + b - 1) // b
        if self._last_batch == "discard":
            return n // b
        return (len(self._prev) + n) // b


class IntervalSampler(Sampler):
    """``0, interval, 2*interval, ..., 1, 1 + interval, ...``: every ``interval``-th index, then the next
    offset (MXNet 2's sampler, used to read several sequences in parallel).

    ``rollover=False`` stops after the first pass (offset 0 only).
    """

    def __init__(self, length: int, interval: int, rollover: bool = True):
        if not 0 < interval <= length:
            raise ValueError(f"IntervalSampler: interval {interval} must be in (0, length={length}]")
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self) -> Iterator[int]:
        offsets = range(self._interval) if self._rollover else range(1)
        for off in offsets:
            yield from range(off, self._length, self._interval)

    def __len__(self) -> int:
        if self._rollover:
            return self._length
        return len(range(0, self._length, self._interval))
