"""MXNet 1.9.1's two leftover optimizers: ``ccSGD`` (deprecated; the same as :class:`~.sgd.SGD`) and
``Test`` (``weight += rescale_grad * grad``; its state is a copy of the weight after each step).

>>> import mxasync as mx
>>> opt = mx.optimizer.create("test", rescale_grad=0.5)
>>> w, g = mx.nd.ones((2,)), mx.nd.ones((2,))
>>> state = opt.create_state(0, w)
>>> opt.update(0, w, g, state)
>>> w.asnumpy(), state.asnumpy()
(array([1.5, 1.5], dtype=float32), array([1.5, 1.5], dtype=float32))
"""

from __future__ import annotations

from ..ndarray import NDArray, zeros
from .optimizer import Optimizer, register
from .sgd import SGD

__all__ = ["ccSGD", "Test"]


@register
class ccSGD(SGD):  # noqa: N801 - MXNet's name
    """[DEPRECATED] The same as :class:`SGD`, kept (as MXNet 1.9.1 does) for old code."""


@register
class Test(Optimizer):
    """The Test optimizer: ``weight += rescale_grad * grad``."""

    def create_state(self, index, weight: NDArray) -> NDArray:
        """A state that duplicates the weight after each update (float32, on the weight's context)."""
        return zeros(weight.shape, weight.context)

    def update(self, index, weight: NDArray, grad: NDArray, state: NDArray) -> None:
        weight[:] += grad * self.rescale_grad
        state[:] = weight
