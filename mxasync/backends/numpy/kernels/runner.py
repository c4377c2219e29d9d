"""The numpy backend's runner for the generic kernels: BLAS, kernel threads, cache blocks.

The generic kernels take a runner (``run=``) for the steps a backend may do its own way
(``mxasync/operator/kernels/_runner.py`` describes the protocol; its ``PLAIN`` runner does
each step as one call on ``xp``).  :data:`NUMPY` does them the fast way on host memory;
the numpy backend's overrides hand it to the kernels.  Every step gives the bits of one
plain call however it is cut (``tests/operator/kernels/test_kernel_split.py``).

>>> import numpy as np
>>> NUMPY.matmul(np, np.ones((2, 3)), np.ones((3, 1))).ravel()
array([3., 3.])
"""

from __future__ import annotations

import importlib
import math
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy

from ....runtime.engine.lifetime import hold_across_fork
from .. import blas, parallel
from .blocked import blocked

__all__ = ["NumpyRunner", "NUMPY", "BLOCK_ELEMENTS"]

#: Input elements per cache block of a pooling pass (1 MiB of float32): the dozens of passes over a
#: block's arrays then mostly hit the core's 2 MiB L2 instead of memory (ResNet's 3x3/2 max backward on
#: one core: 52 ms in one block, 21 ms in these). Smaller blocks lose more to per-call overhead.
BLOCK_ELEMENTS = 1 << 18

#: Elements per block of a row-wise kernel (:meth:`NumpyRunner.row_blocks`): 256 KiB of float32, so that the
#: block, its output and a temporary stay in the 2 MiB L2 together (log_softmax of 2048x1000 float32 on one
#: core: 4.1 -> 3.6 ms forward, 3.8 -> 2.8 ms backward).
ROW_BLOCK_ELEMENTS = 1 << 16

_IMPORT_LOCK = hold_across_fork(threading.RLock())  # scipy.special is imported on first use, on any thread


def _import(name: str):
    module = sys.modules.get(name)
    if module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False):
        return module
    with _IMPORT_LOCK:
        return importlib.import_module(name)


class NumpyRunner:
    """The generic kernels' steps on numpy arrays: the engine's BLAS, the backend's kernel threads."""

    accumulates = True  # blas.matmul takes accumulate=True

    def matmul(self, xp: Any, a, b, out=None, accumulate: bool = False):
        """``a @ b`` on the engine's own BLAS (big GEMMs), into ``out`` when given."""
        return blas.matmul(a, b, out=out, accumulate=accumulate)

    def split_rows(self, fn: Callable, n: int, c: int, elements: int) -> None:
        """``fn(b0, b1, c0, c1)`` over batch x channel blocks, split over the kernel threads when ``elements``
        is big enough (by channel when there are enough channels, else by batch); one call otherwise.
        ``fn`` must write disjoint outputs per block."""
        if not parallel.worth_splitting(elements):
            fn(0, n, 0, c)
        elif c >= parallel.nthreads():
            parallel.split(lambda lo, hi: fn(0, n, lo, hi), c)
        else:
            parallel.split(lambda lo, hi: fn(lo, hi, 0, c), n)

    def split_channels(self, fn: Callable, c: int, elements: int) -> None:
        """``fn(c0, c1)`` over channel blocks, split over the kernel threads when big."""
        if c > 1 and parallel.worth_splitting(elements):
            parallel.split(fn, c)
        else:
            fn(0, c)

    def split_flat(self, xp: Any, fn: Callable, out, *ins):
        """``fn(xp, *ins, out=out)`` for an elementwise ``fn``, cut into flat ranges over the kernel threads when
        big and every array is C-contiguous of ``out``'s size (one call otherwise)."""
        if (parallel.worth_splitting(out.size) and out.flags.c_contiguous
                and all(a.size == out.size and a.flags.c_contiguous for a in ins)):
            flat_out = out.reshape(-1)
            flat_ins = [a.reshape(-1) for a in ins]
            parallel.split(lambda lo, hi: fn(xp, *(a[lo:hi] for a in flat_ins), out=flat_out[lo:hi]), out.size)
            return out
        return fn(xp, *ins, out=out)

    def row_blocks(self, fn: Callable, rows: int, row_elements: int) -> None:
        """``fn(lo, hi)`` over blocks of about ``ROW_BLOCK_ELEMENTS``, so that a row-wise kernel's passes (max,
        subtract, exp, sum, ... of a softmax) find their block in cache; ranges of blocks on the kernel threads
        when big. Each row is computed alone, so the bits are those of one call."""
        step = max(1, ROW_BLOCK_ELEMENTS // max(1, row_elements))
        if step >= rows:
            fn(0, rows)
            return

        def over(lo: int, hi: int) -> None:
            for b in range(lo, hi, step):
                fn(b, min(b + step, hi))

        if parallel.worth_splitting(rows * row_elements):
            parallel.split(over, rows, min_size=step)
        else:
            over(0, rows)

    def blocked(self, xp: Any, update: Callable, *arrays, scratch: int = 0, passes: int = 4) -> None:
        """:func:`.blocked.blocked`: cache-sized blocks, over the kernel threads when big."""
        blocked(update, *arrays, scratch=scratch, passes=passes)

    def cache_blocks(self, b0: int, b1: int, c0: int, c1: int, plane: int) -> Iterator[tuple[int, int, int, int]]:
        """``(b0, b1, c0, c1)`` cut into blocks of about ``BLOCK_ELEMENTS``: whole images while one fits,
        else even channel runs of one image."""
        per_image = (c1 - c0) * plane
        if (b1 - b0) * per_image <= BLOCK_ELEMENTS:
            yield b0, b1, c0, c1
        elif per_image <= BLOCK_ELEMENTS:
            step = BLOCK_ELEMENTS // per_image
            for b in range(b0, b1, step):
                yield b, min(b + step, b1), c0, c1
        else:
            runs = -(-per_image // BLOCK_ELEMENTS)
            step = -(-(c1 - c0) // runs)
            for b in range(b0, b1):
                for c in range(c0, c1, step):
                    yield b, b + 1, c, min(c + step, c1)

    def plane_sums(self, xp: Any, a3, b3=None):
        """Per-plane ``sum(a3 * b3)`` (``sum(a3)``) of ``(pre, C, post)`` arrays, shape ``(pre, C)``: einsum's
        sum-of-products loop, no product temporary (8x64x112x112 float32: 0.86 ms for the sums against 1.48 for
        numpy's pairwise sum, 1.1 ms for the squares against 3.7x that for summing the product).

        einsum sums each of several planes in one run of its loop, but a lone plane (the whole array one row)
        in pieces of its 8192-element buffer, in another order: a lone plane is given as two rows (the same row
        twice, stride 0) so that its sum has the bits it has among others, wherever the kernel was cut."""
        ops = (a3,) if b3 is None else (a3, b3)
        pre, c, post = a3.shape
        if pre * c == 1:
            rows = [numpy.broadcast_to(a.reshape(1, post), (2, post)) for a in ops]
            return numpy.einsum(",".join(["ij"] * len(ops)) + "->i", *rows)[:1].reshape(1, 1)
        return numpy.einsum(",".join(["ijk"] * len(ops)) + "->ij", *ops)

    def conv_core(self):
        """The convolution core: the layouts of :mod:`.conv` (loaded on first use)."""
        return _import("mxasync.backends.numpy.kernels.conv._core")

    def erf(self, xp: Any, x):
        """scipy's erf where scipy is installed, else ``math.erf`` element by element."""
        try:
            special = _import("scipy.special")
        except ImportError:
            return numpy.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)
        return special.erf(x)


NUMPY = NumpyRunner()
