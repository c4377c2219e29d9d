"""Pooling (MXNet's ``Pooling``): max / avg / sum / lp over 1-D, 2-D or 3-D windows.

Every reduction walks the kernel offsets (``prod(kernel)`` strided slices of the padded
input), so memory stays at one output-sized accumulator and the code is pure ``xp``; on
numpy a big input is cut by channel into blocks run on the backend's kernel threads.
Max pooling sends the gradient to the first maximum of each window in row-major
order, as MXNet does; avg divides by the window clipped to ``x + pad`` (or to the
real input when ``count_include_pad`` is false).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy

from ._util import Array, Shape, check_layout, crop_spatial, ntuple, pad_spatial, split_rows, window_slices

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


def _windows(kernel: Shape, stride: Shape, osp: Shape) -> list:
    ones = (1,) * len(kernel)
    lead = (slice(None), slice(None))
    return [lead + window_slices(offs, ones, stride, osp) for offs in itertools.product(*(range(k) for k in kernel))]


def _setup(data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout):
    check_layout(layout, "Pooling")
    if pool_type not in _TYPES:
        raise ValueError(f"Pooling: pool_type must be one of {_TYPES}, got {pool_type!r}")
    return _geometry(data, kernel, stride, pad, global_pool, pooling_convention)


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
    """Forward pooling (big inputs split by channel over the numpy backend's kernel threads).

    >>> import numpy as np
    >>> x = np.arange(16.).reshape(1, 1, 4, 4)
    >>> pooling(np, x, (2, 2), stride=(2, 2))[0, 0]
    array([[ 5.,  7.],
           [13., 15.]])
    >>> pooling(np, x, (3, 3), "avg", stride=(2, 2), pooling_convention="full")[0, 0]
    array([[ 5. ,  6.5],
           [11. , 12.5]])
    """
    geo = _setup(data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout)
    n, c = data.shape[:2]
    out = xp.empty((n, c) + geo[4], dtype=data.dtype)
    include = True if count_include_pad is None else bool(count_include_pad)

    def block(b0, b1, c0, c1):
        _forward_block(xp, data[b0:b1, c0:c1], geo, pool_type, p_value or 2, include, out[b0:b1, c0:c1])

    split_rows(xp, block, n, c, data.size)
    return out


def _forward_block(xp, x, geo, pool_type, p, include, out) -> None:
    kernel, stride, before, after, osp = geo
    fill = _fill_value(x.dtype) if pool_type == "max" else 0
    xpad = pad_spatial(xp, x, before, after, fill)
    windows = _windows(kernel, stride, osp)
    if pool_type == "max":
        _pooling_max(xp, xpad, windows, out)
    elif pool_type == "lp":
        out[...] = _lp(xp, xpad, windows, p)
    else:
        out[...] = xpad[windows[0]]
        for w in windows[1:]:
            out += xpad[w]
        if pool_type == "avg":
            out /= _divisor(xp, x.shape[2:], kernel, stride, before, osp, include, x.dtype)


def _pooling_max(xp: Any, xpad: Array, windows: list, out: Array | None = None) -> Array:
    if out is None:
        out = xpad[windows[0]].copy()
    else:
        out[...] = xpad[windows[0]]
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
    """Gradient w.r.t. ``data``; ``out`` (the forward output) serves max and lp and is recomputed if None.

    Big inputs are split by channel over the numpy backend's kernel threads.
    """
    geo = _setup(data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout)
    n, c = data.shape[:2]
    grad = xp.empty(data.shape, dtype=out_grad.dtype)
    include = True if count_include_pad is None else bool(count_include_pad)

    def block(b0, b1, c0, c1):
        o = None if out is None else out[b0:b1, c0:c1]
        _backward_block(xp, out_grad[b0:b1, c0:c1], data[b0:b1, c0:c1], o, geo, pool_type, p_value or 2,
                        include, grad[b0:b1, c0:c1])

    split_rows(xp, block, n, c, data.size)
    return grad


class _PhaseSum:
    """Sums of overlapping window gradients, gathered per stride phase in compact arrays.

    Offset ``a`` of a window at output ``i`` lands on input ``(i + a // s) * s + a % s``: for each
    phase ``a % s`` the gradients add up in an output-sized contiguous array at shift ``a // s``,
    and each phase is written into the input-sized gradient once, instead of every offset doing
    a strided read-modify-write of it (3x3/2 max pooling backward: 9 strided passes become 4).
    """

    def __init__(self, xp, grad, kernel, stride, osp):
        self.xp, self.grad, self.stride, self.osp = xp, grad, stride, osp
        self.lead = (slice(None), slice(None))
        self.bufs: dict = {}

    def add(self, offs, part) -> None:
        phase = tuple(a % s for a, s in zip(offs, self.stride, strict=True))
        buf = self.bufs.get(phase)
        if buf is None:
            view = self.grad[self.lead + tuple(slice(ph, None, s) for ph, s in zip(phase, self.stride, strict=True))]
            buf = self.bufs[phase] = self.xp.zeros(view.shape, dtype=self.grad.dtype)
        shift = tuple(a // s for a, s in zip(offs, self.stride, strict=True))
        buf[self.lead + tuple(slice(h, h + o) for h, o in zip(shift, self.osp, strict=True))] += part

    def flush(self) -> None:
        for phase, buf in self.bufs.items():
            self.grad[self.lead + tuple(slice(ph, None, s) for ph, s in zip(phase, self.stride, strict=True))] = buf


def _backward_block(xp, og, x, out, geo, pool_type, p, include, target) -> None:
    kernel, stride, before, after, osp = geo
    fill = _fill_value(x.dtype) if pool_type == "max" else 0
    xpad = pad_spatial(xp, x, before, after, fill)
    windows = _windows(kernel, stride, osp)
    offsets = list(itertools.product(*(range(k) for k in kernel)))
    # disjoint windows (LeNet's 2x2/2) put each element in at most one window: gradients are written
    # instead of added; when they also tile the input exactly, straight into the target
    disjoint = all(s >= k for s, k in zip(stride, kernel, strict=True))
    exact = disjoint and xpad.shape == x.shape and all(
        o * k == d for o, k, d in zip(osp, kernel, x.shape[2:], strict=True))
    grad = target if exact else xp.zeros(xpad.shape, dtype=og.dtype)
    sums = None if disjoint else _PhaseSum(xp, grad, kernel, stride, osp)
    if pool_type == "max":
        if out is None:
            out = _pooling_max(xp, xpad, windows)
        # each window's gradient goes to its first element equal to the max (row-major); the masks are
        # bytes, cheaper to update than a float "gradient left" would be
        taken = xp.zeros(out.shape, dtype=bool)
        hit = xp.empty(out.shape, dtype=bool)
        part = None if disjoint else xp.empty(out.shape, dtype=og.dtype)
        last = len(windows) - 1
        for i, w in enumerate(windows):
            xp.equal(xpad[w], out, out=hit)
            if i:
                xp.greater(hit, taken, out=hit)  # hit and not taken
            if i < last:
                taken |= hit
            if disjoint:
                xp.multiply(og, hit, out=grad[w])
            else:
                sums.add(offsets[i], xp.multiply(og, hit, out=part))
    elif pool_type in ("avg", "sum"):
        g = og
        if pool_type == "avg":
            g = og / _divisor(xp, x.shape[2:], kernel, stride, before, osp, include, x.dtype)
        for offs, w in zip(offsets, windows, strict=True):
            if disjoint:
                grad[w] = g
            else:
                sums.add(offs, g)
    else:
        if out is None:
            out = _lp(xp, xpad, windows, p)
        for offs, w in zip(offsets, windows, strict=True):
            # d/dx (sum x^p)^(1/p) = (x / out)^(p-1), MXNet's lp_grad
            g = og * (xpad[w] / out) ** (p - 1)
            if disjoint:
                grad[w] = g
            else:
                sums.add(offs, g)
    if sums is not None:
        sums.flush()
    if grad is not target:
        target[...] = crop_spatial(grad, before, x.shape[2:])
