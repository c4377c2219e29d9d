"""Depthwise convolution (one input channel per group and one filter per group) without columns.

MobileNet's 3x3 layers have ``groups == channels``: im2col would write ``K`` copies of the
input only to feed one-row GEMMs (``(1, K) @ (K, P)`` per channel), which BLAS runs far
below speed.  Here each kernel offset is one multiply-add of a strided view of the padded
input by that channel's weight, over blocks of a few channels of one sample, so that the
running sum and its temporary stay in cache.  Measured on MobileNet-1.0's depthwise layers
(batch 8, 3x3, unit stride, 2-core Xeon, CPU ms of the forward): 32x112x112 31 -> 20,
128x56x56 24 -> 20, 256x28x28 30 -> 27; smaller planes and strided layers lose here and keep
the generic layouts (:func:`pays`), as does the backward.
"""

from __future__ import annotations

import itertools

import numpy

from ..runner import NUMPY
from ._columns import Array, Shape, pad_spatial, prod, store

#: Bytes of one channel block's running sum: with its temporary it stays in L2.
BLOCK_BYTES = 192 << 10


#: Output planes smaller than this (28x28) run faster in the generic layouts, as do strided layers:
#: there the per-offset passes over short rows cost more than the columns' GEMMs.
MIN_PLANE = 28 * 28


def pays(c: int, groups: int, filters_per_group: int, stride: Shape, osp: Shape) -> bool:
    """Whether this layer runs here: depthwise (channel multiplier 1), unit stride, big output planes."""
    return groups == c and filters_per_group == 1 and all(s == 1 for s in stride) and prod(osp) >= MIN_PLANE


def forward(x: Array, w_g: Array, kernel: Shape, dilate: Shape, pad: Shape, osp: Shape,
            out: Array, bias: Array | None = None, relu: bool = False) -> None:
    """``out`` (N, C, 1, P), C-contiguous = the unit-stride depthwise correlation of ``x`` (N, C, *S) with
    ``w_g`` (C, 1, K) (+ ``bias`` (C,), then ``max(., 0)`` when ``relu``)."""
    n, c = x.shape[:2]
    xpad = numpy.ascontiguousarray(pad_spatial(x, pad, pad))
    taps = w_g.reshape(c, -1)
    result = out.reshape((n, c) + tuple(osp))
    kernel_at = list(itertools.product(*(range(k) for k in kernel)))
    shift = None if bias is None else bias.reshape((c,) + (1,) * len(osp))
    block = max(1, BLOCK_BYTES // max(1, prod(xpad.shape[2:]) * x.itemsize))

    def run(b0: int, b1: int, c0: int, c1: int) -> None:
        for b in range(b0, b1):
            for lo in range(c0, c1, block):
                hi = min(c1, lo + block)
                _block(xpad[b, lo:hi], taps[lo:hi], kernel_at, dilate, osp, result[b, lo:hi],
                       None if shift is None else shift[lo:hi], relu)

    NUMPY.split_rows(run, n, c, out.size * len(kernel_at))


def _block(xs: Array, taps: Array, kernel_at: list, dilate: Shape, osp: Shape, res: Array,
           bias: Array | None, relu: bool) -> None:
    """One sample's channel block, computed on the padded plane's grid.

    As in :mod:`._shifted`: output ``i`` of a flattened padded plane reads input ``i + shift``
    for each kernel offset, so every multiply-add runs over one long contiguous range (rows
    of the padded width, the few columns past the output's width thrown away at the end),
    where strided 2-D windows of a small plane (14x14) spend their time in numpy's short inner loops.
    """
    cb = xs.shape[0]
    plane = xs.shape[1:]
    flat = xs.reshape(cb, -1)
    pstrides = [prod(plane[d + 1:]) for d in range(len(plane))]
    length = sum((o - 1) * s for o, s in zip(osp, pstrides, strict=True)) + 1
    grid = numpy.empty((cb, osp[0] * pstrides[0]), xs.dtype)
    acc, tmp = grid[:, :length], numpy.empty((cb, length), xs.dtype)
    for k, at in enumerate(kernel_at):
        shift = sum(a * d * s for a, d, s in zip(at, dilate, pstrides, strict=True))
        w = taps[:, k:k + 1]
        if k == 0:
            numpy.multiply(flat[:, shift:shift + length], w, out=acc)
        else:
            numpy.multiply(flat[:, shift:shift + length], w, out=tmp)
            numpy.add(acc, tmp, out=acc)
    valid = grid.reshape((cb, osp[0]) + tuple(plane[1:]))[(slice(None), slice(None))
                                                          + tuple(slice(0, o) for o in osp[1:])]
    store(res, valid, bias, relu)
