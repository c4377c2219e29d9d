"""SGD with momentum, weight decay, clipping and float16 multi-precision (``mx.optimizer.SGD``).

* without momentum: ``weight = weight - lr * (clip(rescale_grad * grad) + wd * weight)``
* with momentum: ``mom = momentum * mom - lr * (clip(rescale_grad * grad) + wd * weight)``;
  ``weight += mom``

One weight is one ``sgd_update`` / ``sgd_mom_update`` engine op. Lists of weights
(MXNet's aggregated form, which :class:`~mxasync.optimizer.Updater` uses) are
updated by one fused ``multi_sgd_update`` / ``multi_sgd_mom_update`` op per group
of up to ``aggregate_num`` weights (``MXNET_OPTIMIZER_AGGREGATION_SIZE``,
default 4; 0 or 1 turns fusing off).

>>> import mxasync as mx
>>> opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> mom = opt.create_state(0, w)
>>> opt.update(0, w, g, mom); opt.update(0, w, g, mom); w.asnumpy()
array([0.71, 0.71], dtype=float32)
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, keeps_master, register, zeros_like_state

__all__ = ["SGD"]


class _MasterCopyMixin:
    """MXNet's SGD/NAG keep ``(state, float32 master copy)`` for float16 (here bfloat16 too) weights under
    multi_precision."""

    def create_state_multi_precision(self, index, weight: NDArray):
        if self.multi_precision and keeps_master(weight.dtype):
            master = weight.astype(np.float32)
            return (self.create_state(index, master), master)
        if keeps_master(weight.dtype):
            warnings.warn(f"Accumulating with {np.dtype(weight.dtype).name} in optimizer can lead to poor accuracy or "
                          "slow convergence. "
                          f"Consider using multi_precision=True option of the {type(self).__name__} optimizer",
                          stacklevel=2)
        return self.create_state(index, weight)

    def update_multi_precision(self, index, weight, grad, state) -> None:
        first = weight[0] if isinstance(weight, (list, tuple)) else weight
        if not (self.multi_precision and keeps_master(first.dtype)):
            self.update(index, weight, grad, state)
            return
        if not isinstance(index, (list, tuple)):
            index, weight, grad, state = [index], [weight], [grad], [state]
        masters = [s[1] for s in state]
        # the float32 step runs on the master copies; the cast back is one more engine op per weight
        self.update(list(index), masters, [g.astype(np.float32) for g in grad], [s[0] for s in state])
        for m, w in zip(masters, weight, strict=True):
            m.copyto(w)


@register
class SGD(_MasterCopyMixin, Optimizer):
    """Stochastic gradient descent with optional momentum (MXNet's defaults: momentum 0, lazy_update True)."""

    def __init__(self, momentum: float = 0.0, lazy_update: bool = True, **kwargs) -> None:
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        # how many weights one fused update op takes (MXNet's default 4)
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def create_state(self, index, weight: NDArray):
        return zeros_like_state(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state) -> None:
        """Update one weight, or lists of them with one fused engine op per ``aggregate_num`` weights."""
        if not isinstance(index, (list, tuple)):
            index, weight, grad, state = [index], [weight], [grad], [state]
        self._update_count(index)
        kwargs = self._common_kwargs()
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        lrs, wds = self._get_lrs(index), self._get_wds(index)
        # sparse weights or gradients take their own (lazy) update op, as in MXNet
        size = self.aggregate_num if all(x.stype == "default" for x in (*weight, *grad)) else 1
        for lo, hi in _groups(weight, state, size):
            if hi - lo > 1:
                _fused(weight[lo:hi], grad[lo:hi], state[lo:hi], lrs[lo:hi], wds[lo:hi], kwargs)
                continue
            w, g, s = weight[lo], grad[lo], state[lo]
            if s is not None:
                nd.sgd_mom_update(w, g, s, out=w, lr=lrs[lo], wd=wds[lo], lazy_update=self.lazy_update, **kwargs)
            else:
                nd.sgd_update(w, g, out=w, lr=lrs[lo], wd=wds[lo], lazy_update=self.lazy_update, **kwargs)


def _groups(weights, states, size: int) -> list[tuple[int, int]]:
    """``(start, stop)`` runs of at most ``size`` weights that one fused op can take: same context, and
    either all with a momentum state or none."""
    runs: list[tuple[int, int]] = []
    lo = 0
    for i in range(1, len(weights) + 1):
        if (i == len(weights) or i - lo >= max(size, 1) or weights[i].context != weights[lo].context
                or (states[i] is None) != (states[lo] is None)):
            runs.append((lo, i))
            lo = i
    return runs


def _fused(weights, grads, states, lrs, wds, kwargs) -> None:
    """One ``multi_sgd_[mom_]update`` op for these weights, updating them (and their moms) in place."""
    if states[0] is not None:
        args = [x for w, g, m in zip(weights, grads, states, strict=True) for x in (w, g, m)]
        nd.multi_sgd_mom_update(*args, out=list(weights), num_weights=len(weights), lrs=tuple(lrs), wds=tuple(wds),
                                **kwargs)
    else:
        args = [x for w, g in zip(weights, grads, strict=True) for x in (w, g)]
        kwargs = {k: v for k, v in kwargs.items() if k != "momentum"}
        nd.multi_sgd_update(*args, out=list(weights), num_weights=len(weights), lrs=tuple(lrs), wds=tuple(wds),
                            **kwargs)
