"""``_contrib_quantized_batch_norm`` (MKLDNN's int8 inference batch norm) and
``_contrib_quantized_embedding`` (int8 rows taken by index; the weight's range passes through)."""

from __future__ import annotations

import numpy as np

from ..functional import defop
from ..nn.batch_norm import BatchNormParam
from ..tensor.indexing import EmbeddingParam
from ._scales import F32, INT8_RANGE, UINT8_RANGE, max_abs, range_array, saturate, scalar
from .quantize import RANGED_OUTPUTS, QuantizedProperty


class _QuantizedBatchNormProperty(QuantizedProperty):
    """MXNet lists moving_mean / moving_var (inputs 3 and 4) as auxiliary states between beta and
    the data range, so they are declared as inputs the op owns (``mutates``)."""

    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        c = None if d is None else (d[self.params.axis % len(d)],)
        return [d, c, c, c, c, (1,), (1,)], [d, (1,), (1,)], []

    def infer_type(self, in_types):
        return [in_types[0] or "int8"] + ["float32"] * 6, ["int8", "float32", "float32"], []


def _quantized_batch_norm(xp, p, data, gamma, beta, mean, var, lo, hi):
    """int8 out = round(w * q / sqrt(1 + eps) + b), MKLDNN's scale-shift form with unit variance:
    ``w = gamma / sqrt(var + eps) * |data range| / |out range|``, ``b = (beta - mean * gamma / sqrt(var +
    eps)) * 127.5 / |out range|`` (gamma used as given, as MXNet's MKLDNN kernel does)."""
    if p.min_calib_range is None or p.max_calib_range is None:
        raise ValueError("_contrib_quantized_batch_norm: needs min_calib_range and max_calib_range (MXNet's rule)")
    abs_data = max_abs(scalar(lo), scalar(hi))
    abs_out = max_abs(p.min_calib_range, p.max_calib_range)
    if data.dtype == np.uint8:  # MKLDNN reorders uint8 to int8 first
        data = saturate(xp, data.astype(F32) * F32(INT8_RANGE / UINT8_RANGE), np.int8)
    invstd = (1.0 / np.sqrt(var.astype(np.float64) + p.eps)).astype(F32)
    w = gamma * invstd * abs_data / abs_out
    b = (beta - mean * gamma * invstd) * INT8_RANGE / abs_out
    shape = [1] * data.ndim
    shape[p.axis % data.ndim] = -1
    w = (w / F32(np.sqrt(F32(1) + F32(p.eps)))).astype(F32).reshape(shape)
    out = saturate(xp, data.astype(F32) * w + b.astype(F32).reshape(shape), np.int8)
    return out, range_array(xp, p.min_calib_range), range_array(xp, p.max_calib_range)


defop("_contrib_quantized_batch_norm", param=BatchNormParam, base=_QuantizedBatchNormProperty,
      fwd=_quantized_batch_norm, mutates=(3, 4), outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      arguments=("data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data"),
      doc="Inference BatchNorm of quantized data into int8 over the calibrated range.")


class _QuantizedEmbeddingProperty(QuantizedProperty):
    num_data = 2

    def infer_shape(self, in_shapes):
        d, p = in_shapes[0], self.params
        out = None if d is None else tuple(d) + (p.output_dim,)
        return [d, (p.input_dim, p.output_dim), (1,), (1,)], [out, (1,), (1,)], []

    def infer_type(self, in_types):
        return [in_types[0] or "float32", "int8", "float32", "float32"], ["int8", "float32", "float32"], []


def _quantized_embedding(xp, p, data, weight, lo, hi):
    idx = xp.clip(data.astype(np.int64), 0, p.input_dim - 1)
    return weight[idx], lo.copy(), hi.copy()


defop("_contrib_quantized_embedding", param=EmbeddingParam, base=_QuantizedEmbeddingProperty,
      fwd=_quantized_embedding, arguments=("data", "weight", "min_weight", "max_weight"), outputs=RANGED_OUTPUTS,
      non_differentiable=True, deps="", doc="Embedding lookup of int8 rows; the weight's range passes through.")
