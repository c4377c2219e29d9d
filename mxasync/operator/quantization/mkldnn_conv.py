"""``_sg_mkldnn_conv``: the fused convolution MXNet 1.9.1's CPU quantization writes into symbol files.

The node carries its subgraph (Convolution, then optionally BatchNorm, an activation, an
``elemwise_add`` with another input, and a post-sum activation); its attrs say which parts are
there (``with_bn``, ``with_act``, ``with_sum``, ``with_postsum_act``) and whether it is
``quantized``, with the calibrated output range (``min_calib_range`` / ``max_calib_range``).
Inputs: data, weight, [bias], [gamma, beta, mean, var], [sum], and when quantized the data range
[and the sum's range].  MXNet's arithmetic, in float32 where it is float:

1. BatchNorm folds into the weight and bias (``alpha = gamma / sqrt(var + eps)``);
2. the weight is quantized per output channel (calibrated) or per tensor, the bias to int32 at
   ``weight_scale * data_scale`` (round half to even), the convolution accumulates exactly;
3. calibrated: ``acc * out_scale / data_scale / weight_scale``, the activation, ``+ sum_scale *
   sum`` (a signed sum read as the unsigned output type loses its negatives, as MKLDNN's reorder
   does), the post-sum activation, rounded and saturated into uint8 (non-negative activations)
   or int8; uncalibrated: the int32 accumulator and its range.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional

import numpy as np
from pydantic import model_validator

from ..functional import FunctionalProperty, defop
from ..kernels import batch_norm as bnk
from ..kernels._runner import PLAIN
from ..kernels.conv import convolution as convk
from ..numpy_overrides import register_numpy
from ..params import Field, OpParam
from ..registry import get_op
from ._fused import apply_eltwise, channel_weight_scales, eltwise_of, subgraph_ops, tensor_weight_scale
from ._int_gemm import int_conv
from ._scales import F32, quantize_scale, range_array, range_for_multiplication, saturate, scalar
from .conv import conv_kw

__all__ = ["SgConvParam"]


class SgConvParam(OpParam):
    with_bn: bool = Field(default=False, description="a BatchNorm follows the convolution (folded into its weights)")
    with_act: bool = Field(default=False, description="an activation follows (before any sum)")
    with_sum: bool = Field(default=False, description="the result is added to the 'sum' input (elemwise_add)")
    with_postsum_act: bool = Field(default=False, description="an activation follows the sum")
    quantized: bool = Field(default=False, description="int8 / uint8 data with its range; weights quantized at run time")
    min_calib_range: Optional[float] = None
    max_calib_range: Optional[float] = None
    subgraph: str = Field(default="", description="the fused subgraph as symbol JSON (MXNet's 'subgraphs' field)")

    @model_validator(mode="before")
    @classmethod
    def _legacy_names(cls, data):
        """MXNet renames with_relu / with_postsum_relu (older files) to with_act / with_postsum_act."""
        if isinstance(data, dict):
            data = dict(data)
            for old, new in (("with_relu", "with_act"), ("with_postsum_relu", "with_postsum_act")):
                if old in data:
                    data[new] = data.pop(old)
        return data

    def calibrated(self) -> bool:
        return self.min_calib_range is not None and self.max_calib_range is not None


@lru_cache(maxsize=256)
def conv_parts(subgraph: str, with_act: bool):
    """(conv params, batch-norm params or None, activation, post-sum activation) from the subgraph:
    the first activation is the fused one when ``with_act``, the other the post-sum one (MXNet's)."""
    conv = bn = act = post = None
    for op, params in subgraph_ops("_sg_mkldnn_conv", subgraph):
        if op == "Convolution":
            conv = params
        elif op == "BatchNorm":
            bn = params
        elif (e := eltwise_of(op, params)) is not None:
            if with_act and act is None:
                act = e
            else:
                post = e
    if conv is None:
        raise ValueError("_sg_mkldnn_conv: the subgraph holds no Convolution")
    return conv, bn, act, post


def conv_argument_names(p) -> list[str]:
    """MXNet's input names of the node (``SgMKLDNNConvListInputNames``)."""
    names = ["data", "weight"] + ([] if conv_parts(p.subgraph, p.with_act)[0].no_bias else ["bias"])
    names += ["gamma", "beta", "mean", "var"] if p.with_bn else []
    names += ["sum"] if p.with_sum else []
    if p.quantized:
        names += ["data_min", "data_max"] + (["sum_min", "sum_max"] if p.with_sum else [])
    return names


def output_unsigned(p) -> bool:
    """MXNet's ``IsOutputUInt8``: the last activation (before a sum: none) is non-negative."""
    _, _, act, post = conv_parts(p.subgraph, p.with_act)
    if not p.with_sum and p.with_act and act is not None:
        return act.output_is_unsigned()
    return bool(p.with_postsum_act and post is not None and post.output_is_unsigned())


class _SgConvProperty(FunctionalProperty):
    json_subgraph = "subgraph"

    @property
    def parts(self):
        return conv_parts(self.params.subgraph, self.params.with_act)

    def list_arguments(self):
        return conv_argument_names(self.params)

    def list_outputs(self):
        return ["output", "output_min", "output_max"] if self.params.quantized else ["output"]

    def mutate_inputs(self):  # BatchNorm's moving mean and var are the node's auxiliary states
        if not self.params.with_bn:
            return []
        first = 3 if not self.parts[0].no_bias else 2
        return [first + 2, first + 3]

    def output_unsigned(self) -> bool:
        return output_unsigned(self.params)

    def infer_shape(self, in_shapes):
        conv = self.parts[0]
        nconv = 2 if conv.no_bias else 3
        ins, outs, _ = get_op("Convolution").prepare(**conv.model_dump()).infer_shape(list(in_shapes[:nconv]))
        out, f = outs[0], (conv.num_filter,)
        shapes = list(ins) + ([f] * 4 if self.params.with_bn else []) + ([out] if self.params.with_sum else [])
        shapes += [(1,)] * (len(self.list_arguments()) - len(shapes))
        return shapes, [out] + [(1,)] * (len(self.list_outputs()) - 1), []

    def infer_type(self, in_types):
        p = self.params
        n = len(self.list_arguments())
        if not p.quantized:
            return ["float32"] * n, ["float32"], []
        types = [in_types[0] or "uint8"] + ["float32"] * (n - 1)
        if p.with_sum:
            i = self.list_arguments().index("sum")
            types[i] = in_types[i] or "int8"
        out = ("uint8" if self.output_unsigned() else "int8") if p.calibrated() else "int32"
        return types, [out, "float32", "float32"], []


def fold_batch_norm(weight, bias, x, bn):
    """Conv weight and bias with an inference BatchNorm folded in (MXNet's ``UpdateConvWeightBias``)."""
    return bnk.fold_into_conv(np, weight, bias, x["gamma"], x["beta"], x["mean"], x["var"], bn.eps, bn.fix_gamma)


def _float_forward(p, x, run, out=None):
    """The fused op on float32 data (not quantized), into ``out`` when it fits."""
    conv, bn, act, post = conv_parts(p.subgraph, p.with_act)
    weight, bias = x["weight"], x.get("bias")
    if p.with_bn:
        weight, bias = fold_batch_norm(weight, bias, x, bn)
    relu = p.with_act and act.alg == "relu" and act.alpha == 0  # done by the convolution's last copy
    y = convk.convolution(np, x["data"], weight, bias, no_bias=bias is None, run=run, relu=relu,
                          out=out if x["data"].dtype == F32 else None, **conv_kw(conv))
    if p.with_act and not relu:
        y = apply_eltwise(np, y, act)
    if p.with_sum:
        y = y + x["sum"]
    if p.with_postsum_act:
        y = apply_eltwise(np, y, post)
    return y.astype(F32, copy=False)


def _quantized_forward(p, x, run):
    conv, bn, act, post = conv_parts(p.subgraph, p.with_act)
    data, weight, bias = x["data"], x["weight"], x.get("bias")
    if p.with_bn:
        weight, bias = fold_batch_norm(weight, bias, x, bn)
    d_lo, d_hi = scalar(x["data_min"]), scalar(x["data_max"])
    data_scale = quantize_scale(data.dtype, d_lo, d_hi)
    if p.calibrated():
        w_scales = channel_weight_scales(np, weight, bias, data_scale)
    else:
        w_scale, w_lo, w_hi = tensor_weight_scale(weight)
        w_scales = np.full(weight.shape[0], w_scale, F32)
    shape = (-1,) + (1,) * (weight.ndim - 1)
    w_q = saturate(np, weight.astype(F32) * w_scales.reshape(shape), np.int8)
    acc = int_conv(np, data, w_q, conv_kw(conv), run=run)
    if bias is not None:
        b_q = saturate(np, bias.astype(F32) * (w_scales * data_scale).astype(F32), np.int32)
        acc += b_q.reshape((1, -1) + (1,) * (acc.ndim - 2))
    if p.calibrated():
        out_type = np.uint8 if output_unsigned(p) else np.int8
        lo, hi = F32(p.min_calib_range), F32(p.max_calib_range)
        out_scale = quantize_scale(out_type, lo, hi)
        requant = (out_scale / data_scale / w_scales).astype(F32)
        y = acc.astype(F32) * requant.reshape((1, -1) + (1,) * (acc.ndim - 2))
    else:  # int32 out, in the accumulator's own scale
        out_type = np.int32
        lo, hi = range_for_multiplication(w_lo, w_hi, d_lo, d_hi, b_unsigned=data.dtype == np.uint8)
        out_scale = F32(data_scale * w_scales[0])
        y = acc.astype(F32)
    if p.with_act and not (act.alg == "bounded_relu" and not p.with_sum and p.calibrated()):
        y = apply_eltwise(np, y, act, alpha_scale=out_scale)  # relu6 without a sum: the saturation clips it
    if p.with_sum:
        y = y + x["sum"].astype(F32) * F32(out_scale / quantize_scale(x["sum"].dtype, scalar(x["sum_min"]),
                                                                           scalar(x["sum_max"])))
    if p.with_postsum_act:
        y = apply_eltwise(np, y, post, alpha_scale=out_scale)
    # MKLDNN writes a fused sum into the sum input's own memory: an int8 sum saturates at 127
    # even where the node's output is uint8 (its bytes are then read as uint8)
    store = x["sum"].dtype if p.with_sum and out_type != np.int32 else out_type
    return saturate(np, y, store).astype(out_type), lo, hi


def _forward(xp, p, *inputs, run=PLAIN, out=None):
    x = dict(zip(conv_argument_names(p), inputs, strict=True))
    if not p.quantized:
        return _float_forward(p, x, run, out)
    out, lo, hi = _quantized_forward(p, x, run)
    return out, range_array(np, lo), range_array(np, hi)


defop("_sg_mkldnn_conv", param=SgConvParam, base=_SgConvProperty, fwd=_forward, arguments=(),
      outputs=("output", "output_min", "output_max"), non_differentiable=True, deps="", var_args=None, fwd_out=True,
      doc="MXNet's fused (and quantized) CPU convolution: conv [+ BatchNorm] [+ act] [+ sum] [+ act].")
register_numpy("_sg_mkldnn_conv", _forward)
