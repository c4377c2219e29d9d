"""Ops on an array's attributes: Cast, shape_array, size_array, _identity_with_attr_like_rhs.

>>> from mxasync.operator import get_op
>>> get_op("Cast").prepare(dtype="int32").infer_type(["float32"])
(['float32'], ['int32'], [])
>>> get_op("shape_array").prepare().infer_shape([(3, 2, 4)])
([(3, 2, 4)], [(3,)], [])
"""

from __future__ import annotations

from .._util import prod
from ..functional import FunctionalProperty, defop
from ..params import DType, OpParam

__all__ = ["CastParam"]


class CastParam(OpParam):
    dtype: DType


class _CastProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        return [in_shapes[0]], [in_shapes[0]], []

    def infer_type(self, in_types):
        return [in_types[0]], [self.params.dtype], []


# The gradient is cast back when it is stored into the input's gradient (as MXNet, also through integer casts).
defop("Cast", linear_input=True, param=CastParam, base=_CastProperty, aliases=("cast",), deps="og",
      fwd=lambda xp, p, x: x.astype(p.dtype), bwd=lambda xp, p, og, ins, outs: [og[0]],
      doc="Convert to ``dtype``; the gradient is converted back to the input's dtype.")


class _ShapeArrayProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        return [s], [None if s is None else self.out_shape(s)], []

    def infer_type(self, in_types):
        return [in_types[0]], ["int64"], []


# MXNet's zero gradient (MakeZeroGradNodes): no head gradient is read, the input's gradient is zeros
defop("shape_array", base=_ShapeArrayProperty, deps="", zero_gradient=True, out_shape=lambda self, s: (len(s),),
      fwd=lambda xp, p, x: xp.asarray(x.shape, dtype="int64"), bwd=lambda xp, p, og, ins, outs: [None],
      doc="The input's shape as a 1-D int64 array.")
defop("size_array", base=_ShapeArrayProperty, deps="", zero_gradient=True, out_shape=lambda self, s: (1,),
      fwd=lambda xp, p, x: xp.asarray([prod(x.shape)], dtype="int64"), bwd=lambda xp, p, og, ins, outs: [None],
      doc="The input's number of elements as a 1-element int64 array.")


class _LikeRhsProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        lhs, rhs = in_shapes
        s = rhs if rhs is not None else lhs
        if lhs is not None and rhs is not None and tuple(lhs) != tuple(rhs):
            raise self.error(f"lhs has shape {tuple(lhs)} but rhs has {tuple(rhs)}")
        return [s, s], [s], []

    def infer_type(self, in_types):
        t = in_types[1] or in_types[0]
        return [t, t], [t], []


defop("_identity_with_attr_like_rhs", base=_LikeRhsProperty, arguments=("lhs", "rhs"), deps="og",
      fwd=lambda xp, p, lhs, rhs: lhs.copy(), bwd=lambda xp, p, og, ins, outs: [og[0], None],
      doc="``lhs`` unchanged, with the shape and dtype attributes of ``rhs`` (rhs gets no gradient).")
