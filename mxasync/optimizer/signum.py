"""Signum and SignSGD (``mx.optimizer.Signum``): steps by the sign of the momentum (or of the
gradient when ``momentum`` is 0), through the ``signum_update`` / ``signsgd_update`` ops.

>>> import mxasync as mx
>>> opt = mx.optimizer.Signum(learning_rate=0.1, momentum=0.0)
>>> w, g = mx.nd.ones((2,)), mx.nd.array([3.0, -0.2])
>>> opt.update(0, w, g, opt.create_state(0, w)); w.asnumpy().tolist()
[0.8999999761581421, 1.100000023841858]
"""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["Signum"]


@register
class Signum(Optimizer):
    """Bernstein et al.'s Signum; ``wd_lh`` is decoupled weight decay on the weight itself."""

    def __init__(self, learning_rate: float = 0.01, momentum: float = 0.9, wd_lh: float = 0.0, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight: NDArray):
        return zeros_like_state(weight) if self.momentum != 0.0 else None

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kwargs = self._common_kwargs()
        if state is None:
            nd.signsgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
            return
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.wd_lh:
            kwargs["wd_lh"] = self.wd_lh
        nd.signum_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
