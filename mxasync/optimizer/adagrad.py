"""AdaGrad (``mx.optimizer.AdaGrad``): per-coordinate steps scaled by the accumulated squared gradient.

``history += g**2``; ``w -= lr * (g / sqrt(history + eps) + wd * w)`` with
``g = clip(rescale_grad * grad)``, as one ``_sparse_adagrad_update`` engine op
(``mx.nd.sparse.adagrad_update``, MXNet's name; it takes dense gradients too).

>>> import mxasync as mx
>>> opt = mx.optimizer.AdaGrad(learning_rate=0.1, eps=0.0)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> opt.update(0, w, g, opt.create_state(0, w)); w.asnumpy()
array([0.9, 0.9], dtype=float32)
"""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["AdaGrad"]


@register
class AdaGrad(Optimizer):
    """Duchi et al.'s AdaGrad; ``eps`` keeps the division stable (MXNet's name and default)."""

    def __init__(self, eps: float = 1e-7, **kwargs) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight: NDArray):
        return zeros_like_state(weight)  # history

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        kwargs = {"rescale_grad": self.rescale_grad}
        if self.clip_gradient is not None:  # MXNet's dense AdaGrad clips whenever it is set
            kwargs["clip_gradient"] = self.clip_gradient
        nd.sparse.adagrad_update(weight, grad, state, out=weight, lr=self._get_lr(index), wd=self._get_wd(index),
                          epsilon=self.float_stable_eps, **kwargs)
