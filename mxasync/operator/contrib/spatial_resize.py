"""``AdaptiveAvgPooling2D`` and ``BilinearResize2D`` (MXNet's contrib/adaptive_avg_pooling and
contrib/bilinear_resize): both resize the two last axes of NCHW data by a separable linear map.

Each is written as ``out = Mh @ x @ Mw.T`` (two GEMMs) with small interpolation matrices built
from MXNet's float32 index arithmetic, so the backward pass is ``Mh.T @ g @ Mw``.
AdaptiveAvgPooling2D averages, for output row ``o`` of ``O``, the input rows
``[floor(o * I / O), ceil((o + 1) * I / O))``; BilinearResize2D interpolates between the
two nearest input pixels (``align_corners``: the corner pixels' centres map onto each
other, else OpenCV's half-pixel rule with negative positions clamped to 0).

>>> import mxasync as mx
>>> x = mx.nd.arange(16).reshape((1, 1, 4, 4))
>>> mx.nd.contrib.AdaptiveAvgPooling2D(x, output_size=2)[0, 0].asnumpy().tolist()
[[2.5, 4.5], [10.5, 12.5]]
>>> mx.nd.contrib.BilinearResize2D(x, height=2, width=2)[0, 0].asnumpy().tolist()
[[0.0, 3.0], [12.0, 15.0]]
"""

from __future__ import annotations

import functools
from typing import Literal, Optional

import numpy as np
from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam, Shape

__all__ = ["AdaptiveAvgPoolParam", "BilinearResizeParam"]

_F32 = np.float32


def _apply(xp, x, mh, mw):
    """``mh @ x @ mw.T`` over the two last axes of x (NCHW), as two plain GEMMs (BLAS / cuBLAS)."""
    n, c, h, w = x.shape
    mh, mw = xp.asarray(mh, dtype=x.dtype), xp.asarray(mw, dtype=x.dtype)
    oh, ow = mh.shape[0], mw.shape[0]
    cols = xp.matmul(xp.ascontiguousarray(x).reshape(-1, w), mw.T)  # (N*C*H, OW)
    cols = xp.ascontiguousarray(cols.reshape(n * c, h, ow).transpose(1, 0, 2)).reshape(h, -1)
    out = xp.matmul(mh, cols)  # (OH, N*C*OW)
    return out.reshape(oh, n * c, ow).transpose(1, 0, 2).reshape(n, c, oh, ow)


# -- AdaptiveAvgPooling2D --------------------------------------------------------------------------
class AdaptiveAvgPoolParam(OpParam):
    output_size: Optional[Shape] = Field((), description="int (output size) or a tuple of int for output "
                                         "(height, width); empty or None: 1")


def _adaptive_out(p):
    size = p.output_size or ()
    if len(size) == 1:
        return size[0], size[0]
    if len(size) == 2:
        return size[0], size[1]
    return 1, 1  # MXNet: no size, or more than 2 values, gives 1 x 1


@functools.lru_cache(maxsize=64)
def _average_matrix(n_out: int, n_in: int) -> np.ndarray:
    """(n_out, n_in): row o averages [floor(o * n_in / n_out), ceil((o + 1) * n_in / n_out))."""
    o = np.arange(n_out)
    start = np.floor((o * n_in).astype(_F32) / _F32(n_out)).astype(np.int64)
    end = np.ceil(((o + 1) * n_in).astype(_F32) / _F32(n_out)).astype(np.int64)
    i = np.arange(n_in)
    inside = (i[None, :] >= start[:, None]) & (i[None, :] < end[:, None])
    return inside / (end - start)[:, None].astype(np.float64)


class _AdaptiveProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        if len(d) != 4:
            raise self.error(f"data has shape {tuple(d)}; it must be (N, C, H, W)")
        oh, ow = _adaptive_out(self.params)
        if oh <= 0 or ow <= 0:
            raise self.error(f"output_size={self.params.output_size} must be positive")
        return [d], [(d[0], d[1], oh, ow)], []


def _adaptive_fwd(xp, p, x):
    oh, ow = _adaptive_out(p)
    return _apply(xp, x, _average_matrix(oh, x.shape[2]), _average_matrix(ow, x.shape[3]))


def _adaptive_bwd(xp, p, og, ins, outs):
    x = ins[0]
    oh, ow = _adaptive_out(p)
    return [_apply(xp, og[0], _average_matrix(oh, x.shape[2]).T, _average_matrix(ow, x.shape[3]).T)]


defop("_contrib_AdaptiveAvgPooling2D", param=AdaptiveAvgPoolParam, base=_AdaptiveProperty, fwd=_adaptive_fwd,
      bwd=_adaptive_bwd, deps="og,in",
      doc="Adaptive average pooling of NCHW data to (N, C, *output_size): output cell (i, j) averages the "
          "input rows [floor(i*H/OH), ceil((i+1)*H/OH)) and columns likewise.")


# -- BilinearResize2D ------------------------------------------------------------------------------
class BilinearResizeParam(OpParam):
    height: int = Field(1, ge=1, description="output height (mode 'size' without scale_height)")
    width: int = Field(1, ge=1, description="output width (mode 'size' without scale_height)")
    scale_height: Optional[float] = Field(None, description="output height = int(scale_height * height) "
                                          "(modes 'size' and 'odd_scale')")
    scale_width: Optional[float] = Field(None, description="output width = int(scale_width * width) "
                                         "(used in mode 'size' when scale_height is given, as in MXNet)")
    mode: Literal["size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up"] = Field(
        "size", description="how the output size is found: size, odd_scale, like (the second input's H and W), "
                            "to_even_down, to_even_up, to_odd_down, to_odd_up")
    align_corners: bool = Field(True, description="map the corner pixels' centres onto each other")


def _resize_hw(prop, d, like):
    p = prop.params
    h, w = d[2], d[3]
    if p.mode == "size":
        if p.scale_height is None:
            return p.height, p.width
        if p.scale_width is None:  # MXNet reads scale_width whenever scale_height is given
            raise prop.error("scale_height is given but scale_width is not; give both")
        return int(_F32(p.scale_height) * _F32(h)), int(_F32(p.scale_width) * _F32(w))
    if p.mode == "odd_scale":
        if p.scale_height is None or p.scale_width is None:
            raise prop.error("mode 'odd_scale' needs scale_height and scale_width")

        def odd(n, s):
            return int(_F32(n) * _F32(s)) if n % 2 == 0 else int(_F32(n - 1) * _F32(s)) + 1
        return odd(h, p.scale_height), odd(w, p.scale_width)
    if p.mode == "like":
        return like[2], like[3]
    step = {"to_even_down": (0, -1), "to_even_up": (0, 1), "to_odd_down": (1, -1), "to_odd_up": (1, 1)}[p.mode]
    return tuple(n if n % 2 == step[0] else n + step[1] for n in (h, w))


class _BilinearProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        like = in_shapes[1] if len(in_shapes) > 1 else None
        if d is None or (self.params.mode == "like" and like is None):
            return list(in_shapes), [None], []
        if len(d) != 4:
            raise self.error(f"data has shape {tuple(d)}; it must be (N, C, H, W)")
        if like is not None and len(like) != 4:
            raise self.error(f"like has shape {tuple(like)}; it must be (N, C, H, W)")
        oh, ow = _resize_hw(self, d, like)
        if oh <= 0 or ow <= 0:
            raise self.error(f"the output size ({oh}, {ow}) for data {tuple(d)} must be positive")
        return list(in_shapes), [(d[0], d[1], oh, ow)], []


@functools.lru_cache(maxsize=64)
def _interp_matrix(n_out: int, n_in: int, align_corners: bool) -> np.ndarray:
    """(n_out, n_in) bilinear weights with MXNet's float32 source positions."""
    m = np.zeros((n_out, n_in))
    if n_out == n_in:
        return np.eye(n_in)
    dst = np.arange(n_out)
    if n_out > 1:
        scale = _F32(n_in - 1) / _F32(n_out - 1) if align_corners else _F32(n_in) / _F32(n_out)
    else:
        scale = _F32(0)
    if align_corners:
        src = scale * dst.astype(_F32)
    else:
        src = np.maximum(float(scale) * (dst + 0.5) - 0.5, 0).astype(_F32)
    lo = src.astype(np.int64)
    lam = (src - lo.astype(_F32)).astype(np.float64)
    hi = lo + (lo < n_in - 1)
    np.add.at(m, (dst, lo), 1 - lam)
    np.add.at(m, (dst, hi), lam)
    return m


def _bilinear_fwd(xp, p, x, *like):
    oh, ow = _resize_hw(_Sizer(p), x.shape, like[0].shape if like else None)
    return _apply(xp, x, _interp_matrix(oh, x.shape[2], p.align_corners),
                  _interp_matrix(ow, x.shape[3], p.align_corners))


def _bilinear_bwd(xp, p, og, ins, outs):
    x, g = ins[0], og[0]
    grad = _apply(xp, g, _interp_matrix(g.shape[2], x.shape[2], p.align_corners).T,
                  _interp_matrix(g.shape[3], x.shape[3], p.align_corners).T)
    return [grad] + [None] * (len(ins) - 1)  # the like input has a zero gradient


class _Sizer:
    """What _resize_hw needs of a prop, for a kernel that has only the params."""

    def __init__(self, p):
        self.params = p

    def error(self, msg):
        return ValueError(f"_contrib_BilinearResize2D: {msg}")


defop("_contrib_BilinearResize2D", param=BilinearResizeParam, base=_BilinearProperty, fwd=_bilinear_fwd,
      bwd=_bilinear_bwd, deps="og,in", arguments=("data", "like"), args=lambda p: ["data", "like"] if p.mode == "like" else ["data"],
      doc="Bilinear resize of NCHW data to an (height, width) given by size, scale, the like input or an "
          "even/odd rule (MXNet's modes).")
