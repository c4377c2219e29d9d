"""Unit-stride convolution without im2col: one GEMM per kernel offset over shifted views.

Flatten each padded input plane: the input a kernel offset ``(a, b)`` contributes to the
output at ``(i, j)`` sits at flat index ``(i + a) * Wp + (j + b)``, i.e. at ``i * Wp + j``
shifted by ``a * Wp + b``.  So if the output is computed on the padded plane's grid (rows
of ``Wp``, the last ``Wp - out_w`` columns of each row thrown away), offset ``(a, b)`` is
one GEMM ``w[:, :, a, b] @ x_flat[:, shift : shift + L]``, accumulated into the output:
the shifted window is a strided view BLAS reads as it is, and nothing like im2col's
``C * K`` copies of the input is ever written.  Measured on ResNet-18's 56x56 layers
(batch 8, 64 -> 64 channels, 3x3, 2-core Xeon): 16.2 -> 9.4 ms.

It serves every unit-stride forward on enough channels, and the data gradient (a correlation
of the output gradient with the flipped kernel).  A training forward keeps no columns then:
the weight gradient recomputes them chunk by chunk (4.6 ms on that layer) rather than have
58 MB per layer kept (ResNet-18's step: 700 -> 650 ms, 60 MB less resident, and no page faults
on fresh column buffers once the keep budget runs out); a weight gradient over shifted views
measured 15 ms against 5 ms from columns.  Small planes go to :mod:`._batch_inner`.
"""

from __future__ import annotations

import itertools

import numpy

from ...blas import matmul_into_rows
from ._columns import Array, Shape, pad_spatial, prod, store

#: ``C / groups`` below which the per-offset GEMMs (their inner dimension) are too thin to pay.
MIN_CHANNELS = 16


def pays(cg: int, stride: Shape) -> bool:
    """Whether this geometry runs here: unit stride and enough channels per group."""
    return all(s == 1 for s in stride) and cg >= MIN_CHANNELS


def forward(x: Array, w_g: Array, kernel: Shape, dilate: Shape, pad: Shape, osp: Shape, out: Array,
            bias: Array | None = None, relu: bool = False) -> None:
    """``out`` ``(N, G, Fg, P)`` = the unit-stride correlation of ``x`` ``(N, C, *S)`` with ``w_g``
    (+ ``bias`` (F,), then ``max(., 0)`` when ``relu``)."""
    n, c = x.shape[:2]
    g, fg, ckg = w_g.shape
    cg = c // g
    xpad = pad_spatial(x, pad, pad)
    psp = xpad.shape[2:]
    # the flat stride of each padded spatial axis, and the grid the output is computed on
    strides = tuple(prod(psp[i + 1:]) for i in range(len(psp)))
    length = sum((o - 1) * st for o, st in zip(osp, strides, strict=True)) + 1
    grid = numpy.empty((n, g, fg, osp[0] * strides[0]), dtype=x.dtype)
    flat = xpad.reshape(n, g, cg, -1)
    # the weight once with the kernel offsets first: each offset's (Fg, Cg) matrix is then contiguous
    nk = len(kernel)
    w_k = numpy.ascontiguousarray(numpy.moveaxis(w_g.reshape((g, fg, cg) + kernel), range(3, 3 + nk), range(1, 1 + nk)))
    for first, offs in enumerate(itertools.product(*(range(k) for k in kernel))):
        shift = sum(o * d * st for o, d, st in zip(offs, dilate, strides, strict=True))
        for gi in range(g):
            matmul_into_rows(w_k[(gi,) + offs], flat[:, gi, :, shift:shift + length], grid[:, gi, :, :length],
                             accumulate=first > 0)
    # the grid's rows are padded-plane rows: keep the first out_w (and so on) of each
    cropped = grid.reshape((n, g, fg, osp[0]) + tuple(psp[1:]))
    cropped = cropped[(Ellipsis,) + tuple(slice(0, o) for o in osp[1:])]
    store(out.reshape((n, g, fg) + tuple(osp)), cropped,
          None if bias is None else bias.reshape((g, fg) + (1,) * len(osp)), relu)
