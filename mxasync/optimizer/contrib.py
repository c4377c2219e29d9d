"""``mx.optimizer.contrib``: GroupAdaGrad, AdaGrad with one history value per row of a 2-D weight.

``history += mean(g**2, axis=1)``; ``w -= lr * g / sqrt(history + eps)`` with
``g = clip(rescale_grad * grad)``, as one ``_contrib_group_adagrad_update`` engine op; a
row_sparse gradient updates only its rows (the lazy update).  Weight decay is not supported,
as in MXNet.  The history is dense even for a row_sparse weight (MXNet gives it the weight's
storage type; mxasync keeps optimizer states dense).

>>> import mxasync as mx
>>> opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=1.0, eps=0.0)
>>> w = mx.nd.zeros((2, 2))
>>> opt.update(0, w, mx.nd.array([[3.0, 4.0], [0.0, 0.0]]), opt.create_state(0, w)); w.asnumpy().round(4)
array([[-0.8485, -1.1314],
       [ 0.    ,  0.    ]], dtype=float32)
"""

from __future__ import annotations

from .. import ndarray as nd
from ..base import MXAsyncError
from ..ndarray import NDArray
from .optimizer import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with row-wise learning rates (MXNet's ``mx.optimizer.contrib.GroupAdaGrad``)."""

    def __init__(self, eps: float = 1e-5, **kwargs) -> None:
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight: NDArray):
        if len(weight.shape) != 2:
            raise MXAsyncError(f"GroupAdaGrad: weight {index!r} must be 2-D (rows, columns), got shape {weight.shape}")
        return nd.zeros((weight.shape[0], 1), weight.context, dtype=weight.dtype)  # history

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise AssertionError("Weight decay is not supported for GroupAdaGrad")
        kwargs = {"epsilon": self.float_stable_eps, "rescale_grad": self.rescale_grad}
        # MXNet clips a row_sparse gradient when clip_gradient is truthy and a dense one when it is set
        if (self.clip_gradient if grad.stype == "row_sparse" else self.clip_gradient is not None):
            kwargs["clip_gradient"] = self.clip_gradient
        nd.contrib.group_adagrad_update(weight, grad, state, out=weight, lr=lr, **kwargs)
