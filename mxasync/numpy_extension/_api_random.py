"""``mx.npx.random`` samplers, written once against a frontend ``F``."""

from __future__ import annotations

from typing import Any

import numpy as _onp

FUNCS: dict[str, Any] = {}


def _size(size):
    if size is None:
        return None
    return (int(size),) if isinstance(size, (int, _onp.integer)) else tuple(int(s) for s in size)


def bernoulli(F, prob=None, logit=None, size=None, dtype=None, ctx=None, out=None):
    """Samples that are 1 with probability ``prob`` (or ``sigmoid(logit)``), else 0."""
    if (prob is None) == (logit is None):
        raise ValueError("npx.random.bernoulli: give exactly one of prob and logit")
    if logit is not None:
        if F.is_array(logit):
            prob = F.op("_npi_true_divide", [F.op("_npi_add", [F.op("_npi_exp", [F.op("_npi_negative", [logit])])],
                                                  scalar=1.0)], scalar=1.0, reverse=True)
        else:
            prob = float(1 / (1 + _onp.exp(-logit)))
    elif not F.is_array(prob) and not 0.0 <= float(prob) <= 1.0:
        raise ValueError(f"npx.random.bernoulli: prob must be in [0, 1], got {prob}")
    dt = _onp.dtype(dtype or "float32").name
    if F.is_array(prob):
        return F.op("_npi_random_bernoulli", [prob], out=out, size=_size(size), dtype=dt)
    return F.op("_npi_random_bernoulli", [], out=out, ctx=ctx, prob=float(prob), size=_size(size), dtype=dt)


def _batch(batch_shape):
    if batch_shape is None:
        return ()
    return (int(batch_shape),) if isinstance(batch_shape, (int, _onp.integer)) else tuple(batch_shape)


def uniform_n(F, low=0.0, high=1.0, batch_shape=None, dtype=None, ctx=None):
    """Uniform samples of shape ``batch_shape + broadcast(low, high).shape``."""
    return F.op("_npx_random_uniform_n", [F.asarray(low) if not F.is_array(low) else low,
                                          F.asarray(high) if not F.is_array(high) else high],
                batch_shape=_batch(batch_shape))


def normal_n(F, loc=0.0, scale=1.0, batch_shape=None, dtype=None, ctx=None):
    """Normal samples of shape ``batch_shape + broadcast(loc, scale).shape``."""
    return F.op("_npx_random_normal_n", [F.asarray(loc) if not F.is_array(loc) else loc,
                                         F.asarray(scale) if not F.is_array(scale) else scale],
                batch_shape=_batch(batch_shape))


for _f in (bernoulli, uniform_n, normal_n):
    FUNCS[_f.__name__] = _f
