"""Optimizer update kernels with MXNet 1.9's names and exact formulas; all update in place.

``clip_gradient < 0`` (MXNet's -1 default) or ``None`` means no clipping. Where MXNet
clips ``rescale_grad * grad`` (sgd, sgd_mom, nag) weight decay is applied outside the
clip; adam and rmsprop add ``wd * weight`` before clipping, as MXNet does.
``lazy_update`` only matters for sparse gradients and is accepted and ignored.
Bias correction for Adam is the optimizer's job (it folds it into ``lr``), as in MXNet.
"""

from __future__ import annotations

from typing import Any

from ._util import Array


def _clip(xp: Any, g: Array, clip: float | None) -> Array:
    if clip is not None and clip >= 0:
        xp.clip(g, -clip, clip, out=g)
    return g


def _average_into(state: Array, decay: float, value: Array) -> None:
    """``state = decay * state + (1 - decay) * value`` in place (the optimizers' moving averages)."""
    state *= decay
    state += (1.0 - decay) * value


def _grad(xp: Any, grad: Array, rescale_grad: float, clip: float | None, wd: float = 0.0, weight: Array = None):
    g = grad * rescale_grad
    if wd and weight is not None:
        g += wd * weight
    return _clip(xp, g, clip)


def sgd_update(
    xp: Any,
    weight: Array,
    grad: Array,
    lr: float,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
    lazy_update: bool = True,
) -> None:
    """``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``.

    >>> import numpy as np
    >>> w = np.ones(2); sgd_update(np, w, np.array([1., -3.]), lr=0.1, clip_gradient=2.0); w
    array([0.9, 1.2])
    """
    g = _grad(xp, grad, rescale_grad, clip_gradient)
    if wd:
        weight *= 1.0 - lr * wd
    weight -= lr * g


def sgd_mom_update(
    xp: Any,
    weight: Array,
    grad: Array,
    mom: Array,
    lr: float,
    momentum: float = 0.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
    lazy_update: bool = True,
) -> None:
    """``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``; ``weight += mom``."""
    g = _grad(xp, grad, rescale_grad, clip_gradient)
    mom *= momentum
    if wd:
        mom -= (lr * wd) * weight
    mom -= lr * g
    weight += mom


def nag_mom_update(
    xp: Any,
    weight: Array,
    grad: Array,
    mom: Array,
    lr: float,
    momentum: float = 0.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
) -> None:
    """MXNet's NAG, run in place as MXNet's optimizer runs it (``out=weight``).

    ``G = lr*(clip(rescale*grad) + wd*w)``; ``w += momentum*(momentum*mom - G) - G``;
    then ``mom = momentum*mom - lr*(clip(rescale*grad) + wd*w_new)``: MXNet's kernel
    reads the already-updated weight for the wd term of ``mom``, and so do we.
    """
    g = _grad(xp, grad, rescale_grad, clip_gradient)
    step = g + wd * weight if wd else g.copy()
    step *= lr
    mom *= momentum
    weight += momentum * (mom - step) - step
    g *= lr
    mom -= g
    if wd:
        mom -= (lr * wd) * weight


def adam_update(
    xp: Any,
    weight: Array,
    grad: Array,
    mean: Array,
    var: Array,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float = 1e-8,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
    lazy_update: bool = True,
) -> None:
    """``g = clip(rescale*grad + wd*w)``; moments updated; ``w -= lr * mean / (sqrt(var) + epsilon)``."""
    g = _grad(xp, grad, rescale_grad, clip_gradient, wd, weight)
    _average_into(mean, beta1, g)
    _average_into(var, beta2, g * g)
    weight -= lr * mean / (xp.sqrt(var) + epsilon)


def rmsprop_update(
    xp: Any,
    weight: Array,
    grad: Array,
    n: Array,
    lr: float,
    gamma1: float = 0.95,
    epsilon: float = 1e-8,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
    clip_weights: float | None = -1.0,
) -> None:
    """Tieleman & Hinton: ``n = (1-gamma1)*g^2 + gamma1*n``; ``w -= lr * g / sqrt(n + epsilon)``."""
    g = _grad(xp, grad, rescale_grad, clip_gradient, wd, weight)
    _average_into(n, gamma1, g * g)
    weight -= lr * g / xp.sqrt(n + epsilon)
    _clip(xp, weight, clip_weights)


def rmspropalex_update(
    xp: Any,
    weight: Array,
    grad: Array,
    n: Array,
    g: Array,
    delta: Array,
    lr: float,
    gamma1: float = 0.95,
    gamma2: float = 0.9,
    epsilon: float = 1e-8,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
    clip_weights: float | None = -1.0,
) -> None:
    """Graves' centred RMSProp: ``delta = gamma2*delta - lr*grad/sqrt(n - g^2 + epsilon)``; ``w += delta``."""
    gr = _grad(xp, grad, rescale_grad, clip_gradient, wd, weight)
    _average_into(n, gamma1, gr * gr)
    _average_into(g, gamma1, gr)
    delta *= gamma2
    delta -= lr * gr / xp.sqrt(n - g * g + epsilon)
    weight += delta
    _clip(xp, weight, clip_weights)


def adagrad_update(
    xp: Any,
    weight: Array,
    grad: Array,
    history: Array,
    lr: float,
    epsilon: float = 1e-7,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
) -> None:
    """``g = clip(rescale*grad)``; ``history += g^2``; ``w -= lr * (g / sqrt(history + epsilon) + wd*w)``.

    MXNet's AdaGrad optimizer and its ``_sparse_adagrad_update`` agree on this.
    """
    g = _grad(xp, grad, rescale_grad, clip_gradient)
    history += g * g
    step = g / xp.sqrt(history + epsilon)
    if wd:
        step += wd * weight
    weight -= lr * step
