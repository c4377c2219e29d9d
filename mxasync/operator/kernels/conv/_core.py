"""Grouped convolution primitives shared by Convolution and Deconvolution, over any ``xp``.

Weights are taken pre-grouped as ``w_g`` of shape ``(G, F/G, C/G * prod(kernel))``.  The
columns of the whole batch are laid out ``(N, C, *kernel, *out)`` and one broadcasting matmul
``(G, Fg, CgK) @ (N, G, CgK, P)`` computes every sample (a GPU wants few big launches).

This is the core every backend gets.  A backend with a faster one hands it to the kernels
through its runner (``run.conv_core()``, :mod:`.._runner`); the numpy backend's
(``mxasync/backends/numpy/kernels/conv``) picks one of several layouts per layer and keeps a
training forward's columns for the backward pass.  Both cores take the same arguments:
``keep`` and ``dyt`` are hints this one ignores; ``bias`` and ``relu`` it applies after the GEMM.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._util import Array, Shape, out_view, pad_spatial, prod
from .im2col import col2im_nd, conv_out_size, im2col_nd


def out_spatial(insp: Sequence[int], kernel: Shape, stride: Shape, dilate: Shape, pad: Shape) -> Shape:
    return tuple(
        conv_out_size(s, k, st, p, d) for s, k, st, p, d in zip(insp, kernel, stride, pad, dilate, strict=True)
    )


def grad_layout(xp: Any, dy: Array, x_shape: Sequence[int], kernel: Shape, stride: Shape) -> None:
    """The rearranged ``dy`` a core may share between both backward GEMMs: none here."""
    return None


def conv_forward(xp: Any, x: Array, w_g: Array, kernel: Shape, stride: Shape, dilate: Shape, pad: Shape,
                 into: Array | None = None, keep: bool = False, bias: Array | None = None,
                 relu: bool = False) -> Array:
    """Grouped correlation of ``x`` (N, C, *S) with ``w_g`` -> (N, F, *out) (+ ``bias`` (F,), then
    ``max(., 0)`` when ``relu``), in ``into`` when it fits."""
    n, c = x.shape[:2]
    g, fg, ckg = w_g.shape
    osp = out_spatial(x.shape[2:], kernel, stride, dilate, pad)
    p = prod(osp)
    out = out_view(into, (n, g, fg, p), x.dtype)
    if out is None:
        into, out = None, xp.empty((n, g, fg, p), dtype=x.dtype)
    cols = im2col_nd(xp, pad_spatial(xp, x, pad, pad), kernel, stride, dilate, (0,) * len(kernel))
    xp.matmul(w_g, cols.reshape(n, g, ckg, p), out=out)
    if bias is not None:
        out += bias.reshape(g, fg, 1)
    if relu:
        xp.maximum(out, 0, out=out)
    return into if into is not None else out.reshape((n, g * fg) + osp)


def conv_backward_data(xp: Any, dy: Array, w_g: Array, in_spatial: Sequence[int], kernel: Shape, stride: Shape,
                       dilate: Shape, pad: Shape, into: Array | None = None, dyt: Array | None = None) -> Array:
    """Gradient of :func:`conv_forward` w.r.t. ``x``: ``w_g^T @ dy`` then col2im (in ``into`` when it fits)."""
    n = dy.shape[0]
    g, fg, ckg = w_g.shape
    c = g * ckg // prod(kernel)
    osp = tuple(dy.shape[2:])
    p = prod(osp)
    dx = out_view(into, (n, c) + tuple(in_spatial), dy.dtype)
    if dx is None:
        into, dx = None, xp.empty((n, c) + tuple(in_spatial), dtype=dy.dtype)
    dcols = xp.matmul(w_g.transpose(0, 2, 1), dy.reshape(n, g, fg, p)).reshape((n, c) + kernel + osp)
    dx[...] = col2im_nd(xp, dcols, in_spatial, kernel, stride, dilate, pad)
    return into if into is not None else dx


def conv_backward_weight(xp: Any, x: Array, dy: Array, groups: int, kernel: Shape, stride: Shape, dilate: Shape,
                         pad: Shape, into: Array | None = None, dyt: Array | None = None) -> Array:
    """Gradient of :func:`conv_forward` w.r.t. ``w_g``: ``sum_n dy[n] @ cols[n]^T`` (in ``into`` when it fits)."""
    n, c = x.shape[:2]
    f = dy.shape[1]
    ckg = c // groups * prod(kernel)
    p = prod(dy.shape[2:])
    dw = out_view(into, (groups, f // groups, ckg), x.dtype)
    if dw is None:
        into, dw = None, xp.empty((groups, f // groups, ckg), dtype=x.dtype)
    if n == 0:
        dw[...] = 0
        return into if into is not None else dw
    cols = im2col_nd(xp, pad_spatial(xp, x, pad, pad), kernel, stride, dilate, (0,) * len(kernel))
    dyc = dy.reshape(n, groups, f // groups, p)
    dw[...] = xp.matmul(dyc, cols.reshape(n, groups, ckg, p).transpose(0, 1, 3, 2)).sum(axis=0)
    return into if into is not None else dw
