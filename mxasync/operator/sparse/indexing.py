"""Sparse rules of indexing ops, and the ops that exist for sparse storage.

* ``cast_storage(data, stype)``: to any storage type (gradient: back to the input's);
* ``_sparse_retain(data, indices)``: the rows ``indices`` of a row_sparse array (``sparse.retain``);
* ``slice`` / ``crop`` on csr: rows (and columns) ``begin:end`` as csr;
* ``Embedding(sparse_grad=True)`` and ``_contrib_SparseEmbedding``: a row_sparse weight gradient
  holding only the looked-up rows;
* ``LinearRegressionOutput`` / ``LogisticRegressionOutput`` (& co.) with a csr label.
"""

from __future__ import annotations

from typing import Literal

from ..functional import defop
from ..params import Field, OpParam
from ..tensor.indexing import EmbeddingParam, _emb_bwd, _EmbeddingProperty, embedding_forward
from . import formats as st
from .formats import CSR, DEFAULT, RSP, Fallback, SparseValue, register_sparse
from .kernels import check_rows, densify, row_sums, rows_of, stype_of, take_rows, unique_rows

__all__: list[str] = []


# -- cast_storage ------------------------------------------------------------------------------------
class CastStorageParam(OpParam):
    stype: Literal["default", "row_sparse", "csr"] = Field(description="the storage type of the output")


defop("cast_storage", param=CastStorageParam, fwd=lambda xp, p, x: x.copy(),
      bwd=lambda xp, p, og, ins, outs: [og[0]], deps="og",
      doc="The input in storage type ``stype`` ('default', 'row_sparse' or 'csr'); the values are unchanged.")


def _cast_infer(prop, in_stypes):
    return [prop.params.stype]


def _cast_fwd(xp, prop, op_ctx, ins, out_stypes):
    return [st.cast_value(xp, ins[0], out_stypes[0])]


register_sparse("cast_storage", infer=_cast_infer, forward=_cast_fwd, from_dense=True)


# -- _sparse_retain -----------------------------------------------------------------------------------
def _retain_shape(prop, in_shapes):
    d, i = in_shapes
    return [d, i], [d], []


def _retain_dense(xp, p, data, idx):
    out = xp.zeros_like(data)
    rows = unique_rows(xp, idx, data.shape[0], f"_sparse_retain: indices for data of shape {data.shape}")
    out[rows] = data[rows]
    return out


def _retain_bwd(xp, p, og, ins, outs):
    return [_retain_dense(xp, p, og[0], ins[1]), None]


defop("_sparse_retain", arguments=("data", "indices"), shape=_retain_shape,
      dtype=lambda prop, t: ([t[0], t[1]], [t[0]], []), fwd=_retain_dense, bwd=_retain_bwd, deps="og,in",
      doc="The rows ``indices`` of row_sparse ``data`` (the other rows become zero).")


def _retain_infer(prop, in_stypes):
    return [RSP] if in_stypes[0] == RSP and in_stypes[1] == DEFAULT else Fallback([in_stypes[0]])


def _retain_fwd(xp, prop, op_ctx, ins, out_stypes):
    v, idx = ins
    # MXNet's rule: every asked row is in the result, zeros where ``v`` stores none (so a row_sparse_pull
    # returns exactly the rows asked for)
    want = unique_rows(xp, idx, v.shape[0], f"_sparse_retain: indices for data of shape {v.shape}")
    keep = xp.isin(v.indices, want)
    kept = SparseValue(RSP, v.shape, v.data[keep], v.indices[keep])
    return [SparseValue(RSP, v.shape, rows_of(xp, kept, want), want)]


def _retain_bwd_infer(prop, in_stypes, og_stypes):
    return [RSP, None]


def _retain_bwd_sparse(xp, prop, op_ctx, out_grads, ins, outs, grad_stypes):
    og = st.cast_value(xp, out_grads[0], RSP)
    g = _retain_fwd(xp, prop, op_ctx, [og, ins[1]], [RSP])[0]
    return [st.cast_value(xp, g, grad_stypes[0]) if grad_stypes[0] else None, None]


register_sparse("_sparse_retain", infer=_retain_infer, forward=_retain_fwd, backward=_retain_bwd_sparse,
                backward_infer=_retain_bwd_infer)


# -- slice on csr -------------------------------------------------------------------------------------
def _slice_infer(prop, in_stypes):
    s = in_stypes[0]
    if s == CSR and all(x in (None, 1) for x in (prop.params.step or ())):
        return [CSR]
    return None if s == DEFAULT else Fallback([DEFAULT])


def _slice_fwd(xp, prop, op_ctx, ins, out_stypes):
    v = ins[0]
    p = prop.params
    begin = list(p.begin) + [None] * (2 - len(p.begin))
    end = list(p.end) + [None] * (2 - len(p.end))
    rows = slice(begin[0], end[0]).indices(v.shape[0])
    cols = slice(begin[1], end[1]).indices(v.shape[1])
    m = st.as_scipy(xp, v)[rows[0]:rows[1], cols[0]:cols[1]]
    return [st.from_scipy(xp, m, v.data.dtype)]


register_sparse("slice", infer=_slice_infer, forward=_slice_fwd)


# -- Embedding with a row_sparse gradient --------------------------------------------------------------
def _emb_infer(prop, in_stypes):
    d, w = in_stypes
    if d == DEFAULT and w in (DEFAULT, RSP):
        return None if w == DEFAULT else [DEFAULT]
    return Fallback([DEFAULT])


def _emb_fwd(xp, prop, op_ctx, ins, out_stypes):
    d, w = ins
    p = prop.params
    idx = xp.clip(d.astype("int64"), 0, p.input_dim - 1)
    if stype_of(w) == RSP:  # rows not stored are zero
        pos = xp.searchsorted(w.indices, idx)
        pos = xp.clip(pos, 0, max(w.indices.shape[0] - 1, 0))
        if w.indices.shape[0] == 0:
            return [xp.zeros(idx.shape + (p.output_dim,), w.data.dtype)]
        hit = w.indices[pos] == idx
        return [w.data[pos] * hit[..., None].astype(w.data.dtype)]
    return [take_rows(xp, w, idx)]


def _emb_bwd_infer(prop, in_stypes, og_stypes):
    sparse = getattr(prop.params, "sparse_grad", True) or prop.op_name == "_contrib_SparseEmbedding"
    return [None, RSP] if sparse else None


def _emb_bwd_sparse(xp, prop, op_ctx, out_grads, ins, outs, grad_stypes):
    d = densify(xp, ins[0])
    og = densify(xp, out_grads[0])
    p = prop.params
    # MXNet's rule: the forward clips, a row_sparse gradient refuses ("input contains data out of bound")
    check_rows(xp, d, p.input_dim, f"{prop.op_name}(sparse_grad=True) backward: data for input_dim={p.input_dim}")
    rows, blk = row_sums(xp, d.astype("int64").reshape(-1), og.reshape(-1, p.output_dim), p.input_dim)
    g = SparseValue(RSP, (p.input_dim, p.output_dim), blk, rows)
    return [None, st.cast_value(xp, g, grad_stypes[1]) if grad_stypes[1] else None]


class SparseEmbeddingParam(EmbeddingParam):
    deterministic: bool = Field(False, description="accumulate the gradient in a fixed order (ours always is)")


defop("_contrib_SparseEmbedding", param=SparseEmbeddingParam, base=_EmbeddingProperty,
      arguments=("data", "weight"), deps="og,in", bwd=_emb_bwd, bwd_into=True,
      fwd=embedding_forward, fwd_out=True,
      doc="Embedding whose weight gradient is row_sparse (only the looked-up rows).")

for _name in ("Embedding", "_contrib_SparseEmbedding"):
    register_sparse(_name, infer=_emb_infer, forward=_emb_fwd, backward=_emb_bwd_sparse,
                    backward_infer=_emb_bwd_infer)


# -- regression outputs with a csr label ----------------------------------------------------------------
def _regression_infer(prop, in_stypes):
    d, label = in_stypes
    if d == DEFAULT and label == CSR:
        return [DEFAULT]
    return None if d == label == DEFAULT else Fallback([DEFAULT])


def _regression_fwd(xp, prop, op_ctx, ins, out_stypes):
    from .elemwise import dense_apply

    return dense_apply(prop, op_ctx, [densify(xp, v) for v in ins])


for _name in ("LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"):
    register_sparse(_name, infer=_regression_infer, forward=_regression_fwd)
