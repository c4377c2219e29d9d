"""LARS (``mx.optimizer.LARS``; You et al. 2017, layer-wise adaptive rate scaling) as MXNet 1.9.1 has it:
SGD with momentum and weight decay whose learning rate is scaled per weight by

    lr * eta * |w| / (|rescale_grad * g| + wd * |w| + eps)      (when both norms are positive)

except for parameters named ``*gamma``, ``*beta`` or ``*bias``, which keep ``lr``. With
``momentum_correction`` the momentum is scaled by ``lr / previous lr`` when a scheduler changes the
rate; weight decay applies only to names ending in ``_weight``. Each weight then takes
``sgd_update`` / ``sgd_mom_update`` (the ``mp_`` forms' float32 master copy under
``multi_precision``): the same steps as MXNet's fused ``multi_lars`` + ``preloaded_multi_sgd_*`` path.

>>> import mxasync as mx
>>> opt = mx.optimizer.LARS(learning_rate=0.1, eta=0.5, param_idx2name={0: "fc_weight"})
>>> w, g = mx.nd.ones((4,)), mx.nd.ones((4,))
>>> opt.update(0, w, g, opt.create_state(0, w))
>>> w.asnumpy()   # lr * eta * |w| / |g| = 0.05
array([0.95, 0.95, 0.95, 0.95], dtype=float32)
"""

from __future__ import annotations

import os

import numpy as np

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state
from .sgd import _MasterCopyMixin

__all__ = ["LARS"]

_NO_LARS = ("gamma", "beta", "bias")


@register
class LARS(_MasterCopyMixin, Optimizer):
    """SGD (momentum, weight decay) with a per-layer learning rate from the weight and gradient norms."""

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, eta: float = 0.001, eps: float = 0,
                 momentum_correction: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = eta
        self.eps = eps
        self.last_lr: float | None = None
        self.cur_lr: float | None = None

    def _get_lrs(self, indices) -> list[float]:
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self._scheduled_lr() if self.lr_scheduler is not None else self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return [lr * self._mult(i, self.lr_mult, "lr_mult") for i in indices]

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Weight decay only for names ending in ``_weight`` (MXNet's LARS rule), then the symbol's and given mults."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith("_weight")}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def create_state(self, index, weight: NDArray):
        if self.momentum == 0.0:
            return None
        if self.lazy_update and weight.stype != "default":
            return nd.sparse.zeros(weight.stype, weight.shape, weight.context, dtype=weight.dtype)
        return zeros_like_state(weight)

    def _lars_lr(self, index, weight: NDArray, grad: NDArray, lr: float, wd: float) -> float:
        name = self.idx2name.get(index, str(index))
        if name.endswith(_NO_LARS):
            return lr
        w_norm = float(weight.astype(np.float32).norm().asscalar())
        g_norm = float((grad.astype(np.float32) * self.rescale_grad).norm().asscalar())
        if w_norm > 0.0 and g_norm > 0.0:
            return lr * self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        return lr

    def update(self, index, weight, grad, state) -> None:
        if not isinstance(index, (list, tuple)):
            index, weight, grad, state = [index], [weight], [grad], [state]
        self._update_count(index)
        lrs, wds = self._get_lrs(index), self._get_wds(index)
        kwargs = self._common_kwargs()
        if self.momentum > 0:
            correct = self.momentum_correction and self.last_lr != 0
            kwargs["momentum"] = self.momentum * (self.cur_lr / self.last_lr) if correct else self.momentum
        for i, w, g, s, lr, wd in zip(index, weight, grad, state, lrs, wds, strict=True):
            lr = self._lars_lr(i, w, g, lr, wd)
            if s is not None:
                nd.sgd_mom_update(w, g, s, out=w, lr=lr, wd=wd, lazy_update=self.lazy_update, **kwargs)
            else:
                nd.sgd_update(w, g, out=w, lr=lr, wd=wd, lazy_update=self.lazy_update, **kwargs)
