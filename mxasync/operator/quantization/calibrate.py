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
    num_quantized_bins: int = Field(default=255, gt=0, description="the number of quantized levels the histogram is merged into (255 for int8, 511 for a uint8 range from 0)")


_EPS = F32(1e-4)
_BLOCK = 16  # candidate thresholds evaluated together (rows of one 2-D array)


def _sequential_sum(v, axis=-1):
    """Float32 sums added left to right, as MXNet's ``std::accumulate`` (its rounding decides near-ties);
    trailing zeros (the padding of shorter rows) leave a row's sum unchanged."""
    return np.cumsum(v, axis=axis, dtype=F32).take(-1, axis=axis)


def _smooth(p, valid):
    """MXNet's ``SmoothDistribution`` per row: zeros get 1e-4, taken off the non-zeros; None rows
    (all zero, or too many zeros) come back as a False entry of the second result."""
    zeros = (p == 0) & valid
    n_zeros = zeros.sum(axis=1)
    n_nonzeros = valid.sum(axis=1) - n_zeros
    with np.errstate(divide="ignore", invalid="ignore"):
        eps1 = (_EPS * n_zeros.astype(F32) / n_nonzeros.astype(F32)).astype(F32)
    ok = (n_nonzeros > 0) & (eps1 < 1)
    out = np.where(valid, p + np.where(zeros, _EPS, -eps1[:, None]), F32(0)).astype(F32)
    return out, ok


def _divergences(hist, seq_prefix, centre: int, steps: np.ndarray, nq: int) -> np.ndarray:
    """KL(p || q) for the thresholds ``steps`` bins either side of the centre bin (one row each)."""
    starts, lens = centre - steps, 2 * steps + 1
    width = int(lens.max())
    cols = np.arange(width)
    valid = cols[None, :] < lens[:, None]
    idx = np.minimum(starts[:, None] + cols[None, :], hist.size - 1)
    p = np.where(valid, hist[idx], F32(0)).astype(F32)
    sliced = p.astype(np.int64)  # MXNet keeps the clipped counts as integers, its first one 0
    sliced[:, 0] = 0
    p[:, 0] = seq_prefix[starts]  # everything left of the threshold folds into the end bins
    last = lens - 1
    p[np.arange(len(steps)), last] = [_sequential_sum(hist[s + n - 1:]) for s, n in zip(starts, lens, strict=True)]
    merged = lens // nq
    which = np.minimum(cols[None, :] // merged[:, None], nq - 1)
    flat = (np.arange(len(steps))[:, None] * nq + which)[valid]
    bins = np.bincount(flat, weights=sliced[valid], minlength=len(steps) * nq).astype(F32).reshape(-1, nq)
    norm = np.bincount(flat, weights=(sliced != 0)[valid], minlength=len(steps) * nq).reshape(-1, nq)
    spread = np.where(norm > 0, bins / np.where(norm > 0, norm, 1).astype(F32), F32(0)).astype(F32)
    q = np.where(valid & (p != 0), np.take_along_axis(spread, which, axis=1), F32(0)).astype(F32)
    p, p_ok = _smooth(p, valid)
    q, q_ok = _smooth(q, valid)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = p / _sequential_sum(p)[:, None]
        q = q / _sequential_sum(q)[:, None]
        terms = np.where(valid, p * np.log(p / q), F32(0)).astype(F32)
    return np.where(p_ok & q_ok, _sequential_sum(terms), F32(np.inf)).astype(F32)


def entropy_threshold(hist, hist_edges, num_quantized_bins: int = 255) -> tuple[np.float32, np.float32]:
    """(threshold, divergence) minimising KL divergence over a symmetric histogram (numpy arrays)."""
    hist = np.asarray(hist, F32)
    edges = np.asarray(hist_edges, F32)
    num_bins = hist.size
    if edges.size != num_bins + 1:
        raise ValueError(f"_contrib_calibrate_entropy: hist has {num_bins} bins but hist_edges "
                         f"{edges.size} edges (needs {num_bins + 1})")
    centre, half = num_bins // 2, num_quantized_bins // 2
    seq_prefix = np.cumsum(hist, dtype=F32)
    steps = np.arange(half, centre + 1)
    div = np.concatenate([_divergences(hist, seq_prefix, centre, steps[k:k + _BLOCK], num_quantized_bins)
                          for k in range(0, steps.size, _BLOCK)])
    best = int(np.argmin(div))  # the first minimum, as MXNet's strict '<' scan
    return F32(edges[centre + steps[best] + 1]), F32(div[best])


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
