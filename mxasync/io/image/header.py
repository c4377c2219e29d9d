"""Image dimensions from the header alone, and the pixel limit every decode checks first.

A 631-byte JPEG can claim 30000x30000 pixels: decoding it would allocate 2.7 GB
for the pixels (more inside the decoders) and take a minute. So before any
decoder runs, the width and height are read from the header: JPEG SOF markers
and PNG's IHDR are parsed here (no library needed); other formats ask Pillow's
``Image.open``, which reads only the header. Images above the limit are refused.

The limit is ``max_pixels`` where a function takes it, else the environment
variable ``MXASYNC_IMAGE_MAX_PIXELS``, else :data:`DEFAULT_MAX_PIXELS`
(178,956,970 pixels, about 13377x13377, Pillow's decompression-bomb threshold;
537 MB as RGB). ``0`` or a negative value turns the check off.

>>> import numpy as np
>>> from mxasync.io.image import codec
>>> image_size(codec.encode(np.zeros((5, 7, 3), np.uint8), ".png"))
(7, 5)
>>> check_pixels(b"\\x89PNG\\r\\n\\x1a\\n\\0\\0\\0\\rIHDR\\0\\0u0\\0\\0u0", "decode")
Traceback (most recent call last):
...
mxasync.base.MXAsyncValueError: decode: the image is 30000x30000 = 900,000,000 pixels, above the limit of 178,956,970 pixels (raise it with max_pixels= or MXASYNC_IMAGE_MAX_PIXELS; 0 turns the check off)
"""

from __future__ import annotations

import io
import struct

from ...base import MXAsyncValueError, env_int

__all__ = ["DEFAULT_MAX_PIXELS", "image_size", "max_pixels", "check_pixels"]

DEFAULT_MAX_PIXELS = 2 * 89_478_485

# SOF0-SOF15 carry the frame size; C4 (DHT), C8 (JPG) and CC (DAC) share the range but do not.
_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
_STANDALONE = frozenset(range(0xD0, 0xD8)) | {0x01, 0xD8}


def _jpeg_size(buf: bytes) -> tuple[int, int] | None:
    pos, n = 2, len(buf)
    while pos < n:
        if buf[pos] != 0xFF:  # stray bytes between segments: libjpeg skips to the next marker too
            nxt = buf.find(b"\xff", pos)
            if nxt < 0:
                return None
            pos = nxt
        while pos < n and buf[pos] == 0xFF:  # fill bytes
            pos += 1
        if pos >= n:
            return None
        marker = buf[pos]
        pos += 1
        if marker in _STANDALONE:
            continue
        if marker in (0xD9, 0xDA):  # end of image, or scan data before any frame header
            return None
        if pos + 2 > n:
            return None
        (length,) = struct.unpack_from(">H", buf, pos)
        if marker in _SOF:
            if pos + 7 > n:
                return None
            height, width = struct.unpack_from(">HH", buf, pos + 3)
            return width, height
        if length < 2:
            return None
        pos += length
    return None


def image_size(buf: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the header of an encoded image, or ``None`` when it cannot tell."""
    if buf[:3] == b"\xff\xd8\xff":
        return _jpeg_size(buf)
    if buf[:8] == b"\x89PNG\r\n\x1a\n" and buf[12:16] == b"IHDR" and len(buf) >= 24:
        width, height = struct.unpack_from(">II", buf, 16)
        return width, height
    try:
        from PIL import Image
    except ImportError:
        return None
    try:
        with Image.open(io.BytesIO(buf)) as im:  # reads the header only
            return im.size
    except Image.DecompressionBombError as e:  # Pillow's own guard fired on the header
        raise MXAsyncValueError(f"image refused by Pillow: {e}") from None
    except Exception:  # noqa: BLE001 -- not an image Pillow knows: let the decoders say why
        return None


def max_pixels(override: int | None = None) -> int:
    """The pixel limit in force: ``override``, else ``MXASYNC_IMAGE_MAX_PIXELS``, else the default (<= 0: none)."""
    if override is not None:
        return int(override)
    return env_int(DEFAULT_MAX_PIXELS, "MXASYNC_IMAGE_MAX_PIXELS")


def check_pixels(buf: bytes, where: str, limit: int | None = None) -> tuple[int, int] | None:
    """Refuse ``buf`` when its header claims more pixels than the limit; its ``(width, height)`` if known."""
    limit = max_pixels(limit)
    size = image_size(buf) if limit > 0 else None
    if size is not None and size[0] * size[1] > limit:
        w, h = size
        raise MXAsyncValueError(
            f"{where}: the image is {w}x{h} = {w * h:,} pixels, above the limit of {limit:,} pixels "
            "(raise it with max_pixels= or MXASYNC_IMAGE_MAX_PIXELS; 0 turns the check off)")
    return size
