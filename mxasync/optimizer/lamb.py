"""LAMB (``mx.optimizer.LAMB``, You et al. 2019): Adam moments with a layer-wise trust ratio,
through ``lamb_update_phase1`` / ``lamb_update_phase2`` (and the ``mp_`` forms for float16).

Lists of weights (an Updater given lists, as Module and KVStore pass them) go in groups of up to
``aggregate_num`` (``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default 45, at most 45) through the fused
``_multi_lamb_update`` / ``_multi_mp_lamb_update``, as MXNet 1.9.1 does.

With ``multi_precision`` and float16 weights the float32 master weight is updated and then
cast into the weight. One weight at a time, MXNet 1.9.1's ``mp_lamb_update_phase2`` leaves its
master copy unchanged, so there the first step is the same and later ones follow the master
weight here; the fused path updates the master weight in MXNet too, and matches it.
"""

from __future__ import annotations

import os

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, keeps_master, register, zeros_like_state

__all__ = ["LAMB"]


@register
class LAMB(Optimizer):
    """Per weight: phase 1 gives the Adam direction ``g``; phase 2 steps by ``lr * |w| / |g|``."""

    def __init__(self, learning_rate: float = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-6, lower_bound: float | None = None, upper_bound: float | None = None,
                 bias_correction: bool = True, **kwargs) -> None:
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "45"))))

    def create_state(self, index, weight: NDArray):
        return (zeros_like_state(weight), zeros_like_state(weight))  # mean, variance

    def _bounds(self) -> dict:
        kwargs = {}
        if self.lower_bound:
            kwargs["lower_bound"] = self.lower_bound
        if self.upper_bound:
            kwargs["upper_bound"] = self.upper_bound
        return kwargs

    def _step(self, index, weight: NDArray, grad: NDArray, state, multi_precision: bool) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        kwargs = dict(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon, bias_correction=self.bias_correction,
                      rescale_grad=self.rescale_grad, t=self._index_update_count[index])
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if multi_precision:
            master, (mean, var) = state
            g = nd.mp_lamb_update_phase1(weight, grad, mean, var, master, wd=wd, **kwargs)
            nd.lamb_update_phase2(master, g, master.norm(), g.norm(), lr=lr, out=master, **self._bounds())
            master.copyto(weight)  # the copy casts to float16 / bfloat16
            return
        mean, var = state
        g = nd.lamb_update_phase1(weight, grad, mean, var, wd=wd, **kwargs)
        nd.lamb_update_phase2(weight, g, weight.norm(), g.norm(), lr=lr, out=weight, **self._bounds())

    def _fused(self, index, weight, grad, state, multi_precision: bool) -> None:
        """One ``_multi_(mp_)lamb_update`` per group of ``aggregate_num`` weights."""
        kwargs = dict(beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon, bias_correction=self.bias_correction,
                      rescale_grad=self.rescale_grad, **self._bounds())
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        steps, lrs, wds = [], [], []
        for i in index:
            self._update_count(i)
            steps.append(self._index_update_count[i])
            lrs.append(self._get_lr(i))
            wds.append(self._get_wd(i))
        for lo in range(0, len(weight), self.aggregate_num):
            part = slice(lo, lo + self.aggregate_num)
            ws, gs, states = list(weight[part]), list(grad[part]), list(state[part])
            common = dict(out=ws, step_count=steps[part], lrs=lrs[part], wds=wds[part], **kwargs)
            if multi_precision:
                means, vars_ = [s[1][0] for s in states], [s[1][1] for s in states]
                nd.contrib.multi_mp_lamb_update(ws, gs, means, vars_, [s[0] for s in states], **common)
            else:
                nd.contrib.multi_lamb_update(ws, gs, [s[0] for s in states], [s[1] for s in states], **common)

    def _each(self, index, weight, grad, state, multi_precision: bool) -> None:
        if not isinstance(index, (list, tuple)):
            self._step(index, weight, grad, state, multi_precision)
        elif self.aggregate_num > 1:
            self._fused(index, weight, grad, state, multi_precision)
        else:
            for i, w, g, s in zip(index, weight, grad, state, strict=True):
                self._step(i, w, g, s, multi_precision)

    def update(self, index, weight, grad, state) -> None:
        self._each(index, weight, grad, state, False)

    def update_multi_precision(self, index, weight, grad, state) -> None:
        first = weight[0] if isinstance(weight, (list, tuple)) else weight
        self._each(index, weight, grad, state, self.multi_precision and keeps_master(first.dtype))
