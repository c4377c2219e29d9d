"""FTRL-Proximal (``mx.optimizer.Ftrl``, McMahan et al. 2013) through ``ftrl_update``."""

from __future__ import annotations

from .. import ndarray as nd
from ..ndarray import NDArray
from .optimizer import Optimizer, register, zeros_like_state

__all__ = ["Ftrl"]


@register
class Ftrl(Optimizer):
    """States ``(z, n)``; ``lamda1`` is the L1 strength, ``beta`` the per-coordinate rate offset."""

    def __init__(self, lamda1: float = 0.01, learning_rate: float = 0.1, beta: float = 1, **kwargs) -> None:
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight: NDArray):
        return (zeros_like_state(weight), zeros_like_state(weight))  # z, n

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        z, n = state
        nd.ftrl_update(weight, grad, z, n, out=weight, lr=lr, wd=wd, lamda1=self.lamda1, beta=self.beta,
                       **self._common_kwargs())
