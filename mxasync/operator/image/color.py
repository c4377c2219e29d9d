"""Colour image ops on (H, W, C) RGB images: _image_random_brightness/contrast/saturation/hue,
_image_random_color_jitter, _image_adjust_lighting, _image_random_lighting (MXNet 1.9.1's arithmetic,
its float-then-truncate casts for integer images included).

The random factors come from the context's seeded generator, so ``mx.random.seed`` repeats them.

>>> import mxasync as mx
>>> x = mx.nd.array([[[200, 100, 50]]])
>>> mx.nd.image.random_brightness(x, 1.5, 1.5).asnumpy().tolist()
[[[300.0, 150.0, 75.0]]]
"""

from __future__ import annotations

import numpy as np

from ...runtime.resource import ResourceRequest
from ..functional import defop
from ..params import Field, OpParam
from .geometry import Floats, _same_dtype, _store

__all__: list[str] = []

_GRAY = (0.299, 0.587, 0.114)  # ITU-R 601 luma, MXNet's coefficients
_EIGVAL = np.array([55.46, 4.794, 1.148])
_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                    [-0.5808, -0.0045, -0.8140],
                    [-0.5836, -0.6948, 0.4203]])


def _rgb_shape(prop, in_shapes):
    (s,) = in_shapes
    if s is None:
        return [None]
    if len(s) != 3 or s[-1] != 3:
        raise prop.error(f"input image must have shape (height, width, 3), but got {tuple(s)}")
    return [tuple(s)]


def _rng(op_ctx):
    return op_ctx.requested[0].get_random()


def _brightness(xp, f, alpha):
    return f * alpha


def _contrast(xp, f, alpha):
    gray = xp.mean(f[..., 0] * _GRAY[0] + f[..., 1] * _GRAY[1] + f[..., 2] * _GRAY[2])
    return f * alpha + gray * (1 - alpha)


def _saturation(xp, f, alpha):
    # MXNet 1.9.1 blends with 0.114 * blue rather than the full luma (its loop overwrites the sum);
    # kept so augmented images match MXNet's
    gray = (f[..., 2] * _GRAY[2])[..., None]
    return f * alpha + gray * (1 - alpha)


def _hls_channel(m1, m2, hue):
    hue = hue % 1.0
    return np.where(hue < 1 / 6, m1 + (m2 - m1) * hue * 6,
                    np.where(hue < 0.5, m2, np.where(hue < 2 / 3, m1 + (m2 - m1) * (2 / 3 - hue) * 6, m1)))


def _hue(xp, f, alpha):
    """Rotate the hue by ``alpha - 1`` turns in HLS space (MXNet's factor 1 is the identity)."""
    shift = alpha - 1.0
    if abs(shift) < 1e-4:
        return f
    rgb = np.asarray(f.get() if hasattr(f, "get") else f, dtype=np.float64) / 255.0
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    maxc, minc = rgb.max(axis=-1), rgb.min(axis=-1)
    light = (maxc + minc) / 2
    span = maxc - minc
    flat = span == 0
    safe = np.where(flat, 1.0, span)
    sat = np.where(light <= 0.5, span / np.where(flat, 1.0, maxc + minc), span / np.where(flat, 1.0, 2 - maxc - minc))
    rc, gc, bc = (maxc - r) / safe, (maxc - g) / safe, (maxc - b) / safe
    hue = np.where(r == maxc, bc - gc, np.where(g == maxc, 2 + rc - bc, 4 + gc - rc)) / 6 + shift
    sat = np.where(flat, 0.0, sat)
    m2 = np.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    m1 = 2 * light - m2
    out = np.stack([_hls_channel(m1, m2, hue + 1 / 3), _hls_channel(m1, m2, hue), _hls_channel(m1, m2, hue - 1 / 3)],
                   axis=-1)
    out = np.where(flat[..., None], rgb, out)  # grey pixels have no hue
    return xp.asarray(out * 255.0)


class FactorParam(OpParam):
    min_factor: float = Field(ge=0, description="the smallest random factor (1 leaves the image unchanged)")
    max_factor: float = Field(ge=0, description="the largest random factor")


def _random_adjust(adjust):
    def fwd(xp, p, op_ctx, x):
        alpha = float(_rng(op_ctx).uniform(p.min_factor, p.max_factor))
        return _store(xp, adjust(xp, x.astype("float64"), alpha), x.dtype)

    return fwd


for _name, _fn, _what in (("brightness", _brightness, "scale the pixel values"),
                          ("contrast", _contrast, "blend with the image's mean grey level"),
                          ("saturation", _saturation, "blend with the pixel's grey level"),
                          ("hue", _hue, "rotate the hue")):
    defop(f"_image_random_{_name}", param=FactorParam, fwd=_random_adjust(_fn), shape=_rgb_shape,
          dtype=_same_dtype, wants_ctx=True, fwd_res=(ResourceRequest.RANDOM,),
          doc=f"Draw a factor in [min_factor, max_factor] and {_what} by it.")


# -- colour jitter -------------------------------------------------------------------------------------
class ColorJitterParam(OpParam):
    brightness: float = Field(ge=0, description="how much to jitter brightness (factor in [1-b, 1+b])")
    contrast: float = Field(ge=0, description="how much to jitter contrast (factor in [1-c, 1+c])")
    saturation: float = Field(ge=0, description="how much to jitter saturation (factor in [1-s, 1+s])")
    hue: float = Field(ge=0, description="how much to jitter hue (factor in [1-h, 1+h])")


def _color_jitter(xp, p, op_ctx, x):
    rng = _rng(op_ctx)
    f = x.astype("float64")
    steps = [(amount, fn) for amount, fn in ((p.brightness, _brightness), (p.contrast, _contrast),
                                            (p.saturation, _saturation), (p.hue, _hue)) if amount > 0]
    for k in rng.permutation(len(steps)):  # a random order, as MXNet's jitter
        amount, fn = steps[k]
        f = fn(xp, f, float(rng.uniform(max(0.0, 1 - amount), 1 + amount)))
    return _store(xp, f, x.dtype)


defop("_image_random_color_jitter", param=ColorJitterParam, fwd=_color_jitter, shape=_rgb_shape,
      dtype=_same_dtype, wants_ctx=True, fwd_res=(ResourceRequest.RANDOM,),
      doc="Jitter brightness, contrast, saturation and hue in a random order.")


# -- lighting (AlexNet's PCA noise) ---------------------------------------------------------------------
class AdjustLightingParam(OpParam):
    alpha: Floats = Field(description="the three weights of the RGB principal components")


class RandomLightingParam(OpParam):
    alpha_std: float = Field(default=0.05, ge=0, description="the standard deviation of the component weights")


def _lighting(xp, x, alpha):
    shift = _EIGVEC @ (np.asarray(alpha, dtype=np.float64) * _EIGVAL)
    return _store(xp, x.astype("float64") + xp.asarray(shift), x.dtype)


def _check_alpha(prop, in_shapes):
    if len(prop.params.alpha) != 3:
        raise prop.error(f"alpha must hold 3 values, got {prop.params.alpha}")
    return _rgb_shape(prop, in_shapes)


defop("_image_adjust_lighting", param=AdjustLightingParam, fwd=lambda xp, p, x: _lighting(xp, x, p.alpha),
      shape=_check_alpha, dtype=_same_dtype,
      doc="Add the RGB principal components weighted by alpha (AlexNet's lighting noise).")
defop("_image_random_lighting", param=RandomLightingParam, wants_ctx=True, fwd_res=(ResourceRequest.RANDOM,),
      fwd=lambda xp, p, op_ctx, x: _lighting(xp, x, _rng(op_ctx).normal(0, p.alpha_std, 3)),
      shape=_rgb_shape, dtype=_same_dtype,
      doc="Add the RGB principal components weighted by N(0, alpha_std) draws (AlexNet's lighting noise).")
