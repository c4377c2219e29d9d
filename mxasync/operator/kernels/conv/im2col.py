"""im2col / col2im over any number of spatial axes (NC + spatial layout).

The internal layout is ``(N, C, *kernel, *out)``: one copy per kernel offset fills
it (so there is no Python loop over pixels), and ``reshape(N, C*K, P)`` of it is
MXNet's ``im2col`` layout, ready for one matmul against ``weight.reshape(F, C*K)``.
(The numpy backend's convolution fills its columns with one strided copy of a window
view instead: ``mxasync/backends/numpy/kernels/conv/_columns.py``.)
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from .._util import Array, Shape, crop_spatial, ntuple, pad_spatial, prod, window_slices


def conv_out_size(size: int, kernel: int, stride: int, pad: int, dilate: int) -> int:
    """Output length of a convolution along one axis (MXNet's formula).

    >>> conv_out_size(28, 5, 1, 0, 1), conv_out_size(56, 3, 2, 1, 1)
    (24, 28)
    """
    return (size + 2 * pad - (dilate * (kernel - 1) + 1)) // stride + 1


def conv_params(
    nsp: int, kernel: Sequence[int], stride: Any, dilate: Any, pad: Any
) -> tuple[Shape, Shape, Shape, Shape]:
    """Normalise kernel/stride/dilate/pad to ``nsp``-tuples with MXNet's defaults (1, 1, 0)."""
    kernel = ntuple(kernel, nsp, 1)
    return kernel, ntuple(stride, nsp, 1), ntuple(dilate, nsp, 1), ntuple(pad, nsp, 0)


def im2col_nd(
    xp: Any, data: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape, out: Array | None = None
) -> Array:
    """Columns of ``data`` shaped ``(N, C, *kernel, *out_spatial)``; ``out`` may be a reusable buffer."""
    insp = data.shape[2:]
    osp = tuple(conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(insp, kernel, stride, pad, dilate, strict=True))
    padded = pad_spatial(xp, data, pad, pad)
    if out is None:
        out = xp.empty(data.shape[:2] + tuple(kernel) + osp, dtype=data.dtype)
    lead = (slice(None), slice(None))
    for offs in itertools.product(*(range(k) for k in kernel)):
        out[lead + offs] = padded[lead + window_slices(offs, dilate, stride, osp)]
    return out


def col2im_nd(
    xp: Any, cols: Array, spatial: Sequence[int], kernel: Shape, stride: Shape, dilate: Shape, pad: Shape
) -> Array:
    """Adjoint of :func:`im2col_nd`: sum ``cols`` ``(N, C, *kernel, *out)`` back into ``(N, C, *spatial)``."""
    nsp = len(kernel)
    osp = cols.shape[2 + nsp :]
    padded_shape = cols.shape[:2] + tuple(s + 2 * p for s, p in zip(spatial, pad, strict=True))
    acc = xp.zeros(padded_shape, dtype=cols.dtype)
    lead = (slice(None), slice(None))
    for offs in itertools.product(*(range(k) for k in kernel)):
        acc[lead + window_slices(offs, dilate, stride, osp)] += cols[lead + offs]
    if not any(pad):
        return acc
    return xp.ascontiguousarray(crop_spatial(acc, pad, spatial))


def im2col(
    xp: Any,
    data: Array,
    kernel: Sequence[int],
    stride: Sequence[int] | None = None,
    dilate: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
) -> Array:
    """MXNet's ``im2col``: ``(N, C, *spatial)`` -> ``(N, C*prod(kernel), prod(out_spatial))``.

    >>> import numpy as np
    >>> im2col(np, np.arange(9.).reshape(1, 1, 3, 3), (2, 2))[0]
    array([[0., 1., 3., 4.],
           [1., 2., 4., 5.],
           [3., 4., 6., 7.],
           [4., 5., 7., 8.]])
    """
    kernel, stride, dilate, pad = conv_params(data.ndim - 2, kernel, stride, dilate, pad)
    cols = im2col_nd(xp, data, kernel, stride, dilate, pad)
    n, c = data.shape[:2]
    return cols.reshape(n, c * prod(kernel), -1)


def col2im(
    xp: Any,
    data: Array,
    output_size: Sequence[int],
    kernel: Sequence[int],
    stride: Sequence[int] | None = None,
    dilate: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
) -> Array:
    """MXNet's ``col2im``: ``(N, C*prod(kernel), P)`` -> ``(N, C, *output_size)``, overlaps summed.

    >>> import numpy as np
    >>> col2im(np, np.ones((1, 4, 4)), (3, 3), (2, 2))[0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    nsp = len(output_size)
    kernel, stride, dilate, pad = conv_params(nsp, kernel, stride, dilate, pad)
    osp = tuple(
        conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(output_size, kernel, stride, pad, dilate, strict=True)
    )
    n, ck = data.shape[:2]
    c = ck // prod(kernel)
    cols = data.reshape((n, c) + kernel + osp)
    return col2im_nd(xp, cols, tuple(output_size), kernel, stride, dilate, pad)
