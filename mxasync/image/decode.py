"""``imread`` and ``imdecode``: image bytes to an HxWxC ``uint8`` NDArray (RGB unless ``to_rgb=0``).

Decoding is done by :func:`mxasync.io.image.codec.decode` (simplejpeg, OpenCV or
Pillow, whichever is installed), so the pixels match MXNet's OpenCV for PNG and
for the JPEGs we checked.

>>> import numpy as np
>>> from mxasync.io.image import codec
>>> png = codec.encode(np.full((2, 3, 3), (255, 0, 0), np.uint8), ".png")
>>> img = imdecode(png)
>>> img.shape, img.dtype.__name__, img.asnumpy()[0, 0].tolist()
((2, 3, 3), 'uint8', [255, 0, 0])
>>> imdecode(png, to_rgb=0).asnumpy()[0, 0].tolist(), imdecode(png, flag=0).shape
([0, 0, 255], (2, 3, 1))
"""

from __future__ import annotations

import os

import numpy as np

from ..base import MXAsyncError, MXAsyncValueError
from ..io.image import codec
from ..ndarray import NDArray
from ._arrays import ImageError, deliver

__all__ = ["imread", "imdecode"]


def _check_flag(flag: int, where: str) -> None:
    if flag not in (0, 1):
        raise ImageError(f"{where}: flag must be 0 (grayscale, HxWx1) or 1 (colour, HxWx3), got {flag!r}")


def _finish(img: np.ndarray, out: NDArray | None, where: str) -> NDArray:
    if img.ndim == 2:
        img = img[:, :, None]
    return deliver(img, out, where, "image")


def _decode(data: bytes, flag: int, to_rgb: bool, where: str, max_pixels: int | None) -> np.ndarray:
    try:
        return codec.decode(data, flag=int(flag), channel_order="rgb" if to_rgb else "bgr", max_pixels=max_pixels)
    except MXAsyncValueError as e:  # above the pixel limit: not an invalid image
        raise MXAsyncValueError(f"{where}: {str(e).removeprefix('decode: ')}") from None
    except MXAsyncError as e:
        raise MXAsyncError(f"{where}: decoding failed, invalid image: {e}") from None


def imdecode(buf, flag: int = 1, to_rgb: bool | int = 1, out: NDArray | None = None,
             max_pixels: int | None = None) -> NDArray:
    """Decode an encoded image (``bytes``, ``bytearray``, a uint8 numpy array or NDArray).

    ``flag``: 1 colour (HxWx3), 0 grayscale (HxWx1). ``to_rgb``: 1 for RGB (MXNet's
    default), 0 for OpenCV's BGR. ``out``: an NDArray of the right shape to write into.
    ``max_pixels``: refuse images whose header claims more pixels (default:
    ``MXASYNC_IMAGE_MAX_PIXELS`` or 178,956,970; 0 turns the check off).
    """
    _check_flag(flag, "imdecode")
    if isinstance(buf, NDArray):
        data = buf.asnumpy().astype(np.uint8, copy=False).tobytes()
    elif isinstance(buf, (bytes, bytearray, memoryview)):
        data = bytes(buf)
    elif isinstance(buf, np.ndarray):
        data = buf.tobytes()
    else:
        raise ImageError(f"imdecode: buf must be bytes, bytearray, a numpy array or an NDArray, got "
                         f"{type(buf).__name__} (encode a str to bytes first)")
    return _finish(_decode(data, flag, bool(to_rgb), "imdecode", max_pixels), out, "imdecode")


def imread(filename: str | os.PathLike[str], flag: int = 1, to_rgb: bool | int = True,
           out: NDArray | None = None, max_pixels: int | None = None) -> NDArray:
    """Read and decode an image file into an HxWxC ``uint8`` NDArray (see :func:`imdecode`)."""
    _check_flag(flag, "imread")
    try:
        with open(filename, "rb") as f:
            data = f.read()
    except OSError as e:
        raise MXAsyncError(f"imread: cannot read {os.fspath(filename)!r}: {e.strerror or e}") from None
    where = f"imread({os.fspath(filename)!r})"
    return _finish(_decode(data, flag, bool(to_rgb), where, max_pixels), out, where)
