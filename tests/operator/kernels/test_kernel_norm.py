"""BatchNorm and LRN: closed forms / explicit loops, numerical gradients, moving statistics."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.operator.kernels.batch_norm import batch_norm, batch_norm_backward, batch_norm_update_moving
from mxasync.operator.kernels.lrn import lrn, lrn_backward

BN_CASES = [
    ((4, 3, 2, 3), 1, dict(fix_gamma=False, eps=1e-3)),
    ((4, 3, 5), 1, dict(fix_gamma=True, eps=1e-5)),
    ((3, 4, 2), -1, dict(fix_gamma=False, eps=1e-3)),
    ((6, 2), 1, dict(fix_gamma=False, eps=1e-2)),
    ((3, 2, 2, 2), 1, dict(fix_gamma=False, use_global_stats=True, eps=2e-3)),
    ((3, 2, 2, 2), 1, dict(fix_gamma=False, training=False, eps=1e-3)),
]
BN_IDS = [f"{s}-axis{a}-" + "-".join(f"{k}={v}" for k, v in p.items()) for s, a, p in BN_CASES]


def _bn_inputs(rng, shape, axis, dtype=np.float64):
    c = shape[axis]
    x = (rng.standard_normal(shape) * 2 + 1).astype(dtype)
    gamma, beta = rng.standard_normal(c) + 1.5, rng.standard_normal(c)
    mm, mv = rng.standard_normal(c), np.abs(rng.standard_normal(c)) + 0.5
    return x, gamma, beta, mm, mv


def bn_reference(x, gamma, beta, mm, mv, axis, eps, fix_gamma, use_global_stats=False, training=True):
    red = tuple(i for i in range(x.ndim) if i != axis % x.ndim)
    shape = [1] * x.ndim
    shape[axis] = -1
    if training and not use_global_stats:
        mean, var = x.mean(axis=red), x.var(axis=red)
    else:
        mean, var = mm, mv
    g = np.ones_like(gamma) if fix_gamma else gamma
    out = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * g.reshape(shape) + beta.reshape(shape)
    return out, mean, 1 / np.sqrt(var + eps)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("shape,axis,params", BN_CASES, ids=BN_IDS)
def test_batch_norm_forward(shape, axis, params, dtype, rng, check):
    x, gamma, beta, mm, mv = _bn_inputs(rng, shape, axis, dtype)
    out, mean, invstd = batch_norm(np, x, gamma.astype(dtype), beta.astype(dtype), mm, mv, axis=axis, **params)
    assert out.dtype == dtype
    ref = bn_reference(x.astype(np.float64), gamma, beta, mm, mv, axis, **params)
    for got, exp in zip((out, mean, invstd), ref, strict=True):
        check.close(got, exp, dtype)


@pytest.mark.parametrize("shape,axis,params", BN_CASES, ids=BN_IDS)
def test_batch_norm_backward(shape, axis, params, rng, check):
    x, gamma, beta, mm, mv = _bn_inputs(rng, shape, axis)
    out, mean, invstd = batch_norm(np, x, gamma, beta, mm, mv, axis=axis, **params)
    head = rng.standard_normal(out.shape)
    bwd = {k: v for k, v in params.items() if k != "eps"}
    dx, dgamma, dbeta = batch_norm_backward(np, head, x, gamma, mean, invstd, axis=axis, **bwd)

    def f(xv=x, gv=gamma, bv=beta):
        return batch_norm(np, xv, gv, bv, mm, mv, axis=axis, **params)[0]

    check.grad(lambda v: f(xv=v), x, head, dx, "data")
    check.grad(lambda v: f(bv=v), beta, head, dbeta, "beta")
    if params["fix_gamma"]:
        assert not dgamma.any()  # MXNet reports a zero gamma gradient under fix_gamma
    else:
        check.grad(lambda v: f(gv=v), gamma, head, dgamma, "gamma")


@pytest.mark.parametrize("shape,axis,params", BN_CASES, ids=BN_IDS)
def test_batch_norm_backward_float32(shape, axis, params, rng, check):
    x, gamma, beta, mm, mv = _bn_inputs(rng, shape, axis)
    head = rng.standard_normal(shape)
    bwd = {k: v for k, v in params.items() if k != "eps"}
    results = []
    for dt in (np.float32, np.float64):
        args = [a.astype(dt) for a in (x, gamma, beta, mm, mv)]
        _, mean, invstd = batch_norm(np, *args, axis=axis, **params)
        results.append(batch_norm_backward(np, head.astype(dt), args[0], args[1], mean, invstd, axis=axis, **bwd))
    for got, exp in zip(*results, strict=True):
        assert got.dtype == np.float32
        check.close(got, exp, np.float32)


def test_batch_norm_float16_accumulates_in_float32(rng, check):
    x = (rng.standard_normal((8, 3, 4)) * 3 + 100).astype(np.float16)
    g, b, mm, mv = np.ones(3, np.float16), np.zeros(3, np.float16), np.zeros(3, np.float16), np.ones(3, np.float16)
    out, mean, invstd = batch_norm(np, x, g, b, mm, mv, fix_gamma=False)
    assert out.dtype == np.float16 and mean.dtype == np.float32
    ref = bn_reference(x.astype(np.float64), g, b, mm, mv, 1, 1e-3, False)[0]
    np.testing.assert_allclose(out.astype(np.float64), ref, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("runner", ["plain", "numpy"])
def test_batch_norm_float32_mean_far_from_zero(rng, runner):
    """Data whose mean is 10^4 deviations from zero: the normalised output keeps float32's precision (the mean
    rounded to float32 is 0.04 deviations off; centring on it shifted every output by that much)."""
    from mxasync.backends.numpy.kernels.runner import NUMPY
    from mxasync.operator.kernels._runner import PLAIN

    run = {"plain": PLAIN, "numpy": NUMPY}[runner]
    x = (100 + 0.01 * rng.standard_normal((4, 3, 20, 20))).astype(np.float32)
    gamma, beta = np.array([0.5, 1.0, 2.0], np.float32), np.array([0.0, -1.0, 3.0], np.float32)
    mm, mv = np.zeros(3, np.float32), np.ones(3, np.float32)
    out, mean, invstd = batch_norm(np, x, gamma, beta, mm, mv, eps=1e-8, fix_gamma=False, run=run)
    ref_out, ref_mean, ref_invstd = bn_reference(x.astype(np.float64), gamma, beta, mm, mv, 1, 1e-8, False)
    np.testing.assert_allclose(out, ref_out, rtol=0, atol=1e-5)  # before: 6e-4
    np.testing.assert_allclose(mean, ref_mean, rtol=1e-7, atol=0)  # the float32 rounding of the mean
    np.testing.assert_allclose(invstd, ref_invstd, rtol=1e-5, atol=0)


def test_moving_average_update(rng, check):
    x, gamma, beta, mm, mv = _bn_inputs(rng, (5, 3, 4), 1)
    _, mean, invstd = batch_norm(np, x, gamma, beta, mm, mv, eps=1e-3)
    mm2, mv2 = mm.copy(), mv.copy()
    assert batch_norm_update_moving(np, mm2, mv2, mean, invstd, 0.9, 1e-3) is None
    check.close(mm2, 0.9 * mm + 0.1 * x.mean(axis=(0, 2)))
    check.close(mv2, 0.9 * mv + 0.1 * x.var(axis=(0, 2)))  # biased variance, as MXNet


# ---------------------------------------------------------------- LRN


def lrn_reference(x, nsize, alpha, beta, knorm):
    c = x.shape[1]
    out = np.empty_like(x)
    for ch in range(c):
        lo, hi = max(0, ch - nsize // 2), min(c, ch + nsize // 2 + 1)
        norm = knorm + alpha / nsize * (x[:, lo:hi] ** 2).sum(axis=1)
        out[:, ch] = x[:, ch] * norm**-beta
    return out


LRN_CASES = [(3, 1e-4, 0.75, 2.0), (5, 0.1, 0.5, 1.0), (1, 0.3, 0.75, 1.5), (7, 0.05, 1.2, 0.5)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("nsize,alpha,beta,knorm", LRN_CASES)
def test_lrn_forward(nsize, alpha, beta, knorm, dtype, rng, check):
    x = rng.standard_normal((2, 6, 3, 2)).astype(dtype)
    out, norm = lrn(np, x, nsize, alpha, beta, knorm)
    assert out.dtype == dtype and norm.shape == x.shape
    check.close(out, lrn_reference(x.astype(np.float64), nsize, alpha, beta, knorm), dtype)


@pytest.mark.parametrize("nsize,alpha,beta,knorm", LRN_CASES)
def test_lrn_backward(nsize, alpha, beta, knorm, rng, check):
    x = rng.standard_normal((2, 6, 2, 2)) * 2
    head = rng.standard_normal(x.shape)
    grad = lrn_backward(np, head, x, nsize, alpha, beta, knorm)
    check.grad(lambda v: lrn(np, v, nsize, alpha, beta, knorm)[0], x, head, grad)
    norm = lrn(np, x, nsize, alpha, beta, knorm)[1]
    check.close(lrn_backward(np, head, x, nsize, alpha, beta, knorm, norm=norm), grad)
