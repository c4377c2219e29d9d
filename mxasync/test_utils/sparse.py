"""Random sparse arrays for tests (MXNet 1.9's ``rand_sparse_ndarray`` & co.).

>>> import mxasync as mx
>>> a, _ = rand_sparse_ndarray((4, 3), "row_sparse", density=1.0)
>>> a.stype, a.indices.asnumpy().tolist()
('row_sparse', [0, 1, 2, 3])
>>> create_sparse_array_zd((3, 2), "row_sparse", 0.0, data_init=2, rsp_indices=[2]).asnumpy()[2].tolist()
[2.0, 2.0]
"""

from __future__ import annotations

import random as rnd
from typing import Any

import numpy as np

from .arrays import assign_each
from .sampling import default_context, default_dtype

__all__ = ["rand_sparse_ndarray", "create_sparse_array", "create_sparse_array_zd", "shuffle_csr_column_indices"]


def shuffle_csr_column_indices(csr) -> None:
    """Shuffle a scipy csr matrix's column indices within each row (CSR does not require order)."""
    for r in range(len(csr.indptr) - 1):
        lo, hi = csr.indptr[r], csr.indptr[r + 1]
        seg = np.array(csr.indices[lo:hi])
        np.random.shuffle(seg)
        csr.indices[lo:hi] = seg


def _uniform_csr(rows: int, cols: int, density: float, dtype, data_init, shuffle: bool, ctx):
    import scipy.sparse as sp

    from .. import ndarray as nd

    if not 0 <= density <= 1:
        raise ValueError("density has to be between 0 and 1")
    if rows <= 0 or cols <= 0:
        raise ValueError("num_rows or num_cols should be greater than 0")
    m = sp.random(rows, cols, density, dtype=dtype, format="csr")
    if data_init is not None:
        m.data.fill(data_init)
    if shuffle:
        shuffle_csr_column_indices(m)
    return nd.sparse.csr_matrix((m.data, m.indices, m.indptr), shape=(rows, cols), dtype=dtype, ctx=ctx)


def _powerlaw_csr(rows: int, cols: int, density: float, dtype, ctx):
    """Row r holds about 2**r stored elements (each row at least one), until ``density`` is reached."""
    from .. import ndarray as nd

    budget = int(rows * cols * density)
    if budget < 2 * rows:
        raise ValueError(f"not supported for this density: {density} for this shape ({rows}, {cols})")
    dense = np.zeros((rows, cols), dtype=dtype)
    dense[:, 0] = 1 + np.random.uniform(0.001, 2, rows)
    budget -= rows
    width = 2
    for r in range(rows):
        if budget <= 0:
            break
        take = min(min(cols, width) - 1, budget)
        dense[r, 1:1 + take] = 1 + np.random.uniform(0.001, 2, take)
        budget -= take
        width *= 2
    return nd.array(dense, ctx=ctx, dtype=dtype).tostype("csr")


def rand_sparse_ndarray(shape, stype: str, density: float | None = None, dtype: Any = None,
                        distribution: str | None = None, data_init: Any = None, rsp_indices: Any = None,
                        modifier_func: Any = None, shuffle_csr_indices: bool = False, ctx: Any = None):
    """A random csr / row_sparse array and its parts: ``(arr, (values, indices))`` for row_sparse,
    ``(arr, (indptr, indices, data))`` for csr."""
    from .. import ndarray as nd

    ctx = ctx if ctx is not None else default_context()
    density = rnd.random() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = distribution or "uniform"
    if stype == "row_sparse":
        if distribution != "uniform":
            raise ValueError(f"distribution {distribution!r} is not supported for row_sparse")
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices, dtype=np.int64).reshape(-1)
        else:
            indices = np.argwhere(np.random.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            return nd.zeros(shape, stype="row_sparse", dtype=dtype, ctx=ctx), (np.array([], dtype=dtype), np.array([]))
        val = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = assign_each(val, modifier_func)
        arr = nd.sparse.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"csr arrays are 2-D, got shape {shape}")
        if distribution == "uniform":
            csr = _uniform_csr(shape[0], shape[1], density, dtype, data_init, shuffle_csr_indices, ctx)
        elif distribution == "powerlaw":
            csr = _powerlaw_csr(shape[0], shape[1], density, dtype, ctx)
        else:
            raise ValueError(f"distribution not supported: {distribution!r}")
        return csr, (csr.indptr, csr.indices, csr.data)
    raise ValueError(f"unknown storage type {stype!r}")


def create_sparse_array(shape, stype: str, data_init: Any = None, rsp_indices: Any = None, dtype: Any = None,
                        modifier_func: Any = None, density: float = 0.5, shuffle_csr_indices: bool = False):
    """A random sparse array; row_sparse indices, when given, are sorted first."""
    if stype == "row_sparse":
        idx = np.sort(np.asarray(rsp_indices)) if rsp_indices is not None else None
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init, rsp_indices=idx,
                                     dtype=dtype, modifier_func=modifier_func)
        return arr
    if stype == "csr":
        arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init, dtype=dtype,
                                     modifier_func=modifier_func, shuffle_csr_indices=shuffle_csr_indices)
        return arr
    raise AssertionError(f"Unknown storage type: {stype}")


def create_sparse_array_zd(shape, stype: str, density: float, data_init: Any = None, rsp_indices: Any = None,
                           dtype: Any = None, modifier_func: Any = None, shuffle_csr_indices: bool = False):
    """:func:`create_sparse_array` where a row_sparse array's rows are exactly ``rsp_indices``."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise AssertionError(f"{len(rsp_indices)} row indices for {shape[0]} rows")
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices, dtype=dtype,
                               modifier_func=modifier_func, density=density, shuffle_csr_indices=shuffle_csr_indices)
