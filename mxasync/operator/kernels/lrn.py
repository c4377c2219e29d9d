"""Local response normalisation across channels (MXNet's ``LRN``, axis 1).

``norm = knorm + alpha/nsize * sum_{|j-c| <= nsize//2} x_j^2`` and ``out = x * norm^-beta``.
The window is clipped at the channel ends; like MXNet, ``alpha`` is divided by
``nsize`` even where the window is clipped (or is ``nsize+1`` wide for even nsize).
"""

from __future__ import annotations

from typing import Any

from ._util import Array, pad_spatial


def _channel_window_sum(xp: Any, a: Array, nsize: int) -> Array:
    """Sum of ``a`` over the channel window of every channel (axis 1), by shifted slices."""
    half = nsize // 2
    c = a.shape[1]
    moved = a.reshape(a.shape[0], c, -1)
    padded = pad_spatial(xp, moved.transpose(0, 2, 1), (half,), (half,)).transpose(0, 2, 1)
    out = padded[:, 0:c].copy()
    for i in range(1, 2 * half + 1):
        out += padded[:, i : i + c]
    return out.reshape(a.shape)


def lrn(
    xp: Any, data: Array, nsize: int, alpha: float = 1e-4, beta: float = 0.75, knorm: float = 2.0
) -> tuple[Array, Array]:
    """Forward; returns ``(out, norm)`` (``norm`` is MXNet's hidden ``tmp_norm`` output).

    >>> import numpy as np
    >>> out, norm = lrn(np, np.ones((1, 3, 1, 1)), nsize=3, alpha=3.0, beta=1.0, knorm=1.0)
    >>> out.ravel(), norm.ravel()
    (array([0.33333333, 0.25      , 0.33333333]), array([3., 4., 3.]))
    """
    norm = _channel_window_sum(xp, data * data, nsize)
    norm *= alpha / nsize
    norm += knorm
    return data * norm ** (-beta), norm


def lrn_backward(
    xp: Any,
    out_grad: Array,
    data: Array,
    nsize: int,
    alpha: float = 1e-4,
    beta: float = 0.75,
    knorm: float = 2.0,
    norm: Array | None = None,
) -> Array:
    """Gradient w.r.t. ``data``; ``norm`` from the forward is recomputed when not given."""
    if norm is None:
        norm = lrn(xp, data, nsize, alpha, beta, knorm)[1]
    scaled = norm ** (-beta)
    # windows are symmetric, so the cross term is the same channel-window sum again
    cross = _channel_window_sum(xp, out_grad * data * scaled / norm, nsize)
    return out_grad * scaled - (2.0 * alpha * beta / nsize) * data * cross
