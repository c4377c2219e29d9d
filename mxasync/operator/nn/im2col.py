"""``im2col`` / ``col2im`` as ops (MXNet's src/operator/nn/im2col.cc); each one's gradient is the other.

>>> import mxasync as mx
>>> mx.nd.im2col(mx.nd.arange(16).reshape((1, 1, 4, 4)), kernel=(2, 2), stride=(2, 2)).shape
(1, 4, 4)
"""

from __future__ import annotations

from pydantic import Field

from ..functional import FunctionalProperty, defop
from ..kernels.conv.im2col import col2im, conv_out_size, conv_params, im2col
from ..params import OpParam

__all__ = ["Im2colParam", "Col2imParam"]


class Im2colParam(OpParam):
    kernel: tuple[int, ...]
    stride: tuple[int, ...] = ()
    dilate: tuple[int, ...] = ()
    pad: tuple[int, ...] = ()


class Col2imParam(Im2colParam):
    positional_order = ("output_size", "kernel", "stride", "dilate", "pad")
    output_size: tuple[int, ...] = Field(description="the spatial shape of the image the columns came from")


def _geometry(prop, spatial):
    p = prop.params
    kernel, stride, dilate, pad = conv_params(len(spatial), p.kernel, p.stride, p.dilate, p.pad)
    if len(p.kernel) != len(spatial):
        raise prop.error(f"kernel={p.kernel} has {len(p.kernel)} axes but the image has {len(spatial)} spatial axes "
                         f"{tuple(spatial)}")
    out = tuple(conv_out_size(s, k, st, pd, d) for s, k, st, pd, d in zip(spatial, kernel, stride, pad, dilate,
                                                                          strict=True))
    if any(o < 1 for o in out):
        raise prop.error(f"kernel={p.kernel} (dilate={p.dilate}) is larger than the padded image {tuple(spatial)}")
    k = 1
    for d in kernel:
        k *= d
    blocks = 1
    for d in out:
        blocks *= d
    return k, blocks


class _Im2colProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        k, blocks = _geometry(self, s[2:])
        return [s], [(s[0], s[1] * k, blocks)], []


class _Col2imProperty(FunctionalProperty):
    def infer_shape(self, in_shapes):
        s = in_shapes[0]
        if s is None:
            return [None], [None], []
        k, blocks = _geometry(self, self.params.output_size)
        if len(s) != 3 or s[1] % k or s[2] != blocks:
            raise self.error(f"data has shape {tuple(s)} but kernel={self.params.kernel} over output_size="
                             f"{self.params.output_size} needs (N, C*{k}, {blocks})")
        return [s], [(s[0], s[1] // k, *self.params.output_size)], []


def _im2col(xp, p, x):
    return im2col(xp, x, p.kernel, p.stride, p.dilate, p.pad)


def _col2im(xp, p, cols):
    return col2im(xp, cols, p.output_size, p.kernel, p.stride, p.dilate, p.pad)


defop("im2col", param=Im2colParam, base=_Im2colProperty, deps="og,in",
      fwd=_im2col, bwd=lambda xp, p, og, ins, outs: [col2im(xp, og[0], ins[0].shape[2:], p.kernel, p.stride,
                                                             p.dilate, p.pad)],
      doc="Sliding windows of an (N, C, *spatial) image as columns: (N, C*prod(kernel), number of windows).")
defop("col2im", param=Col2imParam, base=_Col2imProperty, deps="og",
      fwd=_col2im, bwd=lambda xp, p, og, ins, outs: [im2col(xp, og[0], p.kernel, p.stride, p.dilate, p.pad)],
      doc="The adjoint of im2col: sum columns (N, C*prod(kernel), windows) back into (N, C, *output_size).")
