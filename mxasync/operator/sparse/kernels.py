"""Kernels shared by the sparse op rules: row unions, maps over stored values, matrix views.

Written against an array namespace ``xp`` and its sparse namespace, so they run on numpy/SciPy
and on CuPy/cupyx alike; none of them builds a dense array of the full shape unless its result is
dense anyway.

>>> import numpy as np
>>> from .formats import rsp_value
>>> a = rsp_value(np, (4, 2), np.ones((2, 2)), [0, 2])
>>> b = rsp_value(np, (4, 2), np.full((1, 2), 3.0), [2])
>>> r = rsp_union(np, a, b, np.add); r.indices.tolist(), r.data[:, 0].tolist()
([0, 2], [1.0, 4.0])
"""

from __future__ import annotations

import numpy as np

from ...base import MXAsyncError
from . import formats as st
from .formats import CSR, DEFAULT, RSP, SparseValue

__all__ = ["rsp_union", "map_values", "matrix", "stype_of", "rows_of", "densify"]


def stype_of(v) -> str:
    return v.stype if isinstance(v, SparseValue) else DEFAULT


def densify(xp, v):
    return st.cast_value(xp, v, DEFAULT)


def rows_of(xp, v: SparseValue, rows):
    """The rows ``rows`` (sorted, unique) of row_sparse ``v`` as a dense block (zeros where not stored)."""
    out = xp.zeros((rows.shape[0], *v.shape[1:]), v.data.dtype)
    if v.indices.shape[0] and rows.shape[0]:
        pos = xp.searchsorted(rows, v.indices)
        out[pos] = v.data
    return out


def rsp_union(xp, a: SparseValue, b: SparseValue, fn) -> SparseValue:
    """``fn(a, b)`` on two row_sparse values over the union of their rows (``fn(0, 0)`` must be 0)."""
    rows = xp.union1d(a.indices, b.indices).astype(st.IDX)
    data = fn(rows_of(xp, a, rows), rows_of(xp, b, rows))
    return SparseValue(RSP, a.shape, xp.asarray(data, dtype=a.data.dtype), rows)


def map_values(v: SparseValue, fn, dtype=None) -> SparseValue:
    """``fn`` applied to the stored values only (for ``fn(0) == 0``: the result keeps the structure)."""
    data = fn(v.data)
    if dtype is not None:
        data = data.astype(dtype, copy=False)
    return SparseValue(v.stype, v.shape, data, v.indices, v.indptr)


def matrix(xp, v, transpose: bool = False):
    """A 2-D operand for products: a (sp.)csr matrix for csr and row_sparse, the array otherwise."""
    if isinstance(v, SparseValue):
        m = st.as_scipy(xp, v)
        return m.T if transpose else m
    return v.T if transpose else v


def to_dense_result(xp, m, dtype):
    """A product's result as a dense array of ``dtype`` (sparse products come back as matrices)."""
    if hasattr(m, "toarray"):
        m = m.toarray()
    return xp.asarray(m, dtype=dtype)


def csr_of_dense_result(xp, m, dtype) -> SparseValue:
    if hasattr(m, "tocsr"):
        return st.from_scipy(xp, m, dtype)
    return st.from_dense(xp, xp.asarray(m, dtype=dtype), CSR)


def unique_rows(xp, idx, nrows: int, what: str = "row indices"):
    """The sorted distinct rows of ``idx``; an index outside ``[0, nrows)`` raises MXNetError starting
    with ``what`` (never clipped or wrapped: a negative row is no alias of the last one)."""
    idx = xp.asarray(idx).reshape(-1)
    rows = idx.astype(st.IDX)
    if rows.size:
        bad = (rows < 0) | (rows >= nrows) | (rows != idx)
        if bool(bad.any()):
            k = int(xp.argmax(bad))
            raise MXAsyncError(f"{what}: row index {idx[k].item()!r} (position {k}) is not a row of 0..{nrows - 1}")
    return xp.unique(rows)


del np
