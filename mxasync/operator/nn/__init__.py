"""Neural-network layer ops (MXNet's src/operator/nn): activations, dense, convolution, pooling, norms, sequences."""

from . import (  # noqa: F401  (importing registers the ops)
    activation,
    batch_norm,
    convolution,
    correlation,
    crop,
    ctc_loss,
    fully_connected,
    im2col,
    instance_l2_norm,
    kl_sparse_reg,
    layer_norm,
    moments,
    rnn,
    roi_pooling,
    sequence,
    spatial_transformer,
    upsampling,
)
