"""``mx.np`` sorting, searching, counting, sets and histograms, written once against ``F``.

Functions whose result's shape depends on values wait for their inputs, as MXNet's do:
``unique`` and ``bincount`` are ops that size their outputs from the values (``shape_from_values``;
a hybridized block holding one runs op by op), the others (``nonzero``, ...) run their kernel on the
engine and wait for it (:func:`~mxasync.numpy.multiarray.run_dynamic`) and have no symbolic form.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ._exports import exporter

FUNCS: dict[str, Any] = {}
_export = exporter(FUNCS)


def _dynamic(F, fn, inputs, name):
    if F.kind != "ndarray":
        raise NotImplementedError(f"np.{name}: the shape of its result depends on values; "
                                  "it has no symbolic form (as in MXNet)")
    from .multiarray import run_dynamic

    return run_dynamic(fn, [F.asarray(x) for x in inputs], f"_npi_{name}")


@_export
def _nonzero(F, a):
    return _dynamic(F, lambda xp, x: tuple(i.astype(_np.int64) for i in xp.nonzero(xp.atleast_1d(x))), [a],
                    "nonzero")


@_export
def _flatnonzero(F, a):
    return _dynamic(F, lambda xp, x: xp.flatnonzero(x).astype(_np.int64), [a], "flatnonzero")


@_export
def _argwhere(F, a):
    return _dynamic(F, lambda xp, x: xp.argwhere(x).astype(_np.int64), [a], "argwhere")


@_export
def _unique(F, ar, return_index=False, return_inverse=False, return_counts=False, axis=None):
    res = F.op("_npi_unique", [ar], return_index=bool(return_index), return_inverse=bool(return_inverse),
               return_counts=bool(return_counts), axis=axis)
    return tuple(res) if return_index or return_inverse or return_counts else res


@_export
def _sort(F, a, axis=-1, kind=None, order=None):
    return F.op("_npi_sort", [a], axis=axis, descending=False)


@_export
def _argsort(F, a, axis=-1, kind=None, order=None):
    return F.op("_npi_argsort", [a], axis=axis)


@_export
def _bincount(F, x, weights=None, minlength=0):
    if minlength < 0:
        raise ValueError(f"np.bincount: minlength={minlength} must not be negative")
    ins = [x] if weights is None else [x, weights]
    return F.op("_npi_bincount", ins, minlength=int(minlength), has_weights=weights is not None)


@_export
def _histogram(F, a, bins=10, range=None, normed=None, weights=None, density=None):  # noqa: A002
    if F.is_array(bins):
        return _dynamic(F, lambda xp, x, b: tuple(r.astype(x.dtype) if i else r.astype(_np.int64)
                                                  for i, r in enumerate(xp.histogram(x, b))), [a, bins], "histogram")
    return F.op("_npi_histogram", [a], bins=int(bins), range=None if range is None else tuple(float(r) for r in range))


@_export
def _unravel_index(F, indices, shape, order="C"):
    shape = (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(shape)
    if not F.is_array(indices):
        indices = F.asarray(_np.asarray(indices), dtype="int64")
    res = F.op("_npi_unravel_index", [indices], shape=shape)
    if F.kind == "ndarray":
        return tuple(res[i] for i in range(len(shape)))
    return res


@_export
def _diag_indices_from(F, arr):
    res = F.op("_npi_diag_indices_from", [arr])
    if F.kind == "ndarray":
        return tuple(res[i] for i in range(arr.ndim))
    return res


@_export
def _tril_indices_from(F, arr, k=0):
    return tuple(F.asarray(i, dtype="int64") for i in _np.tril_indices_from(_np.empty(arr.shape), k))


@_export
def _triu_indices_from(F, arr, k=0):
    return tuple(F.asarray(i, dtype="int64") for i in _np.triu_indices_from(_np.empty(arr.shape), k))


@_export
def _meshgrid(F, *xi, **kwargs):
    indexing = kwargs.get("indexing", "xy")
    sparse = kwargs.get("sparse", False)
    n = len(xi)
    outs = []
    shapes = [x.size for x in xi]
    if indexing == "xy" and n > 1:
        shapes[0], shapes[1] = shapes[1], shapes[0]
    for i, x in enumerate(xi):
        shape = [1] * n
        pos = i
        if indexing == "xy" and n > 1 and i < 2:
            pos = 1 - i
        shape[pos] = x.size
        r = F.op("_npi_reshape", [x], newshape=tuple(shape))
        if not sparse:
            r = F.op("_npi_broadcast_to", [r], shape=tuple(shapes))
        outs.append(r)
    return outs


@_export
def _diff(F, a, n=1, axis=-1, prepend=None, append=None):
    return F.op("_npi_diff", [a], n=int(n), axis=int(axis))


@_export
def _ediff1d(F, ary, to_end=None, to_begin=None):
    ins = [ary]
    params = {}
    for name, v in (("begin", to_begin), ("end", to_end)):
        if v is None:
            params[name] = None
        elif F.is_array(v) or not _np.isscalar(v):
            ins.append(v if F.is_array(v) else F.asarray(v))
            params[name] = "array"
        else:
            params[name] = str(float(v))
    return F.op("_npi_ediff1d", ins, **params)


@_export
def _nan_to_num(F, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return F.op("_npi_nan_to_num", [x], out=None if copy or F.kind != "ndarray" else x, nan=float(nan),
                posinf=None if posinf is None else float(posinf),
                neginf=None if neginf is None else float(neginf))


@_export
def _polyval(F, p, x):
    return F.op("_npi_polyval", [p, x])


@_export
def _percentile(F, a, q, axis=None, out=None, overwrite_input=None, interpolation="linear", keepdims=False):
    if F.is_array(q):
        return F.op("_npi_percentile", [a, q], out=out, axis=axis, interpolation=interpolation, keepdims=keepdims,
                    q_scalar=None)
    return F.op("_npi_percentile", [a], out=out, axis=axis, interpolation=interpolation, keepdims=keepdims,
                q_scalar=float(q))


@_export
def _quantile(F, a, q, axis=None, out=None, overwrite_input=None, interpolation="linear", keepdims=False):
    q = q * 100 if not F.is_array(q) else q * 100
    return _percentile(F, a, q, axis, out, overwrite_input, interpolation, keepdims)


@_export
def _delete(F, arr, obj, axis=None):
    """NumPy's ``delete``; out-of-bounds indices of an index array are ignored (MXNet's rule)."""
    def k(xp, a, *o):
        dim = a.size if axis is None else a.shape[axis]
        idx = o[0] if o else obj
        if isinstance(idx, slice):
            idx = xp.arange(*idx.indices(dim))
        elif not _np.isscalar(idx) or hasattr(idx, "ndim") and idx.ndim:
            idx = xp.asarray(idx).astype(_np.int64).reshape(-1)
            idx = idx[(idx >= 0) & (idx < dim)]
        return xp.delete(a, idx, axis)
    return _dynamic(F, k, [arr] + ([obj] if F.is_array(obj) else []), "delete")


@_export
def _insert(F, arr, obj, values, axis=None):
    ins = [arr] + ([values] if F.is_array(values) else []) + ([obj] if F.is_array(obj) else [])

    def k(xp, a, *rest):
        it = iter(rest)
        v = next(it) if F.is_array(values) else values
        o = next(it).astype(_np.int64) if F.is_array(obj) else obj
        return xp.insert(a, o, v, axis=axis).astype(a.dtype)
    return _dynamic(F, k, ins, "insert")


@_export
def _resize(F, a, new_shape):
    return F.op("_npi_resize", [a], new_shape=(new_shape,) if isinstance(new_shape, int) else tuple(new_shape))


@_export
def _share_memory(F, a, b, max_work=None):
    return _np.shares_memory(a._data, b._data) if F.kind == "ndarray" else False


FUNCS["may_share_memory"] = FUNCS["share_memory"]
FUNCS["shares_memory"] = FUNCS["share_memory"]


@_export
def _array_equal(F, a1, a2, equal_nan=False):
    if a1.shape != a2.shape:
        return False
    return bool(F.op("_npi_all", [F.op("_npi_equal", [a1, a2])]).item())


@_export
def _allclose(F, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return bool(_np.allclose(a.asnumpy(), b.asnumpy(), rtol, atol, equal_nan))


@_export
def _isclose(F, a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return F.op("_npi_isclose", [a, b], rtol=float(rtol), atol=float(atol), equal_nan=bool(equal_nan))


@_export
def _count_nonzero(F, a, axis=None):
    return F.op("_npi_sum", [F.op("_npi_not_equal", [a], scalar=0.0)], axis=axis, dtype="int64")


@_export
def _interp(F, x, xp_, fp, left=None, right=None, period=None):
    return F.op("_npi_interp", [x, xp_, fp], left=left, right=right)


def _window(name):
    def f(F, M, dtype=None, ctx=None):
        return F.op("_npi_window", [], ctx=ctx, kind=name, M=int(M), dtype=_np.dtype(dtype or "float32").name)
    f.__name__ = name
    return f


for _w in ("hanning", "hamming", "blackman"):
    _export(_window(_w), _w)

