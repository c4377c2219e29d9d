"""Table rows: choose_element_0index and fill_element_0index (gradients with respect to the values only)."""

from __future__ import annotations

import numpy as np
from cases import Case, integers, uniform


def _choose(lhs, rhs):
    return lhs[np.arange(lhs.shape[0]), np.clip(rhs.astype(int), 0, lhs.shape[1] - 1)]


def _fill(lhs, mhs, rhs):
    out = lhs.copy()
    for i, j in enumerate(rhs.astype(int)):
        if 0 <= j < lhs.shape[1]:
            out[i, j] = mhs[i]
    return out


CASES = [
    Case("choose_element_0index", [((4, 3), (4,))], ref=_choose, gens=[uniform(), integers(-1, 4)], wrt=(0,)),
    Case("fill_element_0index", [((4, 3), (4,), (4,))], ref=_fill, gens=[uniform(), uniform(), integers(-1, 4)],
         wrt=(0, 1)),
]
