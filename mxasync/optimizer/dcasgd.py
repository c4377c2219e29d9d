"""DCASGD (``mx.optimizer.DCASGD``, Zheng et al. 2016): delay-compensated asynchronous SGD.

The step adds ``lamda * g * g * (w - w_prev)``, a first-order correction for the weight
having moved since the gradient was computed.
"""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["DCASGD"]


@register
class DCASGD(Optimizer):
    """States ``(momentum or None, previous weight)``."""

    def __init__(self, momentum: float = 0.0, lamda: float = 0.04, **kwargs) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous: dict = {}
        self.lamda = lamda

    def create_state(self, index, weight: NDArray):
        mom = zeros_like_state(weight) if self.momentum != 0.0 else None
        return (mom, weight.copy())

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
            step = mom
        previous[:] = weight
        weight[:] += step
