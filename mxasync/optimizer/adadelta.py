"""AdaDelta (``mx.optimizer.AdaDelta``, Zeiler 2012): no learning rate, running averages of squared
gradients and squared steps; weight decay is added to the step as MXNet does."""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray, zeros
from .optimizer import Optimizer, register

__all__ = ["AdaDelta"]


@register
class AdaDelta(Optimizer):
    """``step = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g``; ``w -= step + wd * w``."""

    def __init__(self, rho: float = 0.90, epsilon: float = 1e-5, **kwargs) -> None:
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight: NDArray):
        # float32 accumulators whatever the weight's dtype, as MXNet creates them
        return (zeros(weight.shape, weight.context), zeros(weight.shape, weight.context))

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        wd = self._get_wd(index)
        self._update_count(index)
        grad = grad * self.rescale_grad  # MXNet scales the caller's array in place; a copy leaves it alone
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        acc_g, acc_delta = state
        acc_g[:] *= self.rho
        acc_g[:] += (1.0 - self.rho) * grad * grad
        step = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] *= self.rho
        acc_delta[:] += (1.0 - self.rho) * step * step
        weight[:] -= step + wd * weight
