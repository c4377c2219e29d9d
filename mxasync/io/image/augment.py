"""Image augmenters on numpy HxWxC arrays, each random one driven by an explicit ``numpy.random.Generator``.

Sizes are ``(width, height)`` as in ``mx.image``; arrays are HxWxC (or HxW)
``uint8`` or ``float32``, colour channels in RGB order. Geometry functions keep
the dtype; colour jitter works in ``float32``. ``ImageAugmenter`` chains them in
the order of MXNet's ``ImageRecordIter`` default augmenter, and
``normalize_batch`` applies mean/std to a whole NCHW batch at once.

>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> img = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
>>> center_crop(img, (2, 2)).shape
(2, 2, 3)
>>> a = random_crop(img, (3, 2), np.random.default_rng(7))
>>> b = random_crop(img, (3, 2), np.random.default_rng(7))
>>> bool((a == b).all()), a.shape
(True, (2, 3, 3))
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ...base import MXAsyncError
from .codec import resize
from .color import hsl_jitter, pca_lighting
from .geometry import random_affine, random_size_crop

__all__ = [
    "resize_short", "scale_down", "fixed_crop", "center_crop", "random_crop", "random_resized_crop",
    "random_mirror", "pad", "brightness_jitter", "contrast_jitter", "saturation_jitter", "color_jitter",
    "normalize_batch", "per_channel", "hwc_to_chw", "ImageAugmenter",
]

_GRAY_COEF = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def resize_short(img: np.ndarray, size: int, interp: int = 1) -> np.ndarray:
    """Resize so that the shorter side is ``size`` pixels, keeping the aspect ratio.

    >>> resize_short(np.zeros((40, 80, 3), np.uint8), 20).shape
    (20, 40, 3)
    """
    h, w = img.shape[:2]
    if h <= w:
        new_h, new_w = size, max(1, int(round(w * size / h)))
    else:
        new_h, new_w = max(1, int(round(h * size / w))), size
    return resize(img, (new_w, new_h), interp)


def scale_down(src_size: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """The largest ``(w, h)`` with the aspect ratio of ``size`` that fits in ``src_size``.

    >>> scale_down((40, 30), (20, 20)), scale_down((40, 30), (64, 64))
    ((20, 20), (30, 30))
    """
    sw, sh = src_size
    w, h = size
    ratio = min(1.0, sw / w, sh / h)
    return max(1, min(sw, int(w * ratio))), max(1, min(sh, int(h * ratio)))


def fixed_crop(img: np.ndarray, x0: int, y0: int, w: int, h: int,
               size: tuple[int, int] | None = None, interp: int = 1) -> np.ndarray:
    """Crop ``[y0:y0+h, x0:x0+w]``, then resize to ``size`` when given."""
    out = img[y0:y0 + h, x0:x0 + w]
    if size is not None and (size[0] != w or size[1] != h):
        out = resize(out, size, interp)
    return out


def center_crop(img: np.ndarray, size: tuple[int, int], interp: int = 1) -> np.ndarray:
    """Crop the centre to ``size``; an image smaller than ``size`` gives its largest
    centred region of that aspect ratio, scaled up (as MXNet does)."""
    h, w = img.shape[:2]
    cw, ch = scale_down((w, h), size)
    return fixed_crop(img, (w - cw) // 2, (h - ch) // 2, cw, ch, size, interp)


def random_crop(img: np.ndarray, size: tuple[int, int], rng: np.random.Generator, interp: int = 1) -> np.ndarray:
    """Crop ``size`` at a uniformly random position (scaled up like ``center_crop`` when too small)."""
    h, w = img.shape[:2]
    cw, ch = scale_down((w, h), size)
    x0 = int(rng.integers(0, w - cw + 1))
    y0 = int(rng.integers(0, h - ch + 1))
    return fixed_crop(img, x0, y0, cw, ch, size, interp)


def random_resized_crop(img: np.ndarray, size: tuple[int, int], rng: np.random.Generator,
                        area: tuple[float, float] = (0.08, 1.0), ratio: tuple[float, float] = (3 / 4, 4 / 3),
                        interp: int = 1, max_attempts: int = 10) -> np.ndarray:
    """Crop a random region covering ``area`` (fractions of the image) with aspect ratio
    (w/h) in ``ratio`` (sampled log-uniformly), resized to ``size``; falls back to
    ``center_crop`` when no region fits in ``max_attempts`` tries."""
    h, w = img.shape[:2]
    log_lo, log_hi = math.log(ratio[0]), math.log(ratio[1])
    for _ in range(max_attempts):
        target = float(rng.uniform(area[0], area[1])) * w * h
        aspect = math.exp(float(rng.uniform(log_lo, log_hi)))
        cw = int(round(math.sqrt(target * aspect)))
        ch = int(round(math.sqrt(target / aspect)))
        if 0 < cw <= w and 0 < ch <= h:
            x0 = int(rng.integers(0, w - cw + 1))
            y0 = int(rng.integers(0, h - ch + 1))
            return fixed_crop(img, x0, y0, cw, ch, size, interp)
    return center_crop(img, size, interp)


def random_mirror(img: np.ndarray, rng: np.random.Generator, p: float = 0.5) -> np.ndarray:
    """Flip left-right with probability ``p`` (a view)."""
    return img[:, ::-1] if rng.random() < p else img


def pad(img: np.ndarray, width: int, fill_value: float = 255) -> np.ndarray:
    """Add a border of ``width`` pixels of ``fill_value`` on every side.

    >>> pad(np.zeros((2, 3, 1), np.uint8), 1, 9)[:, :, 0].tolist()
    [[9, 9, 9, 9, 9], [9, 0, 0, 0, 9], [9, 0, 0, 0, 9], [9, 9, 9, 9, 9]]
    """
    if width <= 0:
        return img
    spec = [(width, width), (width, width)] + [(0, 0)] * (img.ndim - 2)
    return np.pad(img, spec, mode="constant", constant_values=fill_value)


def _gray(img: np.ndarray) -> np.ndarray:
    """Luma as HxWx1 float32 (the image itself when it has one channel)."""
    if img.shape[2] == 1:
        return img
    return (img[:, :, :3] @ _GRAY_COEF)[:, :, None]


def brightness_jitter(img: np.ndarray, brightness: float, rng: np.random.Generator) -> np.ndarray:
    """Scale pixel values by ``1 + U(-brightness, brightness)`` (float32 HxWxC in, float32 out)."""
    alpha = 1.0 + float(rng.uniform(-brightness, brightness))
    return img * np.float32(alpha)


def contrast_jitter(img: np.ndarray, contrast: float, rng: np.random.Generator) -> np.ndarray:
    """Blend with the mean gray level: ``alpha * img + (1 - alpha) * mean(gray)``."""
    alpha = 1.0 + float(rng.uniform(-contrast, contrast))
    mean = float(_gray(img).mean())
    return img * np.float32(alpha) + np.float32((1.0 - alpha) * mean)


def saturation_jitter(img: np.ndarray, saturation: float, rng: np.random.Generator) -> np.ndarray:
    """Blend each pixel with its gray value: ``alpha * img + (1 - alpha) * gray``."""
    alpha = 1.0 + float(rng.uniform(-saturation, saturation))
    return img * np.float32(alpha) + _gray(img) * np.float32(1.0 - alpha)


def color_jitter(img: np.ndarray, rng: np.random.Generator, brightness: float = 0.0,
                 contrast: float = 0.0, saturation: float = 0.0) -> np.ndarray:
    """Apply the enabled jitters in a random order (MXNet's ``ColorJitterAug``); returns float32."""
    out = img.astype(np.float32, copy=False)
    steps = [(fn, v) for fn, v in ((brightness_jitter, brightness), (contrast_jitter, contrast),
                                   (saturation_jitter, saturation)) if v > 0]
    for i in rng.permutation(len(steps)):
        fn, value = steps[int(i)]
        out = fn(out, value, rng)
    return out


def per_channel(values: Sequence[float] | np.ndarray | None, default: float, channels: int, what: str,
                where: str = "normalize_batch") -> np.ndarray:
    """``values`` (None, one value or one per channel) as a float32 ``(channels, 1, 1)`` array."""
    arr = np.full(channels, default, np.float32) if values is None else np.asarray(values, np.float32).ravel()
    if arr.size == 1:
        arr = np.full(channels, arr[0], np.float32)
    if arr.size != channels:
        raise MXAsyncError(f"{where}: {what} has {arr.size} values but the data has {channels} channels")
    if what == "std" and (arr == 0).any():
        raise MXAsyncError(f"{where}: std must be non-zero, got {arr.tolist()}")
    return arr.reshape(channels, 1, 1)


def normalize_batch(batch: np.ndarray, mean: Sequence[float] | np.ndarray | None = None,
                    std: Sequence[float] | np.ndarray | None = None, scale: float = 1.0,
                    out: np.ndarray | None = None) -> np.ndarray:
    """``(batch - mean) * scale / std`` per channel over an NCHW batch (MXNet's formula), as float32.

    ``out`` may be ``batch`` itself for an in-place update.

    >>> b = np.full((2, 3, 1, 1), 10, np.float32)
    >>> normalize_batch(b, mean=[10, 8, 0], std=[1, 2, 4], scale=0.5)[0, :, 0, 0].tolist()
    [0.0, 0.5, 1.25]
    """
    if batch.ndim != 4:
        raise MXAsyncError(f"normalize_batch: expected an NCHW batch, got shape {batch.shape}")
    channels = batch.shape[1]
    m = per_channel(mean, 0.0, channels, "mean")
    s = per_channel(std, 1.0, channels, "std")
    if out is None:
        out = batch.astype(np.float32, copy=True)
    elif out is not batch:
        np.copyto(out, batch, casting="unsafe")
    if m.any():
        out -= m
    factor = np.float32(scale) / s
    if (factor != 1).any():
        out *= factor
    return out


def hwc_to_chw(img: np.ndarray) -> np.ndarray:
    """HxWxC to CxHxW (a view; HxW becomes 1xHxW).

    >>> hwc_to_chw(np.zeros((4, 5, 3))).shape
    (3, 4, 5)
    """
    if img.ndim == 2:
        return img[None]
    return img.transpose(2, 0, 1)


@dataclass(frozen=True)
class ImageAugmenter:
    """MXNet ``ImageRecordIter``'s default augmentation chain for one image.

    Order: ``resize`` (shorter side); the affine warp of ``geometry.random_affine``
    when any of ``max_rotate_angle``, ``rotate``, ``max_shear_ratio``, a random
    scale, an aspect ratio (without ``random_resized_crop``) or an image size
    bound is set; ``pad``; then ``random_resized_crop`` (area in
    ``[min_random_area, max_random_area]``, aspect ratio in
    ``[min_aspect_ratio, max_aspect_ratio]``, or ``1 +- max_aspect_ratio`` when
    ``min_aspect_ratio`` is None), or a square of a random side in
    ``[min_crop_size, max_crop_size]`` resized to the target, or a random/centre
    crop to the target size; mirror; HSL jitter (``random_h/s/l``, uint8);
    colour jitter (float32); PCA lighting (``pca_noise``, float32).
    ``inter_method`` 10 picks a random interpolation per image, 9 by size.

    >>> aug = ImageAugmenter(size=(4, 4), rand_crop=True, rand_mirror=True, brightness=0.2, max_rotate_angle=10)
    >>> img = np.random.default_rng(0).integers(0, 255, (10, 8, 3), dtype=np.uint8)
    >>> out1 = aug(img, np.random.default_rng(1)); out2 = aug(img, np.random.default_rng(1))
    >>> out1.shape, out1.dtype.name, bool((out1 == out2).all())
    ((4, 4, 3), 'float32', True)
    """

    size: tuple[int, int]
    resize: int = -1
    rand_crop: bool = False
    random_resized_crop: bool = False
    min_random_area: float = 1.0
    max_random_area: float = 1.0
    min_aspect_ratio: float | None = None
    max_aspect_ratio: float = 0.0
    rand_mirror: bool = False
    mirror: bool = False
    brightness: float = 0.0
    contrast: float = 0.0
    saturation: float = 0.0
    pad: int = 0
    fill_value: int = 255
    inter_method: int = 1
    max_rotate_angle: int = 0
    rotate: int = -1
    max_shear_ratio: float = 0.0
    min_random_scale: float = 1.0
    max_random_scale: float = 1.0
    min_img_size: float = 0.0
    max_img_size: float = 1e10
    min_crop_size: int = -1
    max_crop_size: int = -1
    pca_noise: float = 0.0
    random_h: int = 0
    random_s: int = 0
    random_l: int = 0

    def __post_init__(self) -> None:
        if len(self.size) != 2 or min(self.size) <= 0:
            raise MXAsyncError(f"ImageAugmenter: size must be (width, height) > 0, got {self.size}")
        if self.inter_method not in (0, 1, 2, 3, 4, 9, 10):
            raise MXAsyncError(f"ImageAugmenter: inter_method must be 0-4, 9 or 10, got {self.inter_method}")
        if not 0 < self.min_random_area <= self.max_random_area:
            raise MXAsyncError("ImageAugmenter: need 0 < min_random_area <= max_random_area, got "
                               f"{self.min_random_area}, {self.max_random_area}")
        if min(self.brightness, self.contrast, self.saturation, self.pca_noise, self.pad, self.max_rotate_angle,
               self.max_shear_ratio, self.random_h, self.random_s, self.random_l) < 0:
            raise MXAsyncError("ImageAugmenter: brightness, contrast, saturation, pca_noise, pad, max_rotate_angle, "
                               "max_shear_ratio and random_h/s/l must be >= 0")
        if not 0 < self.min_random_scale <= self.max_random_scale:
            raise MXAsyncError("ImageAugmenter: need 0 < min_random_scale <= max_random_scale, got "
                               f"{self.min_random_scale}, {self.max_random_scale}")
        if (self.min_crop_size, self.max_crop_size) != (-1, -1) and not 0 < self.min_crop_size <= self.max_crop_size:
            raise MXAsyncError("ImageAugmenter: min_crop_size and max_crop_size go together, with "
                               f"0 < min_crop_size <= max_crop_size; got {self.min_crop_size}, {self.max_crop_size}")

    @property
    def jitters(self) -> bool:
        """Whether colour jitter or PCA lighting runs (the output is then float32)."""
        return self.brightness > 0 or self.contrast > 0 or self.saturation > 0 or self.pca_noise > 0

    @property
    def warps(self) -> bool:
        """Whether the affine warp runs (rotation, shear, random scale, aspect ratio or size bounds)."""
        aspect = not self.random_resized_crop and (self.max_aspect_ratio != 0 or self.min_aspect_ratio is not None)
        return (self.max_rotate_angle > 0 or self.rotate > 0 or self.max_shear_ratio > 0 or aspect
                or self.min_random_scale != 1 or self.max_random_scale != 1
                or self.min_img_size != 0 or self.max_img_size != 1e10)

    def _ratio(self) -> tuple[float, float]:
        if self.min_aspect_ratio is None:
            return max(1e-3, 1.0 - self.max_aspect_ratio), 1.0 + self.max_aspect_ratio
        return self.min_aspect_ratio, max(self.min_aspect_ratio, self.max_aspect_ratio)

    def __call__(self, img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Augment one HxWxC image; the result has shape ``(height, width, C)``."""
        if img.ndim == 2:
            img = img[:, :, None]
        interp = int(rng.integers(0, 5)) if self.inter_method == 10 else self.inter_method
        if self.resize > 0:
            img = resize_short(img, self.resize, interp)
        if self.warps:
            rrc = self.random_resized_crop
            img = random_affine(img, rng, self.max_rotate_angle, self.rotate, self.max_shear_ratio,
                                1.0 if rrc else self.min_random_scale, 1.0 if rrc else self.max_random_scale,
                                (1.0, 1.0) if rrc else self._ratio(), self.min_img_size, self.max_img_size,
                                interp, self.fill_value)
        if self.random_resized_crop:
            img = pad(img, self.pad, self.fill_value)
            img = random_resized_crop(img, self.size, rng, (self.min_random_area, self.max_random_area),
                                      self._ratio(), interp)
        elif self.max_crop_size > 0:
            img = random_size_crop(pad(img, self.pad, self.fill_value), self.size, rng, self.min_crop_size,
                                   self.max_crop_size, self.rand_crop, interp)
        else:
            img = pad(img, self.pad, self.fill_value)
            img = random_crop(img, self.size, rng, interp) if self.rand_crop else center_crop(img, self.size, interp)
        if img.ndim == 2:
            img = img[:, :, None]
        if self.mirror:
            img = img[:, ::-1]
        if self.rand_mirror:
            img = random_mirror(img, rng)
        if self.random_h or self.random_s or self.random_l:
            img = hsl_jitter(img, rng, self.random_h, self.random_s, self.random_l)
        if self.brightness > 0 or self.contrast > 0 or self.saturation > 0:
            img = color_jitter(img, rng, self.brightness, self.contrast, self.saturation)
        if self.pca_noise > 0:
            img = pca_lighting(img, self.pca_noise, rng)
        return img
