"""Colour: ``color_normalize`` and the colour augmenters (brightness, contrast, saturation, hue,
colour jitter, PCA lighting, normalisation, random gray).

These work on float HxWxC NDArrays with NDArray arithmetic, in place where
MXNet's do (``color_normalize``, brightness, contrast, saturation, lighting
modify and return ``src``). Random draws use Python's ``random`` (numpy's
``np.random.normal`` for lighting) in MXNet's order.

>>> import random, mxasync as mx
>>> img = mx.nd.full((2, 2, 3), 100.0)
>>> color_normalize(img, mx.nd.array([100, 90, 80]), mx.nd.array([1, 2, 4])).asnumpy()[0, 0].tolist()
[0.0, 5.0, 5.0]
>>> random.seed(1); out = BrightnessJitterAug(0.5)(mx.nd.full((1, 1, 3), 10.0))
>>> round(float(out.asnumpy()[0, 0, 0]), 3)
6.344
"""

from __future__ import annotations

import math
import random
from numbers import Number

import numpy as np

from ..ndarray import NDArray
from ..ndarray import array as nd_array
from ..ndarray import dot as nd_dot
from ..ndarray import sum as nd_sum
from ._arrays import ImageError, as_nd
from .augmenter import Augmenter, RandomOrderAug

__all__ = ["color_normalize", "BrightnessJitterAug", "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug",
           "ColorJitterAug", "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "PCA_EIGVAL", "PCA_EIGVEC"]

#: AlexNet's ImageNet eigenvalues and eigenvectors (float64, as MXNet's ``CreateAugmenter`` passes them;
#: :mod:`mxasync.io.image.color` keeps float32 copies for ``ImageRecordIter``).
PCA_EIGVAL = np.array([55.46, 4.794, 1.148])
PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140], [-0.5836, -0.6948, 0.4203]])
_GRAY = [[[0.299, 0.587, 0.114]]]
# RGB <-> YIQ, for the hue rotation (https://beesbuzz.biz/code/hsv_color_transforms.php)
_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
_FROM_YIQ = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])


def _operand(value, src: NDArray, name: str):
    """``mean``/``std`` as a scalar or a float32 NDArray that broadcasts onto ``src`` unchanged."""
    if isinstance(value, Number):
        return float(value)
    arr = value if isinstance(value, NDArray) else nd_array(np.asarray(value, np.float32), dtype=np.float32)
    try:
        fits = np.broadcast_shapes(tuple(src.shape), tuple(arr.shape)) == tuple(src.shape)
    except ValueError:
        fits = False
    if not fits:
        raise ImageError(f"color_normalize: {name} of shape {tuple(arr.shape)} does not broadcast onto the "
                         f"image of shape {tuple(src.shape)} (give one value or one per channel)")
    return arr


def color_normalize(src, mean, std=None) -> NDArray:
    """``(src - mean) / std`` per channel, in place on an NDArray ``src`` (as MXNet), which is returned.

    ``mean``/``std``: an NDArray, array, list or number; ``None`` skips that step.
    """
    src = as_nd(src)
    if mean is not None:
        src -= _operand(mean, src, "mean")
    if std is not None:
        src /= _operand(std, src, "std")
    return src


class BrightnessJitterAug(Augmenter):
    """Multiply by ``1 + U(-brightness, brightness)``."""

    def __init__(self, brightness: float) -> None:
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src: NDArray) -> NDArray:
        alpha = 1.0 + random.uniform(-self.brightness, self.brightness)
        src = as_nd(src)
        src *= alpha
        return src


class ContrastJitterAug(Augmenter):
    """Blend with the image's mean luma: ``alpha * src + (1 - alpha) * mean(gray)``,
    ``alpha = 1 + U(-contrast, contrast)``."""

    def __init__(self, contrast: float) -> None:
        super().__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd_array(_GRAY)

    def __call__(self, src: NDArray) -> NDArray:
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        src = as_nd(src)
        gray = src * self.coef
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd_sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """Blend each pixel with its luma: ``alpha * src + (1 - alpha) * gray``,
    ``alpha = 1 + U(-saturation, saturation)``."""

    def __init__(self, saturation: float) -> None:
        super().__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd_array(_GRAY)

    def __call__(self, src: NDArray) -> NDArray:
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        src = as_nd(src)
        gray = nd_sum(src * self.coef, axis=2, keepdims=True)
        gray *= 1.0 - alpha
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """Rotate the hue by ``U(-hue, hue) * 180`` degrees (a linear map in YIQ space); returns a new array."""

    def __init__(self, hue: float) -> None:
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq, self.ityiq = _TO_YIQ, _FROM_YIQ

    def __call__(self, src: NDArray) -> NDArray:
        alpha = random.uniform(-self.hue, self.hue)
        u, w = math.cos(alpha * math.pi), math.sin(alpha * math.pi)
        rotate = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        t = (self.ityiq @ rotate @ self.tyiq).T
        return nd_dot(as_nd(src), nd_array(t, dtype=np.float32))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitter (those > 0) in a random order."""

    def __init__(self, brightness: float, contrast: float, saturation: float) -> None:
        ts: list[Augmenter] = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet PCA lighting noise: add ``eigvec @ (alpha * eigval)``, ``alpha ~ N(0, alphastd)``
    drawn with ``np.random.normal`` (``PCA_EIGVAL``/``PCA_EIGVEC`` are ImageNet's)."""

    def __init__(self, alphastd: float, eigval, eigvec) -> None:
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd = alphastd
        self.eigval = np.asarray(eigval, np.float64)
        self.eigvec = np.asarray(eigvec, np.float64)

    def __call__(self, src: NDArray) -> NDArray:
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        rgb = np.dot(self.eigvec * alpha, self.eigval)
        src = as_nd(src)
        src += nd_array(rgb, dtype=np.float32)
        return src


class ColorNormalizeAug(Augmenter):
    """``color_normalize(src, mean, std)``: subtract ``mean``, divide by ``std`` (either may be None)."""

    def __init__(self, mean, std) -> None:
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, NDArray) else nd_array(mean, dtype=np.float32)
        self.std = std if std is None or isinstance(std, NDArray) else nd_array(std, dtype=np.float32)

    def __call__(self, src: NDArray) -> NDArray:
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """With probability ``p``, replace every channel by the luma ``0.21 R + 0.72 G + 0.07 B``."""

    def __init__(self, p: float) -> None:
        super().__init__(p=p)
        self.p = p
        self.mat = nd_array([[0.21] * 3, [0.72] * 3, [0.07] * 3])

    def __call__(self, src: NDArray) -> NDArray:
        if random.random() < self.p:
            src = nd_dot(as_nd(src), self.mat)
        return src
