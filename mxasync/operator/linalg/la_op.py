"""MXNet 1.x's linear algebra ops (``_linalg_*``, aliases ``linalg_*``), batched over the leading axes.

Each op works on the last two axes (gemm/gemm2: ``axis`` names the row axis, the
columns are the last one) and loops over the others through numpy's stacked
``linalg`` routines.  Gradients are written from the matrix calculus.  Triangular
inputs (trmm, trsm, potri) read only their triangle, so their gradients are masked to it;
potrf reads the symmetric part ``(A + A^T) / 2``, so its gradient is symmetric (as MXNet's).
potrf and potri take ``lower`` as MXNet 1.9.1 does: ``lower=False`` gives (potrf) or reads (potri)
the upper factor ``U = L^T`` (``A = U^T U``).

>>> from mxasync.operator import get_op
>>> get_op("_linalg_gemm2").prepare(transpose_b=True).infer_shape([(5, 2, 3), (5, 4, 3)])[1]
[(5, 2, 4)]
>>> get_op("_linalg_slogdet").prepare().infer_shape([(3, 2, 2)])[1]
[(3,), (3,)]
"""

from __future__ import annotations

import numpy as np

from ...base import MXAsyncError
from ..functional import defop
from ..params import OpParam

__all__ = ["GemmParam", "Gemm2Param", "TriParam", "SyrkParam", "CholeskyParam"]


class Gemm2Param(OpParam):
    transpose_a: bool = False
    transpose_b: bool = False
    alpha: float = 1.0
    axis: int = -2


class GemmParam(Gemm2Param):
    beta: float = 1.0
    positional_order = ("transpose_a", "transpose_b", "alpha", "beta", "axis")


class TriParam(OpParam):
    transpose: bool = False
    rightside: bool = False
    lower: bool = True
    alpha: float = 1.0


class CholeskyParam(OpParam):
    lower: bool = True


class SyrkParam(OpParam):
    transpose: bool = False
    alpha: float = 1.0


# -- helpers --------------------------------------------------------------------------------------
def _T(x):
    return x.swapaxes(-1, -2)


def _shapes(fn, nout=1):
    """A defop shape callback: ``fn(prop, *shapes)`` returns the output shapes once every input is known."""

    def shape(prop, in_shapes):
        if any(s is None for s in in_shapes):
            return [None] * nout
        out = fn(prop, *(tuple(s) for s in in_shapes))
        return out if isinstance(out, list) else [out]

    return shape


def _matrix(prop, name, s, square=False, ndim=2):
    if len(s) < ndim:
        raise prop.error(f"{name} has shape {s}; it needs at least {ndim} dimensions")
    if square and s[-1] != s[-2]:
        raise prop.error(f"{name} has shape {s}; it needs square matrices in its last two axes")


def _same_batch(prop, names, shapes):
    b0 = shapes[0][:-2]
    for n, s in zip(names[1:], shapes[1:], strict=True):
        if s[:-2] != b0:
            raise prop.error(f"{names[0]} has shape {shapes[0]} and {n} {s}: the batch axes {b0} and {s[:-2]} "
                             "differ")


def _batch(s):
    return s[:-2] or (1,)


def _linalg_error(op, exc):
    return MXAsyncError(f"{op}: {exc}")


def _safe(op, fn, *args):
    try:
        return fn(*args)
    except np.linalg.LinAlgError as exc:
        raise _linalg_error(op, exc) from None


# -- gemm / gemm2 ---------------------------------------------------------------------------------
def _row_axis(prop, s):
    a = prop.params.axis
    b = a + len(s) if a < 0 else a
    if not 0 <= b < len(s) - 1:
        raise prop.error(f"axis={a} is out of range for the row axis of a {len(s)}-D input of shape {s} (the last "
                         "axis holds the columns)")
    return b


def _to_rc(s, b):
    """The shape with the row axis ``b`` moved to -2 (a swap, as MXNet)."""
    s = list(s)
    s[b], s[-2] = s[-2], s[b]
    return tuple(s)


def _gemm_shape(prop, a, b, c=None):
    p = prop.params
    names = ("A", "B", "C")
    _matrix(prop, "A", a)
    _matrix(prop, "B", b)
    if len(a) != len(b):
        raise prop.error(f"A has shape {a} and B {b}: they need the same number of dimensions")
    ax = _row_axis(prop, a)
    ar, br = _to_rc(a, ax), _to_rc(b, ax)
    _same_batch(prop, names[:2], [ar, br])
    k1 = ar[-2] if p.transpose_a else ar[-1]
    k2 = br[-1] if p.transpose_b else br[-2]
    if k1 != k2:
        raise prop.error(f"A has shape {a} and B {b}: inner dimensions {k1} and {k2} differ")
    m = ar[-1] if p.transpose_a else ar[-2]
    n = br[-2] if p.transpose_b else br[-1]
    out = _to_rc(ar[:-2] + (m, n), ax)
    if c is not None and c != out:
        raise prop.error(f"C has shape {c} but A {a} times B {b} has shape {out}")
    return out


def _rc(xp, x, ax):
    return x if ax == x.ndim - 2 else xp.swapaxes(x, ax, -2)


def _gemm_parts(xp, p, a, b):
    ax = p.axis % a.ndim
    am, bm = _rc(xp, a, ax), _rc(xp, b, ax)
    return ax, (_T(am) if p.transpose_a else am), (_T(bm) if p.transpose_b else bm)


def _gemm2(xp, p, a, b, c=None):
    ax, am, bm = _gemm_parts(xp, p, a, b)
    out = p.alpha * xp.matmul(am, bm)
    if c is not None:
        out = out + p.beta * _rc(xp, c, ax)
    return _rc(xp, out, ax)


def _gemm_bwd(xp, p, og, ins, outs):
    a, b = ins[0], ins[1]
    ax, am, bm = _gemm_parts(xp, p, a, b)
    g = _rc(xp, og[0], ax)
    ga = p.alpha * xp.matmul(g, _T(bm))
    gb = p.alpha * xp.matmul(_T(am), g)
    ga = _rc(xp, _T(ga) if p.transpose_a else ga, ax)
    gb = _rc(xp, _T(gb) if p.transpose_b else gb, ax)
    return [ga, gb] + ([p.beta * og[0]] if len(ins) == 3 else [])


defop("_linalg_gemm", param=GemmParam, arguments=("A", "B", "C"), aliases=("linalg_gemm",), deps="og,in",
      shape=_shapes(_gemm_shape), fwd=_gemm2, bwd=_gemm_bwd,
      doc="``alpha * op(A) op(B) + beta * C`` per matrix, op transposing when ``transpose_a`` / ``transpose_b``; "
          "``axis`` is the row axis (the columns are the last axis).")
defop("_linalg_gemm2", param=Gemm2Param, arguments=("A", "B"), aliases=("linalg_gemm2",), deps="og,in",
      shape=_shapes(_gemm_shape), fwd=_gemm2, bwd=_gemm_bwd,
      doc="``alpha * op(A) op(B)`` per matrix, op transposing when ``transpose_a`` / ``transpose_b``; ``axis`` "
          "is the row axis (the columns are the last axis).")


# -- square-matrix ops ----------------------------------------------------------------------------
def _square_same(prop, a):
    _matrix(prop, "A", a, square=True)
    return a


def _square_scalar(prop, a):
    _matrix(prop, "A", a, square=True)
    return _batch(a)


def _sym(x):
    return (x + _T(x)) / 2


def _potrf(xp, p, a):
    lo = _safe("_linalg_potrf", xp.linalg.cholesky, _sym(a))
    return lo if p.lower else _T(lo).copy()


def _potrf_bwd(xp, p, og, ins, outs):
    lo, g = (outs[0], og[0]) if p.lower else (_T(outs[0]), _T(og[0]))
    m = xp.tril(xp.matmul(_T(lo), g))
    m = m - 0.5 * xp.tril(xp.triu(m))  # halve the diagonal
    li = xp.linalg.inv(lo)
    s = xp.matmul(_T(li), xp.matmul(m, li))
    return [_sym(s)]


def _potri(xp, p, a):
    li = _safe("_linalg_potri", xp.linalg.inv, xp.tril(a if p.lower else _T(a)))
    return xp.matmul(_T(li), li)


def _potri_bwd(xp, p, og, ins, outs):
    li = xp.linalg.inv(xp.tril(ins[0] if p.lower else _T(ins[0])))
    g = og[0]
    d = xp.tril(-xp.matmul(outs[0], xp.matmul(g + _T(g), _T(li))))
    return [d if p.lower else _T(d).copy()]


def _inverse(xp, p, a):
    return _safe("_linalg_inverse", xp.linalg.inv, a)


def _scal(xp, g, x):  # g of the batch shape (or (1,) for one matrix) as a (..., 1, 1) factor
    return g.reshape(x.shape[:-2] + (1, 1))


def _det(xp, p, a):
    return xp.linalg.det(a).reshape(_batch(a.shape))


def _det_bwd(xp, p, og, ins, outs):
    a = ins[0]
    inv = _safe("_linalg_det", xp.linalg.inv, a)
    return [_scal(xp, og[0] * outs[0], a) * _T(inv)]


def _slogdet(xp, p, a):
    sign, logdet = xp.linalg.slogdet(a)
    return sign.reshape(_batch(a.shape)), logdet.reshape(_batch(a.shape))


def _slogdet_bwd(xp, p, og, ins, outs):
    a = ins[0]
    return [_scal(xp, og[1], a) * _T(_safe("_linalg_slogdet", xp.linalg.inv, a))]


def _diag(xp, a, offset=0):
    return xp.diagonal(a, offset, -2, -1)


def _sumlogdiag(xp, p, a):
    return xp.log(_diag(xp, a)).sum(-1).reshape(_batch(a.shape))


def _sumlogdiag_bwd(xp, p, og, ins, outs):
    a = ins[0]
    n = a.shape[-1]
    return [xp.eye(n, dtype=a.dtype) * (_scal(xp, og[0], a) / _diag(xp, a)[..., None, :])]


def _tri_mask(xp, p, a):
    return xp.tril(a) if p.lower else xp.triu(a)


defop("_linalg_potrf", param=CholeskyParam, arguments=("A",), aliases=("linalg_potrf",), deps="og,out",
      shape=_shapes(_square_same), fwd=_potrf, bwd=_potrf_bwd,
      doc="Cholesky factor L (lower triangular, ``A = L L^T``) of symmetric positive-definite matrices; with "
          "``lower=False`` the upper factor ``U = L^T``.")
defop("_linalg_potri", param=CholeskyParam, arguments=("A",), aliases=("linalg_potri",), deps="og,in,out",
      shape=_shapes(_square_same), fwd=_potri, bwd=_potri_bwd,
      doc="``(L L^T)^-1`` from the Cholesky factor L (the lower triangle of ``A``; with ``lower=False`` the upper "
          "factor U, ``(U^T U)^-1``): the inverse of the matrix potrf factored.")
defop("_linalg_inverse", arguments=("A",), aliases=("linalg_inverse",), deps="og,out", shape=_shapes(_square_same),
      fwd=_inverse, bwd=lambda xp, p, og, ins, outs: [-xp.matmul(_T(outs[0]), xp.matmul(og[0], _T(outs[0])))],
      doc="The inverse of square matrices.")
defop("_linalg_det", arguments=("A",), aliases=("linalg_det",), deps="og,in,out", shape=_shapes(_square_scalar),
      fwd=_det, bwd=_det_bwd, doc="The determinant of square matrices (shape (1,) for one matrix).")
defop("_linalg_slogdet", arguments=("A",), outputs=("sign", "logdet"), aliases=("linalg_slogdet",), deps="og,in",
      shape=_shapes(lambda prop, a: [_square_scalar(prop, a)] * 2, nout=2), fwd=_slogdet, bwd=_slogdet_bwd,
      doc="The sign and the log of the absolute value of the determinant; only ``logdet`` has a gradient.")
defop("_linalg_sumlogdiag", arguments=("A",), aliases=("linalg_sumlogdiag",), deps="og,in",
      shape=_shapes(_square_scalar), fwd=_sumlogdiag, bwd=_sumlogdiag_bwd,
      doc="The sum of the logarithms of the diagonal of square matrices (shape (1,) for one matrix).")


# -- trmm / trsm / syrk ---------------------------------------------------------------------------
def _tri_shape(prop, a, b):
    _matrix(prop, "A", a, square=True)
    _matrix(prop, "B", b)
    if len(a) != len(b):
        raise prop.error(f"A has shape {a} and B {b}: they need the same number of dimensions")
    _same_batch(prop, ("A", "B"), [a, b])
    k = b[-1] if prop.params.rightside else b[-2]
    if a[-1] != k:
        side = "columns" if prop.params.rightside else "rows"
        raise prop.error(f"A has shape {a} and B {b}: the triangular matrix of size {a[-1]} does not match the "
                         f"{k} {side} of B (rightside={prop.params.rightside})")
    return b


def _op_tri(xp, p, a):
    t = _tri_mask(xp, p, a)
    return _T(t) if p.transpose else t


def _trmm(xp, p, a, b):
    t = _op_tri(xp, p, a)
    return p.alpha * (xp.matmul(b, t) if p.rightside else xp.matmul(t, b))


def _trmm_bwd(xp, p, og, ins, outs):
    a, b = ins
    t, g = _op_tri(xp, p, a), og[0]
    if p.rightside:
        gb, gt = xp.matmul(g, _T(t)), xp.matmul(_T(b), g)
    else:
        gb, gt = xp.matmul(_T(t), g), xp.matmul(g, _T(b))
    gt = _T(gt) if p.transpose else gt
    return [p.alpha * _tri_mask(xp, p, gt), p.alpha * gb]


def _solve_t(xp, t, g, right):
    """``t^-T g`` (left) or ``g t^-T`` (right)."""
    return _T(xp.linalg.solve(t, _T(g))) if right else xp.linalg.solve(_T(t), g)


def _trsm(xp, p, a, b):
    t = _op_tri(xp, p, a)
    if p.rightside:
        x = _T(_safe("_linalg_trsm", xp.linalg.solve, _T(t), _T(b)))
    else:
        x = _safe("_linalg_trsm", xp.linalg.solve, t, b)
    return p.alpha * x


def _trsm_bwd(xp, p, og, ins, outs):
    a, x, g = ins[0], outs[0], og[0]
    t = _op_tri(xp, p, a)
    w = _solve_t(xp, t, g, p.rightside)  # t^-T g or g t^-T
    gt = -xp.matmul(_T(x), w) if p.rightside else -xp.matmul(w, _T(x))
    gt = _T(gt) if p.transpose else gt
    return [_tri_mask(xp, p, gt), p.alpha * w]


def _syrk_shape(prop, a):
    _matrix(prop, "A", a)
    n = a[-1] if prop.params.transpose else a[-2]
    return a[:-2] + (n, n)


def _syrk_op(p, a):
    return _T(a) if p.transpose else a


def _syrk(xp, p, a):
    m = _syrk_op(p, a)
    return p.alpha * xp.matmul(m, _T(m))


def _syrk_bwd(xp, p, og, ins, outs):
    g = p.alpha * xp.matmul(og[0] + _T(og[0]), _syrk_op(p, ins[0]))
    return [_T(g) if p.transpose else g]


defop("_linalg_trmm", param=TriParam, arguments=("A", "B"), aliases=("linalg_trmm",), deps="og,in",
      shape=_shapes(_tri_shape), fwd=_trmm, bwd=_trmm_bwd,
      doc="``alpha * op(A) B`` (``B op(A)`` when ``rightside``) for triangular A (its ``lower`` or upper "
          "triangle is read); op transposes when ``transpose``.")
defop("_linalg_trsm", param=TriParam, arguments=("A", "B"), aliases=("linalg_trsm",), deps="og,in,out",
      shape=_shapes(_tri_shape), fwd=_trsm, bwd=_trsm_bwd,
      doc="Solve ``op(A) X = alpha * B`` (``X op(A) = alpha * B`` when ``rightside``) for triangular A (its "
          "``lower`` or upper triangle is read); op transposes when ``transpose``.")
defop("_linalg_syrk", param=SyrkParam, arguments=("A",), aliases=("linalg_syrk",), deps="og,in",
      shape=_shapes(_syrk_shape), fwd=_syrk, bwd=_syrk_bwd,
      doc="``alpha * A A^T`` (``alpha * A^T A`` when ``transpose``).")


# -- gelqf ----------------------------------------------------------------------------------------
def _gelqf_shape(prop, a):
    _matrix(prop, "A", a)
    m, n = a[-2:]
    if m > n:
        raise prop.error(f"A has shape {a}: gelqf needs at most as many rows as columns ({m} > {n})")
    return [a, a[:-2] + (m, m)]


def _gelqf(xp, p, a):
    q, r = xp.linalg.qr(_T(a))  # A^T = Q' R, so A = R^T Q'^T = L Q (Householder signs, as LAPACK's gelqf)
    return _T(q), _T(r)


def _gelqf_bwd(xp, p, og, ins, outs):
    q, lo = outs
    gq, gl = og
    # the QR gradient of A^T (Q' = Q^T, R = L^T): M = R Rbar^T - Qbar'^T Q', sym from the lower triangle
    m = xp.matmul(_T(lo), gl) - xp.matmul(gq, _T(q))
    c = xp.tril(m) + _T(xp.tril(m, -1))
    b = _T(gq) + xp.matmul(_T(q), c)  # (n, m)
    ga_t = _T(xp.linalg.solve(_T(lo), _T(b)))  # b R^-T = b L^-1
    return [_T(ga_t)]


defop("_linalg_gelqf", arguments=("A",), outputs=("Q", "L"), aliases=("linalg_gelqf",), deps="og,out",
      shape=_shapes(_gelqf_shape, nout=2), fwd=_gelqf, bwd=_gelqf_bwd,
      doc="LQ factorization ``A = L Q`` of (m, n) matrices with m <= n: Q (m, n) has orthonormal rows, L (m, m) "
          "is lower triangular.")
