"""Sorting ops: sort, argsort, topk.

Equal values come in the order MXNet 1.9.1's CPU kernels give them: ``std::sort`` /
``std::partial_sort`` of GCC's libstdc++, neither stable nor by position (see
:mod:`mxasync.operator.kernels.stl_sort`), on the numpy backend; a stable order elsewhere.
``axis=None`` works on the flattened array, and indices are returned as ``dtype`` (float32 by default).
``sort`` and ``topk(ret_typ='value')`` keep the positions in a hidden second
output, so their gradient goes back to where each value came from.

>>> import numpy as np
>>> from mxasync.operator.tensor.ordering import topk
>>> from mxasync.operator.tensor.ordering import TopKParam
>>> x = np.array([[3., 1, 2, 5], [0, 4, 7, 6]])
>>> v, i = topk(np, TopKParam(k=2, ret_typ="both"), x)
>>> v, i
(array([[5., 3.],
       [7., 6.]]), array([[3., 0.],
       [2., 3.]], dtype=float32))
"""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np

from .._util import prod
from ..functional import FunctionalProperty, defop
from ..kernels.stl_sort import mxnet_order, rows_with_ties
from ..params import DType, OpParam

__all__ = ["SortParam", "ArgSortParam", "TopKParam", "stable_order", "topk"]


class SortParam(OpParam):
    axis: Optional[int] = -1
    is_ascend: bool = True


class ArgSortParam(SortParam):
    dtype: DType = "float32"


class TopKParam(OpParam):
    axis: Optional[int] = -1
    k: int = 1
    ret_typ: Literal["value", "indices", "mask", "both"] = "indices"
    is_ascend: bool = False
    dtype: DType = "float32"


def stable_order(xp, x, ascend: bool):
    """Positions that sort ``x`` along its last axis; ties keep their order either way."""
    if ascend:
        return xp.argsort(x, axis=-1, kind="stable")
    n = x.shape[-1]
    return (n - 1) - xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1]


def _mxnet_ties(xp, xl, idx, k: int, ascend: bool):
    """``idx`` (the first ``k`` sorted positions along the last axis) with the rows that hold equal values
    put in MXNet's CPU order (numpy arrays only; other backends keep the stable order)."""
    if not isinstance(xl, np.ndarray) or xl.size == 0:  # host arrays: MXNet's CPU kernels' order
        return idx
    n = xl.shape[-1]
    rows = xl.reshape(-1, n)
    tied = rows_with_ties(rows)
    if tied.size == 0:
        return idx
    out = np.array(idx).reshape(-1, k)
    for r in tied:
        out[r] = mxnet_order(rows[r], k, ascend)
    return out.reshape(idx.shape)


def _to_last(x, axis):
    """``x`` with ``axis`` moved last (flattened when axis is None), and the axis used."""
    if axis is None:
        return x.reshape(-1), None
    a = axis % x.ndim
    return (x if a == x.ndim - 1 else x.swapaxes(a, -1)), a


def _from_last(xp, y, a):
    return y if a is None or a == y.ndim - 1 else y.swapaxes(a, -1)


def _first_k(xp, xl, k: int, ascend: bool):
    """The first ``k`` positions of :func:`stable_order` along the last axis without sorting all of it: a
    partition finds each row's k-th value, the rows keep what lies before it and the first (by position)
    of its ties, and only those k are sorted. None where this does not pay (short rows, large k, NaNs)."""
    n = xl.shape[-1]
    if n < 4096 or k * 8 > n or (xl.dtype.kind == "f" and bool(xp.isnan(xl).any())):
        return None
    rows = xl.reshape(-1, n)
    kth = k - 1 if ascend else n - k
    v = xp.partition(rows, kth, axis=-1)[:, kth:kth + 1]
    before = rows < v if ascend else rows > v
    tie = rows == v
    room = k - before.sum(axis=-1, keepdims=True)  # how many of the ties make it
    keep = before | (tie & (xp.cumsum(tie, axis=-1) <= room))
    cand = xp.nonzero(keep)[1].reshape(rows.shape[0], k)  # k positions per row, in position order
    vals = xp.take_along_axis(rows, cand, axis=-1)
    order = stable_order(xp, vals, ascend)  # ties stay in position order, as in the full sort
    return xp.take_along_axis(cand, order, axis=-1).reshape(xl.shape[:-1] + (k,))


def _sorted(xp, x, axis, ascend, k=None):
    xl, a = _to_last(x, axis)
    idx = _first_k(xp, xl, k, ascend) if k is not None else None
    if idx is None:
        idx = stable_order(xp, xl, ascend)
        if k is not None:
            idx = idx[..., :k]
    idx = _mxnet_ties(xp, xl, idx, xl.shape[-1] if k is None else k, ascend)
    return xp.take_along_axis(xl, idx, axis=-1), idx, a


def _scatter_last(xp, shape_last, idx, g):
    """A zero array of ``shape_last`` (axis last) with ``g`` written at positions ``idx`` of the last axis."""
    out = xp.zeros(shape_last, dtype=g.dtype)
    n, k = shape_last[-1], idx.shape[-1]
    rows = prod(shape_last[:-1])
    flat = out.reshape(rows, n)
    flat[xp.arange(rows)[:, None], idx.reshape(rows, k).astype("int64")] = g.reshape(rows, k)
    return out


def _last_shape(shape, axis):
    if axis is None:
        return (prod(shape),)
    a = axis % len(shape)
    s = list(shape)
    s[a], s[-1] = s[-1], s[a]
    return tuple(s)


def _values_bwd(xp, p, og, ins, outs):
    """Gradient of sorted/top-k values: each goes back to the position it came from (hidden output 1)."""
    x = ins[0]
    g, _ = _to_last(og[0], p.axis)
    idx, _ = _to_last(outs[1], p.axis)
    gl = _scatter_last(xp, _last_shape(x.shape, p.axis), idx, g)
    a = None if p.axis is None else p.axis % x.ndim
    return [_from_last(xp, gl, a).reshape(x.shape)]


def _check_axis(prop, s):
    ax = prop.params.axis
    if ax is not None and not -len(s) <= ax < len(s):
        raise prop.error(f"axis={ax} is out of range for an input of {len(s)} dimensions")


class _SortProperty(FunctionalProperty):
    def list_outputs(self):
        return ["output0", "output1"]

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None, None], []
        _check_axis(self, s)
        o = (prod(s),) if self.params.axis is None else tuple(s)
        return [s], [o, o], []

    def infer_type(self, in_types):
        return [in_types[0]], [in_types[0], "int64"], []


def _sort(xp, p, x):
    v, i, a = _sorted(xp, x, p.axis, p.is_ascend)
    return _from_last(xp, v, a), _from_last(xp, i, a)


defop("sort", param=SortParam, base=_SortProperty, deps="og,in,out", visible=1, fwd=_sort, bwd=_values_bwd,
      doc="Sort along ``axis`` (the flattened array when None); ties keep their order.")


class _ArgSortProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        _check_axis(self, s)
        return [s], [(prod(s),) if self.params.axis is None else tuple(s)], []

    def infer_type(self, in_types):
        return [in_types[0]], [self.params.dtype], []


def _argsort(xp, p, x):
    xl, a = _to_last(x, p.axis)
    idx = _mxnet_ties(xp, xl, stable_order(xp, xl, p.is_ascend), xl.shape[-1], p.is_ascend)
    return _from_last(xp, idx, a).astype(p.dtype)


defop("argsort", param=ArgSortParam, base=_ArgSortProperty, deps="og", fwd=_argsort,
      bwd=lambda xp, p, og, ins, outs: [None],
      doc="The positions that sort ``axis`` (as ``dtype``); ties keep their order.")


class _TopKProperty(FunctionalProperty):
    def list_outputs(self):
        return ["output"] if self.params.ret_typ in ("indices", "mask") else ["output0", "output1"]

    def num_visible_outputs(self):
        return 2 if self.params.ret_typ == "both" else 1

    def _k(self, n):
        k = self.params.k
        if k > n:
            raise self.error(f"k={k} is larger than the {n} elements along axis={self.params.axis}")
        return n if k < 1 else k

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        p = self.params
        nout = len(self.list_outputs())
        if s is None:
            return [None], [None] * nout, []
        _check_axis(self, s)
        if p.ret_typ == "mask":
            return [s], [tuple(s)], []
        if p.axis is None:
            o = (self._k(prod(s)),)
        else:
            a = p.axis % len(s)
            o = tuple(s[:a]) + (self._k(s[a]),) + tuple(s[a + 1:])
        return [s], [o] * nout, []

    def infer_type(self, in_types):
        t, p = in_types[0], self.params
        if p.ret_typ == "mask":
            return [t], [t], []
        if p.ret_typ == "indices":
            return [t], [p.dtype], []
        return [t], [t, p.dtype if p.ret_typ == "both" else "int64"], []


def topk(xp, p, x):
    """The kernel: outputs as ``ret_typ`` says (values and positions for 'value' and 'both')."""
    xl, a = _to_last(x, p.axis)
    n = xl.shape[-1]
    k = n if p.k < 1 else p.k
    v, i, _ = _sorted(xp, x, p.axis, p.is_ascend, k)
    if p.ret_typ == "mask":
        m = _scatter_last(xp, xl.shape, i, xp.ones(i.shape, dtype=x.dtype))
        return _from_last(xp, m, a).reshape(x.shape)
    idx = _from_last(xp, i, a)
    if p.ret_typ == "indices":
        return idx.astype(p.dtype)
    return _from_last(xp, v, a), idx.astype(p.dtype if p.ret_typ == "both" else "int64")


def _topk_bwd(xp, p, og, ins, outs):
    if p.ret_typ in ("indices", "mask"):
        return [None]
    return _values_bwd(xp, p, og, ins, outs)


defop("topk", param=TopKParam, base=_TopKProperty, deps="og,in,out", fwd=topk, bwd=_topk_bwd,
      doc="The k largest (or smallest, ``is_ascend``) along ``axis``: their values, indices (as ``dtype``), "
          "a 0/1 mask, or both [values, indices]; k < 1 keeps them all.")
