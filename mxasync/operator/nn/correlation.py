"""``Correlation``: the correlation layer of FlowNet (MXNet's correlation.cc), comparing two feature maps.

For each position of ``data1`` (every ``stride1``-th, inside a border of ``max_displacement``
plus the kernel radius, after ``pad_size`` zeros on each side) and each offset ``(dy, dx)`` of
the grid ``-max_displacement..max_displacement`` in steps of ``stride2``, the
``kernel_size`` x ``kernel_size`` patch at that position of ``data1`` is compared with the
patch of ``data2`` moved by the offset: their dot product (``is_multiply``) or the sum of
absolute differences, over the patch and all channels, divided by ``kernel_size**2 * C``.
Output channel ``(dy_index * grid + dx_index)`` holds offset ``(dy, dx)``; the output is
``(N, grid**2, ceil((H + 2 pad - 2 border) / stride1), ceil((W + 2 pad - 2 border) / stride1))``.
As in MXNet the patch starts (top-left) at the position, and the gradient of ``|a - b|``
takes ``a >= b`` as positive.

>>> import mxasync as mx
>>> mx.nd.Correlation(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((1, 2, 5, 5)), max_displacement=1).shape
(1, 9, 3, 3)
"""

from __future__ import annotations

import math

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["CorrelationParam"]


class CorrelationParam(OpParam):
    kernel_size: int = Field(1, ge=1, description="the edge of the square patches compared (odd)")
    max_displacement: int = Field(1, ge=0, description="the largest offset of data2's patch, in pixels")
    stride1: int = Field(1, ge=1, description="the step between compared positions of data1")
    stride2: int = Field(1, ge=1, description="the step between compared offsets in data2")
    pad_size: int = Field(0, ge=0, description="the zeros added on each side of both inputs")
    is_multiply: bool = Field(True, description="compare by dot product (False: by the sum of absolute differences)")


def _geometry(p, h, w):
    """(top_height, top_width, grid radius, grid width) of inputs of spatial size (h, w)."""
    border = p.max_displacement + (p.kernel_size - 1) // 2
    hp, wp = h + 2 * p.pad_size, w + 2 * p.pad_size
    th = math.ceil((hp - 2 * border) / p.stride1)
    tw = math.ceil((wp - 2 * border) / p.stride1)
    radius = p.max_displacement // p.stride2
    return th, tw, radius, 2 * radius + 1


class _CorrelationProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        p = self.params
        if p.kernel_size % 2 == 0:
            raise self.error(f"kernel_size={p.kernel_size}; it must be odd (the patch is centred)")
        known = [tuple(s) for s in in_shapes if s is not None]
        if not known:
            return list(in_shapes), [None], []
        s = known[0]
        if len(s) != 4:
            raise self.error(f"data1 has shape {s}; it must be (N, C, H, W)")
        if len(known) == 2 and known[0] != known[1]:
            raise self.error(f"data1 {known[0]} and data2 {known[1]} must have one shape")
        th, tw, _, grid = _geometry(p, s[2], s[3])
        if th < 1 or tw < 1:
            raise self.error(f"inputs of {s[2]}x{s[3]} padded by {p.pad_size} are too small for "
                             f"max_displacement={p.max_displacement} and kernel_size={p.kernel_size}")
        return [s, s], [(s[0], grid * grid, th, tw)], []


def _windows(p, th, tw):
    """Yield (channel, slice into data1, slice into data2) for each offset and each patch cell."""
    s1, md, k = p.stride1, p.max_displacement, p.kernel_size
    _, _, radius, grid = _geometry(p, 0, 0)
    for ch in range(grid * grid):
        dy = (ch // grid - radius) * p.stride2
        dx = (ch % grid - radius) * p.stride2
        for h in range(k):
            for w in range(k):
                y, x = md + h, md + w
                a = (slice(None), slice(None), slice(y, y + s1 * (th - 1) + 1, s1), slice(x, x + s1 * (tw - 1) + 1, s1))
                b = (slice(None), slice(None), slice(y + dy, y + dy + s1 * (th - 1) + 1, s1),
                     slice(x + dx, x + dx + s1 * (tw - 1) + 1, s1))
                yield ch, a, b


def _pad(xp, x, pad):
    return xp.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x


def _forward(xp, p, data1, data2):
    n, c, h, w = data1.shape
    th, tw, _, grid = _geometry(p, h, w)
    x1, x2 = _pad(xp, data1, p.pad_size), _pad(xp, data2, p.pad_size)
    out = xp.zeros((n, grid * grid, th, tw), dtype=data1.dtype)
    for ch, a, b in _windows(p, th, tw):
        pa, pb = x1[a], x2[b]
        out[:, ch] += (pa * pb).sum(axis=1) if p.is_multiply else xp.abs(pa - pb).sum(axis=1)
    out /= p.kernel_size * p.kernel_size * c
    return out


def _backward(xp, p, og, ins, outs):
    data1, data2 = ins
    n, c, h, w = data1.shape
    th, tw, _, _ = _geometry(p, h, w)
    x1, x2 = _pad(xp, data1, p.pad_size), _pad(xp, data2, p.pad_size)
    g1, g2 = xp.zeros_like(x1), xp.zeros_like(x2)
    top = og[0] / (p.kernel_size * p.kernel_size * c)
    for ch, a, b in _windows(p, th, tw):
        g = top[:, ch][:, None]
        if p.is_multiply:
            g1[a] += g * x2[b]
            g2[b] += g * x1[a]
        else:
            sg = xp.where(x1[a] >= x2[b], g, -g)
            g1[a] += sg
            g2[b] -= sg
    crop = (slice(None), slice(None), slice(p.pad_size, p.pad_size + h), slice(p.pad_size, p.pad_size + w))
    return [g1[crop], g2[crop]]


defop("Correlation", param=CorrelationParam, base=_CorrelationProperty, arguments=("data1", "data2"),
      fwd=_forward, bwd=_backward, deps="og,in",
      doc="FlowNet's correlation of two feature maps (N, C, H, W): for each position of data1 and each offset "
          "within max_displacement, the mean product (or absolute difference) of the patches of data1 and of "
          "data2 moved by the offset; output (N, grid**2, top_height, top_width).")
