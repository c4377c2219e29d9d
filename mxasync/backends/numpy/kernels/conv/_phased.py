"""The data gradient of a strided convolution by stride phases: GEMMs over shifted views, no col2im.

A strided layer's data gradient on the per-sample layout is ``w^T @ dy`` as columns, then
col2im: ``prod(kernel)`` strided read-add-writes of the whole input gradient.  Split the
padded input positions by their phase ``r = position mod stride`` instead: the tap ``t``
reaches position ``stride * o + t``, so a position of phase ``r`` only hears taps
``t = r + stride * j``, from the output at ``q - j`` when the position is ``stride * q + r``.
Each phase is then a unit-stride correlation of ``dy`` with its own few taps, which
:mod:`._shifted`'s trick computes without columns: one GEMM per tap,
``w[:, :, t]^T @ dy_flat[:, shift : shift + L]``, accumulated (BLAS's beta) on a grid of
the zero-padded ``dy``'s rows, whose valid part is then copied once into every
``stride``-th element of ``dx``.

Measured on ResNet-18's 64->128 3x3/2 layer at 56x56 (batch 8, one thread, 2-core Xeon):
23.5 -> 11.4 ms (col2im alone cost 8.6 ms, and the GEMM over the transposed weight ran at
73 GFLOP/s).  On small planes (14x14 in, 512 filters: 9.4 -> 17.6 ms) the per-tap GEMMs are too
narrow; those layers run in :mod:`._batch_inner`, which :mod:`._core` tries first.  A phase needs
a tap: every kernel extent must reach its stride (a 1x1/2 layer's other phases are zeros).
"""

from __future__ import annotations

import itertools

import numpy

from ...blas import matmul_into_rows
from ._columns import Array, Shape, pad_spatial, prod

#: Channels per group (in and out: the per-tap GEMMs' sides) below which the GEMMs are too thin to pay.
MIN_CHANNELS = 16


def pays(cg: int, fg: int, kernel: Shape, stride: Shape, dilate: Shape) -> bool:
    """Whether a strided layer's data gradient runs here: no dilation, every phase has a tap, enough channels."""
    return (any(s > 1 for s in stride) and all(d == 1 for d in dilate)
            and all(k >= s for k, s in zip(kernel, stride, strict=True)) and min(cg, fg) >= MIN_CHANNELS)


def _phase_range(size: int, pad: int, phase: int, stride: int) -> tuple[int, int]:
    """``(first q, count)`` of the padded positions ``stride * q + phase`` that lie inside the unpadded axis."""
    first = max(0, -(-(pad - phase) // stride))
    last = (size - 1 + pad - phase) // stride
    return first, max(0, last - first + 1)


def data_grad(dy: Array, w_g: Array, in_spatial: Shape, kernel: Shape, stride: Shape, pad: Shape,
              dx: Array) -> None:
    """Fill ``dx`` ``(N, C, *in_spatial)`` with the data gradient of the correlation of ``x`` with ``w_g``
    ``(G, Fg, Cg * prod(kernel))`` at ``stride`` and ``pad``, given ``dy`` ``(N, F, *out)``."""
    n = dy.shape[0]
    g, fg, ckg = w_g.shape
    cg = ckg // prod(kernel)
    ranges = [[_phase_range(size, p, r, s) for r in range(s)]
              for size, p, s in zip(in_spatial, pad, stride, strict=True)]
    # zeros around dy: before, the largest tap shift; after, up to the last position any phase reaches
    before = tuple((k - 1) // s for k, s in zip(kernel, stride, strict=True))
    after = tuple(max(0, max(q0 + cnt for q0, cnt in axis) - o)
                  for axis, o in zip(ranges, dy.shape[2:], strict=True))
    dyp = pad_spatial(dy, before, after)
    psp = dyp.shape[2:]
    strides = tuple(prod(psp[i + 1:]) for i in range(len(psp)))
    flat = dyp.reshape(n, g, fg, -1)
    nk = len(kernel)
    # each tap's (Cg, Fg) matrix contiguous: the weight transposed once, taps first
    w_t = numpy.ascontiguousarray(
        numpy.moveaxis(w_g.reshape((g, fg, cg) + kernel), range(3, 3 + nk), range(1, 1 + nk)).swapaxes(-1, -2))
    grid = numpy.empty((n, g, cg, max(r[1] for r in ranges[0]) * strides[0]), dtype=dy.dtype)
    dx_g = dx.reshape((n, g, cg) + tuple(in_spatial))
    for phase in itertools.product(*(range(s) for s in stride)):
        firsts, counts = zip(*(axis[r] for axis, r in zip(ranges, phase, strict=True)), strict=True)
        if 0 in counts:
            continue  # an axis shorter than its stride: no position of this phase
        length = sum((c - 1) * st for c, st in zip(counts, strides, strict=True)) + 1
        taps = itertools.product(*(range(r, k, s) for r, k, s in zip(phase, kernel, stride, strict=True)))
        for i, tap in enumerate(taps):
            shift = sum((q0 - t // s + b) * st
                        for q0, t, s, b, st in zip(firsts, tap, stride, before, strides, strict=True))
            for gi in range(g):
                matmul_into_rows(w_t[(gi,) + tap], flat[:, gi, :, shift:shift + length], grid[:, gi, :, :length],
                                 accumulate=i > 0)
        _scatter(grid, counts, psp, strides, dx_g,
                 tuple(s * q0 + r - p for s, q0, r, p in zip(stride, firsts, phase, pad, strict=True)), stride)


def _scatter(grid: Array, counts: Shape, psp: Shape, strides: Shape, dx_g: Array, starts: Shape,
             stride: Shape) -> None:
    """Copy a phase's valid grid part (rows of the padded ``dy``'s width) to every ``stride``-th element of ``dx``."""
    rows = grid[..., :counts[0] * strides[0]].reshape(grid.shape[:3] + (counts[0],) + tuple(psp[1:]))
    rows = rows[(Ellipsis,) + tuple(slice(0, c) for c in counts[1:])]
    target = dx_g[(Ellipsis,) + tuple(slice(b, b + s * (c - 1) + 1, s)
                                      for b, s, c in zip(starts, stride, counts, strict=True))]
    numpy.copyto(target, rows)
