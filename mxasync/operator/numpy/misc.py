"""NumPy-interface ops of several small families: sorting, differences, statistics, windows, ...

>>> from mxasync.operator import get_op
>>> get_op("_npi_diff").prepare(n=1, axis=-1).infer_shape([(3, 5)])[1]
[(3, 4)]
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ._npop import Axis, npop

__all__: list[str] = []


def _none(xp, p, og, ins, outs):
    return [None] * len(ins)


def _sort(xp, p, a):
    if a.ndim == 0:
        return a.reshape(1).copy()  # MXNet: a 0-d input sorts to shape (1,), as NumPy's argsort
    r = xp.sort(a, axis=p.axis)
    return xp.flip(r, p.axis) if p.descending else r


def _sort_grad(xp, p, og, ins, outs):
    a = ins[0]
    if a.ndim == 0:
        return [og[0].reshape(())]
    axis = -1 if p.axis is None else p.axis
    src = a.reshape(-1) if p.axis is None else a
    idx = xp.argsort(src, axis=axis, kind="stable")
    if p.descending:
        idx = xp.flip(idx, axis)
    g = xp.zeros(src.shape, og[0].dtype)
    xp.put_along_axis(g, idx, og[0].reshape(idx.shape), axis=axis)
    return [g.reshape(a.shape)]


npop("_npi_sort", _sort, params={"axis": (Optional[int], -1), "descending": (bool, False)}, grad=_sort_grad,
     deps="og,in", doc="NumPy's ``sort``.")
npop("_npi_argsort", lambda xp, p, a: (xp.argsort(a, axis=p.axis, kind="stable") if a.ndim else
                                       xp.zeros((1,), np.int64)).astype(np.int64),
     params={"axis": (Optional[int], -1)}, grad=_none, doc="NumPy's ``argsort`` (stable; int64).")


def _diff_grad(xp, p, og, ins, outs):
    g = og[0]
    ax = p.axis
    for _ in range(p.n):
        pad = [(0, 0)] * g.ndim
        pad[ax] = (1, 1)
        gp = xp.pad(g, pad)
        g = xp.diff(gp, axis=ax) * -1
    return [g.astype(ins[0].dtype)]


npop("_npi_diff", lambda xp, p, a: xp.diff(a, p.n, axis=p.axis), params={"n": (int, 1), "axis": (int, -1)},
     grad=_diff_grad, deps="og,in", doc="NumPy's ``diff``.")


def _nan_to_num(xp, p, x):
    return xp.nan_to_num(x, nan=p.nan, posinf=p.posinf, neginf=p.neginf)


npop("_npi_nan_to_num", _nan_to_num, params={"nan": (float, 0.0), "posinf": (Optional[float], None),
                                              "neginf": (Optional[float], None)},
     grad=lambda xp, p, og, ins, outs: [og[0] * xp.isfinite(ins[0])], deps="og,in", doc="NumPy's ``nan_to_num``.")


def _polyval(xp, p, coef, x):
    return xp.polyval(coef, x).astype(x.dtype)


def _polyval_grad(xp, p, og, ins, outs):
    coef, x = ins
    n = coef.shape[0]
    powers = xp.stack([x ** (n - 1 - i) for i in range(n)])
    gc = (powers * og[0]).reshape(n, -1).sum(axis=1)
    dcoef = xp.polyder(coef) if n > 1 else xp.zeros(1, coef.dtype)
    gx = og[0] * xp.polyval(dcoef, x)
    return [gc.astype(coef.dtype), gx.astype(x.dtype)]


npop("_npi_polyval", _polyval, arguments=("p", "x"), grad=_polyval_grad, deps="og,in", doc="NumPy's ``polyval``.")


def _percentile(xp, p, a, *q):
    qv = q[0] if q else p.q_scalar
    r = xp.percentile(a, qv, axis=p.axis, method=p.interpolation, keepdims=p.keepdims)
    return xp.asarray(r).astype(a.dtype if a.dtype.kind == "f" else "float32")


npop("_npi_percentile", _percentile, arguments=("a", "q"), args=lambda p: ["a"] if p.q_scalar is not None else ["a", "q"],
     params={"axis": (Axis, None), "interpolation": (str, "linear"), "keepdims": (bool, False),
             "q_scalar": (Optional[float], None)}, grad=_none, doc="NumPy's ``percentile``.")
npop("_npi_resize", lambda xp, p, a: xp.resize(a, p.new_shape), params={"new_shape": (tuple[int, ...], ())},
     grad=_none, doc="NumPy's ``resize``.")
npop("_npi_isclose", lambda xp, p, a, b: xp.isclose(a, b, p.rtol, p.atol, p.equal_nan), arguments=("a", "b"),
     params={"rtol": (float, 1e-5), "atol": (float, 1e-8), "equal_nan": (bool, False)}, grad=_none,
     doc="NumPy's ``isclose``.")
npop("_npi_interp", lambda xp, p, x, xq, fq: xp.interp(x, xq, fq, p.left, p.right).astype(fq.dtype),
     arguments=("x", "xp", "fp"), params={"left": (Optional[float], None), "right": (Optional[float], None)},
     grad=_none, doc="NumPy's ``interp``.")
npop("_npi_window", lambda xp, p: getattr(xp, p.kind)(p.M).astype(p.dtype), arguments=(),
     params={"kind": (str, "hanning"), "M": (int, 1), "dtype": (str, "float32")}, grad=_none,
     doc="NumPy's ``hanning``, ``hamming`` and ``blackman`` windows.")


def _histogram(xp, p, a):
    h, edges = xp.histogram(a, bins=p.bins, range=p.range)
    return h.astype(np.int64), edges.astype(a.dtype)


npop("_npi_histogram", _histogram, nout=2, params={"bins": (int, 10), "range": (Optional[tuple[float, float]], None)},
     grad=_none, doc="NumPy's ``histogram`` with equal bins.")


def _unravel(xp, p, idx):
    return xp.stack(xp.unravel_index(idx.astype(np.int64), p.shape)).astype(idx.dtype if idx.dtype.kind in "iu"
                                                                              else np.int64)


npop("_npi_unravel_index", _unravel, params={"shape": (tuple[int, ...], ())}, grad=_none,
     doc="NumPy's ``unravel_index`` (the coordinates stacked on a first axis).")
