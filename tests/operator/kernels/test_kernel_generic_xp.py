"""The kernels' non-numpy branches, driven by a namespace that is numpy but not ``numpy``.

A GPU backend hands the kernels ``cupy``; ``xp is numpy`` is then false, so batch
chunking, the erf fallback and the like take their generic paths. This proxy takes
those paths on the CPU, so they are tested on every machine.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from mxasync.operator import kernels as K


class ProxyNamespace(types.SimpleNamespace):
    """Every attribute of numpy, under another identity."""

    def __getattr__(self, name: str):
        return getattr(np, name)


XP = ProxyNamespace()


def _run(xp, rng_seed: int = 0):
    rng = np.random.default_rng(rng_seed)
    x = rng.standard_normal((3, 4, 6, 5))
    w = rng.standard_normal((6, 2, 3, 2))
    conv_kw = dict(kernel=(3, 2), stride=(2, 1), pad=(1, 1), num_group=2, num_filter=6)
    y = K.convolution(xp, x, w, np.ones(6), **conv_kw)
    res = [y, *K.convolution_backward(xp, y, x, w, **conv_kw)]
    wd = rng.standard_normal((4, 3, 2, 2))
    d = K.deconvolution(xp, x, wd, None, (2, 2), stride=(2, 2), adj=(1, 0))
    res += [d, *K.deconvolution_backward(xp, d, x, wd, (2, 2), stride=(2, 2), adj=(1, 0))[:2]]
    pool_kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pooling_convention="full")
    for pt in ("max", "avg"):
        p = K.pooling(xp, x, pool_type=pt, **pool_kw)
        res += [p, K.pooling_backward(xp, p, x, pool_type=pt, **pool_kw)]
    out, mean, invstd = K.batch_norm(xp, x, np.ones(4), np.zeros(4), np.zeros(4), np.ones(4), fix_gamma=False)
    res += [out, *K.batch_norm_backward(xp, out, x, np.ones(4), mean, invstd, fix_gamma=False)]
    res += [K.lrn(xp, x, 3)[0], K.lrn_backward(xp, x, x, 3)]
    g = K.leaky_relu(xp, x, "gelu")
    res += [g, K.leaky_relu_backward(xp, g, x, "gelu")[0]]
    res += [
        K.softmax_output_backward(xp, K.softmax_output(xp, x, multi_output=True), np.zeros((3, 30)), multi_output=True)
    ]
    res += list(K.dropout(xp, x, 0.3, rng=np.random.default_rng(5)))
    return res


def test_generic_paths_agree_with_numpy_paths():
    for got, expected in zip(_run(XP), _run(np), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", ["sgd_mom_update", "adam_update"])
def test_optimizers_under_generic_namespace(name):
    w1, w2 = np.ones(4), np.ones(4)
    s1, s2 = [np.full(4, 0.5), np.full(4, 0.5)], [np.full(4, 0.5), np.full(4, 0.5)]
    g = np.linspace(-2, 2, 4)
    n_states = 1 if name == "sgd_mom_update" else 2
    getattr(K, name)(XP, w1, g, *s1[:n_states], lr=0.1, clip_gradient=1.0)
    getattr(K, name)(np, w2, g, *s2[:n_states], lr=0.1, clip_gradient=1.0)
    np.testing.assert_array_equal(w1, w2)
