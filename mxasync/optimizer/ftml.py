"""FTML (``mx.optimizer.FTML``, Zheng & Kwok 2017): Follow the Moving Leader through ``ftml_update``."""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["FTML"]


@register
class FTML(Optimizer):
    """States ``(d, v, z)``; step ``t`` is this weight's update count."""

    def __init__(self, beta1: float = 0.6, beta2: float = 0.999, epsilon: float = 1e-8, **kwargs) -> None:
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight: NDArray):
        return (zeros_like_state(weight), zeros_like_state(weight), zeros_like_state(weight))  # d, v, z

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kwargs = dict(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon, rescale_grad=self.rescale_grad,
                      t=self._index_update_count[index])
        if self.clip_gradient:
            kwargs["clip_grad"] = self.clip_gradient  # the op's name for it
        d, v, z = state
        nd.ftml_update(weight, grad, d, v, z, out=weight, lr=lr, wd=wd, **kwargs)
