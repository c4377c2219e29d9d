"""Convolution columns kept from a training forward for the backward that follows it.

The weight gradient needs the im2col columns of the forward's input; recomputing them
costs a full copy of ``C * prod(kernel)`` times the output (LeNet's conv2: ~1.3 ms of a
~30 ms step). A training forward on numpy therefore builds its columns in a buffer
taken from here and leaves them keyed by its input array (held weakly, with the
geometry); the backward takes them back when they match, and its buffer is recycled
for the next forward. Everything kept or spare stays under one byte budget,
``MXASYNC_CONV_KEEP_MB`` (default 256; 0 turns keeping off): over it, a forward just
computes in chunks as before. Buffers are reused instead of freed because fresh
multi-MB allocations page-fault on every touch (costly in this sandbox).

The columns belong to the forward that made them: a backward that finds none (another
forward ran in between on other data, the entry was evicted, its input died) recomputes.
"""

from __future__ import annotations

import os
import threading
import weakref
from typing import Any

import numpy

__all__ = ["ColumnStore", "COLUMNS"]


def _budget_from_env() -> int:
    raw = os.environ.get("MXASYNC_CONV_KEEP_MB", "").strip()
    try:
        return max(0, int(float(raw) * (1 << 20))) if raw else 256 << 20
    except ValueError:
        return 256 << 20


class ColumnStore:
    """Kept columns by (input array, geometry) and spare buffers, under ``budget`` bytes."""

    def __init__(self, budget: int | None = None):
        self.budget = _budget_from_env() if budget is None else budget
        self._lock = threading.Lock()
        self._kept: dict[tuple, tuple[weakref.ref, numpy.ndarray]] = {}
        self._spare: dict[int, list[numpy.ndarray]] = {}
        self.held = 0  # bytes kept + spare

    # -- buffers -----------------------------------------------------------------------------
    def take(self, shape: tuple, dtype: Any) -> numpy.ndarray | None:
        """A buffer for columns of ``shape``, or None when the budget has no room for it."""
        dtype = numpy.dtype(dtype)
        nbytes = int(numpy.prod(shape)) * dtype.itemsize
        with self._lock:
            spares = self._spare.get(nbytes)
            if spares:
                flat = spares.pop()
            else:
                if self.held + nbytes > self.budget:
                    self._drop_spares(self.held + nbytes - self.budget)
                    if self.held + nbytes > self.budget:
                        return None
                self.held += nbytes
                flat = None
        if flat is None:
            flat = numpy.empty(nbytes, dtype=numpy.uint8)
        return flat.view(dtype).reshape(shape)

    def give_back(self, cols: numpy.ndarray) -> None:
        """Return a buffer from :meth:`take` (its bytes stay counted as spare)."""
        flat = cols.reshape(-1).view(numpy.uint8)
        with self._lock:
            self._spare.setdefault(flat.nbytes, []).append(flat)

    def _drop_spares(self, need: int) -> None:
        for size in sorted(self._spare, reverse=True):
            lst = self._spare[size]
            while lst and need > 0:
                lst.pop()
                self.held -= size
                need -= size
            if not lst:
                del self._spare[size]
            if need <= 0:
                return

    # -- kept columns ------------------------------------------------------------------------
    def keep(self, x: numpy.ndarray, geometry: tuple, cols: numpy.ndarray) -> None:
        """Leave ``cols`` (a buffer from :meth:`take`) for the backward of this forward on ``x``."""
        key = (id(x), geometry)
        store = weakref.ref(self)

        def dead(_ref, key=key):  # the input died before any backward: recycle its columns
            s = store()
            if s is not None:
                s._forget(key)

        with self._lock:
            old = self._kept.pop(key, None)
            self._kept[key] = (weakref.ref(x, dead), cols)
        if old is not None:
            self.give_back(old[1])

    def pop(self, x: numpy.ndarray, geometry: tuple) -> numpy.ndarray | None:
        """The columns a forward on this very ``x`` kept (removed from the store), or None."""
        key = (id(x), geometry)
        if not self._kept:
            return None
        with self._lock:
            got = self._kept.get(key)
            if got is None:
                return None
            del self._kept[key]
        ref, cols = got
        if ref() is not x:
            self.give_back(cols)
            return None
        return cols

    def drop(self, x: numpy.ndarray, geometry: tuple) -> None:
        """Forget what a forward on ``x`` kept (an inference forward ran on it since)."""
        cols = self.pop(x, geometry)
        if cols is not None:
            self.give_back(cols)

    def _forget(self, key: tuple) -> None:
        with self._lock:
            got = self._kept.pop(key, None)
        if got is not None:
            self.give_back(got[1])

    def clear(self) -> None:
        """Free everything kept and spare."""
        with self._lock:
            for _, cols in self._kept.values():
                self.held -= cols.nbytes
            for size, lst in self._spare.items():
                self.held -= size * len(lst)
            self._kept.clear()
            self._spare.clear()

    def stats(self) -> dict:
        with self._lock:
            return {"held": self.held, "kept": len(self._kept), "budget": self.budget,
                    "spare": sum(len(v) for v in self._spare.values())}


COLUMNS = ColumnStore()
