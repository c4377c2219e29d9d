"""More NumPy-interface ops: average, ediff1d, diag_indices_from, boolean-mask assignment,
``npx.constraint_check`` and the batch samplers ``npx.random.uniform_n`` / ``normal_n``.

>>> from mxasync.operator import get_op
>>> get_op("_npi_average").prepare(axis=0).infer_shape([(3, 2)])[1]
[(2,), ()]
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from ...base import MXAsyncValueError
from ._npop import Axis, npop, unbroadcast

__all__: list[str] = []


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


def _diag_indices_from(xp, p, a):
    n = a.shape[0]
    return xp.broadcast_to(xp.arange(n, dtype=np.int64), (a.ndim, n)).copy()


npop("_npi_diag_indices_from", _diag_indices_from, grad=lambda xp, p, og, ins, outs: [None],
     doc="The indices of the main diagonal of ``a``, one row per axis.")


def _mask_assign(xp, p, a, mask, *value):
    r = a.copy()
    m = mask.astype(bool)
    key = (slice(None),) * p.start_axis + (m,)
    if value:  # shaped as the selection (its masked axes as one), or broadcast to it
        r[key] = xp.broadcast_to(value[0], r[key].shape)
    else:
        r[key] = p.scalar
    return r


npop("_npi_boolean_mask_assign", _mask_assign, arguments=("data", "mask", "value"),
     params={"scalar": (Optional[float], None), "start_axis": (int, 0)},
     args=lambda p: ["data", "mask"] if p.scalar is not None else ["data", "mask", "value"],
     grad=lambda xp, p, og, ins, outs: [None] * len(ins), shape=lambda prop, s: [s[0]],
     dtype=lambda prop, t: (t, [t[0]], []),
     doc="A copy of ``data`` with the positions of ``mask`` (from ``start_axis``) set to ``value``.")


def _constraint_check(xp, p, cond):
    if not bool(xp.all(cond)):
        raise MXAsyncValueError(f"npx.constraint_check: {p.msg}")
    return xp.asarray(True)


npop("_npx_constraint_check", _constraint_check, params={"msg": (str, "Constraint violated.")},
     grad=lambda xp, p, og, ins, outs: [None], shape=lambda prop, s: [()], dtype=lambda prop, t: (t, ["bool"], []),
     doc="``True`` when every element of the input is; else a ValueError with ``msg`` (at the next wait).")


def _sample_n(kind):
    def kernel(xp, p, rng, a, b):
        shape = tuple(p.batch_shape) + np.broadcast_shapes(a.shape, b.shape)
        if kind == "uniform":
            r = rng.uniform(a, b, size=shape)
        else:
            r = rng.normal(a, b, size=shape)
        return np.asarray(r).astype(np.result_type(a.dtype, b.dtype) if a.dtype.kind == "f" else np.float32)
    return kernel


for _k in ("uniform", "normal"):
    npop(f"_npx_random_{_k}_n", _sample_n(_k), arguments=("a", "b"), random=True,
         params={"batch_shape": (tuple[int, ...], ())}, grad=lambda xp, p, og, ins, outs: [None, None],
         doc=f"``{_k}`` samples of shape ``batch_shape + broadcast(a, b).shape`` (``npx.random.{_k}_n``).")
