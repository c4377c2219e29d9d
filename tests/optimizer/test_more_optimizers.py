"""The optimizers added for MXNet 1.9 parity, each against a numpy transcription of its update rule
over two steps (so state carries over), plus registry names and multi-precision."""

from __future__ import annotations

import numpy as np
import pytest

import mxasync as mx


def _run(opt, w0, grads):
    w = mx.nd.array(w0)
    state = opt.create_state_multi_precision(0, w)
    for g in grads:
        opt.update_multi_precision(0, w, mx.nd.array(g), state)
    return w.asnumpy()


RNG = np.random.default_rng(3)
W0 = RNG.uniform(-1, 1, (3, 4)).astype(np.float32)
GS = [RNG.uniform(-1, 1, (3, 4)).astype(np.float32) for _ in range(2)]


def _ref_adamax(w, gs, lr=0.002, b1=0.9, b2=0.999, wd=0.01):
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        g = g + wd * w
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g))
        w = w - lr / (1 - b1 ** t) * m / u
    return w


def _ref_adadelta(w, gs, rho=0.9, eps=1e-5, wd=0.01):
    ag, ad = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        ag = rho * ag + (1 - rho) * g * g
        step = np.sqrt(ad + eps) / np.sqrt(ag + eps) * g
        ad = rho * ad + (1 - rho) * step * step
        w = w - step - wd * w
    return w


def _ref_signum(w, gs, lr=0.01, mom=0.9, wd=0.01):
    m = np.zeros_like(w)
    for g in gs:
        m = mom * m - (1 - mom) * (wd * w + g)
        w = w + lr * np.sign(m)
    return w


def _ref_ftrl(w, gs, lr=0.1, lamda1=0.01, beta=1.0, wd=0.01):
    z, n = np.zeros_like(w), np.zeros_like(w)
    for g in gs:
        z = z + g - (np.sqrt(n + g * g) - np.sqrt(n)) * w / lr
        n = n + g * g
        w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
    return w


def _ref_dcasgd(w, gs, lr=0.1, lamda=0.04, wd=0.01):
    prev = w.copy()
    for g in gs:
        step = -lr * (g + wd * w + lamda * g * g * (w - prev))
        prev = w.copy()
        w = w + step
    return w


def _ref_lamb(w, gs, lr=0.01, b1=0.9, b2=0.999, eps=1e-6, wd=0.01):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(gs, 1):
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        d = (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) + wd * w
        w = w - lr * np.linalg.norm(w) / np.linalg.norm(d) * d
    return w


@pytest.mark.parametrize("name,kwargs,ref", [
    ("adamax", dict(wd=0.01), _ref_adamax),
    ("adadelta", dict(wd=0.01), _ref_adadelta),
    ("signum", dict(wd=0.01), _ref_signum),
    ("ftrl", dict(wd=0.01), _ref_ftrl),
    ("dcasgd", dict(learning_rate=0.1, wd=0.01), _ref_dcasgd),
    ("lamb", dict(learning_rate=0.01, wd=0.01), _ref_lamb),
])
def test_two_steps_match_numpy(name, kwargs, ref):
    opt = mx.optimizer.create(name, **kwargs)
    np.testing.assert_allclose(_run(opt, W0, GS), ref(W0.astype(np.float64), GS), rtol=1e-4, atol=1e-5)


def test_registered_names_and_ftml_nadam_sgld_run():
    for name in ("adadelta", "adamax", "nadam", "dcasgd", "ftml", "ftrl", "lamb", "sgld", "signum"):
        opt = mx.optimizer.create(name)
        w = _run(opt, W0, GS)
        assert np.isfinite(w).all() and not np.array_equal(w, W0), name


def test_sgld_noise_repeats_with_the_seed():
    mx.random.seed(11)
    a = _run(mx.optimizer.SGLD(learning_rate=0.1), W0, GS)
    mx.random.seed(11)
    b = _run(mx.optimizer.SGLD(learning_rate=0.1), W0, GS)
    np.testing.assert_array_equal(a, b)


def test_lamb_multi_precision_follows_the_master_weight():
    opt = mx.optimizer.LAMB(learning_rate=0.01, wd=0.01, multi_precision=True)
    w = mx.nd.array(W0, dtype=np.float16)
    state = opt.create_state_multi_precision(0, w)
    for g in GS:
        opt.update_multi_precision(0, w, mx.nd.array(g, dtype=np.float16), state)
    assert w.dtype == np.float16 and state[0].dtype == np.float32
    ref = _ref_lamb(W0.astype(np.float16).astype(np.float64), [g.astype(np.float16) for g in GS])
    np.testing.assert_allclose(state[0].asnumpy(), ref, rtol=2e-3, atol=2e-3)
    np.testing.assert_allclose(w.asnumpy(), state[0].asnumpy().astype(np.float16), rtol=1e-3)
