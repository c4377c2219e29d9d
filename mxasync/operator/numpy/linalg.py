"""``np.linalg`` as ops (``_npi_linalg_*``): NumPy's (CuPy's) LAPACK routines, batched over leading axes.

Gradients follow the matrix-calculus rules MXNet uses (inv, det, slogdet, solve, cholesky,
norm, pinv through inv where square, eigh and svd of distinct values).

>>> from mxasync.operator import get_op
>>> get_op("_npi_linalg_det").prepare().infer_shape([(3, 2, 2)])[1]
[(3,)]
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ._npop import npop

__all__: list[str] = []


def _t(xp, x):
    return xp.swapaxes(x, -1, -2)


def _inv_grad(xp, p, og, ins, outs):
    y = outs[0]
    return [-_t(xp, y) @ og[0] @ _t(xp, y)]


npop("_npi_linalg_inv", lambda xp, p, a: xp.linalg.inv(a), grad=_inv_grad, deps="og,out", stand_in="eye",
     doc="The inverse of each square matrix.")


def _det_grad(xp, p, og, ins, outs):
    a, d = ins[0], outs[0]
    return [(og[0] * d)[..., None, None] * _t(xp, xp.linalg.inv(a))]


npop("_npi_linalg_det", lambda xp, p, a: xp.linalg.det(a), grad=_det_grad, deps="og,in,out", stand_in="eye",
     doc="The determinant of each square matrix.")


def _slogdet(xp, p, a):
    s, ld = xp.linalg.slogdet(a)
    return s.astype(a.dtype), ld.astype(a.dtype)


def _slogdet_grad(xp, p, og, ins, outs):
    a = ins[0]
    return [og[1][..., None, None] * _t(xp, xp.linalg.inv(a))]


npop("_npi_linalg_slogdet", _slogdet, nout=2, grad=_slogdet_grad, deps="og,in", stand_in="eye",
     doc="Sign and log of the absolute determinant.")


def _solve(xp, p, a, b):
    if b.ndim == a.ndim - 1:
        return xp.linalg.solve(a, b[..., None])[..., 0]
    return xp.linalg.solve(a, b)


def _solve_grad(xp, p, og, ins, outs):
    a, b = ins
    x = outs[0]
    vec = b.ndim == a.ndim - 1
    g = og[0][..., None] if vec else og[0]
    xx = x[..., None] if vec else x
    gb = xp.linalg.solve(_t(xp, a), g)
    ga = -gb @ _t(xp, xx)
    return [ga, gb[..., 0] if vec else gb]


npop("_npi_linalg_solve", _solve, arguments=("a", "b"), grad=_solve_grad, deps="og,in,out", stand_in="eye",
     doc="The solution of ``a x = b``.")


def _cholesky_grad(xp, p, og, ins, outs):
    L = outs[0]
    g = og[0]
    phi = _t(xp, L) @ g
    phi = xp.tril(phi)
    phi = phi - 0.5 * xp.tril(xp.triu(phi))
    linv = xp.linalg.inv(L)
    s = _t(xp, linv) @ phi @ linv
    s = 0.5 * (s + _t(xp, s))
    return [s]


npop("_npi_linalg_cholesky", lambda xp, p, a: xp.linalg.cholesky(a), grad=_cholesky_grad, deps="og,out",
     stand_in="eye", doc="The lower Cholesky factor.")


def _ord(o):
    """A norm order from a param (symbol JSON turns inf into the string 'inf')."""
    if isinstance(o, str) and o not in ("fro", "nuc"):
        return float(o)
    return o


def _norm(xp, p, a):
    r = xp.linalg.norm(a, ord=_ord(p.ord), axis=p.axis, keepdims=p.keepdims)
    return xp.asarray(r).astype(a.dtype if a.dtype.kind == "f" else "float32")


def _norm_grad(xp, p, og, ins, outs):
    a, y = ins[0], outs[0]
    p = p.model_copy(update={"ord": _ord(p.ord)})
    matrix = (p.axis is None and a.ndim == 2 and p.ord is not None) or (isinstance(p.axis, tuple)
                                                                        and len(p.axis) == 2)
    if p.ord not in (None, "fro") and not matrix and isinstance(p.ord, (int, float)) and p.ord not in (0, 2):
        g, yy = og[0], y
        if not p.keepdims:
            ax = (a.ndim - 1) if p.axis is None else p.axis
            g, yy = xp.expand_dims(g, ax), xp.expand_dims(yy, ax)
        with np.errstate(all="ignore"):
            r = g * xp.sign(a) * xp.power(xp.abs(a) / yy, p.ord - 1)
        return [xp.where(yy == 0, 0, r).astype(a.dtype)]
    if p.ord not in (None, 2, "fro") or (p.ord == 2 and matrix):
        return [None]
    g, yy = og[0], y
    if not p.keepdims:
        axes = tuple(range(a.ndim)) if p.axis is None else ((p.axis,) if isinstance(p.axis, int) else p.axis)
        for ax in sorted(x % a.ndim for x in axes):
            g, yy = xp.expand_dims(g, ax), xp.expand_dims(yy, ax)
    with np.errstate(all="ignore"):
        return [xp.where(yy == 0, 0, g * a / yy).astype(a.dtype)]


npop("_npi_linalg_norm", _norm, params={"ord": (Optional[Any], None), "axis": (Optional[Any], None),
                                         "keepdims": (bool, False)}, grad=_norm_grad, deps="og,in,out",
     doc="NumPy's ``linalg.norm``.")


def _pinv_grad_full(xp, p, og, ins, outs):
    a, y = ins[0], outs[0]
    g = og[0]
    yt = _t(xp, y)
    m, n = a.shape[-2:]
    term1 = -yt @ g @ yt
    term2 = (xp.eye(m) - a @ y) @ _t(xp, g) @ y @ yt
    term3 = yt @ y @ _t(xp, g) @ (xp.eye(n) - y @ a)
    return [term1 + term2 + term3]


def _pinv(xp, p, a, *rcond):
    rc = rcond[0] if rcond else p.rcond
    return xp.linalg.pinv(a, rcond=rc, hermitian=p.hermitian).astype(a.dtype)


def _pinv_grad(xp, p, og, ins, outs):
    return _pinv_grad_full(xp, p, og, ins[:1], outs) + [None] * (len(ins) - 1)


npop("_npi_linalg_pinv", _pinv, arguments=("a", "rcond_arr"), args=lambda p: ["a", "rcond_arr"] if p.rcond_array else ["a"],
     params={"rcond": (float, 1e-15), "rcond_array": (bool, False), "hermitian": (bool, False)},
     grad=_pinv_grad, deps="og,in,out", stand_in="eye", doc="The Moore-Penrose pseudo-inverse.")


def _svd(xp, p, a):
    u, s, vt = xp.linalg.svd(a, full_matrices=False)
    return u.astype(a.dtype), s.astype(a.dtype), vt.astype(a.dtype)


def _svd_grad(xp, p, og, ins, outs):
    """MXNet's gesvd backward for ``a = ut * l @ v`` (m <= n): from the head gradients of ut, l and v."""
    ut, lam, v = outs
    dut, dl, dv = og
    m = lam.shape[-1]
    if m == 0 or ins[0].size == 0:
        return [xp.zeros(ins[0].shape, ins[0].dtype)]
    li, lj = lam[..., :, None], lam[..., None, :]
    upper = 1.0 / (xp.maximum(li - lj, 1e-20) * xp.maximum(li + lj, 1e-20))
    triu = xp.triu(xp.ones((m, m), dtype=bool), 1)
    e = xp.where(triu, upper, 0)
    e = e - xp.swapaxes(e, -1, -2)
    inv_l = 1.0 / lam[..., :, None]
    vt = xp.swapaxes(v, -1, -2)
    g1 = ((inv_l * dv) @ vt) * lj + xp.swapaxes(dut, -1, -2) @ ut
    x = g1 * e
    eye = xp.eye(m, dtype=lam.dtype)
    g2 = dl[..., :, None] * eye + (x + xp.swapaxes(x, -1, -2)) * lj - inv_l * (dv @ vt) * eye
    return [(ut @ (g2 @ v + inv_l * dv)).astype(ins[0].dtype)]


npop("_npi_linalg_svd", _svd, nout=3, grad=_svd_grad, deps="og,in,out", stand_in="eye",
     doc="The reduced singular value decomposition ``u, s, vt``.")


def _eigh(xp, p, a):
    w, v = xp.linalg.eigh(a, UPLO=p.UPLO)
    return w.astype(a.dtype), v.astype(a.dtype)


def _eigh_grad(xp, p, og, ins, outs):
    w, v = outs
    gw, gv = og
    vt = _t(xp, v)
    with np.errstate(all="ignore"):
        f = w[..., None, :] - w[..., :, None]
        f = xp.where(f == 0, xp.inf, f)
        f = 1 / f
    inner = xp.zeros(v.shape, v.dtype) + gw[..., None, :] * xp.eye(w.shape[-1], dtype=v.dtype)
    inner = inner + f * (vt @ gv)
    ga = v @ inner @ vt
    ga = 0.5 * (ga + _t(xp, ga))
    if p.UPLO == "L":
        ga = xp.tril(ga) * 2 - xp.tril(xp.triu(ga))
    else:
        ga = xp.triu(ga) * 2 - xp.tril(xp.triu(ga))
    return [ga]


npop("_npi_linalg_eigh", _eigh, nout=2, params={"UPLO": (str, "L")}, grad=_eigh_grad, deps="og,out",
     stand_in="eye", doc="Eigenvalues and eigenvectors of symmetric matrices.")
npop("_npi_linalg_eigvalsh", lambda xp, p, a: xp.linalg.eigvalsh(a, UPLO=p.UPLO).astype(a.dtype),
     params={"UPLO": (str, "L")}, grad=lambda xp, p, og, ins, outs: [None], stand_in="eye",
     doc="Eigenvalues of symmetric matrices.")


def _eig(xp, p, a):
    w, v = xp.linalg.eig(a)
    return xp.real(w).astype(a.dtype), xp.real(v).astype(a.dtype)


npop("_npi_linalg_eig", _eig, nout=2, grad=lambda xp, p, og, ins, outs: [None], stand_in="eye",
     doc="Eigenvalues and eigenvectors (real parts).")
npop("_npi_linalg_eigvals", lambda xp, p, a: xp.real(xp.linalg.eigvals(a)).astype(a.dtype),
     grad=lambda xp, p, og, ins, outs: [None], stand_in="eye", doc="Eigenvalues (real parts).")


def _tensorinv(xp, p, a):
    return xp.linalg.tensorinv(a, ind=p.ind)


def _tensorinv_grad(xp, p, og, ins, outs):
    a, y = ins[0], outs[0]
    ind = p.ind
    n = int(np.prod(a.shape[:ind]))
    y2 = y.reshape(-1, n)
    g2 = og[0].reshape(y2.shape)
    ga = -(y2.T @ g2 @ y2.T)
    return [ga.reshape(a.shape)]


npop("_npi_linalg_tensorinv", _tensorinv, params={"ind": (int, 2)}, grad=_tensorinv_grad, deps="og,in,out",
     shape=lambda prop, s: [tuple(s[0][prop.params.ind:]) + tuple(s[0][:prop.params.ind])], doc="NumPy's ``linalg.tensorinv``.")


def _tensorsolve_perm(p, ndim: int) -> list:
    """The axes of ``a`` in solving order: ``axes`` moved to the end, as NumPy does."""
    perm = list(range(ndim))
    for k in p.axes or ():
        perm.remove(k % ndim)
        perm.append(k % ndim)
    return perm


def _tensorsolve_shape(p, a, b):
    """x takes the last ``a.ndim - b.ndim`` axes of the reordered ``a``; NumPy (and MXNet 1.9.1) read
    that as ``shape[-(a.ndim - b.ndim):]``, so equal ranks give all of ``a``'s axes (a (1, 1, 1) x)."""
    a = tuple(a[i] for i in _tensorsolve_perm(p, len(a)))
    return a[-(len(a) - len(b)):]


def _tensorsolve(xp, p, a, b):
    return xp.linalg.tensorsolve(a, b, axes=p.axes)


def _tensorsolve_grad(xp, p, og, ins, outs):
    """With ``A`` the reordered ``a`` as an (n, n) matrix and ``A x = b``: ``db = A^-T g`` and
    ``dA = -db x^T``, put back in ``a``'s axis order."""
    a, b = ins
    x = outs[0]
    perm = _tensorsolve_perm(p, a.ndim)
    at = xp.transpose(a, perm)
    n = x.size
    gb = xp.linalg.solve(at.reshape(n, n).T, og[0].reshape(n))
    ga = -xp.outer(gb, x.reshape(n))
    return [xp.transpose(ga.reshape(at.shape), tuple(np.argsort(perm))).astype(a.dtype),
            gb.reshape(b.shape).astype(b.dtype)]


npop("_npi_linalg_tensorsolve", _tensorsolve, arguments=("a", "b"), params={"axes": (Optional[tuple[int, ...]], None)},
     grad=_tensorsolve_grad, shape=lambda prop, s: [_tensorsolve_shape(prop.params, *s)],
     doc="NumPy's ``linalg.tensorsolve``.")


def _qr(xp, p, a):
    q, r = xp.linalg.qr(a)
    return q.astype(a.dtype), r.astype(a.dtype)


npop("_npi_linalg_qr", _qr, nout=2, grad=lambda xp, p, og, ins, outs: [None], stand_in="eye",
     doc="The reduced QR decomposition.")
npop("_npi_linalg_matrix_rank", lambda xp, p, a: xp.asarray(xp.linalg.matrix_rank(a)).astype(np.int64),
     grad=lambda xp, p, og, ins, outs: [None], stand_in="eye", doc="The rank of each matrix.")
npop("_npi_linalg_matrix_power", lambda xp, p, a: xp.linalg.matrix_power(a, p.n), params={"n": (int, 1)},
     grad=lambda xp, p, og, ins, outs: [None], stand_in="eye", doc="``a`` to the integer power ``n``.")
