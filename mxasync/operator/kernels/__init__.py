"""Numerical kernels of the neural-network operators, as pure functions over ``xp``.

Each kernel takes the array namespace first (``numpy`` on CPU, ``cupy`` on GPU) and
returns new arrays; the operator layer copies them into outputs per ``OpReqType``.
Optimizer updates are the exception: they change their state arrays in place.
Parameter names and defaults follow MXNet 1.9.
"""

# Module handles: a function re-exported below shares its module's name and hides
# it as an attribute, so ``from .kernels import _mod_pooling`` reaches the module.
from . import activation as _mod_activation
from . import batch_norm as _mod_batch_norm
from . import dropout as _mod_dropout
from . import fully_connected as _mod_fully_connected
from . import lrn as _mod_lrn
from . import optimizer as _mod_optimizer
from . import output as _mod_output
from . import pooling as _mod_pooling
from . import softmax as _mod_softmax
from .activation import activation, activation_backward, leaky_relu, leaky_relu_backward
from .batch_norm import batch_norm, batch_norm_backward, batch_norm_update_moving
from .conv import (
    col2im,
    conv_out_size,
    convolution,
    convolution_backward,
    deconv_pad_adj,
    deconvolution,
    deconvolution_backward,
    im2col,
)
from .dropout import dropout, dropout_backward, rrelu, rrelu_backward
from .fully_connected import fully_connected, fully_connected_backward
from .lrn import lrn, lrn_backward
from .optimizer import (
    adagrad_update,
    adam_update,
    nag_mom_update,
    rmsprop_update,
    rmspropalex_update,
    sgd_mom_update,
    sgd_update,
)
from .output import (
    linear_regression_output,
    linear_regression_output_backward,
    logistic_regression_output,
    logistic_regression_output_backward,
    mae_regression_output,
    mae_regression_output_backward,
    softmax_output,
    softmax_output_backward,
)
from .pooling import pool_out_size, pooling, pooling_backward
from .softmax import log_softmax, log_softmax_backward, softmax, softmax_backward

__all__ = [
    "activation",
    "activation_backward",
    "leaky_relu",
    "leaky_relu_backward",
    "batch_norm",
    "batch_norm_backward",
    "batch_norm_update_moving",
    "convolution",
    "convolution_backward",
    "deconvolution",
    "deconvolution_backward",
    "deconv_pad_adj",
    "dropout",
    "dropout_backward",
    "rrelu",
    "rrelu_backward",
    "fully_connected",
    "fully_connected_backward",
    "im2col",
    "col2im",
    "conv_out_size",
    "lrn",
    "lrn_backward",
    "sgd_update",
    "sgd_mom_update",
    "nag_mom_update",
    "adam_update",
    "rmsprop_update",
    "rmspropalex_update",
    "adagrad_update",
    "softmax_output",
    "softmax_output_backward",
    "linear_regression_output",
    "linear_regression_output_backward",
    "logistic_regression_output",
    "logistic_regression_output_backward",
    "mae_regression_output",
    "mae_regression_output_backward",
    "pooling",
    "pooling_backward",
    "pool_out_size",
    "softmax",
    "softmax_backward",
    "log_softmax",
    "log_softmax_backward",
]
