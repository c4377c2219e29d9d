"""Plain, loop-based numpy references for the NN ops (slow, obviously right)."""

from __future__ import annotations

import numpy as np


def _geom(nsp, stride, dilate, pad):
    return (tuple(stride) or (1,) * nsp, tuple(dilate) or (1,) * nsp, tuple(pad) or (0,) * nsp)


def conv(x, w, b=None, *, kernel, num_filter, stride=(), dilate=(), pad=(), num_group=1, no_bias=False):
    nsp = len(kernel)
    s, d, p = _geom(nsp, stride, dilate, pad)
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    n, c = x.shape[:2]
    f, g = num_filter, num_group
    osp = [(xp.shape[2 + i] - d[i] * (kernel[i] - 1) - 1) // s[i] + 1 for i in range(nsp)]
    out = np.zeros((n, f, *osp), dtype=np.float64)
    for idx in np.ndindex(*osp):
        for k in np.ndindex(*kernel):
            sl = tuple(idx[i] * s[i] + k[i] * d[i] for i in range(nsp))
            patch = xp[(slice(None), slice(None)) + sl]
            for gi in range(g):
                cs, fs = slice(gi * c // g, (gi + 1) * c // g), slice(gi * f // g, (gi + 1) * f // g)
                out[(slice(None), fs) + idx] += patch[:, cs] @ w[(fs, slice(None)) + k].T
    if b is not None and not no_bias:
        out += b.reshape((1, f) + (1,) * nsp)
    return out.astype(x.dtype)


def deconv(x, w, b=None, *, kernel, num_filter, stride=(), dilate=(), pad=(), adj=(), num_group=1, no_bias=True):
    nsp = len(kernel)
    s, d, p = _geom(nsp, stride, dilate, pad)
    a = tuple(adj) or (0,) * nsp
    n, c = x.shape[:2]
    f, g = num_filter, num_group
    full = [s[i] * (x.shape[2 + i] - 1) + d[i] * (kernel[i] - 1) + 1 + a[i] for i in range(nsp)]
    out = np.zeros((n, f, *full), dtype=np.float64)
    for idx in np.ndindex(*x.shape[2:]):
        for k in np.ndindex(*kernel):
            o = tuple(idx[i] * s[i] + k[i] * d[i] for i in range(nsp))
            for gi in range(g):
                cs, fs = slice(gi * c // g, (gi + 1) * c // g), slice(gi * f // g, (gi + 1) * f // g)
                out[(slice(None), fs) + o] += x[(slice(None), cs) + idx] @ w[(cs, slice(None)) + k]
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(nsp))
    out = out[(slice(None), slice(None)) + crop]
    if b is not None and not no_bias:
        out = out + b.reshape((1, f) + (1,) * nsp)
    return out.astype(x.dtype)


def pool(x, *, kernel=(), pool_type="max", global_pool=False, stride=(), pad=(), pooling_convention="valid"):
    nsp = x.ndim - 2
    if global_pool:
        kernel, stride, pad = x.shape[2:], (1,) * nsp, (0,) * nsp
    s, _, p = _geom(nsp, stride, (), pad)
    fill = -np.inf if pool_type == "max" else 0.0
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + [(q, q + s[i]) for i, q in enumerate(p)],
                constant_values=fill)
    if pooling_convention == "valid":
        osp = [(x.shape[2 + i] + 2 * p[i] - kernel[i]) // s[i] + 1 for i in range(nsp)]
    else:
        osp = [-(-(x.shape[2 + i] + 2 * p[i] - kernel[i]) // s[i]) + 1 for i in range(nsp)]
    out = np.zeros(x.shape[:2] + tuple(osp))
    for idx in np.ndindex(*osp):
        win = xp[(slice(None), slice(None)) + tuple(slice(idx[i] * s[i], idx[i] * s[i] + kernel[i])
                                                   for i in range(nsp))]
        win = win.reshape(x.shape[:2] + (-1,))
        if pool_type == "max":
            out[(slice(None), slice(None)) + idx] = win.max(-1)
        elif pool_type == "sum":
            out[(slice(None), slice(None)) + idx] = win.sum(-1)
        else:
            out[(slice(None), slice(None)) + idx] = win.sum(-1) / np.prod(kernel)
    return out.astype(x.dtype)


def lrn(x, *, nsize, alpha=1e-4, beta=0.75, knorm=2.0):
    sq = x.astype(np.float64) ** 2
    c = x.shape[1]
    norm = np.zeros_like(sq)
    for i in range(c):
        lo, hi = max(0, i - nsize // 2), min(c, i + nsize // 2 + 1)
        norm[:, i] = sq[:, lo:hi].sum(axis=1)
    norm = knorm + alpha / nsize * norm
    return (x * norm ** -beta).astype(x.dtype)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def batchnorm(x, gamma, beta, mm, mv, *, eps=1e-3, fix_gamma=True, use_global_stats=False, train=True, **_):
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if train and not use_global_stats:
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    else:
        mean, var = mm, mv
    g = np.ones_like(gamma) if fix_gamma else gamma
    return ((x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * g.reshape(shape)
            + beta.reshape(shape)).astype(x.dtype)
