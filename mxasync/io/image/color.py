"""Colour augmenters of ``ImageRecordIter``: PCA lighting noise and HSL jitter (RGB images).

>>> import numpy as np
>>> img = np.full((2, 2, 3), 100, np.uint8)
>>> out = pca_lighting(img, 0.1, np.random.default_rng(0))
>>> out.dtype.name, bool(np.ptp(out[..., 0]) == 0)   # one shift per channel, the same for every pixel
('float32', True)
>>> hsl_jitter(img, np.random.default_rng(0), 0, 0, 0).tolist() == img.tolist()
True
"""

from __future__ import annotations

import numpy as np

from .codec import _lib

__all__ = ["PCA_EIGVAL", "PCA_EIGVEC", "pca_lighting", "hsl_jitter", "rgb_to_hls", "hls_to_rgb"]

#: AlexNet's eigenvalues and eigenvectors (columns, RGB rows) of ImageNet pixel covariance, as used by MXNet.
PCA_EIGVAL = np.array([55.46, 4.794, 1.148], np.float32)
PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009],
                       [-0.5808, -0.0045, -0.8140],
                       [-0.5836, -0.6948, 0.4203]], np.float32)


def pca_lighting(img: np.ndarray, std: float, rng: np.random.Generator) -> np.ndarray:
    """AlexNet-style lighting: add ``PCA_EIGVEC @ (alpha * PCA_EIGVAL)`` to every RGB pixel,
    ``alpha ~ N(0, std)`` per component; float32 out (a 1-channel image gets the mean shift)."""
    alpha = rng.normal(0.0, std, 3).astype(np.float32)
    shift = PCA_EIGVEC @ (alpha * PCA_EIGVAL)
    out = img.astype(np.float32)  # a copy: the input may be a view of a decoded image
    if out.shape[2] == 1:
        out += np.float32(shift.mean())
    else:
        out[:, :, :3] += shift
    return out


def rgb_to_hls(img: np.ndarray) -> np.ndarray:
    """uint8 RGB to uint8 HLS with OpenCV's 8-bit scaling (H in [0, 180), L and S in [0, 255])."""
    x = img[:, :, :3].astype(np.float32) / np.float32(255)
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    vmax, vmin = x.max(axis=2), x.min(axis=2)
    diff, total = vmax - vmin, vmax + vmin
    light = total / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        sat = np.where(light < 0.5, diff / total, diff / (2 - total))
        hue = np.where(vmax == r, (g - b) * 60 / diff,
                       np.where(vmax == g, (b - r) * 60 / diff + 120, (r - g) * 60 / diff + 240))
    flat = diff <= np.float32(1e-6)
    sat[flat], hue[flat] = 0, 0
    hue = np.where(hue < 0, hue + 360, hue)
    out = np.stack([hue / 2, light * 255, sat * 255], axis=2)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def hls_to_rgb(hls: np.ndarray) -> np.ndarray:
    """The inverse of ``rgb_to_hls`` (uint8 in, uint8 RGB out)."""
    h = hls[..., 0].astype(np.float32) * 2
    light = hls[..., 1].astype(np.float32) / 255
    sat = hls[..., 2].astype(np.float32) / 255
    p2 = np.where(light <= 0.5, light * (1 + sat), light + sat - light * sat)
    p1 = 2 * light - p2
    out = np.empty(hls.shape[:2] + (3,), np.float32)
    for c, offset in enumerate((120.0, 0.0, -120.0)):
        hh = (h + offset) % 360
        v = np.where(hh < 60, p1 + (p2 - p1) * hh / 60,
                     np.where(hh < 180, p2, np.where(hh < 240, p1 + (p2 - p1) * (240 - hh) / 60, p1)))
        out[..., c] = np.where(sat == 0, light, v)
    return np.clip(np.rint(out * 255), 0, 255).astype(np.uint8)


def hsl_jitter(img: np.ndarray, rng: np.random.Generator, random_h: int = 0, random_s: int = 0,
               random_l: int = 0) -> np.ndarray:
    """Add integers drawn from ``[-random_h, random_h]`` (hue, OpenCV's 0-180 scale),
    ``[-random_s, random_s]`` and ``[-random_l, random_l]`` (0-255) to a uint8 RGB image in
    HLS space, clipped (not wrapped) to the range, as MXNet does. A gray image gets the L shift."""
    draws = [int(float(rng.uniform(-1.0, 1.0)) * v) for v in (random_h, random_s, random_l)]
    dh, ds, dl = draws
    src = np.clip(np.rint(img), 0, 255).astype(np.uint8) if img.dtype != np.uint8 else img
    if src.shape[2] == 1:
        return np.clip(src.astype(np.int16) + dl, 0, 255).astype(np.uint8)
    rgb = np.ascontiguousarray(src[:, :, :3])
    cv2 = _lib("opencv")
    hls = cv2.cvtColor(rgb, cv2.COLOR_RGB2HLS) if cv2 is not None else rgb_to_hls(rgb)
    shifted = hls.astype(np.int16) + np.array([dh, dl, ds], np.int16)
    hls = np.clip(shifted, 0, np.array([180, 255, 255], np.int16)).astype(np.uint8)
    rgb = cv2.cvtColor(hls, cv2.COLOR_HLS2RGB) if cv2 is not None else hls_to_rgb(hls)
    if src.shape[2] == 4:
        return np.concatenate([rgb, src[:, :, 3:]], axis=2)
    return rgb
