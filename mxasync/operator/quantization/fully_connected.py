"""``_contrib_quantized_fully_connected``: int8 x int8/uint8 GEMM with int32 output (MXNet's MKLDNN kernel).

The int8 bias becomes int32 as MXNet's CPU kernel does: times ``data_scale * weight_scale *
max|bias range| / 127.5``, truncated toward zero.  The output range is
``QuantizationRangeForMultiplication(data, weight)`` (S8U8 for uint8 data).
"""

from __future__ import annotations

import numpy as np

from ..functional import defop
from ..kernels._runner import PLAIN
from ..nn.fully_connected import FullyConnectedParam
from ..numpy_overrides import register_numpy
from ._int_gemm import int_matmul
from ._scales import F32, INT8_RANGE, max_abs, quantize_scale, range_array, range_for_multiplication, scalar
from .conv import _QuantizedConvProperty
from .quantize import RANGED_OUTPUTS

__all__ = ["flatten_data", "fc_out_shape"]


def flatten_data(data, flatten: bool):
    """The 2-D view a FullyConnected multiplies: (N, rest) when ``flatten``, else (rows, last axis)."""
    return data.reshape(data.shape[0], -1) if flatten else data.reshape(-1, data.shape[-1])


def fc_out_shape(data_shape, num_hidden: int, flatten: bool) -> tuple:
    return (data_shape[0], num_hidden) if flatten else tuple(data_shape[:-1]) + (num_hidden,)


class _QuantizedFCProperty(_QuantizedConvProperty):
    float_op = "FullyConnected"


def _quantized_fc(xp, p, data, weight, *rest, run=PLAIN):
    bias, ranges = (None, rest) if p.no_bias else (rest[0], rest[1:])
    d_lo, d_hi, w_lo, w_hi, *b_range = [scalar(r) for r in ranges]
    lo, hi = range_for_multiplication(d_lo, d_hi, w_lo, w_hi, b_unsigned=data.dtype == np.uint8)
    out = int_matmul(xp, flatten_data(data, p.flatten), weight, run=run)
    if bias is not None:
        data_scale = quantize_scale(data.dtype, d_lo, d_hi)
        weight_scale = F32(INT8_RANGE / max_abs(w_lo, w_hi))
        rescale = F32(F32(F32(data_scale * weight_scale) * max_abs(*b_range)) / INT8_RANGE)
        out += xp.trunc(bias.astype(F32) * rescale).astype(np.int32)
    return out.reshape(fc_out_shape(data.shape, p.num_hidden, p.flatten)), range_array(xp, lo), range_array(xp, hi)


_ARGS = ("data", "weight", "bias", "min_data", "max_data", "min_weight", "max_weight", "min_bias", "max_bias")
defop("_contrib_quantized_fully_connected", param=FullyConnectedParam, base=_QuantizedFCProperty,
      fwd=_quantized_fc, arguments=_ARGS, outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      doc="FullyConnected of quantized data by int8 weights with an int32 output and its range.")
register_numpy("_contrib_quantized_fully_connected", _quantized_fc)
