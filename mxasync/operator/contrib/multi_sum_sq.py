"""``multi_sum_sq``: the sum of squares of each input, one float32 each (the norms LARS/LAMB need;
MXNet's src/operator/contrib/multi_sum_sq.cc).

>>> import mxasync as mx
>>> mx.nd.multi_sum_sq(mx.nd.array([1, 2]), mx.nd.array([[3], [4]]), num_arrays=2).asnumpy()
array([ 5., 25.], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["MultiSumSqParam"]


class MultiSumSqParam(OpParam):
    num_arrays: int = Field(ge=1, description="the number of arrays")


class _MultiSumSqProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        return list(in_shapes), [(self.params.num_arrays,)], []

    def infer_type(self, in_types):
        return list(in_types), ["float32"], []


def _multi_sum_sq(xp, p, *arrays):
    # accumulate in float32 at least (float16 squares overflow early), as MXNet does
    return xp.stack([(a.astype(xp.promote_types(a.dtype, "float32")) ** 2).sum() for a in arrays]).astype("float32")


defop("multi_sum_sq", param=MultiSumSqParam, base=_MultiSumSqProperty, var_args="num_arrays", deps="",
      args=lambda p: [f"array_{i}" for i in range(p.num_arrays)], fwd=_multi_sum_sq,
      bwd=lambda xp, p, og, ins, outs: [None] * len(ins),
      doc="The sum of the squares of each of ``num_arrays`` inputs, as a (num_arrays,) float32 array.")
