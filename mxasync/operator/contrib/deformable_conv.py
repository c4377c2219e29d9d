"""Deformable convolutions (MXNet's ``contrib.DeformableConvolution`` and
``contrib.ModulatedDeformableConvolution``, Dai et al. 2017 and Zhu et al. 2019).

Each kernel tap of each output position reads the input at its regular place moved by a
learned ``offset`` (channels ``2 * (i * kw + j)`` for the row shift and ``+ 1`` for the
column shift of tap ``(i, j)``, per deformable group), bilinearly with zeros outside; the
modulated form also scales each tap by ``mask``. The sampled columns then go through one
matrix product per group, as im2col convolution. Gradients reach the data, the offsets,
the mask, the weight and the bias.

>>> import mxasync as mx
>>> x = mx.nd.ones((1, 2, 5, 5))
>>> y = mx.nd.contrib.DeformableConvolution(x, mx.nd.zeros((1, 18, 5, 5)), mx.nd.ones((3, 2, 3, 3)),
...                                         mx.nd.zeros((3,)), kernel=(3, 3), pad=(1, 1), num_filter=3)
>>> y.shape, float(y[0, 0, 2, 2].asscalar())
((1, 3, 5, 5), 18.0)
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam, Shape

__all__ = ["DeformableConvolutionParam"]


class DeformableConvolutionParam(OpParam):
    kernel: Shape = Field(description="the kernel size (h, w)")
    stride: Shape = Field((), description="the stride (h, w); empty: 1")
    dilate: Shape = Field((), description="the dilation (h, w); empty: 1")
    pad: Shape = Field((), description="the zero padding (h, w); empty: 0")
    num_filter: int = Field(ge=1, description="the number of output channels")
    num_group: int = Field(1, ge=1, description="the number of channel groups")
    num_deformable_group: int = Field(1, ge=1, description="the number of groups of channels sharing offsets")
    workspace: int = Field(1024, ge=0, description="MXNet's workspace limit in MB (unused here)")
    no_bias: bool = Field(False, description="leave out the bias")
    im2col_step: int = Field(64, description="MXNet's im2col batch step (unused here)")
    layout: Optional[str] = Field(None, description="the data layout; only NCHW")


def _geometry(p):
    kh, kw = p.kernel
    sh, sw = p.stride or (1, 1)
    dh, dw = p.dilate or (1, 1)
    ph, pw = p.pad or (0, 0)
    return kh, kw, sh, sw, dh, dw, ph, pw


def _out_hw(p, h, w):
    kh, kw, sh, sw, dh, dw, ph, pw = _geometry(p)
    return (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1


def _make_property(modulated: bool):
    class _Property(FunctionalProperty):
        def list_arguments(self):
            args = ["data", "offset"] + (["mask"] if modulated else []) + ["weight"]
            return args + ([] if self.params.no_bias else ["bias"])

        def infer_shape(self, in_shapes):
            p = self.params
            d = in_shapes[0]
            if d is None:
                return list(in_shapes), [None], []
            if len(d) != 4 or len(p.kernel) != 2:
                raise self.error(f"only 2-D (NCHW data, (h, w) kernel) is supported; data {tuple(d)}, kernel "
                                 f"{p.kernel}")
            n, c, h, w = d
            if c % p.num_group or p.num_filter % p.num_group or c % p.num_deformable_group:
                raise self.error(f"channels {c} and num_filter {p.num_filter} must divide by num_group "
                                 f"{p.num_group}, channels by num_deformable_group {p.num_deformable_group}")
            oh, ow = _out_hw(p, h, w)
            taps = p.kernel[0] * p.kernel[1]
            shapes = [d, (n, p.num_deformable_group * 2 * taps, oh, ow)]
            if modulated:
                shapes.append((n, p.num_deformable_group * taps, oh, ow))
            shapes.append((p.num_filter, c // p.num_group) + tuple(p.kernel))
            if not p.no_bias:
                shapes.append((p.num_filter,))
            for name, given, want in zip(self.list_arguments(), in_shapes, shapes, strict=False):
                if given is not None and tuple(given) != want:
                    raise self.error(f"{name} has shape {tuple(given)} but data {tuple(d)} needs {want}")
            return shapes, [(n, p.num_filter, oh, ow)], []

    return _Property


def _sample_points(p, shape, offset):
    """Sampling rows/columns (N, G, K, P) of each tap at each output position."""
    kh, kw, sh, sw, dh, dw, ph, pw = _geometry(p)
    n, _, h, w = shape
    oh, ow = _out_hw(p, h, w)
    g = p.num_deformable_group
    off = offset.reshape(n, g, kh * kw, 2, oh * ow)
    base_y = (np.arange(oh) * sh - ph)[:, None] + np.zeros((1, ow))
    base_x = (np.arange(ow) * sw - pw)[None, :] + np.zeros((oh, 1))
    tap_y = (np.arange(kh) * dh)[:, None].repeat(kw, 1).reshape(-1)
    tap_x = (np.arange(kw) * dw)[None, :].repeat(kh, 0).reshape(-1)
    y = base_y.reshape(1, 1, 1, -1) + tap_y.reshape(1, 1, -1, 1) + off[:, :, :, 0]
    x = base_x.reshape(1, 1, 1, -1) + tap_x.reshape(1, 1, -1, 1) + off[:, :, :, 1]
    return y, x


def _corners(y, x, h, w, modulated=True):
    """The four neighbours of each point: (rows, cols, weights, in-range masks). The modulated op samples
    within (-1, size) with zeros past the border; the plain one (MXNet's deformable_im2col) within
    [0, size), repeating the last row or column past it."""
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    if modulated:
        inside = (y > -1) & (x > -1) & (y < h) & (x < w)
    else:
        inside = (y >= 0) & (x >= 0) & (y < h) & (x < w)
        y = np.where(y0 >= h - 1, y0, y)  # at the last row: no fraction (y1 = y0 = h - 1)
        x = np.where(x0 >= w - 1, x0, x)
    ly, lx = y - y0, x - x0
    out = []
    for dy, dx, wt in ((0, 0, (1 - ly) * (1 - lx)), (0, 1, (1 - ly) * lx), (1, 0, ly * (1 - lx)), (1, 1, ly * lx)):
        r, c = y0 + dy, x0 + dx
        ok = inside & (r >= 0) & (r < h) & (c >= 0) & (c < w)
        out.append((np.clip(r, 0, h - 1), np.clip(c, 0, w - 1), wt, ok))
    return out, ly, lx


def _sample(data, y, x, g, modulated):
    """Bilinear samples (N, C, K, P) of data (N, C, H, W) at the points of each channel's deformable group."""
    n, c, h, w = data.shape
    cpg = c // g
    grp = np.repeat(np.arange(g), cpg)
    yy, xx = y[:, grp], x[:, grp]  # (N, C, K, P)
    corners, _, _ = _corners(yy, xx, h, w, modulated)
    bi = np.arange(n)[:, None, None, None]
    ci = np.arange(c)[None, :, None, None]
    vals = [np.where(ok, data[bi, ci, r, cc], 0) for r, cc, _, ok in corners]
    return sum(v * wt for v, (_, _, wt, _) in zip(vals, corners, strict=True)), corners, vals, (yy, xx)


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def _unpack(p, ins, modulated):
    data, offset = _host(ins[0]).astype(np.float64), _host(ins[1]).astype(np.float64)
    k = 2
    mask = None
    if modulated:
        mask, k = _host(ins[2]).astype(np.float64), 3
    weight = _host(ins[k]).astype(np.float64)
    bias = None if p.no_bias else _host(ins[k + 1]).astype(np.float64)
    return data, offset, mask, weight, bias


def _columns(p, data, offset, mask):
    kh, kw = p.kernel
    y, x = _sample_points(p, data.shape, offset)
    sampled, corners, vals, yx = _sample(data, y, x, p.num_deformable_group, mask is not None)
    if mask is not None:
        n = data.shape[0]
        grp = np.repeat(np.arange(p.num_deformable_group), data.shape[1] // p.num_deformable_group)
        m = mask.reshape(n, p.num_deformable_group, kh * kw, -1)[:, grp]
        return sampled * m, sampled, m, corners, vals, yx
    return sampled, sampled, None, corners, vals, yx


def _make_forward(modulated):
    def fwd(xp, p, *ins):
        data, offset, mask, weight, bias = _unpack(p, ins, modulated)
        n, c, h, w = data.shape
        oh, ow = _out_hw(p, h, w)
        cols = _columns(p, data, offset, mask)[0]  # (N, C, K, P)
        g = p.num_group
        cols = cols.reshape(n, g, (c // g) * p.kernel[0] * p.kernel[1], oh * ow)
        wmat = weight.reshape(g, p.num_filter // g, -1)
        out = np.einsum("gfk,ngkp->ngfp", wmat, cols).reshape(n, p.num_filter, oh, ow)
        if bias is not None:
            out = out + bias.reshape(1, -1, 1, 1)
        return xp.asarray(out.astype(ins[0].dtype))

    return fwd


def _make_backward(modulated):
    def bwd(xp, p, og, ins, outs):
        data, offset, mask, weight, bias = _unpack(p, ins, modulated)
        n, c, h, w = data.shape
        kh, kw = p.kernel
        taps = kh * kw
        oh, ow = _out_hw(p, h, w)
        cols, sampled, m, corners, vals, (yy, xx) = _columns(p, data, offset, mask)
        g, dg = p.num_group, p.num_deformable_group
        go = _host(og[0]).astype(np.float64).reshape(n, g, p.num_filter // g, oh * ow)
        wmat = weight.reshape(g, p.num_filter // g, -1)
        d_weight = np.einsum("ngfp,ngkp->gfk", go, cols.reshape(n, g, -1, oh * ow)).reshape(weight.shape)
        d_cols = np.einsum("gfk,ngfp->ngkp", wmat, go).reshape(n, c, taps, oh * ow)
        d_sampled = d_cols * m if m is not None else d_cols
        # data: each sample scatters its weights to its four neighbours
        d_data = np.zeros_like(data)
        bi = np.broadcast_to(np.arange(n)[:, None, None, None], d_sampled.shape)
        ci = np.broadcast_to(np.arange(c)[None, :, None, None], d_sampled.shape)
        for r, cc, wt, ok in corners:
            np.add.at(d_data, (bi[ok], ci[ok], r[ok], cc[ok]), (d_sampled * wt)[ok])
        # offsets: the derivative of the bilinear sample along y and x, summed over a group's channels
        v1, v2, v3, v4 = vals
        ly, lx = yy - np.floor(yy), xx - np.floor(xx)
        if modulated:
            inside = (yy > -1) & (xx > -1) & (yy < h) & (xx < w)
        else:  # a point on the last row/column has no fraction there: no derivative along it
            inside = (yy >= 0) & (xx >= 0) & (yy < h) & (xx < w)
            ly, lx = np.where(np.floor(yy) >= h - 1, 0, ly), np.where(np.floor(xx) >= w - 1, 0, lx)
        dy = np.where(inside, (1 - lx) * (v3 - v1) + lx * (v4 - v2), 0)
        dx = np.where(inside, (1 - ly) * (v2 - v1) + ly * (v4 - v3), 0)
        if not modulated:  # the plain op's sample is constant along an axis past its last row/column
            dy = np.where(np.floor(yy) >= h - 1, 0, dy)
            dx = np.where(np.floor(xx) >= w - 1, 0, dx)
        per_group = lambda a: a.reshape(n, dg, c // dg, taps, oh * ow).sum(2)  # noqa: E731
        d_offset = np.stack([per_group(d_sampled * dy), per_group(d_sampled * dx)], axis=3)
        grads = [d_data, d_offset.reshape(offset.shape)]
        if modulated:
            grads.append(per_group(d_cols * sampled).reshape(mask.shape))
        grads.append(d_weight)
        if bias is not None:
            grads.append(_host(og[0]).astype(np.float64).sum(axis=(0, 2, 3)))
        return [xp.asarray(gr.astype(x.dtype)) for gr, x in zip(grads, ins, strict=True)]

    return bwd


defop("_contrib_DeformableConvolution", param=DeformableConvolutionParam, base=_make_property(False),
      fwd=_make_forward(False), bwd=_make_backward(False), deps="og,in", arguments=("data", "offset", "weight", "bias"),
      args=lambda p: ["data", "offset", "weight"] + ([] if p.no_bias else ["bias"]),
      doc="Convolution whose kernel taps read the input at learned offsets (bilinear, zero outside).")
defop("_contrib_ModulatedDeformableConvolution", param=DeformableConvolutionParam, base=_make_property(True),
      fwd=_make_forward(True), bwd=_make_backward(True), deps="og,in",
      arguments=("data", "offset", "mask", "weight", "bias"),
      args=lambda p: ["data", "offset", "mask", "weight"] + ([] if p.no_bias else ["bias"]),
      doc="Deformable convolution whose taps are also scaled by a learned mask (DCNv2).")
