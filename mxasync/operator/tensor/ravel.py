"""``ravel_multi_index`` / ``unravel_index`` (MXNet's src/operator/tensor/ravel.cc): flat indices and back.

>>> import mxasync as mx
>>> mx.nd.ravel_multi_index(mx.nd.array([[3, 6, 6], [4, 5, 1]]), shape=(7, 6)).asnumpy()
array([22., 41., 37.], dtype=float32)
>>> mx.nd.unravel_index(mx.nd.array([22, 41, 37]), shape=(7, 6)).asnumpy()
array([[3., 6., 6.],
       [4., 5., 1.]], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["RavelParam"]


class RavelParam(OpParam):
    shape: tuple[int, ...] = Field(description="the shape of the array the indices refer to")


def _strides(shape):
    strides, acc = [], 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return strides[::-1]


class _RavelProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        if not s or s[0] != len(self.params.shape):
            raise self.error(f"data has shape {tuple(s)} but shape={self.params.shape} needs "
                             f"({len(self.params.shape)}, ...): one row per dimension")
        return [s], [tuple(s[1:])], []


class _UnravelProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        return [s], [(len(self.params.shape), *s)], []


def _ravel(xp, p, data):
    idx = data.astype("int64")
    flat = sum(idx[i] * st for i, st in enumerate(_strides(p.shape)))
    return xp.asarray(flat).astype(data.dtype)


def _unravel(xp, p, data):
    idx = data.astype("int64")
    rows = []
    for d in reversed(p.shape[1:]):  # MXNet's: the first coordinate is what is left (shape[0] may be -1)
        rest = idx // d
        rows.append(idx - rest * d)
        idx = rest
    rows.append(idx)
    return xp.stack(rows[::-1]).astype(data.dtype)


def _no_gradient(xp, p, og, ins, outs):
    return [None]  # integer-valued: MXNet gives a zero gradient


defop("_ravel_multi_index", param=RavelParam, base=_RavelProperty, aliases=("ravel_multi_index",), deps="",
      fwd=_ravel, bwd=_no_gradient,
      doc="The flat (row-major) index of each column of ``data`` (one row per dimension of ``shape``).")
defop("_unravel_index", param=RavelParam, base=_UnravelProperty, aliases=("unravel_index",), deps="",
      fwd=_unravel, bwd=_no_gradient,
      doc="The multi-index of each flat index in ``data``, one row per dimension of ``shape``.")
