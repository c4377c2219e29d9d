"""``_contrib_quantize(_v2)``, ``_contrib_dequantize``, ``_contrib_requantize``: moving between float
and quantized tensors, with MXNet 1.9.1's MKLDNN (CPU) arithmetic.

>>> import numpy as np
>>> from mxasync.operator import get_op
>>> get_op("_contrib_quantize_v2").prepare(out_type="auto", min_calib_range=0.0,
...                                        max_calib_range=1.0).infer_type(["float32"])[1]
['uint8', 'float32', 'float32']
"""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np

from ..functional import FunctionalProperty, defop
from ..params import Field, OpParam
from ._scales import (
    F32,
    INT8_RANGE,
    INT32_MAX,
    UINT8_RANGE,
    max_abs,
    out_type_for,
    range_array,
    saturate,
    scalar,
    to_quantized,
    type_names,
)

__all__ = ["QuantizeParam", "QuantizeV2Param", "DequantizeParam", "RequantizeParam", "QuantizedProperty"]

RANGED_OUTPUTS = ("output", "min_output", "max_output")
NUMBERED_OUTPUTS = ("output0", "output1", "output2")  # MXNet names quantize's outputs so


class QuantizeParam(OpParam):
    out_type: Literal["int8", "uint8"] = Field(default="uint8", description="the quantized type")


class QuantizeV2Param(OpParam):
    out_type: Literal["auto", "int8", "uint8"] = Field(
        default="int8", description="the quantized type; auto: uint8 for a calibrated range from 0, else int8")
    min_calib_range: Optional[float] = None
    max_calib_range: Optional[float] = None


class DequantizeParam(OpParam):
    out_type: Literal["float32"] = Field(default="float32", description="the float type of the output")


class RequantizeParam(QuantizeV2Param):
    pass


class QuantizedProperty(FunctionalProperty):
    """Ops whose inputs after the first ``num_data`` are (1,) float32 ranges and whose outputs are
    data plus its (1,) range; ``out_dtype(in_types)`` names the data output's dtype."""

    num_data = 1

    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        return [d] + [(1,)] * (len(in_shapes) - 1), [d, (1,), (1,)], []

    def infer_type(self, in_types):
        n = self.num_data
        ins = list(in_types[:n]) + ["float32"] * (len(in_types) - n)
        return ins, [self.out_dtype(in_types), "float32", "float32"], []

    def out_dtype(self, in_types):
        return in_types[0]


class _QuantizeProperty(QuantizedProperty):
    def infer_type(self, in_types):
        return ["float32"] * 3, [self.params.out_type, "float32", "float32"], []


def _quantize(xp, p, data, lo, hi):
    """MKLDNN's ``_contrib_quantize``: scale 127 (int8) or 255 (uint8) over max(|lo|, |hi|)."""
    lo, hi = scalar(lo), scalar(hi)
    r = max_abs(lo, hi)
    if p.out_type == "int8":
        return to_quantized(xp, data, _over(F32(127), r), np.int8), range_array(xp, -r), range_array(xp, r)
    return to_quantized(xp, data, _over(F32(255), r), np.uint8), range_array(xp, lo), range_array(xp, hi)


def _over(levels, r):
    """``levels / r``; a zero range (an all-zero bias) quantizes everything to 0, as MXNet ends up doing."""
    return F32(levels / r) if r else F32(0)


class _QuantizeV2Property(QuantizedProperty):
    def out_dtype(self, in_types):
        if type_names(in_types[:1])[0] in ("int8", "uint8"):
            return in_types[0]
        p = self.params
        return out_type_for(p.out_type, p.min_calib_range, p.max_calib_range)

    def infer_type(self, in_types):
        t = in_types[0] or "float32"
        return [t], [self.out_dtype([t]), "float32", "float32"], []


def _quantize_v2(xp, p, data):
    """MKLDNN's ``_contrib_quantize_v2``: the calibrated range (else the data's), scale 127.5 / 255.5;
    int8 / uint8 data passes through with its calibrated (else the full) range."""
    name = data.dtype.name
    has_calib = p.min_calib_range is not None and p.max_calib_range is not None
    if name in ("int8", "uint8"):
        if has_calib:
            lo, hi = F32(p.min_calib_range), F32(p.max_calib_range)
        else:
            lo, hi = (F32(0), UINT8_RANGE) if name == "uint8" else (-INT8_RANGE, INT8_RANGE)
        return data.copy(), range_array(xp, lo), range_array(xp, hi)
    if has_calib:
        lo, hi = F32(p.min_calib_range), F32(p.max_calib_range)
    else:
        lo, hi = F32(data.min()), F32(data.max())
    out = out_type_for(p.out_type, p.min_calib_range, p.max_calib_range)
    r = max_abs(lo, hi)
    if out == "uint8":
        return to_quantized(xp, data, _over(UINT8_RANGE, r), np.uint8), range_array(xp, lo), range_array(xp, hi)
    return to_quantized(xp, data, _over(INT8_RANGE, r), np.int8), range_array(xp, -r), range_array(xp, r)


class _DequantizeProperty(QuantizedProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        return [d, (1,), (1,)], [d], []

    def infer_type(self, in_types):
        return [in_types[0], "float32", "float32"], ["float32"], []


def dequantize_scale(dtype, lo, hi) -> np.float32:
    """The float value of one step: MKLDNN's 127.5 / 255.5 levels for int8 / uint8, 2**31 for int32."""
    levels = {"int8": INT8_RANGE, "uint8": UINT8_RANGE}.get(np.dtype(dtype).name, F32(INT32_MAX))
    return F32(max_abs(lo, hi) / levels)


def _dequantize(xp, p, data, lo, hi):
    return data.astype(F32) * dequantize_scale(data.dtype, scalar(lo), scalar(hi))


class _RequantizeProperty(QuantizedProperty):
    def out_dtype(self, in_types):
        p = self.params
        return out_type_for(p.out_type, p.min_calib_range, p.max_calib_range)


def _requantize(xp, p, data, lo, hi):
    """int32 -> int8 / uint8 (MKLDNN's requantize): into the calibrated range, else the data's own."""
    first_scale = F32(max_abs(scalar(lo), scalar(hi)) / F32(INT32_MAX))
    if p.min_calib_range is not None and p.max_calib_range is not None:
        real = max_abs(p.min_calib_range, p.max_calib_range)
    else:
        data_range = int(F32(max(abs(int(data.min())), abs(int(data.max())))))
        real = F32(F32(F32(data_range) * max_abs(scalar(lo), scalar(hi))) / F32(INT32_MAX))
    out = out_type_for(p.out_type, p.min_calib_range, p.max_calib_range)
    levels = F32(255 if out == "uint8" else 127)
    scale = F32(first_scale * F32(levels / real))
    q = saturate(xp, data.astype(F32) * scale, out)
    return q, range_array(xp, F32(0) if out == "uint8" else -real), range_array(xp, real)


_NO_GRAD = dict(non_differentiable=True, deps="")
defop("_contrib_quantize", param=QuantizeParam, base=_QuantizeProperty, fwd=_quantize,
      arguments=("data", "min_range", "max_range"), outputs=NUMBERED_OUTPUTS, **_NO_GRAD,
      doc="Quantize float32 ``data`` with range [min_range, max_range] into int8 / uint8 (MKLDNN's scale).")
defop("_contrib_quantize_v2", param=QuantizeV2Param, base=_QuantizeV2Property, fwd=_quantize_v2,
      arguments=("data",), outputs=NUMBERED_OUTPUTS, **_NO_GRAD,
      doc="Quantize float32 ``data`` into int8 / uint8 over the calibrated range, else the data's min and max.")
defop("_contrib_dequantize", param=DequantizeParam, base=_DequantizeProperty, fwd=_dequantize,
      arguments=("data", "min_range", "max_range"), **_NO_GRAD,
      doc="Convert quantized ``data`` with range [min_range, max_range] back to float32.")
defop("_contrib_requantize", param=RequantizeParam, base=_RequantizeProperty, fwd=_requantize,
      arguments=("data", "min_range", "max_range"), outputs=NUMBERED_OUTPUTS, **_NO_GRAD,
      doc="Requantize int32 ``data`` into int8 / uint8 over the calibrated range, else the data's own.")
