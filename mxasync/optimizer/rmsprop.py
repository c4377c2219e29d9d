"""RMSProp (``mx.optimizer.RMSProp``): Tieleman & Hinton's, or Graves' centred form.

Plain: ``n = gamma1 * n + (1 - gamma1) * g**2``; ``w -= lr * g / sqrt(n + epsilon)``
(``rmsprop_update``). Centred (``centered=True``) also tracks the mean gradient and a
momentum term with ``gamma2`` (``rmspropalex_update``). ``clip_weights`` bounds the weights.

>>> import mxasync as mx
>>> opt = mx.optimizer.RMSProp(learning_rate=0.1, gamma1=0.0, epsilon=0.0)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> opt.update(0, w, g, opt.create_state(0, w)); w.asnumpy()
array([0.9, 0.9], dtype=float32)
"""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["RMSProp"]


@register
class RMSProp(Optimizer):
    """RMSProp with MXNet 1.9's defaults (learning_rate 0.001, gamma1 0.9, gamma2 0.9)."""

    def __init__(self, learning_rate: float = 0.001, gamma1: float = 0.9, gamma2: float = 0.9,
                 epsilon: float = 1e-8, centered: bool = False, clip_weights: float | None = None,
                 **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight: NDArray):
        if self.centered:
            return (zeros_like_state(weight), zeros_like_state(weight), zeros_like_state(weight))  # n, g, delta
        return (zeros_like_state(weight),)  # n

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        kwargs = dict(self._common_kwargs(), gamma1=self.gamma1, epsilon=self.epsilon)
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        lr, wd = self._get_lr(index), self._get_wd(index)
        if self.centered:
            n, g, delta = state
            nd.rmspropalex_update(weight, grad, n, g, delta, out=weight, lr=lr, wd=wd, gamma2=self.gamma2, **kwargs)
        else:
            (n,) = state
            nd.rmsprop_update(weight, grad, n, out=weight, lr=lr, wd=wd, **kwargs)
