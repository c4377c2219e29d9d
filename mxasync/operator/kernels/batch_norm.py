"""BatchNorm (MXNet's ``BatchNorm``) over any channel ``axis``.

Like MXNet 1.9 the two extra outputs are the mean and the *inverse standard
deviation* ``1/sqrt(var + eps)`` (the output MXNet names "var" holds invstd), and
the moving statistics are not touched by the forward pass: MXNet updates them in
the backward pass, with the biased batch variance; :func:`batch_norm_update_moving`
does that update so the framework can place it. Statistics of float16 data are
accumulated in float32, as MXNet's ``AccReal`` does (per plane; the planes' sums are added
in float64). Channels are independent, so the runner may cut a big input into channel
blocks (the numpy backend's runs them on its kernel threads); a channel's numbers do not
depend on the cut.

In training the data is centred on a rough mean (:func:`_rough_mean`) before its sums are
taken, so a mean far from zero against the deviation costs no precision; the passes over
the data: the forward subtracts the centre into its output, sums it and its squares per
plane (the runner's ``plane_sums``), then scales and shifts it in place; the backward
subtracts the mean into the data gradient, sums ``dy`` and ``(x - mean) * dy`` per plane,
then four in-place passes. Without a fused multiply-add every further step is one more pass.
"""

from __future__ import annotations

from typing import Any

import numpy

from ._runner import PLAIN
from ._util import Array


def _as3d(x: Array, axis: int) -> tuple[Array, int]:
    """View ``x`` as ``(pre, C, post)`` so reductions run over contiguous memory."""
    axis = axis % x.ndim
    pre = 1
    for s in x.shape[:axis]:
        pre *= s
    return x.reshape(pre, x.shape[axis], -1), axis


def _rough_mean(xa: Array) -> Array:
    """Each channel's mean over the first index before the channel axis (the first image of a batch): a centre
    within about a standard deviation of the batch mean, so the sums of the data centred on it cancel nothing
    (with a mean of 100 and a deviation of 0.01, sums of the raw squares would keep none of the variance).
    Each row is summed alone (numpy's pairwise sum), so a channel's centre does not depend on the block."""
    if xa.shape[0] == 0:
        return xa.sum(axis=(0, 2))
    return xa[0].sum(axis=1) / max(1, xa.shape[2])


def _totals(xp: Any, planes: Array) -> Array:
    """Per-channel float64 totals of ``(pre, C)`` per-plane sums, added pairwise by whole rows (the first half of
    the rows plus the second, until one is left): elementwise adds, so a channel's total has the same bits
    whatever block of channels ``planes`` covers, and no transposed copy (channel-last data has a plane per
    pixel: transposing its sums cost 9 ms on 8x56x56x64)."""
    t = planes.astype(xp.float64)
    if t.shape[0] == 0:
        return xp.zeros(t.shape[1], dtype=xp.float64)
    while t.shape[0] > 1:
        n, half = t.shape[0], t.shape[0] // 2
        head = t[:half] + t[half:2 * half]
        if n % 2:
            head[0] += t[n - 1]
        t = head
    return t[0]


def _acc_dtype(xp: Any, dtype: Any) -> Any:
    return numpy.float32 if numpy.dtype(dtype).itemsize < 4 else dtype


def _col(v: Array) -> Array:
    return v.reshape(1, -1, 1)


def batch_norm(
    xp: Any,
    data: Array,
    gamma: Array,
    beta: Array,
    moving_mean: Array,
    moving_var: Array,
    eps: float = 1e-3,
    momentum: float = 0.9,
    fix_gamma: bool = True,
    use_global_stats: bool = False,
    output_mean_var: bool = False,
    axis: int = 1,
    training: bool = True,
    run=PLAIN,
    out: Array | None = None,
) -> tuple[Array, Array, Array]:
    """Forward pass; returns ``(out, mean, invstd)``, the normalised data written into ``out`` when it fits
    (C-contiguous, ``data``'s shape and dtype: the op's output array, saving a copy).

    Batch statistics are used when ``training and not use_global_stats``; otherwise
    ``moving_mean``/``moving_var``. ``fix_gamma`` treats gamma as 1 (MXNet also writes
    1 into the gamma array; that is left to the framework). ``momentum`` and
    ``output_mean_var`` do not change the numbers; they are accepted so the op's
    parameters can be passed through.

    >>> import numpy as np
    >>> x = np.array([[1.], [3.]])
    >>> out, mean, invstd = batch_norm(np, x, np.ones(1), np.zeros(1), np.zeros(1), np.ones(1), eps=0.0)
    >>> out.ravel(), mean, invstd
    (array([-1.,  1.]), array([2.]), array([1.]))
    """
    x3, _ = _as3d(data, axis)
    acc = _acc_dtype(xp, data.dtype)
    c = x3.shape[1]
    if out is None or out.shape != data.shape or out.dtype != data.dtype or not out.flags.c_contiguous:
        out = xp.empty(data.shape, dtype=data.dtype)
    out3 = out.reshape(x3.shape)
    mean, invstd = xp.empty(c, dtype=acc), xp.empty(c, dtype=acc)
    stats = training and not use_global_stats

    def block(c0, c1):
        _forward_block(xp, run, x3[:, c0:c1], gamma[c0:c1], beta[c0:c1], moving_mean[c0:c1], moving_var[c0:c1], eps,
                       fix_gamma, stats, acc, out3[:, c0:c1], mean[c0:c1], invstd[c0:c1])

    run.split_channels(block, c, x3.size)
    return out, mean, invstd


def _forward_block(xp, run, x3, gamma, beta, moving_mean, moving_var, eps, fix_gamma, stats, acc, out3, mean_out,
                   invstd_out) -> None:
    xa = x3.astype(acc, copy=False)
    # the centred data is computed in the output itself when no cast is needed (one pass less)
    d = out3 if out3.dtype == acc else xp.empty(x3.shape, dtype=acc)
    if stats:
        centre, offset, var = _centred_statistics(xp, run, xa, d)
        invstd = 1.0 / xp.sqrt(var + eps)
        scale = invstd if fix_gamma else gamma.astype(xp.float64) * invstd
        # d holds x - centre: out = d * scale + (beta - (mean - centre) * scale), two passes
        d *= _col(scale.astype(acc))
        d += _col((beta - offset * scale).astype(acc))
        mean = centre + offset
    else:
        mean = moving_mean.astype(acc)
        invstd = 1.0 / xp.sqrt(moving_var.astype(acc) + eps)
        scale = invstd if fix_gamma else gamma.astype(acc) * invstd
        # with the statistics given, one scale and one shift per channel: two passes over the data, not three
        # (MobileNet-1.0's inference, 27 such layers: 125 -> 80 ms)
        xp.multiply(xa, _col(scale), out=d)
        d += _col(beta.astype(acc) - mean * scale)
    if d is not out3:
        out3[...] = d
    mean_out[...] = mean
    invstd_out[...] = invstd


def _centred_statistics(xp, run, xa, d) -> tuple[Array, Array, Array]:
    """``(centre, mean - centre, biased variance)`` of each channel of ``xa``, leaving ``xa - centre`` in ``d``.

    The centre is :func:`_rough_mean`; the sums of the centred data (float32 per plane for float32 data,
    float64 across planes) then lose nothing to cancellation, and the mean comes out as the centre plus a
    small offset, so its rounding does not shift the normalised data.
    """
    m = xa.shape[0] * xa.shape[2]
    centre = _rough_mean(xa)
    xp.subtract(xa, _col(centre), out=d)
    offset = _totals(xp, run.plane_sums(xp, d)) / m
    var = _totals(xp, run.plane_sums(xp, d, d)) / m - offset * offset
    return centre, offset, xp.maximum(var, 0.0)  # a constant channel may round to a tiny negative


def batch_norm_backward(
    xp: Any,
    out_grad: Array,
    data: Array,
    gamma: Array,
    mean: Array,
    invstd: Array,
    fix_gamma: bool = True,
    use_global_stats: bool = False,
    axis: int = 1,
    training: bool = True,
    run=PLAIN,
    data_grad: Array | None = None,
) -> tuple[Array, Array, Array]:
    """Gradients ``(data_grad, gamma_grad, beta_grad)`` from the forward's ``mean`` and ``invstd``; the data
    gradient is written into ``data_grad`` when it fits (C-contiguous, ``data``'s shape and dtype).

    ``gamma_grad`` is zero under ``fix_gamma``, as in MXNet.
    """
    x3, _ = _as3d(data, axis)
    dy3, _ = _as3d(out_grad, axis)
    acc = _acc_dtype(xp, data.dtype)
    c = x3.shape[1]
    if (data_grad is None or data_grad.shape != data.shape or data_grad.dtype != data.dtype
            or not data_grad.flags.c_contiguous):
        data_grad = xp.empty(data.shape, dtype=data.dtype)
    dx3 = data_grad.reshape(x3.shape)
    dgamma, dbeta = xp.empty(c, dtype=acc), xp.empty(c, dtype=acc)
    stats = training and not use_global_stats

    def block(c0, c1):
        _backward_block(xp, run, dy3[:, c0:c1], x3[:, c0:c1], gamma[c0:c1], mean[c0:c1], invstd[c0:c1], fix_gamma,
                        stats, acc, dx3[:, c0:c1], dgamma[c0:c1], dbeta[c0:c1])

    run.split_channels(block, c, x3.size)
    if fix_gamma:
        dgamma[...] = 0
    return data_grad, dgamma.astype(gamma.dtype), dbeta.astype(gamma.dtype)


def _backward_block(xp, run, dy3, x3, gamma, mean, invstd, fix_gamma, stats, acc, dx3, dgamma_out, dbeta_out) -> None:
    m = x3.shape[0] * x3.shape[2]
    dy = dy3.astype(acc, copy=False)
    d = dx3 if dx3.dtype == acc else xp.empty(x3.shape, dtype=acc)
    xp.subtract(x3.astype(acc, copy=False), _col(mean), out=d)
    invstd = invstd.astype(xp.float64)
    dbeta = _totals(xp, run.plane_sums(xp, dy))
    dgamma = _totals(xp, run.plane_sums(xp, d, dy)) * invstd  # sum(dy * xhat)
    a = invstd if fix_gamma else gamma.astype(xp.float64) * invstd
    if stats:
        # dx = g*invstd * (dy - mean(dy) - xhat * mean(dy * xhat)), in place over the centred data
        d *= _col((-invstd * dgamma / m).astype(acc))
        d += dy
        d -= _col((dbeta / m).astype(acc))
        d *= _col(a.astype(acc))
    else:
        xp.multiply(dy, _col(a.astype(acc)), out=d)
    if d is not dx3:
        dx3[...] = d
    dgamma_out[...] = dgamma
    dbeta_out[...] = dbeta


def batch_norm_update_moving(
    xp: Any, moving_mean: Array, moving_var: Array, mean: Array, invstd: Array, momentum: float, eps: float
) -> None:
    """In place: ``moving = momentum*moving + (1-momentum)*batch`` (biased batch variance).

    >>> import numpy as np
    >>> mm, mv = np.zeros(1), np.ones(1)
    >>> batch_norm_update_moving(np, mm, mv, np.array([2.]), np.array([0.5]), 0.9, 0.0)
    >>> mm, mv
    (array([0.2]), array([1.3]))
    """
    var = 1.0 / (invstd * invstd) - eps
    moving_mean *= momentum
    moving_mean += ((1 - momentum) * mean).astype(moving_mean.dtype)
    moving_var *= momentum
    moving_var += ((1 - momentum) * var).astype(moving_var.dtype)


def fold_into_conv(xp: Any, weight: Array, bias: Array | None, gamma: Array, beta: Array, mean: Array, var: Array,
                   eps: float, fix_gamma: bool, out_weight: Array | None = None,
                   out_bias: Array | None = None) -> tuple[Array, Array]:
    """A convolution's weight and bias with an inference BatchNorm after it folded in, as MXNet's
    ``UpdateConvWeightBias``: ``alpha = gamma / sqrt(var + eps)`` (in float64, then the weight's dtype),
    ``weight * alpha`` per filter and ``beta + alpha * (bias - mean)``; into ``out_weight`` / ``out_bias``
    when given.

    >>> import numpy as np
    >>> w, b = fold_into_conv(np, np.ones((2, 1)), None, np.array([2., 1.]), np.zeros(2), np.array([1., 0.]),
    ...                       np.array([3., 0.]), 1.0, fix_gamma=False)
    >>> w.ravel().tolist(), b.tolist()
    ([1.0, 1.0], [-1.0, 0.0])
    """
    g = xp.ones_like(gamma) if fix_gamma else gamma
    alpha = (g.astype(numpy.float64) / xp.sqrt(var.astype(numpy.float64) + eps)).astype(weight.dtype)
    new_weight = xp.multiply(weight, alpha.reshape((-1,) + (1,) * (weight.ndim - 1)), out=out_weight)
    new_bias = xp.multiply(alpha, (bias if bias is not None else 0) - mean, out=out_bias)
    new_bias += beta
    return new_weight, new_bias
