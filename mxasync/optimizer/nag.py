"""Nesterov accelerated gradient (``mx.optimizer.NAG``), MXNet's formulation.

With momentum it runs the ``nag_mom_update`` op; without, plain ``sgd_update``.

>>> import mxasync as mx
>>> opt = mx.optimizer.NAG(learning_rate=0.1, momentum=0.9)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> opt.update(0, w, g, opt.create_state(0, w)); w.asnumpy()
array([0.81, 0.81], dtype=float32)
"""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state
from .sgd import _MasterCopyMixin

__all__ = ["NAG"]


@register
class NAG(_MasterCopyMixin, Optimizer):
    """Nesterov momentum SGD: ``w += momentum * (momentum * mom - step) - step`` with ``step = lr * grad``."""

    def __init__(self, momentum: float = 0.0, **kwargs) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight: NDArray):
        return zeros_like_state(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state) -> None:
        if not isinstance(index, (list, tuple)):
            index, weight, grad, state = [index], [weight], [grad], [state]
        self._update_count(index)
        kwargs = self._common_kwargs()
        for w, g, s, lr, wd in zip(weight, grad, state, self._get_lrs(index), self._get_wds(index), strict=True):
            if s is not None:
                nd.nag_mom_update(w, g, s, out=w, lr=lr, wd=wd, momentum=self.momentum, **kwargs)
            else:
                nd.sgd_update(w, g, out=w, lr=lr, wd=wd, **kwargs)
