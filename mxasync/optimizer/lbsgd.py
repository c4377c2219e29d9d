"""LBSGD (``mx.optimizer.LBSGD``), large-batch SGD as MXNet 1.9.1 has it: gradients of ``batch_scale``
consecutive updates of a weight are summed, and every ``batch_scale``-th update takes one SGD step
(momentum, weight decay) with their mean at a learning rate scaled by a warm-up multiplier; the updates
between do not move the weight.

The multiplier, for the ``n``-th gradient of the weight (counting from ``begin_epoch *
updates_per_epoch``) and ``W = warmup_epochs * updates_per_epoch`` warm-up updates, grows from 1 to
``batch_scale``: ``linear`` 1 + (s - 1) n / W, ``power2`` 1 + (s - 1) (n / W)^2, ``sqrt``
1 + (s - 1) sqrt(n / W), any other name 1; from ``n >= W`` on it is ``batch_scale``. ``lars`` uses
``sqrt(|w|^2 / (|g|^2 + wd |w|^2 + 1e-18))`` clipped to [0.01, 100] instead (squared norms, as MXNet).

Where MXNet 1.9.1 differs, on purpose: its first summed gradient is the gradient array itself, so a
caller that reuses one gradient array (Module, Trainer) loses that first gradient when the next
backward overwrites it; here it is copied. Its ``multi_precision`` hands the base class a state in the
wrong order; here float16 weights step on a float32 master copy, as SGD's do.

>>> import mxasync as mx
>>> opt = mx.optimizer.LBSGD(learning_rate=0.25, batch_scale=2, warmup_epochs=0)
>>> w = mx.nd.ones((2,))
>>> opt.update(0, w, mx.nd.array([1.0, 3.0]), None); w.asnumpy()       # gathered, not applied
array([1., 1.], dtype=float32)
>>> opt.update(0, w, mx.nd.array([3.0, 5.0]), None); w.asnumpy()       # lr 0.25 * 2, mean gradient (2, 4)
array([ 0., -1.], dtype=float32)
"""

from __future__ import annotations

import logging
import math

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state
from .sgd import _MasterCopyMixin

__all__ = ["LBSGD"]

_log = logging.getLogger(__name__)


@register
class LBSGD(_MasterCopyMixin, Optimizer):
    """SGD over large emulated batches (``batch_scale`` updates summed) with a warm-up of the learning rate."""

    def __init__(self, momentum: float = 0.0, multi_precision: bool = False, warmup_strategy: str = "linear",
                 warmup_epochs: int = 5, batch_scale: int = 1, updates_per_epoch: int = 32, begin_epoch: int = 0,
                 num_epochs: int = 60, **kwargs) -> None:
        super().__init__(multi_precision=multi_precision, **kwargs)
        if int(batch_scale) < 1:
            raise ValueError(f"LBSGD: batch_scale={batch_scale} must be at least 1")
        _log.info("Running Large-Batch SGD Algorithm (batch_scale=%s, warmup_epochs=%s, warmup_strategy=%s, "
                  "updates_per_epoch=%s)", batch_scale, warmup_epochs, warmup_strategy, updates_per_epoch)
        self.momentum = momentum
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = int(batch_scale)
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.cumgrads: dict = {}  # index -> (summed gradient or None, gradients counted so far)

    def create_state(self, index, weight: NDArray):
        return zeros_like_state(weight) if self.momentum != 0.0 else None

    def _warmup_mult(self, nup: int) -> float:
        nwup = self.warmup_epochs * self.updates_per_epoch
        top = float(self.batch_scale)
        if nup >= nwup:
            return top
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == "linear":
            return 1.0 + (top - 1) * nup / nwup
        if self.warmup_strategy == "power2":
            return 1.0 + (top - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == "sqrt":
            return 1.0 + (top - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    @staticmethod
    def _lars_mult(weight: NDArray, grad: NDArray, wd: float) -> float:
        w2 = float((weight * weight).asnumpy().sum())
        g2 = float((grad * grad).asnumpy().sum())
        return min(max(math.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100.0)

    def update(self, index, weight, grad, state) -> None:
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state, strict=True):
                self.update(i, w, g, s)
            return
        lr, wd = self._get_lr(index), self._get_wd(index)
        self._update_count(index)
        summed, count = self.cumgrads.get(index, (None, self.init_updates))
        summed = grad.copy() if summed is None else summed + grad
        count += 1
        if count % self.batch_scale:
            self.cumgrads[index] = (summed, count)
            return  # MXNet runs an sgd_update with lr 0 here: the weight does not move
        self.cumgrads[index] = (None, count)
        g = summed / self.batch_scale if self.batch_scale > 1 else summed
        mult = self._lars_mult(weight, g, wd) if self.warmup_strategy == "lars" else self._warmup_mult(count)
        kwargs = self._common_kwargs()
        if state is not None:
            nd.sgd_mom_update(weight, g, state, out=weight, lr=lr * mult, wd=wd, momentum=self.momentum, **kwargs)
        else:
            nd.sgd_update(weight, g, out=weight, lr=lr * mult, wd=wd, **kwargs)
