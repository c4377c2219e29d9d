"""Contrib ops on CSR matrices (MXNet 1.9.1's): ``_contrib_getnnz(data; axis=None)``, the number of stored
values (int64; shape (1,) in all, or one count per row with ``axis=1``; ``axis=0`` is refused as MXNet
does), and ``_contrib_edge_id(data, u, v)``, the stored value at each ``(u[i], v[i])`` of a CSR adjacency
matrix, -1 where none is stored (data's dtype). Their sparse kernels read the stored entries of a CSR
input; a dense input (which MXNet refuses) counts its nonzeros as the stored values. No gradient.

>>> import mxasync as mx
>>> a = mx.nd.array([[0, 1, 0], [2, 0, 3], [0, 4, 0]]).tostype("csr")
>>> mx.nd.contrib.edge_id(a, mx.nd.array([0, 1, 2, 0]), mx.nd.array([1, 2, 1, 0])).asnumpy()
array([ 1.,  3.,  4., -1.], dtype=float32)
>>> mx.nd.contrib.getnnz(a).asnumpy(), mx.nd.contrib.getnnz(a, axis=1).asnumpy()
(array([4]), array([1, 2, 1]))
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam
from ..sparse.formats import CSR, DEFAULT, Fallback, register_sparse

__all__ = ["GetNNZParam"]


class GetNNZParam(OpParam):
    axis: Optional[int] = Field(None, description="None: all stored values; 1: per row (0 is not supported)")


class _GetNNZProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        (s,) = in_shapes
        axis = self.params.axis
        if axis not in (None, 1):
            raise self.error(f"axis={axis} is not supported; use None or 1 (as in MXNet 1.9.1)")
        if s is None:
            return [None], [(1,) if axis is None else None], []
        if len(s) != 2:
            raise self.error(f"data has shape {tuple(s)}; it must be a 2-D CSR matrix")
        return [tuple(s)], [(1,) if axis is None else (s[0],)], []

    def infer_type(self, in_types):
        return list(in_types), [np.dtype(np.int64)], []


class _EdgeIdProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        data, u, v = in_shapes
        for name, x in (("u", u), ("v", v)):
            if x is not None and len(x) != 1:
                raise self.error(f"{name} has shape {tuple(x)}; it must be 1-d")
        if u is not None and v is not None and u[0] != v[0]:
            raise self.error(f"u has {u[0]} entries but v has {v[0]}")
        if data is not None and len(data) != 2:
            raise self.error(f"data has shape {tuple(data)}; it must be a 2-D CSR matrix")
        n = u if u is not None else v
        return [data, n, n], [n], []

    def infer_type(self, in_types):
        return list(in_types), [in_types[0]], []


def _getnnz_dense(xp, p, data):
    nonzero = data != 0
    return xp.asarray([int(nonzero.sum())], dtype=np.int64) if p.axis is None else nonzero.sum(axis=1).astype(np.int64)


def _edge_id_dense(xp, p, data, u, v):
    vals = data[u.astype(np.int64), v.astype(np.int64)]
    return xp.where(vals != 0, vals, xp.asarray(-1, dtype=data.dtype)).astype(data.dtype)


def _csr_rule(prop, in_stypes):
    if in_stypes[0] == CSR:
        return [DEFAULT]
    if all(t == DEFAULT for t in in_stypes):
        return None  # the dense kernel
    return Fallback([DEFAULT])  # row_sparse: made dense first


def _getnnz_csr(xp, prop, op_ctx, ins, out_stypes):
    v = ins[0]
    if prop.params.axis is None:
        return [xp.asarray([v.nnz], dtype=np.int64)]
    return [xp.diff(v.indptr).astype(np.int64)]


def _edge_id_csr(xp, prop, op_ctx, ins, out_stypes):
    m, u, v = ins
    rows, cols = u.astype(np.int64), v.astype(np.int64)
    out = xp.full(rows.shape, -1, dtype=m.data.dtype)
    indptr, indices = m.indptr.astype(np.int64), m.indices.astype(np.int64)
    for k in range(rows.shape[0]):  # the first stored entry of column v[k] in row u[k], as MXNet's find
        lo, hi = int(indptr[int(rows[k])]), int(indptr[int(rows[k]) + 1])
        hit = xp.nonzero(indices[lo:hi] == cols[k])[0]
        if hit.size:
            out[k] = m.data[lo + int(hit[0])]
    return [out]


defop("_contrib_getnnz", param=GetNNZParam, base=_GetNNZProperty, fwd=_getnnz_dense,
      non_differentiable=True, doc="The number of stored values of a CSR matrix (int64; per row with axis=1).")
defop("_contrib_edge_id", base=_EdgeIdProperty, arguments=("data", "u", "v"), fwd=_edge_id_dense,
      non_differentiable=True, doc="The stored value at (u[i], v[i]) of a CSR matrix, -1 where nothing is stored.")
register_sparse("_contrib_getnnz", infer=_csr_rule, forward=_getnnz_csr)
register_sparse("_contrib_edge_id", infer=_csr_rule, forward=_edge_id_csr)
