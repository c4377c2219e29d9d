"""``_sg_mkldnn_fully_connected``: MXNet 1.9.1's fused (and quantized) CPU FullyConnected.

The node carries its subgraph (FullyConnected, optionally followed by an activation or one of
square / sqrt / exp / abs, fused when ``with_eltwise``).  Quantized per tensor, its inputs are
data, the int8 weight and bias (quantized offline) and the ranges of all three; channel-wise
(``channel_wise_quantize``) the float weight and bias and the data range.  The int32 product
(plus the bias rescaled to it, ``std::round``) is then: scaled to float32
(``enable_float_output``), requantized into the calibrated range (uint8 after a non-negative
eltwise, else int8), or returned as int32 with its range.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np

from ..functional import FunctionalProperty, defop
from ..kernels._runner import PLAIN
from ..numpy_overrides import register_numpy
from ..params import Field, OpParam
from ..registry import get_op
from ._fused import apply_eltwise, channel_weight_scales, eltwise_of, round_away, subgraph_ops
from ._int_gemm import int_matmul
from ._scales import F32, INT32_MAX, max_abs, quantize_scale, range_array, range_for_multiplication, saturate, scalar
from .fully_connected import fc_out_shape, flatten_data

__all__ = ["SgFCParam"]

_UNSIGNED_ELTWISE = ("square", "sqrt", "exp", "abs")


class SgFCParam(OpParam):
    quantized: bool = Field(default=False, description="int8 / uint8 data with its range")
    enable_float_output: bool = Field(default=False, description="give float32 (a dequantize folded in)")
    with_eltwise: bool = Field(default=False, description="an activation or eltwise op of the subgraph follows")
    min_calib_range: Optional[float] = None
    max_calib_range: Optional[float] = None
    channel_wise_quantize: Optional[bool] = Field(
        default=None, description="float32 weights quantized per output channel at run time (else int8 inputs)")
    subgraph: str = Field(default="", description="the fused subgraph as symbol JSON (MXNet's 'subgraphs' field)")

    def calibrated(self) -> bool:
        return self.min_calib_range is not None and self.max_calib_range is not None


@lru_cache(maxsize=256)
def fc_parts(subgraph: str):
    """(FullyConnected params, fused eltwise or None) from the subgraph."""
    fc = eltwise = None
    for op, params in subgraph_ops("_sg_mkldnn_fully_connected", subgraph):
        if op == "FullyConnected":
            fc = params
        elif (e := eltwise_of(op, params)) is not None:
            eltwise = e
    if fc is None:
        raise ValueError("_sg_mkldnn_fully_connected: the subgraph holds no FullyConnected")
    return fc, eltwise


def fc_argument_names(p) -> list[str]:
    fc = fc_parts(p.subgraph)[0]
    names = ["data", "weight"] + ([] if fc.no_bias else ["bias"])
    if p.quantized:
        names += ["min_data", "max_data"]
        if not p.channel_wise_quantize:
            names += ["min_weight", "max_weight"] + ([] if fc.no_bias else ["min_bias", "max_bias"])
    return names


def _out_dtype(p) -> str:
    if not p.quantized or p.enable_float_output:
        return "float32"
    if not p.calibrated():
        return "int32"
    e = fc_parts(p.subgraph)[1]
    unsigned = p.with_eltwise and e is not None and e.output_is_unsigned(_UNSIGNED_ELTWISE)
    return "uint8" if unsigned else "int8"


class _SgFCProperty(FunctionalProperty):
    json_subgraph = "subgraph"

    def list_arguments(self):
        return fc_argument_names(self.params)

    def list_outputs(self):
        p = self.params
        return ["output", "min_output", "max_output"] if p.quantized and not p.enable_float_output else ["output"]

    def num_outputs(self):
        return len(self.list_outputs())

    def infer_shape(self, in_shapes):
        fc = fc_parts(self.params.subgraph)[0]
        nfc = 2 if fc.no_bias else 3
        ins, outs, _ = get_op("FullyConnected").prepare(**fc.model_dump()).infer_shape(list(in_shapes[:nfc]))
        n_in, n_out = len(self.list_arguments()), self.num_outputs()
        return list(ins) + [(1,)] * (n_in - nfc), [outs[0]] + [(1,)] * (n_out - 1), []

    def infer_type(self, in_types):
        p = self.params
        n = len(self.list_arguments())
        if not p.quantized:
            return ["float32"] * n, ["float32"], []
        wtype = "float32" if p.channel_wise_quantize else "int8"
        nfc = 2 if fc_parts(p.subgraph)[0].no_bias else 3
        types = [in_types[0] or "uint8"] + [wtype] * (nfc - 1) + ["float32"] * (n - nfc)
        return types, [_out_dtype(p)] + ["float32"] * (self.num_outputs() - 1), []


def _weight_and_bias(p, x, data_scale):
    """(int8 weight, int32 bias or None, per-output weight scales) as MXNet's kernel prepares them."""
    weight, bias = x["weight"], x.get("bias")
    if p.channel_wise_quantize:
        scales = channel_weight_scales(np, weight, bias, data_scale)
        w_q = saturate(np, weight.astype(F32) * scales[:, None], np.int8)
        b_q = None if bias is None else saturate(np, bias.astype(F32) * (scales * data_scale).astype(F32), np.int32)
        return w_q, b_q, scales
    w_scale = quantize_scale(np.int8, scalar(x["min_weight"]), scalar(x["max_weight"]))
    if bias is None:
        return weight, None, np.full(weight.shape[0], w_scale, F32)
    b_lo, b_hi = scalar(x["min_bias"]), scalar(x["max_bias"])
    b_scale = quantize_scale(np.int8, b_lo, b_hi)
    rescale = F32(F32(data_scale * w_scale) / b_scale)
    with np.errstate(divide="ignore"):  # an all-zero bias: no cap (inf), as MXNet's float division gives
        cap = F32(F32(F32(F32(INT32_MAX) / F32(2)) / max_abs(b_lo, b_hi)) / b_scale)
    if rescale > cap:  # keep the int32 bias under 2**30: shrink the weights instead (MXNet's rule)
        w_rescale = F32(F32(F32(cap * b_scale) / data_scale) / w_scale)
        weight = round_away(np, weight.astype(F32) * w_rescale).astype(np.int8)
        w_scale, rescale = F32(w_scale * w_rescale), cap
    b_q = round_away(np, bias.astype(F32) * rescale).astype(np.int32)
    return weight, b_q, np.full(weight.shape[0], w_scale, F32)


def _quantized_fc(p, x, run):
    fc, eltwise = fc_parts(p.subgraph)
    data = x["data"]
    d_lo, d_hi = scalar(x["min_data"]), scalar(x["max_data"])
    data_scale = quantize_scale(data.dtype, d_lo, d_hi)
    w_q, b_q, w_scales = _weight_and_bias(p, x, data_scale)
    acc = int_matmul(np, flatten_data(data, fc.flatten), w_q, run=run)
    if b_q is not None:
        acc += b_q
    shape = fc_out_shape(data.shape, fc.num_hidden, fc.flatten)
    if p.enable_float_output or p.calibrated():
        y = acc.astype(F32) * (F32(1) / data_scale / w_scales).astype(F32)
        if p.with_eltwise:
            y = apply_eltwise(np, y, eltwise)
        if p.enable_float_output:
            return (y.reshape(shape),)
        lo, hi = F32(p.min_calib_range), F32(p.max_calib_range)
        out_type = _out_dtype(p)
        y = y * quantize_scale(out_type, lo, hi)
        return saturate(np, y, out_type).reshape(shape), range_array(np, lo), range_array(np, hi)
    lo, hi = range_for_multiplication(d_lo, d_hi, scalar(x["min_weight"]), scalar(x["max_weight"]),
                                      b_unsigned=data.dtype == np.uint8)
    return acc.reshape(shape), range_array(np, lo), range_array(np, hi)


def _forward(xp, p, *inputs, run=PLAIN):
    x = dict(zip(fc_argument_names(p), inputs, strict=True))
    if p.quantized:
        return _quantized_fc(p, x, run)
    fc, eltwise = fc_parts(p.subgraph)
    y = run.matmul(np, flatten_data(x["data"], fc.flatten), x["weight"].T)
    if not fc.no_bias:
        y = y + x["bias"]
    y = y.reshape(fc_out_shape(x["data"].shape, fc.num_hidden, fc.flatten))
    return apply_eltwise(np, y, eltwise).astype(F32) if p.with_eltwise else y.astype(F32)


defop("_sg_mkldnn_fully_connected", param=SgFCParam, base=_SgFCProperty, fwd=_forward, arguments=(),
      outputs=("output", "min_output", "max_output"), non_differentiable=True, deps="",
      doc="MXNet's fused (and quantized) CPU FullyConnected with an optional eltwise post-op.")
register_numpy("_sg_mkldnn_fully_connected", _forward)
