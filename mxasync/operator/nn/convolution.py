"""Convolution, Deconvolution (1-D/2-D/3-D, stride, pad, dilate, num_group) and Pooling.

The kernels (``mxasync.operator.kernels``) are im2col + batched matmuls written against
``xp``, so every backend runs them as they are; the numpy backend's overrides run them
with its runner (its convolution layouts, BLAS and kernel threads), CuPy's with cuDNN.

>>> from mxasync.operator import get_op
>>> get_op("Convolution").prepare(kernel=(5, 5), num_filter=20).infer_shape([(1, 1, 28, 28), None, None])[1]
[(1, 20, 24, 24)]
>>> get_op("Convolution").prepare(kernel=(3, 3), num_filter=-2)
Traceback (most recent call last):
  ...
mxasync.base.MXAsyncError: Convolution: num_filter=-2: Input should be greater than 0
"""

from __future__ import annotations

from typing import ClassVar, Literal, Optional

from ..functional import FunctionalProperty, defop
from ..kernels import pooling as poolk
from ..kernels._runner import PLAIN
from ..kernels.conv import convolution as convk
from ..kernels.conv import deconvolution as deconvk
from ..kernels.conv.im2col import conv_out_size, conv_params
from ..numpy_overrides import register_numpy
from ..params import Field, OpParam, Shape

__all__: list[str] = []


class ConvolutionParam(OpParam):
    kernel: Shape
    stride: Shape = ()
    dilate: Shape = ()
    pad: Shape = ()
    num_filter: int = Field(gt=0)
    num_group: int = Field(default=1, gt=0)
    workspace: int = 1024
    no_bias: bool = False
    cudnn_tune: Optional[Literal["off", "limited_workspace", "fastest"]] = None
    cudnn_off: bool = False
    layout: Optional[str] = None


class DeconvolutionParam(ConvolutionParam):
    positional_order: ClassVar[tuple[str, ...]] = ("kernel", "stride", "dilate", "pad", "adj", "target_shape", "num_filter", "num_group", "workspace", "no_bias", "cudnn_tune", "cudnn_off", "layout")  # MXNet's
    adj: Shape = ()
    target_shape: Shape = ()
    workspace: int = 512
    no_bias: bool = True


def _conv_kw(p, deconv=False):
    kw = dict(kernel=p.kernel, stride=p.stride or None, dilate=p.dilate or None, pad=p.pad or None,
              num_filter=p.num_filter, num_group=p.num_group, no_bias=p.no_bias, layout=p.layout)
    if deconv:
        kw.update(adj=p.adj or None, target_shape=p.target_shape or None)
    return kw


class _ConvProperty(FunctionalProperty):
    float16_in_float32 = True

    deconv = False

    def infer_shape(self, in_shapes):
        p = self.params
        d = in_shapes[0]
        if d is None:
            return list(in_shapes), [None], []
        nsp = len(p.kernel)
        if len(d) != nsp + 2:
            raise self.error(f"data has shape {tuple(d)} but kernel={p.kernel} needs {nsp + 2}-D data (N, C, ...)")
        c = d[1]
        if c % p.num_group or p.num_filter % p.num_group:
            raise self.error(f"num_group={p.num_group} must divide the {c} input channels and num_filter={p.num_filter}")
        k, s, dl, pd = conv_params(nsp, p.kernel, p.stride or None, p.dilate or None, p.pad or None)
        if self.deconv:
            wshape = (c, p.num_filter // p.num_group) + tuple(k)
            try:
                pd2, adj = deconvk.deconv_pad_adj(d[2:], k, s, dl, pd, p.adj or None, p.target_shape or None)
            except ValueError as exc:
                raise self.error(str(exc).replace("Deconvolution: ", "")) from None
            osp = deconvk.deconv_out_spatial(d[2:], k, s, dl, pd2, adj)
        else:
            wshape = (p.num_filter, c // p.num_group) + tuple(k)
            for x, kk, _ss, dd, pp in zip(d[2:], k, s, dl, pd, strict=False):
                if x and dd * (kk - 1) + 1 > x + 2 * pp:  # x == 0: not known yet (MXNet's partial shapes)
                    raise self.error(f"kernel={p.kernel} (dilate={p.dilate or (1,) * nsp}) is larger than the "
                                     f"input {tuple(d)} padded by pad={p.pad or (0,) * nsp}")
            osp = tuple(conv_out_size(x, kk, ss, pp, dd) if x else 0
                        for x, kk, ss, pp, dd in zip(d[2:], k, s, pd, dl, strict=False))
        names = ("weight", "bias")
        for name, got, want in zip(names, in_shapes[1:], (wshape, (p.num_filter,)), strict=False):
            if got is not None and tuple(got) != want:
                raise self.error(f"{name} has shape {tuple(got)} but data {tuple(d)} needs {want}")
        ins = [d, wshape] + ([] if p.no_bias else [(p.num_filter,)])
        return ins, [(d[0], p.num_filter) + tuple(osp)], []

    def refine_partial_inputs(self, in_shapes, out_shapes):
        """Unknown (0) data dimensions from the output: the batch, and (convolution) each spatial size as
        ``(out - 1) * stride + dilate * (kernel - 1) + 1 - 2 * pad`` (MXNet's backward shape rule)."""
        d, out = in_shapes[0], out_shapes[0]
        p = self.params
        if d is None or out is None or len(d) != len(out):
            return None
        k, s, dl, pd = conv_params(len(p.kernel), p.kernel, p.stride or None, p.dilate or None, p.pad or None)
        sp = list(d[2:])
        if not self.deconv:
            for i, (x, o) in enumerate(zip(d[2:], out[2:], strict=False)):
                if not x and o:
                    sp[i] = (o - 1) * s[i] + dl[i] * (k[i] - 1) + 1 - 2 * pd[i]
        return [(d[0] or out[0], d[1]) + tuple(sp)]


def _conv_fwd(xp, p, op_ctx, data, weight, bias=None, out=None, run=PLAIN):
    # a training forward may keep its im2col columns for the backward that follows (the numpy core does)
    return convk.convolution(xp, data, weight, bias, out=out, keep=bool(op_ctx.is_train), run=run, **_conv_kw(p))


def _conv_bwd(xp, p, og, ins, outs, need, into, run=PLAIN):
    # a gradient no one asked for (the data input of a first layer) is never computed
    need = list(need) + [False] * (3 - len(need))
    gd, gw, gb = convk.convolution_backward(xp, og[0], ins[0], ins[1], need_data_grad=need[0],
                                            need_weight_grad=need[1], need_bias_grad=need[2],
                                            into=tuple(into) + (None,) * (3 - len(into)), run=run,
                                            **_conv_kw(p))
    return [gd, gw] if p.no_bias else [gd, gw, gb]


def _deconv_fwd(xp, p, data, weight, bias=None, run=PLAIN):
    return deconvk.deconvolution(xp, data, weight, bias, run=run, **_conv_kw(p, True))


def _deconv_bwd(xp, p, og, ins, outs, run=PLAIN):
    gd, gw, gb = deconvk.deconvolution_backward(xp, og[0], ins[0], ins[1], run=run, **_conv_kw(p, True))
    return [gd, gw] if p.no_bias else [gd, gw, gb]


def _args(p):
    return ["data", "weight"] if p.no_bias else ["data", "weight", "bias"]


defop("Convolution", param=ConvolutionParam, base=_ConvProperty, arguments=("data", "weight", "bias"), args=_args,
      deps="og,in", fwd=_conv_fwd, bwd=_conv_bwd, fwd_out=True, bwd_into=True, wants_ctx=True,
      aliases=("Convolution_v1",),
      doc="N-D convolution (1-D, 2-D, 3-D) with stride, pad, dilate and num_group; weight is (F, C/g, *kernel).")
defop("Deconvolution", param=DeconvolutionParam, base=_ConvProperty, arguments=("data", "weight", "bias"),
      args=_args, deps="og,in", fwd=_deconv_fwd, bwd=_deconv_bwd, deconv=True,
      doc="Transposed convolution; weight is (C, F/g, *kernel); ``target_shape`` sets pad/adj as in MXNet.")
register_numpy("Convolution", _conv_fwd, _conv_bwd)
register_numpy("Deconvolution", _deconv_fwd, _deconv_bwd)


class PoolingParam(OpParam):
    kernel: Shape = ()
    pool_type: Literal["max", "avg", "sum", "lp"] = "max"
    global_pool: bool = False
    cudnn_off: bool = False
    pooling_convention: Literal["valid", "full", "same"] = "valid"
    stride: Shape = ()
    pad: Shape = ()
    p_value: Optional[int] = None
    count_include_pad: Optional[bool] = None
    layout: Optional[str] = None


def _first(v, kernel):
    """MXNet reads only the first ``len(kernel)`` values of stride and pad (``pad=(0, 0, 0)`` on 1-D pooling)."""
    return (v[:len(kernel)] if kernel and len(v) > len(kernel) else v) or None


def _pool_kw(p):
    return dict(kernel=p.kernel or None, pool_type=p.pool_type, global_pool=p.global_pool,
                pooling_convention=p.pooling_convention, stride=_first(p.stride, p.kernel),
                pad=_first(p.pad, p.kernel),
                p_value=p.p_value, count_include_pad=p.count_include_pad, layout=p.layout)


class _PoolProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        p = self.params
        d = in_shapes[0]
        if d is None:
            return [None], [None], []
        if len(d) < 3:
            raise self.error(f"data has shape {tuple(d)}; Pooling needs (N, C, ...) with 1 to 3 spatial axes")
        nsp = len(d) - 2
        if p.pooling_convention == "same":  # MXNet's rule: 1-D only, and no pad
            if nsp != 1:
                raise self.error(f"pooling_convention='same' supports 1-D pooling only: data {tuple(d)} needs "
                                 f"3 axes (N, C, W)")
            if any(p.pad):
                raise self.error(f"pooling_convention='same' computes its own padding: pad={p.pad} must be 0")
        if p.global_pool:
            return [d], [tuple(d[:2]) + (1,) * nsp], []
        if len(p.kernel) != nsp:
            raise self.error(f"kernel={p.kernel} does not match the {nsp} spatial axes of data {tuple(d)}")
        k, s, _, pd = conv_params(nsp, p.kernel, _first(p.stride, p.kernel), None, _first(p.pad, p.kernel))
        for x, kk, pp in zip(d[2:], k, pd, strict=False):
            if kk > x + 2 * pp:
                raise self.error(f"kernel={p.kernel} is larger than the input {tuple(d)} padded by pad={pd}")
        osp = tuple(poolk.pool_out_size(x, kk, ss, pp, p.pooling_convention) for x, kk, ss, pp in zip(d[2:], k, s, pd, strict=False))
        return [d], [tuple(d[:2]) + osp], []


def _pool_fwd(xp, p, x, out=None, run=PLAIN):
    return poolk.pooling(xp, x, into=out, run=run, **_pool_kw(p))


def _pool_bwd(xp, p, og, ins, outs, need, into, run=PLAIN):
    return [poolk.pooling_backward(xp, og[0], ins[0], out=outs[0], into=into[0], run=run, **_pool_kw(p))]


defop("Pooling", param=PoolingParam, base=_PoolProperty, deps="og,in,out", aliases=("Pooling_v1",),
      fwd=_pool_fwd, fwd_out=True, bwd_into=True, bwd=_pool_bwd,
      doc="Max/avg/sum/lp pooling over 1 to 3 spatial axes; global_pool, 'valid'/'full'/'same' conventions.")
register_numpy("Pooling", _pool_fwd, _pool_bwd)
