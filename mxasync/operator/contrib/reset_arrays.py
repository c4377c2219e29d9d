"""``reset_arrays``: set every input to zero, in place (MXNet's src/operator/contrib/reset_arrays.cc;
optimizers reset accumulated gradients with it). It has no outputs: ``mx.nd.reset_arrays`` returns ``[]``.

>>> import mxasync as mx
>>> a, b = mx.nd.ones((2,)), mx.nd.ones((3,))
>>> mx.nd.reset_arrays(a, b, num_arrays=2)
[]
>>> a.asnumpy(), b.asnumpy()
(array([0., 0.], dtype=float32), array([0., 0., 0.], dtype=float32))
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["ResetArraysParam"]


class ResetArraysParam(OpParam):
    num_arrays: int = Field(ge=1, description="the number of arrays set to zero")


class _ResetArraysProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        return list(in_shapes), [], []

    def infer_type(self, in_types):
        return list(in_types), [], []

    def mutate_inputs(self):
        return list(range(self.params.num_arrays))


def _reset(xp, p, *arrays):
    for a in arrays:
        a[...] = 0
    return []


defop("reset_arrays", param=ResetArraysParam, base=_ResetArraysProperty, var_args="num_arrays", outputs=(),
      args=lambda p: [f"array_{i}" for i in range(p.num_arrays)], fwd=_reset, deps="", non_differentiable=True,
      doc="Sets each of the ``num_arrays`` inputs to zero in place; no outputs.")
