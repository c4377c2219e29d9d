"""Rotation of CHW / NCHW float32 images about their centre: ``imrotate`` and ``random_rotate`` (MXNet 1.9's).

Each output pixel reads the input at its position rotated by the angle (bilinear,
zero outside), through the ``BilinearSampler`` op; ``zoom_in`` scales so that no
empty corner shows, ``zoom_out`` so that the whole rotated image fits.

>>> import mxasync as mx, numpy as np
>>> img = mx.nd.array(np.arange(12, dtype="float32").reshape(1, 3, 4))
>>> bool(np.allclose(imrotate(img, 0).asnumpy(), img.asnumpy(), atol=1e-5))
True
"""

from __future__ import annotations

from numbers import Number

import numpy as np

from ..base import MXAsyncValueError
from ..ndarray import NDArray
from ..ndarray import ndarray as _nd

__all__ = ["imrotate", "random_rotate"]


def _angles(src: NDArray, rotation_degrees, single: bool) -> np.ndarray:
    if isinstance(rotation_degrees, NDArray):
        if single:
            raise TypeError("imrotate: a single image takes a scalar rotation angle, got an NDArray")
        deg = rotation_degrees.asnumpy().astype(np.float64).reshape(-1)
    elif isinstance(rotation_degrees, Number):
        deg = np.full(src.shape[0], float(rotation_degrees))
    else:
        raise TypeError(f"imrotate: rotation_degrees must be a number or an NDArray, got "
                        f"{type(rotation_degrees).__name__}")
    if len(deg) != src.shape[0]:
        raise MXAsyncValueError(f"imrotate: {src.shape[0]} images but {len(deg)} rotation angles")
    return np.deg2rad(deg)


def _scale(rad: np.ndarray, h: int, w: int, zoom_in: bool, zoom_out: bool) -> np.ndarray:
    """Per image, how much the sampling grid grows (zoom_out) or shrinks (zoom_in)."""
    if not (zoom_in or zoom_out):
        return np.ones_like(rad)
    radius, corner = np.hypot(h, w), np.arctan(h / w)
    a = np.abs(rad)
    # half-extents (doubled) of the rotated image's bounding box, from its two corner directions
    ext_x = np.maximum(np.abs(radius * np.cos(corner + a)), np.abs(radius * np.cos(corner - a)))
    ext_y = np.maximum(np.abs(radius * np.sin(corner + a)), np.abs(radius * np.sin(corner - a)))
    if zoom_out:
        return np.maximum(ext_x / w, ext_y / h)
    return np.minimum(w / ext_x, h / ext_y)


def imrotate(src: NDArray, rotation_degrees, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """Rotate a CHW image (scalar angle) or an NCHW batch (scalar or one angle per image), in degrees."""
    if zoom_in and zoom_out:
        raise MXAsyncValueError("imrotate: zoom_in and zoom_out cannot both be True")
    if src.dtype != np.float32:
        raise TypeError(f"imrotate: only float32 images are supported, got {np.dtype(src.dtype).name}")
    single = src.ndim == 3
    if single:
        src = src.expand_dims(axis=0)
    elif src.ndim != 4:
        raise MXAsyncValueError(f"imrotate: images must be CHW or NCHW, got shape {src.shape}")
    rad = _angles(src, rotation_degrees, single)
    _, _, h, w = src.shape
    hc, wc = (h - 1) / 2.0, (w - 1) / 2.0
    ys, xs = np.meshgrid(np.arange(h) - hc, np.arange(w) - wc, indexing="ij")
    cos, sin = np.cos(rad)[:, None, None], np.sin(rad)[:, None, None]
    scale = _scale(rad, h, w, zoom_in, zoom_out)[:, None, None]
    # normalise after rotating, so the aspect ratio is kept; BilinearSampler reads (x, y) in [-1, 1]
    gx = (xs * cos - ys * sin) / wc * scale
    gy = (xs * sin + ys * cos) / hc * scale
    grid = _nd.array(np.stack([gx, gy], axis=1).astype(np.float32), ctx=src.context)
    from .. import ndarray as nd

    out = nd.BilinearSampler(src, grid)
    return out[0] if single else out


def random_rotate(src: NDArray, angle_limits, zoom_in: bool = False, zoom_out: bool = False) -> NDArray:
    """Rotate by angles drawn uniformly from ``angle_limits`` (degrees; one per image of a batch)."""
    if src.ndim == 3:
        degrees = float(np.random.uniform(*angle_limits))
    else:
        degrees = _nd.array(np.random.uniform(*angle_limits, size=src.shape[0]), ctx=src.context)
    return imrotate(src, degrees, zoom_in=zoom_in, zoom_out=zoom_out)
