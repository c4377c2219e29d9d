"""Table rows: the ops of ``ops_linalg.py``, ``ops_linalg_pack.py`` and ``ops_nd_index.py``.

The numpy references loop over the batch or state the math plainly; MXNet's own outputs
and gradients (LQ signs, the triangle orders, potrf's symmetric gradient, scatter_nd's
duplicates) are pinned in ``test_linalg.py``.
"""

from __future__ import annotations

import numpy as np
from cases import Case, uniform


def shifted(shift=3.0):
    """Square matrices ``U(-1, 1) + shift * I``: well conditioned (inverse, det, trsm)."""

    def gen(rng, shape, dtype):
        return (rng.uniform(-1, 1, size=shape) + shift * np.eye(shape[-1])).astype(dtype)

    return gen


def spd(rng, shape, dtype):
    x = rng.uniform(-1, 1, size=shape)
    return (x @ np.swapaxes(x, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def chol(rng, shape, dtype):
    return np.linalg.cholesky(spd(rng, shape, "float64")).astype(dtype)


def chol_upper(rng, shape, dtype):
    return np.ascontiguousarray(np.swapaxes(chol(rng, shape, "float64"), -1, -2), dtype=dtype)


def symmetric(rng, shape, dtype):
    x = rng.uniform(-1, 1, size=shape)
    return (x + np.swapaxes(x, -1, -2)).astype(dtype)


def _syevd(a):
    """Eigenvectors as rows, each flipped so its first largest-magnitude entry is positive; eigenvalues ascending."""
    w, v = np.linalg.eigh(a)
    u = v.T.copy()
    for row in u:
        if row[np.argmax(np.abs(row))] < 0:
            row *= -1
    return u, w


def indices(dims, distinct=False, lo_neg=False):
    """Index arrays (M, *Y) into axes of sizes ``dims``; ``distinct`` positions for scatter gradients."""

    def gen(rng, shape, dtype):
        m, ny = shape[0], int(np.prod(shape[1:]))
        if distinct:
            flat = rng.choice(int(np.prod(dims[:m])), size=ny, replace=False)
            return np.stack(np.unravel_index(flat, dims[:m])).reshape(shape).astype(dtype)
        rows = [rng.integers(-d if lo_neg else 0, d, size=shape[1:]) for d in dims[:m]]
        return np.stack(rows).astype(dtype)

    return gen


def _batched(fn):
    """Apply ``fn`` to each matrix of the leading axes (an independent loop, not numpy's stacking)."""

    def ref(*xs, **kw):
        lead = xs[0].shape[:-2]
        outs = [fn(*(x[i] for x in xs), **kw) for i in np.ndindex(*lead)] if lead else [fn(*xs, **kw)]
        if isinstance(outs[0], tuple):
            return tuple(np.stack([o[k] for o in outs]).reshape(lead + np.shape(outs[0][k])) for k in
                         range(len(outs[0])))
        return np.stack(outs).reshape(lead + np.shape(outs[0]))

    return ref


def _op(x, t):
    return x.T if t else x


def _gemm2(a, b, transpose_a=False, transpose_b=False, alpha=1.0, axis=-2):
    a, b = np.swapaxes(a, axis, -2), np.swapaxes(b, axis, -2)
    out = _batched(lambda x, y: alpha * _op(x, transpose_a) @ _op(y, transpose_b))(a, b)
    return np.swapaxes(out, axis, -2)


def _gemm(a, b, c, beta=1.0, **kw):
    return _gemm2(a, b, **kw) + beta * c


def _tri(a, lower):
    return np.tril(a) if lower else np.triu(a)


def _trmm(a, b, transpose=False, rightside=False, lower=True, alpha=1.0):
    def one(a, b):
        t = _op(_tri(a, lower), transpose)
        return alpha * (b @ t if rightside else t @ b)

    return _batched(one)(a, b)


def _trsm(a, b, transpose=False, rightside=False, lower=True, alpha=1.0):
    def one(a, b):
        t = np.linalg.inv(_op(_tri(a, lower), transpose))
        return alpha * (b @ t if rightside else t @ b)

    return _batched(one)(a, b)


def _scalar(fn):
    def ref(a):
        out = _batched(fn)(a)
        return out if a.ndim > 2 else out.reshape(1)

    return ref


def _gather(d, idx):
    idx = idx.astype(int)
    out = np.empty(idx.shape[1:] + d.shape[idx.shape[0]:], d.dtype)
    for y in np.ndindex(*idx.shape[1:]):
        out[y] = d[tuple(idx[(slice(None),) + y])]
    return out


def _scatter(data, idx, shape, out=None):
    out = np.zeros(shape, data.dtype) if out is None else out.copy()
    idx = idx.astype(int)
    for y in np.ndindex(*idx.shape[1:]):
        i = tuple(idx[(slice(None),) + y])
        if all(0 <= k < d for k, d in zip(i, shape, strict=False)):
            out[i] = data[y]
    return out


def _trian(a, offset=0, lower=True):
    n = a.shape[-1]
    if offset < 0 or (offset == 0 and lower):
        pos = [(i, j) for i in range(n) for j in range(n) if j - i <= offset]
    else:
        pos = [(i, j) for j in range(n) for i in range(n) if j - i >= offset]
    return pos


def _extracttrian(a, offset=0, lower=True):
    pos = _trian(a, offset, lower)
    return np.stack([a[..., i, j] for i, j in pos], -1)


def _maketrian(v, offset=0, lower=True):
    m = int((np.sqrt(8 * v.shape[-1] + 1) - 1) // 2)
    n = m + abs(offset)
    out = np.zeros(v.shape[:-1] + (n, n), v.dtype)
    for k, (i, j) in enumerate(_trian(out, offset, lower)):
        out[..., i, j] = v[..., k]
    return out


def _makediag(v, offset=0):
    if v.ndim == 1:
        return np.diag(v, offset)
    return np.stack([np.diag(row, offset) for row in v.reshape(-1, v.shape[-1])]).reshape(
        v.shape[:-1] + (v.shape[-1] + abs(offset),) * 2)


def _lq(a):
    q, r = np.linalg.qr(a.T)
    return q.T, r.T


CASES = [
    Case("gather_nd", [((3, 4), (2, 5)), ((3, 4, 2), (1, 2, 3))], ref=_gather,
         gens=[uniform(), indices((3, 4), lo_neg=True)], wrt=(0,)),
    Case("gather_nd", [((4, 3), (2, 6))], ref=_gather, gens=[uniform(), indices((4, 3))], wrt=(0,),
         name="gather_nd-duplicates"),  # 6 draws from 12 positions: the gradient adds duplicates up
    Case("scatter_nd", [((5,), (2, 5)), ((3, 2), (1, 3))], ref=lambda d, i, shape: _scatter(d, i, shape),
         params=dict(shape=(4, 2)), gens=[uniform(), indices((4, 2), distinct=True)], wrt=(0,)),
    Case("scatter_nd", [((6,), (2, 6))], ref=lambda d, i, shape: _scatter(d, i, shape), params=dict(shape=(2, 3)),
         gens=[uniform(), indices((3, 4), lo_neg=True)], wrt=(0,), name="scatter_nd-dropped-duplicates",
         grad=False),  # a duplicate's overwritten value has MXNet's gradient, not the numeric one
    Case("_scatter_set_nd", [((3, 4), (5,), (2, 5))], ref=lambda lhs, r, i, shape: _scatter(r, i, shape, lhs),
         params=dict(shape=(3, 4)), gens=[uniform(), uniform(), indices((3, 4), distinct=True)], wrt=(0, 1)),
    Case("_linalg_gemm", [((2, 3), (3, 4), (2, 4)), ((2, 2, 3), (2, 3, 4), (2, 2, 4))], ref=_gemm,
         params=dict(alpha=1.5, beta=-0.5)),
    Case("linalg_gemm", [((3, 2), (4, 3), (2, 4))], ref=_gemm, params=dict(transpose_a=True, transpose_b=True),
         name="linalg_gemm-transposed"),
    Case("_linalg_gemm2", [((2, 3), (3, 4)), ((2, 2, 3), (2, 3, 4))], ref=_gemm2, params=dict(alpha=2.0)),
    Case("linalg_gemm2", [((3, 2, 4), (4, 2, 5))], ref=_gemm2, params=dict(axis=-3), name="linalg_gemm2-axis"),
    Case("linalg_gemm2", [((3, 2, 4), (5, 2, 4))], ref=_gemm2, params=dict(axis=0, transpose_b=True),
         name="linalg_gemm2-axis0-tb"),
    Case("_linalg_potrf", [((3, 3),), ((2, 4, 4),)], ref=_batched(np.linalg.cholesky), gens=spd),
    Case("_linalg_potri", [((3, 3),), ((2, 2, 2),)], ref=_batched(lambda a: np.linalg.inv(a @ a.T)), gens=chol),
    Case("_linalg_potrf", [((3, 3),), ((2, 4, 4),)], ref=_batched(lambda a, lower: np.linalg.cholesky(a).T), gens=spd,
         params=dict(lower=False), name="potrf-upper"),
    Case("_linalg_potri", [((3, 3),), ((2, 2, 2),)], ref=_batched(lambda u, lower: np.linalg.inv(u.T @ u)), gens=chol_upper,
         params=dict(lower=False), name="potri-upper"),
    Case("_linalg_syevd", [((3, 3),), ((2, 4, 4),)], ref=_batched(_syevd), gens=symmetric),
    *[Case("_linalg_trmm", [((3, 3), (3, 2)) if not r else ((3, 3), (2, 3)), ((2, 2, 2), (2, 2, 2))], ref=_trmm,
           params=dict(transpose=t, rightside=r, lower=lo, alpha=1.5), name=f"trmm-t{t:d}-r{r:d}-l{lo:d}")
      for t, r, lo in ((0, 0, 1), (1, 0, 1), (0, 1, 0), (1, 1, 0))],
    *[Case("_linalg_trsm", [((3, 3), (3, 2)) if not r else ((3, 3), (2, 3)), ((2, 2, 2), (2, 2, 2))], ref=_trsm,
           params=dict(transpose=t, rightside=r, lower=lo, alpha=0.5), gens=[shifted(), uniform()],
           name=f"trsm-t{t:d}-r{r:d}-l{lo:d}")
      for t, r, lo in ((0, 0, 1), (1, 0, 0), (0, 1, 1), (1, 1, 0))],
    Case("_linalg_sumlogdiag", [((3, 3),), ((2, 2, 2),)], ref=_scalar(lambda a: np.log(np.diag(a)).sum()),
         gens=uniform(0.5, 1.5)),
    Case("_linalg_syrk", [((2, 3),), ((2, 3, 2),)], ref=_batched(lambda a, transpose, alpha: alpha * _op(a, transpose)
                                                                 @ _op(a, transpose).T),
         params=dict(alpha=0.5, transpose=False)),
    Case("linalg_syrk", [((2, 3),)], ref=_batched(lambda a, transpose: a.T @ a), params=dict(transpose=True),
         name="linalg_syrk-transpose"),
    Case("_linalg_gelqf", [((2, 3),), ((2, 3, 3),)], ref=_batched(_lq)),
    Case("_linalg_extractdiag", [((3, 3),), ((2, 3, 4),)], ref=lambda a, offset: np.diagonal(a, offset, -2, -1),
         params=dict(offset=1)),
    Case("linalg_extractdiag", [((3, 3),)], ref=lambda a, offset: np.diagonal(a, offset, -2, -1),
         params=dict(offset=-2), name="linalg_extractdiag-below"),
    Case("_linalg_makediag", [((3,),), ((2, 2),)], ref=_makediag),
    Case("linalg_makediag", [((3,),)], ref=_makediag, params=dict(offset=-1), name="linalg_makediag-below"),
    *[Case("_linalg_extracttrian", [((4, 4),), ((2, 3, 3),)], ref=_extracttrian, params=dict(offset=o, lower=lo),
           name=f"extracttrian-{o}-{lo}") for o, lo in ((0, True), (0, False), (1, True), (-1, False))],
    *[Case("_linalg_maketrian", [((6,),), ((2, 3),)], ref=_maketrian, params=dict(offset=o, lower=lo),
           name=f"maketrian-{o}-{lo}") for o, lo in ((0, True), (0, False), (2, True), (-1, True))],
    Case("_linalg_inverse", [((3, 3),), ((2, 2, 2),)], ref=_batched(np.linalg.inv), gens=shifted()),
    Case("_linalg_det", [((3, 3),), ((2, 2, 2),)], ref=_scalar(np.linalg.det), gens=shifted(1.0)),
    Case("_linalg_slogdet", [((3, 3),), ((2, 2, 2),)], gens=shifted(0.0),
         ref=lambda a: tuple(o if a.ndim > 2 else o.reshape(1) for o in np.linalg.slogdet(a))),
]
