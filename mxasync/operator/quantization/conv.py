"""``_contrib_quantized_conv``: int8 convolution with int32 output (MXNet's quantized_conv).

Inputs: data (uint8 or int8), weight (int8), [bias (int8)], then the ranges of each
(``min_data, max_data, min_weight, max_weight[, min_bias, max_bias]``).  The int32 output
stands for the range ``QuantizationRangeForMultiplication(data, weight)`` (S8S8, as MXNet's
CPU kernel computes it).  The int8 bias is rescaled to the output's int32 step before it is
added (MXNet's GPU kernel does so; its MKLDNN one adds the raw int8 values, which its
quantization flow never produces since it fuses biased convolutions into ``_sg_mkldnn_conv``).
"""

from __future__ import annotations

import numpy as np

from ..functional import defop
from ..kernels._runner import PLAIN
from ..nn.convolution import ConvolutionParam
from ..numpy_overrides import register_numpy
from ..registry import get_op
from ._int_gemm import int_conv
from ._scales import F32, max_abs, range_array, range_for_multiplication, scalar
from .quantize import RANGED_OUTPUTS, QuantizedProperty

__all__ = ["conv_kw", "rescale_bias"]


def conv_kw(p) -> dict:
    return dict(kernel=p.kernel, stride=p.stride or None, dilate=p.dilate or None, pad=p.pad or None,
                num_group=p.num_group, layout=p.layout)


def rescale_bias(xp, bias, bias_lo, bias_hi, out_hi):
    """int8 ``bias`` with range [bias_lo, bias_hi] in steps of an int32 output with range +-out_hi."""
    bias_step = F32(max_abs(bias_lo, bias_hi) / F32(127))
    out_step = F32(F32(out_hi) / F32(2147483647))
    return xp.rint(bias.astype(F32) * F32(bias_step / out_step)).astype(np.int32)


class _QuantizedConvProperty(QuantizedProperty):
    float_op = "Convolution"

    def list_arguments(self):
        names = ["data", "weight"] + ([] if self.params.no_bias else ["bias"])
        return names + [f"{m}_{n}" for n in names for m in ("min", "max")]

    def _float_prop(self):
        return get_op(self.float_op).prepare(**self.params.model_dump())

    def infer_shape(self, in_shapes):
        nargs = 2 if self.params.no_bias else 3
        ins, outs, _ = self._float_prop().infer_shape(list(in_shapes[:nargs]))
        return list(ins) + [(1,)] * (2 * nargs), [outs[0], (1,), (1,)], []

    def infer_type(self, in_types):
        nargs = 2 if self.params.no_bias else 3
        data = in_types[0] or "uint8"
        return [data] + ["int8"] * (nargs - 1) + ["float32"] * (2 * nargs), ["int32", "float32", "float32"], []


def _ranges(ranges):
    return [scalar(r) for r in ranges]


def _quantized_conv(xp, p, data, weight, *rest, run=PLAIN):
    bias, ranges = (None, rest) if p.no_bias else (rest[0], rest[1:])
    d_lo, d_hi, w_lo, w_hi, *b_range = _ranges(ranges)
    lo, hi = range_for_multiplication(d_lo, d_hi, w_lo, w_hi)
    out = int_conv(xp, data, weight, conv_kw(p), run=run)
    if bias is not None:
        out += rescale_bias(xp, bias, *b_range, hi).reshape((1, -1) + (1,) * (out.ndim - 2))
    return out, range_array(xp, lo), range_array(xp, hi)


_ARGS = ("data", "weight", "bias", "min_data", "max_data", "min_weight", "max_weight", "min_bias", "max_bias")
defop("_contrib_quantized_conv", param=ConvolutionParam, base=_QuantizedConvProperty, fwd=_quantized_conv,
      arguments=_ARGS, outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      doc="Convolution of quantized data by int8 weights with an int32 output and its range.")
register_numpy("_contrib_quantized_conv", _quantized_conv)
