"""FullyConnected (MXNet's): ``out = x @ weight.T + bias`` with weight ``(num_hidden, K)``.

``flatten=True`` reads data as ``(N, prod(rest))``; ``flatten=False`` applies the layer
to the last axis and keeps the leading ones.
"""

from __future__ import annotations

from typing import Any

from ._util import Array


def _as2d(data: Array, flatten: bool) -> Array:
    if flatten:
        return data.reshape(data.shape[0], -1)
    return data.reshape(-1, data.shape[-1])


def fully_connected(
    xp: Any,
    data: Array,
    weight: Array,
    bias: Array | None,
    num_hidden: int | None = None,
    no_bias: bool = False,
    flatten: bool = True,
) -> Array:
    """Forward.

    >>> import numpy as np
    >>> fully_connected(np, np.ones((2, 3)), np.ones((4, 3)), np.arange(4.))
    array([[3., 4., 5., 6.],
           [3., 4., 5., 6.]])
    """
    x2 = _as2d(data, flatten)
    out = x2 @ weight.T
    if not no_bias and bias is not None:
        out += bias
    shape = (data.shape[0], weight.shape[0]) if flatten else data.shape[:-1] + (weight.shape[0],)
    return out.reshape(shape)


def fully_connected_backward(
    xp: Any,
    out_grad: Array,
    data: Array,
    weight: Array,
    num_hidden: int | None = None,
    no_bias: bool = False,
    flatten: bool = True,
    need_data_grad: bool = True,
    need_weight_grad: bool = True,
) -> tuple[Array | None, Array | None, Array | None]:
    """Gradients ``(data_grad, weight_grad, bias_grad)``; parts not needed (or no bias) are ``None``."""
    dy = out_grad.reshape(-1, weight.shape[0])
    dx = (dy @ weight).reshape(data.shape) if need_data_grad else None
    dw = dy.T @ _as2d(data, flatten) if need_weight_grad else None
    db = None if no_bias else dy.sum(axis=0)
    return dx, dw, db
