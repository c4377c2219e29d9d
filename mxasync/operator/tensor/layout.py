"""Layout ops from MXNet 1.x: reverse (flip), SwapAxis (swapaxes), Pad (pad), depth_to_space, space_to_depth.

>>> from mxasync.operator import get_op
>>> get_op("swapaxes").prepare(dim1=0, dim2=2).infer_shape([(2, 3, 4)])[1]
[(4, 3, 2)]
>>> get_op("pad").prepare(mode="edge", pad_width=(0, 0, 0, 0, 1, 2, 2, 1)).infer_shape([(1, 2, 3, 4)])[1]
[(1, 2, 6, 7)]
>>> get_op("depth_to_space").prepare(block_size=2).infer_shape([(1, 8, 2, 3)])[1]
[(1, 2, 4, 6)]
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam, Shape

__all__ = ["ReverseParam", "SwapAxisParam", "PadParam", "BlockParam"]


class _OneInput(FunctionalProperty):
    """One input, one output; ``out_shape(prop, shape)`` checks the params against the input's shape."""

    out_shape = None

    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        return [s], [type(self).out_shape(self, tuple(s))], []


def _axis(prop, name, value, a, shape):
    nd = len(shape)
    b = a + nd if a < 0 else a
    if not 0 <= b < nd:
        raise prop.error(f"{name}={value} is out of range for a {nd}-D input of shape {shape}")
    return b


# -- reverse / flip -------------------------------------------------------------------------------
class ReverseParam(OpParam):
    axis: Shape


def _reverse_shape(prop, s):
    for a in prop.params.axis:
        _axis(prop, "axis", prop.params.axis, a, s)
    return s


def _flip(xp, p, x):
    odd = [False] * x.ndim
    for a in p.axis:  # an axis named twice is reversed twice (MXNet)
        odd[a % x.ndim] = not odd[a % x.ndim]
    return x[tuple(slice(None, None, -1) if f else slice(None) for f in odd)]


defop("reverse", linear_input=True, param=ReverseParam, base=_OneInput, aliases=("flip",), deps="og",
      out_shape=staticmethod(_reverse_shape), fwd=lambda xp, p, x: _flip(xp, p, x).copy(),
      bwd=lambda xp, p, og, ins, outs: [_flip(xp, p, og[0])],
      doc="Reverse the order of the elements along each axis in ``axis`` (an int or a tuple).")


# -- SwapAxis / swapaxes --------------------------------------------------------------------------
class SwapAxisParam(OpParam):
    dim1: int = 0
    dim2: int = 0


def _swap_shape(prop, s):
    p = prop.params
    a = _axis(prop, "dim1", p.dim1, p.dim1, s)
    b = _axis(prop, "dim2", p.dim2, p.dim2, s)
    out = list(s)
    out[a], out[b] = s[b], s[a]
    return tuple(out)


defop("SwapAxis", linear_input=True, param=SwapAxisParam, base=_OneInput, aliases=("swapaxes",), deps="og",
      out_shape=staticmethod(_swap_shape), fwd=lambda xp, p, x: xp.swapaxes(x, p.dim1, p.dim2),
      bwd=lambda xp, p, og, ins, outs: [xp.swapaxes(og[0], p.dim1, p.dim2)],
      doc="Interchange axes ``dim1`` and ``dim2`` (negative axes allowed).")


# -- Pad / pad ------------------------------------------------------------------------------------
class PadParam(OpParam):
    mode: Literal["constant", "edge", "reflect"]
    pad_width: Shape
    constant_value: float = 0.0


def _pairs(pw):
    return [(pw[2 * i], pw[2 * i + 1]) for i in range(len(pw) // 2)]


def _pad_shape(prop, s):
    p = prop.params
    if len(s) not in (4, 5):
        raise prop.error(f"data has shape {s}; Pad supports only 4-D and 5-D inputs (as MXNet)")
    if len(p.pad_width) != 2 * len(s):
        raise prop.error(f"pad_width={p.pad_width} has {len(p.pad_width)} values but the {len(s)}-D data of "
                         f"shape {s} needs {2 * len(s)}")
    if any(p.pad_width[:4]):
        raise prop.error(f"pad_width={p.pad_width}: the first two axes (N, C) cannot be padded (as MXNet)")
    if min(p.pad_width) < 0:
        raise prop.error(f"pad_width={p.pad_width}: widths cannot be negative")
    pairs = _pairs(p.pad_width)
    if p.mode == "reflect":
        for i, (d, (b, a)) in enumerate(zip(s, pairs, strict=True)):
            if b >= d or a >= d:
                raise prop.error(f"mode='reflect' needs widths smaller than the input: pad_width={p.pad_width} "
                                 f"pads axis {i} of size {d} of data {s} by ({b}, {a})")
    return tuple(d + b + a for d, (b, a) in zip(s, pairs, strict=True))


def _pad(xp, p, x):
    pairs = _pairs(p.pad_width)
    if p.mode == "constant":
        return xp.pad(x, pairs, mode="constant", constant_values=p.constant_value)
    return xp.pad(x, pairs, mode=p.mode)


def _pad_bwd(xp, p, og, ins, outs):
    g, shape = og[0], ins[0].shape
    pairs = _pairs(p.pad_width)
    if p.mode == "constant":
        return [g[tuple(slice(b, b + d) for d, (b, _) in zip(shape, pairs, strict=True))]]
    for axis, (d, (b, a)) in enumerate(zip(shape, pairs, strict=True)):
        if not (b or a):
            continue
        # where each padded position reads from, as a (d, d + b + a) 0/1 matrix: the gradient sums through it
        src = np.pad(np.arange(d), (b, a), mode=p.mode)
        gather = xp.asarray(src[None, :] == np.arange(d)[:, None], dtype=g.dtype)
        g = xp.moveaxis(xp.tensordot(g, gather, axes=([axis], [1])), -1, axis)
    return [g]


defop("Pad", param=PadParam, base=_OneInput, aliases=("pad",), deps="og,in", out_shape=staticmethod(_pad_shape),
      fwd=_pad, bwd=_pad_bwd,
      doc="Pad the spatial axes of a 4-D or 5-D input: ``pad_width`` is (before_1, after_1, ..., before_N, "
          "after_N) with zeros for N and C; ``mode`` 'constant' (``constant_value``), 'edge' or 'reflect'.")


# -- depth_to_space / space_to_depth --------------------------------------------------------------
class BlockParam(OpParam):
    block_size: int = Field(gt=0)


def _nchw(prop, s):
    if len(s) != 4:
        raise prop.error(f"data has shape {s}; it needs a 4-D (N, C, H, W) input")
    for i, d in enumerate(s):
        if d == 0:  # MXNet refuses a zero (or, in its classic shapes, unknown) size on every axis
            raise prop.error(f"block_size={prop.params.block_size}: dimension {i} of data {s} is 0; "
                             f"every size must be > 0")
    return s


def _d2s_shape(prop, s):
    n, c, h, w = _nchw(prop, s)
    b = prop.params.block_size
    if c % (b * b):
        raise prop.error(f"block_size={b}: the {c} channels of data {s} are not a multiple of block_size^2={b * b}")
    return (n, c // (b * b), h * b, w * b)


def _s2d_shape(prop, s):
    n, c, h, w = _nchw(prop, s)
    b = prop.params.block_size
    if h % b or w % b:
        raise prop.error(f"block_size={b} does not divide the height {h} and width {w} of data {s}")
    return (n, c * b * b, h // b, w // b)


def depth_to_space(xp, b, x):
    """(N, C, H, W) -> (N, C/b^2, H*b, W*b); channel ``(i*b + j)*C/b^2 + c`` goes to pixel offset (i, j).

    >>> import numpy as np
    >>> depth_to_space(np, 2, np.arange(4).reshape(1, 4, 1, 1))[0, 0]
    array([[0, 1],
           [2, 3]])
    """
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def space_to_depth(xp, b, x):
    """The inverse of :func:`depth_to_space`: (N, C, H, W) -> (N, C*b^2, H/b, W/b)."""
    n, c, h, w = x.shape
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return y.reshape(n, c * b * b, h // b, w // b)


defop("depth_to_space", linear_input=True, param=BlockParam, base=_OneInput, deps="og", out_shape=staticmethod(_d2s_shape),
      fwd=lambda xp, p, x: depth_to_space(xp, p.block_size, x),
      bwd=lambda xp, p, og, ins, outs: [space_to_depth(xp, p.block_size, og[0])],
      doc="Move blocks of ``block_size`` x ``block_size`` channels into space: (N, C, H, W) -> "
          "(N, C/block_size^2, H*block_size, W*block_size) (ONNX's DepthToSpace, DCR order).")
defop("space_to_depth", linear_input=True, param=BlockParam, base=_OneInput, deps="og", out_shape=staticmethod(_s2d_shape),
      fwd=lambda xp, p, x: space_to_depth(xp, p.block_size, x),
      bwd=lambda xp, p, og, ins, outs: [depth_to_space(xp, p.block_size, og[0])],
      doc="The inverse of depth_to_space: (N, C, H, W) -> (N, C*block_size^2, H/block_size, W/block_size).")
