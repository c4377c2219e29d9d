"""Random ops: Dropout and LeakyReLU's rrelu, drawing from a passed-in generator.

``rng`` is anything with ``random(shape)`` returning uniforms in [0, 1) (a
``numpy.random.Generator``, ``cupy.random.Generator``, ...); numpy results are
moved to ``xp`` so a host generator still drives a device op reproducibly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._util import Array


def _uniform(xp: Any, rng: Any, shape: tuple[int, ...]) -> Array:
    return xp.asarray(rng.random(shape))


def dropout(
    xp: Any,
    data: Array,
    p: float = 0.5,
    mode: str = "training",
    axes: Sequence[int] = (),
    training: bool = True,
    rng: Any = None,
) -> tuple[Array, Array]:
    """Forward; returns ``(out, mask)`` where ``mask`` is 0 or ``1/(1-p)`` and has data's shape.

    Active when ``training`` or ``mode == 'always'``; otherwise out is data and mask is 1.
    ``axes`` lists axes along which one mask value is shared (variational dropout).

    >>> import numpy as np
    >>> out, mask = dropout(np, np.ones((2, 3)), p=0.5, rng=np.random.default_rng(0))
    >>> sorted(set(mask.ravel().tolist())) in ([0.0, 2.0], [0.0], [2.0])
    True
    """
    active = (training or mode == "always") and p > 0
    if not active:
        return data.copy(), xp.ones(data.shape, dtype=data.dtype)
    if rng is None:
        raise ValueError("Dropout: a random generator (rng) is needed when dropout is active")
    keep = 1.0 - p
    shape = tuple(1 if i in {a % data.ndim for a in axes} else s for i, s in enumerate(data.shape))
    if keep <= 0:
        mask = xp.zeros(shape, dtype=data.dtype)
    else:
        mask = (_uniform(xp, rng, shape) < keep).astype(data.dtype) * data.dtype.type(1.0 / keep)
    mask = xp.broadcast_to(mask, data.shape)
    return data * mask, mask


def dropout_backward(xp: Any, out_grad: Array, mask: Array) -> Array:
    """Gradient w.r.t. ``data``: ``out_grad * mask``."""
    return out_grad * mask


def rrelu(
    xp: Any,
    data: Array,
    lower_bound: float = 0.125,
    upper_bound: float = 0.334,
    training: bool = True,
    rng: Any = None,
) -> tuple[Array, Array]:
    """LeakyReLU ``act_type='rrelu'``: returns ``(out, mask)``; mask is the negative-side slope.

    Training draws a slope per element from U(lower, upper); inference uses their mean.
    """
    if training:
        if rng is None:
            raise ValueError("LeakyReLU(rrelu): a random generator (rng) is needed in training")
        u = _uniform(xp, rng, data.shape).astype(data.dtype)
        slope = u * (upper_bound - lower_bound) + lower_bound
    else:
        slope = xp.full(data.shape, (lower_bound + upper_bound) / 2.0, dtype=data.dtype)
    return xp.where(data > 0, data, data * slope), slope


def rrelu_backward(xp: Any, out_grad: Array, data: Array, mask: Array) -> Array:
    """Gradient w.r.t. ``data`` given the forward's slope ``mask``."""
    return xp.where(data > 0, out_grad, out_grad * mask)
