"""numpy versions of MXNet 1.9's optimizer formulas, one step at a time, written from its docs."""

from __future__ import annotations

import numpy as np


def _g(g, rescale, clip):
    g = g * rescale
    return np.clip(g, -clip, clip) if clip else g


def sgd(w, g, state, lr, wd=0.0, rescale=1.0, clip=None, momentum=0.0):
    step = _g(g, rescale, clip) + wd * w
    if momentum:
        state["mom"] = momentum * state.get("mom", 0.0) - lr * step
        return w + state["mom"]
    return w - lr * step


def nag(w, g, state, lr, wd=0.0, rescale=1.0, clip=None, momentum=0.0):
    step = lr * (_g(g, rescale, clip) + wd * w)
    if not momentum:
        return w - step
    mom = momentum * state.get("mom", 0.0)
    w_new = w + momentum * (mom - step) - step
    state["mom"] = mom - lr * (_g(g, rescale, clip) + wd * w_new)  # MXNet reads the updated weight here
    return w_new


def adam(w, g, state, lr, t, wd=0.0, rescale=1.0, clip=None, beta1=0.9, beta2=0.999, eps=1e-8):
    g = g * rescale + wd * w
    g = np.clip(g, -clip, clip) if clip else g
    state["m"] = beta1 * state.get("m", 0.0) + (1 - beta1) * g
    state["v"] = beta2 * state.get("v", 0.0) + (1 - beta2) * g * g
    lr_t = lr * np.sqrt(1 - beta2**t) / (1 - beta1**t)
    return w - lr_t * state["m"] / (np.sqrt(state["v"]) + eps)


def adagrad(w, g, state, lr, wd=0.0, rescale=1.0, clip=None, eps=1e-7):
    g = _g(g, rescale, clip)
    state["h"] = state.get("h", 0.0) + g * g
    return w - lr * (g / np.sqrt(state["h"] + eps) + wd * w)


def rmsprop(w, g, state, lr, wd=0.0, rescale=1.0, clip=None, gamma1=0.9, eps=1e-8, clip_weights=None):
    g = g * rescale + wd * w
    g = np.clip(g, -clip, clip) if clip else g
    state["n"] = gamma1 * state.get("n", 0.0) + (1 - gamma1) * g * g
    w = w - lr * g / np.sqrt(state["n"] + eps)
    return np.clip(w, -clip_weights, clip_weights) if clip_weights else w


def rmsprop_centered(w, g, state, lr, wd=0.0, rescale=1.0, clip=None, gamma1=0.9, gamma2=0.9, eps=1e-8):
    g = g * rescale + wd * w
    g = np.clip(g, -clip, clip) if clip else g
    state["n"] = gamma1 * state.get("n", 0.0) + (1 - gamma1) * g * g
    state["g"] = gamma1 * state.get("g", 0.0) + (1 - gamma1) * g
    state["d"] = gamma2 * state.get("d", 0.0) - lr * g / np.sqrt(state["n"] - state["g"] ** 2 + eps)
    return w + state["d"]
