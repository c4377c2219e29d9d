"""Convolution with the batch as the innermost axis: one GEMM for the whole batch.

:mod:`._core` lays columns out ``(N, C, *kernel, *out)`` and runs one small GEMM per
sample. When the output planes are small and the batch is large (LeNet's second layer:
64 samples of 8x8), that is slow twice over: the per-sample GEMMs are too small for BLAS
to reach speed, and every im2col/col2im copy moves runs of only ``out_w`` elements.
Here the input is first turned to ``(C, *spatial, N)``; the columns are then
``(C, *kernel, *out, N)``, i.e. the ``(C*K, P*N)`` matrix of one GEMM, and with unit
stride every copy moves runs of ``out_w * N`` contiguous elements.  Measured on LeNet's
conv2 (64x20x12x12, 50 filters 5x5, 2-core Xeon): im2col 1.32 -> 0.50 ms, GEMM 1.57 ->
1.03 ms, col2im 3.5 -> 1.1 ms, for 0.26 ms of transposes in and out.  The per-sample
weight gradient also sums ``N`` partial ``F x C*K`` products, a large temporary when the
planes are small and the layer wide (ResNet's 7x7 layers): here it is one GEMM.

The layout pays on small output planes (:func:`pays`); bigger ones go to :mod:`._shifted`
(unit stride, enough channels: ResNet's first stage) or the per-sample layout.
"""

from __future__ import annotations

import itertools

import numpy
from numpy.lib.stride_tricks import sliding_window_view

from ..runner import NUMPY
from ._columns import Array, Shape, prod, store, window_slices

# Cap on the whole-batch column buffer; above it the per-sample path, which works in chunks.
MAX_COLUMN_BYTES = 96 << 20


def pays(ck: int, osp: Shape, stride: Shape, col_bytes: int) -> bool:
    """Whether the batch-inner layout beats the per-sample one for this geometry.

    Measured on ResNet-18's and LeNet's layers (fwd+bwd, 2-core Xeon): it wins on small output
    planes (7x7: 74 -> 23 ms, 14x14: 24 -> 20 ms, LeNet's 8x8: 9.7 -> 8.2 ms), and on 28x28 with
    unit stride (33 -> 29 ms); it loses on big planes (56x56: 45 -> 58 ms, whose per-sample
    chunks stay in cache), on strided 28x28 (strided windows move runs of only ``N``), and
    when ``C*K`` is tiny (LeNet's conv1, 25: the transposes in and out cost more than the GEMM).
    """
    p = prod(osp)
    small = p <= 256 or (p <= 1024 and all(s == 1 for s in stride))
    return bool(osp) and small and ck >= 64 and 0 < col_bytes <= MAX_COLUMN_BYTES


def to_batch_inner(x: Array, pad: Shape) -> Array:
    """``(N, C, *S)`` -> zero-padded ``(C, *(S + 2*pad), N)``."""
    n, c = x.shape[:2]
    shape = (c,) + tuple(s + 2 * p for s, p in zip(x.shape[2:], pad, strict=True)) + (n,)
    xt = numpy.zeros(shape, x.dtype) if any(pad) else numpy.empty(shape, x.dtype)
    inner = (slice(None),) + tuple(slice(p, p + s) for p, s in zip(pad, x.shape[2:], strict=True)) + (slice(None),)
    xt[inner] = x.transpose((1,) + tuple(range(2, x.ndim)) + (0,))
    return xt


def grad_batch_inner(dy: Array) -> Array:
    """``dy`` ``(N, F, *out)`` as the ``(F, P*N)`` matrix the GEMMs take."""
    n, f = dy.shape[:2]
    return numpy.ascontiguousarray(dy.reshape(n, f, -1).transpose(1, 2, 0)).reshape(f, -1)


def columns(xt: Array, kernel: Shape, stride: Shape, dilate: Shape, osp: Shape, out: Array) -> Array:
    """Fill ``out`` ``(C, *kernel, *osp, N)`` with the windows of ``xt`` ``(C, *Sp, N)``
    (split by channel over the kernel threads when big)."""
    nsp = len(kernel)
    win = tuple((k - 1) * d + 1 for k, d in zip(kernel, dilate, strict=True))
    view = sliding_window_view(xt, win, axis=tuple(range(1, 1 + nsp)))  # (C, *positions, N, *win)
    view = view[(slice(None),) + tuple(slice(None, (o - 1) * s + 1, s) for o, s in zip(osp, stride, strict=True))
                + (slice(None),) + tuple(slice(None, None, d) for d in dilate)]
    view = view.transpose((0,) + tuple(range(2 + nsp, 2 + 2 * nsp)) + tuple(range(1, 1 + nsp)) + (1 + nsp,))
    NUMPY.split_rows(lambda _b0, _b1, c0, c1: numpy.copyto(out[c0:c1], view[c0:c1]), 1, out.shape[0], out.size)
    return out


def forward(cols: Array, w_g: Array, out: Array, bias: Array | None = None, relu: bool = False) -> None:
    """``out`` ``(N, G, Fg, P)`` = ``w_g`` ``(G, Fg, CgK)`` @ ``cols`` as ``(G, CgK, P*N)`` (+ ``bias`` (F,),
    then ``max(., 0)`` when ``relu``)."""
    n, g, fg, p = out.shape
    res = NUMPY.matmul(numpy, w_g, cols.reshape(g, -1, p * n)).reshape(g, fg, p, n).transpose(3, 0, 1, 2)
    shift = None if bias is None else bias.reshape(g, fg, 1)
    for b in range(n):  # a sample at a time: the relu pass finds it in cache
        store(out[b], res[b], shift, relu)


def weight_grad(dyt: Array, cols: Array, groups: int, dw: Array) -> None:
    """``dw`` ``(G, Fg, CgK)`` = ``dyt`` ``(F, P*N)`` @ ``cols^T`` per group."""
    pn = dyt.shape[1]
    g_cols = cols.reshape(groups, -1, pn)
    NUMPY.matmul(numpy, dyt.reshape(groups, -1, pn), g_cols.transpose(0, 2, 1), out=dw)


def data_grad(dyt: Array, w_g: Array, in_spatial: Shape, kernel: Shape, stride: Shape, dilate: Shape,
              pad: Shape, osp: Shape, dx: Array) -> None:
    """``dx`` ``(N, C, *S)``: ``w_g^T @ dyt`` as batch-inner columns, summed back per kernel offset."""
    g, fg, ckg = w_g.shape
    n = dx.shape[0]
    c = g * ckg // prod(kernel)
    dcols = NUMPY.matmul(numpy, w_g.transpose(0, 2, 1), dyt.reshape(g, fg, -1)).reshape((c,) + kernel + osp + (n,))
    acc = numpy.zeros((c,) + tuple(s + 2 * p for s, p in zip(in_spatial, pad, strict=True)) + (n,), dx.dtype)
    offsets = list(itertools.product(*(range(k) for k in kernel)))

    def sum_back(_b0, _b1, c0, c1):
        for offs in offsets:
            acc[(slice(c0, c1),) + window_slices(offs, dilate, stride, osp)] += dcols[(slice(c0, c1),) + offs]

    NUMPY.split_rows(sum_back, 1, c, dcols.size)
    inner = (slice(None),) + tuple(slice(p, p + s) for p, s in zip(pad, in_spatial, strict=True))
    numpy.copyto(dx, acc[inner].transpose((acc.ndim - 1,) + tuple(range(acc.ndim - 1))))
