"""Neural-network layer ops (MXNet's src/operator/nn): activations, dense, convolution, pooling, norms, sequences."""

from . import (  # noqa: F401
    activation,
    batch_norm,
    convolution,
    fully_connected,
    instance_l2_norm,
    layer_norm,
    sequence,
    upsampling,
)
