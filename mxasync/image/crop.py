"""Crops: ``scale_down``, ``fixed_crop``, ``random_crop``, ``center_crop``, ``random_size_crop``.

Sizes are ``(width, height)``. A crop larger than the image is first scaled
down to the largest one of its aspect ratio that fits (``scale_down``) and the
result resized up to ``size``, as in MXNet. Random positions and sizes are
drawn with Python's ``random`` in MXNet's order, so ``random.seed(n)`` gives
MXNet's crops.

>>> import random, numpy as np
>>> img = np.zeros((20, 28, 3), np.uint8)
>>> out, rect = center_crop(img, (10, 8))
>>> out.shape, rect
((8, 10, 3), (9, 6, 10, 8))
>>> random.seed(0); random_crop(img, (10, 8))[1]
(12, 12, 10, 8)
"""

from __future__ import annotations

import math
import random
import warnings
from numbers import Number

import numpy as np

from ..ndarray import NDArray
from ._arrays import ImageError, image_shape, to_result
from .resize import _get_interp_method, imresize

__all__ = ["scale_down", "fixed_crop", "random_crop", "center_crop", "random_size_crop"]


def scale_down(src_size: tuple[int, int], size: tuple[int, int]) -> tuple[int, int]:
    """Shrink the crop ``size = (w, h)`` to fit in ``src_size = (w, h)``, keeping its aspect ratio.

    >>> scale_down((640, 480), (720, 120))
    (640, 106)
    """
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def _check_size(size, where: str) -> tuple[int, int]:
    try:
        w, h = size
        ok = int(w) == w and int(h) == h and w >= 1 and h >= 1
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ImageError(f"{where}: size must be (width, height) with both >= 1, got {size!r}")
    return int(w), int(h)


def _fit(src: NDArray | np.ndarray, size, where: str) -> tuple[int, int, int, int]:
    """``(h, w, new_w, new_h)``: the image size and the crop scaled down to fit it."""
    h, w, _ = image_shape(src, where)
    size = _check_size(size, where)
    new_w, new_h = scale_down((w, h), size)
    if new_w < 1 or new_h < 1:
        raise ImageError(f"{where}: a crop of (width, height) {size} scaled down to fit the {w}x{h} image "
                         f"is empty ({new_w}x{new_h})")
    return h, w, new_w, new_h


def fixed_crop(src, x0: int, y0: int, w: int, h: int, size: tuple[int, int] | None = None,
               interp: int = 2) -> NDArray:
    """Crop ``src[y0:y0+h, x0:x0+w]`` (a copy), then resize it to ``size = (w, h)`` when given.

    Unlike MXNet (which clips the slice silently) a crop outside the image is an error.
    """
    height, width, _ = image_shape(src, "fixed_crop")
    if min(x0, y0) < 0 or min(w, h) < 1 or x0 + w > width or y0 + h > height:
        raise ImageError(f"fixed_crop: the crop (x0={x0}, y0={y0}, w={w}, h={h}) does not fit in the image "
                         f"of width {width} and height {height}")
    x0, y0, w, h = int(x0), int(y0), int(w), int(h)
    region = src[y0:y0 + h, x0:x0 + w]
    crop = region.asnumpy() if isinstance(region, NDArray) else np.array(region)
    if size is not None and (w, h) != tuple(size):
        new_w, new_h = _check_size(size, "fixed_crop")
        method = _get_interp_method(interp, (h, w, new_h, new_w))
        return imresize(crop, new_w, new_h, method)
    return to_result(crop)


def random_crop(src, size: tuple[int, int], interp: int = 2) -> tuple[NDArray, tuple[int, int, int, int]]:
    """Crop ``size = (w, h)`` at a random position (scaled up when the image is smaller).

    Returns the crop and ``(x0, y0, w, h)``, the region taken from ``src``.
    """
    h, w, new_w, new_h = _fit(src, size, "random_crop")
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size: tuple[int, int], interp: int = 2) -> tuple[NDArray, tuple[int, int, int, int]]:
    """Crop ``size = (w, h)`` from the centre (scaled up when the image is smaller).

    Returns the crop and ``(x0, y0, w, h)``, the region taken from ``src``.
    """
    h, w, new_w, new_h = _fit(src, size, "center_crop")
    x0 = int((w - new_w) / 2)
    y0 = int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def random_size_crop(src, size: tuple[int, int], area, ratio: tuple[float, float], interp: int = 2,
                     **kwargs) -> tuple[NDArray, tuple[int, int, int, int]]:
    """Crop a random region of ``area`` (a fraction, or a ``(min, max)`` range, of the image) and
    aspect ratio in ``ratio = (min, max)`` (drawn log-uniformly), resized to ``size = (w, h)``.

    Ten tries, then ``center_crop``. Returns the crop and ``(x0, y0, w, h)``.
    ``min_area`` is the deprecated name of ``area``.
    """
    if "min_area" in kwargs:
        warnings.warn("random_size_crop: `min_area` is deprecated, use `area`", DeprecationWarning, stacklevel=2)
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"random_size_crop: unexpected keyword argument(s) {sorted(kwargs)}")
    h, w, _ = image_shape(src, "random_size_crop")
    _check_size(size, "random_size_crop")
    if isinstance(area, Number):
        area = (area, 1.0)
    if not (len(area) == 2 and 0 < area[0] <= area[1]):
        raise ImageError(f"random_size_crop: area must be a fraction in (0, 1] or (min, max) with "
                         f"0 < min <= max, got {area!r}")
    if not (len(ratio) == 2 and 0 < ratio[0] <= ratio[1]):
        raise ImageError(f"random_size_crop: ratio must be (min, max) with 0 < min <= max, got {ratio!r}")
    log_ratio = (math.log(ratio[0]), math.log(ratio[1]))
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * h * w
        new_ratio = math.exp(random.uniform(*log_ratio))
        new_w = int(round(math.sqrt(target_area * new_ratio)))
        new_h = int(round(math.sqrt(target_area / new_ratio)))
        if 0 < new_w <= w and 0 < new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)
