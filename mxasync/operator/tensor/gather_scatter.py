"""N-d indexing from MXNet 1.x: gather_nd, scatter_nd and the internal _scatter_set_nd.

``indices`` has shape (M, Y0, ..., Yk) and picks from the first M axes of the data:
``gather_nd(data, indices)[y] = data[indices[0, y], ..., indices[M-1, y]]`` of shape
(Y0, ..., Yk, X_M, ..., X_{N-1}).  Indices are given in any dtype (float by default in
MXNet) and truncated to integers.

>>> from mxasync.operator import get_op
>>> get_op("gather_nd").prepare().infer_shape([(3, 4, 5), (2, 6)])[1]
[(6, 5)]
>>> get_op("scatter_nd").prepare(shape=(3, 4, 5)).infer_shape([(6, 5), (2, 6)])[1]
[(3, 4, 5)]
"""

from __future__ import annotations

from ...base import MXAsyncError
from ..functional import FunctionalProperty, defop
from ..params import OpParam, Shape

__all__ = ["ScatterNDParam"]


class ScatterNDParam(OpParam):
    shape: Shape


def _check(prop, data, indices):
    """(M, Y) for indices of shape (M, *Y) into an array of shape ``data``; errors name both shapes."""
    if len(indices) < 1:
        raise prop.error(f"indices has shape {indices}; it needs at least 1 dimension (M, ...)")
    m = indices[0]
    if not 1 <= m <= len(data):
        raise prop.error(f"indices has shape {indices}: its first axis M={m} must be between 1 and the "
                         f"{len(data)} dimensions of data {data}")
    return m, tuple(indices[1:])


class _GatherNDProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d, i = in_shapes
        if d is None or i is None:
            return list(in_shapes), [None], []
        d, i = tuple(d), tuple(i)
        m, y = _check(self, d, i)
        return [d, i], [(y + d[m:]) or (1,)], []

    def infer_type(self, in_types):
        return list(in_types), [in_types[0]], []


class _ScatterNDProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        *vals, i = in_shapes
        out = tuple(self.params.shape)
        if i is None:
            return list(in_shapes), [out], []
        i = tuple(i)
        m, y = _check(self, out, i)
        want = (y + out[m:]) or (1,)
        names = self.list_arguments()
        if vals[-1] is not None and tuple(vals[-1]) != want:
            raise self.error(f"{names[-2]} has shape {tuple(vals[-1])} but indices {i} and shape={out} need {want}")
        ins = ([out] if len(vals) == 2 else []) + [want, i]
        if len(vals) == 2 and vals[0] is not None and tuple(vals[0]) != out:
            raise self.error(f"lhs has shape {tuple(vals[0])} but shape={out}")
        return ins, [out], []

    def infer_type(self, in_types):
        *vals, i = in_types
        t = next((v for v in vals if v is not None), None)
        return [t] * len(vals) + [i], [t], []


def _index(xp, op, idx, shape, drop: bool):
    """Integer index arrays from ``idx`` (M, ...): negatives wrap; out of range raises, or is dropped (``drop``).

    Everything stays in ``xp`` (CuPy refuses numpy operands: the bounds live on the device too).
    """
    idx = idx.astype("int64") if hasattr(idx, "astype") else xp.asarray(idx, "int64")
    m = idx.shape[0]
    dims = xp.asarray([int(d) for d in shape[:m]], dtype="int64").reshape((m,) + (1,) * (idx.ndim - 1))
    if drop:  # scatter_nd writes only indices within [0, dim) (MXNet drops the others, negatives included)
        keep = ((idx >= 0) & (idx < dims)).all(axis=0)
        return tuple(idx), keep
    bad = (idx < -dims) | (idx >= dims)
    if bool(bad.any()):
        k = [int(v) for v in xp.argwhere(bad)[0]]
        raise MXAsyncError(f"{op}: index {int(idx[tuple(k)])} is out of bounds for axis {k[0]} with size "
                           f"{int(shape[k[0]])} (indices of shape {tuple(idx.shape)}, data {tuple(shape)})")
    return tuple(idx % dims), None


def _gather(xp, p, data, idx):
    ix, _ = _index(xp, "gather_nd", idx, data.shape, drop=False)
    out = data[ix]
    return out.reshape(out.shape or (1,))


def _gather_bwd(xp, p, og, ins, outs):
    data, idx = ins
    ix, _ = _index(xp, "gather_nd", idx, data.shape, drop=False)
    g = xp.zeros(data.shape, dtype=og[0].dtype)
    xp.add.at(g, ix, og[0].reshape(idx.shape[1:] + data.shape[idx.shape[0]:]))  # duplicates add up
    return [g, None]


def _scatter_into(xp, out, vals, idx, op):
    ix, keep = _index(xp, op, idx, out.shape, drop=True)
    vals = vals.reshape(idx.shape[1:] + out.shape[idx.shape[0]:])
    if not keep.all():
        ix = tuple(i[keep] for i in ix)
        vals = vals[keep]
    out[ix] = vals  # duplicates: the last one wins, as MXNet's CPU kernel
    return out


def _picked(xp, og, idx, shape, op):
    """``og`` at the (kept) indices, zero where an index was dropped: the gradient of what was scattered."""
    ix, keep = _index(xp, op, idx, shape, drop=True)
    safe = tuple(xp.where(keep, i, 0) for i in ix)
    g = og[safe]
    mask = keep.reshape(keep.shape + (1,) * (g.ndim - keep.ndim))
    return xp.where(mask, g, 0).astype(og.dtype)


def _scatter(xp, p, data, idx):
    return _scatter_into(xp, xp.zeros(tuple(p.shape), dtype=data.dtype), data, idx, "scatter_nd")


def _scatter_bwd(xp, p, og, ins, outs):
    data, idx = ins
    return [_picked(xp, og[0], idx, tuple(p.shape), "scatter_nd").reshape(data.shape), None]


def _scatter_set(xp, p, lhs, rhs, idx):
    return _scatter_into(xp, lhs.copy(), rhs, idx, "_scatter_set_nd")


def _scatter_set_bwd(xp, p, og, ins, outs):
    lhs, rhs, idx = ins
    g = og[0]
    picked = _picked(xp, g, idx, g.shape, "_scatter_set_nd").reshape(rhs.shape)
    glhs = _scatter_into(xp, g.copy(), xp.zeros(rhs.shape, dtype=g.dtype), idx, "_scatter_set_nd")
    return [glhs, picked, None]


defop("gather_nd", base=_GatherNDProperty, arguments=("data", "indices"), deps="og,in", fwd=_gather,
      bwd=_gather_bwd,
      doc="Gather from the first M axes of ``data`` at ``indices`` of shape (M, Y0, ...): the output has shape "
          "(Y0, ..., X_M, ...).  Negative indices count from the end; an index out of range is an error.  "
          "The gradient adds the output gradient back at the indices (duplicates add up).")
defop("scatter_nd", param=ScatterNDParam, base=_ScatterNDProperty, arguments=("data", "indices"), deps="og,in",
      fwd=_scatter, bwd=_scatter_bwd,
      doc="The reverse of gather_nd: zeros of ``shape`` with ``data`` written at ``indices`` of shape (M, Y0, "
          "...).  A duplicate index keeps the last value; indices out of [0, size) are dropped (as MXNet).")
defop("_scatter_set_nd", param=ScatterNDParam, base=_ScatterNDProperty, arguments=("lhs", "rhs", "indices"),
      deps="og,in", inplace=True, fwd=_scatter_set, bwd=_scatter_set_bwd,
      doc="scatter_nd into a copy of ``lhs`` (of ``shape``) instead of zeros: ``rhs`` is written at ``indices``.")
