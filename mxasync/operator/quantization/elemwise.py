"""Quantized elementwise ops: ``_contrib_quantized_act`` (relu), ``_contrib_quantized_elemwise_add``,
``_contrib_quantized_elemwise_mul`` (MXNet 1.9.1's CPU kernels: MKLDNN's for act and add)."""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np

from ..functional import defop
from ..params import Field, OpParam
from ._scales import F32, INT8_RANGE, INT32_MAX, LIMITS, UINT8_RANGE, max_abs, range_array, saturate, scalar
from .quantize import RANGED_OUTPUTS, QuantizedProperty

__all__ = ["QuantizedActParam", "QuantizedBinaryParam", "QuantizedMulParam"]


class QuantizedActParam(OpParam):
    act_type: Literal["relu"] = "relu"  # MXNet's quantized_act implements relu only


def _quantized_relu(xp, p, data, lo, hi):
    return xp.maximum(data, data.dtype.type(0)), lo.copy(), hi.copy()


defop("_contrib_quantized_act", param=QuantizedActParam, base=QuantizedProperty, fwd=_quantized_relu,
      arguments=("data", "min_data", "max_data"), outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      doc="ReLU of quantized data; the range passes through.")


class QuantizedBinaryParam(OpParam):
    min_calib_range: Optional[float] = None
    max_calib_range: Optional[float] = None

    def calibrated(self) -> bool:
        return self.min_calib_range is not None and self.max_calib_range is not None


class QuantizedMulParam(QuantizedBinaryParam):
    enable_float_output: bool = Field(default=False, description="give the float32 product instead of int8 / int32")


class _QuantizedBinaryProperty(QuantizedProperty):
    num_data = 2

    def infer_shape(self, in_shapes):
        d = in_shapes[0] if in_shapes[0] is not None else in_shapes[1]
        return [d, d] + [(1,)] * 4, [d, (1,), (1,)], []


class _QuantizedAddProperty(_QuantizedBinaryProperty):
    def out_dtype(self, in_types):
        if not self.params.calibrated():
            return "int32"
        return in_types[0] if in_types[0] == in_types[1] else "int8"


def _level(dtype) -> np.float32:
    return INT8_RANGE if np.dtype(dtype) == np.int8 else UINT8_RANGE


def _quantized_add(xp, p, a, b, a_lo, a_hi, b_lo, b_hi):
    """MKLDNN's sum: ``scale_a * a + scale_b * b`` rounded into the output type; a uint8 input added
    to an int8 one is first reordered (rounded) to int8 at the output's scale."""
    a_abs, b_abs = max_abs(scalar(a_lo), scalar(a_hi)), max_abs(scalar(b_lo), scalar(b_hi))
    a_scale, b_scale = F32(_level(a.dtype) / a_abs), F32(_level(b.dtype) / b_abs)
    out = ("int8" if a.dtype != b.dtype else a.dtype.name) if p.calibrated() else "int32"
    out_level = {"int8": INT8_RANGE, "uint8": UINT8_RANGE}.get(out, F32(INT32_MAX))
    if p.calibrated():
        lo, hi = F32(p.min_calib_range), F32(p.max_calib_range)
        out_scale = F32(out_level / max_abs(lo, hi))
        sa, sb = F32(out_scale / a_scale), F32(out_scale / b_scale)
    else:
        hi = F32(a_abs + b_abs)
        lo = -hi
        sa = F32(F32(a_abs * out_level) / F32(hi * _level(a.dtype)))
        sb = F32(F32(b_abs * out_level) / F32(hi * _level(b.dtype)))
    if a.dtype != b.dtype:  # the uint8 side goes to int8 first, then adds with scale 1
        if a.dtype == np.uint8:
            a, sa = saturate(xp, a.astype(F32) * sa, np.int8), F32(1)
        else:
            b, sb = saturate(xp, b.astype(F32) * sb, np.int8), F32(1)
    total = a.astype(F32) * sa + b.astype(F32) * sb
    return saturate(xp, total, out), range_array(xp, lo), range_array(xp, hi)


class _QuantizedMulProperty(_QuantizedBinaryProperty):
    def out_dtype(self, in_types):
        p = self.params
        return "float32" if p.enable_float_output else ("int8" if p.calibrated() else "int32")


def _quantized_mul(xp, p, a, b, a_lo, a_hi, b_lo, b_hi):
    """MXNet's CPU kernel: the int product times a float32 scale, truncated toward zero."""
    a_scale = F32(INT8_RANGE / max_abs(scalar(a_lo), scalar(a_hi)))
    b_scale = F32(INT8_RANGE / max_abs(scalar(b_lo), scalar(b_hi)))
    prod = (a.astype(np.int32) * b.astype(np.int32)).astype(F32)
    lo = hi = F32(0)
    if p.enable_float_output:
        return prod * F32(F32(F32(1) / a_scale) / b_scale), range_array(xp, lo), range_array(xp, hi)
    if p.calibrated():
        lo, hi = F32(p.min_calib_range), F32(p.max_calib_range)
        scale = F32(F32(F32(INT8_RANGE / max_abs(lo, hi)) / a_scale) / b_scale)
        out = xp.clip(xp.trunc(prod * scale), *LIMITS["int8"]).astype(np.int8)
        return out, range_array(xp, lo), range_array(xp, hi)
    a_step = F32(max_abs(scalar(a_lo), scalar(a_hi)) / F32(127))
    b_step = F32(max_abs(scalar(b_lo), scalar(b_hi)) / F32(127))
    hi = F32(F32(a_step * b_step) * F32(INT32_MAX))
    return (a.astype(np.int32) * b.astype(np.int32)), range_array(xp, -hi), range_array(xp, hi)


_BINARY_ARGS = ("lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max")
defop("_contrib_quantized_elemwise_add", param=QuantizedBinaryParam, base=_QuantizedAddProperty,
      fwd=_quantized_add, arguments=_BINARY_ARGS, outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      doc="Sum of two quantized arrays: int32, or int8 / uint8 in the calibrated range.")
defop("_contrib_quantized_elemwise_mul", param=QuantizedMulParam, base=_QuantizedMulProperty,
      fwd=_quantized_mul, arguments=_BINARY_ARGS, outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      doc="Product of two int8 arrays: int32, int8 in the calibrated range, or float32.")
