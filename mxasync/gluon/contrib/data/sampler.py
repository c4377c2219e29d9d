"""``IntervalSampler``: every ``interval``-th index, then (with ``rollover``) the next offsets.

>>> list(IntervalSampler(7, 3))
[0, 3, 6, 1, 4, 2, 5]
>>> list(IntervalSampler(7, 3, rollover=False))
[0, 3, 6]
"""

from __future__ import annotations

from ...data.sampler import Sampler

__all__ = ["IntervalSampler"]


class IntervalSampler(Sampler):
    """Samples ``0, k, 2k, ...``; with ``rollover`` also ``1, 1+k, ...`` up to offset ``k-1``."""

    def __init__(self, length, interval, rollover=True):
        if interval >= length:
            raise AssertionError(f"Interval {interval} must be smaller than length {length}")
        self._length, self._interval, self._rollover = length, interval, rollover

    def __iter__(self):
        for offset in range(self._interval if self._rollover else 1):
            yield from range(offset, self._length, self._interval)

    def __len__(self) -> int:
        return self._length
