"""Adam's relatives: Adamax (infinity-norm Adam) and Nadam (Nesterov Adam, Dozat 2016), written
with NDArray ops as MXNet 1.9 writes them."""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["Adamax", "Nadam"]


def _decayed_clipped(opt: Optimizer, weight: NDArray, grad: NDArray, wd: float) -> NDArray:
    grad = grad * opt.rescale_grad + wd * weight
    if opt.clip_gradient is not None:
        grad = nd.clip(grad, -opt.clip_gradient, opt.clip_gradient)
    return grad


@register
class Adamax(Optimizer):
    """``m = b1 m + (1 - b1) g``; ``u = max(b2 u, |g|)``; ``w -= lr / (1 - b1^t) * m / u``."""

    def __init__(self, learning_rate: float = 0.002, beta1: float = 0.9, beta2: float = 0.999, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight: NDArray):
        return (zeros_like_state(weight), zeros_like_state(weight))  # mean, infinity norm

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        lr /= 1.0 - self.beta1 ** self._index_update_count[index]
        grad = _decayed_clipped(self, weight, grad, wd)
        mean, norm = state
        mean[:] *= self.beta1
        mean[:] += (1.0 - self.beta1) * grad
        norm[:] = nd.maximum(self.beta2 * norm, nd.abs(grad))
        weight[:] -= lr * mean / norm


@register
class Nadam(Optimizer):
    """Adam with Nesterov momentum and a momentum schedule ``schedule_decay``."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, schedule_decay: float = 0.004, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.0

    def create_state(self, index, weight: NDArray):
        return (zeros_like_state(weight), zeros_like_state(weight))  # mean, variance

    def _momentum(self, t: int) -> float:
        return self.beta1 * (1.0 - 0.5 * 0.96 ** (t * self.schedule_decay))

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        grad = _decayed_clipped(self, weight, grad, wd)
        mom_t, mom_next = self._momentum(t), self._momentum(t + 1)
        self.m_schedule *= mom_t
        schedule_next = self.m_schedule * mom_next
        mean, var = state
        mean[:] *= self.beta1
        mean[:] += (1.0 - self.beta1) * grad
        var[:] *= self.beta2
        var[:] += (1.0 - self.beta2) * grad * grad
        mean_bar = (1.0 - mom_t) * (grad / (1.0 - self.m_schedule)) + mom_next * (mean / (1.0 - schedule_next))
        var_hat = var / (1.0 - self.beta2 ** t)
        weight[:] -= lr * mean_bar / (nd.sqrt(var_hat) + self.epsilon)
