"""Storage rules of elementwise ops (MXNet's ElemwiseStorageType and its binary/unary kernels).

* unary ops and scalar ops with ``f(0) == 0`` keep csr / row_sparse (``square``, ``sqrt``,
  ``sin``, ``relu``, ``x * 2``, ...); the others give dense results;
* ``elemwise_add`` / ``elemwise_sub``: same storage in, same out; a dense operand makes it dense;
* ``elemwise_mul``: the sparser operand's storage (dense * csr is csr, rsp * csr is dense);
* ``_maximum``, ``_minimum``, ``_hypot``: like ``elemwise_add``; ``elemwise_div``: dense;
* ``add_n``: row_sparse when every input is, dense otherwise;
* ``_scatter_elemwise_div``, ``_scatter_plus_scalar``, ``_scatter_minus_scalar``: only the
  stored elements of a sparse lhs change.

Kernels run the op's own dense kernel on the stored values (row blocks for row_sparse), so each
op's arithmetic is written once.
"""

from __future__ import annotations

import numpy as np

from ..base import WRITE_TO
from ..functional import defop
from ..params import OpParam
from ..step import host_context
from . import formats as st
from .formats import CSR, DEFAULT, RSP, Fallback, SparseValue, register_sparse
from .kernels import densify, map_values, rows_of, stype_of

__all__ = ["dense_apply"]


def dense_apply(prop, op_ctx, ins: list, outs: list | None = None) -> list:
    """Run ``prop``'s dense forward kernel on dense ``ins``; returns its outputs (written into ``outs``
    when given: an input there is updated in place by a kernel declared ``fwd_out="inplace"``)."""
    from ...backends import get_backend

    ctx = op_ctx.run_ctx.ctx
    if outs is None:
        xp = get_backend(ctx.device_type).xp
        _, shapes, _ = prop.infer_shape([tuple(x.shape) for x in ins])
        _, types, _ = prop.infer_type([x.dtype for x in ins])
        outs = [xp.empty(tuple(s), t) for s, t in zip(shapes, types, strict=True)]
    prop.forward_fn(ctx)(op_ctx, ins, [WRITE_TO] * len(outs), outs, [])
    return outs


def _zero_preserving(prop, *, scalar: bool = False) -> bool:
    """Does ``prop`` map 0 (and 0, 0) to 0?  Asked of the op's own kernel on a one-element array."""

    key = ("zero", prop)
    hit = _ZERO.get(key)
    if hit is None:
        z = np.zeros((1,), np.float64)
        n = len(prop.list_arguments())
        try:
            out = dense_apply(prop, host_context(), [z] * n)[0]
            hit = bool(np.all(out == 0))
        except Exception:  # noqa: BLE001 - an op that cannot say keeps dense storage
            hit = False
        _ZERO[key] = hit
    return hit


_ZERO: dict = {}


# -- unary and scalar ops --------------------------------------------------------------------------
def _unary_infer(prop, in_stypes):
    s = in_stypes[0]
    if s == DEFAULT:
        return None
    if _zero_preserving(prop):
        return [s]
    # scalar ops have kernels with a dense result (MXNet's BinaryScalarStorageType); others fall back
    return [DEFAULT] if "scalar" in prop.op_name else Fallback([DEFAULT])


def _unary_fwd(xp, prop, op_ctx, ins, out_stypes):
    v = ins[0]
    if out_stypes[0] == DEFAULT:
        return dense_apply(prop, op_ctx, [densify(xp, v)])
    return [map_values(v, lambda d: dense_apply(prop, op_ctx, [d])[0])]


_UNARY = ("negative", "abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square", "sqrt", "cbrt",
          "sin", "tan", "arcsin", "arctan", "sinh", "tanh", "arcsinh", "arctanh", "degrees", "radians", "expm1",
          "log1p", "relu", "sigmoid", "cos", "cosh", "exp", "log", "rsqrt", "rcbrt", "reciprocal", "arccos",
          "arccosh", "erf", "gamma", "gammaln", "softsign", "_copy", "_mul_scalar", "_div_scalar",
          "_plus_scalar", "_minus_scalar", "_rminus_scalar", "_rdiv_scalar", "_power_scalar",
          "_maximum_scalar", "_minimum_scalar", "_hypot_scalar", "clip", "_contrib_quadratic", "zeros_like")


# -- binary ops -------------------------------------------------------------------------------------
def _same_infer(prop, in_stypes):
    a, b = in_stypes
    if a == b == DEFAULT:
        return None
    if a == b:
        return [a]
    return [DEFAULT]


def _mul_infer(prop, in_stypes):
    a, b = in_stypes
    if a == b:
        return None if a == DEFAULT else [a]
    if DEFAULT in (a, b):
        return [a if b == DEFAULT else b]
    return [DEFAULT]


def _div_infer(prop, in_stypes):
    return None if all(s == DEFAULT for s in in_stypes) else Fallback([DEFAULT])


def _binary_fwd(xp, prop, op_ctx, ins, out_stypes):
    a, b = ins
    out = out_stypes[0]
    sa, sb = stype_of(a), stype_of(b)
    fn = lambda x, y: dense_apply(prop, op_ctx, [x, y])[0]  # noqa: E731
    if out == RSP:
        if sa == RSP and sb == RSP:
            from .kernels import rsp_union

            return [rsp_union(xp, a, b, fn)]
        v, d = (a, b) if sa == RSP else (b, a)  # rsp * dense: the rsp rows only
        rows = v.indices
        blk = fn(v.data, d[rows]) if v is a else fn(d[rows], v.data)
        return [SparseValue(RSP, v.shape, blk, rows)]
    if out == CSR:
        if sa == CSR and sb == CSR:
            if a.nnz == 0 and b.nnz == 0:
                return [st.empty_value(xp, CSR, a.shape, a.dtype)]
            sp = st.sparse_namespace(xp)
            ma, mb = st.as_scipy(xp, a), st.as_scipy(xp, b)
            pattern = (abs(ma) + abs(mb)).tocsr() if prop.op_name != "elemwise_mul" else ma.multiply(mb).tocsr()
            pattern.sort_indices()
            if pattern.nnz == 0:
                return [st.empty_value(xp, CSR, a.shape, a.dtype)]
            rows = xp.repeat(xp.arange(a.shape[0]), xp.diff(pattern.indptr))
            cols = pattern.indices
            vals = fn(xp.asarray(ma[rows, cols]).reshape(-1), xp.asarray(mb[rows, cols]).reshape(-1))
            del sp
            return [st.csr_value(xp, a.shape, vals.astype(a.dtype, copy=False), cols, pattern.indptr)]
        v, d = (a, b) if sa == CSR else (b, a)  # csr * dense: the stored elements only
        rows = xp.repeat(xp.arange(v.shape[0]), xp.diff(v.indptr))
        dv = d[rows, v.indices]
        vals = fn(v.data, dv) if v is a else fn(dv, v.data)
        return [SparseValue(CSR, v.shape, vals, v.indices, v.indptr)]
    return [fn(densify(xp, a), densify(xp, b))]


# -- add_n -------------------------------------------------------------------------------------------
def _add_n_infer(prop, in_stypes):
    if all(s == DEFAULT for s in in_stypes):
        return None
    return [RSP] if all(s == RSP for s in in_stypes) else [DEFAULT]


def _add_n_fwd(xp, prop, op_ctx, ins, out_stypes):
    if out_stypes[0] == RSP:
        rows = ins[0].indices
        for v in ins[1:]:
            rows = xp.union1d(rows, v.indices)
        rows = rows.astype(st.IDX)
        total = rows_of(xp, ins[0], rows)
        for v in ins[1:]:
            total += rows_of(xp, v, rows)
        return [SparseValue(RSP, ins[0].shape, total, rows)]
    total = densify(xp, ins[0]).copy()
    for v in ins[1:]:
        if stype_of(v) == CSR:
            total += st.as_scipy(xp, v).toarray()
        elif stype_of(v) == RSP:
            if v.indices.shape[0]:
                total[v.indices] += v.data
        else:
            total += v
    return [total]


# -- scatter ops: only the stored elements of a sparse lhs change -------------------------------
class _ScalarParam(OpParam):
    scalar: float = 0.0


def _scatter_infer(prop, in_stypes):
    s = in_stypes[0]
    if s == DEFAULT:
        return None if all(x == DEFAULT for x in in_stypes) else Fallback([DEFAULT])
    return [s]


def _scatter_fwd(xp, prop, op_ctx, ins, out_stypes):
    a = ins[0]
    if len(ins) == 1:
        k = prop.params.scalar
        f = (lambda d: d + k) if prop.op_name == "_scatter_plus_scalar" else (lambda d: d - k)
        return [map_values(a, f)]
    b = ins[1]
    if a.stype == RSP:
        rows = rows_of(xp, b, a.indices) if stype_of(b) == RSP else densify(xp, b)[a.indices]
        return [SparseValue(RSP, a.shape, a.data / rows, a.indices)]
    rows = xp.repeat(xp.arange(a.shape[0]), xp.diff(a.indptr))
    bv = densify(xp, b)[rows, a.indices]
    return [SparseValue(CSR, a.shape, a.data / bv, a.indices, a.indptr)]


defop("_scatter_elemwise_div", arguments=("lhs", "rhs"), fwd=lambda xp, p, a, b: a / b,
      bwd=lambda xp, p, og, ins, outs: [og[0] / ins[1], -og[0] * ins[0] / (ins[1] * ins[1])], deps="og,in",
      doc="lhs / rhs; with a sparse lhs only its stored elements are divided (the others stay 0).")
defop("_scatter_plus_scalar", param=_ScalarParam, fwd=lambda xp, p, x: x + x.dtype.type(p.scalar),
      bwd=lambda xp, p, og, ins, outs: [og[0]], deps="og",
      doc="x + scalar; with a sparse x only its stored elements change.")
defop("_scatter_minus_scalar", param=_ScalarParam, fwd=lambda xp, p, x: x - x.dtype.type(p.scalar),
      bwd=lambda xp, p, og, ins, outs: [og[0]], deps="og",
      doc="x - scalar; with a sparse x only its stored elements change.")


# -- where: a csr condition -------------------------------------------------------------------------
def _where_infer(prop, in_stypes):
    c, x, y = in_stypes
    if c == CSR and x == DEFAULT and y == DEFAULT:
        return [DEFAULT]
    return None if all(s == DEFAULT for s in in_stypes) else Fallback([DEFAULT])


def _where_fwd(xp, prop, op_ctx, ins, out_stypes):
    return dense_apply(prop, op_ctx, [densify(xp, v) for v in ins])


def _register() -> None:
    from ..registry import op_names

    known = op_names()  # the index's names: checking one loads nothing
    for name in _UNARY:
        if name in known:
            register_sparse(name, infer=_unary_infer, forward=_unary_fwd)
    for name in ("elemwise_add", "elemwise_sub", "_maximum", "_minimum", "_hypot"):
        register_sparse(name, infer=_same_infer, forward=_binary_fwd)
    register_sparse("elemwise_mul", infer=_mul_infer, forward=_binary_fwd)
    register_sparse("elemwise_div", infer=_div_infer)
    register_sparse("ElementWiseSum", infer=_add_n_infer, forward=_add_n_fwd)
    for name in ("_scatter_elemwise_div", "_scatter_plus_scalar", "_scatter_minus_scalar"):
        register_sparse(name, infer=_scatter_infer, forward=_scatter_fwd)
    register_sparse("where", infer=_where_infer, forward=_where_fwd)


_register()
