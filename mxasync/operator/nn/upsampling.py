"""UpSampling (nearest and bilinear), MXNet 1.x's layer op.

>>> from mxasync.operator import get_op
>>> get_op("UpSampling").prepare(scale=2, sample_type="nearest", num_args=2).infer_shape([(1, 2, 2, 2), (1, 3, 4, 4)])
([(1, 2, 2, 2), (1, 3, 4, 4)], [(1, 5, 4, 4)], [])
"""

from __future__ import annotations

from typing import Literal

from ..functional import FunctionalProperty, defop
from ..kernels._runner import PLAIN
from ..kernels.conv import deconvolution as deconvk
from ..numpy_overrides import register_numpy
from ..params import Field, OpParam

__all__ = ["UpSamplingParam"]


class UpSamplingParam(OpParam):
    scale: int = Field(gt=0)
    num_filter: int = 0
    sample_type: Literal["nearest", "bilinear"]
    multi_input_mode: Literal["concat", "sum"] = "concat"
    num_args: int = Field(default=1, ge=1)
    workspace: int = 512


def _bilinear_kw(p, channels):
    k = 2 * p.scale - p.scale % 2
    pad = p.scale // 2  # ceil((scale - 1) / 2)
    return dict(kernel=(k, k), stride=(p.scale, p.scale), pad=(pad, pad), num_filter=channels, num_group=channels,
                no_bias=True)


class _UpSamplingProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        p = self.params
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None], []
        if len(d) != 4:
            raise self.error(f"data has shape {tuple(d)}; UpSampling needs 4-D (N, C, H, W) inputs")
        oh, ow = d[2] * p.scale, d[3] * p.scale
        if p.sample_type == "bilinear":
            k = 2 * p.scale - p.scale % 2
            w = (d[1], 1, k, k)
            if p.num_filter and p.num_filter != d[1]:
                raise self.error(f"num_filter={p.num_filter} must equal the {d[1]} channels of data {tuple(d)}")
            if in_shapes[1] is not None and tuple(in_shapes[1]) != w:
                raise self.error(f"weight has shape {tuple(in_shapes[1])} but data {tuple(d)} needs {w}")
            return [d, w], [(d[0], d[1], oh, ow)], []
        channels = 0
        for i, s in enumerate(in_shapes):
            if s is None:
                return list(in_shapes), [None], []
            if len(s) != 4 or s[0] != d[0] or oh % s[2] or ow % s[3]:
                raise self.error(f"input {i} has shape {tuple(s)}; it must be (N={d[0]}, C, h, w) with h, w "
                                 f"dividing the output size ({oh}, {ow})")
            if p.multi_input_mode == "sum" and s[1] != d[1]:
                raise self.error(f"multi_input_mode='sum' needs {d[1]} channels in every input, input {i} "
                                 f"has {s[1]}")
            channels += s[1]
        c = d[1] if p.multi_input_mode == "sum" else channels
        return list(in_shapes), [(d[0], c, oh, ow)], []


def _args(p):
    return ["data", "weight"] if p.sample_type == "bilinear" else [f"arg{i}" for i in range(p.num_args)]


def _nearest(xp, x, oh, ow):
    sh, sw = oh // x.shape[2], ow // x.shape[3]
    return xp.repeat(xp.repeat(x, sh, axis=2), sw, axis=3)


def _upsampling(xp, p, *ins, run=PLAIN):
    if p.sample_type == "bilinear":
        data, weight = ins
        return deconvk.deconvolution(xp, data, weight, None, run=run, **_bilinear_kw(p, data.shape[1]))
    oh, ow = ins[0].shape[2] * p.scale, ins[0].shape[3] * p.scale
    ups = [_nearest(xp, x, oh, ow) for x in ins]
    if p.multi_input_mode == "sum":
        out = ups[0]
        for u in ups[1:]:
            out = out + u
        return out
    return ups[0] if len(ups) == 1 else xp.concatenate(ups, axis=1)


def _upsampling_bwd(xp, p, og, ins, outs, run=PLAIN):
    g = og[0]
    if p.sample_type == "bilinear":
        data, weight = ins
        gd, gw, _ = deconvk.deconvolution_backward(xp, g, data, weight, run=run, **_bilinear_kw(p, data.shape[1]))
        return [gd, gw]
    grads, c0 = [], 0
    for x in ins:
        n, c, h, w = x.shape
        part = g if p.multi_input_mode == "sum" else g[:, c0:c0 + c]
        c0 += c
        sh, sw = g.shape[2] // h, g.shape[3] // w
        grads.append(part.reshape(n, c, h, sh, w, sw).sum(axis=(3, 5)))
    return grads


defop("UpSampling", param=UpSamplingParam, base=_UpSamplingProperty, arguments=("data",), args=_args,
      var_args="num_args", deps="og,in", fwd=_upsampling, bwd=_upsampling_bwd,
      doc="Upsample (N, C, H, W) inputs by ``scale``: 'nearest' repeats pixels (several inputs are brought to "
          "the first one's output size, then concatenated or summed); 'bilinear' is a per-channel "
          "Deconvolution with a learned ``weight`` of (C, 1, 2*scale - scale%2, same).")
register_numpy("UpSampling", _upsampling, _upsampling_bwd)
