"""MXNet 1.x's diagonal and triangle packing ops: _linalg_extractdiag, makediag, extracttrian, maketrian.

Batched over the leading axes; ``offset`` > 0 is above the main diagonal, < 0 below.

>>> from mxasync.operator import get_op
>>> get_op("linalg_maketrian").prepare(offset=1).infer_shape([(6,)])[1]
[(4, 4)]
>>> get_op("_linalg_extracttrian").prepare().infer_shape([(2, 3, 3)])[1]
[(2, 6)]
"""

from __future__ import annotations

import math

import numpy as np

from ..functional import defop
from ..params import OpParam
from .la_op import _diag, _matrix, _shapes

__all__ = ["OffsetParam", "TrianParam"]


class OffsetParam(OpParam):
    offset: int = 0


class TrianParam(OffsetParam):
    lower: bool = True


# -- diagonals and triangles ----------------------------------------------------------------------
def _extractdiag_shape(prop, a):
    _matrix(prop, "A", a)
    o = prop.params.offset
    k = min(a[-2] + min(o, 0), a[-1] - max(o, 0))
    if k <= 0:
        raise prop.error(f"offset={o} selects no diagonal of A of shape {a}")
    return a[:-2] + (k,)


def _makediag_shape(prop, a):
    _matrix(prop, "A", a, ndim=1)
    n = a[-1] + abs(prop.params.offset)
    return a[:-1] + (n, n)


def _makediag(xp, p, v):
    n = v.shape[-1] + abs(p.offset)
    out = xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
    i = np.arange(v.shape[-1])
    r, c = (i, i + p.offset) if p.offset >= 0 else (i - p.offset, i)
    out[..., r, c] = v
    return out


def _extractdiag_bwd(xp, p, og, ins, outs):
    a, g = ins[0], og[0]
    out = xp.zeros(a.shape, dtype=g.dtype)
    i = np.arange(g.shape[-1])
    r, c = (i, i + p.offset) if p.offset >= 0 else (i - p.offset, i)
    out[..., r, c] = g
    return [out]


def _trian_index(p, n):
    """(rows, cols) of the stored triangle in MXNet's order: lower row by row, upper column by column."""
    if p.offset < 0 or (p.offset == 0 and p.lower):
        return np.tril_indices(n, p.offset)
    c, r = np.tril_indices(n, -p.offset)
    return r, c


def _extracttrian_shape(prop, a):
    _matrix(prop, "A", a, square=True)
    n, o = a[-1], abs(prop.params.offset)
    if o >= n:
        raise prop.error(f"offset={prop.params.offset} selects no triangle of A of shape {a}")
    m = n - o
    return a[:-2] + (m * (m + 1) // 2,)


def _maketrian_size(prop, k, s):
    m = (math.isqrt(8 * k + 1) - 1) // 2
    if m * (m + 1) // 2 != k:
        raise prop.error(f"A has shape {s}: its last axis of size {k} is not a triangular number m(m+1)/2")
    return m + abs(prop.params.offset)


def _maketrian_shape(prop, a):
    _matrix(prop, "A", a, ndim=1)
    n = _maketrian_size(prop, a[-1], a)
    return a[:-1] + (n, n)


def _maketrian(xp, p, v):
    m = (math.isqrt(8 * v.shape[-1] + 1) - 1) // 2
    n = m + abs(p.offset)
    out = xp.zeros(v.shape[:-1] + (n, n), dtype=v.dtype)
    r, c = _trian_index(p, n)
    out[..., r, c] = v
    return out


def _maketrian_bwd(xp, p, og, ins, outs):
    g = og[0]
    r, c = _trian_index(p, g.shape[-1])
    return [g[..., r, c]]


def _extracttrian_bwd(xp, p, og, ins, outs):
    a, g = ins[0], og[0]
    out = xp.zeros(a.shape, dtype=g.dtype)
    r, c = _trian_index(p, a.shape[-1])
    out[..., r, c] = g
    return [out]


defop("_linalg_extractdiag", param=OffsetParam, arguments=("A",), aliases=("linalg_extractdiag",), deps="og,in",
      shape=_shapes(_extractdiag_shape), fwd=lambda xp, p, a: _diag(xp, a, p.offset).copy(), bwd=_extractdiag_bwd,
      doc="The diagonal ``offset`` (> 0 above, < 0 below the main one) of each matrix.")
defop("_linalg_makediag", param=OffsetParam, arguments=("A",), aliases=("linalg_makediag",), deps="og",
      shape=_shapes(_makediag_shape), fwd=_makediag,
      bwd=lambda xp, p, og, ins, outs: [_diag(xp, og[0], p.offset).copy()],
      doc="Square matrices with the vectors of the last axis on diagonal ``offset`` and zeros elsewhere.")
defop("_linalg_extracttrian", param=TrianParam, arguments=("A",), aliases=("linalg_extracttrian",), deps="og,in",
      shape=_shapes(_extracttrian_shape), fwd=lambda xp, p, a: a[(...,) + _trian_index(p, a.shape[-1])],
      bwd=_extracttrian_bwd,
      doc="The triangle of each square matrix as a vector: the lower one (offset < 0, or 0 with ``lower``) row "
          "by row, else the upper one column by column, starting ``offset`` diagonals from the main one.")
defop("_linalg_maketrian", param=TrianParam, arguments=("A",), aliases=("linalg_maketrian",), deps="og",
      shape=_shapes(_maketrian_shape), fwd=_maketrian, bwd=_maketrian_bwd,
      doc="The inverse of extracttrian: square matrices with the vectors of the last axis stored in the triangle.")
