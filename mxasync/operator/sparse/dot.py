"""``dot`` on csr / row_sparse / dense operands (MXNet's DotForwardInferStorageType on CPU).

=================================  =============  ===================================================
operands                           output         kernel
=================================  =============  ===================================================
csr . dense                        dense          SpMM
csr.T . dense                      row_sparse     SpMM over the columns csr stores only
csr . row_sparse (no transpose_b)  dense          SpMM
dense . csr (no transpose_a)       csr            SpMM over the used columns, which every row stores
anything else                      dense          fallback (dense kernel, MXNet's warning)
=================================  =============  ===================================================

``forward_stype`` picks the output's storage type (a kernel's result is then cast).  The
gradient of a dense/row_sparse rhs under a csr lhs is ``lhs.T . out_grad``, computed as
row_sparse when its gradient buffer is (a large embedding-like weight never goes dense).
"""

from __future__ import annotations

from . import formats as st
from .formats import CSR, DEFAULT, RSP, Fallback, SparseValue, register_sparse
from .kernels import csr_of_dense_result, matrix, stype_of, to_dense_result, unique_inverse

__all__ = ["sparse_dot"]


def _natural(prop, a: str, b: str) -> str | None:
    p = prop.params
    if a == CSR and b == DEFAULT and not p.transpose_b:
        return RSP if p.transpose_a else DEFAULT
    if a == CSR and b == RSP and not p.transpose_a and not p.transpose_b:
        return DEFAULT
    if a == DEFAULT and b == CSR and not p.transpose_a:
        return CSR
    return None


def _infer(prop, in_stypes):
    a, b = in_stypes
    want = prop.params.forward_stype
    nat = _natural(prop, a, b)
    if nat is None:
        if a == b == DEFAULT and want in (None, DEFAULT):
            return None
        return Fallback([want or DEFAULT])
    return [want or nat]


def sparse_dot(xp, a, b, transpose_a: bool, transpose_b: bool, out_stype: str, dtype):
    """``dot(a, b)`` for values of any storage type, the result in ``out_stype``."""
    sa, sb = stype_of(a), stype_of(b)
    if sa == CSR and transpose_a and sb == DEFAULT and not transpose_b and out_stype == RSP:
        return _csr_t_dense(xp, a, b, dtype)
    if sa == DEFAULT and sb == CSR and not transpose_a and not transpose_b and out_stype == CSR:
        return _dense_csr(xp, a, b, dtype)
    ma, mb = matrix(xp, a, transpose_a), matrix(xp, b, transpose_b)
    if not hasattr(ma, "tocsr") and hasattr(mb, "tocsr"):
        prod = (mb.T @ ma.T).T  # dense . sparse through the sparse operand's own product
    else:
        prod = ma @ mb
    if out_stype == CSR:
        return csr_of_dense_result(xp, prod, dtype)
    dense = to_dense_result(xp, prod, dtype)
    return dense if out_stype == DEFAULT else st.from_dense(xp, dense, out_stype)


def _used_columns(xp, a: SparseValue):
    """The columns csr ``a`` stores (sorted) and ``a`` on just those, as a (k x rows) csc matrix: a.T
    renumbered, whose product with a dense operand costs what the stored elements cost."""
    cols, inv = unique_inverse(xp, a.indices, a.shape[1])
    sp = st.sparse_namespace(xp)
    return cols, sp.csc_matrix((a.data, inv, a.indptr), shape=(cols.shape[0], a.shape[0]))


def _csr_t_dense(xp, a: SparseValue, b, dtype) -> SparseValue:
    """csr.T . dense: only the columns the csr stores give (possibly) non-zero rows."""
    if a.indices.shape[0] == 0:
        return st.empty_value(xp, RSP, (a.shape[1], b.shape[1]), dtype)
    cols, a_t = _used_columns(xp, a)
    return SparseValue(RSP, (a.shape[1], b.shape[1]), to_dense_result(xp, a_t @ b, dtype), cols)


def _dense_csr(xp, a, b: SparseValue, dtype) -> SparseValue:
    """dense . csr -> csr: each row of the result stores the columns ``b`` stores (MXNet's structure)."""
    m = a.shape[0]
    if b.indices.shape[0] == 0 or m == 0:
        return st.empty_value(xp, CSR, (m, b.shape[1]), dtype)
    cols, b_t = _used_columns(xp, b)
    block = to_dense_result(xp, b_t @ a.T, dtype).T  # (m x k): a . b on the used columns
    k = cols.shape[0]
    return st.csr_value(xp, (m, b.shape[1]), xp.ascontiguousarray(block).reshape(-1), xp.tile(cols, m),
                        xp.arange(0, (m + 1) * k, k, dtype=st.IDX))


def _fwd(xp, prop, op_ctx, ins, out_stypes):
    a, b = ins
    p = prop.params
    dtype = (a.dtype if not isinstance(a, SparseValue) else a.data.dtype)
    if isinstance(a, SparseValue) or isinstance(b, SparseValue):
        if (getattr(a, "ndim", 2) != 2) or (getattr(b, "ndim", 2) != 2):
            raise prop.error("sparse dot takes 2-D operands")
    return [sparse_dot(xp, a, b, p.transpose_a, p.transpose_b, out_stypes[0], dtype)]


def _bwd_infer(prop, in_stypes, og_stypes):
    """Sparse backward when lhs is csr and the rhs is 2-D dense/row_sparse (no transpose_b)."""
    a, b = in_stypes
    if a == CSR and b in (DEFAULT, RSP) and not prop.params.transpose_b and og_stypes[0] in (DEFAULT, RSP):
        return [DEFAULT, RSP]
    return None


def _bwd(xp, prop, op_ctx, out_grads, ins, outs, grad_stypes):
    a, b = ins
    og = st.cast_value(xp, out_grads[0], DEFAULT)
    p = prop.params
    dtype = og.dtype
    ga = gb = None
    if grad_stypes[1] is not None:
        # d(rhs) = op(lhs).T . og
        gb = sparse_dot(xp, a, og, not p.transpose_a, False, grad_stypes[1] if grad_stypes[1] != CSR else DEFAULT,
                        dtype)
    if grad_stypes[0] is not None:
        # d(lhs) = og . rhs.T (transposed back when lhs was)
        bd = st.cast_value(xp, b, DEFAULT)
        g = og @ bd.T
        ga = st.cast_value(xp, g.T if p.transpose_a else g, grad_stypes[0])
    return [ga, gb]


register_sparse("dot", infer=_infer, forward=_fwd, backward=_bwd, backward_infer=_bwd_infer, from_dense=True)
