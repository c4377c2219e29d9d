"""Table rows: the ops that exist for sparse storage, on dense inputs (their sparse kernels are
checked in tests/ndarray/sparse)."""

from __future__ import annotations

import numpy as np
from cases import Case, integers, uniform


def _retain(x, idx):
    out = np.zeros_like(x)
    rows = np.unique(idx.astype(int))
    out[rows] = x[rows]
    return out


def _square_sum(x, axis, keepdims):
    return (x * x).sum(axis=axis, keepdims=keepdims)


CASES = [
    Case("cast_storage", [((2, 3),)], ref=lambda x, stype: x, params=dict(stype="default")),
    Case("_sparse_retain", [((4, 3), (2,))], ref=_retain, gens=[uniform(), integers(0, 4)], wrt=(0,)),
    Case("_square_sum", [((3, 4),)], ref=_square_sum, params=dict(axis=(1,), keepdims=True)),
    Case("_square_sum", [((3, 4),)], ref=_square_sum, params=dict(axis=(0,), keepdims=False), name="_square_sum0"),
    Case("_contrib_SparseEmbedding", [((2, 3), (6, 4))], ref=lambda d, w, input_dim, output_dim: w[d.astype(int)],
         params=dict(input_dim=6, output_dim=4), gens=[integers(0, 6), uniform()], wrt=(1,)),
    Case("_scatter_elemwise_div", [((2, 3), (2, 3))], ref=lambda a, b: a / b, gens=[uniform(), uniform(1, 2)]),
    Case("_scatter_plus_scalar", [((2, 3),)], ref=lambda x, scalar: x + scalar, params=dict(scalar=1.5)),
    Case("_scatter_minus_scalar", [((2, 3),)], ref=lambda x, scalar: x - scalar, params=dict(scalar=1.5)),
]


def _sparse_matrix(rng, shape, dtype):
    x = rng.uniform(0.5, 1.5, size=shape) * (rng.uniform(size=shape) < 0.5)
    return x.astype(dtype)


def _edge_id(m, u, v):
    vals = m[u.astype(int), v.astype(int)]
    return np.where(vals != 0, vals, -1).astype(m.dtype)


CASES += [
    Case("_contrib_getnnz", [((4, 5),)], ref=lambda m: np.array([np.count_nonzero(m)]), gens=_sparse_matrix,
         grad=False),
    Case("_contrib_getnnz", [((4, 5),)], ref=lambda m, axis: np.count_nonzero(m, axis=1), gens=_sparse_matrix,
         params=dict(axis=1), grad=False, name="_contrib_getnnz-rows"),
    Case("_contrib_edge_id", [((4, 4), (6,), (6,))], ref=_edge_id, grad=False,
         gens=[_sparse_matrix, integers(0, 4), integers(0, 4)]),
]
