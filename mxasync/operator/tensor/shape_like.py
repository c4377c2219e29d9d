"""Ops that take a shape from a second input: broadcast_like, reshape_like, slice_like (MXNet 1.x).

The second input only lends its shape: its gradient is zero and its dtype is free.

>>> from mxasync.operator import get_op
>>> get_op("broadcast_like").prepare(lhs_axes=(0,), rhs_axes=(-1,)).infer_shape([(1, 3), (4, 5)])[1]
[(5, 3)]
>>> get_op("reshape_like").prepare(lhs_begin=-1, rhs_begin=1).infer_shape([(30, 12), (4, 2, 2, 3)])[1]
[(30, 2, 2, 3)]
>>> get_op("slice_like").prepare(axes=(0, 2)).infer_shape([(2, 3, 4), (1, 2, 3)])[1]
[(1, 3, 3)]
"""

from __future__ import annotations

from typing import Optional

from .._util import prod, unbroadcast
from ..functional import FunctionalProperty, defop
from ..params import OpParam, OptShape, Shape

__all__ = ["BroadcastLikeParam", "ReshapeLikeParam", "SliceLikeParam"]


class _LikeProperty(FunctionalProperty):
    """Output shape from both inputs' shapes (``like_shape(prop, lhs, rhs)``); dtype from the first input."""

    like_shape = None

    def infer_shape(self, in_shapes):
        a, b = in_shapes
        if a is None or b is None:
            return list(in_shapes), [None], []
        return [a, b], [type(self).like_shape(self, tuple(a), tuple(b))], []

    def infer_type(self, in_types):
        return list(in_types), [in_types[0]], []


def _zero_rhs(grad_lhs):
    def bwd(xp, p, og, ins, outs):
        return [grad_lhs(xp, p, og[0], ins[0]), None]

    return bwd


class _Run:
    """Stands in for the property when a kernel recomputes a shape (inference already checked it)."""

    def __init__(self, params):
        self.params = params

    def error(self, msg):
        return ValueError(msg)


def _checked(shape_fn, p, *shapes):
    return shape_fn(_Run(p), *(tuple(s) for s in shapes))


# -- broadcast_like -------------------------------------------------------------------------------
class BroadcastLikeParam(OpParam):
    lhs_axes: OptShape = None
    rhs_axes: OptShape = None


def _axis(prop, name, axes, a, ndim, shape):
    b = a + ndim if a < 0 else a
    if not 0 <= b < ndim:
        raise prop.error(f"{name}={axes}: axis {a} is out of range for a {ndim}-D input of shape {shape}")
    return b


def _broadcast_like_shape(prop, lhs, rhs):
    p = prop.params
    if p.lhs_axes is None or p.rhs_axes is None:  # MXNet: unless both are given, broadcast to rhs's shape
        if len(lhs) != len(rhs) or any(a != b and a != 1 for a, b in zip(lhs, rhs, strict=True)):
            raise prop.error(f"lhs of shape {lhs} cannot be broadcast to rhs's shape {rhs}")
        return rhs
    if not p.lhs_axes or len(p.lhs_axes) != len(p.rhs_axes):
        raise prop.error(f"lhs_axes={p.lhs_axes} and rhs_axes={p.rhs_axes} must be non-empty and of the "
                         "same length")
    out = list(lhs)
    for a, b in zip(p.lhs_axes, p.rhs_axes, strict=True):
        i = _axis(prop, "lhs_axes", p.lhs_axes, a, len(lhs), lhs)
        j = _axis(prop, "rhs_axes", p.rhs_axes, b, len(rhs), rhs)
        if lhs[i] != 1 and lhs[i] != rhs[j]:
            raise prop.error(f"axis {i} of lhs {lhs} has size {lhs[i]} and cannot be broadcast to {rhs[j]} "
                             f"(axis {j} of rhs {rhs})")
        out[i] = rhs[j]
    return tuple(out)


def _broadcast_like(xp, p, lhs, rhs):
    return xp.broadcast_to(lhs, _checked(_broadcast_like_shape, p, lhs.shape, rhs.shape)).copy()


defop("broadcast_like", linear_input=True, param=BroadcastLikeParam, base=_LikeProperty, arguments=("lhs", "rhs"), deps="og,in",
      like_shape=staticmethod(_broadcast_like_shape), fwd=_broadcast_like,
      bwd=_zero_rhs(lambda xp, p, g, lhs: unbroadcast(xp, g, lhs.shape)),
      doc="Broadcast ``lhs`` to the shape of ``rhs`` (axes of size 1 grow), or only axes ``lhs_axes`` to the "
          "sizes of ``rhs_axes`` of ``rhs`` when both are given.")


# -- reshape_like ---------------------------------------------------------------------------------
class ReshapeLikeParam(OpParam):
    lhs_begin: Optional[int] = None
    lhs_end: Optional[int] = None
    rhs_begin: Optional[int] = None
    rhs_end: Optional[int] = None


def _range(prop, side, shape):
    p = prop.params
    begin, end = getattr(p, f"{side}_begin"), getattr(p, f"{side}_end")
    nd = len(shape)
    b = 0 if begin is None else (begin + nd if begin < 0 else begin)
    e = nd if end is None else (end + nd if end < 0 else end)
    if b < 0:
        raise prop.error(f"{side}_begin={begin} is out of range for the {nd}-D {side} of shape {shape}")
    if e > nd:
        raise prop.error(f"{side}_end={end} is out of range for the {nd}-D {side} of shape {shape}")
    if not b < e:
        raise prop.error(f"{side}_begin={begin}, {side}_end={end} select no axes of the {nd}-D {side} of shape "
                         f"{shape}")
    return b, e


def _reshape_like_shape(prop, lhs, rhs):
    lb, le = _range(prop, "lhs", lhs)
    rb, re = _range(prop, "rhs", rhs)
    out = lhs[:lb] + rhs[rb:re] + lhs[le:]
    if prod(out) != prod(lhs):
        raise prop.error(f"cannot reshape lhs of shape {lhs} ({prod(lhs)} elements) to {out} ({prod(out)} "
                         f"elements) taken from rhs of shape {rhs}")
    return out


def _reshape_like(xp, p, lhs, rhs):
    return lhs.reshape(_checked(_reshape_like_shape, p, lhs.shape, rhs.shape))


defop("reshape_like", linear_input=True, param=ReshapeLikeParam, base=_LikeProperty, arguments=("lhs", "rhs"), deps="og,in",
      like_shape=staticmethod(_reshape_like_shape), fwd=_reshape_like,
      bwd=_zero_rhs(lambda xp, p, g, lhs: g.reshape(lhs.shape)),
      doc="Reshape axes ``lhs_begin:lhs_end`` of ``lhs`` to axes ``rhs_begin:rhs_end`` of ``rhs`` (all axes by "
          "default; negative indices and None for the end allowed).")


# -- slice_like -----------------------------------------------------------------------------------
class SliceLikeParam(OpParam):
    axes: Shape = ()


def _slice_like_shape(prop, data, like):
    axes = prop.params.axes
    if not axes:
        if len(data) != len(like):
            raise prop.error(f"without axes, data {data} and shape_like {like} must have the same number of "
                             "dimensions")
        axes = tuple(range(len(data)))
    out = list(data)
    for a in axes:
        i = _axis(prop, "axes", prop.params.axes, a, len(data), data)
        if i >= len(like):
            raise prop.error(f"axes={prop.params.axes}: axis {a} is out of range for shape_like of shape {like}")
        if like[i] > data[i]:
            raise prop.error(f"axis {i} of shape_like {like} has size {like[i]}, larger than {data[i]} in data "
                             f"{data}")
        out[i] = like[i]
    return tuple(out)


def _slice_like(xp, p, data, like):
    return data[tuple(slice(0, n) for n in _checked(_slice_like_shape, p, data.shape, like.shape))].copy()


def _slice_like_grad(xp, p, g, data):
    out = xp.zeros(data.shape, dtype=g.dtype)
    out[tuple(slice(0, n) for n in g.shape)] = g
    return out


defop("slice_like", linear_input=True, param=SliceLikeParam, base=_LikeProperty, arguments=("data", "shape_like"), deps="og,in",
      like_shape=staticmethod(_slice_like_shape), fwd=_slice_like, bwd=_zero_rhs(_slice_like_grad),
      doc="Slice ``data`` from 0 to the sizes of ``shape_like`` on ``axes`` (all axes when empty; negative "
          "axes allowed).")
