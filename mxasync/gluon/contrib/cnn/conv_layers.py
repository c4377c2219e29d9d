"""``DeformableConvolution``: a convolution whose kernel taps move by offsets that a plain
convolution of the same input predicts (the ``contrib.DeformableConvolution`` op), and
``ModulatedDeformableConvolution`` (DCNv2), whose taps are also scaled by a predicted mask.

>>> import mxasync as mx
>>> layer = DeformableConvolution(4, kernel_size=3, padding=1)
>>> layer.initialize()
>>> layer(mx.nd.ones((1, 2, 5, 5))).shape
(1, 4, 5, 5)
>>> dcn2 = ModulatedDeformableConvolution(4, kernel_size=3, padding=1, in_channels=2)
>>> dcn2.initialize()
>>> dcn2(mx.nd.ones((1, 2, 5, 5))).shape, dcn2.offset_weight.shape
((1, 4, 5, 5), (27, 2, 3, 3))
"""

from __future__ import annotations

from ....base import numeric_types
from ...block import HybridBlock
from ...nn.activations import Activation

__all__ = ["DeformableConvolution", "ModulatedDeformableConvolution"]


def _pair(v):
    return (v,) * 2 if isinstance(v, numeric_types) else tuple(v)


class DeformableConvolution(HybridBlock):
    """2-D deformable convolution (Dai et al., 2017); the offsets start at zero (a plain convolution)."""

    #: what the offset convolution predicts per kernel tap and deformable group: (dy, dx)
    _offset_parts = 2

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                 num_deformable_group=1, layout="NCHW", use_bias=True, in_channels=0, activation=None,
                 weight_initializer=None, bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name="DeformableConvolution", adj=None,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        if layout != "NCHW":
            raise ValueError(f"{type(self).__name__}: only the NCHW layout is supported, got {layout!r}")
        kernel = _pair(kernel_size)
        geometry = {"kernel": kernel, "stride": _pair(strides), "dilate": _pair(dilation), "pad": _pair(padding)}
        offset_channels = self._offset_parts * kernel[0] * kernel[1] * num_deformable_group
        self.offset_split_index = 2 * kernel[0] * kernel[1] * num_deformable_group  # offsets, then the mask
        self._kwargs_offset = dict(geometry, num_filter=offset_channels, num_group=groups,
                                   no_bias=not offset_use_bias)
        self._kwargs_deformable_conv = dict(geometry, num_filter=channels, num_group=groups,
                                            num_deformable_group=num_deformable_group, no_bias=not use_bias)
        self._channels, self._in_channels = channels, in_channels
        per_group = in_channels // groups if in_channels else 0
        with self.name_scope():
            self.offset_weight = self.params.get("offset_weight", shape=(offset_channels, per_group) + kernel,
                                                 init=offset_weight_initializer, allow_deferred_init=True)
            self.offset_bias = self.params.get("offset_bias", shape=(offset_channels,), init=offset_bias_initializer,
                                               allow_deferred_init=True) if offset_use_bias else None
            self.deformable_conv_weight = self.params.get("deformable_conv_weight",
                                                          shape=(channels, per_group) + kernel,
                                                          init=weight_initializer, allow_deferred_init=True)
            self.deformable_conv_bias = self.params.get("deformable_conv_bias", shape=(channels,),
                                                        init=bias_initializer,
                                                        allow_deferred_init=True) if use_bias else None
            self.act = Activation(activation, prefix=activation + "_") if activation else None

    def _alias(self) -> str:
        return "deformable_conv"

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset_args = [x, offset_weight] + ([offset_bias] if offset_bias is not None else [])
        offset = F.Convolution(*offset_args, **self._kwargs_offset)
        conv_args = [x, offset, deformable_conv_weight] + ([deformable_conv_bias]
                                                            if deformable_conv_bias is not None else [])
        out = F.contrib.DeformableConvolution(*conv_args, name="fwd", **self._kwargs_deformable_conv)
        return self.act(out) if self.act is not None else out

    def __repr__(self) -> str:
        k = self._kwargs_deformable_conv
        return (f"{type(self).__name__}({self._in_channels or None} -> {self._channels}, kernel_size={k['kernel']}, "
                f"stride={k['stride']})")


class ModulatedDeformableConvolution(DeformableConvolution):
    """2-D modulated deformable convolution (DCNv2, Zhu et al., 2019): the offset convolution also predicts
    a mask per tap, ``2 * sigmoid``, so at the zero start every tap weighs 1 (a plain convolution)."""

    _offset_parts = 3

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                 num_deformable_group=1, layout="NCHW", use_bias=True, in_channels=0, activation=None,
                 weight_initializer=None, bias_initializer="zeros", offset_weight_initializer="zeros",
                 offset_bias_initializer="zeros", offset_use_bias=True, op_name="ModulatedDeformableConvolution",
                 adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups, num_deformable_group, layout,
                         use_bias, in_channels, activation, weight_initializer, bias_initializer,
                         offset_weight_initializer, offset_bias_initializer, offset_use_bias, op_name, adj,
                         prefix, params)

    def _alias(self) -> str:
        return "modulated_deformable_conv"

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset_args = [x, offset_weight] + ([offset_bias] if offset_bias is not None else [])
        offset = F.Convolution(*offset_args, **self._kwargs_offset)
        taps = F.slice_axis(offset, axis=1, begin=0, end=self.offset_split_index)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self.offset_split_index, end=None)) * 2
        conv_args = [x, taps, mask, deformable_conv_weight] + ([deformable_conv_bias]
                                                                if deformable_conv_bias is not None else [])
        out = F.contrib.ModulatedDeformableConvolution(*conv_args, name="fwd", **self._kwargs_deformable_conv)
        return self.act(out) if self.act is not None else out
