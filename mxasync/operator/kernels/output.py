"""Loss "output" layers: SoftmaxOutput and the three regression outputs.

Their forward is a plain map; their backward ignores the incoming gradient (unless
SoftmaxOutput's ``out_grad``) and returns the loss gradient, scaled as MXNet 1.9
scales it. MXNet quirks kept on purpose: 'valid' normalisation counts labels that
differ from ``ignore_label`` even when ``use_ignore`` is off; without
``multi_output``/``preserve_shape`` the data is flattened to ``(n, -1)`` and only the
first ``n`` labels are read; an out-of-range label subtracts nothing; ``smooth_alpha``
is ignored with ``multi_output``. Deliberate difference: with ``out_grad=True`` we
multiply by the incoming gradient as MXNet documents (MXNet 1.9.1 multiplies by the
softmax output instead).
"""

from __future__ import annotations

from typing import Any

from ._util import Array, prod
from .softmax import softmax


def _softmax_view(data: Array, multi_output: bool, preserve_shape: bool) -> tuple[Array, int]:
    """Reshape so the class axis is explicit; returns ``(view, class_axis)``."""
    if multi_output:
        n, k = data.shape[:2]
        return data.reshape(n, k, -1), 1
    if preserve_shape:
        return data.reshape(-1, data.shape[-1]), 1
    return data.reshape(data.shape[0], -1), 1


def softmax_output(xp: Any, data: Array, multi_output: bool = False, preserve_shape: bool = False,
                   out: Array | None = None) -> Array:
    """Forward: softmax over axis 1 (multi_output), the last axis (preserve_shape) or all but axis 0.

    >>> import numpy as np
    >>> softmax_output(np, np.zeros((1, 2, 2))).round(2)
    array([[[0.25, 0.25],
            [0.25, 0.25]]])
    """
    view, axis = _softmax_view(data, multi_output, preserve_shape)
    if out is not None and out.dtype == data.dtype and out.flags.c_contiguous:
        softmax(xp, view, axis=axis, out=_softmax_view(out, multi_output, preserve_shape)[0])
        return out
    return softmax(xp, view, axis=axis).reshape(data.shape)


def _minus_label(xp: Any, y: Array, idx: Array, smooth_alpha: float, multi_output: bool,
                 into: Array | None) -> tuple[Array, Array | None]:
    """``y - onehot(idx)`` (smoothed by ``smooth_alpha``), in ``into`` when it can be: (gradient, into or None)."""
    k = y.shape[1]
    if multi_output or smooth_alpha and k > 1:
        cls = xp.arange(k).reshape((1, k) + (1,) * (y.ndim - 2))
        onehot = (xp.expand_dims(idx, 1) == cls).astype(y.dtype)
        if smooth_alpha and k > 1:  # MXNet smooths the 2-D case only
            return y - (onehot * (1.0 - smooth_alpha - smooth_alpha / (k - 1)) + smooth_alpha / (k - 1)), None
        return y - onehot, None
    # 1 off each row's label in place of a dense one-hot (K times less work); out-of-range labels: nothing
    if into is None or into.dtype != y.dtype or not into.flags.c_contiguous:
        into, grad = None, y.copy()
    else:
        grad = into.reshape(y.shape)
        grad[...] = y
    rows = xp.nonzero((idx >= 0) & (idx < k))[0]
    grad[rows, idx[rows]] -= 1
    return grad, into


def softmax_output_backward(
    xp: Any,
    out: Array,
    label: Array,
    grad_scale: float = 1.0,
    ignore_label: float = -1.0,
    multi_output: bool = False,
    use_ignore: bool = False,
    preserve_shape: bool = False,
    normalization: str = "null",
    out_grad: bool = False,
    smooth_alpha: float = 0.0,
    ograd: Array | None = None,
    into: Array | None = None,
) -> Array:
    """Gradient w.r.t. ``data``: ``out - onehot(label)`` (or ``out - label`` for probability labels).

    ``ograd`` is the incoming gradient, used only when ``out_grad`` is true; ``into`` (C-contiguous, of
    ``out``'s shape and type) may receive the gradient (then it is returned).

    >>> import numpy as np
    >>> softmax_output_backward(np, np.array([[0.25, 0.75]]), np.array([1.]))
    array([[ 0.25, -0.25]])
    """
    if label.shape == out.shape:  # probability labels: no one-hot, no normalisation
        grad = (out - label) * grad_scale
        return grad * ograd if out_grad else grad
    y, _ = _softmax_view(out, multi_output, preserve_shape)
    if multi_output:
        full = label.reshape(y.shape[0], -1)
        lab = full
    else:
        full = label.reshape(-1)
        lab = full[: y.shape[0]]
    idx = lab.astype(xp.int64)  # MXNet truncates float labels
    grad, into = _minus_label(xp, y, idx, smooth_alpha if not multi_output else 0.0, multi_output, into)
    if use_ignore:
        grad *= xp.expand_dims(idx != int(ignore_label), 1).astype(y.dtype)
    # the counts run over the whole label array, as MXNet's do
    if normalization == "batch":
        scale = grad_scale / full.shape[0]
    elif normalization == "valid":
        ignored = int((full.astype(xp.int64) == int(ignore_label)).sum())
        scale = grad_scale / max(1, full.size - ignored)
    elif normalization == "null":
        scale = grad_scale
    else:
        raise ValueError(f"SoftmaxOutput: unknown normalization {normalization!r}")
    if multi_output and normalization != "valid":
        scale /= y.shape[2]  # MXNet also averages over the spatial positions
    if scale != 1.0:
        grad *= scale
    if out_grad:
        return grad.reshape(out.shape) * ograd
    return into if into is not None else grad.reshape(out.shape)


def linear_regression_output(xp: Any, data: Array) -> Array:
    """Forward of ``LinearRegressionOutput`` (identity)."""
    return data.copy()


def mae_regression_output(xp: Any, data: Array) -> Array:
    """Forward of ``MAERegressionOutput`` (identity)."""
    return data.copy()


def logistic_regression_output(xp: Any, data: Array) -> Array:
    """Forward of ``LogisticRegressionOutput``: the logistic sigmoid.

    >>> import numpy as np
    >>> logistic_regression_output(np, np.zeros(2))
    array([0.5, 0.5])
    """
    return 1.0 / (1.0 + xp.exp(-data))


def _regression_scale(label: Array, grad_scale: float) -> float:
    # MXNet divides by the number of outputs per sample
    return grad_scale / (prod(label.shape) // label.shape[0] if label.ndim else 1)


def linear_regression_output_backward(xp: Any, out: Array, label: Array, grad_scale: float = 1.0) -> Array:
    """``(out - label) * grad_scale / num_output``.

    >>> import numpy as np
    >>> linear_regression_output_backward(np, np.array([[1., 2.]]), np.array([[0., 0.]]))
    array([[0.5, 1. ]])
    """
    return (out - label.reshape(out.shape)) * _regression_scale(label, grad_scale)


def logistic_regression_output_backward(xp: Any, out: Array, label: Array, grad_scale: float = 1.0) -> Array:
    """``(out - label) * grad_scale / num_output`` where ``out`` is the sigmoid output."""
    return (out - label.reshape(out.shape)) * _regression_scale(label, grad_scale)


def mae_regression_output_backward(xp: Any, out: Array, label: Array, grad_scale: float = 1.0) -> Array:
    """``sign(out - label) * grad_scale / num_output``."""
    return xp.sign(out - label.reshape(out.shape)) * _regression_scale(label, grad_scale)
