"""ResNet v1 (He et al. 2015) and v2 (pre-activation, He et al. 2016), 18 to 152 layers, as MXNet 1.9.1 builds
them: the same children in the same order, so parameter names (``resnetv10_stage1_conv0_weight``, ...) match
MXNet's model zoo files."""

from __future__ import annotations

from ... import nn
from ...block import HybridBlock
from ._blocks import load_pretrained

__all__ = ["ResNetV1", "ResNetV2", "BasicBlockV1", "BasicBlockV2", "BottleneckV1", "BottleneckV2",
           "resnet18_v1", "resnet34_v1", "resnet50_v1", "resnet101_v1", "resnet152_v1",
           "resnet18_v2", "resnet34_v2", "resnet50_v2", "resnet101_v2", "resnet152_v2", "get_resnet"]


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False, in_channels=in_channels)


def _projection(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False, in_channels=in_channels)


class _ResidualV1(HybridBlock):
    """``relu(body(x) + shortcut(x))``; the shortcut projects when the shape changes."""

    def _shortcut(self, downsample, channels, stride, in_channels):
        if downsample:
            self.downsample = nn.HybridSequential(prefix="")
            self.downsample.add(_projection(channels, stride, in_channels))
            self.downsample.add(nn.BatchNorm())
        else:
            self.downsample = None

    def hybrid_forward(self, F, x):
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(self.body(x) + residual, act_type="relu")


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions with BatchNorm (ResNet-18/34 v1)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(_conv3x3(channels, stride, in_channels), nn.BatchNorm(), nn.Activation("relu"),
                      _conv3x3(channels, 1, channels), nn.BatchNorm())
        self._shortcut(downsample, channels, stride, in_channels)


class BottleneckV1(_ResidualV1):
    """1x1 reduce, 3x3, 1x1 expand (ResNet-50/101/152 v1; the 1x1 convolutions keep their bias, as MXNet's)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix="")
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride), nn.BatchNorm(),
                      nn.Activation("relu"), _conv3x3(channels // 4, 1, channels // 4), nn.BatchNorm(),
                      nn.Activation("relu"), nn.Conv2D(channels, kernel_size=1, strides=1), nn.BatchNorm())
        self._shortcut(downsample, channels, stride, in_channels)


class _ResidualV2(HybridBlock):
    """Pre-activation residual blocks: ``bn1`` and ReLU open the body, and the shortcut is the input or,
    with ``downsample``, its projection taken after that first BN-ReLU."""

    def _preactivate(self, F, x):
        """``(x after bn1 and ReLU, the shortcut)``."""
        residual = x
        x = F.Activation(self.bn1(x), act_type="relu")
        if self.downsample:
            residual = self.downsample(x)
        return x, residual


class BasicBlockV2(_ResidualV2):
    """Pre-activation block: BN, ReLU, 3x3, BN, ReLU, 3x3, plus the (projected) input."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = _projection(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        x, residual = self._preactivate(F, x)
        x = self.conv1(x)
        x = F.Activation(self.bn2(x), act_type="relu")
        return self.conv2(x) + residual


class BottleneckV2(_ResidualV2):
    """Pre-activation bottleneck: BN-ReLU before each of 1x1, 3x3, 1x1."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = _projection(channels, stride, in_channels) if downsample else None

    def hybrid_forward(self, F, x):
        x, residual = self._preactivate(F, x)
        x = self.conv1(x)
        x = self.conv2(F.Activation(self.bn2(x), act_type="relu"))
        x = self.conv3(F.Activation(self.bn3(x), act_type="relu"))
        return x + residual


class _ResNet(HybridBlock):
    def _stem(self, channels, thumbnail):
        if thumbnail:  # small (CIFAR-sized) inputs: one 3x3 convolution, no pooling
            self.features.add(_conv3x3(channels, 1, 0))
        else:
            self.features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False), nn.BatchNorm(), nn.Activation("relu"),
                              nn.MaxPool2D(3, 2, 1))

    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        layer = nn.HybridSequential(prefix=f"stage{stage_index}_")
        with layer.name_scope():
            layer.add(block(channels, stride, channels != in_channels, in_channels=in_channels, prefix=""))
            for _ in range(layers - 1):
                layer.add(block(channels, 1, False, in_channels=channels, prefix=""))
        return layer

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    """ResNet v1: ``block`` repeated ``layers[i]`` times per stage with ``channels[i + 1]`` channels."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self._stem(channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], 1 if i == 0 else 2, i + 1,
                                                   in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    """ResNet v2 (pre-activation); the input passes a BatchNorm without scale or shift first."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        assert len(layers) == len(channels) - 1
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            self.features.add(nn.BatchNorm(scale=False, center=False))
            self._stem(channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1], 1 if i == 0 else 2, i + 1,
                                                   in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm(), nn.Activation("relu"), nn.GlobalAvgPool2D(), nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


resnet_spec = {18: ("basic_block", [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ("basic_block", [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ("bottle_neck", [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ("bottle_neck", [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ("bottle_neck", [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{"basic_block": BasicBlockV1, "bottle_neck": BottleneckV1},
                         {"basic_block": BasicBlockV2, "bottle_neck": BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=None, root=None, **kwargs):
    """ResNet ``version`` (1 or 2) with ``num_layers`` (18, 34, 50, 101, 152); ``pretrained`` loads
    ``resnet<num_layers>_v<version>-<hash>.params`` from ``root`` (default ``$MXNET_HOME/models``)."""
    assert num_layers in resnet_spec, f"Invalid number of layers: {num_layers}. Options are {list(resnet_spec)}"
    assert 1 <= version <= 2, f"Invalid resnet version: {version}. Options are 1 and 2."
    block_type, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](resnet_block_versions[version - 1][block_type], layers, channels, **kwargs)
    if pretrained:
        load_pretrained(net, f"resnet{num_layers}_v{version}", root, ctx)
    return net


def _factory(version, num_layers):
    def make(**kwargs):
        return get_resnet(version, num_layers, **kwargs)

    make.__name__ = make.__qualname__ = f"resnet{num_layers}_v{version}"
    make.__doc__ = f"ResNet-{num_layers} v{version} (see :func:`get_resnet` for the arguments)."
    return make


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (_factory(1, n) for n in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (_factory(2, n) for n in (18, 34, 50, 101, 152))
