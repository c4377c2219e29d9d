"""``Crop``: cut a window out of the two spatial axes of NCHW data (MXNet's src/operator/crop.cc).

The window's size is ``h_w``, or the spatial size of a second input (``num_args=2``); its
corner is ``offset``, or the centre with ``center_crop``.

>>> import mxasync as mx
>>> x = mx.nd.arange(32).reshape((1, 2, 4, 4))
>>> mx.nd.Crop(x, h_w=(2, 3), offset=(1, 0), num_args=1)[0, 0].asnumpy()
array([[ 4.,  5.,  6.],
       [ 8.,  9., 10.]], dtype=float32)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..params import OpParam

__all__ = ["CropParam"]


class CropParam(OpParam):
    num_args: int = Field(ge=1, le=2, description="1: the window is h_w; 2: the spatial size of the second input")
    offset: tuple[int, int] = Field((0, 0), description="the window's top-left corner (y, x)")
    h_w: tuple[int, int] = Field((0, 0), description="the window's height and width (num_args=1)")
    center_crop: bool = Field(False, description="centre the window (offset is ignored)")


def _window(prop, data_shape, like_shape):
    y, x, h, w = _static_window(prop.params, data_shape, like_shape)
    height, width = data_shape[2], data_shape[3]
    if h < 1 or w < 1 or y < 0 or x < 0 or y + h > height or x + w > width:
        raise prop.error(f"the window {h}x{w} at (y={y}, x={x}) does not fit data of shape {tuple(data_shape)}")
    return y, x, h, w


class _CropProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        like = in_shapes[1] if self.params.num_args == 2 else None
        if d is None or (self.params.num_args == 2 and like is None):
            return list(in_shapes), [None], []
        if len(d) != 4 or (like is not None and len(like) < 4):
            raise self.error(f"data must be 4-D (N, C, H, W); got shapes {[tuple(s) for s in in_shapes]}")
        _, _, h, w = _window(self, d, like)
        return list(in_shapes), [(d[0], d[1], h, w)], []


def _crop_fwd(xp, p, data, like=None):
    y, x, h, w = _static_window(p, data.shape, None if like is None else like.shape)
    return data[:, :, y:y + h, x:x + w].copy()


def _static_window(p, data_shape, like_shape):
    h, w = tuple(like_shape[2:4]) if p.num_args == 2 else p.h_w
    y, x = ((data_shape[2] - h) // 2, (data_shape[3] - w) // 2) if p.center_crop else p.offset
    return y, x, h, w


def _crop_bwd(xp, p, og, ins, outs):
    data = ins[0]
    y, x, h, w = _static_window(p, data.shape, None if len(ins) < 2 else ins[1].shape)
    grad = xp.zeros(data.shape, dtype=og[0].dtype)
    grad[:, :, y:y + h, x:x + w] = og[0]
    return [grad] + [None] * (len(ins) - 1)


defop("Crop", param=CropParam, base=_CropProperty, var_args="num_args", deps="og,in",
      args=lambda p: ["data", "crop_like"][: p.num_args], fwd=_crop_fwd, bwd=_crop_bwd,
      doc="A spatial window of NCHW data: size h_w (or the second input's H, W), corner offset (or centred).")
