"""2-D depthwise convolution as GEMMs with banded weight matrices, for small planes and strides.

A depthwise layer (one channel per group) has only ``K`` multiply-adds per output, which numpy
runs as two passes per kernel offset (:mod:`._depthwise`) or as one-row GEMMs over im2col columns.
Here each kernel row ``kh`` of channel ``c`` becomes one banded ``(Wp, Wo)`` matrix
``T[c, kh]`` with ``T[sw*x + kw*dw, x] = w[c, kh, kw]``: output row ``y`` of a plane is then
``sum_kh  x_padded[sh*y + kh*dh, :] @ T[c, kh]``.  With the input laid out ``(C, N*Hp, Wp)``,
the rows of every sample of one channel are one strided matrix, so each ``kh`` is one batched
GEMM over the channels on the engine's BLAS (which has fused multiply-adds), ``Wp / KW`` times the
arithmetic of the direct sum but no pass per offset.  Rows that straddle two samples are computed
and dropped.  It pays on narrow planes (``Wp`` small); wide planes keep :mod:`._depthwise`.

Measured on MobileNet-1.0's depthwise 3x3 layers at 128x128 input (batch 8, 2-core Xeon, CPU ms of
the forward, median of 3 alternating rounds, the layout used before -> here): channels x plane,
stride: 32 x 64x64, 1: 7.7 -> 7.1 (against the padded-grid layout); 64 x 64x64, 2: 6.4 -> 5.3;
128 x 32x32, 1: 15.1 -> 4.5; 128 x 32x32, 2: 4.3 -> 2.3; 256 x 16x16, 1: 4.6 -> 2.2; 256 x 16x16, 2:
1.9 -> 1.7 (against im2col's one-row GEMMs).  On 8x8 and 4x4 planes (``Wp`` 10 and 6) the GEMMs are
too small and it measured 2.6 against 2.6 and 2.7 against 1.5 ms: those keep the generic layouts.
"""

from __future__ import annotations

import numpy

from ...blas import matmul
from ._columns import Array, Shape, store

#: Padded plane widths this layout serves: the band's extra arithmetic grows with the width, and
#: on narrower planes the GEMMs are too small for BLAS to reach speed.
MIN_PADDED_WIDTH, MAX_PADDED_WIDTH = 16, 72


def pays(c: int, groups: int, filters_per_group: int, x_shape: Shape, pad: Shape) -> bool:
    """Whether this layer runs here: 2-D depthwise (channel multiplier 1) on narrow planes."""
    return (len(x_shape) == 4 and groups == c and filters_per_group == 1
            and MIN_PADDED_WIDTH <= x_shape[3] + 2 * pad[1] <= MAX_PADDED_WIDTH)


def bands(w_g: Array, kernel: Shape, stride: Shape, dilate: Shape, wp: int, wo: int) -> Array:
    """``(C, KH, Wp, Wo)``: each channel's kernel rows as banded matrices."""
    c = w_g.shape[0]
    taps = w_g.reshape((c,) + tuple(kernel))
    t = numpy.zeros((c, kernel[0], wp, wo), w_g.dtype)
    cols = numpy.arange(wo)
    for kw in range(kernel[1]):
        t[:, :, stride[1] * cols + kw * dilate[1], cols] = taps[:, :, kw, None]
    return t


def forward(x: Array, w_g: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape, osp: Shape,
            out: Array, bias: Array | None = None, relu: bool = False) -> None:
    """``out`` (N, C, 1, P) = the depthwise correlation of ``x`` (N, C, H, W) with ``w_g`` (C, 1, K)
    (+ ``bias`` (C,), then ``max(., 0)`` when ``relu``)."""
    n, c, h, w = x.shape
    sh, dh, (ph, pw) = stride[0], dilate[0], pad
    ho, wo = osp
    hq = -(-(h + 2 * ph) // sh) * sh  # padded height rounded up to the stride: whole rows per sample
    wp = w + 2 * pw
    step = hq // sh
    extra = (kernel[0] - 1) * dh  # zero rows after the last sample for the straddling rows' reads
    buf = numpy.zeros((c, n * hq + extra, wp), x.dtype)
    planes = buf[:, :n * hq].reshape(c, n, hq, wp)
    planes[:, :, ph:ph + h, pw:pw + w] = x.transpose(1, 0, 2, 3)
    t = bands(w_g, kernel, stride, dilate, wp, wo)
    rows = n * step
    res = numpy.empty((c, rows, wo), x.dtype)
    item = x.itemsize
    for kh in range(kernel[0]):
        a = numpy.lib.stride_tricks.as_strided(buf[:, kh * dh:], shape=(c, rows, wp),
                                               strides=(buf.strides[0], sh * wp * item, item), writeable=False)
        matmul(a, t[:, kh], out=res, accumulate=kh > 0)
    valid = res.reshape(c, n, step, wo)[:, :, :ho].transpose(1, 0, 2, 3)
    result, shift = out.reshape((n, c) + tuple(osp)), None if bias is None else bias.reshape(c, 1, 1)
    for b in range(n):  # a sample at a time: the relu pass finds it in cache
        store(result[b], valid[b], shift, relu)

