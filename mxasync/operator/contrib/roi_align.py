"""``ROIAlign`` and ``PSROIPooling`` (MXNet's contrib/roi_align and contrib/psroi_pooling).

Both take NCHW ``data`` and ``rois`` of shape (R, 5), ``[batch_index, x1, y1, x2, y2]`` in
image coordinates scaled by ``spatial_scale``.

- ``ROIAlign`` splits each region into ``pooled_size`` bins and averages, per bin, a
  ``sample_ratio`` x ``sample_ratio`` grid of bilinearly interpolated points (adaptive:
  ``ceil(roi_size / pooled_size)`` per side). ``aligned`` shifts the coordinates by half a
  pixel (Detectron2); ``position_sensitive`` reads bin ``(ph, pw)`` of output channel ``c``
  from input channel ``c * PH * PW + ph * PW + pw``. A region with a negative batch index
  gives zeros (MXNet zeroes one value and leaves the rest of its output unwritten).
- ``PSROIPooling`` (R-FCN) averages each integer bin of the rounded region over input
  channel ``(c * group_size + gh) * group_size + gw``, ``(gh, gw)`` the bin's group.

Kernels are vectorised over all regions: ROIAlign is one sparse matrix (every sample point's
4 bilinear weights) times the pixels, and its transpose times the output gradient
(``scipy.sparse``, ``cupyx.scipy.sparse`` on CuPy); PSROIPooling sums bins from a
summed-area table and spreads gradients with a 2-D difference array.

>>> import mxasync as mx
>>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
>>> mx.nd.contrib.ROIAlign(x, mx.nd.array([[0, 0, 0, 3, 3]]), pooled_size=(2, 2), spatial_scale=1.0)[0, 0]
<BLANKLINE>
[[ 3.75  5.25]
 [ 9.75 11.25]]
<NDArray 2x2 @cpu(0)>
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from .._loading import lazy_import
from .._util import check_roi_inputs
from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["ROIAlignParam", "PSROIPoolingParam"]


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


# -- ROIAlign --------------------------------------------------------------------------------------
class ROIAlignParam(OpParam):
    pooled_size: tuple[int, int] = Field(description="the output grid (height, width) of each region")
    spatial_scale: float = Field(ge=0, le=1, description="multiplies the rois' coordinates (1 / feature stride)")
    sample_ratio: int = Field(-1, description="sampling points per bin side (<= 0: ceil(roi size / pooled size))")
    position_sensitive: bool = Field(False, description="position-sensitive RoI pooling (R-FCN): bin (ph, pw) of "
                                     "channel c reads channel c * PH * PW + ph * PW + pw")
    aligned: bool = Field(False, description="shift the coordinates by -0.5 (Detectron2's center-aligned RoIAlign)")


class _ROIAlignProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, rois = in_shapes
        if d is None or rois is None:
            return list(in_shapes), [None], []
        check_roi_inputs(self, d, rois)
        ph, pw = self.params.pooled_size
        if ph <= 0 or pw <= 0:
            raise self.error(f"pooled_size={self.params.pooled_size} must be positive")
        c = d[1]
        if self.params.position_sensitive:
            if c % (ph * pw):
                raise self.error(f"data has {c} channels; position_sensitive needs a multiple of "
                                 f"pooled_size[0] * pooled_size[1] = {ph * pw}")
            c //= ph * pw
        return [d, rois], [(rois[0], c, ph, pw)], []


def _align_samples(p, rois, n, height, width, dtype):
    """Every sample point's 4 neighbours over all regions: (dst, src, weight), flat.

    ``dst`` is ``roi * P + bin``; ``src`` is ``(batch * P' + bin') * H * W + pixel`` with
    ``P' = P`` (bin' = bin) when position sensitive, else 1 (bin' = 0).
    """
    t = np.dtype(dtype).type
    ph_n, pw_n = p.pooled_size
    nbins = ph_n * pw_n
    scale, off = t(np.float32(p.spatial_scale)), t(0.5 if p.aligned else 0)
    dst, src, wts = [], [], []
    for r, roi in enumerate(rois.astype(dtype)):
        b = int(roi[0])
        if b < 0 or b >= n:
            continue
        x1, y1, x2, y2 = (roi[k] * scale - off for k in range(1, 5))
        rw, rh = x2 - x1, y2 - y1
        if not p.aligned:
            rw, rh = max(rw, t(1)), max(rh, t(1))
        bh, bw = rh / t(ph_n), rw / t(pw_n)
        gh = p.sample_ratio if p.sample_ratio > 0 else int(np.ceil(rh / t(ph_n)))
        gw = p.sample_ratio if p.sample_ratio > 0 else int(np.ceil(rw / t(pw_n)))
        if gh <= 0 or gw <= 0:
            continue
        count = t(gh * gw)
        ph = np.arange(ph_n, dtype=dtype)[:, None, None, None]
        pw = np.arange(pw_n, dtype=dtype)[None, :, None, None]
        iy = (np.arange(gh, dtype=dtype) + t(0.5))[None, None, :, None]
        ix = (np.arange(gw, dtype=dtype) + t(0.5))[None, None, None, :]
        y = np.broadcast_to(y1 + ph * bh + iy * bh / t(gh), (ph_n, pw_n, gh, gw))
        x = np.broadcast_to(x1 + pw * bw + ix * bw / t(gw), (ph_n, pw_n, gh, gw))
        outside = (y < -1) | (y > height) | (x < -1) | (x > width)
        y, x = np.maximum(y, 0), np.maximum(x, 0)
        ylo, xlo = y.astype(np.int64), x.astype(np.int64)
        ytop, xtop = ylo >= height - 1, xlo >= width - 1
        ylo, xlo = np.where(ytop, height - 1, ylo), np.where(xtop, width - 1, xlo)
        yhi, xhi = np.where(ytop, ylo, ylo + 1), np.where(xtop, xlo, xlo + 1)
        ly = np.where(ytop, t(0), y - ylo.astype(dtype))
        lx = np.where(xtop, t(0), x - xlo.astype(dtype))
        hy, hx = t(1) - ly, t(1) - lx
        w = np.stack([hy * hx, hy * lx, ly * hx, ly * lx], -1) / count
        w[outside] = 0
        pix = np.stack([ylo * width + xlo, ylo * width + xhi, yhi * width + xlo, yhi * width + xhi], -1)
        bins = np.arange(nbins).reshape(ph_n, pw_n, 1, 1, 1)
        chan = b * nbins + bins if p.position_sensitive else b + 0 * bins
        src.append((chan * (height * width) + pix).ravel())
        dst.append(np.broadcast_to(r * nbins + bins, pix.shape).ravel())
        wts.append(w.ravel())
    if not dst:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, dtype)
    return np.concatenate(dst), np.concatenate(src), np.concatenate(wts).astype(dtype)


def _pixels_last(xp, data, p):
    """data as rows of channels: (N * [P *] H * W, C_out)."""
    n, c, h, w = data.shape
    if p.position_sensitive:
        nbins = p.pooled_size[0] * p.pooled_size[1]
        return data.reshape(n, c // nbins, nbins, h * w).transpose(0, 2, 3, 1).reshape(-1, c // nbins)
    return data.reshape(n, c, h * w).transpose(0, 2, 1).reshape(-1, c)


def _sampling_matrix(xp, p, rois, data):
    """The sparse (R * bins, N * [bins *] H * W) matrix of every sample's bilinear weights (duplicates summed)."""
    n, c, h, w = data.shape
    nbins = p.pooled_size[0] * p.pooled_size[1]
    dst, src, wts = _align_samples(p, _host(rois), n, h, w, data.dtype)
    cols = n * (nbins if p.position_sensitive else 1) * h * w
    sp = lazy_import("mxasync.operator.sparse.formats").sparse_namespace(xp)  # scipy.sparse or cupyx's
    return sp.coo_matrix((xp.asarray(wts), (xp.asarray(dst), xp.asarray(src))),
                         shape=(rois.shape[0] * nbins, cols)).tocsr()


def _roi_align(xp, p, data, rois):
    out = _sampling_matrix(xp, p, rois, data) @ _pixels_last(xp, data, p)  # (R * bins, C_out)
    return xp.asarray(out, dtype=data.dtype).reshape(rois.shape[0], *p.pooled_size, -1).transpose(0, 3, 1, 2)


def _roi_align_bwd(xp, p, og, ins, outs):
    data, rois = ins
    n, c, h, w = data.shape
    g = og[0]
    rows = _sampling_matrix(xp, p, rois, data).T.tocsr() @ g.transpose(0, 2, 3, 1).reshape(-1, g.shape[1])
    rows = xp.asarray(rows, dtype=data.dtype)
    if p.position_sensitive:
        nbins = p.pooled_size[0] * p.pooled_size[1]
        grad = rows.reshape(n, nbins, h * w, -1).transpose(0, 3, 1, 2).reshape(data.shape)
    else:
        grad = rows.reshape(n, h * w, c).transpose(0, 2, 1).reshape(data.shape)
    return [grad, None]  # the rois get a zero gradient, as in MXNet


defop("_contrib_ROIAlign", param=ROIAlignParam, base=_ROIAlignProperty, arguments=("data", "rois"), deps="og,in",
      fwd=_roi_align, bwd=_roi_align_bwd,
      doc="RoIAlign (Mask R-CNN): average of bilinearly sampled points per bin of each region of interest "
          "(rois: (R, 5) [batch_index, x1, y1, x2, y2]) of (N, C, H, W) data: (R, C, *pooled_size).")


# -- PSROIPooling ----------------------------------------------------------------------------------
class PSROIPoolingParam(OpParam):
    spatial_scale: float = Field(ge=0, le=1, description="multiplies the rois' coordinates (1 / feature stride)")
    output_dim: int = Field(description="the output channels")
    pooled_size: int = Field(description="the output grid is pooled_size x pooled_size")
    group_size: int = Field(0, description="the position-sensitive groups per side (0: pooled_size)")


def _group(p):
    return p.group_size if p.group_size > 0 else p.pooled_size


class _PSROIProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, rois = in_shapes
        if d is None or rois is None:
            return list(in_shapes), [None], []
        check_roi_inputs(self, d, rois)
        p, g = self.params, _group(self.params)
        if d[1] != p.output_dim * g * g:
            raise self.error(f"data has {d[1]} channels but output_dim={p.output_dim} and group_size={g} "
                             f"need output_dim * group_size**2 = {p.output_dim * g * g}")
        return [d, rois], [(rois[0], p.output_dim, p.pooled_size, p.pooled_size)], []


def _psroi_bins(p, rois, height, width, dtype):
    """Per (roi, c_out, ph, pw): batch, input channel, h0, h1, w0, w1 (as index arrays)."""
    t = np.dtype(dtype).type
    k, g = p.pooled_size, _group(p)
    scale = t(np.float32(p.spatial_scale))
    r = rois.astype(dtype)
    rnd = np.sign(r[:, 1:5]) * np.floor(np.abs(r[:, 1:5]) + 0.5)  # C's round: half away from zero
    sw, sh = rnd[:, 0].astype(dtype) * scale, rnd[:, 1].astype(dtype) * scale
    ew, eh = (rnd[:, 2] + 1).astype(dtype) * scale, (rnd[:, 3] + 1).astype(dtype) * scale
    bw = np.maximum(ew - sw, t(0.1)) / t(k)
    bh = np.maximum(eh - sh, t(0.1)) / t(k)
    idx = np.arange(k, dtype=dtype)
    h0 = np.clip(np.floor(idx[None] * bh[:, None] + sh[:, None]), 0, height).astype(np.int64)
    h1 = np.clip(np.ceil((idx[None] + 1) * bh[:, None] + sh[:, None]), 0, height).astype(np.int64)
    w0 = np.clip(np.floor(idx[None] * bw[:, None] + sw[:, None]), 0, width).astype(np.int64)
    w1 = np.clip(np.ceil((idx[None] + 1) * bw[:, None] + sw[:, None]), 0, width).astype(np.int64)
    grp = np.clip(np.floor(idx * t(g) / t(k)).astype(np.int64), 0, g - 1)
    cout = np.arange(p.output_dim)
    chan = (cout[:, None, None] * g + grp[None, :, None]) * g + grp[None, None, :]  # (C_out, k, k)
    shape = (len(r), p.output_dim, k, k)
    b = np.broadcast_to(r[:, 0].astype(np.int64)[:, None, None, None], shape)
    hh0, hh1 = (np.broadcast_to(a[:, None, :, None], shape) for a in (h0, h1))
    ww0, ww1 = (np.broadcast_to(a[:, None, None, :], shape) for a in (w0, w1))
    return b, np.broadcast_to(chan[None], shape), hh0, hh1, ww0, ww1


def _psroi_pooling(xp, p, data, rois):
    n, c, h, w = data.shape
    b, ch, h0, h1, w0, w1 = (xp.asarray(a) for a in _psroi_bins(p, _host(rois), h, w, data.dtype))
    sat = xp.zeros((n, c, h + 1, w + 1), dtype="float64")
    sat[:, :, 1:, 1:] = xp.cumsum(xp.cumsum(data.astype("float64"), axis=2), axis=3)
    total = sat[b, ch, h1, w1] - sat[b, ch, h0, w1] - sat[b, ch, h1, w0] + sat[b, ch, h0, w0]
    area = (h1 - h0) * (w1 - w0)
    return xp.where(area > 0, total / xp.maximum(area, 1), 0).astype(data.dtype)


def _psroi_pooling_bwd(xp, p, og, ins, outs):
    data, rois = ins
    n, c, h, w = data.shape
    b, ch, h0, h1, w0, w1 = (xp.asarray(a) for a in _psroi_bins(p, _host(rois), h, w, data.dtype))
    area = (h1 - h0) * (w1 - w0)
    share = xp.where(area > 0, og[0] / xp.maximum(area, 1).astype(data.dtype), 0).astype("float64")
    diff = xp.zeros((n, c, h + 1, w + 1), dtype="float64")  # each bin's share spread by a difference array
    for hh, ww, sign in ((h0, w0, 1), (h0, w1, -1), (h1, w0, -1), (h1, w1, 1)):
        xp.add.at(diff, (b.ravel(), ch.ravel(), hh.ravel(), ww.ravel()), sign * share.ravel())
    grad = xp.cumsum(xp.cumsum(diff, axis=2), axis=3)[:, :, :h, :w]
    return [grad.astype(data.dtype), None]


defop("_contrib_PSROIPooling", param=PSROIPoolingParam, base=_PSROIProperty, arguments=("data", "rois"),
      deps="og,in", fwd=_psroi_pooling, bwd=_psroi_pooling_bwd,
      doc="Position-sensitive RoI pooling (R-FCN): per region (rois: (R, 5)) and bin, the average of the bin's "
          "own input channel group: (R, output_dim, pooled_size, pooled_size).")
