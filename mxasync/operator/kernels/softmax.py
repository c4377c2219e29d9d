"""softmax and log_softmax along an axis, with MXNet's ``temperature``.

Backward passes need only the forward output, as in MXNet.
"""

from __future__ import annotations

from typing import Any

from ._runner import PLAIN
from ._util import Array


def _scaled(data: Array, temperature: float | None) -> Array:
    return data if temperature is None or temperature == 1.0 else data / temperature


def softmax(xp: Any, data: Array, axis: int = -1, temperature: float | None = None, dtype: Any = None,
            out: Array | None = None) -> Array:
    """``exp(x/T) / sum(exp(x/T))`` along ``axis``; ``dtype`` casts the result.  ``out`` (floating, of
    ``data``'s shape, no ``dtype``) receives it: one pass less than a copy afterwards.

    >>> import numpy as np
    >>> softmax(np, np.log(np.array([1., 3.])))
    array([0.25, 0.75])
    """
    z = _scaled(data, temperature)
    if z.size == 0:  # a zero-size input (NumPy shapes): nothing to normalise
        return z.astype(dtype or z.dtype)
    if dtype is not None or z.dtype.kind != "f":
        out = None
    e = xp.subtract(z, z.max(axis=axis, keepdims=True), out=out)
    e = xp.exp(e, out=e) if e.dtype.kind == "f" else xp.exp(e)  # in place: no second batch-sized temporary
    e /= e.sum(axis=axis, keepdims=True)
    return e if dtype is None else e.astype(dtype)


def length_mask(xp: Any, data: Array, length: Array, axis: int) -> Array:
    """True where the position along ``axis`` is below that slice's ``length`` (``length`` has
    ``data``'s shape without ``axis``).

    >>> import numpy as np
    >>> length_mask(np, np.zeros((2, 3)), np.array([1, 3]), 1).tolist()
    [[True, False, False], [True, True, True]]
    """
    axis = axis % data.ndim
    pos = xp.arange(data.shape[axis]).reshape((-1,) + (1,) * (data.ndim - axis - 1))
    return pos < xp.expand_dims(length, axis)


def masked_softmax(xp: Any, data: Array, length: Array, axis: int = -1, temperature: float | None = None,
                   dtype: Any = None) -> Array:
    """Softmax over the first ``length`` positions of each slice along ``axis``; 0 beyond them
    (MXNet's ``softmax(..., use_length=True)``; a slice of length 0 is all zeros).

    >>> import numpy as np
    >>> masked_softmax(np, np.zeros((2, 3)), np.array([1, 2]), axis=1).tolist()
    [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]]
    """
    mask = length_mask(xp, data, length, axis)
    z = xp.where(mask, _scaled(data, temperature), -xp.inf)
    top = z.max(axis=axis, keepdims=True)
    e = xp.where(mask, xp.exp(z - xp.where(xp.isfinite(top), top, 0)), 0)
    total = e.sum(axis=axis, keepdims=True)
    e = e / xp.where(total == 0, 1, total)
    return e if dtype is None else e.astype(dtype)


def softmax_backward(xp: Any, out_grad: Array, out: Array, axis: int = -1, temperature: float | None = None) -> Array:
    """Gradient w.r.t. ``data`` from the forward ``out``: ``y * (dy - sum(dy*y)) / T``."""
    dx = out * (out_grad - (out_grad * out).sum(axis=axis, keepdims=True))
    return _scaled(dx, temperature)


def log_softmax(xp: Any, data: Array, axis: int = -1, temperature: float | None = None, dtype: Any = None,
                run=PLAIN) -> Array:
    """``x/T - logsumexp(x/T)`` along ``axis``.  Over the last axis of a C-contiguous float array it runs block
    of rows by block of rows as ``run`` cuts them (the numpy backend's cut keeps each block's passes in cache).

    >>> import numpy as np
    >>> np.exp(log_softmax(np, np.log(np.array([1., 3.]))))
    array([0.25, 0.75])
    """
    z = _scaled(data, temperature)
    if z.size == 0:
        return z.astype(dtype or z.dtype)
    rows = _rows(z, axis)
    if rows is None:
        shifted = z - z.max(axis=axis, keepdims=True)
        out = shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
    else:
        out = xp.empty(z.shape, z.dtype)
        flat = out.reshape(rows.shape)
        run.row_blocks(lambda lo, hi: _log_softmax_rows(xp, rows[lo:hi], flat[lo:hi]), *rows.shape)
    return out if dtype is None else out.astype(dtype)


def _rows(a: Array, axis: int) -> Array | None:
    """``a`` as ``(rows, last axis)`` when ``axis`` is its last, it is C-contiguous and floating; else None."""
    if a.ndim == 0 or axis % a.ndim != a.ndim - 1 or not a.flags.c_contiguous or a.dtype.kind != "f":
        return None
    return a.reshape(-1, a.shape[-1])


def _log_softmax_rows(xp: Any, x: Array, out: Array) -> None:
    xp.subtract(x, x.max(axis=1, keepdims=True), out=out)
    out -= xp.log(xp.exp(out).sum(axis=1, keepdims=True))


def log_softmax_backward(
    xp: Any, out_grad: Array, out: Array, axis: int = -1, temperature: float | None = None, run=PLAIN
) -> Array:
    """Gradient w.r.t. ``data`` from the forward ``out``: ``(dy - exp(y) * sum(dy)) / T`` (by blocks of rows as
    the forward, where it can)."""
    rows_y, rows_g = _rows(out, axis), _rows(out_grad, axis)
    if rows_y is None or rows_g is None or out.dtype != out_grad.dtype:
        return _scaled(out_grad - xp.exp(out) * out_grad.sum(axis=axis, keepdims=True), temperature)
    dx = xp.empty(out_grad.shape, out_grad.dtype)
    flat = dx.reshape(rows_g.shape)

    def block(lo: int, hi: int) -> None:
        e = xp.exp(rows_y[lo:hi])
        e *= rows_g[lo:hi].sum(axis=1, keepdims=True)  # in place over exp(y): no product temporary
        xp.subtract(rows_g[lo:hi], e, out=flat[lo:hi])

    run.row_blocks(block, *rows_g.shape)
    return _scaled(dx, temperature)
