"""Deconvolution (MXNet's ``Deconvolution``, a transposed convolution), 1-D/2-D/3-D.

Weight is ``(C, num_filter/num_group, *kernel)``. Per axis the output length is
``stride*(x-1) + dilate*(k-1)+1 - 2*pad + adj``; a non-zero ``target_shape`` overrides
pad and adj the way MXNet does (pad = ceil(excess/2), adj = excess % 2). Forward is
the data-gradient of a convolution, backward is a convolution.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._runner import PLAIN
from .._util import Array, Shape, check_layout, ntuple
from .convolution import add_bias, bias_grad, grouped
from .im2col import conv_params


def deconv_pad_adj(
    in_spatial: Sequence[int],
    kernel: Shape,
    stride: Shape,
    dilate: Shape,
    pad: Shape,
    adj: Sequence[int] | None,
    target_shape: Sequence[int] | None,
) -> tuple[Shape, Shape]:
    """The ``(pad, adj)`` actually used, resolving ``target_shape`` like MXNet.

    >>> deconv_pad_adj((5, 5), (3, 3), (2, 2), (1, 1), (0, 0), None, (10, 10))
    ((1, 1), (1, 1))
    """
    nsp = len(kernel)
    adj = ntuple(adj, nsp, 0)
    target = ntuple(target_shape, nsp, 0)
    if not any(target):
        return pad, adj
    pads, adjs = [], []
    for x, k, s, d, t in zip(in_spatial, kernel, stride, dilate, target, strict=True):
        full = s * (x - 1) + d * (k - 1) + 1
        if full < t:
            raise ValueError(f"Deconvolution: target_shape {tuple(target)} is too big: at most {full} along an axis")
        excess = full - t
        pads.append((excess + 1) // 2)
        adjs.append(excess % 2)
    return tuple(pads), tuple(adjs)


def deconv_out_spatial(
    in_spatial: Sequence[int], kernel: Shape, stride: Shape, dilate: Shape, pad: Shape, adj: Shape
) -> Shape:
    return tuple(
        s * (x - 1) + d * (k - 1) + 1 - 2 * p + a
        for x, k, s, d, p, a in zip(in_spatial, kernel, stride, dilate, pad, adj, strict=True)
    )


def _resolve(data: Array, kernel, stride, dilate, pad, adj, target_shape):
    kernel, stride, dilate, pad = conv_params(data.ndim - 2, kernel, stride, dilate, pad)
    pad, adj = deconv_pad_adj(data.shape[2:], kernel, stride, dilate, pad, adj, target_shape)
    return kernel, stride, dilate, pad, adj


def deconvolution(
    xp: Any,
    data: Array,
    weight: Array,
    bias: Array | None,
    kernel: Sequence[int],
    stride: Sequence[int] | None = None,
    dilate: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
    adj: Sequence[int] | None = None,
    target_shape: Sequence[int] | None = None,
    num_filter: int | None = None,
    num_group: int = 1,
    no_bias: bool = True,
    layout: str | None = None,
    run=PLAIN,
) -> Array:
    """Forward transposed convolution (MXNet's default ``no_bias=True``), on ``run``'s convolution core.

    >>> import numpy as np
    >>> deconvolution(np, np.ones((1, 1, 2, 2)), np.ones((1, 1, 2, 2)), None, (2, 2))[0, 0]
    array([[1., 2., 1.],
           [2., 4., 2.],
           [1., 2., 1.]])
    """
    check_layout(layout, "Deconvolution")
    kernel, stride, dilate, pad, adj = _resolve(data, kernel, stride, dilate, pad, adj, target_shape)
    osp = deconv_out_spatial(data.shape[2:], kernel, stride, dilate, pad, adj)
    out = run.conv_core().conv_backward_data(xp, data, grouped(weight, num_group), osp, kernel, stride, dilate, pad)
    return add_bias(out, bias, no_bias)


def deconvolution_backward(
    xp: Any,
    out_grad: Array,
    data: Array,
    weight: Array,
    kernel: Sequence[int],
    stride: Sequence[int] | None = None,
    dilate: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
    adj: Sequence[int] | None = None,
    target_shape: Sequence[int] | None = None,
    num_filter: int | None = None,
    num_group: int = 1,
    no_bias: bool = True,
    layout: str | None = None,
    need_data_grad: bool = True,
    need_weight_grad: bool = True,
    run=PLAIN,
) -> tuple[Array | None, Array | None, Array | None]:
    """Gradients ``(data_grad, weight_grad, bias_grad)``; parts not needed (or no bias) are ``None``."""
    check_layout(layout, "Deconvolution")
    kernel, stride, dilate, pad, adj = _resolve(data, kernel, stride, dilate, pad, adj, target_shape)
    core = run.conv_core()
    dx = dw = db = None
    if need_data_grad:
        dx = core.conv_forward(xp, out_grad, grouped(weight, num_group), kernel, stride, dilate, pad)
        insp = data.shape[2:]
        if dx.shape[2:] != insp:  # only when adj >= stride, which MXNet rejects
            dx = xp.ascontiguousarray(dx[(Ellipsis,) + tuple(slice(0, s) for s in insp)])
    if need_weight_grad:
        dw = core.conv_backward_weight(xp, out_grad, data, num_group, kernel, stride, dilate, pad)
        dw = dw.reshape(weight.shape)
    if not no_bias:
        db = bias_grad(out_grad)
    return dx, dw, db
