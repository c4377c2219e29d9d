"""SqueezeNet 1.0 and 1.1 (Iandola et al. 2016) as MXNet 1.9.1 builds them."""

from __future__ import annotations

from ... import nn
from ...block import HybridBlock
from ._blocks import HybridConcurrent, load_pretrained

__all__ = ["SqueezeNet", "squeezenet1_0", "squeezenet1_1", "get_squeezenet"]


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix="")
    out.add(nn.Conv2D(channels, kernel_size, padding=padding), nn.Activation("relu"))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """Squeeze (1x1), then 1x1 and 3x3 expansions side by side, concatenated on the channels."""
    out = nn.HybridSequential(prefix="")
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix="")
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


def _pool():
    return nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` '1.0' or '1.1' (1.1: a 3x3 stem and earlier pooling, fewer operations)."""

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        assert version in ["1.0", "1.1"], f"Unsupported SqueezeNet version {version}:1.0 or 1.1 expected"
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            f = self.features
            if version == "1.0":
                f.add(nn.Conv2D(96, kernel_size=7, strides=2), nn.Activation("relu"), _pool())
                f.add(_make_fire(16, 64, 64), _make_fire(16, 64, 64), _make_fire(32, 128, 128), _pool())
                f.add(_make_fire(32, 128, 128), _make_fire(48, 192, 192), _make_fire(48, 192, 192),
                      _make_fire(64, 256, 256), _pool())
                f.add(_make_fire(64, 256, 256))
            else:
                f.add(nn.Conv2D(64, kernel_size=3, strides=2), nn.Activation("relu"), _pool())
                f.add(_make_fire(16, 64, 64), _make_fire(16, 64, 64), _pool())
                f.add(_make_fire(32, 128, 128), _make_fire(32, 128, 128), _pool())
                f.add(_make_fire(48, 192, 192), _make_fire(48, 192, 192), _make_fire(64, 256, 256),
                      _make_fire(64, 256, 256))
            f.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix="")
            self.output.add(nn.Conv2D(classes, kernel_size=1), nn.Activation("relu"), nn.AvgPool2D(13),
                            nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=None, root=None, **kwargs):
    """SqueezeNet '1.0' or '1.1'; ``pretrained`` loads ``squeezenet<version>-<hash>.params`` from ``root``."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        load_pretrained(net, f"squeezenet{version}", root, ctx)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0 (see :func:`get_squeezenet`)."""
    return get_squeezenet("1.0", **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1 (see :func:`get_squeezenet`)."""
    return get_squeezenet("1.1", **kwargs)
