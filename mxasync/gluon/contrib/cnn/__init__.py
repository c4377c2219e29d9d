"""``gluon.contrib.cnn``: deformable convolution layers."""
