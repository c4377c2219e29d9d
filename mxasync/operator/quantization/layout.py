"""``_contrib_quantized_flatten`` and ``_contrib_quantized_concat`` (MXNet's MKLDNN concat: each input
is rescaled, rounding half to even, to the widest range)."""

from __future__ import annotations

import numpy as np

from ..functional import defop
from ..params import NoParam
from ..registry import get_op
from ..tensor.join_split import ConcatParam
from ._scales import F32, INT8_RANGE, UINT8_RANGE, max_abs, range_array, saturate, scalar, type_names
from .quantize import RANGED_OUTPUTS, QuantizedProperty


class _QuantizedFlattenProperty(QuantizedProperty):
    def infer_shape(self, in_shapes):
        d = in_shapes[0]
        out = None if d is None else (d[0], int(np.prod(d[1:])))
        return [d, (1,), (1,)], [out, (1,), (1,)], []


defop("_contrib_quantized_flatten", param=NoParam, base=_QuantizedFlattenProperty,
      fwd=lambda xp, p, data, lo, hi: (data.reshape(data.shape[0], -1).copy(), lo.copy(), hi.copy()),
      arguments=("data", "min_data", "max_data"), outputs=RANGED_OUTPUTS, non_differentiable=True, deps="",
      doc="Flatten quantized data to (N, rest); the range passes through.")


class _QuantizedConcatProperty(QuantizedProperty):
    key_var_num_args = "num_args"

    def list_arguments(self):
        n = self.params.num_args
        return [f"arg{i}" for i in range(n)] + [f"arg{i}_{m}" for i in range(n) for m in ("min", "max")]

    def infer_shape(self, in_shapes):
        n = self.params.num_args
        ins, outs, _ = get_op("Concat").prepare(**self.params.model_dump()).infer_shape(list(in_shapes[:n]))
        return list(ins) + [(1,)] * (2 * n), [outs[0], (1,), (1,)], []

    def infer_type(self, in_types):
        n = self.params.num_args
        data = [t or "uint8" for t in type_names(in_types[:n])]
        out = "int8" if "int8" in data else "uint8"
        return data + ["float32"] * (2 * n), [out, "float32", "float32"], []


def _level(dtype):
    return INT8_RANGE if np.dtype(dtype) == np.int8 else UINT8_RANGE


def _quantized_concat(xp, p, *args):
    n = p.num_args
    data, ranges = args[:n], [scalar(r) for r in args[n:]]
    lo = F32(min([F32(0)] + ranges[0::2]))
    hi = F32(max([F32(0)] + ranges[1::2]))
    out_type = np.int8 if any(d.dtype == np.int8 for d in data) else np.uint8
    out_scale = F32(_level(out_type) / max_abs(lo, hi))
    parts = []
    for i, d in enumerate(data):
        scale = F32(_level(d.dtype) / max_abs(ranges[2 * i], ranges[2 * i + 1]))
        parts.append(d if scale == out_scale else saturate(xp, d.astype(F32) * F32(out_scale / scale), out_type))
    return xp.concatenate([q.astype(out_type) for q in parts], axis=p.dim), range_array(xp, lo), range_array(xp, hi)


defop("_contrib_quantized_concat", param=ConcatParam, base=_QuantizedConcatProperty, fwd=_quantized_concat,
      arguments=(), outputs=RANGED_OUTPUTS, non_differentiable=True, deps="", var_args="num_args",
      doc="Concat of quantized arrays, each rescaled to the widest input range.")
