"""Resizing and border padding: ``imresize``, ``resize_short``, ``copyMakeBorder`` and the ``interp`` codes.

``interp`` follows MXNet (OpenCV's codes): 0 nearest, 1 bilinear, 2 bicubic,
3 area, 4 lanczos, 9 auto (bicubic when enlarging both sides, area when
shrinking both, else bilinear), 10 a random one of 0-4 (drawn with Python's
``random``, as MXNet does). Pixels are resized by the kernel of ``mx.nd.image.resize``
(:func:`mxasync.operator.image.resize.resize_image`), which gives OpenCV's numbers as MXNet's
own OpenCV build does (without Intel IPP, whose bicubic differs by one unit in places).

>>> import numpy as np
>>> img = np.zeros((20, 30, 3), np.uint8)
>>> imresize(img, 15, 10).shape, resize_short(img, 10).shape
((10, 15, 3), (10, 15, 3))
>>> copyMakeBorder(img, 1, 2, 3, 4, value=9).asnumpy()[0, 0].tolist()
[9, 9, 9]
"""

from __future__ import annotations

import random

import numpy as np

from ..ndarray import NDArray
from ..operator.image.resize import resize_image
from ._arrays import ImageError, deliver, image_shape, to_numpy

__all__ = ["imresize", "resize_short", "copyMakeBorder"]

# copyMakeBorder's ``type`` (OpenCV's border codes) -> numpy.pad mode; 0 (constant) is done by hand
_BORDER_MODES = {1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


def _get_interp_method(interp: int, sizes: tuple[int, int, int, int] | tuple = ()) -> int:
    """Resolve ``interp`` to one of 0-4; ``sizes`` is ``(old_h, old_w, new_h, new_w)`` for 9 (auto).

    >>> _get_interp_method(9, (10, 10, 20, 20)), _get_interp_method(9, (10, 10, 5, 5)), _get_interp_method(9)
    (2, 3, 2)
    """
    if interp == 9:
        if not sizes:
            return 2
        if len(sizes) != 4:
            raise ImageError(f"interp 9 (auto) needs sizes (old_h, old_w, new_h, new_w), got {sizes!r}")
        oh, ow, nh, nw = sizes
        if nh > oh and nw > ow:
            return 2
        if nh < oh and nw < ow:
            return 3
        return 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ImageError(f"unknown interp method {interp!r}: use 0 nearest, 1 bilinear, 2 bicubic, 3 area, "
                         "4 lanczos, 9 auto or 10 random")
    return int(interp)


def _positive_int(value, name: str, where: str) -> int:
    if isinstance(value, bool) or int(value) != value or value < 1:
        raise ImageError(f"{where}: {name} must be an integer >= 1, got {value!r}")
    return int(value)


def imresize(src, w: int, h: int, interp: int = 1, out: NDArray | None = None) -> NDArray:
    """Resize an HxWxC image to width ``w`` and height ``h`` (dtype kept: uint8, float32, ...).

    Unlike MXNet, ``interp`` 9 (by size) and 10 (random) are accepted here too.
    """
    w, h = _positive_int(w, "w", "imresize"), _positive_int(h, "h", "imresize")
    oh, ow, _ = image_shape(src, "imresize")
    method = _get_interp_method(interp, (oh, ow, h, w))
    img = to_numpy(src)
    res = img if img.shape[:2] == (h, w) else resize_image(np, img, w, h, method)
    return deliver(res, out, "imresize")


def resize_short(src, size: int, interp: int = 2) -> NDArray:
    """Resize so that the shorter side is ``size``; the longer one is scaled by the same
    ratio, rounded down (MXNet's integer arithmetic)."""
    h, w, _ = image_shape(src, "resize_short")
    size = _positive_int(size, "size", "resize_short")
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, interp=_get_interp_method(interp, (h, w, new_h, new_w)))


def copyMakeBorder(src, top: int, bot: int, left: int, right: int, type: int = 0,  # noqa: N802,A002 -- MXNet's names
                   value: float = 0.0, values: tuple | list = (), out: NDArray | None = None) -> NDArray:
    """Pad an HxWxC image with ``top``/``bot``/``left``/``right`` rows and columns.

    ``type`` (OpenCV's border codes, which MXNet passes on): 0 constant (``values`` per
    channel, missing channels 0, or ``value`` for all), 1 replicate (``aaa|abcd``),
    2 reflect (``cba|abcd``), 3 wrap (``fgh|abcdefgh``), 4 reflect-101 (``dcb|abcd``).
    (MXNet's docstring lists 1-4 in another order; these are what it does.) OpenCV's flag 16
    (``BORDER_ISOLATED``, which detection augmenters pass) changes nothing for a whole image.
    """
    if isinstance(type, int) and not isinstance(type, bool) and type & 16:
        type &= ~16  # noqa: A001 - MXNet's parameter name
    margins = (top, bot, left, right)
    if any(isinstance(m, bool) or int(m) != m or m < 0 for m in margins):
        raise ImageError(f"copyMakeBorder: top, bot, left, right must be integers >= 0, got {margins}")
    top, bot, left, right = (int(m) for m in margins)
    h, w, c = image_shape(src, "copyMakeBorder")
    img = to_numpy(src)
    if type == 0:
        fill = np.full(c, value, np.float64)
        if len(values):
            fill[:] = 0
            given = np.asarray(values, np.float64).ravel()[:c]
            fill[:given.size] = given
        res = np.empty((h + top + bot, w + left + right, c), img.dtype)
        res[...] = fill.astype(img.dtype) if np.issubdtype(img.dtype, np.floating) else np.clip(
            np.rint(fill), np.iinfo(img.dtype).min, np.iinfo(img.dtype).max).astype(img.dtype)
        res[top:top + h, left:left + w] = img
    elif type in _BORDER_MODES:
        res = np.pad(img, ((top, bot), (left, right), (0, 0)), mode=_BORDER_MODES[type])
    else:
        raise ImageError(f"copyMakeBorder: type must be 0 (constant), 1 (replicate), 2 (reflect), "
                         f"3 (wrap) or 4 (reflect 101), got {type!r}")
    return deliver(res, out, "copyMakeBorder")
