"""Adam (``mx.optimizer.Adam``): bias correction folded into the learning rate, as MXNet does.

``lr_t = lr * sqrt(1 - beta2**t) / (1 - beta1**t)`` with ``t`` this weight's update
count, then one ``adam_update`` engine op.

>>> import mxasync as mx
>>> opt = mx.optimizer.Adam(learning_rate=0.1)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> opt.update(0, w, g, opt.create_state(0, w)); w.asnumpy().round(3)
array([0.9, 0.9], dtype=float32)
"""

from __future__ import annotations

import math

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["Adam"]


@register
class Adam(Optimizer):
    """Kingma & Ba's Adam with MXNet 1.9's defaults (learning_rate 0.001)."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, lazy_update: bool = True, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight: NDArray):
        return (zeros_like_state(weight), zeros_like_state(weight))  # mean, variance

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1.0 - self.beta2**t) / (1.0 - self.beta1**t)
        mean, var = state
        nd.adam_update(weight, grad, mean, var, out=weight, lr=lr, wd=wd, beta1=self.beta1, beta2=self.beta2,
                       epsilon=self.epsilon, lazy_update=self.lazy_update, **self._common_kwargs())
