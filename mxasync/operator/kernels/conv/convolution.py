"""Convolution (MXNet's ``Convolution``): 1-D, 2-D and 3-D, NCW / NCHW / NCDHW.

Weight is ``(num_filter, C/num_group, *kernel)``, bias ``(num_filter,)``; the output
length per axis is ``(x + 2*pad - (dilate*(k-1)+1)) // stride + 1``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._runner import PLAIN
from .._util import Array, check_layout, out_view
from .im2col import conv_params


def grouped(weight: Array, num_group: int) -> Array:
    """``weight`` as ``(num_group, rows per group, rest)``: the operand of the cores' batched matmuls."""
    return weight.reshape(num_group, weight.shape[0] // num_group, -1)


def add_bias(out: Array, bias: Array | None, no_bias: bool) -> Array:
    """``out`` plus the ``(F,)`` ``bias`` along axis 1, in place (unless ``no_bias`` or there is none)."""
    if not no_bias and bias is not None:
        out += bias.reshape((1, -1) + (1,) * (out.ndim - 2))
    return out


def bias_grad(out_grad: Array, into: Array | None = None) -> Array:
    """The bias gradient: ``out_grad`` summed over every axis but 1, written into ``into`` when it fits."""
    axes = (0,) + tuple(range(2, out_grad.ndim))
    target = out_view(into, (out_grad.shape[1],), out_grad.dtype)
    if target is None:
        return out_grad.sum(axis=axes)
    out_grad.sum(axis=axes, out=target)
    return into


def convolution(
    xp: Any,
    data: Array,
    weight: Array,
    bias: Array | None,
    kernel: Sequence[int],
    stride: Sequence[int] | None = None,
    dilate: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
    num_filter: int | None = None,
    num_group: int = 1,
    no_bias: bool = False,
    layout: str | None = None,
    out: Array | None = None,
    keep: bool = False,
    relu: bool = False,
    run=PLAIN,
) -> Array:
    """Forward convolution by im2col + batched matmuls (straight into ``out`` when it fits), on
    ``run``'s convolution core; ``relu``: ``max(., 0)`` fused after the bias (a fused op's activation).

    ``keep`` (a training forward) lets the core leave what the backward on the same ``data``
    array needs (the numpy core keeps the im2col columns, within ``MXASYNC_CONV_KEEP_MB``).

    >>> import numpy as np
    >>> x = np.arange(16.).reshape(1, 1, 4, 4)
    >>> convolution(np, x, np.ones((1, 1, 2, 2)), None, (2, 2), no_bias=True)[0, 0]
    array([[10., 14., 18.],
           [26., 30., 34.],
           [42., 46., 50.]])
    """
    check_layout(layout, "Convolution")
    kernel, stride, dilate, pad = conv_params(data.ndim - 2, kernel, stride, dilate, pad)
    # the core adds the bias in its last copy, not in a pass of its own
    return run.conv_core().conv_forward(xp, data, grouped(weight, num_group), kernel, stride, dilate, pad, into=out,
                                        keep=keep, bias=None if no_bias else bias, relu=relu)


def convolution_backward(
    xp: Any,
    out_grad: Array,
    data: Array,
    weight: Array,
    kernel: Sequence[int],
    stride: Sequence[int] | None = None,
    dilate: Sequence[int] | None = None,
    pad: Sequence[int] | None = None,
    num_filter: int | None = None,
    num_group: int = 1,
    no_bias: bool = False,
    layout: str | None = None,
    need_data_grad: bool = True,
    need_weight_grad: bool = True,
    need_bias_grad: bool = True,
    into: tuple = (None, None, None),
    run=PLAIN,
) -> tuple[Array | None, Array | None, Array | None]:
    """Gradients ``(data_grad, weight_grad, bias_grad)``; a part not needed (or no bias) is ``None``.

    ``into`` may name arrays to compute each part straight into.
    """
    core = run.conv_core()
    check_layout(layout, "Convolution")
    kernel, stride, dilate, pad = conv_params(data.ndim - 2, kernel, stride, dilate, pad)
    dx = dw = db = None
    dyt = core.grad_layout(xp, out_grad, data.shape, kernel, stride) if need_data_grad or need_weight_grad else None
    if need_data_grad:
        dx = core.conv_backward_data(xp, out_grad, grouped(weight, num_group), data.shape[2:], kernel, stride, dilate,
                                     pad, into=into[0], dyt=dyt)
    if need_weight_grad:
        dw = core.conv_backward_weight(xp, data, out_grad, num_group, kernel, stride, dilate, pad, into=into[1],
                                  dyt=dyt)
        if dw.shape != weight.shape:  # a target written into is returned as it is
            dw = dw.reshape(weight.shape)
    if not no_bias and need_bias_grad:
        db = bias_grad(out_grad, into[2])
    return dx, dw, db
