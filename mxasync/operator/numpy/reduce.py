"""NumPy-interface reductions: sum, mean, prod, max, min, std, var, any, all, argmax, argmin, cumsum.

``axis`` is None (all axes), an int or a tuple; a reduction over every axis gives a 0-d
array, as NumPy. Integer ``mean`` gives float32 (MXNet 1.9).

>>> from mxasync.operator import get_op
>>> get_op("_npi_mean").prepare().infer_shape([(2, 3)])[1]
[()]
"""

from __future__ import annotations

import numpy as np

from ._npop import Axis, OptDType, npop

__all__: list[str] = []

_RED = {"axis": (Axis, None), "dtype": (OptDType, None), "keepdims": (bool, False)}


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a % ndim if ndim else a for a in axis)


def _expand(xp, g, axis, ndim, keepdims, dt=None):
    """``g`` (a reduction's head gradient) with the reduced axes back as size 1, in the input's float
    dtype ``dt`` (float32 for float16) so that the gradient is computed at the input's precision."""
    if dt is not None and np.dtype(dt).kind == "f":
        g = g.astype(np.float32 if np.dtype(dt) == np.float16 else dt)
    elif g.dtype == np.float16:
        g = g.astype(np.float32)
    if keepdims:
        return g
    for a in sorted(_axes(axis, ndim)):
        g = xp.expand_dims(g, a)
    return g


def _count(shape, axis):
    n = 1
    for a in _axes(axis, len(shape)):
        n *= shape[a]
    return n


def _sum(xp, p, a):
    out_t = p.dtype or ("int64" if a.dtype.kind == "b" else a.dtype)
    acc = "float32" if np.dtype(out_t) == np.float16 or (a.dtype == np.float16 and p.dtype is None) else out_t
    return xp.sum(a, axis=p.axis, keepdims=p.keepdims, dtype=acc).astype(out_t, copy=False)


def _sum_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = _expand(xp, og[0], p.axis, a.ndim, p.keepdims, a.dtype)
    return [xp.broadcast_to(g, a.shape).astype(a.dtype)]


def _mean(xp, p, a):
    if p.dtype is not None and np.dtype(p.dtype).kind in "iu":  # NumPy's integer mean: accumulated in dtype
        return xp.asarray(xp.mean(a, axis=p.axis, keepdims=p.keepdims, dtype=p.dtype))
    dt = p.dtype or (a.dtype if a.dtype.kind == "f" else "float32")
    acc = "float32" if a.dtype == np.float16 or np.dtype(dt) == np.float16 else (
        dt if np.dtype(dt).kind == "f" else "float64")
    return xp.mean(a, axis=p.axis, keepdims=p.keepdims, dtype=acc).astype(dt)


def _mean_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = _expand(xp, og[0], p.axis, a.ndim, p.keepdims, a.dtype) / max(_count(a.shape, p.axis), 1)
    return [xp.broadcast_to(g, a.shape).astype(a.dtype)]


def _prod(xp, p, a):
    kw = {"dtype": p.dtype} if p.dtype else {}
    return xp.prod(a, axis=p.axis, keepdims=p.keepdims, **kw)


def _prod_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = _expand(xp, og[0], p.axis, a.ndim, p.keepdims, a.dtype)
    y = _expand(xp, outs[0], p.axis, a.ndim, p.keepdims, a.dtype)
    with np.errstate(all="ignore"):
        return [xp.broadcast_to(g * y / a, a.shape).astype(a.dtype)]


def _extreme(fn):
    def fwd(xp, p, a):
        return getattr(xp, fn)(a, axis=p.axis, keepdims=p.keepdims)
    return fwd


def _extreme_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = _expand(xp, og[0], p.axis, a.ndim, p.keepdims, a.dtype)
    y = _expand(xp, outs[0], p.axis, a.ndim, p.keepdims, a.dtype)
    return [(xp.broadcast_to(g, a.shape) * (a == y)).astype(a.dtype)]


_EXT = {"axis": (Axis, None), "keepdims": (bool, False)}
_MOM = {"axis": (Axis, None), "dtype": (OptDType, None), "ddof": (int, 0), "keepdims": (bool, False)}


def _moment(fn):
    def fwd(xp, p, a):
        dt = p.dtype or (a.dtype if a.dtype.kind == "f" else "float32")
        return getattr(xp, fn)(a, axis=p.axis, ddof=p.ddof, keepdims=p.keepdims).astype(dt)
    return fwd


def _var_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = _expand(xp, og[0], p.axis, a.ndim, p.keepdims, a.dtype)
    mean = xp.mean(a, axis=_axes(p.axis, a.ndim), keepdims=True)
    n = max(_count(a.shape, p.axis) - p.ddof, 1)
    return [(g * 2 * (a - mean) / n).astype(a.dtype)]


def _std_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = _expand(xp, og[0], p.axis, a.ndim, p.keepdims, a.dtype)
    y = _expand(xp, outs[0], p.axis, a.ndim, p.keepdims, a.dtype)
    mean = xp.mean(a, axis=_axes(p.axis, a.ndim), keepdims=True)
    n = max(_count(a.shape, p.axis) - p.ddof, 1)
    with np.errstate(all="ignore"):
        return [(g * (a - mean) / (n * y)).astype(a.dtype)]


def _no_grad(xp, p, og, ins, outs):
    return [None] * len(ins)


def _arg(fn):
    def fwd(xp, p, a):
        return getattr(xp, fn)(a, axis=p.axis, keepdims=p.keepdims).astype(np.int64)
    return fwd


def _logic(fn):
    def fwd(xp, p, a):
        return getattr(xp, fn)(a, axis=p.axis, keepdims=p.keepdims)
    return fwd


def _cumsum(xp, p, a):
    dt = p.dtype or (a.dtype if a.dtype.kind != "b" else "int64")
    return xp.cumsum(a, axis=p.axis, dtype=dt)


def _cumsum_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = og[0]
    if p.axis is None:
        r = xp.flip(xp.cumsum(xp.flip(g.reshape(-1)))).reshape(a.shape)
    else:
        r = xp.flip(xp.cumsum(xp.flip(g, p.axis), axis=p.axis), p.axis)
    return [r.astype(a.dtype)]


npop("_npi_sum", _sum, params=_RED, grad=_sum_grad, deps="og,in", doc="NumPy's ``sum``.")
npop("_npi_mean", _mean, params=_RED, grad=_mean_grad, deps="og,in", doc="NumPy's ``mean``.")
npop("_npi_prod", _prod, params=_RED, grad=_prod_grad, doc="NumPy's ``prod``.")
npop("_npi_max", _extreme("max"), params=_EXT, grad=_extreme_grad, doc="NumPy's ``max``.")
npop("_npi_min", _extreme("min"), params=_EXT, grad=_extreme_grad, doc="NumPy's ``min``.")
npop("_npi_var", _moment("var"), params=_MOM, grad=_var_grad, deps="og,in", doc="NumPy's ``var``.")
npop("_npi_std", _moment("std"), params=_MOM, grad=_std_grad, doc="NumPy's ``std``.")
npop("_npi_argmax", _arg("argmax"), params={"axis": (int | None, None), "keepdims": (bool, False)},
     grad=_no_grad, doc="NumPy's ``argmax`` (int64).")
npop("_npi_argmin", _arg("argmin"), params={"axis": (int | None, None), "keepdims": (bool, False)},
     grad=_no_grad, doc="NumPy's ``argmin`` (int64).")
npop("_npi_any", _logic("any"), params=_EXT, grad=_no_grad, doc="NumPy's ``any``.")
npop("_npi_all", _logic("all"), params=_EXT, grad=_no_grad, doc="NumPy's ``all``.")
npop("_npi_cumsum", _cumsum, params={"axis": (int | None, None), "dtype": (OptDType, None)}, grad=_cumsum_grad,
     deps="og,in", doc="NumPy's ``cumsum``.")
