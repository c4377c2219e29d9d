"""Contrib ops that build or compare arrays (MXNet 1.9's ``mx.nd.contrib``): arange_like,
index_array, index_copy, allclose.

* ``arange_like(data; start, step, repeat, axis)``: ``start + step * (i // repeat)`` laid out in
  ``data``'s shape (or along ``data.shape[axis]`` only), in ``data``'s dtype;
* ``index_array(data; axes)``: the index of every element along ``axes`` (all by default), int64,
  shape ``data.shape + (len(axes),)``;
* ``index_copy(old_tensor, index_vector, new_tensor)``: ``old_tensor`` with rows
  ``index_vector[i]`` replaced by ``new_tensor[i]``; gradients to both tensors;
* ``allclose(a, b; rtol, atol, equal_nan)``: 1 (uint8, shape ``()`` as in MXNet) when
  ``|a - b| <= atol + rtol * |b|`` everywhere, else 0.

arange_like and index_array give ``data`` a zero gradient; allclose has none.

>>> import mxasync as mx
>>> mx.nd.contrib.arange_like(mx.nd.zeros((2, 3)), start=1, repeat=2).asnumpy()
array([[1., 1., 2.],
       [2., 3., 3.]], dtype=float32)
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam, OptShape

__all__ = ["ArangeLikeParam", "IndexArrayParam", "AllCloseParam"]


class ArangeLikeParam(OpParam):
    start: float = Field(0.0, description="the first value")
    step: float = Field(1.0, description="the spacing between values")
    repeat: int = Field(1, ge=1, description="how many times each value is repeated")
    ctx: str = ""
    axis: Optional[int] = Field(None, description="lay the values along this axis of data only (None: data's shape)")


class IndexArrayParam(OpParam):
    axes: OptShape = Field(None, description="the axes whose indices are given (None: every axis)")


class AllCloseParam(OpParam):
    rtol: float = Field(1e-5, description="the tolerance relative to |b|")
    atol: float = Field(1e-8, description="the absolute tolerance")
    equal_nan: bool = Field(True, description="NaN in both arrays at one position counts as equal")


def _zero_grad(xp, p, og, ins, outs):
    return [None] * len(ins)


def _norm_axis(prop, axis, ndim):
    if not -ndim <= axis < ndim:
        raise prop.error(f"axis {axis} is out of range for a {ndim}-D data")
    return axis % ndim


class _ArangeLikeProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None], []
        ax = self.params.axis
        return [d], [tuple(d) if ax is None else (d[_norm_axis(self, ax, len(d))],)], []


def _arange_like(xp, p, data):
    shape = data.shape if p.axis is None else (data.shape[p.axis],)
    n = int(np.prod(shape))
    return (p.start + p.step * (xp.arange(n) // p.repeat)).reshape(shape).astype(data.dtype)


class _IndexArrayProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None], []
        axes = self.params.axes
        k = len(d) if axes is None else len([_norm_axis(self, a, len(d)) for a in axes])
        return [d], [tuple(d) + (k,)], []

    def infer_type(self, in_types):
        return list(in_types), [np.dtype(np.int64)], []


def _index_array(xp, p, data):
    axes = range(data.ndim) if p.axes is None else [a % data.ndim for a in p.axes]
    grids = xp.indices(data.shape, dtype=np.int64)
    return xp.stack([grids[a] for a in axes], axis=-1)


class _IndexCopyProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        old, idx, new = in_shapes
        if old is not None and new is not None and tuple(old[1:]) != tuple(new[1:]):
            raise self.error(f"new_tensor {tuple(new)} must have the rows of old_tensor {tuple(old)}: "
                             f"shape (n,) + {tuple(old[1:])}")
        if idx is not None and (len(idx) != 1 or (new is not None and idx[0] != new[0])):
            raise self.error(f"index_vector has shape {tuple(idx)}; it must be (n,) with n = new_tensor's rows"
                             + (f" ({new[0]})" if new is not None else ""))
        return [old, idx if idx is not None else (new[:1] if new is not None else None), new], [old], []

    def infer_type(self, in_types):
        t = in_types[0] if in_types[0] is not None else in_types[2]
        return [t, in_types[1], t], [t], []


def _index_copy(xp, p, old, idx, new):
    out = old.copy()
    out[idx.astype(np.int64)] = new
    return out


def _index_copy_bwd(xp, p, og, ins, outs):
    idx = ins[1].astype(np.int64)
    g_old = og[0].copy()
    g_old[idx] = 0
    return [g_old, None, og[0][idx]]


class _AllCloseProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        a, b = in_shapes
        if a is not None and b is not None and tuple(a) != tuple(b):
            raise self.error(f"a {tuple(a)} and b {tuple(b)} must have one shape")
        s = a if a is not None else b
        return [s, s], [()], []

    def infer_type(self, in_types):
        t = in_types[0] if in_types[0] is not None else in_types[1]
        return [t, t], [np.dtype(np.uint8)], []


def _allclose(xp, p, a, b):
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ok = xp.abs(a64 - b64) <= p.atol + p.rtol * xp.abs(b64)
    if p.equal_nan:
        ok = ok | (xp.isnan(a64) & xp.isnan(b64))
    return xp.asarray(bool(ok.all()), dtype=np.uint8).reshape(())


defop("_contrib_arange_like", param=ArangeLikeParam, base=_ArangeLikeProperty, fwd=_arange_like, bwd=_zero_grad,
      deps="og", doc="``start + step * (i // repeat)`` in data's shape (or along data.shape[axis]) and dtype.")
defop("_contrib_index_array", param=IndexArrayParam, base=_IndexArrayProperty, fwd=_index_array, bwd=_zero_grad,
      deps="og", doc="Each element's indices along ``axes`` (int64), shape data.shape + (len(axes),).")
defop("_contrib_index_copy", base=_IndexCopyProperty, arguments=("old_tensor", "index_vector", "new_tensor"),
      fwd=_index_copy, bwd=_index_copy_bwd, deps="og,in",
      doc="old_tensor with its rows index_vector[i] replaced by new_tensor[i].")
defop("_contrib_allclose", param=AllCloseParam, base=_AllCloseProperty, arguments=("a", "b"), fwd=_allclose,
      non_differentiable=True, doc="1 (uint8, shape ()) when |a - b| <= atol + rtol * |b| everywhere, else 0.")
