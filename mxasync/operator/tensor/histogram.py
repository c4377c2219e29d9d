"""``_histogram``: counts of values in bins, the op behind MXNet's ``mx.sym.histogram`` (histogram.cc).

With ``bin_cnt`` (and ``range=(lo, hi)``) the bins are ``bin_cnt`` equal parts of the range and the only
input is ``data``; without it a second input ``bins`` holds the edges. Outputs: the counts (int64,
one per bin) and the edges (data's dtype). As numpy's ``histogram``, the last bin includes its right
edge and values outside the edges are not counted. No gradient.

>>> import mxasync as mx
>>> counts, edges = mx.nd._internal._histogram(mx.nd.array([0.1, 0.5, 2.0, 3.0]), bin_cnt=3, range=(0, 3))
>>> counts.asnumpy(), edges.asnumpy()
(array([2, 0, 2]), array([0., 1., 2., 3.], dtype=float32))
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["HistogramParam"]


class HistogramParam(OpParam):
    bin_cnt: Optional[int] = Field(None, ge=1, description="the number of equal bins (None: the edges are "
                                                           "the input ``bins``)")
    range: Optional[tuple[float, float]] = Field(None, description="the (lower, upper) edges of the equal bins")


class _HistogramProperty(FunctionalProperty):
    def list_outputs(self):
        return ["output0", "output1"]

    def infer_shape(self, in_shapes):
        p = self.params
        if p.bin_cnt is not None:
            if p.range is None:
                raise self.error("bin_cnt needs range=(lower, upper)")
            return list(in_shapes), [(p.bin_cnt,), (p.bin_cnt + 1,)], []
        bins = in_shapes[1]
        if bins is None:
            return list(in_shapes), [None, None], []
        if len(bins) != 1 or bins[0] < 2:
            raise self.error(f"bins has shape {tuple(bins)}; it must hold at least 2 edges (1-D)")
        return list(in_shapes), [(bins[0] - 1,), tuple(bins)], []

    def infer_type(self, in_types):
        t = next((x for x in in_types if x is not None), None)
        return [t] * len(in_types), [np.dtype(np.int64), t], []


def _histogram(xp, p, data, bins=None):
    if p.bin_cnt is not None:
        lo, hi = p.range
        edges = xp.linspace(lo, hi, p.bin_cnt + 1)
    else:
        edges = bins.astype(np.float64)
    x = data.astype(np.float64).reshape(-1)
    x = x[(x >= edges[0]) & (x <= edges[-1])]
    idx = xp.clip(xp.searchsorted(edges, x, side="right") - 1, 0, edges.shape[0] - 2)  # right edge: last bin
    counts = xp.bincount(idx, minlength=edges.shape[0] - 1).astype(np.int64)
    return [counts, edges.astype(data.dtype)]


defop("_histogram", param=HistogramParam, base=_HistogramProperty, fwd=_histogram, deps="", non_differentiable=True,
      arguments=("data", "bins"), args=lambda p: ["data"] if p.bin_cnt is not None else ["data", "bins"],
      outputs=("output0", "output1"),
      doc="The counts (int64) of data's values in ``bin_cnt`` equal bins over ``range``, or in the bins whose "
          "edges are the input ``bins``; and the edges.")
