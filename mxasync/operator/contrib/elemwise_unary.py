"""Small elementwise contrib ops of MXNet 1.9 (``mx.nd.contrib.*``): quadratic, div_sqrt_dim,
gradientmultiplier and the straight-through estimators round_ste and sign_ste.

* ``quadratic(data; a, b, c)``: ``a * x**2 + b * x + c``, gradient ``(2 a x + b) * out_grad``;
* ``div_sqrt_dim(data)``: ``data / sqrt(data.shape[-1])`` (attention scores);
* ``gradientmultiplier(data; scalar)``: the identity forward, ``scalar * out_grad`` backward;
* ``round_ste`` / ``sign_ste``: round (halves away from 0) / sign forward, the identity backward.

>>> import mxasync as mx
>>> mx.nd.contrib.quadratic(mx.nd.array([1, 2]), a=1, b=-1, c=0.5).asnumpy()
array([0.5, 2.5], dtype=float32)
"""

from __future__ import annotations

import math

from pydantic import Field

from ..functional import defop
from ..params import OpParam

__all__ = ["QuadraticParam", "GradientMultiplierParam"]


class QuadraticParam(OpParam):
    a: float = Field(0.0, description="the coefficient of the quadratic term")
    b: float = Field(0.0, description="the coefficient of the linear term")
    c: float = Field(0.0, description="the constant term")


class GradientMultiplierParam(OpParam):
    scalar: float = Field(1.0, description="what the gradient is multiplied by")
    is_int: bool = Field(True, description="MXNet's flag for an integer scalar (kept, not used)")


def _round(xp, p, x):
    return xp.where(x >= 0, xp.floor(x + 0.5), xp.ceil(x - 0.5)).astype(x.dtype)


def _identity_grad(xp, p, og, ins, outs):
    return [og[0]]


defop("_contrib_quadratic", param=QuadraticParam, fwd=lambda xp, p, x: (p.a * x + p.b) * x + p.c,
      bwd=lambda xp, p, og, ins, outs: [og[0] * (2 * p.a * ins[0] + p.b)], deps="og,in",
      doc="``a * data**2 + b * data + c``, elementwise.")
defop("_contrib_div_sqrt_dim", fwd=lambda xp, p, x: x / x.dtype.type(math.sqrt(x.shape[-1])),
      bwd=lambda xp, p, og, ins, outs: [og[0] / og[0].dtype.type(math.sqrt(og[0].shape[-1]))], deps="og",
      doc="``data`` divided by the square root of its last dimension.")
defop("_contrib_gradientmultiplier", param=GradientMultiplierParam, fwd=lambda xp, p, x: x.copy(),
      bwd=lambda xp, p, og, ins, outs: [og[0] * og[0].dtype.type(p.scalar)], deps="og",
      doc="The identity forward; backward multiplies the gradient by ``scalar`` (e.g. -1: gradient reversal).")
defop("_contrib_round_ste", fwd=_round, bwd=_identity_grad, deps="og",
      doc="``round(data)`` (halves away from 0) forward; the gradient passes straight through.")
defop("_contrib_sign_ste", fwd=lambda xp, p, x: xp.sign(x), bwd=_identity_grad, deps="og",
      doc="``sign(data)`` forward; the gradient passes straight through.")
