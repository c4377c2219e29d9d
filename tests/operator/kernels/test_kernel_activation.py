"""Activation, LeakyReLU family, Dropout and rrelu, FullyConnected."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mxasync.operator.kernels import activation as k_activation
from mxasync.operator.kernels import dropout as k_dropout
from mxasync.operator.kernels import fully_connected as k_fully_connected

SELU_L, SELU_A = 1.0507009873554805, 1.6732632423543772
ACT_REF = {
    "relu": lambda x: np.maximum(x, 0),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "softrelu": lambda x: np.log1p(np.exp(x)),
    "softsign": lambda x: x / (1 + np.abs(x)),
}
LEAKY_REF = {
    "leaky": lambda x, s: np.where(x > 0, x, s * x),
    "elu": lambda x, s: np.where(x > 0, x, s * (np.exp(x) - 1)),
    "selu": lambda x, s: SELU_L * np.where(x > 0, x, SELU_A * (np.exp(x) - 1)),
    "gelu": lambda x, s: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))),
}


def _away_from_kinks(rng, shape, dtype=np.float64):
    x = rng.standard_normal(shape) * 2
    x[np.abs(x) < 0.05] = 0.3  # relu/leaky/abs kinks at 0 break central differences
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("act", sorted(ACT_REF))
def test_activation(act, dtype, rng, check):
    x = _away_from_kinks(rng, (3, 7), dtype)
    out = k_activation.activation(np, x, act)
    assert out.dtype == dtype
    check.close(out, ACT_REF[act](x.astype(np.float64)), dtype)
    if dtype == np.float64:
        head = rng.standard_normal(x.shape)
        check.grad(lambda v: k_activation.activation(np, v, act), x, head, k_activation.activation_backward(np, head, out, act))


def test_softrelu_does_not_overflow():
    out = k_activation.activation(np, np.array([-800.0, 0.0, 800.0]), "softrelu")
    np.testing.assert_allclose(out, [0.0, math.log(2), 800.0])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("act", sorted(LEAKY_REF))
def test_leaky_relu_family(act, dtype, rng, check):
    x = _away_from_kinks(rng, (4, 5), dtype)
    out = k_activation.leaky_relu(np, x, act, slope=0.3)
    check.close(out, LEAKY_REF[act](x.astype(np.float64), 0.3), dtype)
    if dtype == np.float64:
        head = rng.standard_normal(x.shape)
        dx, dgamma = k_activation.leaky_relu_backward(np, head, x, act, slope=0.3)
        assert dgamma is None
        if act == "selu":  # MXNet's selu_grad, lambda * (alpha + y) below 0, is not the derivative
            lam, alpha = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
            y = k_activation.leaky_relu(np, x, act)
            check.close(dx, head * lam * np.where(x > 0, 1.0, alpha + y), dtype)
        else:
            check.grad(lambda v: k_activation.leaky_relu(np, v, act, slope=0.3), x, head, dx)


@pytest.mark.parametrize("shape,gamma_shape", [((2, 3, 4), (3,)), ((2, 3), (3,)), ((2, 3, 2, 2), (1,))])
def test_prelu(shape, gamma_shape, rng, check):
    x, gamma = _away_from_kinks(rng, shape), rng.random(gamma_shape)
    out = k_activation.leaky_relu(np, x, "prelu", gamma=gamma)
    g = gamma.reshape((1, -1) + (1,) * (len(shape) - 2)) if gamma.size > 1 else gamma
    check.close(out, np.where(x > 0, x, g * x))
    head = rng.standard_normal(shape)
    dx, dgamma = k_activation.leaky_relu_backward(np, head, x, "prelu", gamma=gamma)
    assert dgamma.shape == gamma.shape
    check.grad(lambda v: k_activation.leaky_relu(np, v, "prelu", gamma=gamma), x, head, dx)
    check.grad(lambda v: k_activation.leaky_relu(np, x, "prelu", gamma=v), gamma, head, dgamma)


def test_bad_act_type():
    with pytest.raises(ValueError, match="act_type"):
        k_activation.activation(np, np.zeros(2), "swish")
    with pytest.raises(ValueError, match="rrelu"):
        k_activation.leaky_relu(np, np.zeros(2), "rrelu")


# ------------------------------------------------------------------ Dropout, rrelu


@pytest.mark.parametrize("p,axes", [(0.5, ()), (0.2, (1,)), (0.7, (0, 2))])
def test_dropout_training(p, axes, rng, check):
    x = rng.standard_normal((40, 30, 20))
    out, mask = k_dropout.dropout(np, x, p=p, axes=axes, rng=np.random.default_rng(7))
    assert mask.shape == x.shape
    assert set(np.unique(mask)) <= {0.0, 1 / (1 - p)}
    check.close(out, x * mask)
    for a in axes:  # one draw shared along each listed axis
        assert (mask == mask.take([0], axis=a)).all()
    kept = (mask > 0).mean()
    assert abs(kept - (1 - p)) < 0.1
    head = rng.standard_normal(x.shape)
    check.close(k_dropout.dropout_backward(np, head, mask), head * mask)
    again = k_dropout.dropout(np, x, p=p, axes=axes, rng=np.random.default_rng(7))[1]
    np.testing.assert_array_equal(mask, again)  # same generator state, same mask


def test_dropout_modes(rng):
    x = rng.standard_normal((3, 4)).astype(np.float32)
    out, mask = k_dropout.dropout(np, x, p=0.5, training=False)
    np.testing.assert_array_equal(out, x)
    assert (mask == 1).all()
    out, mask = k_dropout.dropout(np, x, p=0.5, mode="always", training=False, rng=np.random.default_rng(0))
    assert out.dtype == np.float32 and set(np.unique(mask)) <= {0.0, 2.0}
    assert (k_dropout.dropout(np, x, p=1.0, rng=np.random.default_rng(0))[0] == 0).all()
    with pytest.raises(ValueError, match="rng"):
        k_dropout.dropout(np, x, p=0.5)


def test_rrelu(rng, check):
    x = _away_from_kinks(rng, (50, 20))
    out, mask = k_dropout.rrelu(np, x, 0.1, 0.3, training=True, rng=np.random.default_rng(3))
    assert 0.1 <= mask.min() and mask.max() < 0.3
    check.close(out, np.where(x > 0, x, x * mask))
    head = rng.standard_normal(x.shape)
    check.close(k_dropout.rrelu_backward(np, head, x, mask), np.where(x > 0, head, head * mask))
    out, mask = k_dropout.rrelu(np, x, 0.1, 0.3, training=False)
    check.close(out, np.where(x > 0, x, 0.2 * x))


# ------------------------------------------------------------------ FullyConnected

FC_CASES = [((4, 5), True), ((2, 3, 4), True), ((2, 3, 4), False), ((5,), False)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,flatten", FC_CASES)
def test_fully_connected(shape, flatten, dtype, rng, check):
    k = int(np.prod(shape[1:])) if flatten else shape[-1]
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in (shape, (3, k), (3,)))
    out = k_fully_connected.fully_connected(np, x, w, b, num_hidden=3, flatten=flatten)
    x2 = x.reshape(shape[0], -1) if flatten else x
    ref = x2.astype(np.float64) @ w.T.astype(np.float64) + b
    check.close(out, ref, dtype)
    check.close(k_fully_connected.fully_connected(np, x, w, b, num_hidden=3, no_bias=True, flatten=flatten), ref - b, dtype)
    if dtype == np.float64:
        head = rng.standard_normal(out.shape)
        dx, dw, db = k_fully_connected.fully_connected_backward(np, head, x, w, num_hidden=3, flatten=flatten)
        check.grad(lambda v: k_fully_connected.fully_connected(np, v, w, b, 3, flatten=flatten), x, head, dx, "data")
        check.grad(lambda v: k_fully_connected.fully_connected(np, x, v, b, 3, flatten=flatten), w, head, dw, "weight")
        check.grad(lambda v: k_fully_connected.fully_connected(np, x, w, v, 3, flatten=flatten), b, head, db, "bias")
        assert k_fully_connected.fully_connected_backward(np, head, x, w, no_bias=True, flatten=flatten)[2] is None


def test_inplace_relu_leaves_its_result_in_place_without_a_copy():
    """A planned output of the right shape is used as it is (not a reshaped view of it), so the operator
    layer sees the very array it passed and copies nothing onto it."""
    from mxasync.operator.kernels._util import out_view

    a = np.arange(-3.0, 3.0).reshape(2, 3)
    assert out_view(a, (2, 3), a.dtype) is a
    assert np.shares_memory(out_view(a, (3, 2), a.dtype), a)
    assert k_activation.activation(np, a, "relu", out=a) is a
    np.testing.assert_array_equal(a, [[0, 0, 0], [0, 1, 2]])
