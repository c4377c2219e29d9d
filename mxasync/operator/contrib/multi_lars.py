"""``multi_lars``: the LARS learning rates of many weights at once, from their sums of squares
(MXNet's src/operator/contrib/multi_lars.cc; ``multi_sum_sq`` gives the sums).

``out[i] = lrs[i] * eta * |w_i| / (|g_i| * rescale_grad + wds[i] * |w_i| + eps)`` where
``|w_i| = sqrt(weights_sum_sq[i])`` and ``|g_i| = sqrt(grads_sum_sq[i])``; where either norm is 0
the learning rate is kept. No gradient (as in MXNet).

>>> import mxasync as mx
>>> lr = mx.nd.multi_lars(mx.nd.array([0.1, 0.2]), mx.nd.array([4.0, 0.0]), mx.nd.array([1.0, 1.0]),
...                       mx.nd.array([0.0, 0.0]), eta=0.5, eps=0.0)
>>> lr.asnumpy()
array([0.1, 0.2], dtype=float32)
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["MultiLarsParam"]


class MultiLarsParam(OpParam):
    eta: float = Field(description="the LARS trust coefficient")
    eps: float = Field(description="added to the denominator (keeps it away from 0)")
    rescale_grad: float = Field(1.0, description="the factor the gradients' norms are multiplied by")


class _MultiLarsProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        names = self.list_arguments()
        known = next((tuple(s) for s in in_shapes if s is not None), None)
        if known is None:
            return list(in_shapes), [None], []
        if len(known) != 1:
            raise self.error(f"inputs must be 1-D (one value per weight), got {known}")
        for n, s in zip(names, in_shapes, strict=True):
            if s is not None and tuple(s) != known:
                raise self.error(f"every input must have shape {known}; {n} has {tuple(s)}")
        return [known] * len(names), [known], []

    def infer_type(self, in_types):
        t0 = next((t for t in in_types if t is not None), None)
        if t0 is not None and np.dtype(t0).kind != "f":
            raise self.error(f"takes floating point inputs, got {np.dtype(t0).name}")
        return super().infer_type(in_types)


def _multi_lars(xp, p, lrs, weights_sum_sq, grads_sum_sq, wds):
    f = xp.float64
    w = xp.sqrt(weights_sum_sq.astype(f))
    g = xp.sqrt(grads_sum_sq.astype(f))
    valid = (w > 0) & (g > 0)
    den = g * p.rescale_grad + wds.astype(f) * w + p.eps
    ratio = xp.where(valid, p.eta * w / xp.where(valid, den, 1.0), 1.0)
    return (ratio * lrs.astype(f)).astype(lrs.dtype)


defop("multi_lars", param=MultiLarsParam, base=_MultiLarsProperty,
      arguments=("lrs", "weights_sum_sq", "grads_sum_sq", "wds"), fwd=_multi_lars, deps="",
      non_differentiable=True,
      doc="The learning rates ``lrs`` scaled by LARS: ``eta * |w| / (|g| * rescale_grad + wds * |w| + eps)`` "
          "from the weights' and gradients' sums of squares (kept where either is 0).")
