"""Cumulative sum (MXNet 1.9's ``cumsum``, registered there as ``_np_cumsum``).

>>> import mxasync as mx
>>> mx.nd.cumsum(mx.nd.array([[1, 2], [3, 4]])).asnumpy()
array([ 1.,  3.,  6., 10.], dtype=float32)
"""

from __future__ import annotations

from ..functional import FunctionalProperty, defop
from ..params import DType, OpParam

__all__ = ["CumsumParam"]


class CumsumParam(OpParam):
    axis: int | None = None
    dtype: DType | None = None


class _CumsumProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        ax = self.params.axis
        if ax is None:
            n = 1
            for d in s:
                n *= d
            return [s], [(n,)], []
        if not -len(s) <= ax < len(s):
            raise self.error(f"axis={ax} is out of range for a {len(s)}-D input of shape {tuple(s)}")
        return [s], [s], []

    def infer_type(self, in_types):
        out = self.params.dtype or in_types[0]
        return list(in_types), [out], []


def _cumsum(xp, p, a):
    return xp.cumsum(a, axis=p.axis, dtype=p.dtype or a.dtype)


def _cumsum_bwd(xp, p, og, ins, outs):
    a = ins[0]
    g = og[0]
    # the adjoint of a running sum is a running sum from the other end
    axis = 0 if p.axis is None else p.axis
    rev = xp.flip(xp.cumsum(xp.flip(g, axis=axis), axis=axis), axis=axis)
    return [rev.reshape(a.shape).astype(a.dtype, copy=False)]


defop("cumsum", param=CumsumParam, base=_CumsumProperty, arguments=("a",), deps="og,in", aliases=("_np_cumsum",),
      fwd=_cumsum, bwd=_cumsum_bwd,
      doc="Cumulative sum along ``axis`` (the flattened input when None), as ``numpy.cumsum``.")
