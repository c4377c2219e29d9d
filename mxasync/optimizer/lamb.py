"""LAMB (``mx.optimizer.LAMB``, You et al. 2019): Adam moments with a layer-wise trust ratio,
through ``lamb_update_phase1`` / ``lamb_update_phase2`` (and the ``mp_`` forms for float16).

With ``multi_precision`` and float16 weights the float32 master weight is updated and then
cast into the weight (MXNet 1.9.1's op leaves its master copy unchanged; the first step is
the same, later ones follow the master weight).
"""

from __future__ import annotations

import numpy as np

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

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
            master.copyto(weight)  # the copy casts to float16
            return
        mean, var = state
        g = nd.lamb_update_phase1(weight, grad, mean, var, wd=wd, **kwargs)
        nd.lamb_update_phase2(weight, g, weight.norm(), g.norm(), lr=lr, out=weight, **self._bounds())

    def _each(self, index, weight, grad, state, multi_precision: bool) -> None:
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state, strict=True):
                self._step(i, w, g, s, multi_precision)
        else:
            self._step(index, weight, grad, state, multi_precision)

    def update(self, index, weight, grad, state) -> None:
        self._each(index, weight, grad, state, False)

    def update_multi_precision(self, index, weight, grad, state) -> None:
        first = weight[0] if isinstance(weight, (list, tuple)) else weight
        self._each(index, weight, grad, state, self.multi_precision and first.dtype == np.float16)
