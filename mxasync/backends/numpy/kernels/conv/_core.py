"""The numpy backend's convolution core: Convolution and Deconvolution on host memory.

It takes the arguments of the generic core (``operator/kernels/conv/_core.py``), which the
convolution kernels call through their runner (``NUMPY.conv_core()``); ``xp`` is numpy here.
Weights are taken pre-grouped as ``w_g`` of shape ``(G, F/G, C/G * prod(kernel))``.  Each
call picks a layout by the layer's shape:

* layouts without columns (:func:`_columnless`): 2-D depthwise layers on planes 14 to 70 wide as
  batched GEMMs with banded weights (:mod:`._banded`), other unit-stride depthwise layers on big
  planes over the padded grid (:mod:`._depthwise`), unit 1x1 layers on planes of at least 14x14
  as one batched GEMM on the input as it is;
* :mod:`._batch_inner` for small output planes: the batch innermost, one GEMM per batch;
* :mod:`._shifted` for other unit-stride layers with enough channels: no im2col, one GEMM
  per kernel offset over shifted views of the input;
* :mod:`._phased` for the data gradient of other strided layers: one unit-stride correlation
  per stride phase over shifted views of ``dy``, no col2im;
* the per-sample layout here for the rest: one broadcasting matmul
  ``(G, Fg, CgK) @ (b, G, CgK, P)`` over a chunk of samples whose column buffer stays near the
  L3 cache (faster than one huge im2col, and far less memory).  A training forward instead
  fills one buffer for the whole batch and leaves it in :data:`~._colstore.COLUMNS` for the
  weight gradient (the batch-inner layout keeps its columns the same way).

The copies and sums around the GEMMs (im2col, col2im) are split over the numpy backend's
kernel threads when big enough; the GEMMs go to the engine's BLAS (:mod:`...blas`).  A forward's
bias (and a fused relu: MXNet's ``_sg_mkldnn_conv``, which an inference graph's folded
``Convolution -> BatchNorm -> relu`` runs as) is applied by each layout's last copy, while the
output is in cache (:func:`._columns.store`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy

from ..runner import NUMPY
from . import _banded as banded
from . import _batch_inner as batch_inner
from . import _depthwise as depthwise
from . import _phased as phased
from . import _shifted as shifted
from ._colstore import COLUMNS
from ._columns import Array, Shape, col2im, conv_out_size, im2col_into, out_view, pad_spatial, prod

matmul = NUMPY.matmul
split_rows = NUMPY.split_rows

# Output planes below this (14x14) run unit 1x1 layers in the batch-inner layout (see _columnless).
POINTWISE_MIN_PLANE = 14 * 14

# Column bytes per chunk on numpy (measured on a 32 MiB-L3 EPYC: 8-16 MiB is the sweet spot).
CHUNK_BYTES = 12 << 20


def batch_chunks(n: int, bytes_per_sample: int) -> Iterator[tuple[int, int]]:
    """``(lo, hi)`` batch ranges whose columns take about ``CHUNK_BYTES``."""
    step = max(1, min(n, CHUNK_BYTES // max(1, bytes_per_sample)))
    for lo in range(0, n, step):
        yield lo, min(n, lo + step)


def out_spatial(insp: Sequence[int], kernel: Shape, stride: Shape, dilate: Shape, pad: Shape) -> Shape:
    return tuple(
        conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(insp, kernel, stride, pad, dilate, strict=True)
    )


def _im2col_into(xpad: Array, kernel: Shape, stride: Shape, dilate: Shape, out: Array) -> Array:
    split_rows(lambda b0, b1, c0, c1: im2col_into(xpad[b0:b1, c0:c1], kernel, stride, dilate, out[b0:b1, c0:c1]),
               out.shape[0], out.shape[1], out.size)
    return out


def col_geometry(x: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape) -> tuple:
    """The key kept columns are filed under, beside their input array (their layout follows from it)."""
    return (tuple(x.shape), str(x.dtype), kernel, stride, dilate, pad)


# Unit-stride output planes above this (16x16) run the forward and the data gradient over shifted views
# even where the weight gradient keeps the batch-inner layout (see _batch_inner).
SHIFTED_MIN_PLANE = 16 * 16


def _batch_inner(n: int, c: int, osp: Shape, kernel: Shape, stride: Shape, itemsize: int, groups: int = 1,
                 weight: bool = False) -> bool:
    """Whether this geometry runs in :mod:`._batch_inner`'s one-GEMM layout (``weight``: for the weight gradient).

    On unit-stride planes above 16x16 with enough channels a forward (and a data gradient, the flipped
    correlation) runs faster over shifted views, while the weight gradient's one GEMM still wins, its
    columns rebuilt included (ResNet-18's 128x28x28 layers, batch 8, one thread, ``benchmarks/
    resnet_conv_layers.py``: forward 21.4 -> 16.7 ms, data gradient 22.0 -> 16.5, weight gradient
    15.9 -> 20.1 for the rebuild; on 16x16 and below the layouts tie or the batch-inner one wins).
    """
    ck = c * prod(kernel)
    if not batch_inner.pays(ck, osp, stride, n * ck * prod(osp) * itemsize):
        return False
    return weight or prod(osp) <= SHIFTED_MIN_PLANE or not shifted.pays(c // groups, stride)


def grad_layout(xp: Any, dy: Array, x_shape: Sequence[int], kernel: Shape, stride: Shape) -> Array | None:
    """``dy`` rearranged once for both backward GEMMs when the batch-inner layout is used, else None."""
    if _batch_inner(dy.shape[0], x_shape[1], dy.shape[2:], kernel, stride, dy.itemsize, weight=True):
        return batch_inner.grad_batch_inner(dy)
    return None


def conv_forward(xp: Any, x: Array, w_g: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape,
                 into: Array | None = None, keep: bool = False, bias: Array | None = None,
                 relu: bool = False) -> Array:
    """Grouped correlation of ``x`` (N, C, *S) with ``w_g`` -> (N, F, *out), in ``into`` when it fits.

    ``keep``: leave the columns for :func:`conv_backward_weight` (a training forward), when the
    column budget has room.  ``bias`` (F,) and ``relu`` (a fused ``max(., 0)``, for an inference
    graph's folded ``Convolution -> BatchNorm -> relu``): applied by each layout's last copy (or right
    after each chunk's GEMM) while the output is in cache, not in passes of their own.
    """
    n, c = x.shape[:2]
    g, fg, ckg = w_g.shape
    osp = out_spatial(x.shape[2:], kernel, stride, dilate, pad)
    p = prod(osp)
    out = out_view(into, (n, g, fg, p), x.dtype)
    if out is None:
        into, out = None, numpy.empty((n, g, fg, p), dtype=x.dtype)
    result = into if into is not None else out.reshape((n, g * fg) + osp)
    if n and p and _columnless(x, w_g, kernel, stride, dilate, pad, osp, out, bias, relu):
        return result
    if _batch_inner(n, c, osp, kernel, stride, x.itemsize, g):
        _forward_batch_inner(x, w_g, kernel, stride, dilate, pad, osp, out, keep, bias, relu)
        return result
    if n and p and shifted.pays(c // g, stride):
        # no columns to keep: the weight gradient recomputes them, which costs less than keeping
        # them cost (ResNet-18's step: 700 -> 650 ms, 60 MB less, no page faults on fresh buffers)
        COLUMNS.drop(x, col_geometry(x, kernel, stride, dilate, pad))
        shifted.forward(x, w_g, kernel, dilate, pad, osp, out, bias, relu)
        return result
    _forward_columns(x, w_g, kernel, stride, dilate, pad, osp, out, keep, bias, relu)
    return result


def _forward_columns(x: Array, w_g: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape, osp: Shape,
                     out: Array, keep: bool, bias: Array | None, relu: bool) -> None:
    """The per-sample layout: im2col columns chunk by chunk (or kept for the whole batch), batched GEMMs."""
    n, c = x.shape[:2]
    g, fg, ckg = w_g.shape
    p = prod(osp)
    shift = None if bias is None else bias.reshape(g, fg, 1)
    whole = COLUMNS.take((n, c) + kernel + osp, x.dtype) if keep and n and p else None
    if not keep:
        # an inference forward on the same array: what an earlier training forward kept may be stale now
        COLUMNS.drop(x, col_geometry(x, kernel, stride, dilate, pad))
    xpad = pad_spatial(x, pad, pad)
    buf = None
    try:
        if whole is not None:
            # the columns of the whole batch are kept anyway: one batched GEMM over them all runs
            # faster than one per chunk (ResNet-18's 56x56 layers: 19.7 -> 15.7 ms)
            _im2col_into(xpad, kernel, stride, dilate, whole)
            matmul(numpy, w_g, whole.reshape(n, g, ckg, p), out=out)
            _epilogue(out, shift, relu)
        else:
            for lo, hi in batch_chunks(n, c * prod(kernel) * p * x.itemsize):
                if buf is None:
                    buf = numpy.empty((hi - lo, c) + kernel + osp, dtype=x.dtype)
                cols = _im2col_into(xpad[lo:hi], kernel, stride, dilate, buf[: hi - lo])
                matmul(numpy, w_g, cols.reshape(hi - lo, g, ckg, p), out=out[lo:hi])
                _epilogue(out[lo:hi], shift, relu)  # while the chunk's output is still in cache
    except BaseException:
        if whole is not None:
            COLUMNS.give_back(whole)
        raise
    if whole is not None:
        COLUMNS.keep(x, col_geometry(x, kernel, stride, dilate, pad), whole)


def _columnless(x: Array, w_g: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape, osp: Shape,
                out: Array, bias: Array | None = None, relu: bool = False) -> bool:
    """Fill ``out`` (N, G, Fg, P) by a layout that needs no columns, when one serves this layer: big
    depthwise layers (:mod:`._depthwise`) and unit 1x1 ones, which are one batched GEMM on the input as it is
    (MobileNet's 256x28x28 layer: 12.5 -> 7.2 ms of CPU against the batch-inner layout's transposes; on
    7x7 planes the per-sample GEMMs are too thin and the batch-inner layout's one GEMM wins, 7.7 against 9).
    Such a forward keeps no columns: the weight gradient computes its own."""
    n, c = x.shape[:2]
    g, fg, _ = w_g.shape
    if banded.pays(c, g, fg, x.shape, pad):
        COLUMNS.drop(x, col_geometry(x, kernel, stride, dilate, pad))
        banded.forward(x, w_g, kernel, stride, dilate, pad, osp, out, bias, relu)
        return True
    if depthwise.pays(c, g, fg, stride, osp):
        COLUMNS.drop(x, col_geometry(x, kernel, stride, dilate, pad))
        depthwise.forward(x, w_g, kernel, dilate, pad, osp, out, bias, relu)
        return True
    if all(k == 1 for k in kernel) and all(s == 1 for s in stride) and not any(pad) and prod(osp) >= POINTWISE_MIN_PLANE:
        COLUMNS.drop(x, col_geometry(x, kernel, stride, dilate, pad))
        if bias is None:
            matmul(numpy, w_g, x.reshape(n, g, c // g, prod(osp)), out=out)
        else:  # the bias written first and the product accumulated onto it: no pass of its own
            out[...] = bias.reshape(g, fg, 1)
            matmul(numpy, w_g, x.reshape(n, g, c // g, prod(osp)), out=out, accumulate=True)
        _epilogue(out, None, relu)
        return True
    return False


def _epilogue(out: Array, shift: Array | None, relu: bool) -> None:
    """``out += shift`` (a broadcast bias) and ``max(out, 0)`` in place, each when asked."""
    if shift is not None:
        out += shift
    if relu:
        numpy.maximum(out, 0, out=out)


def _forward_batch_inner(x: Array, w_g: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape,
                         osp: Shape, out: Array, keep: bool, bias: Array | None, relu: bool) -> None:
    geometry = col_geometry(x, kernel, stride, dilate, pad)
    shape = (x.shape[1],) + kernel + osp + (x.shape[0],)
    cols = COLUMNS.take(shape, x.dtype) if keep else None
    if not keep:
        COLUMNS.drop(x, geometry)
    try:
        if cols is None:
            cols = numpy.empty(shape, x.dtype)
            keep = False
        if all(k == 1 for k in kernel) and all(st == 1 for st in stride) and not any(pad):
            # a unit 1x1 layer's columns are its input turned batch-inner: one copy, not two
            numpy.copyto(cols.reshape(x.shape[1:] + x.shape[:1]), numpy.moveaxis(x, 0, -1))
        else:
            batch_inner.columns(batch_inner.to_batch_inner(x, pad), kernel, stride, dilate, osp, cols)
        batch_inner.forward(cols, w_g, out, bias, relu)
    except BaseException:
        if keep:
            COLUMNS.give_back(cols)
        raise
    if keep:
        COLUMNS.keep(x, geometry, cols)


def conv_backward_data(
    xp: Any,
    dy: Array,
    w_g: Array,
    in_spatial: Sequence[int],
    kernel: Shape,
    stride: Shape,
    dilate: Shape,
    pad: Shape,
    into: Array | None = None,
    dyt: Array | None = None,
) -> Array:
    """Gradient of :func:`conv_forward` w.r.t. ``x``: ``w_g^T @ dy`` then col2im (in ``into`` when it fits).

    ``dyt``: :func:`grad_layout`'s rearranged ``dy``, when the caller made it for both gradients.

    With unit stride, and when ``dy`` has no more elements than ``x``, it is instead
    a correlation of ``dy`` with the flipped kernel: that copies (im2col) where
    col2im would accumulate, ~15% faster on numpy for same-size layers.  Strided layers
    with enough channels run by stride phases (:mod:`._phased`), unless batch-inner.
    """
    n = dy.shape[0]
    g, fg, ckg = w_g.shape
    c = g * ckg // prod(kernel)
    in_spatial = tuple(in_spatial)
    flipped_pad = tuple(d * (k - 1) - p for k, d, p in zip(kernel, dilate, pad, strict=True))
    smaller = prod(dy.shape[1:]) <= c * prod(in_spatial)
    flipped = smaller and all(s == 1 for s in stride) and min(flipped_pad) >= 0
    # the flipped correlation is a forward: the forward's rule; else the batch-inner layout's whole reach
    if _batch_inner(n, c, dy.shape[2:], kernel, stride, dy.itemsize, g, weight=not flipped):
        dx, into = _grad_out(into, (n, c) + in_spatial, dy.dtype)
        dyt = batch_inner.grad_batch_inner(dy) if dyt is None else dyt
        batch_inner.data_grad(dyt, w_g, in_spatial, kernel, stride, dilate, pad, tuple(dy.shape[2:]), dx)
        return into if into is not None else dx
    if flipped:
        cg = ckg // prod(kernel)
        w_k = w_g.reshape((g, fg, cg) + kernel)[(Ellipsis,) + (slice(None, None, -1),) * len(kernel)]
        w_flip = numpy.ascontiguousarray(w_k.swapaxes(1, 2)).reshape(g, cg, fg * prod(kernel))
        return conv_forward(xp, dy, w_flip, kernel, stride, dilate, flipped_pad, into=into)
    dx, into = _grad_out(into, (n, c) + in_spatial, dy.dtype)
    if dy.size and phased.pays(c // g, fg, kernel, stride, dilate):
        phased.data_grad(dy, w_g, in_spatial, kernel, stride, pad, dx)
    else:
        _data_grad_columns(dy, w_g, in_spatial, kernel, stride, dilate, pad, dx)
    return into if into is not None else dx


def _data_grad_columns(dy: Array, w_g: Array, in_spatial: Shape, kernel: Shape, stride: Shape, dilate: Shape,
                       pad: Shape, dx: Array) -> None:
    """The per-sample data gradient: ``w_g^T @ dy`` as columns, chunk by chunk, summed back by col2im."""
    n = dy.shape[0]
    g, fg, ckg = w_g.shape
    c = dx.shape[1]
    osp = dy.shape[2:]
    p = prod(osp)
    w_t = w_g.transpose(0, 2, 1)  # a transposed operand: BLAS reads it as it is
    for lo, hi in batch_chunks(n, g * ckg * p * dy.itemsize):
        dcols = matmul(numpy, w_t, dy[lo:hi].reshape(hi - lo, g, fg, p))
        dcols = dcols.reshape((hi - lo, c) + kernel + osp)
        target = dx[lo:hi]

        def back(b0, b1, c0, c1, dcols=dcols, target=target):
            target[b0:b1, c0:c1] = col2im(dcols[b0:b1, c0:c1], in_spatial, kernel, stride, dilate, pad)

        split_rows(back, hi - lo, c, dcols.size)


def _grad_out(into: Array | None, shape: Shape, dtype: Any) -> tuple[Array, Array | None]:
    """``(dx, into)``: a gradient's array, ``into`` seen in ``shape`` when a kernel may write it directly
    (``into`` is then returned as is), else a fresh one (and ``into`` None)."""
    dx = out_view(into, shape, dtype)
    if dx is None:
        return numpy.empty(shape, dtype=dtype), None
    return dx, into


def conv_backward_weight(
    xp: Any,
    x: Array,
    dy: Array,
    groups: int,
    kernel: Shape,
    stride: Shape,
    dilate: Shape,
    pad: Shape,
    into: Array | None = None,
    dyt: Array | None = None,
) -> Array:
    """Gradient of :func:`conv_forward` w.r.t. ``w_g``: ``sum_n dy[n] @ cols[n]^T`` (in ``into`` when it fits).

    Uses the columns a training forward on this ``x`` kept, else recomputes them chunk by chunk.
    """
    c = x.shape[1]
    f = dy.shape[1]
    ckg = c // groups * prod(kernel)
    kept = COLUMNS.pop(x, col_geometry(x, kernel, stride, dilate, pad))
    dw = out_view(into, (groups, f // groups, ckg), x.dtype)
    if dw is None:
        into, dw = None, numpy.empty((groups, f // groups, ckg), dtype=x.dtype)
    n, osp = x.shape[0], tuple(dy.shape[2:])
    inner = _batch_inner(n, c, osp, kernel, stride, x.itemsize, weight=True)
    layout = (c,) + kernel + osp + (n,) if inner else (n, c) + kernel + osp
    cols = kept if kept is not None and kept.shape == layout else None  # else kept in another layout: recompute
    scratch = None
    try:
        if inner:
            if cols is None:
                # a spare buffer of the store where it has room: a fresh one page-faults on every touch
                scratch = COLUMNS.take(layout, x.dtype)
                cols = scratch if scratch is not None else numpy.empty(layout, x.dtype)
                batch_inner.columns(batch_inner.to_batch_inner(x, pad), kernel, stride, dilate, osp, cols)
            dyt = batch_inner.grad_batch_inner(dy) if dyt is None else dyt
            batch_inner.weight_grad(dyt, cols, groups, dw)
        else:
            _weight_sum(x, dy, groups, kernel, stride, dilate, pad, cols, dw)
    finally:
        for buf in (kept, scratch):
            if buf is not None:
                COLUMNS.give_back(buf)
    return into if into is not None else dw


def _weight_sum(x: Array, dy: Array, groups: int, kernel: Shape, stride: Shape, dilate: Shape,
                pad: Shape, kept: Array | None, dw: Array) -> None:
    n, c = x.shape[:2]
    ckg = dw.shape[2]
    osp = dy.shape[2:]
    p = prod(osp)
    xpad = pad_spatial(x, pad, pad) if kept is None else None
    buf = None
    first = True
    for lo, hi in batch_chunks(n, c * prod(kernel) * p * x.itemsize):
        if kept is not None:
            cols = kept[lo:hi]
        else:
            if buf is None:
                buf = numpy.empty((hi - lo, c) + kernel + osp, dtype=x.dtype)
            cols = _im2col_into(xpad[lo:hi], kernel, stride, dilate, buf[: hi - lo])
        part = _weight_part(dy[lo:hi], cols.reshape(hi - lo, groups, ckg, p), groups)
        if first:
            dw[...] = part
            first = False
        else:
            dw += part
    if first:  # an empty batch
        dw[...] = 0


def _weight_part(dy: Array, cols: Array, groups: int) -> Array:
    """``sum_b dy[b] @ cols[b]^T`` per group over a batch chunk (batched GEMMs beat one GEMM over
    transposed copies here)."""
    b = cols.shape[0]
    dyc = dy.reshape(b, groups, dy.shape[1] // groups, cols.shape[3])
    part = matmul(numpy, dyc, cols.transpose(0, 1, 3, 2))
    return part.sum(axis=0) if b > 1 else part[0]
