"""``ROIPooling``: max pooling of regions of interest into a fixed grid (Fast R-CNN; MXNet's roi_pooling.cc).

``rois`` (R, 5) holds ``[batch_index, x1, y1, x2, y2]`` in input-image coordinates;
``spatial_scale`` maps them onto the feature map (coordinates rounded, both ends
inclusive, as MXNet does). Each region is split into ``pooled_size`` bins whose
maximum is taken; an empty bin or a negative batch index gives 0.

>>> import mxasync as mx
>>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
>>> mx.nd.ROIPooling(x, mx.nd.array([[0, 0, 0, 3, 3]]), pooled_size=(2, 2), spatial_scale=1.0)[0, 0]
<BLANKLINE>
[[ 5.  7.]
 [13. 15.]]
<NDArray 2x2 @cpu(0)>
"""

from __future__ import annotations

import math

from pydantic import Field

from .._util import check_roi_inputs
from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["ROIPoolingParam"]


class ROIPoolingParam(OpParam):
    pooled_size: tuple[int, int] = Field(description="the output grid (height, width) of each region")
    spatial_scale: float = Field(gt=0, description="multiplies the rois' coordinates (feature stride inverse)")


class _ROIPoolingProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, rois = in_shapes
        if d is None or rois is None:
            return list(in_shapes), [None], []
        check_roi_inputs(self, d, rois)
        return [d, rois], [(rois[0], d[1], *self.params.pooled_size)], []


def _round(v: float) -> int:
    return int(math.floor(v + 0.5)) if v >= 0 else -int(math.floor(-v + 0.5))  # C's round: half away from 0


def _bins(p, roi, height, width):
    """Yield (ph, pw, h0, h1, w0, w1) of each non-empty bin of one region."""
    x1, y1, x2, y2 = (_round(float(v) * p.spatial_scale) for v in roi[1:5])
    roi_h, roi_w = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
    ph_n, pw_n = p.pooled_size
    bin_h, bin_w = roi_h / ph_n, roi_w / pw_n
    for ph in range(ph_n):
        h0 = min(max(int(math.floor(ph * bin_h)) + y1, 0), height)
        h1 = min(max(int(math.ceil((ph + 1) * bin_h)) + y1, 0), height)
        for pw in range(pw_n):
            w0 = min(max(int(math.floor(pw * bin_w)) + x1, 0), width)
            w1 = min(max(int(math.ceil((pw + 1) * bin_w)) + x1, 0), width)
            if h1 > h0 and w1 > w0:
                yield ph, pw, h0, h1, w0, w1


def _roi_pooling(xp, p, data, rois):
    n, c, height, width = data.shape
    out = xp.zeros((rois.shape[0], c, *p.pooled_size), dtype=data.dtype)
    host_rois = rois.tolist()
    for r, roi in enumerate(host_rois):
        b = int(roi[0])
        if not 0 <= b < n:
            continue
        for ph, pw, h0, h1, w0, w1 in _bins(p, roi, height, width):
            out[r, :, ph, pw] = data[b, :, h0:h1, w0:w1].reshape(c, -1).max(axis=1)
    return out


def _roi_pooling_bwd(xp, p, og, ins, outs):
    data, rois = ins
    n, c, height, width = data.shape
    grad = xp.zeros_like(data)
    channels = xp.arange(c)
    for r, roi in enumerate(rois.tolist()):
        b = int(roi[0])
        if not 0 <= b < n:
            continue
        for ph, pw, h0, h1, w0, w1 in _bins(p, roi, height, width):
            window = data[b, :, h0:h1, w0:w1].reshape(c, -1)
            first_max = window.argmax(axis=1)  # ties go to the first maximum, as MXNet's argmax
            hh, ww = h0 + first_max // (w1 - w0), w0 + first_max % (w1 - w0)
            grad[b, channels, hh, ww] += og[0][r, :, ph, pw]
    return [grad, None]


defop("ROIPooling", param=ROIPoolingParam, base=_ROIPoolingProperty, arguments=("data", "rois"), deps="og,in",
      fwd=_roi_pooling, bwd=_roi_pooling_bwd,
      doc="Max-pool each region of interest (rois: (R, 5) [batch_index, x1, y1, x2, y2]) of (N, C, H, W) data "
          "into a (R, C, *pooled_size) grid.")
