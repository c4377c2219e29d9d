"""NumPy-interface numerics: differences (``diff``, ``ediff1d``), statistics (``average``, ``percentile``,
``histogram``), ``polyval``, ``interp``, ``isclose``, ``nan_to_num``, ``resize`` and the windows.

>>> from mxasync.operator import get_op
>>> get_op("_npi_diff").prepare(n=1, axis=-1).infer_shape([(3, 5)])[1]
[(3, 4)]
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ._npop import Axis, npop, unbroadcast

__all__: list[str] = []


def _none(xp, p, og, ins, outs):
    return [None] * len(ins)


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


def _w_full(xp, a, w, axis):
    """The weights broadcast against ``a`` (a 1-D ``w`` lies along ``axis``, as NumPy's average)."""
    if w.shape != a.shape and w.ndim == 1 and axis is not None and not isinstance(axis, tuple):
        shape = [1] * a.ndim
        shape[axis] = w.shape[0]
        w = w.reshape(shape)
    return xp.broadcast_to(w, a.shape)


def _average(xp, p, a, *w):
    if w:
        wf = _w_full(xp, a, w[0], p.axis)
        den = wf.sum(axis=p.axis)
        avg = (a * wf).sum(axis=p.axis) / den
    else:
        avg = a.mean(axis=p.axis)
        den = np.asarray(a.size // max(np.size(avg), 1))
    dt = a.dtype if a.dtype.kind == "f" else np.float32
    return xp.asarray(avg).astype(dt), xp.asarray(den).astype(dt)


def _average_grad(xp, p, og, ins, outs):
    """``d avg / d a = w / sum(w)``, ``d avg / d w = (a - avg) / sum(w)``, plus the head gradient of
    the sum of the weights for ``w``. Unweighted, that sum is a 0-d count with no gradient."""
    a = ins[0]
    axes = range(a.ndim) if p.axis is None else [x % a.ndim for x in ((p.axis,) if isinstance(p.axis, int) else p.axis)]
    kept = tuple(1 if i in axes else n for i, n in enumerate(a.shape))  # the reduced shape, keepdims
    g = og[0].reshape(kept)
    if len(ins) == 1:
        return [xp.broadcast_to(g / max(a.size // max(og[0].size, 1), 1), a.shape).astype(a.dtype)]
    w = ins[1]
    wf = _w_full(xp, a, w, p.axis)
    den = wf.sum(axis=tuple(axes), keepdims=True)
    avg = (a * wf).sum(axis=tuple(axes), keepdims=True) / den
    ga = g * wf / den
    gw = g * (a - avg) / den + og[1].reshape(kept)
    if w.shape != a.shape and w.ndim == 1 and a.ndim > 1:  # a 1-D w lies along the one axis
        gw = gw.sum(axis=tuple(i for i in range(a.ndim) if i != axes[0]))
    return [ga.astype(a.dtype), unbroadcast(xp, gw, w.shape).astype(w.dtype)]


npop("_npi_average", _average, nout=2, arguments=("a", "weights"), params={"axis": (Axis, None),
                                                                         "weighted": (bool, False)},
     args=lambda p: ["a", "weights"] if p.weighted else ["a"], grad=_average_grad, deps="og,in",
     doc="NumPy's ``average``; the second output is the sum of the weights.")


def _ediff1d(xp, p, a, *extra):
    d = xp.diff(a.reshape(-1))
    it = iter(extra)
    parts = []
    if p.begin == "array":
        parts.append(next(it).reshape(-1).astype(a.dtype))
    elif p.begin is not None:
        parts.append(xp.asarray([float(p.begin)], a.dtype))
    parts.append(d)
    if p.end == "array":
        parts.append(next(it).reshape(-1).astype(a.dtype))
    elif p.end is not None:
        parts.append(xp.asarray([float(p.end)], a.dtype))
    return xp.concatenate(parts) if len(parts) > 1 else d


def _ediff1d_grad(xp, p, og, ins, outs):
    a = ins[0]
    g = og[0]
    nb = 0
    if p.begin is not None:
        nb = ins[1].size if p.begin == "array" else 1
    n = max(a.size - 1, 0)
    gd = g[nb:nb + n]
    ga = xp.zeros(a.size, g.dtype)
    ga[1:] += gd
    ga[:-1] -= gd
    res = [ga.reshape(a.shape).astype(a.dtype)]
    rest = iter(ins[1:])
    if p.begin == "array":
        b = next(rest)
        res.append(g[:nb].reshape(b.shape).astype(b.dtype))
    if p.end == "array":
        e = next(rest)
        res.append(g[nb + n:].reshape(e.shape).astype(e.dtype))
    return res


npop("_npi_ediff1d", _ediff1d, arguments=("a", "to_begin", "to_end"),
     params={"begin": (Optional[str], None), "end": (Optional[str], None)},
     args=lambda p: ["a"] + (["to_begin"] if p.begin == "array" else []) + (["to_end"] if p.end == "array" else []),
     grad=_ediff1d_grad, deps="og,in", doc="NumPy's ``ediff1d`` (``begin``/``end``: 'array', a number, or None).")
