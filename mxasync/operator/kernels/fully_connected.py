"""FullyConnected (MXNet's): ``out = x @ weight.T + bias`` with weight ``(num_hidden, K)``.

``flatten=True`` reads data as ``(N, prod(rest))``; ``flatten=False`` applies the layer
to the last axis and keeps the leading ones.
"""

from __future__ import annotations

from typing import Any

from ._runner import PLAIN
from ._util import Array, out_view


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
    out: Array | None = None,
    run=PLAIN,
) -> Array:
    """Forward; computed straight into ``out`` when it fits (see :func:`out_view`), GEMMs by ``run``.

    >>> import numpy as np
    >>> fully_connected(np, np.ones((2, 3)), np.ones((4, 3)), np.arange(4.))
    array([[3., 4., 5., 6.],
           [3., 4., 5., 6.]])
    """
    x2 = _as2d(data, flatten)
    shape = (data.shape[0], weight.shape[0]) if flatten else data.shape[:-1] + (weight.shape[0],)
    o2 = out_view(out, (x2.shape[0], weight.shape[0]), xp.result_type(x2, weight))
    with_bias = not no_bias and bias is not None
    if (run.accumulates and with_bias and o2 is not None and not xp.may_share_memory(o2, x2)
            and not xp.may_share_memory(o2, weight)):
        # bias first, product accumulated onto it: no pass over an output the GEMM's threads just wrote
        o2[...] = bias
        run.matmul(xp, x2, weight.T, out=o2, accumulate=True)
        return out
    if o2 is None:
        o2 = run.matmul(xp, x2, weight.T)
        out = o2.reshape(shape)
    else:
        run.matmul(xp, x2, weight.T, out=o2)
    if with_bias:
        o2 += bias
    return out


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
    need_bias_grad: bool = True,
    into: tuple = (None, None, None),
    run=PLAIN,
) -> tuple[Array | None, Array | None, Array | None]:
    """Gradients ``(data_grad, weight_grad, bias_grad)``; parts not needed (or no bias) are ``None``.

    ``into`` may name arrays to compute each part straight into (see :func:`out_view`).
    """
    dy = out_grad.reshape(-1, weight.shape[0])
    dx = dw = db = None
    if need_data_grad:
        dx = _mm(xp, run, dy, weight, into[0], data.shape)
    if need_weight_grad:
        dw = _mm(xp, run, dy.T, _as2d(data, flatten), into[1], weight.shape)
    if not no_bias and need_bias_grad:
        t = out_view(into[2], (dy.shape[1],), dy.dtype)
        if t is None:
            db = dy.sum(axis=0)
        else:
            dy.sum(axis=0, out=t)
            db = into[2]
    return dx, dw, db


def _mm(xp: Any, run, a: Array, b: Array, into: Array | None, shape: tuple) -> Array:
    """``a @ b`` shaped ``shape``: written into ``into`` (and that returned) when it fits."""
    t = out_view(into, (a.shape[0], b.shape[1]), xp.result_type(a, b))
    if t is None:
        return run.matmul(xp, a, b).reshape(shape)
    run.matmul(xp, a, b, out=t)
    return into
