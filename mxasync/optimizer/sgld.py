"""Stochastic Gradient Langevin Dynamics (``mx.optimizer.SGLD``, Welling & Teh 2011).

Half an SGD step plus Gaussian noise of variance ``lr``, drawn from the engine's generator
(``mx.random.seed`` makes it repeat).
"""

from __future__ import annotations

import math

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register

__all__ = ["SGLD"]


@register
class SGLD(Optimizer):
    """``weight += -lr / 2 * (clip(rescale_grad * grad) + wd * weight) + N(0, lr)``."""

    def create_state(self, index, weight: NDArray):
        return None

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        weight[:] += -lr / 2 * (grad + wd * weight)
        weight[:] += nd.random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype, ctx=weight.context)
