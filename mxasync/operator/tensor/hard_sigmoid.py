"""``hard_sigmoid``: ``clip(alpha * x + beta, 0, 1)`` (MXNet's tensor/elemwise_unary_op_basic.cc).

>>> import mxasync as mx
>>> mx.nd.hard_sigmoid(mx.nd.array([-3, -1, 0, 1, 3])).asnumpy()
array([0. , 0.3, 0.5, 0.7, 1. ], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import defop
from ..params import OpParam

__all__ = ["HardSigmoidParam"]


class HardSigmoidParam(OpParam):
    alpha: float = Field(0.2, description="the slope of the linear part")
    beta: float = Field(0.5, description="the value at 0 (the offset of the linear part)")


def _hard_sigmoid(xp, p, x):
    return xp.clip(x * x.dtype.type(p.alpha) + x.dtype.type(p.beta), 0, 1).astype(x.dtype, copy=False)


def _hard_sigmoid_bwd(xp, p, og, ins, outs):
    y = outs[0]
    inside = (y > 0) & (y < 1)
    return [og[0] * inside * og[0].dtype.type(p.alpha)]


defop("hard_sigmoid", param=HardSigmoidParam, deps="og,out", fwd=_hard_sigmoid, bwd=_hard_sigmoid_bwd,
      doc="A piecewise-linear sigmoid: ``max(0, min(1, alpha * x + beta))``.")
