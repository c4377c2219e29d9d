"""``_linalg_syevd`` (``mx.nd.linalg.syevd``): the eigendecomposition of symmetric matrices, batched over
the leading axes, as MXNet 1.9.1 gives it: ``U, L = syevd(A)`` with the eigenvalues ``L`` ascending and
the eigenvectors as the ROWS of ``U`` (``U A = diag(L) U``, ``U U^T = I``), each row's sign set so that
its entry of largest magnitude (the first such) is positive.

The gradient is MXNet's: ``dA = U^T Y U`` with ``X = dU U^T``, ``Y_ij = (X_ij - X_ji) / (2 (L_i - L_j))``
off the diagonal (the gap floored at a tiny epsilon) and ``Y_ii = dL_i``; it needs distinct eigenvalues.
Like ``potrf`` here, syevd reads the symmetric part ``(A + A^T) / 2`` (MXNet reads one triangle), the
same for the symmetric inputs it is meant for, so that this gradient is the forward's true derivative.

>>> import mxasync as mx
>>> u, l = mx.nd.linalg.syevd(mx.nd.array([[1., 2.], [2., 4.]]))
>>> u.asnumpy().round(4), l.asnumpy().round(4)
(array([[ 0.8944, -0.4472],
       [ 0.4472,  0.8944]], dtype=float32), array([0., 5.], dtype=float32))
"""

from __future__ import annotations

from ..functional import defop
from .la_op import _T, _matrix, _safe, _shapes, _sym

__all__: list[str] = []


def _shape(prop, a):
    _matrix(prop, "A", a, square=True)
    return [a, a[:-1]]


def _syevd(xp, p, a):
    w, v = _safe("_linalg_syevd", xp.linalg.eigh, _sym(a))
    u = _T(v).copy()  # eigenvectors as rows
    big = xp.argmax(xp.abs(u), axis=-1)[..., None]  # the first entry of largest magnitude in each row
    sign = xp.where(xp.take_along_axis(u, big, axis=-1) < 0, -1, 1).astype(u.dtype)
    return u * sign, w.astype(a.dtype)


def _syevd_bwd(xp, p, og, ins, outs):
    u, lam = outs
    du, dl = og
    eps = 1e-30 if u.dtype.itemsize <= 4 else 1e-100
    x = xp.matmul(du, _T(u))
    gap = xp.maximum(lam[..., None, :] - lam[..., :, None], eps)  # gap[i, j] = L_j - L_i, floored
    y = (_T(x) - x) / (2 * gap)  # for i < j: (X_ji - X_ij) / (2 (L_j - L_i)), Y_ij of the upper triangle
    y = xp.triu(y, 1)
    y = y + _T(y)
    n = u.shape[-1]
    idx = xp.arange(n)
    y[..., idx, idx] = dl
    return [xp.matmul(_T(u), xp.matmul(y, u))]


defop("_linalg_syevd", arguments=("A",), outputs=("U", "L"), deps="og,out",
      shape=_shapes(_shape, nout=2), fwd=_syevd, bwd=_syevd_bwd,
      doc="Eigendecomposition of symmetric matrices: U (eigenvectors as rows, each row's largest-magnitude entry "
          "positive) and the ascending eigenvalues L, ``U A = diag(L) U``.")
