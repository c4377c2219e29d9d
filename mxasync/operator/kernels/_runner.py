"""How a generic kernel runs its heavy parts: the plain way, on any array namespace.

A kernel written against ``xp`` takes a ``run`` argument (this module's :data:`PLAIN` by
default) for the few steps a backend may run its own way without changing the numbers'
meaning: GEMMs, cutting a kernel into row, channel or flat ranges, passing over arrays
block by block, per-plane sums (of products), erf, the convolution core.  :data:`PLAIN` does each as one call
on ``xp``, so a backend that only offers an array namespace gets every op.  A backend
that runs them better hands its own runner to the kernels through its overrides (the
numpy backend's, ``NUMPY`` in its ``kernels/runner.py``, is registered by
``operator/numpy_overrides.py``); nothing here asks which namespace ``xp`` is.

>>> import numpy as np
>>> PLAIN.matmul(np, np.ones((2, 3)), np.ones((3, 1))).ravel()
array([3., 3.])
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from .._loading import lazy_import

__all__ = ["PlainRunner", "PLAIN"]


class PlainRunner:
    """Every step as one call on ``xp``: no threads, no blocks, ``xp.matmul``."""

    #: whether :meth:`matmul` takes ``accumulate=True`` (``out += a @ b``)
    accumulates = False

    def matmul(self, xp: Any, a, b, out=None):
        return xp.matmul(a, b) if out is None else xp.matmul(a, b, out=out)

    def split_rows(self, fn: Callable, n: int, c: int, elements: int) -> None:
        """``fn(b0, b1, c0, c1)`` over batch x channel ranges: here one call over all of them."""
        fn(0, n, 0, c)

    def split_channels(self, fn: Callable, c: int, elements: int) -> None:
        """``fn(c0, c1)`` over channel ranges: here one call."""
        fn(0, c)

    def split_flat(self, xp: Any, fn: Callable, out, *ins):
        """``fn(xp, *ins, out=out)`` for an elementwise ``fn``: here one call."""
        return fn(xp, *ins, out=out)

    def row_blocks(self, fn: Callable, rows: int, row_elements: int) -> None:
        """``fn(lo, hi)`` over blocks of rows of a row-wise kernel (each row computed alone): here one call."""
        fn(0, rows)

    def blocked(self, xp: Any, update: Callable, *arrays, scratch: int = 0, passes: int = 4) -> None:
        """``update(*arrays, *tmps)`` with ``scratch`` temporaries shaped like the first array: one call."""
        first = arrays[0]
        update(*arrays, *(xp.empty_like(first) for _ in range(scratch)))

    def cache_blocks(self, b0: int, b1: int, c0: int, c1: int, plane: int) -> Iterator[tuple[int, int, int, int]]:
        """The ``(b0, b1, c0, c1)`` blocks a pass over a batch x channel range is cut into: here one."""
        yield b0, b1, c0, c1

    def plane_sums(self, xp: Any, a3, b3=None):
        """``sum(a3 * b3)`` (``sum(a3)`` without ``b3``) over the last axis of ``(pre, C, post)`` arrays: one sum per
        plane, shape ``(pre, C)``; a plane's sum must not depend on the other planes of the call."""
        return (a3 if b3 is None else a3 * b3).sum(axis=2)

    def conv_core(self):
        """The convolution core (``conv_forward``, ``conv_backward_data``, ``conv_backward_weight``,
        ``grad_layout``): the whole batch's columns and one matmul, :mod:`.conv._core`."""
        return lazy_import("mxasync.operator.kernels.conv._core")

    def erf(self, xp: Any, x):
        """Elementwise error function, from the formulas over ``xp`` of :mod:`mxasync.operator.tensor.special`."""
        return lazy_import("mxasync.operator.tensor.special").erf(xp, x)  # loaded on first use, fork-safe


PLAIN = PlainRunner()
