"""Optimizer update kernels: MXNet's formulas, written out step by step, applied in place."""

from __future__ import annotations

import numpy as np
import pytest

from mxasync.operator.kernels import optimizer as k_optimizer


def clip(g, c):
    return np.clip(g, -c, c) if c is not None and c >= 0 else g


def ref_sgd(w, g, lr, wd, rescale_grad, clip_gradient):
    return [(1 - lr * wd) * w - lr * clip(rescale_grad * g, clip_gradient)]


def ref_sgd_mom(w, g, mom, lr, wd, rescale_grad, clip_gradient, momentum):
    mom = momentum * mom - lr * wd * w - lr * clip(rescale_grad * g, clip_gradient)
    return [w + mom, mom]


def ref_nag_mom(w, g, mom, lr, wd, rescale_grad, clip_gradient, momentum):
    step = lr * (clip(rescale_grad * g, clip_gradient) + wd * w)
    w_new = w + momentum * (momentum * mom - step) - step
    # MXNet (in place) evaluates the wd term of the momentum with the new weight
    mom = momentum * mom - lr * (clip(rescale_grad * g, clip_gradient) + wd * w_new)
    return [w_new, mom]


def ref_adam(w, g, mean, var, lr, wd, rescale_grad, clip_gradient, beta1, beta2, epsilon):
    g = clip(rescale_grad * g + wd * w, clip_gradient)
    mean = beta1 * mean + (1 - beta1) * g
    var = beta2 * var + (1 - beta2) * g * g
    return [w - lr * mean / (np.sqrt(var) + epsilon), mean, var]


def ref_rmsprop(w, g, n, lr, wd, rescale_grad, clip_gradient, gamma1, epsilon, clip_weights):
    g = clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * g * g + gamma1 * n
    return [clip(w - lr * g / np.sqrt(n + epsilon), clip_weights), n]


def ref_rmspropalex(w, g, n, gm, delta, lr, wd, rescale_grad, clip_gradient, gamma1, gamma2, epsilon, clip_weights):
    g = clip(rescale_grad * g + wd * w, clip_gradient)
    n = (1 - gamma1) * g * g + gamma1 * n
    gm = (1 - gamma1) * g + gamma1 * gm
    delta = gamma2 * delta - lr * g / np.sqrt(n - gm * gm + epsilon)
    return [clip(w + delta, clip_weights), n, gm, delta]


def ref_adagrad(w, g, hist, lr, wd, rescale_grad, clip_gradient, epsilon):
    g = clip(rescale_grad * g, clip_gradient)
    hist = hist + g * g
    return [w - lr * (g / np.sqrt(hist + epsilon) + wd * w), hist]


SPECS = {
    "sgd_update": (ref_sgd, 0, {}),
    "sgd_mom_update": (ref_sgd_mom, 1, dict(momentum=0.9)),
    "nag_mom_update": (ref_nag_mom, 1, dict(momentum=0.85)),
    "adam_update": (ref_adam, 2, dict(beta1=0.8, beta2=0.95, epsilon=1e-6)),
    "rmsprop_update": (ref_rmsprop, 1, dict(gamma1=0.9, epsilon=1e-6, clip_weights=0.9)),
    "rmspropalex_update": (ref_rmspropalex, 3, dict(gamma1=0.9, gamma2=0.8, epsilon=1e-6, clip_weights=-1.0)),
    "adagrad_update": (ref_adagrad, 1, dict(epsilon=1e-7)),
}
COMMON = [
    dict(lr=0.1, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0),
    dict(lr=0.05, wd=0.01, rescale_grad=0.5, clip_gradient=0.6),
    dict(lr=0.2, wd=0.1, rescale_grad=2.0, clip_gradient=None),
]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("common", COMMON, ids=["plain", "clip-wd-rescale", "noclip-wd"])
@pytest.mark.parametrize("name", sorted(SPECS))
def test_update_in_place(name, common, dtype, rng, check):
    ref, n_states, extra = SPECS[name]
    w = rng.standard_normal(6).astype(dtype)
    g = (rng.standard_normal(6) * 3).astype(dtype)
    states = [
        (np.abs(rng.standard_normal(6)) + (1.0 if i == 0 and "rmspropalex" in name else 0.0)).astype(dtype)
        for i in range(n_states)
    ]
    if "rmspropalex" in name:  # keep n - g^2 positive
        states[1] *= 0.1
    params = dict(common, **extra)
    expected = ref(w.astype(np.float64), g.astype(np.float64), *(s.astype(np.float64) for s in states), **params)
    w_buf, g_before, state_bufs = w.copy(), g.copy(), [s.copy() for s in states]
    result = getattr(k_optimizer, name)(np, w_buf, g, *state_bufs, **params)
    assert result is None
    np.testing.assert_array_equal(g, g_before)  # the gradient is never modified
    for got, exp in zip([w_buf, *state_bufs], expected, strict=True):
        assert got.dtype == dtype
        check.close(got, exp, dtype)


def test_lazy_update_is_accepted_and_ignored(rng, check):
    w, g = rng.standard_normal(3), rng.standard_normal(3)
    a, b = w.copy(), w.copy()
    k_optimizer.sgd_update(np, a, g, lr=0.1, lazy_update=False)
    k_optimizer.sgd_update(np, b, g, lr=0.1)
    check.close(a, b)
