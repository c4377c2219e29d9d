"""The generic kernels on a namespace that is numpy but not ``numpy``, against the numpy backend's overrides.

A backend that only brings its array namespace gets the generic kernels with the plain runner
(``operator/kernels/_runner.py``): whole-batch convolution columns, no blocks or threads, the
formula erf. This proxy namespace runs them on the CPU, so they are tested on every machine, and
compared with what the numpy backend runs (its runner: layouts, BLAS, kernel threads, scipy's erf).
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from mxasync.backends.numpy.kernels.runner import NUMPY
from mxasync.operator.kernels import activation as k_activation
from mxasync.operator.kernels import batch_norm as k_batch_norm
from mxasync.operator.kernels import dropout as k_dropout
from mxasync.operator.kernels import lrn as k_lrn
from mxasync.operator.kernels import optimizer as k_optimizer
from mxasync.operator.kernels import output as k_output
from mxasync.operator.kernels import pooling as k_pooling
from mxasync.operator.kernels.conv import convolution as k_convolution
from mxasync.operator.kernels.conv import deconvolution as k_deconvolution


class ProxyNamespace(types.SimpleNamespace):
    """Every attribute of numpy, under another identity."""

    def __getattr__(self, name: str):
        return getattr(np, name)


XP = ProxyNamespace()


def _run(xp, run=None, rng_seed: int = 0):
    run = {} if run is None else {"run": run}
    rng = np.random.default_rng(rng_seed)
    x = rng.standard_normal((3, 4, 6, 5))
    w = rng.standard_normal((6, 2, 3, 2))
    conv_kw = dict(kernel=(3, 2), stride=(2, 1), pad=(1, 1), num_group=2, num_filter=6)
    y = k_convolution.convolution(xp, x, w, np.ones(6), **conv_kw, **run)
    res = [y, *k_convolution.convolution_backward(xp, y, x, w, **conv_kw, **run)]
    wd = rng.standard_normal((4, 3, 2, 2))
    d = k_deconvolution.deconvolution(xp, x, wd, None, (2, 2), stride=(2, 2), adj=(1, 0), **run)
    res += [d, *k_deconvolution.deconvolution_backward(xp, d, x, wd, (2, 2), stride=(2, 2), adj=(1, 0), **run)[:2]]
    pool_kw = dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pooling_convention="full")
    for pt in ("max", "avg"):
        p = k_pooling.pooling(xp, x, pool_type=pt, **pool_kw, **run)
        res += [p, k_pooling.pooling_backward(xp, p, x, pool_type=pt, **pool_kw, **run)]
    out, mean, invstd = k_batch_norm.batch_norm(xp, x, np.ones(4), np.zeros(4), np.zeros(4), np.ones(4),
                                                fix_gamma=False, **run)
    res += [out, *k_batch_norm.batch_norm_backward(xp, out, x, np.ones(4), mean, invstd, fix_gamma=False, **run)]
    res += [k_lrn.lrn(xp, x, 3)[0], k_lrn.lrn_backward(xp, x, x, 3)]
    g = k_activation.leaky_relu(xp, x, "gelu", **run)
    res += [g, k_activation.leaky_relu_backward(xp, g, x, "gelu", **run)[0]]
    res += [
        k_output.softmax_output_backward(xp, k_output.softmax_output(xp, x, multi_output=True), np.zeros((3, 30)), multi_output=True)
    ]
    res += list(k_dropout.dropout(xp, x, 0.3, rng=np.random.default_rng(5)))
    return res


def test_generic_paths_agree_with_numpy_paths():
    # float64: the two sum in other orders (BLAS against numpy's matmul, einsum against a product's sum)
    for got, expected in zip(_run(XP), _run(np, NUMPY), strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("name", ["sgd_mom_update", "adam_update"])
def test_optimizers_under_generic_namespace(name):
    w1, w2 = np.ones(4), np.ones(4)
    s1, s2 = [np.full(4, 0.5), np.full(4, 0.5)], [np.full(4, 0.5), np.full(4, 0.5)]
    g = np.linspace(-2, 2, 4)
    n_states = 1 if name == "sgd_mom_update" else 2
    getattr(k_optimizer, name)(XP, w1, g, *s1[:n_states], lr=0.1, clip_gradient=1.0)
    getattr(k_optimizer, name)(np, w2, g, *s2[:n_states], lr=0.1, clip_gradient=1.0, run=NUMPY)
    np.testing.assert_array_equal(w1, w2)
