"""The column transforms and array helpers of the numpy convolution core (numpy arrays only).

The operator layer has ``xp`` versions of the same transforms (``operator/kernels/conv/im2col.py``,
``operator/kernels/_util.py``); this package sits below it and cannot import them, as the CuPy
backend's cuDNN kernels work out their own geometry.  Here ``im2col`` is one strided copy of a
window view: 1.5-5x faster than a copy per kernel offset, which pays numpy's per-call and
short-inner-loop costs kernel-size times.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy
from numpy.lib.stride_tricks import sliding_window_view

Array = Any
Shape = tuple[int, ...]


def prod(values: Sequence[int]) -> int:
    return math.prod(int(v) for v in values)


def conv_out_size(size: int, kernel: int, stride: int, pad: int, dilate: int) -> int:
    """Output length of a convolution along one axis (MXNet's formula)."""
    return (size + 2 * pad - (dilate * (kernel - 1) + 1)) // stride + 1


def store(dst: Array, src: Array, bias: Array | None = None, relu: bool = False) -> None:
    """``dst[...] = src``, plus ``bias`` (broadcast against ``dst``) when given, then ``max(dst, 0)`` when
    ``relu``: a layout's last copy applies the layer's bias and fused relu while ``dst`` is in cache,
    instead of in passes of their own."""
    if bias is None:
        numpy.copyto(dst, src)
    else:
        numpy.add(src, bias, out=dst)
    if relu:
        numpy.maximum(dst, 0, out=dst)


def out_view(out: Array | None, shape: Sequence[int], dtype: Any) -> Array | None:
    """``out`` reshaped to ``shape`` when a kernel may write into it directly (C-contiguous, the
    result's dtype, as many elements), else None; ``out`` itself when it has the shape already."""
    if out is None or out.dtype != dtype or not out.flags.c_contiguous or out.size != prod(shape):
        return None
    shape = tuple(shape)
    return out if out.shape == shape else out.reshape(shape)


def pad_spatial(x: Array, before: Sequence[int], after: Sequence[int]) -> Array:
    """Zero-pad the trailing ``len(before)`` axes of ``x``; ``x`` itself when no padding is needed."""
    if not any(before) and not any(after):
        return x
    nsp = len(before)
    lead = x.shape[: x.ndim - nsp]
    out = numpy.zeros(lead + tuple(s + b + a for s, b, a in zip(x.shape[x.ndim - nsp:], before, after, strict=True)),
                      dtype=x.dtype)
    out[(Ellipsis,) + tuple(slice(b, b + s) for b, s in zip(before, x.shape[x.ndim - nsp:], strict=True))] = x
    return out


def window_slices(offsets: Sequence[int], dilate: Sequence[int], stride: Sequence[int], out: Sequence[int]) -> tuple:
    """Slices picking, for one kernel offset, the input element of every output position."""
    return tuple(
        slice(o * d, o * d + s * (n - 1) + 1, s) for o, d, s, n in zip(offsets, dilate, stride, out, strict=True)
    )


def im2col_into(padded: Array, kernel: Shape, stride: Shape, dilate: Shape, out: Array) -> Array:
    """Fill ``out`` ``(N, C, *kernel, *osp)`` with the windows of the padded ``(N, C, *Sp)``."""
    nsp = len(kernel)
    osp = out.shape[2 + nsp:]
    if min(osp, default=1) <= 0:
        return out
    win = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilate, strict=True))
    view = sliding_window_view(padded, win, axis=tuple(range(2, 2 + nsp)))
    view = view[(slice(None), slice(None))
                + tuple(slice(None, (o - 1) * st + 1, st) for o, st in zip(osp, stride, strict=True))
                + tuple(slice(None, None, d) for d in dilate)]
    perm = (0, 1) + tuple(range(2 + nsp, 2 + 2 * nsp)) + tuple(range(2, 2 + nsp))
    numpy.copyto(out, view.transpose(perm))
    return out


def col2im(cols: Array, spatial: Sequence[int], kernel: Shape, stride: Shape, dilate: Shape, pad: Shape) -> Array:
    """Adjoint of the columns: sum ``cols`` ``(N, C, *kernel, *out)`` back into ``(N, C, *spatial)``."""
    nsp = len(kernel)
    osp = cols.shape[2 + nsp:]
    acc = numpy.zeros(cols.shape[:2] + tuple(s + 2 * p for s, p in zip(spatial, pad, strict=True)), dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for offs in itertools.product(*(range(k) for k in kernel)):
        acc[lead + window_slices(offs, dilate, stride, osp)] += cols[lead + offs]
    if not any(pad):
        return acc
    return numpy.ascontiguousarray(acc[(Ellipsis,) + tuple(slice(p, p + s) for p, s in zip(pad, spatial, strict=True))])
