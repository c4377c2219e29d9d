"""``_contrib_RROIAlign(data, rois; pooled_size, spatial_scale, sampling_ratio=-1)`` (MXNet 1.9.1's rotated
ROI align, ``mx.nd.contrib.RROIAlign``): each ROI ``[batch_index, x_center, y_center, w, h, theta_degrees]``
(scaled by ``spatial_scale``, sides at least 1) is cut into ``pooled_size`` bins, each averaged over a grid of
bilinearly interpolated samples (``sampling_ratio`` per side, or ``ceil(side / pooled)`` when <= 0) rotated
by theta about the centre; samples beyond one pixel outside the map count as 0. Output
``(num_rois, C, ph, pw)``. As in MXNet there is no gradient.
"""

from __future__ import annotations

import math

import numpy as np

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam, Shape

__all__ = ["RROIAlignParam"]


class RROIAlignParam(OpParam):
    pooled_size: Shape = Field(description="the output's (height, width)")
    spatial_scale: float = Field(ge=0, le=1, description="feature map size over image size (1 / total stride)")
    sampling_ratio: int = Field(-1, description="samples per bin side; <= 0: ceil(roi side / pooled side)")


class _RROIAlignProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        data, rois = in_shapes
        if len(self.params.pooled_size) != 2:
            raise self.error(f"pooled_size={self.params.pooled_size} must be (height, width)")
        if data is not None and len(data) != 4:
            raise self.error(f"data has shape {tuple(data)}; it must be (batch, channels, height, width)")
        if rois is not None and (len(rois) != 2 or rois[1] != 6):
            raise self.error(f"rois has shape {tuple(rois)}; it must be (num_rois, 6): "
                             "[batch_index, x, y, w, h, theta]")
        if data is None or rois is None:
            return list(in_shapes), [None], []
        return [tuple(data), tuple(rois)], [(rois[0], data[1], *self.params.pooled_size)], []


def _rroi_align(xp, p, data, rois):
    _, channels, height, width = data.shape
    ph, pw = p.pooled_size
    out = xp.zeros((rois.shape[0], channels, ph, pw), dtype=data.dtype)
    host = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64)
    for n, (b, cx, cy, rw, rh, theta) in enumerate(host):
        cx, cy = cx * p.spatial_scale, cy * p.spatial_scale
        rw, rh = max(rw * p.spatial_scale, 1.0), max(rh * p.spatial_scale, 1.0)
        gh = p.sampling_ratio if p.sampling_ratio > 0 else math.ceil(rh / ph)
        gw = p.sampling_ratio if p.sampling_ratio > 0 else math.ceil(rw / pw)
        bh, bw = rh / ph, rw / pw
        # sample offsets from the centre, before rotation: (ph, gh) rows by (pw, gw) columns
        yy = (-rh / 2 + np.arange(ph)[:, None] * bh + (np.arange(gh)[None, :] + 0.5) * bh / gh)[:, :, None, None]
        xx = (-rw / 2 + np.arange(pw)[:, None] * bw + (np.arange(gw)[None, :] + 0.5) * bw / gw)[None, None]
        rad = theta * math.pi / 180.0
        cos, sin = math.cos(rad), math.sin(rad)
        x = xx * cos + yy * sin + cx
        y = yy * cos - xx * sin + cy
        outside = (y < -1.0) | (y > height) | (x < -1.0) | (x > width)
        y, x = np.maximum(y, 0), np.maximum(x, 0)
        y_low, x_low = y.astype(np.int64), x.astype(np.int64)
        top_y, top_x = y_low >= height - 1, x_low >= width - 1
        y_low, x_low = np.where(top_y, height - 1, y_low), np.where(top_x, width - 1, x_low)
        y, x = np.where(top_y, y_low, y), np.where(top_x, x_low, x)
        y_high, x_high = np.where(top_y, y_low, y_low + 1), np.where(top_x, x_low, x_low + 1)
        ly, lx = y - y_low, x - x_low
        hy, hx = 1 - ly, 1 - lx
        keep = ~outside
        plane = data[int(b)].reshape(channels, height * width)
        acc = 0
        for yi, xi, w in ((y_low, x_low, hy * hx), (y_low, x_high, hy * lx), (y_high, x_low, ly * hx),
                          (y_high, x_high, ly * lx)):
            idx = xp.asarray(np.where(keep, yi * width + xi, 0).reshape(-1))
            acc = acc + plane[:, idx] * xp.asarray(np.where(keep, w, 0).reshape(-1), dtype=data.dtype)
        acc = acc.reshape(channels, ph, gh, pw, gw)
        out[n] = acc.sum(axis=(2, 4)) / (gh * gw)
    return out


defop("_contrib_RROIAlign", param=RROIAlignParam, base=_RROIAlignProperty, arguments=("data", "rois"),
      fwd=_rroi_align, non_differentiable=True,
      doc="Rotated ROI align: each ROI [batch, x, y, w, h, theta] pooled to pooled_size bins of averaged, "
          "bilinearly interpolated samples rotated by theta (degrees); no gradient, as in MXNet.")
