"""Python-level functions of MXNet's ``mx.sym.contrib``: rand_zipfian (log-uniform candidate sampling)."""

from __future__ import annotations

import math

from . import random
from .register import make_function
from .symbol import Symbol

__all__ = ["rand_zipfian", "adamw_update", "mp_adamw_update"]


def rand_zipfian(true_classes: Symbol, num_sampled: int, range_max: int):
    """Symbols ``(sampled_classes, expected_count_true, expected_count_sampled)``: ``num_sampled`` draws
    from ``P(k) = (log(k + 2) - log(k + 1)) / log(range_max + 1)`` on ``[0, range_max)`` and the
    expected counts ``P(k) * num_sampled`` (as :func:`mxasync.ndarray.contrib.rand_zipfian`)."""
    log_range = math.log(range_max + 1)
    u = random.uniform(0, log_range, shape=(num_sampled,), dtype="float64")
    sampled = (u.exp() - 1).astype("int64") % range_max

    def expected(classes: Symbol) -> Symbol:
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled

    return sampled, expected(true_classes), expected(sampled)


def _rescale(rescale_grad) -> Symbol:
    return rescale_grad if isinstance(rescale_grad, Symbol) else make_function("_full")(shape=(1,), value=rescale_grad)


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0,
                 clip_gradient=-1, out=None, name=None, **kwargs):
    """``_adamw_update`` with ``rescale_grad`` a number or a symbol (the update is skipped when NaN, inf or 0)."""
    return make_function("_adamw_update")(weight, grad, mean, var, _rescale(rescale_grad), lr=lr, eta=eta, beta1=beta1,
                                          beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
                                          name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9, beta2=0.999, epsilon=1e-8,
                    wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """``_mp_adamw_update`` with ``rescale_grad`` a number or a symbol."""
    return make_function("_mp_adamw_update")(weight, grad, mean, var, weight32, _rescale(rescale_grad), lr=lr, eta=eta,
                                             beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd,
                                             clip_gradient=clip_gradient, name=name, **kwargs)
