"""The scale arithmetic of MXNet's quantization (``quantization_utils.h``), in float32 as MXNet's.

A quantized tensor ``q`` with range ``[lo, hi]`` stands for ``q / scale`` where ``scale`` is
``quantized_range / max(|lo|, |hi|)``.  MXNet's MKLDNN kernels use a quantized range of 127.5
(int8) / 255.5 (uint8) for data (``GetQuantizeScale``) and 127 / 255 / 2**31-1 where a kernel
goes through ``MinAbs(MinValue, MaxValue)`` (``_contrib_quantize``, ``requantize``); both are kept
here under their MXNet names.  Conversions round half to even (MKLDNN's reorders and output
conversions) and saturate.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32
INT8_RANGE = F32(127.5)     # kInt8Range
UINT8_RANGE = F32(255.5)    # kUint8Range
INT32_MAX = 2147483647      # kInt32Range
LIMITS = {"int8": (-128, 127), "uint8": (0, 255), "int32": (-2 ** 31, 2 ** 31 - 1)}
# MinAbs(MinValue<T>, MaxValue<T>): the symmetric range of a signed type, the max of an unsigned one
MIN_ABS = {"int8": 127, "uint8": 0, "int32": INT32_MAX}


def dtype_name(dtype) -> str:
    return np.dtype(dtype).name


def type_names(types) -> list:
    """Inferred dtypes (strings, numpy types or None) as dtype names, None kept."""
    return [None if t is None else np.dtype(t).name for t in types]


def scalar(arr) -> np.float32:
    """The float32 value of a 1-element range array (numpy or cupy)."""
    return F32(float(arr.reshape(-1)[0]))


def max_abs(lo, hi) -> np.float32:
    return F32(max(abs(F32(lo)), abs(F32(hi))))


def quantize_scale(dtype, lo, hi) -> np.float32:
    """``GetQuantizeScale``: 127.5 (int8) or 255.5 (uint8) over max(|lo|, |hi|); 2**31-1 for a zero range."""
    rng = max_abs(lo, hi)
    q = INT8_RANGE if dtype_name(dtype) == "int8" else UINT8_RANGE
    return F32(q / rng) if rng else F32(INT32_MAX)


def saturate(xp, x, dtype):
    """Round half to even and clip into ``dtype`` (an MKLDNN f32 -> integer conversion)."""
    lo, hi = LIMITS[dtype_name(dtype)]
    return xp.clip(xp.rint(x), lo, hi).astype(dtype)


def to_quantized(xp, x, scale, dtype):
    """``x * scale`` in float32, rounded and saturated into ``dtype``."""
    return saturate(xp, x.astype(F32, copy=False) * F32(scale), dtype)


def range_for_multiplication(a_lo, a_hi, b_lo, b_hi, b_unsigned: bool = False) -> tuple[np.float32, np.float32]:
    """``QuantizationRangeForMultiplication`` into int32: the range an int32 product of an int8
    tensor ``a`` and an int8 (S8S8) or uint8 (S8U8, ``b_unsigned``) tensor ``b`` stands for."""
    step_a = F32(max_abs(a_lo, a_hi) / F32(127))
    step_b = F32(max_abs(b_lo, b_hi) / F32(255 if b_unsigned else 127))
    hi = F32(F32(step_a * step_b) * F32(INT32_MAX))
    return F32(-hi), hi


def out_type_for(out_type: str, min_calib, max_calib) -> str:
    """``GetQuantizeOutputType``: 'auto' is uint8 for a calibrated range that starts at 0 or above."""
    if out_type == "auto":
        return "uint8" if min_calib is not None and max_calib is not None and min_calib >= 0 else "int8"
    return out_type


def range_array(xp, value) -> object:
    return xp.asarray([value], dtype=F32)
