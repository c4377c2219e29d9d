"""Optimizer update kernels with MXNet 1.9's names and exact formulas; all update in place.

``clip_gradient < 0`` (MXNet's -1 default) or ``None`` means no clipping. Where MXNet
clips ``rescale_grad * grad`` (sgd, sgd_mom, nag) weight decay is applied outside the
clip; adam and rmsprop add ``wd * weight`` before clipping, as MXNet does.
``lazy_update`` only matters for sparse gradients and is accepted and ignored.
Bias correction for Adam is the optimizer's job (it folds it into ``lr``), as in MXNet.
Each kernel is a per-block ``update`` run by its runner's ``blocked`` (one call by default; the numpy
backend's runs it over cache-sized blocks), writing its temporaries into scratch blocks instead of
new arrays.
"""

from __future__ import annotations

from typing import Any

from ._runner import PLAIN
from ._util import Array


def _bound(clip: float | None) -> float | None:
    """The clipping bound, or None when clipping is off (MXNet's ``clip_gradient < 0``)."""
    return clip if clip is not None and clip >= 0 else None


def _clip(xp: Any, g: Array, clip: float | None) -> None:
    if clip is not None:
        xp.clip(g, -clip, clip, out=g)


def _mul_into(xp: Any, grad: Array, factor: float, out: Array) -> None:
    """``out = grad * factor``; a gradient of lower precision (float16 of a float32 master weight) is cast
    first, as MXNet's mixed-precision kernels do."""
    if grad.dtype is out.dtype:  # `is` is cheap; equal dtypes that are distinct objects cast to the same bits
        xp.multiply(grad, factor, out=out)
    else:
        out[...] = grad
        out *= factor


def _grad_into(xp: Any, grad: Array, rescale: float, clip: float | None, out: Array,
               wd: float = 0.0, weight: Array = None, tmp: Array = None) -> None:
    """``out = clip(rescale * grad [+ wd * weight])`` (``tmp``: scratch for the wd term)."""
    _mul_into(xp, grad, rescale, out)
    if wd:
        xp.multiply(weight, wd, out=tmp)
        out += tmp
    _clip(xp, out, clip)


def _step_into(xp: Any, grad: Array, lr: float, rescale: float, clip: float | None, out: Array) -> None:
    """``out = lr * clip(rescale * grad)``; unclipped ``(lr * rescale) * grad``, one pass, as MXNet's kernels."""
    if clip is None:
        _mul_into(xp, grad, lr * rescale, out)
    else:
        _mul_into(xp, grad, rescale, out)
        _clip(xp, out, clip)
        out *= lr


def _average_into(xp: Any, state: Array, decay: float, value: Array, tmp: Array, square: bool = False) -> None:
    """``state = decay * state + (1 - decay) * value`` (``* value`` again when ``square``, MXNet's order)."""
    state *= decay
    xp.multiply(value, 1.0 - decay, out=tmp)
    if square:
        tmp *= value
    state += tmp


def sgd_update(
    xp: Any,
    weight: Array,
    grad: Array,
    lr: float,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float | None = -1.0,
    lazy_update: bool = True,
    run=PLAIN,
) -> None:
    """``weight = (1 - lr*wd) * weight - lr * clip(rescale_grad * grad)``.

    >>> import numpy as np
    >>> w = np.ones(2); sgd_update(np, w, np.array([1., -3.]), lr=0.1, clip_gradient=2.0); w
    array([0.9, 1.2])
    """
    clip = _bound(clip_gradient)

    def update(w, g, step):
        _step_into(xp, g, lr, rescale_grad, clip, step)
        if wd:
            w *= 1.0 - lr * wd
        w -= step

    run.blocked(xp, update, weight, grad, scratch=1, passes=4)


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
    run=PLAIN,
) -> None:
    """``mom = momentum*mom - lr*wd*weight - lr*clip(rescale_grad*grad)``; ``weight += mom``."""
    clip = _bound(clip_gradient)

    def update(w, g, m, tmp):
        m *= momentum
        if wd:
            xp.multiply(w, lr * wd, out=tmp)
            m -= tmp
        _step_into(xp, g, lr, rescale_grad, clip, tmp)
        m -= tmp
        w += m

    run.blocked(xp, update, weight, grad, mom, scratch=1, passes=6)


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
    run=PLAIN,
) -> None:
    """MXNet's NAG, run in place as MXNet's optimizer runs it (``out=weight``).

    ``G = lr*(clip(rescale*grad) + wd*w)``; ``w += momentum*(momentum*mom - G) - G``;
    then ``mom = momentum*mom - lr*(clip(rescale*grad) + wd*w_new)``: MXNet's kernel
    reads the already-updated weight for the wd term of ``mom``, and so do we.
    """
    clip = _bound(clip_gradient)

    def update(w, gr, m, g, step, tmp):
        _grad_into(xp, gr, rescale_grad, clip, g)
        if wd:
            xp.multiply(w, wd, out=step)
            step += g
        else:
            step[...] = g
        step *= lr
        m *= momentum
        xp.subtract(m, step, out=tmp)
        tmp *= momentum
        tmp -= step
        w += tmp
        g *= lr
        m -= g
        if wd:
            xp.multiply(w, lr * wd, out=tmp)
            m -= tmp

    run.blocked(xp, update, weight, grad, mom, scratch=3, passes=12)


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
    run=PLAIN,
) -> None:
    """``g = clip(rescale*grad + wd*w)``; moments updated; ``w -= lr * mean / (sqrt(var) + epsilon)``."""
    clip = _bound(clip_gradient)

    def update(w, gr, m, v, g, tmp):
        _grad_into(xp, gr, rescale_grad, clip, g, wd, w, tmp)
        _average_into(xp, m, beta1, g, tmp)
        _average_into(xp, v, beta2, g, tmp, square=True)
        xp.sqrt(v, out=tmp)
        tmp += epsilon
        xp.multiply(m, lr, out=g)
        g /= tmp
        w -= g

    run.blocked(xp, update, weight, grad, mean, var, scratch=2, passes=12)


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
    run=PLAIN,
) -> None:
    """Tieleman & Hinton: ``n = (1-gamma1)*g^2 + gamma1*n``; ``w -= lr * g / sqrt(n + epsilon)``."""
    clip, clip_w = _bound(clip_gradient), _bound(clip_weights)

    def update(w, gr, n, g, tmp):
        _grad_into(xp, gr, rescale_grad, clip, g, wd, w, tmp)
        _average_into(xp, n, gamma1, g, tmp, square=True)
        xp.add(n, epsilon, out=tmp)
        xp.sqrt(tmp, out=tmp)
        g *= lr
        g /= tmp
        w -= g
        _clip(xp, w, clip_w)

    run.blocked(xp, update, weight, grad, n, scratch=2, passes=10)


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
    run=PLAIN,
) -> None:
    """Graves' centred RMSProp: ``delta = gamma2*delta - lr*grad/sqrt(n - g^2 + epsilon)``; ``w += delta``."""
    clip, clip_w = _bound(clip_gradient), _bound(clip_weights)

    def update(w, grad, n, g, delta, gr, tmp):
        _grad_into(xp, grad, rescale_grad, clip, gr, wd, w, tmp)
        _average_into(xp, n, gamma1, gr, tmp, square=True)
        _average_into(xp, g, gamma1, gr, tmp)
        delta *= gamma2
        xp.multiply(g, g, out=tmp)
        xp.subtract(n, tmp, out=tmp)
        tmp += epsilon
        xp.sqrt(tmp, out=tmp)
        gr *= lr
        gr /= tmp
        delta -= gr
        w += delta
        _clip(xp, w, clip_w)

    run.blocked(xp, update, weight, grad, n, g, delta, scratch=2, passes=16)


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
    run=PLAIN,
) -> None:
    """``g = clip(rescale*grad)``; ``history += g^2``; ``w -= lr * (g / sqrt(history + epsilon) + wd*w)``.

    MXNet's AdaGrad optimizer and its ``_sparse_adagrad_update`` agree on this.
    """
    clip = _bound(clip_gradient)

    def update(w, gr, h, g, tmp):
        _grad_into(xp, gr, rescale_grad, clip, g)
        xp.multiply(g, g, out=tmp)
        h += tmp
        xp.add(h, epsilon, out=tmp)
        xp.sqrt(tmp, out=tmp)
        g /= tmp
        if wd:
            xp.multiply(w, wd, out=tmp)
            g += tmp
        g *= lr
        w -= g

    run.blocked(xp, update, weight, grad, history, scratch=2, passes=10)
