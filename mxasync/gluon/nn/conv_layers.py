"""Convolution, transposed convolution, pooling and padding layers (MXNet 1.9.1's).

Weights have MXNet's shapes: ``(channels, in_channels // groups, *kernel)`` for convolutions
(``(channels, *kernel, in_channels // groups)`` for channel-last layouts) and ``(in_channels,
channels // groups, *kernel)`` for transposed ones; ``in_channels=0`` defers it to the first input.
Channel-last layouts (NWC, NHWC, NDHWC) run as the channel-first op between transposes.

>>> from mxasync.gluon import nn
>>> nn.Conv2D(8, 3, padding=1, in_channels=4).weight.shape
(8, 4, 3, 3)
>>> nn.MaxPool2D()
MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, global_pool=False, pool_type=max, layout=NCHW)
"""

from __future__ import annotations

import numbers

from ..block import HybridBlock
from .activations import Activation

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose",
           "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D", "AvgPool2D", "AvgPool3D",
           "GlobalMaxPool1D", "GlobalMaxPool2D", "GlobalMaxPool3D", "GlobalAvgPool1D", "GlobalAvgPool2D",
           "GlobalAvgPool3D", "ReflectionPad2D"]

_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


def _tuple(v, n: int, what: str) -> tuple:
    if isinstance(v, numbers.Integral):
        return (int(v),) * n
    v = tuple(v)
    assert len(v) == n, f"{what} must be a number or a list of {n} ints"
    return v


def _check_layout(layout: str, n: int, what: str) -> None:
    ok = _LAYOUTS[n]
    assert layout in ok, f"Only {' and '.join(ok)} layouts are valid for {what}"


def _channels_last(layout: str) -> bool:
    return layout[-1] == "C"


def _to_first(F, x, ndim):
    """NHWC -> NCHW (and the 1-D / 3-D twins)."""
    return F.transpose(x, axes=(0, ndim + 1) + tuple(range(1, ndim + 1)))


def _to_last(F, x, ndim):
    return F.transpose(x, axes=(0,) + tuple(range(2, ndim + 2)) + (1,))


class _Conv(HybridBlock):
    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout, in_channels=0,
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 op_name="Convolution", adj=None, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        n = len(kernel_size)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._op_name = op_name
            self._layout = layout
            self._kwargs = {"kernel": tuple(kernel_size), "stride": _tuple(strides, n, "strides"),
                            "dilate": _tuple(dilation, n, "dilation"), "pad": _tuple(padding, n, "padding"),
                            "num_filter": channels, "num_group": groups, "no_bias": not use_bias, "layout": layout}
            if adj is not None:
                self._kwargs["adj"] = tuple(adj)
            self.weight = self.params.get("weight", shape=self._weight_shape(), init=weight_initializer,
                                          allow_deferred_init=True)
            self.bias = (self.params.get("bias", shape=(channels,), init=bias_initializer,
                                         allow_deferred_init=True) if use_bias else None)
            self.act = Activation(activation, prefix=activation + "_") if activation is not None else None

    def _weight_shape(self) -> tuple:
        k = self._kwargs["kernel"]
        groups = self._kwargs["num_group"]
        if self._op_name == "Deconvolution":
            outer, inner = self._in_channels, self._channels // groups
        else:
            outer, inner = self._channels, self._in_channels // groups
        return (outer, *k, inner) if _channels_last(self._layout) else (outer, inner, *k)

    def hybrid_forward(self, F, x, weight, bias=None):
        kwargs = self._kwargs
        last = _channels_last(self._layout)
        if last:  # our kernels are channel-first: move C (and the weight's C axis) to axis 1
            n = len(kwargs["kernel"])
            kwargs = {k: v for k, v in kwargs.items() if k != "layout"}  # the op's default: channel-first
            x, weight = _to_first(F, x, n), _to_first(F, weight, n)
        args = (x, weight) if bias is None else (x, weight, bias)
        out = getattr(F, self._op_name)(*args, name="fwd", **kwargs)
        if last:
            out = _to_last(F, out, len(kwargs["kernel"]))
        return self.act(out) if self.act is not None else out

    def _alias(self):
        return "conv"

    def __repr__(self):
        k = self._kwargs
        n = len(k["kernel"])
        s = f"{type(self).__name__}({{mapping}}, kernel_size={k['kernel']}, stride={k['stride']}"
        if k["pad"] != (0,) * n:
            s += f", padding={k['pad']}"
        if k["dilate"] != (1,) * n:
            s += f", dilation={k['dilate']}"
        if k["num_group"] != 1:
            s += f", groups={k['num_group']}"
        if self.bias is None:
            s += ", bias=False"
        if self.act:
            s += f", {self.act}"
        shape = self.weight.shape
        return (s + ")").format(mapping=f"{shape[1] if shape[1] else None} -> {shape[0]}")


class _ConvND(_Conv):
    _ndim = 2

    def _setup(self, channels, kernel_size, strides, padding, dilation, groups, layout, activation, use_bias,
               weight_initializer, bias_initializer, in_channels, output_padding, kwargs):
        n = self._ndim
        if n == 1:
            assert layout == "NCW", "Only supports 'NCW' layout for now"
        else:
            assert layout in _LAYOUTS[n], f"Only supports {' and '.join(map(repr, _LAYOUTS[n]))} layout for now"
        kernel_size = _tuple(kernel_size, n, "kernel_size")
        transpose = output_padding is not None
        op_name = kwargs.pop("op_name", "Deconvolution" if transpose else "Convolution")
        adj = _tuple(output_padding, n, "output_padding") if transpose else None
        _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups, layout, in_channels,
                       activation, use_bias, weight_initializer, bias_initializer, op_name, adj=adj, **kwargs)
        if transpose:
            self.outpad = adj


class _PlainConv(_ConvND):
    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1, layout=None,
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros", in_channels=0,
                 **kwargs):
        self._setup(channels, kernel_size, strides, padding, dilation, groups, layout or _LAYOUTS[self._ndim][0],
                    activation, use_bias, weight_initializer, bias_initializer, in_channels, None, kwargs)


class _TransposedConv(_ConvND):
    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0, dilation=1, groups=1,
                 layout=None, activation=None, use_bias=True, weight_initializer=None, bias_initializer="zeros",
                 in_channels=0, **kwargs):
        self._setup(channels, kernel_size, strides, padding, dilation, groups, layout or _LAYOUTS[self._ndim][0],
                    activation, use_bias, weight_initializer, bias_initializer, in_channels, output_padding, kwargs)


class Conv1D(_PlainConv):
    """1-D convolution over ``NCW`` inputs; ``activation`` is applied to the result when given."""

    _ndim = 1


class Conv2D(_PlainConv):
    """2-D convolution over ``NCHW`` (or ``NHWC``) inputs; ``activation`` is applied to the result when given."""

    _ndim = 2


class Conv3D(_PlainConv):
    """3-D convolution over ``NCDHW`` (or ``NDHWC``) inputs; ``activation`` is applied to the result when given."""

    _ndim = 3


class Conv1DTranspose(_TransposedConv):
    """1-D transposed convolution (MXNet's Deconvolution) over ``NCW`` inputs."""

    _ndim = 1


class Conv2DTranspose(_TransposedConv):
    """2-D transposed convolution (MXNet's Deconvolution) over ``NCHW`` (or ``NHWC``) inputs."""

    _ndim = 2


class Conv3DTranspose(_TransposedConv):
    """3-D transposed convolution (MXNet's Deconvolution) over ``NCDHW`` (or ``NDHWC``) inputs."""

    _ndim = 3


class _Pooling(HybridBlock):
    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        n = len(pool_size)
        if strides is None:
            strides = pool_size
        self._kwargs = {"kernel": tuple(pool_size), "stride": _tuple(strides, n, "strides"),
                        "pad": _tuple(padding, n, "padding"), "global_pool": global_pool, "pool_type": pool_type,
                        "layout": layout, "pooling_convention": "full" if ceil_mode else "valid"}
        if count_include_pad is not None:
            self._kwargs["count_include_pad"] = count_include_pad

    def _alias(self):
        return "pool"

    def hybrid_forward(self, F, x):
        kwargs = self._kwargs
        if _channels_last(kwargs["layout"]):
            n = len(kwargs["kernel"])
            first = {k: v for k, v in kwargs.items() if k != "layout"}
            out = F.Pooling(_to_first(F, x, n), name="fwd", **first)
            return _to_last(F, out, n)
        return F.Pooling(x, name="fwd", **kwargs)

    def __repr__(self):
        k = self._kwargs
        return (f"{type(self).__name__}(size={k['kernel']}, stride={k['stride']}, padding={k['pad']}, "
                f"ceil_mode={k['pooling_convention'] == 'full'}, global_pool={k['global_pool']}, "
                f"pool_type={k['pool_type']}, layout={k['layout']})")


class _LocalPool(_Pooling):
    _ndim = 2
    _type = "max"

    def _setup(self, pool_size, strides, padding, ceil_mode, layout, count_include_pad, kwargs):
        n = self._ndim
        _check_layout(layout, n, f"{n}D Pooling")
        _Pooling.__init__(self, _tuple(pool_size, n, "pool_size"), strides, padding, ceil_mode, False, self._type,
                          layout, count_include_pad, **kwargs)


class MaxPool1D(_LocalPool):
    """1-D max pooling over ``NCW`` inputs; ``strides`` defaults to ``pool_size``, ``ceil_mode`` rounds up."""

    _ndim = 1

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False, **kwargs):
        self._setup(pool_size, strides, padding, ceil_mode, layout, None, kwargs)


class MaxPool2D(_LocalPool):
    """2-D max pooling over ``NCHW`` inputs; ``strides`` defaults to ``pool_size``, ``ceil_mode`` rounds up."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout="NCHW", ceil_mode=False, **kwargs):
        self._setup(pool_size, strides, padding, ceil_mode, layout, None, kwargs)


class MaxPool3D(_LocalPool):
    """3-D max pooling over ``NCDHW`` inputs; ``strides`` defaults to ``pool_size``, ``ceil_mode`` rounds up."""

    _ndim = 3

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False, layout="NCDHW", **kwargs):
        self._setup(pool_size, strides, padding, ceil_mode, layout, None, kwargs)


class AvgPool1D(_LocalPool):
    """1-D average pooling over ``NCW`` inputs; ``count_include_pad`` counts padded positions."""

    _ndim = 1
    _type = "avg"

    def __init__(self, pool_size=2, strides=None, padding=0, layout="NCW", ceil_mode=False, count_include_pad=True,
                 **kwargs):
        self._setup(pool_size, strides, padding, ceil_mode, layout, count_include_pad, kwargs)


class AvgPool2D(_LocalPool):
    """2-D average pooling over ``NCHW`` inputs; ``count_include_pad`` counts padded positions."""

    _type = "avg"

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False, layout="NCHW",
                 count_include_pad=True, **kwargs):
        self._setup(pool_size, strides, padding, ceil_mode, layout, count_include_pad, kwargs)


class AvgPool3D(_LocalPool):
    """3-D average pooling over ``NCDHW`` inputs; ``count_include_pad`` counts padded positions."""

    _ndim = 3
    _type = "avg"

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False, layout="NCDHW",
                 count_include_pad=True, **kwargs):
        self._setup(pool_size, strides, padding, ceil_mode, layout, count_include_pad, kwargs)


class _GlobalPool(_Pooling):
    _ndim = 2
    _type = "max"

    def __init__(self, layout=None, **kwargs):
        n = self._ndim
        layout = layout or _LAYOUTS[n][0]
        _check_layout(layout, n, f"{n}D Pooling")
        super().__init__((1,) * n, None, 0, True, True, self._type, layout, **kwargs)


class GlobalMaxPool1D(_GlobalPool):
    """Max over the whole width of an ``NCW`` input (output width 1)."""

    _ndim = 1


class GlobalMaxPool2D(_GlobalPool):
    """Max over the whole height and width of an ``NCHW`` input (output 1x1)."""


class GlobalMaxPool3D(_GlobalPool):
    """Max over every spatial position of an ``NCDHW`` input (output 1x1x1)."""

    _ndim = 3


class GlobalAvgPool1D(_GlobalPool):
    """Mean over the whole width of an ``NCW`` input (output width 1)."""

    _ndim = 1
    _type = "avg"


class GlobalAvgPool2D(_GlobalPool):
    """Mean over the whole height and width of an ``NCHW`` input (output 1x1)."""

    _type = "avg"


class GlobalAvgPool3D(_GlobalPool):
    """Mean over every spatial position of an ``NCDHW`` input (output 1x1x1)."""

    _ndim = 3
    _type = "avg"


class ReflectionPad2D(HybridBlock):
    """Pad the two spatial axes of an NCHW input by reflection; ``padding`` is a number or MXNet's 8-tuple."""

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Integral):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        assert len(padding) == 8
        self._padding = tuple(padding)

    def hybrid_forward(self, F, x):
        return F.pad(x, mode="reflect", pad_width=self._padding)
