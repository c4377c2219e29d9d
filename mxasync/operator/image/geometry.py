"""Layout and geometry image ops: _image_to_tensor, _image_normalize, _image_crop and the (random) flips,
with MXNet 1.9.1's shapes and arithmetic (``_image_resize`` is in resize.py).

>>> import mxasync as mx
>>> mx.nd.image.to_tensor(mx.nd.ones((4, 5, 3), dtype='uint8') * 255).shape
(3, 4, 5)
>>> mx.nd.image.resize(mx.nd.zeros((4, 6, 3)), 3, True).shape
(3, 4, 3)
"""

from __future__ import annotations

import functools
from typing import Annotated

import numpy as np
from pydantic import BeforeValidator

from ...runtime.resource import ResourceRequest
from ..functional import defop
from ..params import Field, OpParam

__all__: list[str] = []


def _to_floats(v):
    if isinstance(v, (int, float)):
        return (float(v),)
    if isinstance(v, list):
        return tuple(v)
    return v


Floats = Annotated[tuple[float, ...], BeforeValidator(_to_floats)]


def _image_ndim(prop, shape, what="(H, W, C) or (N, H, W, C)"):
    if len(shape) not in (3, 4):
        raise prop.error(f"input image must have shape {what}, but got {tuple(shape)}")


def _hwc_shape(prop, in_shapes):
    (s,) = in_shapes
    if s is None:
        return [None]
    _image_ndim(prop, s)
    return [tuple(s)]


def _same_dtype(prop, in_types):
    return list(in_types), [in_types[0]], []


def _float32(prop, in_types):
    return list(in_types), ["float32"], []


def _store(xp, x, dtype):
    """Cast a float result back to the input dtype, as MXNet's kernels do (integers: clip, truncate)."""
    if np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        return xp.clip(x, info.min, info.max).astype(dtype)
    return x.astype(dtype, copy=False)


# -- to_tensor ----------------------------------------------------------------------------------------
def _to_tensor_shape(prop, in_shapes):
    (s,) = in_shapes
    if s is None:
        return [None]
    _image_ndim(prop, s)
    s = tuple(s)
    return [s[:-3] + (s[-1], s[-3], s[-2])]


def _to_tensor(xp, p, x):
    axes = (2, 0, 1) if x.ndim == 3 else (0, 3, 1, 2)
    return xp.transpose(x.astype("float32") / 255.0, axes)


defop("_image_to_tensor", fwd=_to_tensor, shape=_to_tensor_shape, dtype=_float32,
      doc="(H, W, C) or (N, H, W, C) image in [0, 255] to a float32 (C, H, W) or (N, C, H, W) tensor in "
          "[0, 1].")


# -- normalize -----------------------------------------------------------------------------------------
class NormalizeParam(OpParam):
    mean: Floats = Field(default=(0.0, 0.0, 0.0, 0.0),
                         description="the per-channel means subtracted (one value: every channel)")
    std: Floats = Field(default=(1.0, 1.0, 1.0, 1.0),
                        description="the per-channel standard deviations divided by (one value: every channel)")


@functools.lru_cache(maxsize=64)
def _channel_column(values: tuple, nchan: int, dtype: str) -> np.ndarray:
    """``values`` as a (C, 1, 1) host array (one value repeated over every channel), built once per setting."""
    vals = list(values) * nchan if len(values) == 1 else list(values)[:nchan]
    out = np.asarray(vals, dtype=dtype).reshape(nchan, 1, 1)
    out.setflags(write=False)
    return out


def _per_channel(xp, values, nchan, dtype):
    col = _channel_column(tuple(values), nchan, np.dtype(dtype).str)
    return xp.asarray(col)  # the cached column itself on numpy


def _normalize_shape(prop, in_shapes):
    (s,) = in_shapes
    if s is None:
        return [None]
    _image_ndim(prop, s, "(C, H, W) or (N, C, H, W)")
    c = s[-3]
    for name in ("mean", "std"):
        n = len(getattr(prop.params, name))
        if n != 1 and n < c:
            raise prop.error(f"{name} has {n} values but the input has {c} channels (shape {tuple(s)})")
    if 0.0 in prop.params.std[:c]:
        raise prop.error(f"std must not be 0, got {prop.params.std}")
    return [tuple(s)]


def _normalize(xp, p, x):
    c = x.shape[-3]
    return (x - _per_channel(xp, p.mean, c, x.dtype)) / _per_channel(xp, p.std, c, x.dtype)


def _normalize_bwd(xp, p, og, ins, outs):
    g = og[0]
    return [g / _per_channel(xp, p.std, g.shape[-3], g.dtype)]


defop("_image_normalize", param=NormalizeParam, fwd=_normalize, bwd=_normalize_bwd, deps="og",
      shape=_normalize_shape, dtype=_same_dtype,
      doc="(x - mean[c]) / std[c] over the channel axis of a (C, H, W) or (N, C, H, W) tensor.")


# -- flips ---------------------------------------------------------------------------------------------
def _flip(axis):
    return lambda xp, p, x: xp.flip(x, axis=axis).copy()


def _flip_bwd(axis):
    return lambda xp, p, og, ins, outs: [xp.flip(og[0], axis=axis).copy()]


def _random_flip(axis):
    def fwd(xp, p, op_ctx, x):
        if op_ctx.requested[0].get_random().random() < 0.5:
            return xp.flip(x, axis=axis).copy()
        return x.copy()

    return fwd


for _name, _axis, _what in (("left_right", -2, "width"), ("top_bottom", -3, "height")):
    defop(f"_image_flip_{_name}", fwd=_flip(_axis), bwd=_flip_bwd(_axis), deps="og", shape=_hwc_shape,
          dtype=_same_dtype, doc=f"Reverse the {_what} axis of an image.")
    defop(f"_image_random_flip_{_name}", fwd=_random_flip(_axis), shape=_hwc_shape, dtype=_same_dtype,
          wants_ctx=True, fwd_res=(ResourceRequest.RANDOM,),
          doc=f"Reverse the {_what} axis of an image with probability 0.5.")


# -- crop ----------------------------------------------------------------------------------------------
class CropParam(OpParam):
    x: int = Field(ge=0, description="the left column of the crop")
    y: int = Field(ge=0, description="the top row of the crop")
    width: int = Field(gt=0, description="the width of the crop")
    height: int = Field(gt=0, description="the height of the crop")


def _crop_shape(prop, in_shapes):
    (s,) = in_shapes
    if s is None:
        return [None]
    _image_ndim(prop, s)
    p, s = prop.params, tuple(s)
    h, w = s[-3], s[-2]
    if p.x + p.width > w or p.y + p.height > h:
        raise prop.error(f"the crop x={p.x}, y={p.y}, width={p.width}, height={p.height} does not fit in an "
                         f"image of height {h} and width {w}")
    return [s[:-3] + (p.height, p.width, s[-1])]


def _crop(xp, p, x):
    return x[..., p.y:p.y + p.height, p.x:p.x + p.width, :].copy()


def _crop_bwd(xp, p, og, ins, outs):
    g = xp.zeros_like(ins[0])
    g[..., p.y:p.y + p.height, p.x:p.x + p.width, :] = og[0]
    return [g]


defop("_image_crop", param=CropParam, fwd=_crop, bwd=_crop_bwd, deps="og,in", shape=_crop_shape,
      dtype=_same_dtype, doc="The (x, y, width, height) window of an image.")
