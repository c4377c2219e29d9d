"""Activation (relu, sigmoid, tanh, softrelu, softsign) and LeakyReLU's family.

Activation's gradients are written in terms of the forward output, which is all
MXNet keeps for backward. LeakyReLU covers leaky, prelu, elu, selu and gelu (the
erf form, as MXNet 1.9); rrelu lives in :mod:`.dropout` beside the other random op.
"""

from __future__ import annotations

import math
from typing import Any

from ._runner import PLAIN
from ._util import Array, out_view, sum_to_shape

ACT_TYPES = ("relu", "sigmoid", "tanh", "softrelu", "softsign")
LEAKY_TYPES = ("leaky", "prelu", "elu", "selu", "gelu")
SELU_LAMBDA = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717


def activation(xp: Any, data: Array, act_type: str, out: Array | None = None, run=PLAIN) -> Array:
    """Forward; relu, sigmoid and tanh write into ``out`` (which may be ``data`` itself) when it fits
    (cut into flat ranges by ``run``).

    >>> import numpy as np
    >>> activation(np, np.array([-1., 0., 2.]), "relu")
    array([0., 0., 2.])
    """
    out = out_view(out, data.shape, data.dtype)
    if out is not None and act_type in ("relu", "sigmoid", "tanh"):
        return run.split_flat(xp, _ACT_INTO[act_type], out, data)
    if act_type == "relu":
        return _relu(xp, data)(data, 0)
    if act_type == "sigmoid":
        return 1.0 / (1.0 + xp.exp(-data))
    if act_type == "tanh":
        return xp.tanh(data)
    if act_type == "softrelu":
        # log(1 + e^x), switching to x past 20 where the two agree in float32
        return xp.where(data > 20, data, xp.log1p(xp.exp(xp.minimum(data, 20))))
    if act_type == "softsign":
        return data / (1.0 + xp.abs(data))
    raise ValueError(f"Activation: act_type must be one of {ACT_TYPES}, got {act_type!r}")


def _sigmoid_into(xp, x, out):
    xp.negative(x, out=out)
    xp.exp(out, out=out)
    out += 1.0
    return xp.reciprocal(out, out=out)


def _relu(xp, x):
    """MXNet 1.9.1's CPU Activation relu: float32 (its oneDNN kernel) turns NaN into 0, float16 and
    float64 keep NaN (as the ``relu`` op always does)."""
    return xp.fmax if x.dtype == "float32" else xp.maximum


_ACT_INTO = {"relu": lambda xp, x, out: _relu(xp, x)(x, 0, out=out), "sigmoid": _sigmoid_into,
             "tanh": lambda xp, x, out: xp.tanh(x, out=out)}


def _relu_grad_into(xp, g, y, out):
    out = xp.multiply(g, y > 0, out=out)
    if y.dtype != "float32" and y.dtype.kind == "f":  # MXNet's float16/64 kernel: NaN out, NaN gradient
        nan = xp.isnan(y)
        if nan.any():
            out[nan] = y[nan]
    return out


def activation_backward(xp: Any, out_grad: Array, out: Array, act_type: str, into: Array | None = None,
                        run=PLAIN) -> Array:
    """Gradient w.r.t. ``data`` from the forward output ``out``; relu's goes into ``into`` when it fits
    (``into`` may be ``out_grad`` itself)."""
    if act_type == "relu":
        into = out_view(into, out_grad.shape, out_grad.dtype)
        if into is not None and out.shape == out_grad.shape:
            return run.split_flat(xp, _relu_grad_into, into, out_grad, out)
        return _relu_grad_into(xp, out_grad, out, None)
    if act_type == "sigmoid":
        return out_grad * out * (1.0 - out)
    if act_type == "tanh":
        return out_grad * (1.0 - out * out)
    if act_type == "softrelu":
        return out_grad * -xp.expm1(-out)  # sigmoid(x) = 1 - exp(-softrelu(x))
    if act_type == "softsign":
        r = 1.0 - xp.abs(out)  # = 1 / (1 + |x|)
        return out_grad * r * r
    raise ValueError(f"Activation: act_type must be one of {ACT_TYPES}, got {act_type!r}")


def prelu_gamma_shape(gshape: tuple, dshape: tuple) -> tuple | None:
    """The shape gamma takes to broadcast against data (MXNet's rule): its axes line up, from its
    last, with data's axes 1 and 0 only (a (C,) gamma is one slope per channel, an (N, C) one a slope
    per sample and channel, a (1,) one a single slope); None when gamma does not fit.

    >>> prelu_gamma_shape((4,), (3, 4, 5, 5)), prelu_gamma_shape((3, 4), (3, 4, 5)), prelu_gamma_shape((2,), (3, 4))
    ((1, 4, 1, 1), (3, 4, 1), None)
    """
    out = [1] * len(dshape)
    s = len(gshape) - 1
    for i in range(len(dshape) - 1, -1, -1):
        if s >= 0 and i <= 1 and (dshape[i] == gshape[s] or gshape[s] == 1):
            out[i] = gshape[s]
            s -= 1
    return tuple(out) if s == -1 else None


def _prelu_gamma(gamma: Array, ndim: int, dshape: tuple = ()) -> Array:
    shape = prelu_gamma_shape(tuple(gamma.shape), tuple(dshape))
    if shape is None:
        raise ValueError(f"LeakyReLU(prelu): gamma of shape {tuple(gamma.shape)} does not broadcast to data "
                         f"{tuple(dshape)} (it lines up with data's axes 1 and 0)")
    return gamma.reshape(shape)


def leaky_relu(xp: Any, data: Array, act_type: str = "leaky", slope: float = 0.25, gamma: Array | None = None,
               run=PLAIN) -> Array:
    """Forward of LeakyReLU for ``act_type`` in leaky, prelu (needs ``gamma``), elu, selu, gelu.

    >>> import numpy as np
    >>> leaky_relu(np, np.array([-2., 3.]), "leaky", slope=0.5)
    array([-1.,  3.])
    """
    if act_type == "leaky":
        return xp.where(data > 0, data, data * slope)
    if act_type == "prelu":
        return xp.where(data > 0, data, data * _prelu_gamma(gamma, data.ndim, data.shape))
    if act_type == "elu":
        return xp.where(data > 0, data, slope * xp.expm1(xp.minimum(data, 0)))
    if act_type == "selu":
        neg = SELU_ALPHA * xp.expm1(xp.minimum(data, 0))
        return SELU_LAMBDA * xp.where(data > 0, data, neg)
    if act_type == "gelu":
        return 0.5 * data * (1.0 + run.erf(xp, data / math.sqrt(2.0)))
    raise ValueError(f"LeakyReLU: act_type must be one of {LEAKY_TYPES} (or 'rrelu' via rrelu()), got {act_type!r}")


def leaky_relu_backward(
    xp: Any,
    out_grad: Array,
    data: Array,
    act_type: str = "leaky",
    slope: float = 0.25,
    gamma: Array | None = None,
    run=PLAIN,
) -> tuple[Array, Array | None]:
    """Gradients ``(data_grad, gamma_grad)``; ``gamma_grad`` is ``None`` unless ``act_type='prelu'``."""
    pos = data > 0
    if act_type == "leaky":
        return out_grad * xp.where(pos, 1.0, slope).astype(out_grad.dtype), None
    if act_type == "prelu":
        g = _prelu_gamma(gamma, data.ndim, data.shape)
        dx = xp.where(pos, out_grad, out_grad * g)
        dgamma = sum_to_shape(xp, xp.where(pos, 0, out_grad * data), g.shape).reshape(gamma.shape)
        return dx, dgamma
    if act_type == "elu":
        return xp.where(pos, out_grad, out_grad * slope * xp.exp(xp.minimum(data, 0))), None
    if act_type == "selu":
        # MXNet's selu_grad: lambda * (alpha + y) on the negative side, y being the output (which is
        # itself scaled by lambda); MXNet's tests check exactly this, so we keep it
        y = SELU_LAMBDA * SELU_ALPHA * xp.expm1(xp.minimum(data, 0))
        return out_grad * SELU_LAMBDA * xp.where(pos, 1.0, SELU_ALPHA + y), None
    if act_type == "gelu":
        cdf = 0.5 * (1.0 + run.erf(xp, data / math.sqrt(2.0)))
        pdf = xp.exp(-0.5 * data * data) / math.sqrt(2.0 * math.pi)
        return out_grad * (cdf + data * pdf), None
    raise ValueError(f"LeakyReLU: act_type must be one of {LEAKY_TYPES}, got {act_type!r}")
