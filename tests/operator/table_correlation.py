"""Table rows: Correlation against a direct loop over positions, offsets, patch cells and channels."""

from __future__ import annotations

import math

import numpy as np
from cases import Case, away


def correlation_ref(d1, d2, kernel_size=1, max_displacement=1, stride1=1, stride2=1, pad_size=0, is_multiply=True):
    n, c, h, w = d1.shape
    k, md, pad = kernel_size, max_displacement, pad_size
    p1 = np.pad(d1.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    p2 = np.pad(d2.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    border = md + (k - 1) // 2
    th = math.ceil((h + 2 * pad - 2 * border) / stride1)
    tw = math.ceil((w + 2 * pad - 2 * border) / stride1)
    radius = md // stride2
    grid = 2 * radius + 1
    out = np.zeros((n, grid * grid, th, tw))
    for i in range(th):
        for j in range(tw):
            y1, x1 = i * stride1 + md, j * stride1 + md
            for ch in range(grid * grid):
                y2 = y1 + (ch // grid - radius) * stride2
                x2 = x1 + (ch % grid - radius) * stride2
                a = p1[:, :, y1:y1 + k, x1:x1 + k]
                b = p2[:, :, y2:y2 + k, x2:x2 + k]
                v = a * b if is_multiply else np.abs(a - b)
                out[:, ch, i, j] = v.sum(axis=(1, 2, 3)) / (k * k * c)
    return out.astype(d1.dtype)


CASES = [
    Case("Correlation", [[(1, 2, 5, 6)] * 2], ref=correlation_ref, name="correlation_default"),
    Case("Correlation", [[(1, 2, 6, 5)] * 2], ref=correlation_ref, name="correlation_k3_pad",
         params=dict(kernel_size=3, max_displacement=1, stride1=2, stride2=1, pad_size=2)),
    Case("Correlation", [[(2, 1, 5, 5)] * 2], ref=correlation_ref, name="correlation_stride2",
         params=dict(max_displacement=2, stride2=2, pad_size=2)),
    # |a - b| has a kink at a == b: values kept apart (one input positive, one negative)
    Case("Correlation", [[(1, 2, 5, 5)] * 2], ref=correlation_ref, name="correlation_abs",
         params=dict(kernel_size=3, max_displacement=1, pad_size=1, is_multiply=False),
         gens=[away(0.5, 2.0), away(-2.0, -0.5)]),
]
