"""AlexNet (Krizhevsky et al. 2012) as MXNet 1.9.1 builds it."""

from __future__ import annotations

from ... import nn
from ...block import HybridBlock
from ._blocks import load_pretrained

__all__ = ["AlexNet", "alexnet"]


class AlexNet(HybridBlock):
    """Five convolutions (three max pools), two 4096-unit Dense layers with dropout, the classifier."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix="")
            with self.features.name_scope():
                f = self.features
                f.add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation="relu"))
                f.add(nn.MaxPool2D(pool_size=3, strides=2))
                f.add(nn.Conv2D(192, kernel_size=5, padding=2, activation="relu"))
                f.add(nn.MaxPool2D(pool_size=3, strides=2))
                f.add(nn.Conv2D(384, kernel_size=3, padding=1, activation="relu"))
                f.add(nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"))
                f.add(nn.Conv2D(256, kernel_size=3, padding=1, activation="relu"))
                f.add(nn.MaxPool2D(pool_size=3, strides=2))
                f.add(nn.Flatten())
                f.add(nn.Dense(4096, activation="relu"))
                f.add(nn.Dropout(0.5))
                f.add(nn.Dense(4096, activation="relu"))
                f.add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=None, root=None, **kwargs):
    """AlexNet; ``pretrained`` loads ``alexnet-<hash>.params`` from ``root`` (default ``$MXNET_HOME/models``)."""
    net = AlexNet(**kwargs)
    if pretrained:
        load_pretrained(net, "alexnet", root, ctx)
    return net
