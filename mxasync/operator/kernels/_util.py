"""Small helpers shared by the kernels: parameter tuples, layouts, padding, windows, broadcast sums.

Everything here takes the array namespace ``xp`` (or only the arrays), so the kernels run on
any backend's arrays alike; how a backend runs the heavy steps is its runner's business
(:mod:`._runner`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

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


def sum_to_shape(xp: Any, x: Array, shape: Shape) -> Array:
    """Reduce a broadcast result back to ``shape`` (the gradient of broadcasting)."""
    if x.shape == tuple(shape):
        return x
    lead = x.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(shape) if s == 1 and x.shape[i + lead] != 1)
    return xp.sum(x, axis=axes, keepdims=True).reshape(shape) if axes else x.reshape(shape)
