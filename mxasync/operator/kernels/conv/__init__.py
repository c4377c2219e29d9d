"""Convolution and deconvolution kernels over ``xp``, with their numpy layouts.

``convolution.py`` and ``deconvolution.py`` are the kernels the ops call; ``im2col.py``
the column transforms (also the ``im2col``/``col2im`` ops); ``_core.py`` picks one of
three layouts per layer (``_batch_inner.py``, ``_shifted.py``, or per-sample columns
kept in ``_colstore.py`` for the backward pass); each module's docstring has the
measurements behind its rule.
"""

from .convolution import bias_shape, convolution, convolution_backward
from .deconvolution import deconv_pad_adj, deconvolution, deconvolution_backward
from .im2col import col2im, conv_out_size, conv_params, im2col

__all__ = ["convolution", "convolution_backward", "deconvolution", "deconvolution_backward", "deconv_pad_adj",
           "bias_shape", "im2col", "col2im", "conv_out_size", "conv_params"]
