"""``gluon.contrib.cnn``: deformable convolution layers."""

from .conv_layers import DeformableConvolution

__all__ = ["DeformableConvolution"]
