"""``all_finite`` / ``multi_all_finite``: 1 when every element is finite, else 0 (mixed-precision loss scaling;
MXNet's src/operator/contrib/all_finite.cc).

>>> import mxasync as mx
>>> mx.nd.all_finite(mx.nd.array([1, float("inf")])).asnumpy(), mx.nd.all_finite(mx.nd.array([1, 2])).asnumpy()
(array([0.], dtype=float32), array([1.], dtype=float32))
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["AllFiniteParam", "MultiAllFiniteParam"]


class AllFiniteParam(OpParam):
    init_output: bool = Field(True, description="start from 1 (MXNet leaves the output as it was when False; "
                                                 "here the result is the same either way)")


class MultiAllFiniteParam(AllFiniteParam):
    num_arrays: int = Field(1, ge=1, description="the number of arrays checked")


class _FlagProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        return list(in_shapes), [(1,)], []

    def infer_type(self, in_types):
        return list(in_types), ["float32"], []


def _all_finite(xp, p, *arrays):
    ok = all(bool(xp.isfinite(a).all()) for a in arrays)
    return xp.asarray([1.0 if ok else 0.0], dtype="float32")


def _no_gradient(xp, p, og, ins, outs):
    return [None] * len(ins)


defop("all_finite", param=AllFiniteParam, base=_FlagProperty, deps="", fwd=_all_finite, bwd=_no_gradient,
      doc="1.0 (shape (1,), float32) when every element of ``data`` is finite, else 0.0.")
defop("multi_all_finite", param=MultiAllFiniteParam, base=_FlagProperty, var_args="num_arrays", deps="",
      args=lambda p: [f"array_{i}" for i in range(p.num_arrays)], fwd=_all_finite, bwd=_no_gradient,
      doc="1.0 (shape (1,), float32) when every element of all ``num_arrays`` inputs is finite, else 0.0.")
