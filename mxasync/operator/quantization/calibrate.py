"""``_contrib_calibrate_entropy``: the KL-divergence threshold search of MXNet's entropy calibration.

For each candidate threshold (the edge ``i`` bins either side of the zero bin, ``i`` from
``num_quantized_bins // 2`` to the last), the histogram clipped to it (outliers folded into the
end bins) is ``p``; ``q`` merges the clipped bins into ``num_quantized_bins`` and spreads each
merged count back over its non-empty bins.  Both are smoothed (zeros get 1e-4, taken off the rest)
and the threshold with the smallest KL(p || q) wins (the first on ties).  Float32, as MXNet's.
"""

from __future__ import annotations

import numpy as np

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam

__all__ = ["CalibrateEntropyParam", "entropy_threshold"]

F32 = np.float32


class CalibrateEntropyParam(OpParam):
    num_quantized_bins: int = Field(default=255, gt=0)


def _smooth(p, eps=F32(1e-4)):
    zeros = p == 0
    n_zeros = int(zeros.sum())
    n_nonzeros = p.size - n_zeros
    if not n_nonzeros:
        return None
    eps1 = F32(eps * F32(n_zeros) / F32(n_nonzeros))
    if eps1 >= 1:
        return None
    return (p + np.where(zeros, eps, -eps1)).astype(F32)


def _divergence(hist, start, stop, nq):
    sliced = hist[start:stop].astype(np.int64)  # MXNet keeps the clipped counts as integers
    sliced[0] = 0
    p = hist[start:stop].astype(F32)
    p[0] = F32(hist[:start + 1].sum(dtype=F32))
    p[-1] = F32(hist[stop - 1:].sum(dtype=F32))
    merged = sliced.size // nq
    bins = sliced[:nq * merged].reshape(nq, merged).sum(axis=1)
    bins[-1] += sliced[nq * merged:].sum()
    q = np.zeros(sliced.size, F32)
    for j in range(nq):
        lo, hi = j * merged, (sliced.size if j == nq - 1 else (j + 1) * merged)
        norm = np.count_nonzero(sliced[lo:hi])
        if norm:
            q[lo:hi] = np.where(p[lo:hi] != 0, F32(F32(bins[j]) / F32(norm)), F32(0))
    p, q = _smooth(p), _smooth(q)
    if q is None or p is None:
        return F32(np.inf)
    p = p / p.sum(dtype=F32)
    q = q / q.sum(dtype=F32)
    return F32((p * np.log(p / q)).sum(dtype=F32))


def entropy_threshold(hist, hist_edges, num_quantized_bins: int = 255) -> tuple[np.float32, np.float32]:
    """(threshold, divergence) minimising KL divergence over a symmetric histogram (numpy arrays)."""
    hist = np.asarray(hist, F32)
    edges = np.asarray(hist_edges, F32)
    num_bins = hist.size
    if edges.size != num_bins + 1:
        raise ValueError(f"_contrib_calibrate_entropy: hist has {num_bins} bins but hist_edges "
                         f"{edges.size} edges (needs {num_bins + 1})")
    zero = num_bins // 2
    half = num_quantized_bins // 2
    best, best_i = F32(np.finfo(F32).max), half
    for i in range(half, zero + 1):
        d = _divergence(hist, zero - i, zero + i + 1, num_quantized_bins)
        if d < best:
            best, best_i = d, i
    return F32(edges[zero + best_i + 1]), best


class _CalibrateProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        return list(in_shapes), [(1,), (1,)], []

    def infer_type(self, in_types):
        return ["float32", "float32"], ["float32", "float32"], []


def _calibrate(xp, p, hist, edges):
    th, div = entropy_threshold(np.asarray(hist.get() if hasattr(hist, "get") else hist),
                                np.asarray(edges.get() if hasattr(edges, "get") else edges), p.num_quantized_bins)
    return xp.asarray([th], F32), xp.asarray([div], F32)


defop("_contrib_calibrate_entropy", param=CalibrateEntropyParam, base=_CalibrateProperty, fwd=_calibrate,
      arguments=("hist", "hist_edges"), outputs=("threshold", "divergence"), non_differentiable=True, deps="",
      doc="The quantization threshold minimising the KL divergence of a histogram (entropy calibration).")
