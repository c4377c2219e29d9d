"""Indexing ops: pick (one element per row along an axis) and diag.

>>> from mxasync.operator import get_op
>>> get_op("pick").prepare(axis=1).infer_shape([(2, 4), None])
([(2, 4), (2,)], [(2,)], [])
>>> get_op("diag").prepare(k=1).infer_shape([(3,)])
([(3,)], [(4, 4)], [])
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from .._util import norm_axes, prod
from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["PickParam", "DiagParam"]


class PickParam(OpParam):
    axis: int = -1
    keepdims: bool = False
    mode: Literal["clip", "wrap"] = "clip"


class _PickProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, i = in_shapes
        if d is None:
            return list(in_shapes), [None], []
        a = norm_axes(self, self.params.axis, len(d))[0]
        out = tuple(d[:a]) + ((1,) if self.params.keepdims else ()) + tuple(d[a + 1:])
        if i is not None and prod(i) != prod(out):
            raise self.error(f"index has shape {tuple(i)} but data {tuple(d)} with axis={self.params.axis} needs {out}")
        return [d, out if i is None else i], [out], []

    def infer_type(self, in_types):
        return [in_types[0], in_types[1] or in_types[0]], [in_types[0]], []


def _pick_rows(xp, p, data, index):
    """data as (rows, n) with the picked axis last, and the clipped/wrapped index as (rows,)."""
    a = p.axis % data.ndim
    n = data.shape[a]
    dl = xp.moveaxis(data, a, -1).reshape(-1, n)
    i = index.reshape(-1).astype("int64")
    i = xp.mod(i, n) if p.mode == "wrap" else xp.clip(i, 0, n - 1)
    return dl, i, a


def _pick_fwd(xp, p, data, index):
    dl, i, a = _pick_rows(xp, p, data, index)
    out = dl[xp.arange(dl.shape[0]), i]
    shape = data.shape[:a] + ((1,) if p.keepdims else ()) + data.shape[a + 1:]
    return out.reshape(shape)


def _pick_bwd(xp, p, og, ins, outs):
    data, index = ins
    dl, i, a = _pick_rows(xp, p, data, index)
    g = xp.zeros(dl.shape, dtype=data.dtype)
    g[xp.arange(g.shape[0]), i] = og[0].reshape(-1)
    moved = data.shape[:a] + data.shape[a + 1:] + (data.shape[a],)
    return [xp.moveaxis(g.reshape(moved), -1, a), None]


defop("pick", linear_input=True, param=PickParam, base=_PickProperty, arguments=("data", "index"), deps="og,in",
      fwd=_pick_fwd, bwd=_pick_bwd,
      doc="``data`` at position ``index`` along ``axis``, one per row; out-of-range indices are clipped or "
          "wrapped (``mode``); the gradient goes to the picked positions.")


class DiagParam(OpParam):
    k: int = 0
    axis1: int = 0
    axis2: int = 1


class _DiagProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        p = self.params
        if len(s) == 1:
            n = s[0] + abs(p.k)
            return [s], [(n, n)], []
        a1, a2 = (norm_axes(self, ax, len(s))[0] for ax in (p.axis1, p.axis2))
        if a1 == a2:
            raise self.error(f"axis1={p.axis1} and axis2={p.axis2} name the same axis of {tuple(s)}")
        n1, n2 = s[a1], s[a2]
        length = min(n1, n2 - p.k) if p.k >= 0 else min(n1 + p.k, n2)
        if length < 0 and n1 and n2:  # MXNet: an empty diagonal is fine, one past the edge is not
            raise self.error(f"k={p.k}: diagonal {p.k} does not exist in the ({n1}, {n2}) planes "
                             f"(axis1={p.axis1}, axis2={p.axis2}) of data {tuple(s)}; |k| may be at most "
                             f"{n2 if p.k >= 0 else n1}")
        length = max(0, length)
        rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
        return [s], [rest + (length,)], []


def _diag_fwd(xp, p, x):
    if x.ndim == 1:
        return xp.diag(x, p.k)
    return xp.diagonal(x, p.k, p.axis1, p.axis2).copy()


def _diag_bwd(xp, p, og, ins, outs):
    x = ins[0]
    g = og[0]
    if x.ndim == 1:
        return [xp.diagonal(g, p.k).copy()]
    a1, a2 = p.axis1 % x.ndim, p.axis2 % x.ndim
    full = xp.zeros(x.shape, dtype=g.dtype)
    n = g.shape[-1]
    r = xp.arange(n) + max(0, -p.k)
    c = xp.arange(n) + max(0, p.k)
    xp.moveaxis(full, (a1, a2), (-2, -1))[..., r, c] = g  # a view of ``full``: writes through
    return [full]


defop("diag", linear_input=True, param=DiagParam, base=_DiagProperty, deps="og,in", fwd=_diag_fwd, bwd=_diag_bwd,
      doc="A 1-D input becomes a square matrix with it on diagonal ``k``; otherwise diagonal ``k`` of the "
          "(``axis1``, ``axis2``) planes, as a new last axis.")


# -- batch_take: MXNet 1.x's (deprecated) row-wise pick, without a gradient -----------------------
class _BatchTakeProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        a, idx = in_shapes
        if a is None:
            return list(in_shapes), [None], []
        if len(a) != 2:
            raise self.error(f"a has shape {tuple(a)}; batch_take needs a 2-D array (N, M)")
        want = (a[0],)
        if idx is not None and tuple(idx) != want:
            raise self.error(f"indices has shape {tuple(idx)} but a {tuple(a)} needs {want}")
        return [a, want], [want], []

    def infer_type(self, in_types):
        # MXNet infers int32 indices and refuses others
        t, it = in_types
        if it is not None and np.dtype(it) != np.int32:
            raise self.error(f"indices has dtype {np.dtype(it).name}; batch_take needs int32 indices")
        return [t, np.dtype(np.int32)], [t], []


def _batch_take(xp, p, a, indices):
    cols = xp.clip(indices.astype(np.int64), 0, a.shape[1] - 1)  # out-of-range indices are clipped
    return a[xp.arange(a.shape[0]), cols]


defop("batch_take", linear_input=True, base=_BatchTakeProperty, arguments=("a", "indices"), fwd=_batch_take, non_differentiable=True,
      doc="``out[i] = a[i, indices[i]]`` for a 2-D ``a`` and int32 ``indices`` (clipped to the row); "
          "MXNet's deprecated form of ``pick``; it has no gradient.")
