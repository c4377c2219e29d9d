"""Pooling (MXNet's ``Pooling``): max / avg / sum / lp over 1-D, 2-D or 3-D windows.

Every reduction walks the kernel offsets (``prod(kernel)`` strided slices of the padded
input), so memory stays at one output-sized accumulator and the code is pure ``xp``.
Max pooling sends the gradient to the first maximum of each window in row-major
order, as MXNet does; avg divides by the window clipped to ``x + pad`` (or to the
real input when ``count_include_pad`` is false).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy

from ._util import Array, Shape, check_layout, crop_spatial, ntuple, pad_spatial, window_slices

_TYPES = ("max", "avg", "sum", "lp")


def pool_out_size(size: int, kernel: int, stride: int, pad: int, convention: str = "valid") -> int:
    """Output length along one axis for ``pooling_convention`` 'valid', 'full' or 'same'.

    >>> pool_out_size(5, 2, 2, 0, "valid"), pool_out_size(5, 2, 2, 0, "full"), pool_out_size(5, 2, 2, 0, "same")
    (2, 3, 3)
    """
    if convention == "valid":
        return 1 + (size + 2 * pad - kernel) // stride
    if convention == "full":
        return 1 + -(-(size + 2 * pad - kernel) // stride)
    if convention == "same":
        return -(-size // stride)
    raise ValueError(f"Pooling: unknown pooling_convention {convention!r}")


def _geometry(data: Array, kernel, stride, pad, global_pool: bool, convention: str):
    nsp = data.ndim - 2
    insp = data.shape[2:]
    if global_pool:
        kernel, stride, pad = tuple(insp), (1,) * nsp, (0,) * nsp
    else:
        kernel, stride, pad = ntuple(kernel, nsp, 1), ntuple(stride, nsp, 1), ntuple(pad, nsp, 0)
    if convention == "same" and not global_pool:
        # 'same' pads so that ceil(x/stride) windows fit, the extra going after
        osp = tuple(pool_out_size(x, k, s, 0, "same") for x, k, s in zip(insp, kernel, stride, strict=True))
        before = tuple(max(0, (o - 1) * s + k - x) // 2 for o, x, k, s in zip(osp, insp, kernel, stride, strict=True))
    else:
        osp = tuple(pool_out_size(x, k, s, p, convention) for x, k, s, p in zip(insp, kernel, stride, pad, strict=True))
        before = pad
    # 'full' windows may run past x + 2*pad: pad the tail so every window is in bounds
    after = tuple(
        max(p, (o - 1) * s + k - x - p) for o, x, k, s, p in zip(osp, insp, kernel, stride, before, strict=True)
    )
    return kernel, stride, before, after, osp


def _fill_value(dtype: Any) -> Any:
    # the lowest finite value, as MXNet starts its max: a window wholly in the padding gives it
    dt = numpy.dtype(dtype)
    return numpy.finfo(dt).min if dt.kind == "f" else numpy.iinfo(dt).min


def _divisor(xp: Any, insp: Shape, kernel: Shape, stride: Shape, pad: Shape, osp: Shape, include_pad: bool, dtype):
    """Per-window element counts for avg pooling, built axis by axis (MXNet's clipping rules)."""
    div = None
    for axis, (x, k, s, p, o) in enumerate(zip(insp, kernel, stride, pad, osp, strict=True)):
        start = numpy.arange(o) * s - p
        end = numpy.minimum(start + k, x + p)
        if not include_pad:
            start, end = numpy.maximum(start, 0), numpy.minimum(end, x)
        count = numpy.maximum(end - start, 1).astype(dtype)
        count = count.reshape((o,) + (1,) * (len(osp) - axis - 1))
        div = count if div is None else div * count
    return xp.asarray(div)


def _offsets(kernel: Shape):
    return itertools.product(*(range(k) for k in kernel))


def _prepare(xp, data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout=None):
    check_layout(layout, "Pooling")
    if pool_type not in _TYPES:
        raise ValueError(f"Pooling: pool_type must be one of {_TYPES}, got {pool_type!r}")
    kernel, stride, before, after, osp = _geometry(data, kernel, stride, pad, global_pool, pooling_convention)
    fill = _fill_value(data.dtype) if pool_type == "max" else 0
    xpad = pad_spatial(xp, data, before, after, fill)
    ones = (1,) * len(kernel)
    lead = (slice(None), slice(None))
    windows = [lead + window_slices(offs, ones, stride, osp) for offs in _offsets(kernel)]
    return kernel, stride, before, after, osp, xpad, windows


def pooling(
    xp: Any,
    data: Array,
    kernel: Sequence[int] | None = None,
    pool_type: str = "max",
    global_pool: bool = False,
    pooling_convention: str = "valid",
    stride: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
    p_value: int | None = None,
    count_include_pad: bool | None = None,
    layout: str | None = None,
) -> Array:
    """Forward pooling.

    >>> import numpy as np
    >>> x = np.arange(16.).reshape(1, 1, 4, 4)
    >>> pooling(np, x, (2, 2), stride=(2, 2))[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    >>> pooling(np, x, (3, 3), "avg", stride=(2, 2), pooling_convention="full")[0, 0]
    array([[ 5. ,  6.5],
           [11. , 12.5]])
    """
    kernel, stride, before, _, osp, xpad, windows = _prepare(
        xp, data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout
    )
    if pool_type == "max":
        return _pooling_max(xp, xpad, windows)
    if pool_type == "lp":
        return _lp(xp, xpad, windows, p_value or 2)
    out = xp.zeros(data.shape[:2] + osp, dtype=data.dtype)
    for w in windows:
        out += xpad[w]
    if pool_type == "avg":
        include = True if count_include_pad is None else bool(count_include_pad)
        out /= _divisor(xp, data.shape[2:], kernel, stride, before, osp, include, data.dtype)
    return out


def _pooling_max(xp: Any, xpad: Array, windows: list) -> Array:
    out = xpad[windows[0]].copy()
    for w in windows[1:]:
        xp.maximum(out, xpad[w], out=out)
    return out


def _lp(xp: Any, xpad: Array, windows: list, p: int) -> Array:
    out = xp.zeros(xpad[windows[0]].shape, dtype=xpad.dtype)
    for w in windows:
        out += xpad[w] ** p
    return out if p == 1 else out ** (1.0 / p)


def pooling_backward(
    xp: Any,
    out_grad: Array,
    data: Array,
    kernel: Sequence[int] | None = None,
    pool_type: str = "max",
    global_pool: bool = False,
    pooling_convention: str = "valid",
    stride: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
    p_value: int | None = None,
    count_include_pad: bool | None = None,
    layout: str | None = None,
    out: Array | None = None,
) -> Array:
    """Gradient w.r.t. ``data``; ``out`` (the forward output) serves max and lp and is recomputed if None."""
    kernel, stride, before, after, osp, xpad, windows = _prepare(
        xp, data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout
    )
    grad = xp.zeros(xpad.shape, dtype=out_grad.dtype)
    # windows that neither overlap nor pad (LeNet's 2x2/2): each input element is in at most one
    # window, so gradients are written straight into place instead of added
    disjoint = all(s >= k for s, k in zip(stride, kernel, strict=True)) and not any(before) and not any(after)
    if pool_type == "max":
        # each window's gradient goes to its first element equal to the max (row-major)
        if out is None:
            out = _pooling_max(xp, xpad, windows)
        taken = xp.zeros(out.shape, dtype=bool)
        hit = xp.empty(out.shape, dtype=bool)
        part = None if disjoint else xp.empty(out.shape, dtype=out_grad.dtype)
        for w in windows:
            xp.equal(xpad[w], out, out=hit)
            hit &= ~taken
            taken |= hit
            if disjoint:
                xp.multiply(out_grad, hit, out=grad[w])
            else:
                xp.multiply(out_grad, hit, out=part)
                grad[w] += part
    elif pool_type in ("avg", "sum"):
        g = out_grad
        if pool_type == "avg":
            include = True if count_include_pad is None else bool(count_include_pad)
            g = out_grad / _divisor(xp, data.shape[2:], kernel, stride, before, osp, include, data.dtype)
        for w in windows:
            grad[w] += g
    else:
        p = p_value or 2
        if out is None:
            out = _lp(xp, xpad, windows, p)
        for w in windows:
            # d/dx (sum x^p)^(1/p) = (x / out)^(p-1), MXNet's lp_grad
            grad[w] += out_grad * (xpad[w] / out) ** (p - 1)
    if disjoint and grad.shape == data.shape:
        return grad
    return xp.ascontiguousarray(crop_spatial(grad, before, data.shape[2:]))
