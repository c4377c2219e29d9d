"""Table row: batch_take (row-wise pick with int32 indices, clipped; no gradient)."""

from __future__ import annotations

import numpy as np
from cases import Case, uniform


def _int_indices(lo, hi):
    def gen(rng, shape, dtype):
        return rng.integers(lo, hi, size=shape).astype(np.int32)  # batch_take takes int32 indices only

    return gen


def _batch_take(a, idx):
    return a[np.arange(a.shape[0]), np.clip(idx, 0, a.shape[1] - 1)]


CASES = [
    Case("batch_take", [((4, 3), (4,)), ((2, 5), (2,))], ref=_batch_take, gens=[uniform(), _int_indices(-2, 7)],
         grad=False),
]
