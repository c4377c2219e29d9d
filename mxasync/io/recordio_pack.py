"""MXNet's image-record layout inside a RecordIO record: ``IRHeader`` + payload (``pack``/``unpack``).

``IRHeader`` is flag, label, id, id2 as ``uint32, float32, uint64, uint64``,
followed by ``flag`` extra float32 labels when the label is a vector.
"""

from __future__ import annotations

import numbers
import struct
from collections import namedtuple

import numpy as np

from ..base import MXAsyncError

__all__ = ["IRHeader", "pack", "unpack", "pack_img", "unpack_img"]

IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
IRHeader.__doc__ = """Image-record header: ``flag`` (0 or the label count), ``label``, ``id``, ``id2``."""
_IR = struct.Struct("<IfQQ")


def pack(header: IRHeader | tuple, s: bytes) -> bytes:
    """Prefix ``s`` with an image-record header; a non-scalar label becomes ``flag`` float32 values.

    >>> h, body = unpack(pack(IRHeader(0, [1, 2.5], 3, 0), b"x"))
    >>> h.flag, h.label.tolist(), h.id, body
    (2, [1.0, 2.5], 3, b'x')
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
    else:
        label = np.asarray(header.label, dtype=np.float32).ravel()
        header = header._replace(flag=label.size, label=0)
        s = label.tobytes() + bytes(s)
    try:
        return _IR.pack(int(header.flag), float(header.label), int(header.id), int(header.id2)) + bytes(s)
    except struct.error as e:
        raise MXAsyncError(f"cannot pack image-record header {tuple(header)}: {e} "
                           "(id and id2 must fit in uint64)") from e


def unpack(s: bytes) -> tuple[IRHeader, bytes]:
    """Split a record into its ``IRHeader`` and payload (see ``pack``)."""
    if len(s) < _IR.size:
        raise MXAsyncError(f"record of {len(s)} bytes is too short for an image-record header ({_IR.size} bytes)")
    header = IRHeader(*_IR.unpack_from(s))
    start = _IR.size
    if header.flag > 0:
        end = start + 4 * header.flag
        if len(s) < end:
            raise MXAsyncError(f"record of {len(s)} bytes is too short for its {header.flag} float32 labels")
        header = header._replace(label=np.frombuffer(s, np.float32, header.flag, start).copy())
        start = end
    return header, bytes(s[start:])


def pack_img(header: IRHeader | tuple, img: np.ndarray, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode an HxW or HxWxC uint8 image in **BGR** order (as OpenCV and MXNet do) and ``pack`` it.

    ``quality`` is the JPEG quality (1-100) or the PNG compression level (0-9).

    >>> img = np.zeros((4, 6, 3), np.uint8); img[..., 2] = 200   # pure red in BGR
    >>> h, out = unpack_img(pack_img(IRHeader(0, 1.0, 0, 0), img, img_fmt=".png"))
    >>> out.shape, out[0, 0].tolist()
    ((4, 6, 3), [0, 0, 200])
    """
    from .image import codec

    return pack(header, codec.encode(img, img_fmt, quality=quality, channel_order="bgr"))


def unpack_img(s: bytes, iscolor: int = -1) -> tuple[IRHeader, np.ndarray]:
    """``unpack`` and decode the image, in **BGR** order like MXNet (OpenCV's ``imdecode`` flags).

    ``iscolor``: -1 keeps the stored channels (HxW for gray, HxWx3 BGR for color),
    0 gives HxW gray, 1 gives HxWx3 BGR.
    """
    from .image import codec

    header, img = unpack(s)
    return header, codec.decode(img, flag=iscolor, channel_order="bgr")
