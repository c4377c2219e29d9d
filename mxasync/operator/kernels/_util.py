"""Small helpers shared by the kernels: parameter tuples, padding, scatter-add, erf.

Everything here takes the array namespace ``xp`` so the kernels run on numpy and
CuPy alike; numpy-only tricks sit behind an ``xp is numpy`` branch.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy

from .._loading import lazy_import
from ._host import matmul as _engine_matmul
from ._host import parallel

Array = Any  # numpy.ndarray or cupy.ndarray
Shape = tuple[int, ...]


def ntuple(value: int | Sequence[int] | None, n: int, default: int) -> Shape:
    """Expand an MXNet shape parameter to ``n`` ints; empty or None means ``default``.

    >>> ntuple(None, 2, 1), ntuple(3, 2, 0), ntuple((1, 2), 2, 0)
    ((1, 1), (3, 3), (1, 2))
    """
    if value is None:
        return (default,) * n
    if isinstance(value, int):
        return (value,) * n
    value = tuple(int(v) for v in value)
    if len(value) == 0:
        return (default,) * n
    if len(value) != n:
        raise ValueError(f"expected {n} values, got {value}")
    return value


LAYOUTS = (None, "NCW", "NCHW", "NCDHW")


def check_layout(layout: str | None, op: str) -> None:
    """Only channels-first layouts are implemented (MXNet's default)."""
    if layout not in LAYOUTS:
        raise NotImplementedError(f"{op}: layout {layout!r} is not supported; use channels-first (NCW/NCHW/NCDHW)")


def prod(values: Sequence[int]) -> int:
    return math.prod(int(v) for v in values)


def out_view(out: Array | None, shape: Sequence[int], dtype: Any) -> Array | None:
    """``out`` reshaped to ``shape`` when a kernel may write into it directly, else None.

    A planned output qualifies when it is C-contiguous, has the kernel's result
    dtype and the same number of elements (so the reshape is a view).

    >>> import numpy as np
    >>> out_view(np.empty((2, 3)), (3, 2), np.float64).shape, out_view(np.empty((2, 3)).T, (3, 2), np.float64)
    ((3, 2), None)
    """
    if out is None or out.dtype != dtype or not out.flags.c_contiguous or out.size != prod(shape):
        return None
    shape = tuple(shape)
    # the array itself when it has the shape already: a reshaped view is another object, and the
    # operator layer would then copy the result onto its own memory (``assign`` checks identity)
    return out if out.shape == shape else out.reshape(shape)


def pad_spatial(xp: Any, x: Array, before: Sequence[int], after: Sequence[int], value: float = 0.0) -> Array:
    """Pad the trailing ``len(before)`` axes of ``x``; returns ``x`` itself when no padding is needed."""
    if not any(before) and not any(after):
        return x
    nsp = len(before)
    lead = x.shape[: x.ndim - nsp]
    shape = lead + tuple(s + b + a for s, b, a in zip(x.shape[x.ndim - nsp :], before, after, strict=True))
    out = xp.full(shape, value, dtype=x.dtype)
    inner = tuple(slice(b, b + s) for b, s in zip(before, x.shape[x.ndim - nsp :], strict=True))
    out[(Ellipsis,) + inner] = x
    return out


def crop_spatial(x: Array, before: Sequence[int], sizes: Sequence[int]) -> Array:
    """View of the trailing axes of ``x`` starting at ``before`` with extent ``sizes``."""
    return x[(Ellipsis,) + tuple(slice(b, b + s) for b, s in zip(before, sizes, strict=True))]


def window_slices(offsets: Sequence[int], dilate: Sequence[int], stride: Sequence[int], out: Sequence[int]) -> tuple:
    """Slices picking, for one kernel offset, the input element of every output position."""
    return tuple(
        slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in zip(offsets, dilate, stride, out, strict=True)
    )


def matmul_for(xp: Any):
    """The ``matmul`` to call for big GEMMs: the engine's own BLAS on numpy, ``xp.matmul`` elsewhere."""
    return _engine_matmul if xp is numpy else xp.matmul


def split_rows(xp: Any, fn, n: int, c: int, elements: int) -> None:
    """``fn(b0, b1, c0, c1)`` over batch x channel blocks, split over the numpy backend's kernel threads
    when ``elements`` is big enough (by channel when there are enough channels, else by batch); one
    call ``fn(0, n, 0, c)`` otherwise. ``fn`` must write disjoint outputs per block."""
    if xp is not numpy or not parallel.worth_splitting(elements):
        fn(0, n, 0, c)
    elif c >= parallel.nthreads():
        parallel.split(lambda lo, hi: fn(0, n, lo, hi), c)
    else:
        parallel.split(lambda lo, hi: fn(lo, hi, 0, c), n)


def split_flat(xp: Any, fn, out: Array, *ins: Array) -> Array:
    """``fn(xp, *ins, out=out)`` for an elementwise ``fn``, cut into flat ranges over the numpy backend's kernel
    threads when big and every array is C-contiguous of ``out``'s size (one call otherwise)."""
    if (xp is numpy and parallel.worth_splitting(out.size) and out.flags.c_contiguous
            and all(a.size == out.size and a.flags.c_contiguous for a in ins)):
        flat_out = out.reshape(-1)
        flat_ins = [a.reshape(-1) for a in ins]
        parallel.split(lambda lo, hi: fn(xp, *(a[lo:hi] for a in flat_ins), out=flat_out[lo:hi]), out.size)
        return out
    return fn(xp, *ins, out=out)


def erf(xp: Any, x: Array) -> Array:
    """Elementwise error function (numpy lacks one; scipy/cupyx have fast ones)."""
    if xp is numpy:
        try:
            special = lazy_import("scipy.special")
        except ImportError:
            return numpy.frompyfunc(math.erf, 1, 1)(x).astype(x.dtype)
        return special.erf(x)
    try:
        cspecial = lazy_import("cupyx.scipy.special")
    except ImportError:
        return xp.asarray(erf(numpy, numpy.asarray(x)))
    return cspecial.erf(x)


def sum_to_shape(xp: Any, x: Array, shape: Shape) -> Array:
    """Reduce a broadcast result back to ``shape`` (the gradient of broadcasting)."""
    if x.shape == tuple(shape):
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
    return xp.sum(x, axis=axes, keepdims=True).reshape(shape) if axes else x.reshape(shape)
