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

import math

import numpy as np

from ...base import MXAsyncError
from . import formats as st
from .formats import CSR, DEFAULT, RSP, SparseValue

__all__ = ["rsp_union", "map_values", "matrix", "stype_of", "rows_of", "densify", "take_rows", "put_rows",
           "unique_inverse", "row_sums", "check_rows"]


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
        m = st.matrix_of(xp, v)
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


def check_rows(xp, rows, nrows: int, what: str = "row indices") -> None:
    """Raise MXNetError starting with ``what`` when an integer of ``rows`` is outside ``[0, nrows)``."""
    if rows.size:
        bad = (rows < 0) | (rows >= nrows)
        if bool(bad.any()):
            k = int(xp.argmax(bad.reshape(-1)))
            raise MXAsyncError(f"{what}: row index {rows.reshape(-1)[k].item()!r} (position {k}) is not a row of "
                               f"0..{nrows - 1}")


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


# -- rows by index: gathers, scatters and sums -----------------------------------------------------------
def take_rows(xp, a, rows, out=None):
    """``a[rows]`` for integer ``rows`` in range, into ``out`` when given (``take``: NumPy's fancy indexing
    copies narrow rows one by one, several times slower; ``mode="clip"`` because NumPy's default mode
    writes through a temporary when given ``out``)."""
    if type(a) is np.ndarray:  # NumPy's own arrays take mode=; other namespaces' take has no such argument
        return np.take(a, rows, axis=0, out=out, mode="clip")
    return xp.take(a, rows, axis=0, out=out)


def put_rows(xp, a, rows, values) -> None:
    """``a[rows] = values`` for unique ``rows`` and ``values`` of shape ``(len(rows), *a.shape[1:])``.

    On NumPy, a C-contiguous ``a`` is seen as one opaque item per row, which NumPy scatters with a
    single copy per row instead of its element-wise fancy assignment (about 8x faster for narrow rows).
    """
    if rows.shape[0] == 0:
        return
    width = a.size // a.shape[0] if a.ndim > 1 else 0
    # the opaque-row view needs NumPy's void dtype: a NumPy array's own property, not the namespace's
    if type(a) is np.ndarray and width and a.flags.c_contiguous and values.shape == (rows.shape[0], *a.shape[1:]):
        item = np.dtype((np.void, a.dtype.itemsize * width))
        src = np.ascontiguousarray(values, dtype=a.dtype).reshape(rows.shape[0], width).view(item)[:, 0]
        a.reshape(a.shape[0], width).view(item)[rows, 0] = src
        return
    a[rows] = values


def unique_inverse(xp, idx, n: int):
    """``unique(idx, return_inverse=True)`` for integers in ``[0, n)``: the sorted distinct values (int64)
    and each entry's position among them (int32 when it fits, as SciPy's matrices want it).

    When ``n`` is not much more than ``idx.size`` a mark per value replaces the sort (O(n + size))."""
    idx = idx.reshape(-1)
    small = np.int32 if n < 2**31 else st.IDX
    if n <= 8 * idx.shape[0] + 65536:
        used = xp.zeros(n, dtype=bool)
        used[idx] = True
        rows = xp.flatnonzero(used)
        position = xp.empty(n, dtype=small)
        position[rows] = xp.arange(rows.shape[0], dtype=small)
        return rows.astype(st.IDX, copy=False), position[idx]
    rows, inv = xp.unique(idx, return_inverse=True)
    return rows.astype(st.IDX, copy=False), inv.reshape(-1).astype(small, copy=False)


def _grouping(xp, inv, k: int, dtype):
    """The (k x len(inv)) 0/1 matrix whose row ``r`` picks the entries with ``inv == r`` (one per column)."""
    sp = st.sparse_namespace(xp)
    m = inv.shape[0]
    return sp.csc_matrix((xp.ones(m, dtype=dtype), inv, xp.arange(m + 1, dtype=inv.dtype)), shape=(k, m))


def _sum_dtype(dtype):
    """What SciPy sums ``dtype`` in: itself for float32/64, float32 for float16, float64 otherwise."""
    dtype = np.dtype(dtype)
    return dtype if dtype in (np.float32, np.float64) else (np.float32 if dtype == np.float16 else np.float64)


def row_sums(xp, idx, values, n: int):
    """The rows of ``values`` (``(idx.size, ...)``) summed by index ``idx`` (integers in ``[0, n)``):
    ``(rows, block)`` with ``rows`` the sorted distinct indices and ``block[r]`` the sum of the rows with
    index ``rows[r]``: a row_sparse gradient of a gather (one sparse product; ``add.at`` is ~15x slower)."""
    rows, inv = unique_inverse(xp, idx, n)
    flat = values.reshape(inv.shape[0], math.prod(values.shape[1:]))  # (not -1: no rows is allowed)
    block = _grouping(xp, inv, rows.shape[0], _sum_dtype(flat.dtype)) @ flat
    return rows, xp.asarray(block, dtype=values.dtype).reshape((rows.shape[0], *values.shape[1:]))
