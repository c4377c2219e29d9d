"""``_image_resize`` (``mx.nd.image.resize``): OpenCV's ``cv::resize``, which MXNet calls, redone with
separable gathers so that every interp gives OpenCV's numbers.

``interp``: 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos (8 taps). Each axis is a
table of source indices (clamped at the borders: OpenCV's replicated edge) and float32
weights; a pass along the width, then one along the height. As in OpenCV:

- an output of the input's size is a copy; bilinear at exactly half the size is area;
- area when shrinking both axes averages the covered pixels (whole blocks for integer
  factors), else it is bilinear with OpenCV's area offsets;
- float images are weighted in their own precision with float32 weights; uint8 images in
  fixed point (weights times 2048, rounded; the vertical pass of bilinear and bicubic
  follows OpenCV's SIMD arithmetic for 16 and 8 output values at a time, the rest its
  scalar rounding), so results are OpenCV's to the last unit.

>>> import numpy as np, mxasync as mx
>>> img = mx.nd.array(np.arange(0, 240, 10, dtype=np.uint8).reshape(2, 4, 3), dtype='uint8')
>>> mx.nd.image.resize(img, (3, 1), interp=2)[0, :, 0].asnumpy().tolist()  # MXNet 1.9.1 gives the same
[64, 105, 146]
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .._loading import lazy_import
from ..functional import defop
from ..params import Field, OpParam, Shape
from ..registry import register_override

__all__ = ["ResizeParam", "resize_image"]

_F = np.float32
_COEF = 2048  # OpenCV's INTER_RESIZE_COEF_SCALE
_SIMD_S16 = 8  # int16 lanes of OpenCV's 128-bit universal intrinsics


class ResizeParam(OpParam):
    size: Shape = Field(default=(), description="(width, height) of the output, or one int (see keep_ratio)")
    keep_ratio: bool = Field(default=False, description="with one int size: resize the short side to it "
                                                        "and keep the aspect ratio (else a square)")
    interp: int = Field(default=1, description="interpolation (OpenCV's codes): 0 nearest, 1 bilinear, "
                                               "2 bicubic, 3 area, 4 Lanczos")


def _out_hw(p, h, w):
    if len(p.size) == 2:
        return p.size[1], p.size[0]
    if len(p.size) != 1:
        raise ValueError(f"size must be (width, height) or one int, got {p.size}")
    s = p.size[0]
    if not p.keep_ratio:
        return s, s
    if h > w:
        return h * s // w, s
    return s, w * s // h


def _resize_shape(prop, in_shapes):
    (s,) = in_shapes
    if s is None:
        return [None]
    if len(s) not in (3, 4):
        raise prop.error(f"input image must have shape (H, W, C) or (N, H, W, C), but got {tuple(s)}")
    p = prop.params
    if p.interp not in (0, 1, 2, 3, 4):
        raise prop.error(f"interp={p.interp} is not one of 0 nearest, 1 bilinear, 2 bicubic, 3 area, 4 Lanczos")
    try:
        oh, ow = _out_hw(p, s[-3], s[-2])
    except ValueError as exc:
        raise prop.error(str(exc)) from None
    if oh <= 0 or ow <= 0:
        raise prop.error(f"size={p.size} gives an empty output for an input of shape {tuple(s)}")
    return [tuple(s[:-3]) + (oh, ow, s[-1])]


def _same_dtype(prop, in_types):
    return list(in_types), [in_types[0]], []


# -- per-axis tables: (indices (n_out, K), float32 weights (n_out, K)) ---------------------------------
def _cubic(x):
    a = _F(-0.75)
    x = x.astype(_F)
    one = _F(1)
    c0 = ((a * (x + one) - _F(5) * a) * (x + one) + _F(8) * a) * (x + one) - _F(4) * a
    c1 = ((a + _F(2)) * x - (a + _F(3))) * x * x + one
    c2 = ((a + _F(2)) * (one - x) - (a + _F(3))) * (one - x) * (one - x) + one
    return np.stack([c0, c1, c2, one - c0 - c1 - c2], -1)


def _lanczos4(x):
    s45 = 0.70710678118654752440084436210485
    cs = np.array([[1, 0], [-s45, -s45], [0, 1], [s45, -s45], [-1, 0], [s45, s45], [0, -1], [-s45, s45]])
    x = x.astype(_F)
    y0 = -(x + _F(3)).astype(np.float64) * math.pi * 0.25
    dist = (x[:, None] + _F(3)) - np.arange(8, dtype=_F)  # float32, as OpenCV's
    y = -dist.astype(np.float64) * math.pi * 0.25
    with np.errstate(divide="ignore", invalid="ignore"):
        c = ((cs[:, 0] * np.sin(y0)[:, None] + cs[:, 1] * np.cos(y0)[:, None]) / (y * y)).astype(_F)
    c = np.where(np.abs(dist) >= _F(1e-6), c, _F(1e30))  # a tap on the sample itself takes all the weight
    total = np.zeros(len(x), _F)
    for i in range(8):  # OpenCV sums in float, then scales by the float reciprocal
        total = (total + c[:, i]).astype(_F)
    return (c * (_F(1) / total)[:, None]).astype(_F)


@functools.lru_cache(maxsize=128)
def _axis(n_out: int, n_in: int, interp: int, vertical: bool) -> tuple[np.ndarray, np.ndarray]:
    """Taps and weights of one axis; OpenCV moves bilinear's out-of-range positions onto the edge along
    the width only (along the height the weights stay and both taps read the edge row)."""
    scale = 1.0 / (n_out / n_in)  # OpenCV: 1 / inv_scale, inv_scale = n_out / n_in
    d = np.arange(n_out)
    if interp == 3:  # bilinear with area offsets (area when enlarging)
        s = np.floor(d * scale).astype(np.int64)
        f = ((d + 1) - (s + 1) * (n_out / n_in)).astype(_F)
        f = np.where(f <= 0, _F(0), f - np.floor(f)).astype(_F)
    else:
        pos = ((d + 0.5) * scale - 0.5).astype(_F)
        s = np.floor(pos).astype(np.int64)
        f = (pos - s.astype(_F)).astype(_F)
    if interp in (1, 3) and not vertical:
        low = s < 0
        high = s >= n_in - 1
        f = np.where(low | high, _F(0), f)
        s = np.where(low, 0, np.where(high, n_in - 1, s))
    if interp in (1, 3):
        w = np.stack([_F(1) - f, f], -1)
        taps = s[:, None] + np.arange(2)
    elif interp == 2:
        w, taps = _cubic(f), s[:, None] + np.arange(-1, 3)
    else:
        w, taps = _lanczos4(f), s[:, None] + np.arange(-3, 5)
    return np.clip(taps, 0, n_in - 1), w.astype(_F)


@functools.lru_cache(maxsize=128)
def _area_axis(n_out: int, n_in: int) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's area table when shrinking: each output's covered inputs and their shares (padded with 0)."""
    scale = 1.0 / (n_out / n_in)
    rows = []
    for d in range(n_out):
        f1 = d * scale
        f2 = f1 + scale
        cell = min(scale, n_in - f1)
        s1, s2 = math.ceil(f1), math.floor(f2)
        s2 = min(s2, n_in - 1)
        s1 = min(s1, s2)
        row = []
        if s1 - f1 > 1e-3:
            row.append((s1 - 1, (s1 - f1) / cell))
        row += [(s, 1.0 / cell) for s in range(s1, s2)]
        if f2 - s2 > 1e-3:
            row.append((s2, min(min(f2 - s2, 1.0), cell) / cell))
        rows.append(row)
    k = max(len(r) for r in rows)
    taps = np.zeros((n_out, k), np.int64)
    w = np.zeros((n_out, k), _F)
    for d, row in enumerate(rows):
        for j, (s, a) in enumerate(row):
            taps[d, j], w[d, j] = s, a
    return taps, w


# -- passes ---------------------------------------------------------------------------------------------
def _pass(xp, x, axis, taps, w, acc):
    """Weighted sum of the taps along ``axis`` (-3 rows, -2 columns), tap by tap in order, in ``acc``."""
    taps, w = xp.asarray(taps), xp.asarray(w.astype(acc))
    shape = [1] * x.ndim
    shape[axis] = taps.shape[0]
    out = None
    for k in range(taps.shape[1]):
        term = xp.take(x, taps[:, k], axis=axis) * w[:, k].reshape(shape)
        out = term if out is None else out + term
    return out


def _vertical_u8(xp, rows, taps, beta):
    """OpenCV's fixed-point vertical pass of uint8 images: rows hold horizontal sums (weights x 2048)."""
    k = taps.shape[1]
    flat = rows.reshape(rows.shape[:-3] + (rows.shape[-3], -1))  # (..., H_in, W_out * C), int32
    width = flat.shape[-1]
    ib = np.rint(beta * _COEF).astype(np.int32)

    def tap(a, j):
        return xp.take(a, xp.asarray(taps[:, j]), axis=-2)

    def weight(j, dtype):
        return xp.asarray(ib[:, j].astype(dtype)).reshape(-1, 1)

    if k == 2:  # VResizeLinearVec_32s8u: (S >> 4) * b >> 16, summed, + 2 >> 2 (its tail overlaps: everywhere)
        shifted = flat >> 4
        out = (((tap(shifted, 0) * weight(0, np.int32)) >> 16) + ((tap(shifted, 1) * weight(1, np.int32)) >> 16)
               + 2) >> 2
    else:
        vec = width - width % _SIMD_S16 if k == 4 else 0
        out = xp.empty(flat.shape[:-2] + (len(taps), width), dtype="int32")
        if vec:  # VResizeCubicVec_32s8u: float32 multiply-adds, rounded to nearest even
            f = flat[..., :vec].astype("float32")
            b = [xp.asarray((ib[:, j].astype(_F) * _F(1.0 / (_COEF * _COEF))).astype(_F)).reshape(-1, 1)
                 for j in range(4)]
            simd = tap(f, 0) * b[0] + (tap(f, 1) * b[1] + (tap(f, 2) * b[2] + tap(f, 3) * b[3]))
            out[..., :vec] = xp.rint(simd)
        if vec < width:  # the scalar rounding: (sum S * b + 2**21) >> 22
            tail = flat[..., vec:].astype("int64")
            total = sum(tap(tail, j) * weight(j, np.int64) for j in range(k))
            out[..., vec:] = (total + (1 << 21)) >> 22
    return xp.clip(out, 0, 255).astype("uint8").reshape(rows.shape[:-3] + (len(taps), -1, rows.shape[-1]))


def _area_fast(xp, x, fy, fx, oh, ow):
    """Whole-block averages for integer shrink factors (uint8: OpenCV's rounding)."""
    blocks = x[..., : oh * fy, : ow * fx, :].reshape(x.shape[:-3] + (oh, fy, ow, fx, x.shape[-1]))
    if x.dtype == np.uint8:
        total = blocks.astype("int32").sum(axis=(-4, -2))
        if fy == 2 and fx == 2 and x.shape[-1] != 2:  # OpenCV's SIMD 2x2 average (none for 2 channels)
            return ((total + 2) >> 2).astype("uint8")
        return xp.clip(xp.rint(total.astype("float32") * _F(1.0 / (fy * fx))), 0, 255).astype("uint8")
    acc = "float64" if x.dtype == np.float64 else "float32"
    total = None
    for i in range(fy):
        for j in range(fx):
            v = blocks[..., i, :, j, :].astype(acc)
            total = v if total is None else total + v
    return (total * np.dtype(acc).type(1.0 / (fy * fx))).astype(x.dtype)


def _resize(xp, p, x):
    h, w = x.shape[-3], x.shape[-2]
    oh, ow = _out_hw(p, h, w)
    if (oh, ow) == (h, w):
        return x.copy()
    if p.interp == 0:  # OpenCV's resizeNN: floor(dst * (1 / inv_scale))
        rows = np.minimum(np.floor(np.arange(oh) * (1.0 / (oh / h))).astype(np.int64), h - 1)
        cols = np.minimum(np.floor(np.arange(ow) * (1.0 / (ow / w))).astype(np.int64), w - 1)
        return xp.take(xp.take(x, xp.asarray(rows), axis=-3), xp.asarray(cols), axis=-2)
    interp = p.interp
    sy, sx = h / oh, w / ow
    if interp == 1 and sy == 2 and sx == 2:
        interp = 3
    if interp == 3 and sy >= 1 and sx >= 1:
        if sy == int(sy) and sx == int(sx):
            return _area_fast(xp, x, int(sy), int(sx), oh, ow)
        acc = "float64" if x.dtype == np.float64 else "float32"
        out = _pass(xp, _pass(xp, x.astype(acc, copy=False), -2, *_area_axis(ow, w), acc), -3, *_area_axis(oh, h), acc)
        return _cast(xp, out, x.dtype)
    ytaps, yw = _axis(oh, h, interp, True)
    xtaps, xw = _axis(ow, w, interp, False)
    if x.dtype == np.uint8:
        ialpha = np.rint(xw * _COEF).astype(np.int32)
        rows = _pass(xp, x.astype("int32"), -2, xtaps, ialpha, "int32")
        return _vertical_u8(xp, rows, ytaps, yw)
    acc = "float64" if x.dtype == np.float64 else "float32"
    return _cast(xp, _pass(xp, _pass(xp, x.astype(acc, copy=False), -2, xtaps, xw, acc), -3, ytaps, yw, acc), x.dtype)


def _cast(xp, out, dtype):
    if np.issubdtype(np.dtype(dtype), np.integer):
        info = np.iinfo(dtype)
        return xp.clip(xp.rint(out), info.min, info.max).astype(dtype)
    return out.astype(dtype, copy=False)


defop("_image_resize", param=ResizeParam, fwd=_resize, shape=_resize_shape, dtype=_same_dtype,
      doc="Resize an (H, W, C) or (N, H, W, C) image with OpenCV's nearest, bilinear, "
                                     "bicubic, area or Lanczos interpolation.")


# -- OpenCV itself on the host ---------------------------------------------------------------------------
# Where OpenCV is installed the numpy backend calls it, as MXNet does: 10-200x faster than the gathers
# above (bicubic on a 256x320 image: ~0.15 ms against ~5 ms), which matters in data pipelines.  The
# opencv-python wheels are built with Intel IPP, whose uint8 bicubic can differ from MXNet's own
# OpenCV build (and from the gathers) by one grey level; float32 agrees to rounding.
# float64 stays on the gathers: OpenCV weights it in float32 (1e-6 relative from MXNet's numbers).
_CV_DTYPES = frozenset({np.dtype(np.uint8), np.dtype(np.float32)})


@functools.cache
def _opencv():
    try:
        return lazy_import("cv2")
    except ImportError:
        return None


def _resize_opencv(x, width: int, height: int, interp: int):
    """``cv2.resize`` over an (H, W, C) or (N, H, W, C) numpy array, or NotImplemented where
    OpenCV is missing or cannot take the array (dtype, channel count)."""
    cv2 = _opencv()
    if cv2 is None or x.dtype not in _CV_DTYPES or not 1 <= x.shape[-1] <= 512 or x.ndim not in (3, 4):
        return NotImplemented
    if x.shape[-3:-1] == (height, width):
        return x.copy()
    flag = (cv2.INTER_NEAREST, cv2.INTER_LINEAR, cv2.INTER_CUBIC, cv2.INTER_AREA, cv2.INTER_LANCZOS4)[interp]
    images = x if x.ndim == 4 else x[None]
    out = np.empty((images.shape[0], height, width, x.shape[-1]), x.dtype)
    for i, image in enumerate(images):
        res = cv2.resize(np.ascontiguousarray(image), (width, height), interpolation=flag)
        out[i] = res.reshape(height, width, x.shape[-1])  # OpenCV drops a single channel axis
    return out if x.ndim == 4 else out[0]


@register_override("_image_resize", backend="numpy")
def _resize_host(xp, p, x):
    oh, ow = _out_hw(p, x.shape[-3], x.shape[-2])
    return _resize_opencv(x, ow, oh, p.interp)


def resize_image(xp, x, width: int, height: int, interp: int = 1, opencv: bool = True):
    """The kernel on a raw (H, W, C) or (N, H, W, C) array: OpenCV's resize to ``(width, height)`` with
    ``interp`` 0-4 (what ``mx.image.imresize`` runs, as MXNet's ``_cvimresize`` runs OpenCV): OpenCV
    itself for numpy arrays where it is installed (unless ``opencv=False``), else the gathers."""
    if opencv and isinstance(x, np.ndarray):  # OpenCV takes host arrays
        out = _resize_opencv(x, width, height, interp)
        if out is not NotImplemented:
            return out
    return _resize(xp, ResizeParam(size=(width, height), interp=interp), x)
