"""Reductions on sparse storage: ``sum`` / ``mean`` of csr along an axis, and ``_square_sum``.

``_square_sum(x, axis, keepdims)`` is ``sum(square(x), axis, keepdims)`` for a row_sparse ``x``
without squaring a dense copy: the result is row_sparse for ``axis=1, keepdims=True`` (one value
per stored row), dense otherwise; its gradient ``2 * x * out_grad`` is row_sparse.
"""

from __future__ import annotations

from ..functional import defop
from ..tensor.reduce import ReduceParam, _ReduceProperty
from . import formats as st
from .formats import CSR, DEFAULT, RSP, Fallback, SparseValue, register_sparse
from .kernels import densify

__all__: list[str] = []


def _axis(prop):
    ax = prop.params.axis
    if ax is None or getattr(prop.params, "exclude", False) or len(ax) != 1:
        return None
    return ax[0] % 2


def _sum_infer(prop, in_stypes):
    s = in_stypes[0]
    if s == DEFAULT:
        return None
    if s == CSR and _axis(prop) is not None:
        return [DEFAULT]
    return Fallback([DEFAULT])


def _sum_fwd(xp, prop, op_ctx, ins, out_stypes):
    v = ins[0]
    ax = _axis(prop)
    m = st.as_scipy(xp, v)
    r = xp.asarray(m.sum(axis=ax), dtype=v.data.dtype).reshape(-1)
    if prop.op_name == "mean":
        r = r / v.shape[ax]
    if prop.params.keepdims:
        r = r.reshape((1, -1) if ax == 0 else (-1, 1))
    return [r.astype(v.data.dtype, copy=False)]


for _name in ("sum", "mean"):
    register_sparse(_name, infer=_sum_infer, forward=_sum_fwd)


def _sq_fwd_dense(xp, p, x):
    axis = None if p.axis is None else tuple(p.axis)
    return (x * x).sum(axis=axis, keepdims=p.keepdims).astype(x.dtype)


def _sq_bwd_dense(xp, p, og, ins, outs):
    x = ins[0]
    g = og[0]
    if p.axis is not None and not p.keepdims:
        g = xp.expand_dims(g, tuple(a % x.ndim for a in p.axis))
    return [2 * x * g]


defop("_square_sum", param=ReduceParam, base=_ReduceProperty, fwd=_sq_fwd_dense, bwd=_sq_bwd_dense,
      deps="og,in", doc="sum(square(data), axis, keepdims), with row_sparse kernels.")


def _sq_infer(prop, in_stypes):
    s = in_stypes[0]
    if s == DEFAULT:
        return None
    if s == RSP and len(prop.params.axis or ()) == 1 and prop.params.axis[0] % 2 == 1 and prop.params.keepdims:
        return [RSP]
    return [DEFAULT] if s == RSP else Fallback([DEFAULT])


def _sq_fwd(xp, prop, op_ctx, ins, out_stypes):
    v = ins[0]
    p = prop.params
    if v.stype != RSP or len(v.shape) != 2:
        return [_sq_fwd_dense(xp, p, densify(xp, v))]
    sq = v.data * v.data
    ax = None if p.axis is None else p.axis[0] % 2
    if ax == 1:
        rows = sq.sum(axis=1)
        if out_stypes[0] == RSP:
            return [SparseValue(RSP, (v.shape[0], 1), rows.reshape(-1, 1), v.indices)]
        out = xp.zeros((v.shape[0],), v.data.dtype)
        out[v.indices] = rows
        return [out.reshape(-1, 1) if p.keepdims else out]
    r = sq.sum(axis=0) if ax == 0 else sq.sum()
    r = xp.asarray(r, dtype=v.data.dtype)
    if p.keepdims:
        r = r.reshape((1, -1) if ax == 0 else (1, 1))
    return [r.reshape(r.shape or (1,))]


def _sq_bwd_infer(prop, in_stypes, og_stypes):
    return [RSP] if in_stypes[0] == RSP and len(prop.params.axis or ()) == 1 else None


def _sq_bwd(xp, prop, op_ctx, out_grads, ins, outs, grad_stypes):
    v = st.cast_value(xp, ins[0], RSP)
    og = densify(xp, out_grads[0])
    p = prop.params
    ax = p.axis[0] % 2
    if ax == 1:
        g = og.reshape(-1)[v.indices].reshape(-1, 1)
    else:
        g = og.reshape(1, -1)
    blk = 2 * v.data * g
    out = SparseValue(RSP, v.shape, blk.astype(v.data.dtype, copy=False), v.indices)
    return [st.cast_value(xp, out, grad_stypes[0]) if grad_stypes[0] else None]


register_sparse("_square_sum", infer=_sq_infer, forward=_sq_fwd, backward=_sq_bwd, backward_infer=_sq_bwd_infer)
