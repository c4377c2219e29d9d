"""Affine augmenters of ``ImageRecordIter``: rotation, shear, random scale and aspect ratio, crop sizes.

``random_affine`` draws one transform the way MXNet's default augmenter
describes it (an integer angle in ``[-max_rotate_angle, max_rotate_angle]``, or
``rotate`` when set; a shear ``m`` in ``[-max_shear_ratio, max_shear_ratio]``;
a scale in ``[min_random_scale, max_random_scale]``; an aspect ratio) and
warps the image with ``warp_affine``: OpenCV's ``warpAffine`` when installed,
else a numpy version (nearest or bilinear). The output is ``scale`` times the
input size (clamped to ``[min_img_size, max_img_size]``), the content centred
and the uncovered border filled with ``fill_value``. With the identity
settings the image comes back unchanged:

>>> import numpy as np
>>> img = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
>>> bool((random_affine(img, np.random.default_rng(0)) == img).all())
True
>>> affine_matrix(90, 0.0, 1.0, 1.0, (20, 24), (20, 24)).round(3).tolist()
[[0.0, 1.0, -2.0], [-1.0, 0.0, 22.0]]
"""

from __future__ import annotations

import math

import numpy as np

from ...base import MXAsyncError
from .codec import _lib

__all__ = ["affine_matrix", "warp_affine", "random_affine", "random_size_crop"]


def affine_matrix(angle: float, shear: float, scale: float, ratio: float, src_size: tuple[int, int],
                  dst_size: tuple[float, float]) -> np.ndarray:
    """The 2x3 matrix mapping source ``(x, y)`` to output pixels (MXNet's parametrisation).

    Rotation by ``angle`` degrees, shear ``(x, y) -> (x + shear * y, y)``, x scaled by
    ``2 * scale / (1 + ratio)`` and y by ``ratio`` times that; the source's far corner
    is centred in ``dst_size = (width, height)``.
    """
    a, b = math.cos(math.radians(angle)), math.sin(math.radians(angle))
    hs = 2.0 * scale / (1.0 + ratio)
    ws = ratio * hs
    m = np.empty((2, 3), np.float32)
    m[0, 0], m[0, 1] = hs * a - shear * b * ws, hs * b + shear * a * ws
    m[1, 0], m[1, 1] = -b * ws, a * ws
    # float32 arithmetic, as the matrix itself is float32
    cols, rows = np.float32(src_size[0]), np.float32(src_size[1])
    m[0, 2] = (np.float32(dst_size[0]) - (m[0, 0] * cols + m[0, 1] * rows)) / np.float32(2)
    m[1, 2] = (np.float32(dst_size[1]) - (m[1, 0] * cols + m[1, 1] * rows)) / np.float32(2)
    return m


def _warp_numpy(img: np.ndarray, m: np.ndarray, size: tuple[int, int], interp: int, fill: float) -> np.ndarray:
    """Inverse-map every output pixel; bilinear (nearest when ``interp`` is 0) with a constant border."""
    w, h = size
    inv = np.linalg.inv(np.vstack([m.astype(np.float64), [0.0, 0.0, 1.0]]))[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float64)
    sx = inv[0, 0] * xs + inv[0, 1] * ys + inv[0, 2]
    sy = inv[1, 0] * xs + inv[1, 1] * ys + inv[1, 2]
    src = img.astype(np.float32)
    sh, sw = img.shape[:2]
    padded = np.full((sh + 2, sw + 2, img.shape[2]), fill, np.float32)  # a one-pixel border of fill
    padded[1:-1, 1:-1] = src
    if interp == 0:
        ix, iy = np.floor(sx + 0.5).astype(np.int64), np.floor(sy + 0.5).astype(np.int64)
        ok = (ix >= 0) & (ix < sw) & (iy >= 0) & (iy < sh)
        out = padded[np.clip(iy + 1, 0, sh + 1), np.clip(ix + 1, 0, sw + 1)]
        out[~ok] = fill
    else:
        x0, y0 = np.floor(sx), np.floor(sy)
        fx, fy = (sx - x0)[..., None].astype(np.float32), (sy - y0)[..., None].astype(np.float32)
        x0 = np.clip(x0.astype(np.int64) + 1, 0, sw + 1)
        y0 = np.clip(y0.astype(np.int64) + 1, 0, sh + 1)
        x1, y1 = np.clip(x0 + 1, 0, sw + 1), np.clip(y0 + 1, 0, sh + 1)
        top = padded[y0, x0] * (1 - fx) + padded[y0, x1] * fx
        bottom = padded[y1, x0] * (1 - fx) + padded[y1, x1] * fx
        out = top * (1 - fy) + bottom * fy
        outside = (sx <= -1) | (sx >= sw) | (sy <= -1) | (sy >= sh)
        out[outside] = fill
    if img.dtype == np.uint8:
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return out.astype(img.dtype, copy=False)


def warp_affine(img: np.ndarray, m: np.ndarray, size: tuple[int, int], interp: int = 1,
                fill_value: float = 255) -> np.ndarray:
    """Warp an HxWxC image by the 2x3 matrix ``m`` into ``size = (width, height)``.

    ``interp``: MXNet's codes (0 nearest, 1 bilinear, 2 bicubic, 3 area -> bilinear, 4 lanczos, 9 auto);
    the numpy fallback does nearest for 0 and bilinear otherwise.
    """
    w, h = int(size[0]), int(size[1])
    if w <= 0 or h <= 0:
        raise MXAsyncError(f"warp_affine: output size (width={w}, height={h}) must be positive")
    if interp == 9:  # auto: area (bilinear here) when shrinking, bicubic when enlarging
        interp = 3 if w * h < img.shape[0] * img.shape[1] else 2
    cv2 = _lib("opencv")
    if cv2 is None:
        return _warp_numpy(img, m, (w, h), interp, fill_value)
    flags = [cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_LINEAR, cv2.INTER_LANCZOS4][interp]
    channels = img.shape[2]
    border = (float(fill_value),) * 4
    src = np.ascontiguousarray(img)
    if channels > 4:
        planes = [cv2.warpAffine(np.ascontiguousarray(src[:, :, c]), m, (w, h), flags=flags,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=border) for c in range(channels)]
        return np.stack(planes, axis=2)
    out = cv2.warpAffine(src, m, (w, h), flags=flags, borderMode=cv2.BORDER_CONSTANT, borderValue=border)
    return out[:, :, None] if out.ndim == 2 else out


def random_affine(img: np.ndarray, rng: np.random.Generator, max_rotate_angle: int = 0, rotate: int = -1,
                  max_shear_ratio: float = 0.0, min_random_scale: float = 1.0, max_random_scale: float = 1.0,
                  aspect_ratio: tuple[float, float] = (1.0, 1.0), min_img_size: float = 0.0,
                  max_img_size: float = 1e10, interp: int = 1, fill_value: float = 255) -> np.ndarray:
    """Rotate, shear, scale and stretch an HxWxC image by a random transform (see the module doc).

    Every value is drawn from ``rng`` in a fixed order, so a seeded generator
    gives the same result; ``aspect_ratio`` is the range of the ratio.
    """
    shear = float(max_shear_ratio) * float(rng.uniform(-1.0, 1.0))
    angle = int(rng.integers(-int(max_rotate_angle), int(max_rotate_angle) + 1))
    if rotate > 0:
        angle = int(rotate)
    scale = float(rng.uniform(min_random_scale, max_random_scale))
    ratio = float(rng.uniform(aspect_ratio[0], aspect_ratio[1]))
    h, w = img.shape[:2]
    new_w = max(min_img_size, min(max_img_size, scale * w))
    new_h = max(min_img_size, min(max_img_size, scale * h))
    if angle == 0 and shear == 0 and ratio == 1 and new_w == w and new_h == h and scale == 1:
        return img  # the identity: warping would copy the pixels unchanged
    m = affine_matrix(angle, shear, scale, ratio, (w, h), (new_w, new_h))
    return warp_affine(img, m, (max(1, int(new_w)), max(1, int(new_h))), interp, fill_value)


def random_size_crop(img: np.ndarray, size: tuple[int, int], rng: np.random.Generator, min_crop_size: int,
                     max_crop_size: int, rand_crop: bool, interp: int = 1) -> np.ndarray:
    """Crop a square whose side is drawn from ``[min_crop_size, max_crop_size]`` (at a random
    position when ``rand_crop``, else centred) and resize it to ``size = (width, height)``.

    Sides larger than the image are clamped to its shorter side (MXNet stops with an error).
    """
    from .augment import fixed_crop  # augment imports this module

    h, w = img.shape[:2]
    side = min(int(rng.integers(min_crop_size, max_crop_size + 1)), h, w)
    y, x = h - side, w - side
    if rand_crop:
        y, x = int(rng.integers(0, y + 1)), int(rng.integers(0, x + 1))
    else:
        y, x = y // 2, x // 2
    return fixed_crop(img, x, y, side, side, size, interp)
