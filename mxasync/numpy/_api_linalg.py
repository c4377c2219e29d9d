"""``mx.np.linalg`` functions, written once against a frontend ``F``."""

from __future__ import annotations

from typing import Any

from ._exports import exporter

FUNCS: dict[str, Any] = {}
_export = exporter(FUNCS)


def _simple(name, nout=1):
    def f(F, a):
        return F.op(f"_npi_linalg_{name}", [a])
    f.__name__ = name
    FUNCS[name] = f
    return f


for _n in ("inv", "det", "cholesky", "eig", "eigvals", "matrix_rank"):
    _simple(_n)


@_export
def _slogdet(F, a):
    return tuple(F.op("_npi_linalg_slogdet", [a]))


@_export
def _solve(F, a, b):
    return F.op("_npi_linalg_solve", [a, b])


@_export
def _norm(F, x, ord=None, axis=None, keepdims=False):  # noqa: A002
    if isinstance(axis, list):
        axis = tuple(axis)
    return F.op("_npi_linalg_norm", [x], ord=ord, axis=axis, keepdims=keepdims)


@_export
def _pinv(F, a, rcond=1e-15, hermitian=False):
    if F.is_array(rcond):
        return F.op("_npi_linalg_pinv", [a, rcond], rcond_array=True, hermitian=bool(hermitian))
    return F.op("_npi_linalg_pinv", [a], rcond=float(rcond), hermitian=bool(hermitian))


@_export
def _svd(F, a):
    return tuple(F.op("_npi_linalg_svd", [a]))


@_export
def _eigh(F, a, UPLO="L"):  # noqa: N803
    return tuple(F.op("_npi_linalg_eigh", [a], UPLO=UPLO))


@_export
def _eigvalsh(F, a, UPLO="L"):  # noqa: N803
    return F.op("_npi_linalg_eigvalsh", [a], UPLO=UPLO)


@_export
def _tensorinv(F, a, ind=2):
    return F.op("_npi_linalg_tensorinv", [a], ind=int(ind))


@_export
def _tensorsolve(F, a, b, axes=None):
    return F.op("_npi_linalg_tensorsolve", [a, b], axes=None if axes is None else tuple(axes))


@_export
def _qr(F, a, mode="reduced"):
    return tuple(F.op("_npi_linalg_qr", [a]))


@_export
def _matrix_power(F, a, n):
    return F.op("_npi_linalg_matrix_power", [a], n=int(n))


@_export
def _multi_dot(F, arrays, out=None):
    res = arrays[0]
    for b in arrays[1:]:
        res = F.op("_npi_dot", [res, b])
    return res
