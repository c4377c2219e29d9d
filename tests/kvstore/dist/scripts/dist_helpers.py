"""Shared by the test scripts and the server ranks (which unpickle the optimizer by module path)."""

from __future__ import annotations

from mxasync.optimizer import Optimizer

RATE = 2.0


class TestOptimizer(Optimizer):
    """MXNet's 'test' optimizer: ``weight += rescale_grad * grad``."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        weight[:] = weight + grad * self.rescale_grad
