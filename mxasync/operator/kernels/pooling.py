"""Pooling (MXNet's ``Pooling``): max / avg / sum / lp over 1-D, 2-D or 3-D windows.

Every reduction walks the kernel offsets, so memory stays at a few output-sized arrays and
the code is pure ``xp``. With overlapping windows (ResNet's 3x3/2), max, avg and sum first
split the padded input by stride phase (:class:`_PhaseGrid`): each kernel offset then reads
one contiguous run instead of a strided view that moves one element at a time. Disjoint
windows (LeNet's 2x2/2), lp, and windows whose phase planes would dwarf the output (global
pooling) use strided views of the padded input; their max forward goes one axis at a time.
The runner (``run=``) may cut the input into cache-sized blocks and row ranges (the numpy
backend's does, over its kernel threads when big).
Max pooling sends the gradient to the first maximum of each window in row-major
order, as MXNet does; avg divides by the window clipped to ``x + pad`` (or to the
real input when ``count_include_pad`` is false).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

import numpy

from ._runner import PLAIN
from ._util import (
    Array,
    Shape,
    check_layout,
    crop_spatial,
    ntuple,
    out_view,
    pad_spatial,
    prod,
    window_slices,
)

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


def _offsets(kernel: Shape) -> list:
    """Every kernel offset, in row-major order (the order that picks a window's first maximum)."""
    return list(itertools.product(*(range(k) for k in kernel)))


def _windows(kernel: Shape, stride: Shape, osp: Shape) -> list:
    ones = (1,) * len(kernel)
    lead = (slice(None), slice(None))
    return [lead + window_slices(offs, ones, stride, osp) for offs in _offsets(kernel)]


def _setup(data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout):
    check_layout(layout, "Pooling")
    if pool_type not in _TYPES:
        raise ValueError(f"Pooling: pool_type must be one of {_TYPES}, got {pool_type!r}")
    return _geometry(data, kernel, stride, pad, global_pool, pooling_convention)


class _Scratch:
    """Named scratch arrays, kept across the cache blocks of one chunk.

    A block's arrays allocated afresh come back as pages the OS must fault in again (glibc trims
    its heap when the previous block frees them): some 400 faults, half the time of a 3x3/2 max
    backward block. Reused, they stay mapped and in cache.
    """

    def __init__(self, xp: Any):
        self.xp = xp
        self._arrays: dict = {}

    def get(self, name: str, shape: Shape, dtype: Any, fill: Any = None) -> Array:
        """A ``shape`` view of the array called ``name`` (regrown when too small), filled if ``fill`` is given."""
        size = prod(shape)
        buf = self._arrays.get(name)
        if buf is None or buf.size < size or buf.dtype != dtype:
            buf = self._arrays[name] = self.xp.empty(size, dtype=dtype)
        view = buf[:size].reshape(shape)
        if fill is not None:
            view.fill(fill)
        return view


def _by_blocks(xp: Any, run, data: Array, fn) -> None:
    """``fn(b0, b1, c0, c1, scratch)`` over ``run``'s cache blocks of ``data``, split into row ranges by ``run``
    (the numpy backend's runner: over its kernel threads); each range's blocks share one :class:`_Scratch`."""
    n, c = data.shape[:2]
    plane = prod(data.shape[2:])

    def chunk(b0, b1, c0, c1):
        scratch = _Scratch(xp)
        for block in run.cache_blocks(b0, b1, c0, c1, plane):
            fn(*block, scratch)

    run.split_rows(chunk, n, c, data.size)


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
    into: Array | None = None,
    run=PLAIN,
) -> Array:
    """Forward pooling (cut into blocks and row ranges by ``run``), written into ``into`` when it fits
    (see :func:`~._util.out_view`).

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
    out = out_view(into, (n, c) + geo[4], data.dtype)
    if out is None:
        out = xp.empty((n, c) + geo[4], dtype=data.dtype)
    div = _avg_divisor(xp, data, geo, pool_type, count_include_pad)

    def block(b0, b1, c0, c1, scratch):
        o = out[b0:b1, c0:c1]
        _forward_block(scratch, data[b0:b1, c0:c1], geo, pool_type, p_value or 2, o)
        if div is not None:
            o /= div

    _by_blocks(xp, run, data, block)
    return out


def _avg_divisor(xp, data, geo, pool_type, count_include_pad) -> Array | None:
    if pool_type != "avg":
        return None
    kernel, stride, before, _, osp = geo
    include = True if count_include_pad is None else bool(count_include_pad)
    return _divisor(xp, data.shape[2:], kernel, stride, before, osp, include, data.dtype)


def _forward_block(scratch, x, geo, pool_type, p, out) -> None:
    xp = scratch.xp
    kernel, stride, before, after, osp = geo
    fill = _fill_value(x.dtype) if pool_type == "max" else 0
    if _phases_pay(pool_type, x.shape, geo):
        grid = _phase_grid(x.shape, geo)
        out[...] = grid.valid(_reduce_phases(scratch, grid, grid.gather(scratch, x, fill), pool_type))
        if pool_type == "max":
            _lowest_for_nan(xp, out, fill)
    else:
        xpad = pad_spatial(xp, x, before, after, fill)
        windows = _windows(kernel, stride, osp)
        if pool_type == "max":
            _max_by_axes(xp, xpad, kernel, stride, osp, out)
            _lowest_for_nan(xp, out, fill)
        elif pool_type == "lp":
            out[...] = _lp(xp, xpad, windows, p)
        else:
            out[...] = xpad[windows[0]]
            for w in windows[1:]:
                out += xpad[w]


def _lowest_for_nan(xp: Any, out: Array, fill: Any) -> None:
    """A window holding only NaNs gives MXNet's starting value, the lowest finite one (MXNet's max
    starts there and a NaN never compares greater), not NaN."""
    if out.dtype.kind == "f":
        nan = xp.isnan(out)
        if nan.any():
            out[nan] = fill


def _max_by_axes(xp: Any, xpad: Array, kernel: Shape, stride: Shape, osp: Shape, out: Array | None = None) -> Array:
    """Max over every window as a max along each spatial axis in turn (the first first): ``sum(k - 1)``
    passes instead of ``prod(k) - 1``, and the row-axis passes run over whole rows, the column-axis ones
    over long strided runs (LeNet's 2x2/2 forward on one core 0.51 -> 0.35 ms). NaNs are skipped
    (``fmax``), as MXNet's running max never takes one; :func:`_lowest_for_nan` finishes the job."""
    y = xpad
    last = len(kernel) - 1
    for axis, (k, s, o) in enumerate(zip(kernel, stride, osp, strict=True)):
        lead = (slice(None),) * (2 + axis)
        parts = [y[lead + (slice(a, a + s * (o - 1) + 1, s),)] for a in range(k)]
        dest = out if axis == last and out is not None else xp.empty(parts[0].shape, dtype=y.dtype)
        if k == 1:
            dest[...] = parts[0]
        else:
            xp.fmax(parts[0], parts[1], out=dest)
            for part in parts[2:]:
                xp.fmax(dest, part, out=dest)
        y = dest
    return y


def _lp(xp: Any, xpad: Array, windows: list, p: int) -> Array:
    out = xp.zeros(xpad[windows[0]].shape, dtype=xpad.dtype)
    for w in windows:
        out += xpad[w] ** p
    return out if p == 1 else out ** (1.0 / p)


#: Phase planes at most this many times the output's size: beyond (global pooling, a window as big as
#: the input) most of a plane pass would compute windows that get dropped, so strided views win.
MAX_PHASE_GROWTH = 2.0


def _phases_pay(pool_type: str, shape: Shape, geo) -> bool:
    """Whether the phase grid beats strided views: windows must overlap (disjoint ones, LeNet's 2x2/2,
    read each element once either way, and the gather and scatter copies were measured to cost what
    the contiguous passes save) and the planes must not dwarf the output."""
    kernel, stride, before, after, osp = geo
    overlap = any(s < k for s, k in zip(stride, kernel, strict=True))
    if pool_type == "lp" or not overlap or not all(shape) or not all(osp):
        return False
    planes = prod(-(-(x + b + a) // s) for x, b, a, s in zip(shape[2:], before, after, stride, strict=True))
    return planes <= MAX_PHASE_GROWTH * prod(osp)


class _PhaseGrid:
    """The padded input of one block split by stride phase into flat planes, and outputs on the same grid.

    Along an axis with stride ``s``, kernel offset ``a`` reads padded positions ``a, a + s, ...``:
    phase ``a % s`` from index ``a // s`` on. Stored as ``(phases, N*C*prod(P))`` with
    ``P = ceil(padded / s)`` per axis, each offset is one contiguous run of a phase plane at a flat
    shift, where a strided view of the padded input moves one element at a time (measured 2-6x
    slower per pass, worst on small images). Outputs live on the same ``P``-sized grid
    ("extended"): its extra positions are windows that wrap into the next row or plane, dropped by
    :meth:`valid` in the forward and given zero gradient by :meth:`extend` in the backward.

    Pure geometry, shared by every block of a shape (:func:`_phase_grid`); arrays come from a
    :class:`_Scratch`.
    """

    def __init__(self, shape: Shape, geo):
        kernel, stride, before, after, osp = geo
        lead, insp = tuple(shape[:2]), tuple(shape[2:])
        self.psp = tuple(-(-(x + b + a) // s) for x, b, a, s in zip(insp, before, after, stride, strict=True))
        self.phases, self.osp = prod(stride), osp
        self.planes_shape = stride + lead + self.psp
        self.ext_shape = lead + self.psp
        self.size = prod(self.ext_shape)  # one flat plane
        steps = [prod(self.psp[d + 1:]) for d in range(len(self.psp))]
        phase_steps = [prod(stride[d + 1:]) for d in range(len(stride))]
        offsets = _offsets(kernel)

        def locate(offs):
            phase = sum(a % s * step for a, s, step in zip(offs, stride, phase_steps, strict=True))
            return phase, sum(a // s * step for a, s, step in zip(offs, stride, steps, strict=True))

        # the last offset reads furthest: runs of this length stay inside the planes for every offset
        self.length = self.size - locate(offsets[-1])[1]
        #: per offset (row-major): the phase plane and the slice of it the offset reads
        self.runs = [(ph, slice(sh, sh + self.length)) for ph, sh in map(locate, offsets)]
        self.valid_index = (Ellipsis,) + tuple(slice(0, o) for o in osp)
        # no padding and sizes that divide by the strides: the phase copies fill every slot
        self.tiled = not any(before) and all(x == s * p for x, s, p in zip(insp, stride, self.psp, strict=True))
        self.copies = [(phase, *self._phase_slices(phase, insp, before, stride))
                       for phase in itertools.product(*(range(s) for s in stride))]

    @staticmethod
    def _phase_slices(phase, insp, before, stride) -> tuple[tuple, tuple]:
        """(input slices, plane slices) of the input elements that fall in stride phase ``phase``."""
        src, dst = [], []
        for ph, x, b, s in zip(phase, insp, before, stride, strict=True):
            first = (ph - b) % s  # the first input index whose padded index is ``ph`` modulo ``s``
            count = len(range(first, x, s))
            src.append(slice(first, x, s))
            dst.append(slice((first + b) // s, (first + b) // s + count))
        return (Ellipsis,) + tuple(src), (Ellipsis,) + tuple(dst)

    def gather(self, scratch: _Scratch, x: Array, fill) -> Array:
        """``x`` padded with ``fill`` and split into phase planes, ``(phases, size)``: one copy of the input."""
        planes = scratch.get("planes", self.planes_shape, x.dtype, None if self.tiled else fill)
        for phase, src, dst in self.copies:
            planes[phase][dst] = x[src]
        return planes.reshape(self.phases, self.size)

    def scatter(self, sums: Array, target: Array) -> None:
        """Write per-phase gradient sums ``(phases, size)`` into the input-shaped ``target`` (padding dropped)."""
        sums = sums.reshape(self.planes_shape)
        for phase, src, dst in self.copies:
            target[src] = sums[phase][dst]

    def extend(self, scratch: _Scratch, name: str, a: Array) -> Array:
        """An output-shaped array on the extended grid, flat, zero at the extra positions."""
        if self.psp == self.osp:
            return scratch.xp.ascontiguousarray(a).reshape(-1)
        ext = scratch.get(name, self.ext_shape, a.dtype, 0)
        ext[self.valid_index] = a
        return ext.reshape(-1)

    def valid(self, flat: Array) -> Array:
        """The real outputs of a flat extended array (a view)."""
        return flat.reshape(self.ext_shape)[self.valid_index]


@functools.lru_cache(maxsize=64)
def _phase_grid(shape: Shape, geo) -> _PhaseGrid:
    return _PhaseGrid(shape, geo)


def _reduce_phases(scratch: _Scratch, grid: _PhaseGrid, planes: Array, pool_type: str) -> Array:
    """Max or sum over the window of every extended output position, flat (positions past ``length`` unset)."""
    xp = scratch.xp
    acc = scratch.get("reduced", (grid.size,), planes.dtype)
    head = acc[:grid.length]
    (phase, run), *rest = grid.runs
    head[...] = planes[phase, run]
    combine = xp.fmax if pool_type == "max" else xp.add
    for phase, run in rest:
        combine(head, planes[phase, run], out=head)
    return acc


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
    into: Array | None = None,
    run=PLAIN,
) -> Array:
    """Gradient w.r.t. ``data``; ``out`` (the forward output) serves max and lp and is recomputed if None;
    written into ``into`` when it fits (every element is written).

    Big inputs are cut into blocks and row ranges by ``run``.
    """
    geo = _setup(data, kernel, pool_type, global_pool, pooling_convention, stride, pad, layout)
    grad = out_view(into, data.shape, out_grad.dtype)
    if grad is None:
        grad = xp.empty(data.shape, dtype=out_grad.dtype)
    div = _avg_divisor(xp, data, geo, pool_type, count_include_pad)

    def block(b0, b1, c0, c1, scratch):
        o = None if out is None else out[b0:b1, c0:c1]
        og, x, target = out_grad[b0:b1, c0:c1], data[b0:b1, c0:c1], grad[b0:b1, c0:c1]
        if div is not None:
            og = og / div
        if _phases_pay(pool_type, x.shape, geo):
            _backward_phases(scratch, og, x, o, geo, pool_type, target)
        else:
            _backward_block(xp, og, x, o, geo, pool_type, p_value or 2, target)

    _by_blocks(xp, run, data, block)
    return grad


def _backward_phases(scratch, og, x, out, geo, pool_type, target) -> None:
    """Max / avg / sum gradient on the phase grid (``og`` already divided for avg)."""
    xp = scratch.xp
    grid = _phase_grid(x.shape, geo)
    n = grid.length
    sums = scratch.get("sums", (grid.phases, grid.size), og.dtype, 0)
    head = grid.extend(scratch, "head", og)[:n]
    if pool_type == "max":
        planes = grid.gather(scratch, x, _fill_value(x.dtype))
        peak = _reduce_phases(scratch, grid, planes, "max") if out is None else grid.extend(scratch, "peak", out)
        part = scratch.get("part", (n,), og.dtype)
        for (phase, run), hit in zip(grid.runs, _first_maxima(scratch, grid, planes, peak[:n]), strict=True):
            # a multiply by the mask, not a masked add (``where=``): that one slows down 20x on masks
            # that flip often, as max-pooling masks do. Always added onto the zeros, never written:
            # a negative gradient times a False is -0.0, and which runs would be written (not added)
            # depends on the block's layout, so the sign of a zero followed the kernel's cut
            sums[phase, run] += xp.multiply(head, hit, out=part)
    else:
        for phase, run in grid.runs:
            sums[phase, run] += head
    grid.scatter(sums, target)


def _first_maxima(scratch: _Scratch, grid: _PhaseGrid, planes: Array, peak: Array):
    """For each offset in turn, the mask of windows whose FIRST maximum (row-major) sits at that offset.

    The yielded mask is reused: consume it before asking for the next. Windows holding a NaN have
    a NaN peak, which nothing equals: they get no gradient.
    """
    xp = scratch.xp
    taken = scratch.get("taken", (grid.length,), bool, False)
    hit = scratch.get("hit", (grid.length,), bool)
    last = len(grid.runs) - 1
    for i, (phase, run) in enumerate(grid.runs):
        xp.equal(planes[phase, run], peak, out=hit)
        if i:
            xp.greater(hit, taken, out=hit)  # hit and not taken
        if i < last:
            taken |= hit
        yield hit


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


def _backward_block(xp, og, x, out, geo, pool_type, p, target) -> None:
    """The gradient by strided views of the padded input (lp, global pooling; ``og`` already divided for avg)."""
    kernel, stride, before, after, osp = geo
    fill = _fill_value(x.dtype) if pool_type == "max" else 0
    xpad = pad_spatial(xp, x, before, after, fill)
    windows = _windows(kernel, stride, osp)
    offsets = _offsets(kernel)
    # disjoint windows (LeNet's 2x2/2) put each element in at most one window: gradients are written
    # instead of added; when they also tile the input exactly, straight into the target
    disjoint = all(s >= k for s, k in zip(stride, kernel, strict=True))
    exact = disjoint and xpad.shape == x.shape and all(
        o * k == d for o, k, d in zip(osp, kernel, x.shape[2:], strict=True))
    grad = target if exact else xp.zeros(xpad.shape, dtype=og.dtype)
    sums = None if disjoint else _PhaseSum(xp, grad, kernel, stride, osp)
    if pool_type == "max":
        if out is None:
            out = _max_by_axes(xp, xpad, kernel, stride, osp)
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
        for offs, w in zip(offsets, windows, strict=True):
            if disjoint:
                grad[w] = og
            else:
                sums.add(offs, og)
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
