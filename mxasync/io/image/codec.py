"""Image decode, encode and resize behind three small functions.

Which library does the work is decided here and nowhere else:

* JPEG decode: ``simplejpeg`` (libjpeg-turbo, releases the GIL, the fastest we
  measured, see ``docs/io.md``), then OpenCV, then Pillow;
* other formats: OpenCV when installed, else Pillow (the any-format fallback);
* resize: OpenCV when installed (about 6x faster than Pillow), else Pillow;
* encode: JPEG with simplejpeg, OpenCV or Pillow; PNG and the rest with Pillow
  or OpenCV.

A decoder that fails hands the buffer to Pillow before giving up with an
``MXAsyncError``. ``MXASYNC_IMAGE_CODECS`` (a comma list such as
``"pillow"``) or ``set_codecs`` restricts and orders the libraries used.

Arrays are HxW (gray) or HxWxC ``uint8``; ``channel_order`` says whether
colour channels are RGB (mxasync's pipeline, ``mx.image``) or BGR (OpenCV,
``mx.recordio.pack_img``/``unpack_img``).

>>> import numpy as np
>>> img = np.zeros((8, 12, 3), np.uint8); img[..., 0] = 255
>>> out = decode(encode(img, ".png"))
>>> out.shape, out[0, 0].tolist()
((8, 12, 3), [255, 0, 0])
>>> resize(out, (6, 4)).shape
(4, 6, 3)
"""

from __future__ import annotations

import importlib
import io
import os
from collections.abc import Sequence
from functools import cache
from types import ModuleType

import numpy as np

from ...base import MXAsyncError
from .header import check_pixels

__all__ = ["decode", "encode", "resize", "set_codecs", "codecs", "INTER_NAMES"]

_ALL = ("simplejpeg", "opencv", "pillow")
_IMPORT = {"simplejpeg": "simplejpeg", "opencv": "cv2", "pillow": "PIL.Image"}
_enabled: tuple[str, ...] | None = None

#: MXNet/OpenCV interpolation codes accepted by ``resize``.
INTER_NAMES = {0: "nearest", 1: "bilinear", 2: "bicubic", 3: "area", 4: "lanczos"}


@cache
def _import(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(_IMPORT[name])
    except ImportError:
        return None


def set_codecs(names: Sequence[str] | None) -> None:
    """Use only ``names`` (from ``simplejpeg``, ``opencv``, ``pillow``); ``None`` restores the default."""
    global _enabled
    if names is not None:
        bad = [n for n in names if n not in _ALL]
        if bad:
            raise MXAsyncError(f"unknown image codec(s) {bad}; choose from {list(_ALL)}")
        names = tuple(names)
    _enabled = names


def _allowed() -> tuple[str, ...]:
    if _enabled is not None:
        return _enabled
    env = os.environ.get("MXASYNC_IMAGE_CODECS", "").strip()
    if env:
        names = tuple(n.strip() for n in env.split(",") if n.strip())
        return tuple(n for n in names if n in _ALL)
    return _ALL


def _lib(name: str) -> ModuleType | None:
    return _import(name) if name in _allowed() else None


def codecs() -> dict[str, str | None]:
    """The library chosen for each job, or ``None`` where nothing is installed.

    >>> sorted(codecs())
    ['decode', 'decode_jpeg', 'encode_jpeg', 'encode_png', 'resize']
    """
    def first(*names: str) -> str | None:
        return next((n for n in names if _lib(n) is not None), None)

    return {
        "decode_jpeg": first("simplejpeg", "opencv", "pillow"),
        "decode": first("opencv", "pillow"),
        "resize": first("opencv", "pillow"),
        "encode_jpeg": first("simplejpeg", "opencv", "pillow"),
        "encode_png": first("pillow", "opencv"),
    }


def _is_jpeg(buf: bytes) -> bool:
    return buf[:3] == b"\xff\xd8\xff"


def _swap_rb(img: np.ndarray) -> np.ndarray:
    if img.ndim == 3 and img.shape[2] in (3, 4):
        order = [2, 1, 0, 3][: img.shape[2]]
        return np.ascontiguousarray(img[..., order])
    return img


def _decode_simplejpeg(sj: ModuleType, buf: bytes, flag: int, bgr: bool) -> np.ndarray:
    gray = flag == 0 or (flag < 0 and sj.decode_jpeg_header(buf)[2] == "Gray")
    if gray:
        return sj.decode_jpeg(buf, colorspace="GRAY")[:, :, 0]
    return sj.decode_jpeg(buf, colorspace="BGR" if bgr else "RGB")


def _decode_cv2(cv2: ModuleType, buf: bytes, flag: int, bgr: bool) -> np.ndarray:
    mode = {1: cv2.IMREAD_COLOR, 0: cv2.IMREAD_GRAYSCALE}.get(flag, cv2.IMREAD_UNCHANGED)
    img = cv2.imdecode(np.frombuffer(buf, np.uint8), mode)
    if img is None:
        raise ValueError("OpenCV cannot decode it")
    if img.dtype != np.uint8:  # 16-bit PNG/TIFF under IMREAD_UNCHANGED
        img = (img >> 8).astype(np.uint8) if img.dtype == np.uint16 else np.clip(img, 0, 255).astype(np.uint8)
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    return img if bgr else _swap_rb(img)


def _decode_pillow(image: ModuleType, buf: bytes, flag: int, bgr: bool) -> np.ndarray:
    with image.open(io.BytesIO(buf)) as im:
        im.load()
        if flag == 0:
            mode = "L"
        elif flag > 0:
            mode = "RGB"
        elif im.mode in ("1", "L", "I", "I;16", "F"):
            mode = "L"
        elif im.mode in ("RGBA", "LA", "PA") or "transparency" in im.info:
            mode = "RGBA"
        else:
            mode = "RGB"
        if im.mode in ("I", "I;16") and mode == "L":
            arr = (np.asarray(im, dtype=np.uint32) >> 8).astype(np.uint8)
        else:
            arr = np.asarray(im.convert(mode) if im.mode != mode else im)
    arr = np.array(arr, dtype=np.uint8, copy=True)
    return _swap_rb(arr) if bgr else arr


def decode(buf: bytes | bytearray | memoryview | np.ndarray, flag: int = 1, channel_order: str = "rgb",
           max_pixels: int | None = None) -> np.ndarray:
    """Decode an encoded image into a ``uint8`` array.

    ``flag`` follows OpenCV/MXNet: 1 colour (HxWx3), 0 gray (HxW), -1 as stored
    (HxW for gray, HxWx3, or HxWx4 with alpha). ``channel_order`` is ``"rgb"``
    or ``"bgr"``. Raises ``MXAsyncError`` when no library can decode it, and
    ``MXAsyncValueError`` when the header claims more than ``max_pixels`` pixels
    (see :mod:`.header`: checked before any decoder allocates).
    """
    if channel_order not in ("rgb", "bgr"):
        raise MXAsyncError(f"decode: channel_order must be 'rgb' or 'bgr', got {channel_order!r}")
    data = buf.tobytes() if isinstance(buf, np.ndarray) else bytes(buf)
    if not data:
        raise MXAsyncError("decode: empty image buffer")
    check_pixels(data, "decode", max_pixels)
    bgr = channel_order == "bgr"
    tries: list[tuple[str, object]] = []
    if _is_jpeg(data):
        tries.append(("simplejpeg", _decode_simplejpeg))
    tries += [("opencv", _decode_cv2), ("pillow", _decode_pillow)]
    errors: list[str] = []
    for name, fn in tries:
        lib = _lib(name)
        if lib is None:
            continue
        try:
            return fn(lib, data, flag, bgr)  # type: ignore[operator]
        except Exception as e:  # noqa: BLE001 -- fall through to the next library
            errors.append(f"{name}: {type(e).__name__}: {e}")
    if not errors:
        raise MXAsyncError("decode: no image library is installed; pip install 'mxasync[image]' (Pillow, simplejpeg)")
    kind = "JPEG" if _is_jpeg(data) else f"image starting with {data[:8]!r}"
    raise MXAsyncError(f"cannot decode {kind} of {len(data)} bytes ({'; '.join(errors)})")


def _as_encodable(img: np.ndarray, fmt: str) -> np.ndarray:
    img = np.asarray(img)
    if img.dtype != np.uint8:
        raise MXAsyncError(f"encode{fmt}: image must be uint8, got {img.dtype}")
    if img.ndim == 3 and img.shape[2] == 1:
        img = img[:, :, 0]
    if not (img.ndim == 2 or (img.ndim == 3 and img.shape[2] in (3, 4))):
        raise MXAsyncError(f"encode{fmt}: image must be HxW, HxWx1, HxWx3 or HxWx4, got shape {img.shape}")
    return np.ascontiguousarray(img)


def encode(img: np.ndarray, fmt: str = ".jpg", quality: int = 95, channel_order: str = "rgb") -> bytes:
    """Encode a ``uint8`` image; ``fmt`` is an extension such as ``".jpg"`` or ``".png"``.

    ``quality`` is the JPEG quality (1-100) or, for PNG, the zlib compression
    level (clamped to 0-9, as OpenCV and MXNet's ``pack_img`` do).
    """
    fmt = fmt.lower() if fmt.startswith(".") else "." + fmt.lower()
    img = _as_encodable(img, fmt)
    rgb = _swap_rb(img) if channel_order == "bgr" else img
    jpeg = fmt in (".jpg", ".jpeg")
    if jpeg and img.ndim == 3 and img.shape[2] == 4:
        raise MXAsyncError("encode.jpg: JPEG has no alpha channel; drop it or use '.png'")
    order = ("simplejpeg", "opencv", "pillow") if jpeg else ("pillow", "opencv")
    for name in order:
        lib = _lib(name)
        if lib is None:
            continue
        if name == "simplejpeg":
            gray = rgb.ndim == 2
            return lib.encode_jpeg(rgb[:, :, None] if gray else rgb, quality=int(quality),
                                   colorspace="GRAY" if gray else "RGB", colorsubsampling="420")
        if name == "opencv":
            params = ([lib.IMWRITE_JPEG_QUALITY, int(quality)] if jpeg
                      else [lib.IMWRITE_PNG_COMPRESSION, min(max(int(quality), 0), 9)] if fmt == ".png" else [])
            ok, out = lib.imencode(fmt, _swap_rb(rgb), params)
            if not ok:
                raise MXAsyncError(f"encode{fmt}: OpenCV failed to encode an image of shape {img.shape}")
            return out.tobytes()
        pil = lib.fromarray(rgb)
        kwargs: dict[str, object] = {}
        if jpeg:
            kwargs = {"quality": int(quality)}
        elif fmt == ".png":
            kwargs = {"compress_level": min(max(int(quality), 0), 9)}
        out_io = io.BytesIO()
        try:
            pil.save(out_io, format=lib.registered_extensions().get(fmt, fmt[1:]).upper(), **kwargs)
        except (KeyError, ValueError, OSError) as e:
            raise MXAsyncError(f"encode{fmt}: Pillow cannot write this format: {e}") from e
        return out_io.getvalue()
    raise MXAsyncError(f"encode{fmt}: no image library is installed; pip install 'mxasync[image]'")


def _resize_pillow(image: ModuleType, img: np.ndarray, size: tuple[int, int], interp: int) -> np.ndarray:
    resample = [image.NEAREST, image.BILINEAR, image.BICUBIC, image.BOX, image.LANCZOS][interp]
    if img.dtype == np.uint8 and (img.ndim == 2 or img.shape[2] in (3, 4)):
        return np.asarray(image.fromarray(img).resize(size, resample))
    planes = img[:, :, None] if img.ndim == 2 else img
    out = [np.asarray(image.fromarray(np.ascontiguousarray(planes[:, :, c], dtype=np.float32))
                      .resize(size, resample)) for c in range(planes.shape[2])]
    res = np.stack(out, axis=2)
    if img.dtype == np.uint8:
        res = np.clip(np.rint(res), 0, 255)
    res = res.astype(img.dtype, copy=False)
    return res[:, :, 0] if img.ndim == 2 else res


def resize(img: np.ndarray, size: tuple[int, int], interp: int = 1) -> np.ndarray:
    """Resize an HxW[xC] ``uint8`` or ``float32`` image to ``size = (width, height)``.

    ``interp`` uses MXNet's codes: 0 nearest, 1 bilinear, 2 bicubic, 3 area,
    4 lanczos, 9 auto (area when shrinking, bicubic when enlarging).
    """
    w, h = int(size[0]), int(size[1])
    if w <= 0 or h <= 0:
        raise MXAsyncError(f"resize: target size (width={w}, height={h}) must be positive")
    if img.shape[0] == h and img.shape[1] == w:
        return img
    if interp == 9:
        interp = 3 if w * h < img.shape[0] * img.shape[1] else 2
    if interp not in INTER_NAMES:
        raise MXAsyncError(f"resize: interp must be one of {sorted(INTER_NAMES)} or 9 (auto), got {interp}")
    cv2 = _lib("opencv")
    if cv2 is not None:
        flags = [cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_AREA, cv2.INTER_LANCZOS4][interp]
        out = cv2.resize(np.ascontiguousarray(img), (w, h), interpolation=flags)
        return out[:, :, None] if img.ndim == 3 and out.ndim == 2 else out
    pil = _lib("pillow")
    if pil is None:
        raise MXAsyncError("resize: needs OpenCV or Pillow; pip install 'mxasync[image]'")
    return _resize_pillow(pil, img, (w, h), interp)
